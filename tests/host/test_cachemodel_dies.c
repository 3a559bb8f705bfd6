/*
 * Host test of an LLC per die (the profile key llc_cpus; struct
 * cm_model's llc[], cachemodel/model_coherence.c; cachemodel/model.h,
 * invariant 4a), the front-side-bus machine of xeon5400-2008, where two
 * cores of a die share an L2 and the dies meet on the bus:
 *  - a die's LLC holds only what its CPUs brought in: a line another die
 *    read is a miss here, served by memory, not a hit at LLC latency;
 *  - a line a die holds modified comes from that die (a hand-over at
 *    remote_latency) and is then clean in both;
 *  - a write removes the line from every other die's LLC;
 *  - one die's LLC filling up does not evict another die's lines;
 *  - on long pseudo-random streams (four CPUs in two dies; loads,
 *    stores, locked and non-temporal accesses, clflushes, type changes)
 *    invariant 4a holds after every step: a line modified in one die's
 *    LLC is in no other die's LLC, and a line a CPU holds in M or E is in
 *    no other die's LLC;
 *  - llc_cpus at the CPU count or above is one LLC, and counts exactly
 *    what a profile without the key counts.
 * Caches are tiny: L1D 256 B 2-way (2 sets), LLC 1 KiB 4-way a die.
 */
// HOST_SRCS: cachemodel/model_create.c cachemodel/model_access.c cachemodel/model_level.c cachemodel/model_memtype.c cachemodel/model_time.c cachemodel/model_coherence.c cachemodel/model_prefetch.c cachemodel/model_buffers.c cachemodel/model_readout.c cachemodel/profile.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cachemodel/model_internal.h"
#include "lib/ktest.h"
#include "lib/prng.h"
#include "tests/host/cm_test_model.h"
#include "tests/host/host_shim.h"

#define NCPUS 4
#define PAGE 4096u
#define PAGES 4			/* pages the streams touch */
#define STEPS 150000
#define SEED 0xd1e5d1e5ull
#define MEM_LATENCY 100
#define REMOTE_LATENCY 50
#define LLC_LATENCY 30
#define L1_SETS 2
#define LLC_LINES 16		/* 1 KiB */

/* Two profiles alike but for llc_cpus: two dies of two CPUs, and one
 * LLC for all (the key at the CPU count, and absent). No prefetcher and
 * no fill buffers, so each access costs one latency. */
#define BASE                                                              \
	"freq_mhz 1000\ncpi_x100 100\nl1d 256 2 3\nl2 0 0 0\n"            \
	"llc 1024 4 30\nmem_latency 100\nremote_latency 50\n"              \
	"uc_load 120\nuc_store 110\nwc_buffers 2\nwc_burst 20\n"          \
	"wc_chunk 7\nlocked 15\nfence 5\nclflush 40\n"
static const char profiles_text[] =
	"[dies]\n" BASE "llc_cpus 2\n"
	"[one-by-key]\n" BASE "llc_cpus 4\n"
	"[one]\n" BASE;

/* pa of the n-th line mapping to L1D set 0 (and LLC set n % 4). */
static uint64_t set0_line(unsigned n)
{
	return (uint64_t)n * L1_SETS * CM_LINE_SIZE;
}

static uint64_t mem_cycles(const struct cm_model *m, unsigned cpu)
{
	return cm_stats(m, cpu)->mem_cycles;
}

/* The state of line (pa) in die d's LLC: ST_I if absent. */
static enum line_state die_state(struct cm_model *m, unsigned d, uint64_t pa)
{
	long i = level_find(&m->llc[d].lv, pa >> CM_LINE_SHIFT);

	return i < 0 ? ST_I : state_get(&m->llc[d].lv, (size_t)i);
}

/* cpu reads two other lines of L1D set 0: pa (a set-0 line) leaves its
 * L1D, for its die's LLC. */
static void push_out_of_l1(struct cm_model *m, unsigned cpu)
{
	cm_access(m, cpu, set0_line(40), 8, 0);
	cm_access(m, cpu, set0_line(41), 8, 0);
}

KTEST(cachemodel_dies, another_dies_line_is_a_miss_here)
{
	struct cm_model *m = cm_test_model(profiles_text, "dies", NCPUS);
	uint64_t x = set0_line(1), before;

	EXPECT_EQ(m->nllc, 2);
	cm_access(m, 0, x, 8, 0);	/* die 0: from memory */
	push_out_of_l1(m, 0);
	EXPECT_EQ(die_state(m, 0, x), ST_S);
	before = cm_stats(m, 1)->llc_hits;
	cm_access(m, 1, x, 8, 0);	/* die 0's other CPU: an LLC hit */
	EXPECT_EQ(cm_stats(m, 1)->llc_hits, before + 1);
	before = mem_cycles(m, 2);
	cm_access(m, 2, x, 8, 0);	/* die 1: memory, not die 0 */
	EXPECT_EQ(cm_stats(m, 2)->llc_misses, 1);
	EXPECT_GE(mem_cycles(m, 2) - before, MEM_LATENCY);
	EXPECT_EQ(die_state(m, 1, x), ST_S);
	EXPECT_EQ(die_state(m, 0, x), ST_S);
	cm_destroy(m);
}

KTEST(cachemodel_dies, a_modified_line_comes_from_its_die)
{
	struct cm_model *m = cm_test_model(profiles_text, "dies", NCPUS);
	uint64_t x = set0_line(2), before;

	cm_access(m, 0, x, 8, CM_STORE);
	push_out_of_l1(m, 0);		/* dirty into die 0's LLC */
	EXPECT_EQ(die_state(m, 0, x), ST_M);
	before = mem_cycles(m, 3);
	cm_access(m, 3, x, 8, 0);
	EXPECT_EQ(cm_stats(m, 3)->transfers, 1);
	EXPECT_EQ(cm_stats(m, 3)->llc_misses, 1);
	EXPECT_EQ(mem_cycles(m, 3) - before, REMOTE_LATENCY);
	EXPECT_EQ(die_state(m, 0, x), ST_S);	/* the bus took it */
	EXPECT_EQ(die_state(m, 1, x), ST_S);
	EXPECT_EQ(priv_state(&m->cpu[3], x >> CM_LINE_SHIFT), ST_S);
	cm_destroy(m);
}

KTEST(cachemodel_dies, a_private_modified_line_crosses_clean)
{
	struct cm_model *m = cm_test_model(profiles_text, "dies", NCPUS);
	uint64_t x = set0_line(3);

	cm_access(m, 1, x, 8, CM_STORE);	/* M in CPU 1's L1D */
	cm_access(m, 2, x, 8, 0);		/* die 1 takes it */
	EXPECT_EQ(cm_stats(m, 2)->transfers, 1);
	EXPECT_EQ(priv_state(&m->cpu[1], x >> CM_LINE_SHIFT), ST_S);
	EXPECT_EQ(die_state(m, 1, x), ST_S);	/* clean: memory has it */
	EXPECT_TRUE(die_state(m, 0, x) != ST_M);
	cm_destroy(m);
}

KTEST(cachemodel_dies, a_clean_exclusive_line_in_another_die_comes_from_memory)
{
	struct cm_model *m = cm_test_model(profiles_text, "dies", NCPUS);
	uint64_t x = set0_line(4), before;

	cm_access(m, 0, x, 8, 0);		/* E in CPU 0 */
	EXPECT_EQ(priv_state(&m->cpu[0], x >> CM_LINE_SHIFT), ST_E);
	before = mem_cycles(m, 2);
	cm_access(m, 2, x, 8, 0);
	EXPECT_EQ(cm_stats(m, 2)->transfers, 0);
	EXPECT_GE(mem_cycles(m, 2) - before, MEM_LATENCY);
	EXPECT_EQ(priv_state(&m->cpu[0], x >> CM_LINE_SHIFT), ST_S);
	EXPECT_EQ(priv_state(&m->cpu[2], x >> CM_LINE_SHIFT), ST_S);
	/* In its own die the same line is handed over, as before. */
	cm_access(m, 1, set0_line(5), 8, 0);
	before = cm_stats(m, 0)->transfers;
	cm_access(m, 0, set0_line(5), 8, 0);
	EXPECT_EQ(cm_stats(m, 0)->transfers, before + 1);
	cm_destroy(m);
}

KTEST(cachemodel_dies, a_write_leaves_no_copy_in_another_die)
{
	struct cm_model *m = cm_test_model(profiles_text, "dies", NCPUS);
	uint64_t x = set0_line(6);

	cm_access(m, 2, x, 8, 0);
	cm_access(m, 0, x, 8, 0);
	EXPECT_EQ(die_state(m, 1, x), ST_S);
	cm_access(m, 0, x, 8, CM_STORE);
	EXPECT_EQ(die_state(m, 1, x), ST_I);
	EXPECT_EQ(priv_state(&m->cpu[2], x >> CM_LINE_SHIFT), ST_I);
	EXPECT_EQ(priv_state(&m->cpu[0], x >> CM_LINE_SHIFT), ST_M);
	cm_destroy(m);
}

KTEST(cachemodel_dies, one_die_filling_up_leaves_the_other_alone)
{
	struct cm_model *m = cm_test_model(profiles_text, "dies", NCPUS);
	uint64_t x = set0_line(7);

	cm_access(m, 2, x, 8, 0);
	/* Die 0 reads four times its LLC's lines. */
	for (unsigned n = 0; n < 4 * LLC_LINES; n++)
		cm_access(m, 0, PAGE + (uint64_t)n * CM_LINE_SIZE, 8, 0);
	EXPECT_EQ(die_state(m, 1, x), ST_S);
	cm_destroy(m);
}

/* Invariant 4a on every line of every die's LLC. */
static bool dies_hold(struct cm_model *m)
{
	for (unsigned d = 0; d < m->nllc; d++) {
		struct level *l = &m->llc[d].lv;

		for (size_t w = 0; w < (size_t)l->sets * l->ways; w++) {
			enum line_state st = state_get(l, w);
			uint64_t line = l->line[w];

			if (st == ST_I)
				continue;
			for (unsigned e = 0; e < m->nllc; e++)
				if (e != d && st == ST_M &&
				    level_find(&m->llc[e].lv, line) >= 0)
					return false;
			for (unsigned c = 0; c < m->ncpus; c++) {
				enum line_state p = priv_state(&m->cpu[c],
							       line);

				if (die_of(m, c) != d &&
				    (p == ST_M || p == ST_E))
					return false;
			}
		}
	}
	return true;
}

/* One pseudo-random step of the stream on the models ms[0..n). */
static void step(struct cm_model **ms, unsigned n, uint64_t r)
{
	unsigned cpu = (unsigned)(r % NCPUS);
	unsigned what = (unsigned)(r >> 8) % 1000;
	uint64_t pa = (r >> 18) & 1 ? ((r >> 20) % 16) * CM_LINE_SIZE
				    : (r >> 20) % (PAGES * PAGE);
	unsigned size = 1u << ((r >> 40) % 4), flags = 0;

	pa += (r >> 44) & 7;
	for (unsigned k = 0; k < n; k++) {
		if (what < 2) {
			uint64_t pg = 1 + (r >> 24) % (PAGES - 1);

			cm_set_type(ms[k], pg * PAGE, PAGE,
				    (r >> 50) % 2 ? CM_WB :
				    (enum cm_memtype)((r >> 52) % CM_NTYPES));
		} else if (what < 8) {
			cm_clflush(ms[k], cpu, pa);
		} else {
			flags = what < 400 ? CM_STORE :
				what < 430 ? CM_STORE | CM_NT :
				what < 470 ? CM_LOCKED | (what & 1 ? CM_STORE : 0)
					   : 0;
			cm_access(ms[k], cpu, pa, size, flags);
		}
	}
}

KTEST(cachemodel_dies, invariant_holds_on_random_streams)
{
	struct cm_model *m = cm_test_model(profiles_text, "dies", NCPUS);
	uint64_t rng = prng_seed(SEED), crossed = 0;
	long bad = -1;

	for (long s = 0; s < STEPS && bad < 0; s++) {
		step(&m, 1, prng_next(&rng));
		if (!dies_hold(m))
			bad = s;
	}
	for (unsigned c = 0; c < NCPUS; c++)
		crossed += cm_stats(m, c)->transfers;
	EXPECT_EQ(bad, -1);
	EXPECT_GT(crossed, 0);
	cm_destroy(m);
}

KTEST(cachemodel_dies, one_die_counts_as_one_llc)
{
	struct cm_model *ms[2] = {
		cm_test_model(profiles_text, "one-by-key", NCPUS),
		cm_test_model(profiles_text, "one", NCPUS),
	};
	uint64_t rng = prng_seed(SEED ^ 0x1111);
	long bad = -1;

	EXPECT_EQ(ms[0]->nllc, 1);
	for (long s = 0; s < STEPS && bad < 0; s++) {
		step(ms, 2, prng_next(&rng));
		for (unsigned c = 0; c < NCPUS; c++)
			if (memcmp(cm_stats(ms[0], c), cm_stats(ms[1], c),
				   sizeof(struct cm_stats)))
				bad = s;
	}
	EXPECT_EQ(bad, -1);
	cm_destroy(ms[0]);
	cm_destroy(ms[1]);
}

KTEST(cachemodel_dies, an_inclusive_llc_per_die_is_refused)
{
	struct cm_profile p;
	char err[128];

	EXPECT_TRUE(cm_profile_parse(profiles_text, "dies", &p, err,
				     sizeof(err)));
	EXPECT_TRUE(cm_profile_check(&p) == NULL);
	p.llc_inclusive = 1;
	EXPECT_TRUE(cm_profile_check(&p) != NULL);
	EXPECT_TRUE(cm_create(&p, NCPUS) == NULL);
}
