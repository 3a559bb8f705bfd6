/*
 * make bench-host: nanoseconds per 16-byte event of trace/ring_buffer.c
 * on this Linux host, one and two writer threads (each its own buffer,
 * as each CPU has in the kernel), flight-recorder mode, through the
 * kernel's emit path (rb_emit_fast(), the general path when it declines)
 * or through the general path alone (rb_reserve(), rb_write(),
 * rb_commit()); built with -DWITH_LTTNG_UST it measures LTTng-UST's
 * tracepoint with the same payload instead (tools/bench_host/bench_host.sh
 * runs them all, LTTng-UST inside a session it creates, and prints the
 * ratios).
 *
 * Usage: trace_bench THREADS EVENTS_PER_THREAD [fast|general]
 * Prints: "ours-fast|ours-general|lttng-ust threads=N ns_per_event=X.XX"
 * and, for ours-fast, the share of events the fast path took.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/cycles.h"
#include "tests/host/host_clock.h"
#include "tests/host/host_thread_group.h"
#include "trace/ring_buffer.h"

#ifdef WITH_LTTNG_UST
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "tools/bench_host/ust_tp.h"
#define IMPL "lttng-ust"
#else
#define IMPL "ours"
#endif
#define EVENT_ID 1
#define PAYLOAD_AT 8 /* compact header padded to the u64 payload */
#define RECORD_SIZE 24

#define SUBBUF_SHIFT 14
#define SUBBUFS_SHIFT 3
#define MAX_THREADS 16

struct worker {
	struct rb rb;
	uint64_t events;
	uint64_t fast; /* events rb_emit_fast() wrote */
	double ns;
};

static int use_fast = 1;

static pthread_barrier_t start;

static double now_ns(void)
{
	return (double)host_now_ns();
}

#ifndef WITH_LTTNG_UST
/*
 * The ring buffer's general emit path (reserve, write, commit), for one
 * buffer; the kernel's trace points try rb_emit_fast() first.
 */
static inline void emit(struct rb *rb, uint64_t a, uint64_t b)
{
	uint64_t v[2] = {a, b};
	struct rb_ctx ctx;
	void *dst;

	ctx.size_compact = RECORD_SIZE;
	ctx.size_extended = RECORD_SIZE + 8;
	ctx.tail_compact = ctx.tail_extended = 0; /* the payload fills it */
	ctx.id = EVENT_ID;
	if (rb_reserve(rb, &ctx))
		return;
	ctx.cursor = ctx.begin + (ctx.extended ? RB_EXTENDED_HEADER_SIZE : 8);
	dst = rb_write_ptr(rb, &ctx, sizeof(v));
	if (dst)
		memcpy(dst, v, sizeof(v));
	else
		rb_write(rb, &ctx, v, sizeof(v));
	rb_commit(rb, &ctx);
}

/* The fast path's clock: the TSC inline, as cfg.clock (cycles_now()). */
static inline uint64_t tsc_inline(void)
{
	return __builtin_ia32_rdtsc();
}

/*
 * The kernel's emit path (trace/trace.h): rb_emit_fast() with a constant
 * 16-byte payload, the general path when it declines. Returns 1 if the
 * fast path wrote the event.
 */
static inline int emit_fast(struct rb *rb, uint64_t a, uint64_t b)
{
	uint64_t v[2] = {a, b};

	if (rb_emit_fast(rb, EVENT_ID, v, PAYLOAD_AT, sizeof(v), RECORD_SIZE,
			 tsc_inline))
		return 1;
	emit(rb, a, b);
	return 0;
}

static int setup(struct worker *w, unsigned cpu)
{
	struct rb_config c = {
		.subbuf_shift = SUBBUF_SHIFT,
		.nr_subbufs_shift = SUBBUFS_SHIFT,
		.mode = RB_OVERWRITE,
		.page_index = RB_PAGES_ARRAY,
		.cpu = cpu,
		.clock = cycles_now,
	};
	unsigned long n = rb_nr_pages(&c);
	void **pages = calloc(n, sizeof(void *));
	unsigned long *commit = aligned_alloc(64, 64ul << SUBBUFS_SHIFT);

	for (unsigned long i = 0; i < n; i++)
		pages[i] = aligned_alloc(RB_PAGE_SIZE, RB_PAGE_SIZE);
	return rb_init(&w->rb, &c, pages, aligned_alloc(64, (rb_meta_size(&c) +
						       63) & ~63ul),
		       commit, 8);
}
#endif

static void *run(void *arg)
{
	struct worker *w = arg;
	double t0;

	pthread_barrier_wait(&start);
	t0 = now_ns();
	for (uint64_t i = 0; i < w->events; i++) {
#ifdef WITH_LTTNG_UST
		lttng_ust_tracepoint(bench, ev, i, i * 3);
#else
		if (use_fast)
			w->fast += emit_fast(&w->rb, i, i * 3);
		else
			emit(&w->rb, i, i * 3);
#endif
	}
	w->ns = now_ns() - t0;
	return NULL;
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
	uint64_t events = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
	double sum = 0;
	uint64_t fast = 0;
	struct host_thread_group g;

	if (argc > 3)
		use_fast = strcmp(argv[3], "general") != 0;
	if (n < 1 || n > MAX_THREADS || events == 0 ||
	    (argc > 3 && strcmp(argv[3], "fast") != 0 &&
	     strcmp(argv[3], "general") != 0)) {
		fprintf(stderr,
			"usage: trace_bench THREADS EVENTS [fast|general]\n");
		return 2;
	}
	pthread_barrier_init(&start, NULL, n);
	for (unsigned i = 0; i < n; i++) {
		w[i].events = events;
#ifndef WITH_LTTNG_UST
		if (setup(&w[i], i) != 0) {
			fprintf(stderr, "trace_bench: rb_init failed\n");
			return 1;
		}
#endif
	}
	host_thread_group_start(&g, n, run, w, sizeof(w[0]));
	host_thread_group_join(&g);
	for (unsigned i = 0; i < n; i++) {
		sum += w[i].ns / events;
		fast += w[i].fast;
	}
#ifdef WITH_LTTNG_UST
	printf("%s threads=%u ns_per_event=%.2f\n", IMPL, n, sum / n);
#else
	if (use_fast)
		printf("%s-fast threads=%u ns_per_event=%.2f fast_share=%.4f\n",
		       IMPL, n, sum / n, (double)fast / ((double)events * n));
	else
		printf("%s-general threads=%u ns_per_event=%.2f\n", IMPL, n,
		       sum / n);
#endif
	return 0;
}
