/*
 * Host test of the cache model's fast path, cm_access_fast(): on a copy
 * loop and on long pseudo-random access streams (several CPUs sharing a few pages of every
 * memory type; loads, stores, locked, non-temporal and device accesses of
 * sizes 1..16 at any offset, so some cross a line, a quarter of them
 * going on where their CPU's last access ended, as sweeps do; fences
 * and type changes between them) a model driven the way the QEMU plugin
 * drives it, fast path first and cm_access() when it declines, must count exactly what a
 * model driven by cm_access() alone counts, after every single step.
 * Caches are tiny so evictions, LRU order and coherence hand-overs happen
 * all the time: a fast path that forgot an LRU touch, counted a hit the
 * slow path would not, or took a store to a line that is not M diverges
 * within a few hundred steps. After every step cm_busy_cycles(), the
 * two-counter read of the plugin's pacing tick, must equal cm_cycles() of
 * the whole copy.
 */
// HOST_SRCS: cachemodel/model_create.c cachemodel/model_access.c cachemodel/model_level.c cachemodel/model_memtype.c cachemodel/model_time.c cachemodel/model_coherence.c cachemodel/model_prefetch.c cachemodel/model_buffers.c cachemodel/model_readout.c cachemodel/profile.c
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cachemodel/model.h"
#include "lib/ktest.h"
#include "tests/host/cm_test_model.h"
#include "tests/host/host_shim.h"

#define PAGE 4096u
#define STREAM_PAGES 8		/* pages the streams touch */
#define STREAM_STEPS 200000
#define STREAM_SEED 0x9e3779b97f4a7c15ull
#define NCPUS 3
/* The fast path must take at least this share of the accesses, or the
 * test compares too little (percent). */
#define MIN_FAST_PERCENT 30

/*
 * Tiny machines: L1D 1 KiB 2-way, L2 4 KiB 4-way, LLC 16 KiB 4-way; the
 * second has no private L2 (L1D is then where the MESI state lives); the
 * third has every timing mechanism of the model on, so the fast path's
 * WC flushes and UC accesses meet fill buffers, a shared bus timeline and
 * the waits of fences and locked operations.
 */
static const char profiles_text[] =
	"[tiny]\n"
	"freq_mhz 1000\ncpi_x100 100\n"
	"l1d 1024 2 3\nl2 4096 4 10\nllc 16384 4 30\n"
	"mem_latency 100\nremote_latency 50\nuc_load 120\nuc_store 110\n"
	"wc_buffers 2\nwc_burst 20\nwc_chunk 7\nlocked 15\nfence 5\n"
	"clflush 40\n"
	"[tiny-no-l2]\n"
	"freq_mhz 1000\ncpi_x100 100\n"
	"l1d 1024 2 3\nl2 0 0 0\nllc 16384 4 30\n"
	"mem_latency 100\nremote_latency 50\nuc_load 120\nuc_store 110\n"
	"wc_buffers 2\nwc_burst 20\nwc_chunk 7\nlocked 15\nfence 5\n"
	"clflush 40\n"
	/* Every timing mechanism on: buses shared by two CPUs, fill and
	 * store buffers, both prefetchers and the L2's queue, the L1D fill
	 * port, an inclusive LLC. */
	"[tiny-timed]\n"
	"freq_mhz 1000\ncpi_x100 100\n"
	"l1d 1024 2 3\nl2 4096 4 10\nllc 16384 4 30\n"
	"mem_latency 100\nremote_latency 50\nuc_load 120\nuc_store 110\n"
	"wc_buffers 2\nwc_burst 20\nwc_chunk 7\nlocked 15\nfence 5\n"
	"clflush 40\nsfence 4\nllc_inclusive 1\nbus_cpus 2\n"
	"fill_buffers 3\nstore_buffer 4\nprefetch_next 1\n"
	"prefetch_ahead 3\nl2_queue 2\nl1_fill 2\n"
	/* An LLC per die of two CPUs (cachemodel/model.h, invariant 4a),
	 * no private L2, as xeon5400-2008: with three CPUs, two dies. */
	"[tiny-dies]\n"
	"freq_mhz 1000\ncpi_x100 100\n"
	"l1d 1024 2 3\nl2 0 0 0\nllc 8192 4 30\n"
	"mem_latency 100\nremote_latency 50\nuc_load 120\nuc_store 110\n"
	"wc_buffers 2\nwc_burst 20\nwc_chunk 7\nlocked 15\nfence 5\n"
	"clflush 40\nllc_cpus 2\nbus_cpus 2\nfill_buffers 3\n"
	"store_buffer 4\nprefetch_next 1\nprefetch_ahead 3\n";

#define TIMED "tiny-timed"
/* Its causality window (model.h, invariant 8), cycles. */
#define CAUSAL_WINDOW 500

/* The page types a stream starts with: mostly WB, one of each other. */
static const enum cm_memtype start_types[STREAM_PAGES] = {
	CM_WB, CM_WB, CM_WB, CM_WB, CM_WT, CM_WC, CM_UC, CM_WP,
};

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	/* xorshift64 */
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static struct cm_model *make(const char *name)
{
	struct cm_model *m = cm_test_model(profiles_text, name, NCPUS);

	for (unsigned pg = 0; pg < STREAM_PAGES; pg++)
		if (!cm_set_type(m, pg * PAGE, PAGE, start_types[pg]))
			abort();
	/* The timed machine also keeps causality between its CPUs, whose
	 * clocks drift apart by their stalls: the fast path's stores note
	 * the write times the slow path's transfers wait for. */
	if (!strcmp(name, TIMED))
		cm_set_causality(m, CAUSAL_WINDOW);
	return m;
}

/* True if every CPU's counters agree between the two models, and the
 * pacing tick's cm_busy_cycles() is cm_cycles() of those counters. */
static bool same_counters(const struct cm_model *a, const struct cm_model *b)
{
	for (unsigned c = 0; c < NCPUS; c++)
		if (memcmp(cm_stats(a, c), cm_stats(b, c),
			   sizeof(struct cm_stats)) ||
		    cm_busy_cycles(b, c) != cm_cycles(b, cm_stats(b, c)))
			return false;
	return true;
}

/* One access on both models, the fast-path one driven as the plugin
 * drives it; counts the fast path's takes in *fast. */
static void access_both(struct cm_model *ref, struct cm_model *fp,
			unsigned cpu, uint64_t pa, unsigned size,
			unsigned flags, uint64_t *fast)
{
	cm_access(ref, cpu, pa, size, flags);
	if (cm_access_fast(fp, cpu, pa, size, flags))
		(*fast)++;
	else
		cm_access(fp, cpu, pa, size, flags);
}

/*
 * Run one stream on a reference model (cm_access only) and a fast-path
 * model. Returns the step at which the counters first differed, or -1;
 * *fast gets how many accesses the fast path took.
 */
static long run_stream(const char *profile, uint64_t seed, uint64_t *fast)
{
	struct cm_model *ref = make(profile), *fp = make(profile);
	uint64_t next[NCPUS] = {0};	/* where each CPU's last access ended */
	long diverged = -1;

	rnd_state = seed;
	*fast = 0;
	for (long step = 0; step < STREAM_STEPS && diverged < 0; step++) {
		uint64_t r = rnd();
		unsigned cpu = (unsigned)(r % NCPUS);
		unsigned what = (unsigned)(r >> 8) % 1000;
		/* 70 % of the accesses fall on 8 lines of page 0 that only
		 * this CPU uses, 10 % on 4 lines of page 1 that all use, the
		 * rest anywhere in the pages. */
		unsigned where = (unsigned)(r >> 16) % 10;
		uint64_t pa = where < 7 ?
			(cpu * 8 + (r >> 24) % 8) * CM_LINE_SIZE :
			where < 8 ? PAGE + ((r >> 24) % 4) * CM_LINE_SIZE :
			(r >> 24) % (STREAM_PAGES * PAGE);
		unsigned size = 1u << ((r >> 40) % 5);	/* 1..16 */

		pa += (r >> 32) & 63;	/* any offset: some cross a line */
		/* A quarter go on where the CPU's last access ended: sweeps,
		 * whose loads do not wait for their data (model.h, inv. 5). */
		if ((r >> 60) % 4 == 0 && next[cpu] + 16 <= STREAM_PAGES * PAGE)
			pa = next[cpu];
		next[cpu] = pa + size;
		unsigned flags = 0;

		if (what < 2) {
			/* A type change of one page but the first (the CPUs'
			 * private lines stay WB), to any type. */
			uint64_t pg = 1 + (r >> 24) % (STREAM_PAGES - 1);
			enum cm_memtype t = (enum cm_memtype)((r >> 44) %
							      CM_NTYPES);

			cm_set_type(ref, pg * PAGE, PAGE, t);
			cm_set_type(fp, pg * PAGE, PAGE, t);
		} else if (what < 10) {
			cm_fence(ref, cpu, CM_SFENCE);
			cm_fence(fp, cpu, CM_SFENCE);
		} else {
			if (what < 300)
				flags |= CM_STORE;
			if (what >= 500 && what < 540)
				flags |= CM_STORE | CM_NT;
			if (what >= 540 && what < 580)
				flags |= CM_LOCKED | (what & 1 ? CM_STORE : 0);
			if (what >= 580 && what < 590)
				flags |= CM_IO;
			access_both(ref, fp, cpu, pa, size, flags, fast);
		}
		if (!same_counters(ref, fp))
			diverged = step;
	}
	cm_destroy(ref);
	cm_destroy(fp);
	return diverged;
}

/*
 * A copy loop, where non-temporal stores merge in the fast path: CPU 0
 * copies pages 0..1 to pages 2..3 in 8-byte loads and non-temporal (or,
 * for a stretch, WC) stores, while the other CPUs now and then read or
 * write the line being written (which puts it back into caches, so the
 * next non-temporal store must evict it again) or any other line, and
 * CPU 0 now and then fences. Returns the first step at which the
 * counters differed, or -1; *fast as for run_stream().
 */
static long run_copy_stream(const char *profile, uint64_t seed,
			    uint64_t *fast)
{
	struct cm_model *ref = make(profile), *fp = make(profile);
	const uint64_t src = 0, dst = 2 * PAGE, len = 2 * PAGE;
	long diverged = -1, step = 0;

	rnd_state = seed;
	*fast = 0;
	/* Page 3 is WC for the second pass, WB again for the third. */
	for (unsigned pass = 0; pass < 3 && diverged < 0; pass++) {
		enum cm_memtype t = pass == 1 ? CM_WC : CM_WB;

		cm_set_type(ref, 3 * PAGE, PAGE, t);
		cm_set_type(fp, 3 * PAGE, PAGE, t);
		for (uint64_t off = 0; off < len && diverged < 0;
		     off += 8, step++) {
			uint64_t r = rnd();
			unsigned what = (unsigned)(r % 100);
			unsigned other = 1 + (unsigned)((r >> 8) % (NCPUS - 1));
			uint64_t any = (r >> 16) % (2 * len);

			access_both(ref, fp, 0, src + off, 8, 0, fast);
			access_both(ref, fp, 0, dst + off, 8,
				    CM_STORE | CM_NT, fast);
			if (what < 3)	/* the line being written */
				access_both(ref, fp, other, dst + off, 8,
					    what & 1 ? CM_STORE : 0, fast);
			else if (what < 5)
				access_both(ref, fp, other, src + any, 8,
					    what & 1 ? CM_STORE : 0, fast);
			else if (what < 7) {
				cm_fence(ref, 0, CM_SFENCE);
				cm_fence(fp, 0, CM_SFENCE);
			}
			if (!same_counters(ref, fp))
				diverged = step;
		}
	}
	cm_destroy(ref);
	cm_destroy(fp);
	return diverged;
}

KTEST(cachemodel_fast, equals_slow_path_in_a_copy_loop)
{
	uint64_t fast;

	EXPECT_EQ(run_copy_stream("tiny", STREAM_SEED ^ 0xc0b1, &fast), -1);
	/* Most loads hit and most non-temporal stores merge. */
	EXPECT_GT(fast * 100, (uint64_t)3 * 2 * (2 * PAGE / 8) * 70);
	EXPECT_EQ(run_copy_stream("tiny-no-l2", STREAM_SEED ^ 0xc0b2, &fast),
		  -1);
}

KTEST(cachemodel_fast, equals_slow_path_with_l2)
{
	uint64_t fast;

	EXPECT_EQ(run_stream("tiny", STREAM_SEED, &fast), -1);
	EXPECT_GT(fast * 100, (uint64_t)STREAM_STEPS * MIN_FAST_PERCENT);
}

KTEST(cachemodel_fast, equals_slow_path_without_l2)
{
	uint64_t fast;

	EXPECT_EQ(run_stream("tiny-no-l2", STREAM_SEED ^ 0x5555, &fast), -1);
	EXPECT_GT(fast * 100, (uint64_t)STREAM_STEPS * MIN_FAST_PERCENT);
}

KTEST(cachemodel_fast, equals_slow_path_with_every_timing_mechanism)
{
	uint64_t fast;

	EXPECT_EQ(run_stream(TIMED, STREAM_SEED ^ 0x7171, &fast), -1);
	EXPECT_GT(fast * 100, (uint64_t)STREAM_STEPS * MIN_FAST_PERCENT);
	EXPECT_EQ(run_copy_stream(TIMED, STREAM_SEED ^ 0xc0b3, &fast),
		  -1);
}

KTEST(cachemodel_fast, equals_slow_path_with_an_llc_per_die)
{
	uint64_t fast;

	EXPECT_EQ(run_stream("tiny-dies", STREAM_SEED ^ 0xd1e5, &fast), -1);
	EXPECT_GT(fast * 100, (uint64_t)STREAM_STEPS * MIN_FAST_PERCENT);
	EXPECT_EQ(run_copy_stream("tiny-dies", STREAM_SEED ^ 0xc0b4, &fast),
		  -1);
}

KTEST(cachemodel_fast, declines_what_needs_the_shared_state)
{
	struct cm_model *m = make("tiny");
	const struct cm_stats *s = cm_stats(m, 0);

	/* A miss, then a load hit (E): only the hit is fast. */
	EXPECT_FALSE(cm_access_fast(m, 0, 0, 8, 0));
	cm_access(m, 0, 0, 8, 0);
	EXPECT_TRUE(cm_access_fast(m, 0, 0, 8, 0));
	/* A store to an E line needs E -> M in L1D and L2: slow. */
	EXPECT_FALSE(cm_access_fast(m, 0, 0, 8, CM_STORE));
	cm_access(m, 0, 0, 8, CM_STORE);
	EXPECT_TRUE(cm_access_fast(m, 0, 0, 8, CM_STORE));
	/* Crossing into the next line, locked, a first non-temporal store
	 * (it must evict the line everywhere). */
	EXPECT_FALSE(cm_access_fast(m, 0, 60, 8, 0));
	EXPECT_FALSE(cm_access_fast(m, 0, 0, 8, CM_LOCKED));
	EXPECT_FALSE(cm_access_fast(m, 0, 0, 8, CM_STORE | CM_NT));
	/* Another CPU reads the line: CPU 0's copy is S, stores go slow. */
	cm_access(m, 1, 0, 8, 0);
	EXPECT_TRUE(cm_access_fast(m, 0, 0, 8, 0));
	EXPECT_FALSE(cm_access_fast(m, 0, 0, 8, CM_STORE));
	/* WT and WP pages never take the fast path. */
	cm_access(m, 0, 4 * PAGE, 8, 0);	/* WT: cached reads */
	EXPECT_FALSE(cm_access_fast(m, 0, 4 * PAGE, 8, 0));
	EXPECT_FALSE(cm_access_fast(m, 0, 7 * PAGE, 8, CM_STORE));	/* WP */
	EXPECT_EQ(s->l1_hits, 4);
	cm_destroy(m);
}

KTEST(cachemodel_fast, takes_what_needs_only_the_cpus_own_state)
{
	struct cm_model *m = make("tiny");
	const struct cm_stats *s = cm_stats(m, 0);

	/* WC (page 5): stores into the buffers, an uncached load. */
	EXPECT_TRUE(cm_access_fast(m, 0, 5 * PAGE, 32, CM_STORE));
	EXPECT_TRUE(cm_access_fast(m, 0, 5 * PAGE + 32, 32, CM_STORE));
	EXPECT_EQ(s->wc_bursts, 1);
	EXPECT_TRUE(cm_access_fast(m, 0, 5 * PAGE + 64, 8, CM_STORE));
	EXPECT_TRUE(cm_access_fast(m, 0, 5 * PAGE + 64, 8, 0));
	EXPECT_EQ(s->wc_partial_by[CM_WC_UNCACHED], 1);
	/* UC (page 6) and a device: uncached. */
	EXPECT_TRUE(cm_access_fast(m, 0, 6 * PAGE, 8, 0));
	EXPECT_TRUE(cm_access_fast(m, 0, 6 * PAGE, 8, CM_STORE));
	EXPECT_TRUE(cm_access_fast(m, 0, 0, 4, CM_IO));
	EXPECT_EQ(s->uncached, 4);
	/* Non-temporal stores to WB (page 2): the first evicts the line
	 * (slow); the next merge (fast) until a fill anywhere, here another
	 * CPU reading some other line. */
	cm_access(m, 1, 2 * PAGE, 8, 0);
	EXPECT_FALSE(cm_access_fast(m, 0, 2 * PAGE, 8, CM_STORE | CM_NT));
	cm_access(m, 0, 2 * PAGE, 8, CM_STORE | CM_NT);
	EXPECT_TRUE(cm_access_fast(m, 0, 2 * PAGE + 8, 8, CM_STORE | CM_NT));
	cm_access(m, 1, 3 * PAGE, 8, 0);
	EXPECT_FALSE(cm_access_fast(m, 0, 2 * PAGE + 16, 8,
				    CM_STORE | CM_NT));
	EXPECT_EQ(s->nt_stores, 2);
	cm_destroy(m);
}
