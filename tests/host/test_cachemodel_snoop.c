/*
 * Host test of the inclusive LLC's sharer bits (struct cm_model's
 * llc_sharers, cachemodel/model_coherence.c): snoops, back-invalidations
 * and prefetches look only at the CPUs an LLC line's bits name, and a
 * model that does so must count exactly what a model that looks at every
 * CPU counts. Long pseudo-random streams of loads, stores, locked and
 * non-temporal accesses, fences, clflushes and type changes, from four
 * CPUs sharing a few pages, run on two models of one inclusive profile:
 * one as made, one with its sharer bits taken away (every CPU looked at).
 * After every step their counters must be equal, and the invariant the
 * bits rest on (cachemodel/model.h, invariant 4) must hold on the first:
 * every line valid in a CPU's L1D or L2 is valid in the LLC with that
 * CPU's bit set. Caches are tiny, so LLC victims that other CPUs hold,
 * hand-overs and upgrades happen all the time. Two machines: with a
 * private L2 and prefetchers, and with L1D alone.
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

#define PAGE 4096u
#define PAGES 6			/* pages the streams touch */
#define STEPS 150000
#define SEED 0x51ee9f11e7ull
#define NCPUS 4

/* L1D 512 B 2-way, L2 2 KiB 4-way, LLC 4 KiB 4-way: 64 LLC lines for
 * 384 lines of pages, so the LLC evicts lines CPUs hold. */
static const char profiles_text[] =
	"[incl-l2]\n"
	"freq_mhz 1000\ncpi_x100 100\n"
	"l1d 512 2 3\nl2 2048 4 10\nllc 4096 4 30\n"
	"mem_latency 100\nremote_latency 50\nuc_load 120\nuc_store 110\n"
	"wc_buffers 2\nwc_burst 20\nwc_chunk 7\nlocked 15\nfence 5\n"
	"clflush 40\nllc_inclusive 1\nbus_cpus 2\nfill_buffers 3\n"
	"store_buffer 4\nprefetch_next 1\nprefetch_ahead 3\nl2_queue 2\n"
	"[incl-l1]\n"
	"freq_mhz 1000\ncpi_x100 100\n"
	"l1d 512 2 3\nl2 0 0 0\nllc 4096 4 30\n"
	"mem_latency 100\nremote_latency 50\nuc_load 120\nuc_store 110\n"
	"wc_buffers 2\nwc_burst 20\nwc_chunk 7\nlocked 15\nfence 5\n"
	"clflush 40\nllc_inclusive 1\nprefetch_next 1\nprefetch_ahead 3\n";

static struct cm_model *make(const char *name)
{
	struct cm_model *m = cm_test_model(profiles_text, name, NCPUS);

	if (!m->llc_sharers)
		abort();	/* the profiles above are inclusive */
	return m;
}

/* Every valid line of level l of CPU cpu is in the LLC with cpu's bit. */
static bool level_covered(const struct cm_model *m, const struct level *l,
			  unsigned cpu)
{
	for (size_t w = 0; w < (size_t)l->sets * l->ways; w++) {
		long i;

		if (state_get(l, w) == ST_I)
			continue;
		i = level_find(&m->llc[0].lv, l->line[w]);
		if (i < 0 || !(m->llc_sharers[i] >> cpu & 1))
			return false;
	}
	return true;
}

static bool inclusion_holds(const struct cm_model *m)
{
	for (unsigned c = 0; c < m->ncpus; c++)
		if (!level_covered(m, &m->cpu[c].l1, c) ||
		    (level_present(&m->cpu[c].l2) &&
		     !level_covered(m, &m->cpu[c].l2, c)))
			return false;
	return true;
}

static bool same_counters(const struct cm_model *a, const struct cm_model *b)
{
	for (unsigned c = 0; c < NCPUS; c++)
		if (memcmp(cm_stats(a, c), cm_stats(b, c),
			   sizeof(struct cm_stats)))
			return false;
	return true;
}

/*
 * One stream on the two models. Returns the first step at which the
 * counters differed or the invariant broke, or -1; *skipped gets how many
 * LLC lines' sharer bits named fewer than all CPUs at the steps sampled
 * (the filter had something to skip).
 */
static long run(const char *profile, uint64_t seed, uint64_t *skipped)
{
	struct cm_model *bits = make(profile), *all = make(profile);
	uint64_t rng = prng_seed(seed);
	long bad = -1;

	free(all->llc_sharers);
	all->llc_sharers = NULL;	/* looks at every CPU */
	*skipped = 0;
	for (long step = 0; step < STEPS && bad < 0; step++) {
		uint64_t r = prng_next(&rng);
		unsigned cpu = (unsigned)(r % NCPUS);
		unsigned what = (unsigned)(r >> 8) % 1000;
		/* Half the accesses on 16 lines all CPUs share, the rest
		 * anywhere in the pages. */
		uint64_t pa = (r >> 18) & 1 ? ((r >> 20) % 16) * CM_LINE_SIZE
					    : (r >> 20) % (PAGES * PAGE);
		unsigned size = 1u << ((r >> 40) % 4);	/* 1..8 */
		unsigned flags = 0;

		pa += (r >> 44) & 7;
		if (what < 2) {
			/* Any page but the first (the shared lines stay WB), to
			 * WB half the time, else to any type. */
			uint64_t pg = 1 + (r >> 24) % (PAGES - 1);
			enum cm_memtype t = (r >> 50) % 2 ? CM_WB :
				(enum cm_memtype)((r >> 52) % CM_NTYPES);

			cm_set_type(bits, pg * PAGE, PAGE, t);
			cm_set_type(all, pg * PAGE, PAGE, t);
		} else if (what < 6) {
			cm_fence(bits, cpu, CM_MFENCE);
			cm_fence(all, cpu, CM_MFENCE);
		} else if (what < 12) {
			cm_clflush(bits, cpu, pa);
			cm_clflush(all, cpu, pa);
		} else {
			if (what < 400)
				flags |= CM_STORE;
			if (what >= 400 && what < 430)
				flags |= CM_STORE | CM_NT;
			if (what >= 430 && what < 470)
				flags |= CM_LOCKED | (what & 1 ? CM_STORE : 0);
			cm_access(bits, cpu, pa, size, flags);
			cm_access(all, cpu, pa, size, flags);
		}
		if (!same_counters(bits, all) || !inclusion_holds(bits))
			bad = step;
		if (step % 1000 == 0)
			for (size_t w = 0; w < (size_t)bits->llc[0].lv.sets *
						   bits->llc[0].lv.ways;
			     w++)
				if (state_get(&bits->llc[0].lv, w) != ST_I &&
				    bits->llc_sharers[w] != (1u << NCPUS) - 1)
					(*skipped)++;
	}
	cm_destroy(bits);
	cm_destroy(all);
	return bad;
}

KTEST(cachemodel_snoop, sharer_bits_count_as_every_cpu_with_l2)
{
	uint64_t skipped;

	EXPECT_EQ(run("incl-l2", SEED, &skipped), -1);
	EXPECT_GT(skipped, 0);
}

KTEST(cachemodel_snoop, sharer_bits_count_as_every_cpu_without_l2)
{
	uint64_t skipped;

	EXPECT_EQ(run("incl-l1", SEED ^ 0xa5a5, &skipped), -1);
	EXPECT_GT(skipped, 0);
}

KTEST(cachemodel_snoop, non_inclusive_llc_has_no_bits)
{
	struct cm_model *m;
	static const char text[] =
		"[ni]\nfreq_mhz 1000\ncpi_x100 100\nl1d 512 2 3\n"
		"l2 0 0 0\nllc 4096 4 30\nmem_latency 100\n"
		"remote_latency 50\nuc_load 120\nuc_store 110\n"
		"wc_buffers 2\nwc_burst 20\nwc_chunk 7\nlocked 15\n"
		"fence 5\nclflush 40\n";

	m = cm_test_model(text, "ni", NCPUS);
	EXPECT_TRUE(m->llc_sharers == NULL);
	EXPECT_EQ(priv_holders_at(m, -1), (1u << NCPUS) - 1);
	cm_destroy(m);
}
