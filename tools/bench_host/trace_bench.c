/*
 * make bench-host: nanoseconds per 16-byte event of trace/ring_buffer.c
 * on this Linux host, one and two writer threads (each its own buffer,
 * as each CPU has in the kernel), flight-recorder mode; built with
 * -DWITH_LTTNG_UST it measures LTTng-UST's tracepoint with the same
 * payload instead (tools/bench_host.sh runs both, inside an LTTng
 * session it creates, and prints the ratio).
 *
 * Usage: trace_bench THREADS EVENTS_PER_THREAD
 * Prints: "ours|lttng-ust threads=N ns_per_event=X.XX"
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/cycles.h"
#include "trace/ring_buffer.h"

#ifdef WITH_LTTNG_UST
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "tools/bench_host/ust_tp.h"
#define IMPL "lttng-ust"
#else
#define IMPL "ours"
#endif

#define SUBBUF_SHIFT 14
#define SUBBUFS_SHIFT 3
#define MAX_THREADS 16
#define NSEC 1000000000.0

struct worker {
	pthread_t t;
	struct rb rb;
	uint64_t events;
	double ns;
};

static pthread_barrier_t start;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
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

	ctx.size_compact = 24;
	ctx.size_extended = 32;
	ctx.id = 1;
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

	if (n < 1 || n > MAX_THREADS || events == 0) {
		fprintf(stderr, "usage: trace_bench THREADS EVENTS\n");
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
		pthread_create(&w[i].t, NULL, run, &w[i]);
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_join(w[i].t, NULL);
		sum += w[i].ns / events;
	}
	printf("%s threads=%u ns_per_event=%.2f\n", IMPL, n, sum / n);
	return 0;
}
