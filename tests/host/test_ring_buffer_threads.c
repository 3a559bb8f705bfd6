/*
 * trace/ring_buffer.c under ThreadSanitizer: several writer threads, each
 * the owner of its own buffer (one "CPU" each, as in the kernel), and one
 * reader thread taking packets from all of them while they write, in
 * discard and in overwrite mode. Every record the reader gets must be
 * intact and in order; at the end every record emitted is either read or
 * counted lost, exactly (read + lost == emitted, per buffer), and the
 * reader's packet record counts match what it decoded. A missing
 * release/acquire pair shows up as a TSan report or a torn record. The
 * fast_* cases write through rb_emit_fast(), the kernel's emit path.
 *
 * Record sizes vary (general path: 24 to 72 bytes; fast path: 24, 32 and
 * 40), and one writer has two-page sub-buffers, so that in every run,
 * whatever the threads' timing, each boundary case happens and is
 * counted by the writers: a record ending one alignment unit before a
 * sub-buffer's end (the last place allowed), a record that would have
 * ended exactly at it (it switches), one ending exactly at a page end
 * inside a sub-buffer, and one crossing a page. The run fails if one of
 * them never happened.
 */
// HOST_SRCS: trace/ring_buffer.c trace/packet.c lib/string.c tests/host/host_cycles.c
// HOST_SANITIZE: thread
#include <stdint.h>
#include <stdlib.h>
#include "lib/atomic.h"
#include "lib/cycles.h"
#include "lib/ktest.h"
#include "tests/host/host_shim.h"
#include "tests/host/host_thread_group.h"
#include "tests/host/rb_test_util.h"

#define NR_WRITERS 3
#define RECORDS_PER_WRITER 40000
#define MAX_FILL 48
#define MAX_FILL_FAST 16 /* sizes 24 to 40: the fast path takes all */
#define SUBBUF_SHIFT_MAX 13

/* The boundary cases a writer saw (see the top). */
enum edge {
	EDGE_LAST_SLOT,     /* ended RB_RECORD_ALIGN before the end */
	EDGE_EXACT_SWITCH,  /* would have ended exactly at the end */
	EDGE_PAGE_END,      /* ended exactly at a page end inside */
	EDGE_PAGE_CROSS,    /* crossed a page boundary */
	EDGE_NR,
};
static const char *const edge_names[EDGE_NR] = {
	"ending 8 bytes before a sub-buffer end",
	"switching at an exact sub-buffer end",
	"ending at a page end inside a sub-buffer",
	"crossing a page",
};

/* Fill bytes of this run's records (0: all fixed-size) and the path. */
static unsigned max_fill;
static bool use_fast;

struct writer {
	struct rbt t;
	uint64_t written;
	uint64_t edges[EDGE_NR];
	bool done;
};

static struct writer writers[NR_WRITERS];
/* Writers yield every this many records (0: never, the reader lags). */
static unsigned relax_every;

/*
 * Classify the record just written from the write offset before (o) and
 * after (n) it: only the owner moves the offset, so [o, n) is the record
 * (or, after a switch, the padding, the next header and the record).
 */
static void count_edges(struct writer *w, unsigned long o, unsigned long n)
{
	const struct rb *rb = &w->t.rb;
	unsigned long b = o & ~RB_OFFSET_TAIL_MASK;
	unsigned long e = n & ~RB_OFFSET_TAIL_MASK;
	unsigned long end_off = e & rb->subbuf_mask, begin = b;

	if (e == b)
		return; /* lost */
	if ((b ^ e) & ~rb->subbuf_mask) {
		/* Switched: the record follows the next packet's header. */
		unsigned long size = end_off - RB_PACKET_HEADER_SIZE;

		begin = e - size;
		if ((b & rb->subbuf_mask) && (b & rb->subbuf_mask) + size ==
						     rb->subbuf_size)
			w->edges[EDGE_EXACT_SWITCH]++;
	}
	if (end_off == rb->subbuf_size - RB_RECORD_ALIGN)
		w->edges[EDGE_LAST_SLOT]++;
	if (end_off && end_off % RB_PAGE_SIZE == 0)
		w->edges[EDGE_PAGE_END]++;
	if ((begin >> RB_PAGE_SHIFT) != ((e - 1) >> RB_PAGE_SHIFT))
		w->edges[EDGE_PAGE_CROSS]++;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	for (uint64_t seq = 1; seq <= RECORDS_PER_WRITER; seq++) {
		unsigned long o = READ_ONCE(w->t.rb.offset);

		w->written += use_fast ? rbt_emit_fast(&w->t.rb, seq, max_fill)
					: rbt_emit(&w->t.rb, seq, max_fill);
		count_edges(w, o, READ_ONCE(w->t.rb.offset));
		if (relax_every && seq % relax_every == 0)
			cpu_relax(); /* let the reader in, on a small machine */
	}
	rb_flush(&w->t.rb); /* the owner closes its last packet */
	atomic_store_release(&w->done, true);
	return NULL;
}

/* Reader: polls every buffer until all writers are done and drained. */
struct reader_result {
	struct rbt_parse parse[NR_WRITERS];
	uint64_t claimed[NR_WRITERS];
	uint64_t packets;
};

static void *reader_main(void *arg)
{
	struct reader_result *r = arg;
	void *pkt = malloc(1ul << SUBBUF_SHIFT_MAX);
	bool all_done;

	do {
		all_done = true;
		for (int i = 0; i < NR_WRITERS; i++) {
			struct rb *rb = &writers[i].t.rb;
			unsigned long recs;
			bool done = atomic_load_acquire(&writers[i].done);

			while (rb_read_packet(rb, pkt, &recs)) {
				uint64_t got = rbt_parse_packet(
					&r->parse[i], pkt, rb->subbuf_size,
					max_fill, (uint32_t)i);
				if (got != recs)
					r->parse[i].errors++;
				r->claimed[i] += recs;
				r->packets++;
			}
			all_done &= done;
		}
		cpu_relax();
	} while (!all_done);
	/* One more pass: packets delivered by the final flushes. */
	for (int i = 0; i < NR_WRITERS; i++) {
		unsigned long recs;
		while (rb_read_packet(&writers[i].t.rb, pkt, &recs)) {
			r->claimed[i] += recs;
			if (rbt_parse_packet(&r->parse[i], pkt,
					     writers[i].t.rb.subbuf_size,
					     max_fill, (uint32_t)i) != recs)
				r->parse[i].errors++;
			r->packets++;
		}
	}
	free(pkt);
	return NULL;
}

static void run_path(struct ktest_ctx *ctx, enum rb_mode mode,
		     unsigned stride, unsigned relax, bool fast)
{
	struct reader_result *r = calloc(1, sizeof(*r));
	struct host_thread_group reader, writer_threads;

	for (int i = 0; i < NR_WRITERS; i++) {
		struct rb_config c = {
			/* Writer 1: two pages per sub-buffer. */
			.subbuf_shift = i == 1 ? SUBBUF_SHIFT_MAX : RB_PAGE_SHIFT,
			.nr_subbufs_shift = 2,
			.mode = mode,
			.page_index = i % 2 ? RB_PAGES_LIST : RB_PAGES_ARRAY,
			.cpu = (uint32_t)i,
			.clock = cycles_now,
		};
		writers[i].written = 0;
		memset(writers[i].edges, 0, sizeof(writers[i].edges));
		writers[i].done = false;
		ASSERT_EQ(rbt_init(&writers[i].t, &c, stride), 0);
	}
	relax_every = relax;
	use_fast = fast;
	max_fill = fast ? MAX_FILL_FAST : MAX_FILL;
	host_thread_group_start(&reader, 1, reader_main, r, 0);
	host_thread_group_start(&writer_threads, NR_WRITERS, writer_main,
				writers, sizeof(writers[0]));
	host_thread_group_join(&writer_threads);
	host_thread_group_join(&reader);

	for (int e = 0; e < EDGE_NR; e++) {
		uint64_t sum = 0;

		for (int i = 0; i < NR_WRITERS; i++)
			sum += writers[i].edges[e];
		if (sum == 0)
			ktest_diag("no record %s", edge_names[e]);
		EXPECT_GT(sum, 0);
	}
	for (int i = 0; i < NR_WRITERS; i++) {
		struct rb *rb = &writers[i].t.rb;

		EXPECT_EQ(r->parse[i].errors, 0);
		EXPECT_EQ(r->parse[i].records, r->claimed[i]);
		EXPECT_EQ(r->parse[i].records + rb_lost_total(rb),
			  RECORDS_PER_WRITER);
		EXPECT_EQ(writers[i].written + rb_lost_total(rb) -
				  rb->lost[RB_LOST_OVERWRITTEN],
			  RECORDS_PER_WRITER);
		EXPECT_EQ(rb->lost[RB_LOST_NESTING] + rb->lost[RB_LOST_TOO_BIG],
			  0);
		if (mode == RB_DISCARD)
			EXPECT_EQ(rb->lost[RB_LOST_OVERWRITTEN], 0);
		ktest_diag("%s writer %d: read %llu, lost full %lu, "
			   "overwritten %lu; edges %llu %llu %llu %llu",
			   mode == RB_DISCARD ? "discard" : "overwrite", i,
			   (unsigned long long)r->parse[i].records,
			   rb->lost[RB_LOST_FULL],
			   rb->lost[RB_LOST_OVERWRITTEN],
			   (unsigned long long)writers[i].edges[0],
			   (unsigned long long)writers[i].edges[1],
			   (unsigned long long)writers[i].edges[2],
			   (unsigned long long)writers[i].edges[3]);
		rbt_free(&writers[i].t);
	}
	EXPECT_GT(r->packets, 0);
	free(r);
}

/* The general path (rb_reserve, rb_write, rb_commit), varied sizes. */
static void run(struct ktest_ctx *ctx, enum rb_mode mode, unsigned stride,
		unsigned relax)
{
	run_path(ctx, mode, stride, relax, false);
}

KTEST(ring_buffer_threads, discard)
{
	run(ctx, RB_DISCARD, 8, 16); /* counters on their own cache lines */
}

KTEST(ring_buffer_threads, discard_reader_lags)
{
	run(ctx, RB_DISCARD, 1, 0); /* counters packed */
}

KTEST(ring_buffer_threads, overwrite)
{
	run(ctx, RB_OVERWRITE, 1, 16);
}

KTEST(ring_buffer_threads, overwrite_reader_lags)
{
	run(ctx, RB_OVERWRITE, 8, 0);
}

/* rb_emit_fast() (the kernel's emit path), 24- to 40-byte records. */
KTEST(ring_buffer_threads, fast_discard)
{
	run_path(ctx, RB_DISCARD, 8, 16, true);
}

KTEST(ring_buffer_threads, fast_overwrite_reader_lags)
{
	run_path(ctx, RB_OVERWRITE, 1, 0, true);
}
