/*
 * Host tests for the cache model engine and its profile parser, on
 * access streams whose outcome is computed by hand in the comments: a
 * streaming read, LRU order in one set, UC reads, WC bursts and partial
 * flushes, non-temporal stores, MESI hand-overs between two CPUs, locked
 * operations, WT/WP stores, clflush (seen, and reported later by address),
 * pausing a region's counts, the store buffer, the prefetchers and the
 * L2's own queue, a clock started over (cm_restart_clock()), the
 * shipped profiles file, and the
 * instruction classifier on encodings taken from the SDM.
 */
// HOST_SRCS: cachemodel/model_create.c cachemodel/model_access.c cachemodel/model_level.c cachemodel/model_memtype.c cachemodel/model_time.c cachemodel/model_coherence.c cachemodel/model_prefetch.c cachemodel/model_buffers.c cachemodel/model_readout.c cachemodel/profile.c cachemodel/x86_insn.c
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cachemodel/model.h"
#include "cachemodel/profile.h"
#include "cachemodel/x86_insn.h"
#include "lib/ktest.h"
#include "tests/host/cm_test_model.h"
#include "tests/host/host_shim.h"

#define PAGE 4096u
#define PROFILES_FILE "cachemodel/profiles.txt"

/*
 * A tiny machine: L1D 1 KiB 2-way (8 sets), L2 4 KiB 4-way (16 sets),
 * LLC 16 KiB 4-way (64 sets), easy latencies.
 */
static const char tiny_text[] =
	"# test profile\n"
	"[other]\n"
	"freq_mhz 1000\n"
	"[tiny]\n"
	"freq_mhz       1000\n"
	"cpi_x100       100   # one cycle per instruction\n"
	"l1d            1024 2 3\n"
	"l2             4096 4 10\n"
	"llc            16384 4 30\n"
	"mem_latency    100\n"
	"remote_latency 50\n"
	"uc_load        120\n"
	"uc_store       110\n"
	"wc_buffers     2\n"
	"wc_burst       20\n"
	"wc_chunk       7\n"
	"locked         15\n"
	"fence          5\n"
	"clflush        40\n";

static struct cm_model *tiny(unsigned ncpus)
{
	return cm_test_model(tiny_text, "tiny", ncpus);
}

static void load(struct cm_model *m, unsigned cpu, uint64_t pa)
{
	cm_access(m, cpu, pa, 8, 0);
}

static void store(struct cm_model *m, unsigned cpu, uint64_t pa)
{
	cm_access(m, cpu, pa, 8, CM_STORE);
}

/*
 * The tiny machine with timing mechanisms switched on by the optional
 * keys (appended to its text): what is not given stays off.
 */
static struct cm_model *tiny_with(unsigned ncpus, const char *keys)
{
	static char text[sizeof(tiny_text) + 256];

	snprintf(text, sizeof(text), "%s%s", tiny_text, keys);
	return cm_test_model(text, "tiny", ncpus);
}

KTEST(cachemodel, store_buffer_hides_ownership_until_full)
{
	struct cm_model *m = tiny_with(1, "fill_buffers 4\nstore_buffer 2\n");
	const struct cm_stats *s = cm_stats(m, 0);

	/* Three stores to three lines not cached: each read-for-ownership
	 * holds the bus 20 cycles and owns its line 100 cycles after it
	 * starts: at 100, 120 (the bus was busy until 20) and 140. The
	 * first two retire at once and wait in the store buffer; the third
	 * finds it full and waits for the oldest (100). */
	store(m, 0, 0);
	store(m, 0, 64);
	EXPECT_EQ(s->mem_cycles, 0);
	store(m, 0, 128);
	EXPECT_EQ(s->mem_cycles, 100);
	EXPECT_EQ(s->store_stalls, 100);
	/* sfence waits for no WB store; mfence waits for the last (140). */
	cm_fence(m, 0, CM_SFENCE);
	EXPECT_EQ(s->mem_cycles, 100 + 5);
	cm_fence(m, 0, CM_MFENCE);
	EXPECT_EQ(s->mem_cycles, 140 + 5);
	cm_destroy(m);
}

KTEST(cachemodel, fences_wait_for_posted_wc_flushes)
{
	struct cm_model *m = tiny_with(1, "fill_buffers 4\nsfence 2\n");
	const struct cm_stats *s = cm_stats(m, 0);

	ASSERT_TRUE(cm_set_type(m, 0, PAGE, CM_WC));
	/* A full line leaves as a posted burst (clock 0..20); WC stores
	 * themselves cost the CPU nothing. */
	for (uint64_t a = 0; a < 64; a += 8)
		store(m, 0, a);
	EXPECT_EQ(s->wc_bursts, 1);
	EXPECT_EQ(s->mem_cycles, 0);
	/* Three chunks of the next line: sfence flushes them (three
	 * 8-byte transactions, 7 cycles each, after the burst: 20..41)
	 * and waits for them, then costs its own 2. */
	for (uint64_t a = 64; a < 88; a += 8)
		store(m, 0, a);
	cm_fence(m, 0, CM_SFENCE);
	EXPECT_EQ(s->mem_cycles, 41 + 2);
	cm_destroy(m);
}

KTEST(cachemodel, stream_prefetch_counts_issued_useful_late)
{
	struct cm_model *m = tiny_with(1, "fill_buffers 4\nprefetch_ahead 2\n");
	const struct cm_stats *s = cm_stats(m, 0);

	/* Misses at lines 0, 1, 2 of a page train the stream (two misses
	 * in one direction): the third issues lines 3 and 4 into L2. */
	load(m, 0, 0);
	load(m, 0, 64);
	EXPECT_EQ(s->prefetches, 0);
	load(m, 0, 128);
	EXPECT_EQ(s->prefetches, 2);
	/* The prefetches went out with the third miss (clock 200), behind
	 * its demand on the bus (200..220): line 3 arrives at 220 + 100.
	 * The load of line 3 (clock 300) finds it in L2, useful but late:
	 * it waits until 320. Its miss in L1D moves the stream on: line 5
	 * is issued. */
	load(m, 0, 192);
	EXPECT_EQ(s->prefetch_useful, 1);
	EXPECT_EQ(s->prefetch_late, 1);
	EXPECT_EQ(s->l2_hits, 1);
	EXPECT_EQ(s->prefetches, 3);
	EXPECT_EQ(s->mem_cycles, 3 * 100 + 20);
	/* Another page, walked backwards with big steps: not a stream of
	 * this page's lines before two misses; never across the page. */
	load(m, 0, 2 * PAGE + 63 * 64);
	load(m, 0, 2 * PAGE + 40 * 64);
	EXPECT_EQ(s->prefetches, 3);
	cm_destroy(m);
}

/*
 * Intel's L2 streamer tracks its requests in the L2's own queue (the
 * "superqueue"), not in the L1D fill buffers (the answer to Stack
 * Overflow question 39260020 that cachemodel/profiles.txt cites for
 * skylake-2015): with l2_queue, prefetches leave the one fill buffer to
 * the next demand miss.
 */
KTEST(cachemodel, l2_queue_leaves_fill_buffers_to_demand_misses)
{
	for (int queue = 0; queue <= 1; queue++) {
		struct cm_model *m = tiny_with(
			1, queue ? "fill_buffers 1\nprefetch_ahead 2\nl2_queue 2\n"
				 : "fill_buffers 1\nprefetch_ahead 2\n");
		const struct cm_stats *s = cm_stats(m, 0);

		/* Lines 0, 1, 2: demand misses at 0, 100, 200, each a
		 * burst (20) and the memory latency (100); the third's
		 * fill buffer is busy until 300 and it issues lines 3
		 * and 4. */
		load(m, 0, 0);
		load(m, 0, 64);
		load(m, 0, 128);
		EXPECT_EQ(s->prefetches, 2);
		EXPECT_EQ(s->mem_cycles, 300);
		/* Without a queue the prefetches take the fill buffer in
		 * turn (300..400, 400..500) and a miss on another page at
		 * 300 waits until 500; with two queue entries they go on
		 * the bus at once (220, 240) and the miss starts at 300. */
		load(m, 0, 2 * PAGE);
		EXPECT_EQ(s->mem_cycles, queue ? 400 : 600);
		cm_destroy(m);
	}
}

/*
 * A sweep's L1D misses overlap in the fill buffers (model.h, invariant
 * 5): a load that starts where the previous one ended waits only for a
 * fill buffer and the L1D fill port, not for its data; a walk that
 * reads one word a line (a chase) waits for every line.
 */
KTEST(cachemodel, sweep_misses_overlap_in_fill_buffers)
{
	struct cm_model *m = tiny_with(1, "fill_buffers 2\nl1_fill 4\n");
	const struct cm_stats *s = cm_stats(m, 0);
	uint64_t before;

	/* Lines 0..31, one load each: all in L2 (16 sets, 4 ways), L1D
	 * (8 sets, 2 ways) keeps lines 16..31 only. */
	for (uint64_t line = 0; line < 32; line++)
		load(m, 0, line * 64);
	ASSERT_EQ(s->l1_misses, 32);
	/* A sweep of lines 0..3 in 8-byte loads. Line 0 does not continue
	 * the walk before it: it waits for L2 (10, the clock T + 10). Line
	 * 1 continues it: a fill buffer and the port are free, it goes on
	 * (data at T + 20). Line 2 at T + 10: a fill buffer is free (line
	 * 0's), the port is not until T + 14 (4 cycles a line): waits 4.
	 * Line 3 at T + 14: both fill buffers are held (until T + 20 and
	 * T + 24): waits 6. The loads within a line are free. */
	for (uint64_t line = 0; line < 4; line++) {
		static const uint64_t wait[4] = {10, 0, 4, 6};

		before = s->mem_cycles;
		for (uint64_t a = line * 64; a < (line + 1) * 64; a += 8)
			load(m, 0, a);
		EXPECT_EQ(s->mem_cycles - before, wait[line]);
	}
	EXPECT_EQ(s->l2_hits, 4);
	/* Lines 4..7, one load each: no load continues the one before, so
	 * each waits for its data from L2. */
	before = s->mem_cycles;
	for (uint64_t line = 4; line < 8; line++)
		load(m, 0, line * 64);
	EXPECT_EQ(s->l2_hits, 8);
	EXPECT_EQ(s->mem_cycles - before, 4 * 10);
	cm_destroy(m);
}

KTEST(cachemodel, inclusive_llc_takes_its_victims_out_of_private_caches)
{
	/* The LLC has 64 sets of 4 ways: lines 64 apart share a set. */
	for (int inclusive = 0; inclusive <= 1; inclusive++) {
		struct cm_model *m = tiny_with(
			2, inclusive ? "llc_inclusive 1\n" : "llc_inclusive 0\n");
		const struct cm_stats *s0 = cm_stats(m, 0);

		load(m, 0, 0);
		for (uint64_t k = 1; k <= 4; k++)
			load(m, 1, k * 64 * 64);	/* evicts line 0 */
		load(m, 0, 0);
		/* Inclusive: CPU 0 lost line 0 with the LLC's copy. */
		EXPECT_EQ(s0->l1_misses, inclusive ? 2 : 1);
		cm_destroy(m);
	}
}

KTEST(cachemodel, streaming_read_misses_once_per_line)
{
	struct cm_model *m = tiny(1);
	const struct cm_stats *s = cm_stats(m, 0);

	/* 512 bytes = 8 lines, 8-byte loads: 8 misses to memory, 56 hits,
	 * each served with the previous load of its line (free). */
	for (uint64_t a = 0; a < 512; a += 8)
		load(m, 0, a);
	EXPECT_EQ(s->loads, 64);
	EXPECT_EQ(s->l1_misses, 8);
	EXPECT_EQ(s->l1_hits, 56);
	EXPECT_EQ(s->l2_misses, 8);
	EXPECT_EQ(s->llc_misses, 8);
	EXPECT_EQ(s->mem_cycles, 8 * 100);
	/* Again: all 64 hit L1 (8 lines fit one way of each of 8 sets);
	 * the first load of each line pays the L1D latency (3). */
	for (uint64_t a = 0; a < 512; a += 8)
		load(m, 0, a);
	EXPECT_EQ(s->l1_hits, 56 + 64);
	EXPECT_EQ(s->l1_misses, 8);
	/* 10 instructions at CPI 1 on top. */
	cm_instructions(m, 0, 10);
	EXPECT_EQ(cm_cycles(m, s), 10 + 8 * 100 + 8 * 3);
	cm_destroy(m);
}

KTEST(cachemodel, lru_eviction_order_in_one_set)
{
	struct cm_model *m = tiny(1);
	const struct cm_stats *s = cm_stats(m, 0);
	/* L1D has 8 sets of 64 bytes: lines 512 bytes apart share set 0. */
	const uint64_t a = 0, b = 512, c = 1024;

	load(m, 0, a);			/* miss */
	load(m, 0, b);			/* miss; set 0 = {a, b} */
	load(m, 0, a);			/* hit; b is now least recent */
	load(m, 0, c);			/* miss, evicts b */
	EXPECT_EQ(s->l1_hits, 1);
	EXPECT_EQ(s->l1_misses, 3);
	load(m, 0, a);			/* still there */
	EXPECT_EQ(s->l1_hits, 2);
	load(m, 0, b);			/* gone from L1, found in L2 */
	EXPECT_EQ(s->l1_misses, 4);
	EXPECT_EQ(s->l2_hits, 1);
	/* b came back and evicted c (a was touched later than c). */
	load(m, 0, a);
	EXPECT_EQ(s->l1_hits, 3);
	load(m, 0, c);
	EXPECT_EQ(s->l1_misses, 5);
	EXPECT_EQ(s->l2_hits, 2);
	cm_destroy(m);
}

KTEST(cachemodel, l2_eviction_removes_hot_l1_line)
{
	struct cm_model *m = tiny(1);
	const struct cm_stats *s = cm_stats(m, 0);
	/* Lines 16 apart share L2 set 0 (16 sets) and L1D set 0 (8 sets). */
	const uint64_t a = 0, step = 16 * 64;

	load(m, 0, a);
	for (uint64_t k = 1; k <= 4; k++) {
		load(m, 0, k * step);	/* L1D set 0 keeps a, the MRU */
		load(m, 0, a);		/* an L1D hit: L2 does not see it */
	}
	/* The fourth newcomer found L2 set 0 full and evicted a, the
	 * least recently filled there, and inclusion took it out of L1D:
	 * the last load of a missed both. */
	EXPECT_EQ(s->l1_hits, 3);
	EXPECT_EQ(s->l1_misses, 6);
	EXPECT_EQ(s->l2_misses, 6);
	cm_destroy(m);
}

KTEST(cachemodel, uc_read_always_goes_to_memory)
{
	struct cm_model *m = tiny(1);
	const struct cm_stats *s = cm_stats(m, 0);

	ASSERT_TRUE(cm_set_type(m, PAGE, PAGE, CM_UC));
	EXPECT_EQ(cm_type_of(m, PAGE + 100), CM_UC);
	EXPECT_EQ(cm_type_of(m, 0), CM_WB);
	for (int i = 0; i < 3; i++)
		load(m, 0, PAGE + 8);
	store(m, 0, PAGE + 8);
	EXPECT_EQ(s->uncached, 4);
	EXPECT_EQ(s->l1_hits + s->l1_misses, 0);
	EXPECT_EQ(s->mem_cycles, 3 * 120 + 110);
	/* UC- behaves the same. */
	ASSERT_TRUE(cm_set_type(m, PAGE, PAGE, CM_UC_MINUS));
	load(m, 0, PAGE + 8);
	EXPECT_EQ(s->uncached, 5);
	cm_destroy(m);
}

KTEST(cachemodel, wc_full_line_is_one_burst_and_sfence_flushes_partial)
{
	struct cm_model *m = tiny(1);
	const struct cm_stats *s = cm_stats(m, 0);

	ASSERT_TRUE(cm_set_type(m, 0, PAGE, CM_WC));
	for (uint64_t a = 0; a < 64; a += 8)
		store(m, 0, a);
	EXPECT_EQ(s->wc_bursts, 1);
	EXPECT_EQ(s->wc_partials, 0);
	EXPECT_EQ(s->mem_cycles, 20);
	/* 24 bytes (3 chunks) of the next line, then sfence. */
	for (uint64_t a = 64; a < 88; a += 8)
		store(m, 0, a);
	EXPECT_EQ(s->wc_partials, 0);
	cm_fence(m, 0, CM_SFENCE);
	EXPECT_EQ(s->wc_partials, 1);
	EXPECT_EQ(s->wc_partial_by[CM_WC_FENCE], 1);
	EXPECT_EQ(s->mem_cycles, 20 + 5 + 3 * 7);
	/* A record straddling two lines holds two buffers: one fence, two
	 * partial flushes (bytes 120..135: one chunk in each line). */
	store(m, 0, 120);
	store(m, 0, 128);
	cm_fence(m, 0, CM_SFENCE);
	EXPECT_EQ(s->wc_partials, 3);
	EXPECT_EQ(s->wc_partial_by[CM_WC_FENCE], 3);
	EXPECT_EQ(s->mem_cycles, 20 + 5 + 3 * 7 + 5 + 2 * 7);
	/* Nothing was cached. */
	EXPECT_EQ(s->l1_hits + s->l1_misses, 0);
	cm_destroy(m);
}

KTEST(cachemodel, wc_buffers_flush_on_reuse_uc_access_and_lock)
{
	struct cm_model *m = tiny(1);
	const struct cm_stats *s = cm_stats(m, 0);

	ASSERT_TRUE(cm_set_type(m, 0, PAGE, CM_WC));
	ASSERT_TRUE(cm_set_type(m, PAGE, PAGE, CM_UC));
	/* Three lines, two buffers: the third evicts the first. */
	store(m, 0, 0);
	store(m, 0, 64);
	store(m, 0, 128);
	EXPECT_EQ(s->wc_partials, 1);
	EXPECT_EQ(s->wc_partial_by[CM_WC_EVICT], 1);
	/* A UC access drains both others. */
	load(m, 0, PAGE);
	EXPECT_EQ(s->wc_partials, 3);
	EXPECT_EQ(s->wc_partial_by[CM_WC_UNCACHED], 2);
	/* A locked operation drains too. */
	store(m, 0, 0);
	cm_access(m, 0, 8192, 8, CM_LOCKED);
	cm_access(m, 0, 8192, 8, CM_LOCKED | CM_STORE);
	EXPECT_EQ(s->wc_partials, 4);
	EXPECT_EQ(s->wc_partial_by[CM_WC_LOCKED], 1);
	EXPECT_EQ(s->locked, 1);
	/* A locked operation with the buffers empty flushes nothing. */
	cm_access(m, 0, 8192, 8, CM_LOCKED);
	cm_access(m, 0, 8192, 8, CM_LOCKED | CM_STORE);
	EXPECT_EQ(s->wc_partial_by[CM_WC_LOCKED], 1);
	/* A WC load of a line with pending stores flushes that buffer. */
	store(m, 0, 192);
	load(m, 0, 192);
	EXPECT_EQ(s->wc_partial_by[CM_WC_UNCACHED], 3);
	/* The causes always add up. */
	EXPECT_EQ(s->wc_partial_by[CM_WC_FENCE] + s->wc_partial_by[CM_WC_LOCKED] +
			  s->wc_partial_by[CM_WC_UNCACHED] +
			  s->wc_partial_by[CM_WC_EVICT],
		  s->wc_partials);
	cm_destroy(m);
}

KTEST(cachemodel, nt_store_leaves_line_uncached)
{
	struct cm_model *m = tiny(1);
	const struct cm_stats *s = cm_stats(m, 0);

	load(m, 0, 0);			/* cached now */
	load(m, 0, 0);
	EXPECT_EQ(s->l1_hits, 1);
	for (uint64_t a = 0; a < 64; a += 8)
		cm_access(m, 0, a, 8, CM_STORE | CM_NT);
	EXPECT_EQ(s->nt_stores, 8);
	EXPECT_EQ(s->wc_bursts, 1);
	/* The next load goes all the way to memory. */
	load(m, 0, 0);
	EXPECT_EQ(s->l1_misses, 2);
	EXPECT_EQ(s->l2_misses, 2);
	EXPECT_EQ(s->llc_misses, 2);
	cm_destroy(m);
}

KTEST(cachemodel, two_cpus_one_line_one_invalidation_per_handover)
{
	struct cm_model *m = tiny(2);
	const struct cm_stats *s0 = cm_stats(m, 0), *s1 = cm_stats(m, 1);

	/* 10 writes alternating 0,1,0,1...: 9 hand-overs. */
	for (int i = 0; i < 10; i++)
		store(m, i & 1, 0);
	EXPECT_EQ(s0->invalidations + s1->invalidations, 9);
	EXPECT_EQ(s0->transfers + s1->transfers, 9);
	EXPECT_EQ(s1->invalidations, 5);	/* writes 1, 3, 5, 7, 9 */
	/* The line moves one CPU at a time: a hand-over starts when the
	 * previous one ends (model.h, invariant 5). CPU 0's first write
	 * takes memory (clock 100); CPU 1's clock starts at 0, so its first
	 * hand-over ends at 50, its second waits for CPU 0's (100..150),
	 * capped at one queue place (50): it ends at 150. From then on each
	 * write waits for the other's: the clocks climb 50 a hand-over. */
	EXPECT_EQ(s0->mem_cycles, 400);
	EXPECT_EQ(s1->mem_cycles, 450);
	cm_destroy(m);
}

KTEST(cachemodel, two_cpus_separate_lines_no_invalidation)
{
	struct cm_model *m = tiny(2);

	for (int i = 0; i < 10; i++)
		store(m, i & 1, (uint64_t)(i & 1) * 64);
	EXPECT_EQ(cm_stats(m, 0)->invalidations, 0);
	EXPECT_EQ(cm_stats(m, 1)->invalidations, 0);
	/* After the first write each CPU hits its own M line. */
	EXPECT_EQ(cm_stats(m, 0)->l1_hits, 4);
	EXPECT_EQ(cm_stats(m, 1)->l1_hits, 4);
	cm_destroy(m);
}

KTEST(cachemodel, sharing_then_upgrade)
{
	struct cm_model *m = tiny(2);
	const struct cm_stats *s0 = cm_stats(m, 0), *s1 = cm_stats(m, 1);

	load(m, 0, 0);		/* memory, E in CPU 0 */
	load(m, 1, 0);		/* CPU 0 supplies it: both S */
	EXPECT_EQ(s1->transfers, 1);
	EXPECT_EQ(s1->mem_cycles, 50);
	load(m, 0, 0);		/* S hit, CPU 0's previous load's line: free */
	EXPECT_EQ(s0->l1_hits, 1);
	store(m, 0, 0);		/* upgrade: invalidates CPU 1 */
	EXPECT_EQ(s0->invalidations, 1);
	/* No store buffer: the store waits for its L1D lookup and the
	 * LLC's invalidation. */
	EXPECT_EQ(s0->mem_cycles, 100 + 3 + 30);
	cm_destroy(m);
}

KTEST(cachemodel, locked_rmw_takes_line_exclusive)
{
	struct cm_model *m = tiny(2);
	const struct cm_stats *s0 = cm_stats(m, 0);

	load(m, 1, 0);
	load(m, 0, 0);		/* both S */
	cm_access(m, 0, 0, 8, CM_LOCKED);
	EXPECT_EQ(s0->invalidations, 1);
	EXPECT_EQ(s0->locked, 1);
	/* The store half hits the M line. */
	cm_access(m, 0, 0, 8, CM_LOCKED | CM_STORE);
	EXPECT_EQ(s0->invalidations, 1);
	EXPECT_EQ(s0->l1_hits, 2);
	cm_destroy(m);
}

KTEST(cachemodel, wt_and_wp_stores_write_through)
{
	struct cm_model *m = tiny(1);
	const struct cm_stats *s = cm_stats(m, 0);

	ASSERT_TRUE(cm_set_type(m, 0, PAGE, CM_WT));
	store(m, 0, 0);			/* no allocation */
	EXPECT_EQ(s->uncached, 1);
	load(m, 0, 0);			/* read miss fills */
	load(m, 0, 0);			/* hit */
	EXPECT_EQ(s->l1_misses, 1);
	EXPECT_EQ(s->l1_hits, 1);
	store(m, 0, 0);			/* through to memory, copy kept */
	load(m, 0, 0);
	EXPECT_EQ(s->l1_hits, 2);
	EXPECT_EQ(s->uncached, 2);
	ASSERT_TRUE(cm_set_type(m, 0, PAGE, CM_WP));
	load(m, 0, 0);			/* set_type evicted it */
	store(m, 0, 0);			/* WP: invalidates the copy */
	load(m, 0, 0);
	EXPECT_EQ(s->l1_misses, 3);
	cm_destroy(m);
}

KTEST(cachemodel, clflush_evicts_and_writes_back)
{
	struct cm_model *m = tiny(2);
	const struct cm_stats *s0 = cm_stats(m, 0);

	store(m, 1, 0);			/* dirty in CPU 1 */
	cm_clflush(m, 0, 0);
	EXPECT_EQ(s0->clflushes, 1);
	EXPECT_EQ(s0->writebacks, 1);
	EXPECT_EQ(s0->mem_cycles, 40 + 100);
	load(m, 1, 0);
	EXPECT_EQ(cm_stats(m, 1)->llc_misses, 2);
	cm_destroy(m);
}

KTEST(cachemodel, clflush_lines_reported_later_evict_without_recount)
{
	struct cm_model *m = tiny(2);
	const struct cm_stats *s0 = cm_stats(m, 0);

	/* What the plugin sees: clflush charged at execution, the address
	 * afterwards through the doorbell. */
	store(m, 1, 0);			/* line 0 dirty in CPU 1 */
	load(m, 0, 64);			/* line 1 clean in CPU 0 and the LLC */
	load(m, 0, 4 * 64);		/* line 4: outside the range */
	cm_clflush_unseen(m, 0);
	cm_clflush_unseen(m, 0);
	EXPECT_EQ(s0->clflushes, 2);
	/* CPU 0's misses; the first waits for the bus, which CPU 1's
	 * read-for-ownership holds from clock 0 to 20. */
	EXPECT_EQ(s0->mem_cycles, 2 * 100 + 20 + 40 + 40);
	cm_clflush_lines(m, 0, 0, 2 * 64);
	EXPECT_EQ(s0->clflushes, 2);		/* not counted again */
	EXPECT_EQ(s0->writebacks, 1);		/* line 0's dirty copy */
	EXPECT_EQ(s0->mem_cycles, 2 * 100 + 20 + 40 + 40 + 100);
	load(m, 0, 0);				/* both gone: memory */
	load(m, 0, 64);
	EXPECT_EQ(s0->llc_misses, 2 + 2);
	load(m, 0, 4 * 64);			/* line 4 stayed */
	EXPECT_EQ(s0->llc_misses, 4);
	EXPECT_EQ(s0->l1_hits, 1);
	cm_destroy(m);
}

KTEST(cachemodel, clflush_lines_larger_than_the_caches)
{
	struct cm_model *m = tiny(1);
	const struct cm_stats *s = cm_stats(m, 0);

	/* A range far larger than every cache together is handled by a
	 * scan of the caches: same outcome, dirty lines written back. */
	for (uint64_t pa = 0; pa < 8 * 1024; pa += 64)
		store(m, 0, pa);
	cm_clflush_lines(m, 0, 0, 1ull << 32);
	EXPECT_EQ(s->writebacks, 8 * 1024 / 64);
	load(m, 0, 0);
	EXPECT_EQ(s->llc_misses, 8 * 1024 / 64 + 1);
	cm_clflush_lines(m, 0, 0, 0);		/* empty: nothing */
	cm_destroy(m);
}

KTEST(cachemodel, stats_skip_leaves_a_pause_out)
{
	struct cm_model *m = tiny(1);
	struct cm_stats base, paused, now, d;
	const struct cm_stats *s = cm_stats(m, 0);

	base = *s;
	load(m, 0, 0);				/* counted: a miss */
	paused = *s;
	for (uint64_t pa = 64; pa < 64 * 9; pa += 64)
		load(m, 0, pa);			/* left out: 8 misses */
	now = *s;
	cm_stats_skip(&base, &paused, &now);
	load(m, 0, 0);				/* counted: an L1 hit */
	now = *s;
	d.loads = now.loads - base.loads;
	d.llc_misses = now.llc_misses - base.llc_misses;
	d.l1_hits = now.l1_hits - base.l1_hits;
	d.mem_cycles = now.mem_cycles - base.mem_cycles;
	EXPECT_EQ(d.loads, 2);
	EXPECT_EQ(d.llc_misses, 1);
	EXPECT_EQ(d.l1_hits, 1);
	EXPECT_EQ(d.mem_cycles, 100 + 3);
	cm_destroy(m);
}

KTEST(cachemodel, line_crossing_access_counts_both_lines)
{
	struct cm_model *m = tiny(1);
	const struct cm_stats *s = cm_stats(m, 0);

	cm_access(m, 0, 60, 8, 0);
	EXPECT_EQ(s->loads, 1);
	EXPECT_EQ(s->l1_misses, 2);
	cm_destroy(m);
}

KTEST(cachemodel, set_type_rejects_bad_ranges)
{
	struct cm_model *m = tiny(1);

	EXPECT_FALSE(cm_set_type(m, 0, 0, CM_UC));
	EXPECT_FALSE(cm_set_type(m, 1ull << CM_MAX_PHYS_BITS, PAGE, CM_UC));
	EXPECT_FALSE(cm_set_type(m, 0, PAGE, CM_NTYPES));
	EXPECT_EQ(cm_type_of(m, 0), CM_WB);
	EXPECT_TRUE(cm_state_bytes(m) > 0);
	cm_destroy(m);
}

KTEST(cachemodel, profile_errors_are_reported)
{
	struct cm_profile p;
	char err[128];

	EXPECT_FALSE(cm_profile_parse(tiny_text, "nosuch", &p, err,
				      sizeof(err)));
	EXPECT_STREQ(err, "no profile 'nosuch' (profiles: other tiny)");
	EXPECT_FALSE(cm_profile_parse(tiny_text, "other", &p, err,
				      sizeof(err)));
	EXPECT_STREQ(err, "profile 'other' lacks 'cpi_x100'");
	EXPECT_FALSE(cm_profile_parse("[x]\nfoo 1\n", "x", &p, err,
				      sizeof(err)));
	EXPECT_STREQ(err, "line 2: unknown key");
	EXPECT_FALSE(cm_profile_parse("[x]\nl1d 1 2\n", "x", &p, err,
				      sizeof(err)));
	EXPECT_STREQ(err, "line 2: expected: bytes ways latency");
	EXPECT_FALSE(cm_profile_parse("[x]\nfence 99999999999\n", "x", &p,
				      err, sizeof(err)));
	EXPECT_STREQ(err, "line 2: expected one number");
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

KTEST(cachemodel, shipped_profiles_parse)
{
	static const char *const names[] = {"core2-2007", "skylake-2015",
					    "xeon5400-2008"};
	char *text = read_file(PROFILES_FILE);
	struct cm_profile p;
	char err[128];

	ASSERT_TRUE(text != NULL);
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		bool ok = cm_profile_parse(text, names[i], &p, err,
					   sizeof(err));

		if (!ok)
			ktest_diag("%s: %s", names[i], err);
		EXPECT_TRUE(ok);
	}
	/* Core 2: no private L2, so an L1 miss goes straight to the LLC. */
	ASSERT_TRUE(cm_profile_parse(text, "core2-2007", &p, err,
				     sizeof(err)));
	EXPECT_EQ(p.l2.size, 0);
	EXPECT_EQ(p.llc.latency, 14);
	{
		struct cm_model *m = cm_create(&p, 2);
		const struct cm_stats *s = cm_stats(m, 0);

		ASSERT_TRUE(m != NULL);
		load(m, 1, 0);
		cm_clflush(m, 1, 0);
		load(m, 0, 0);	/* memory */
		load(m, 1, 64);
		load(m, 1, 64);
		/* CPU 1's fill and its adjacent-line prefetch (line 1)
		 * held the FSB from clock 0 for two bursts of 18 cycles:
		 * CPU 0's miss at clock 0 queues behind them. */
		EXPECT_EQ(s->mem_cycles, 2 * 18 + 200);
		EXPECT_EQ(cm_stats(m, 1)->prefetches, 1);
		EXPECT_EQ(cm_stats(m, 1)->l1_hits, 1);
		cm_destroy(m);
	}
	free(text);
}


/* A history of n instructions and a stream of misses and stores, the
 * same shape for every n: the part the host decides before the hello. */
static void restart_history(struct cm_model *m, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		cm_instructions(m, 0, 1);
		if (i % 7 == 0)
			cm_access(m, 0, (1u << 20) + i * 64, 8,
				  i % 3 ? 0 : CM_STORE);
	}
}

/* The part after the hello: a sweep, a chase, stores; its stats. */
static void restart_after(struct cm_model *m, struct cm_stats *s)
{
	struct cm_stats before, after;

	cm_stats_read(m, 0, &before);
	for (uint64_t i = 0; i < 4096; i++) {
		cm_instructions(m, 0, 3);
		cm_access(m, 0, (8u << 20) + i * 64, 8, 0);
		cm_access(m, 0, (16u << 20) + (i * 4099 % 4096) * 64, 8,
			  CM_STORE);
	}
	cm_stats_read(m, 0, &after);
	memset(s, 0, sizeof(*s));
	cm_stats_skip(s, &before, &after);	/* s = after - before */
}

KTEST(cachemodel, restarted_clock_times_the_same_after_any_history)
{
	/* Instruction counts apart by amounts that are not multiples of
	 * the CPI's denominator nor of the bus's slots. */
	static const uint64_t history[] = {1000, 1001, 1003, 5555, 77777};
	char *text = read_file(PROFILES_FILE);
	struct cm_stats first, s;
	struct cm_profile p;
	char err[128];
	bool differ = false;

	ASSERT_TRUE(text != NULL);
	ASSERT_TRUE(cm_profile_parse(text, "skylake-2015", &p, err,
				     sizeof(err)));
	for (int restart = 1; restart >= 0; restart--) {
		for (unsigned h = 0; h < sizeof(history) / sizeof(history[0]);
		     h++) {
			struct cm_model *m = cm_create(&p, 1);

			ASSERT_TRUE(m != NULL);
			restart_history(m, history[h]);
			if (restart)
				cm_restart_clock(m, 0, 1u << 16);
			restart_after(m, &s);
			if (!h)
				first = s;
			else if (restart)
				EXPECT_TRUE(memcmp(&s, &first, sizeof(s)) ==
					    0);
			else if (memcmp(&s, &first, sizeof(s)))
				differ = true;
			cm_destroy(m);
		}
	}
	/* Without the restart the same part does time differently: the
	 * test would see it. */
	EXPECT_TRUE(differ);
	free(text);
}

#define CLASSIFY(...)                                                       \
	({                                                                  \
		static const uint8_t b_[] = {__VA_ARGS__};                  \
		x86_insn_classify(b_, sizeof(b_));                          \
	})

KTEST(cachemodel, x86_classify)
{
	EXPECT_EQ(CLASSIFY(0x0f, 0xc3, 0x07), X86_NT_STORE);	/* movnti [rdi], eax */
	EXPECT_EQ(CLASSIFY(0x48, 0x0f, 0xc3, 0x07), X86_NT_STORE);	/* REX.W */
	EXPECT_EQ(CLASSIFY(0x66, 0x0f, 0xe7, 0x07), X86_NT_STORE);	/* movntdq */
	EXPECT_EQ(CLASSIFY(0x0f, 0x2b, 0x07), X86_NT_STORE);	/* movntps */
	EXPECT_EQ(CLASSIFY(0xc5, 0xf9, 0xe7, 0x07), X86_NT_STORE);	/* vmovntdq */
	EXPECT_EQ(CLASSIFY(0xc4, 0xe1, 0x79, 0xe7, 0x07), X86_NT_STORE);
	EXPECT_EQ(CLASSIFY(0x66, 0x0f, 0xf7, 0xc1), X86_NT_STORE);	/* maskmovdqu */
	EXPECT_EQ(CLASSIFY(0x0f, 0xae, 0x38), X86_CLFLUSH);	/* clflush [rax] */
	EXPECT_EQ(CLASSIFY(0x66, 0x0f, 0xae, 0x38), X86_CLFLUSH);	/* clflushopt */
	EXPECT_EQ(CLASSIFY(0x0f, 0xae, 0xf8), X86_SFENCE);
	EXPECT_EQ(CLASSIFY(0x0f, 0xae, 0xf0), X86_MFENCE);
	EXPECT_EQ(CLASSIFY(0x0f, 0xae, 0xe8), X86_LFENCE);
	EXPECT_EQ(CLASSIFY(0xf0, 0x48, 0x0f, 0xc1, 0x07), X86_LOCKED);	/* lock xadd */
	EXPECT_EQ(CLASSIFY(0xf0, 0xff, 0x07), X86_LOCKED);	/* lock inc */
	/* The trace ring buffer's CPU-local operations, encodings the kernel
	 * build has emitted for them: no LOCK prefix, so not locked (they
	 * neither drain the WC buffers nor pay the locked cost); with the
	 * prefix, locked. */
	EXPECT_EQ(CLASSIFY(0x48, 0x0f, 0xb1, 0x13), 0);	/* cmpxchg [rbx], rdx */
	EXPECT_EQ(CLASSIFY(0x4c, 0x0f, 0xb1, 0x2f), 0);	/* cmpxchg [rdi], r13 */
	EXPECT_EQ(CLASSIFY(0x4a, 0x0f, 0xc1, 0x04, 0xca), 0);	/* xadd */
	EXPECT_EQ(CLASSIFY(0x48, 0x0f, 0xc1, 0x02), 0);	/* xadd [rdx], rax */
	EXPECT_EQ(CLASSIFY(0xf0, 0x48, 0x0f, 0xb1, 0x13), X86_LOCKED);
	EXPECT_EQ(CLASSIFY(0x87, 0x07), X86_LOCKED);		/* xchg [rdi], eax */
	EXPECT_EQ(CLASSIFY(0x87, 0xc1), 0);			/* xchg ecx, eax */
	EXPECT_EQ(CLASSIFY(0x0f, 0xae, 0x30), 0);		/* xsaveopt/ /6 mem */
	EXPECT_EQ(CLASSIFY(0x48, 0x89, 0x07), 0);		/* mov [rdi], rax */
	EXPECT_EQ(CLASSIFY(0x0f, 0x22, 0xd8), X86_TLB_FLUSH);	/* mov cr3, rax */
	EXPECT_EQ(CLASSIFY(0x0f, 0x22, 0xe0), X86_TLB_FLUSH);	/* mov cr4, rax */
	EXPECT_EQ(CLASSIFY(0x0f, 0x01, 0x38), X86_TLB_FLUSH);	/* invlpg [rax] */
	EXPECT_EQ(CLASSIFY(0x0f, 0x01, 0xf8), 0);		/* swapgs */
	EXPECT_EQ(CLASSIFY(0x66, 0x0f, 0x38, 0x82, 0x08), X86_TLB_FLUSH);
	EXPECT_EQ(CLASSIFY(0x0f, 0x20, 0xd8), 0);		/* mov rax, cr3 */
	EXPECT_EQ(CLASSIFY(0xf3, 0xa4), X86_REP_STRING);	/* rep movsb */
	EXPECT_EQ(CLASSIFY(0xf3, 0x48, 0xa5), X86_REP_STRING);	/* rep movsq */
	EXPECT_EQ(CLASSIFY(0xf3, 0xaa), X86_REP_STRING);	/* rep stosb */
	EXPECT_EQ(CLASSIFY(0xf3, 0x48, 0xab), X86_REP_STRING);	/* rep stosq */
	EXPECT_EQ(CLASSIFY(0xa4), 0);				/* movsb */
	EXPECT_EQ(CLASSIFY(0xf3, 0xa6), 0);			/* repe cmpsb */
	EXPECT_EQ(CLASSIFY(0xf3, 0x90), X86_PAUSE);		/* pause */
	EXPECT_EQ(CLASSIFY(0x90), 0);				/* nop */
	EXPECT_EQ(CLASSIFY(0xf3, 0x41, 0x90), 0);	/* rep xchg eax, r8d */
	EXPECT_EQ(CLASSIFY(0x0f, 0xc3), 0);			/* truncated */
	EXPECT_EQ(CLASSIFY(0xf0), 0);
}
