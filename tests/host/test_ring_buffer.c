/*
 * Host tests for trace/ring_buffer.c, single-threaded (under ASan and
 * UBSan): discard mode with an idle reader reads back every record
 * intact and in order, then counts the rest lost; overwrite mode keeps
 * exactly the newest sub-buffers; written + lost == emitted in both
 * modes; records larger than a sub-buffer; the extended header (large
 * timestamp delta, large id); writers nesting at the two places an
 * interrupt can hit (inside the reserve loop, between reserve and
 * commit) and the nesting limit; both page-index variants; the fast
 * path (rb_emit_fast() through the write window) in both modes, with a
 * reader swapping sub-buffers under it and writers nesting inside it.
 */
// HOST_SRCS: trace/ring_buffer.c trace/packet.c lib/string.c
#include <stdint.h>
#include <stdlib.h>
#include "lib/ktest.h"
#include "tests/host/host_shim.h"
#include "tests/host/rb_test_util.h"
#include "trace/ring_buffer.h"

/* A clock the tests control; a hook can "interrupt" inside reserve. */
static uint64_t fake_now;
static uint64_t fake_step = 3;
static void (*clock_hook)(void);
static uint64_t fake_clock(void)
{
	fake_now += fake_step;
	if (clock_hook) {
		void (*h)(void) = clock_hook;
		clock_hook = NULL; /* one interrupt per arming */
		h();
	}
	return fake_now;
}

static struct rb_config cfg_for(enum rb_mode mode, enum rb_page_index idx,
				unsigned subbuf_shift, unsigned n_shift)
{
	struct rb_config c = {
		.subbuf_shift = subbuf_shift,
		.nr_subbufs_shift = n_shift,
		.mode = mode,
		.page_index = idx,
		.cpu = 7,
		.clock = fake_clock,
	};
	return c;
}

/* Read every ready packet of t into p; returns the packets read. */
static unsigned long drain(struct rbt *t, struct rbt_parse *p,
			   unsigned max_fill, uint64_t *records_claimed)
{
	void *pkt = malloc(t->rb.subbuf_size);
	unsigned long n = 0, recs;

	while (rb_read_packet(&t->rb, pkt, &recs)) {
		uint64_t got = rbt_parse_packet(p, pkt, t->rb.subbuf_size,
						max_fill, t->rb.cfg.cpu);
		if (got != recs)
			p->errors++;
		*records_claimed += recs;
		n++;
	}
	free(pkt);
	return n;
}

static void discard_idle_reader(struct ktest_ctx *ctx, enum rb_page_index idx)
{
	struct rb_config c = cfg_for(RB_DISCARD, idx, 13, 2); /* 4 x 8 KiB */
	struct rbt t;
	struct rbt_parse p = {0};
	uint64_t emitted = 0, written = 0, claimed = 0;
	const unsigned max_fill = 200;

	ASSERT_EQ(rbt_init(&t, &c, 1), 0);
	for (uint64_t seq = 1; seq <= 3000; seq++, emitted++)
		written += rbt_emit(&t.rb, seq, max_fill);
	rb_flush(&t.rb);
	EXPECT_GT(t.rb.lost[RB_LOST_FULL], 0);
	EXPECT_EQ(written + rb_lost_total(&t.rb), emitted);
	EXPECT_EQ(drain(&t, &p, max_fill, &claimed), 4);
	EXPECT_EQ(p.errors, 0);
	EXPECT_EQ(p.records, written);
	EXPECT_EQ(claimed, written);
	rbt_free(&t);
}

KTEST(ring_buffer, discard_idle_reader_array)
{
	discard_idle_reader(ctx, RB_PAGES_ARRAY);
}

KTEST(ring_buffer, discard_idle_reader_list)
{
	discard_idle_reader(ctx, RB_PAGES_LIST);
}

KTEST(ring_buffer, discard_reader_keeps_up)
{
	struct rb_config c = cfg_for(RB_DISCARD, RB_PAGES_ARRAY, 12, 1);
	struct rbt t;
	struct rbt_parse p = {0};
	uint64_t written = 0, claimed = 0;

	ASSERT_EQ(rbt_init(&t, &c, 8), 0);
	for (uint64_t seq = 1; seq <= 5000; seq++) {
		written += rbt_emit(&t.rb, seq, 40);
		drain(&t, &p, 40, &claimed);
	}
	rb_flush(&t.rb);
	drain(&t, &p, 40, &claimed);
	EXPECT_EQ(written, 5000);
	EXPECT_EQ(rb_lost_total(&t.rb), 0);
	EXPECT_EQ(p.records, 5000);
	EXPECT_EQ(p.errors, 0);
	rbt_free(&t);
}

static void overwrite_newest(struct ktest_ctx *ctx, enum rb_page_index idx)
{
	struct rb_config c = cfg_for(RB_OVERWRITE, idx, 13, 2);
	struct rbt t;
	struct rbt_parse p = {0};
	uint64_t emitted = 0, written = 0, claimed = 0;
	const unsigned max_fill = 100;
	unsigned long packets;

	ASSERT_EQ(rbt_init(&t, &c, 1), 0);
	for (uint64_t seq = 1; seq <= 5000; seq++, emitted++)
		written += rbt_emit(&t.rb, seq, max_fill);
	EXPECT_EQ(written, emitted); /* the flight recorder never refuses */
	rb_flush(&t.rb);
	unsigned long last_packet = (t.rb.offset >> c.subbuf_shift) - 1;
	packets = drain(&t, &p, max_fill, &claimed);
	/* Exactly the newest sub-buffers: the last 4, ending with the last. */
	EXPECT_EQ(packets, 4);
	EXPECT_EQ(p.last_packet, last_packet);
	EXPECT_EQ(p.last_seq, 5000);
	EXPECT_EQ(p.errors, 0);
	EXPECT_EQ(claimed, p.records);
	EXPECT_EQ(p.records + t.rb.lost[RB_LOST_OVERWRITTEN], emitted);
	EXPECT_EQ(rb_lost_total(&t.rb), t.rb.lost[RB_LOST_OVERWRITTEN]);
	rbt_free(&t);
}

KTEST(ring_buffer, overwrite_keeps_newest_array)
{
	overwrite_newest(ctx, RB_PAGES_ARRAY);
}

KTEST(ring_buffer, overwrite_keeps_newest_list)
{
	overwrite_newest(ctx, RB_PAGES_LIST);
}

/* A reader in the middle: what it takes is never counted lost. */
KTEST(ring_buffer, overwrite_reader_interleaved)
{
	struct rb_config c = cfg_for(RB_OVERWRITE, RB_PAGES_ARRAY, 12, 2);
	struct rbt t;
	struct rbt_parse p = {0};
	uint64_t claimed = 0;

	ASSERT_EQ(rbt_init(&t, &c, 8), 0);
	for (uint64_t seq = 1; seq <= 20000; seq++) {
		rbt_emit(&t.rb, seq, 60);
		if (seq % 997 == 0)
			drain(&t, &p, 60, &claimed);
	}
	rb_flush(&t.rb);
	drain(&t, &p, 60, &claimed);
	EXPECT_EQ(p.errors, 0);
	EXPECT_GT(t.rb.lost[RB_LOST_OVERWRITTEN], 0);
	EXPECT_EQ(p.records + t.rb.lost[RB_LOST_OVERWRITTEN], 20000);
	EXPECT_EQ(p.last_seq, 20000);
	rbt_free(&t);
}

KTEST(ring_buffer, too_big)
{
	struct rb_config c = cfg_for(RB_DISCARD, RB_PAGES_ARRAY, 12, 1);
	struct rbt t;
	struct rb_ctx big = {.size_compact = 4096, .size_extended = 4104,
			     .id = 1};

	ASSERT_EQ(rbt_init(&t, &c, 1), 0);
	EXPECT_EQ(rb_reserve(&t.rb, &big), -1);
	EXPECT_EQ(t.rb.lost[RB_LOST_TOO_BIG], 1);
	EXPECT_EQ(t.rb.nesting, 0);
	EXPECT_TRUE(rbt_emit(&t.rb, 1, 0));
	rbt_free(&t);
}

KTEST(ring_buffer, extended_headers)
{
	struct rb_config c = cfg_for(RB_DISCARD, RB_PAGES_LIST, 12, 2);
	struct rbt t;
	struct rbt_parse p = {0};
	uint64_t claimed = 0;

	ASSERT_EQ(rbt_init(&t, &c, 1), 0);
	EXPECT_TRUE(rbt_emit(&t.rb, 1, 30));
	fake_now += 1ull << 30; /* delta too large for 27 bits */
	EXPECT_TRUE(rbt_emit(&t.rb, 2, 30));
	EXPECT_TRUE(rbt_emit(&t.rb, 3, 30));
	EXPECT_TRUE(rbt_emit_id(&t.rb, 4, 30, 200)); /* id too large */
	fake_now += (1ull << 27) - 100; /* wraps the low bits, fits */
	EXPECT_TRUE(rbt_emit(&t.rb, 5, 30));
	rb_flush(&t.rb);
	drain(&t, &p, 30, &claimed);
	EXPECT_EQ(p.records, 5);
	EXPECT_EQ(p.extended, 2);
	EXPECT_EQ(p.errors, 0);
	rbt_free(&t);
}

/* Interrupt inside the reserve loop: the outer CAS fails and retries. */
static struct rb *nest_rb;
static uint64_t nest_seq, nest_emitted, nest_written;
static unsigned nest_fill = 20; /* max fill bytes of nested records */
static void nested_emit(void)
{
	nest_emitted++;
	nest_written += rbt_emit(nest_rb, nest_seq++, nest_fill);
}

KTEST(ring_buffer, nesting)
{
	struct rb_config c = cfg_for(RB_DISCARD, RB_PAGES_ARRAY, 13, 3);
	struct rbt t;
	struct rbt_parse p = {.any_order = true};
	uint64_t claimed = 0, written = 0, emitted = 0;

	ASSERT_EQ(rbt_init(&t, &c, 1), 0);
	nest_rb = &t.rb;
	nest_seq = 1000000;
	nest_emitted = nest_written = 0;
	for (uint64_t seq = 1; seq <= 400; seq++) {
		if (seq % 3 == 0)
			clock_hook = nested_emit; /* inside the next reserve */
		written += rbt_emit(&t.rb, seq, 20);
		emitted++;
		if (seq % 5 == 0) { /* between reserve and commit */
			struct rb_ctx o = {.size_compact = 24,
					   .size_extended = 32, .id = 9};
			uint64_t z[2] = {0, 0};
			emitted++;
			ASSERT_EQ(rb_reserve(&t.rb, &o), 0);
			nested_emit();
			/* a record "seq 0" with no fill bytes */
			o.cursor = o.begin + (o.extended ? 16 : 8);
			z[1] = o.tsc;
			rb_write(&t.rb, &o, z, sizeof(z));
			rb_commit(&t.rb, &o);
			written++;
		}
	}
	clock_hook = NULL;
	EXPECT_EQ(t.rb.nesting, 0);
	EXPECT_EQ(nest_emitted, 400 / 3 + 400 / 5);
	rb_flush(&t.rb);
	drain(&t, &p, 20, &claimed);
	EXPECT_EQ(p.errors, 0);
	EXPECT_EQ(rb_lost_total(&t.rb), 0);
	EXPECT_EQ(written + nest_written, emitted + nest_emitted);
	EXPECT_EQ(claimed, emitted + nest_emitted);
	EXPECT_EQ(p.records, emitted + nest_emitted);
	rbt_free(&t);
}

/* Each level "interrupts" the next reserve: the fifth level is lost. */
static unsigned depth_left;
static void deeper(void)
{
	if (--depth_left)
		clock_hook = deeper;
	rbt_emit(nest_rb, nest_seq++, 0);
}

KTEST(ring_buffer, nesting_limit)
{
	struct rb_config c = cfg_for(RB_DISCARD, RB_PAGES_ARRAY, 12, 2);
	struct rbt t;

	ASSERT_EQ(rbt_init(&t, &c, 1), 0);
	nest_rb = &t.rb;
	nest_seq = 10;
	depth_left = RB_MAX_NESTING; /* levels 2 .. RB_MAX_NESTING + 1 */
	clock_hook = deeper;
	EXPECT_TRUE(rbt_emit(&t.rb, 1, 0));
	EXPECT_EQ(t.rb.lost[RB_LOST_NESTING], 1);
	EXPECT_EQ(nest_seq, 10 + RB_MAX_NESTING);
	EXPECT_EQ(rb_lost_total(&t.rb), 1);
	EXPECT_EQ(t.rb.nesting, 0);
	rbt_free(&t);
}

KTEST(ring_buffer, bad_config)
{
	struct rb_config c = cfg_for(RB_DISCARD, RB_PAGES_ARRAY, 11, 2);
	struct rb rb;

	EXPECT_EQ(rb_init(&rb, &c, NULL, NULL, NULL, 1), -1);
	c = cfg_for(RB_DISCARD, RB_PAGES_ARRAY, 12, 0);
	EXPECT_EQ(rb_init(&rb, &c, NULL, NULL, NULL, 1), -1);
	c = cfg_for(RB_DISCARD, RB_PAGES_ARRAY, 12, 2);
	c.clock = NULL;
	EXPECT_EQ(rb_init(&rb, &c, NULL, NULL, NULL, 1), -1);
}

/* The fast path's payload (seq, tsc) and clock: the test clock. */
static uint64_t fast_payload[2];
static uint64_t fast_taken;
static uint64_t fast_now(void)
{
	fast_payload[1] = fake_clock();
	return fast_payload[1];
}

/* One fixed-size record, fast path first, else the general path. */
static bool emit_fast(struct rb *rb, uint64_t seq)
{
	fast_payload[0] = seq;
	if (rb_emit_fast(rb, RBT_ID, fast_payload, 8, RBT_FIXED,
			 rbt_size(RB_COMPACT_HEADER_SIZE, 0), fast_now)) {
		fast_taken++;
		return true;
	}
	return rbt_emit(rb, seq, 0);
}

/*
 * The fast path writes every record the general path would: read back
 * intact and in order, written + lost == emitted. Without nesting it
 * declines only where a window ends (at most two records per page:
 * the one that does not fit, the one that opens the next sub-buffer);
 * with nesting (every nest_every-th clock read) the outer CAS fails.
 */
static void fast_path(struct ktest_ctx *ctx, enum rb_mode mode,
		      enum rb_page_index idx, unsigned nest_every,
		      unsigned read_every)
{
	struct rb_config c = cfg_for(mode, idx, 13, 2);
	struct rbt t;
	struct rbt_parse p = {.any_order = nest_every != 0};
	uint64_t claimed = 0, written = 0, emitted = 3000, pages;

	ASSERT_EQ(rbt_init(&t, &c, 1), 0);
	nest_rb = &t.rb;
	nest_seq = 1000000;
	nest_emitted = nest_written = fast_taken = 0;
	nest_fill = 0;
	for (uint64_t seq = 1; seq <= emitted; seq++) {
		if (nest_every && seq % nest_every == 0)
			clock_hook = nested_emit;
		written += emit_fast(&t.rb, seq);
		if (read_every && seq % read_every == 0)
			drain(&t, &p, 0, &claimed);
	}
	clock_hook = NULL;
	nest_fill = 20;
	rb_flush(&t.rb);
	drain(&t, &p, 0, &claimed);
	EXPECT_EQ(p.errors, 0);
	EXPECT_EQ(t.rb.nesting, 0);
	EXPECT_EQ(p.records, claimed);
	EXPECT_EQ(claimed + rb_lost_total(&t.rb), emitted + nest_emitted);
	EXPECT_EQ(written + nest_written,
		  claimed + t.rb.lost[RB_LOST_OVERWRITTEN]);
	pages = (written * rbt_size(RB_COMPACT_HEADER_SIZE, 0)) / RB_PAGE_SIZE +
		1;
	if (!nest_every)
		EXPECT_LE(written, fast_taken + 2 * pages);
	EXPECT_GT(fast_taken, written / 2);
	if (mode == RB_DISCARD && !read_every) /* it filled up */
		EXPECT_GT(t.rb.lost[RB_LOST_FULL], 0);
	rbt_free(&t);
}

KTEST(ring_buffer, fast_discard_idle_reader_array)
{
	fast_path(ctx, RB_DISCARD, RB_PAGES_ARRAY, 0, 0);
}

KTEST(ring_buffer, fast_discard_idle_reader_list)
{
	fast_path(ctx, RB_DISCARD, RB_PAGES_LIST, 0, 0);
}

KTEST(ring_buffer, fast_overwrite_reader_interleaved)
{
	fast_path(ctx, RB_OVERWRITE, RB_PAGES_ARRAY, 0, 50);
}

KTEST(ring_buffer, fast_overwrite_nested_list)
{
	fast_path(ctx, RB_OVERWRITE, RB_PAGES_LIST, 7, 120);
}

KTEST(ring_buffer, fast_discard_nested_reader)
{
	fast_path(ctx, RB_DISCARD, RB_PAGES_ARRAY, 5, 90);
}
