/*
 * Host tests for the ia64 TLB purge model (arch/ia64/): hand-worked
 * scenarios (purge of the active space, of an inactive space, by a
 * kernel thread, across a region-ID wrap-around), the coherence
 * invariant under random request streams for both purge policies, the
 * counts of ptc.e and ptc.ga per policy, and checks that the invariant
 * checker does catch a purge under the wrong region ID and a ptc.e loop
 * that misses sets.
 */
// HOST_SRCS: arch/ia64/machine.c arch/ia64/tc.c arch/ia64/context.c arch/ia64/space.c arch/ia64/tlb.c
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "arch/ia64/context.h"
#include "arch/ia64/machine.h"
#include "arch/ia64/space.h"
#include "arch/ia64/tc.h"
#include "arch/ia64/tlb.h"
#include "lib/ktest.h"
#include "lib/prng.h"
#include "tests/host/host_shim.h"

#define NCPUS 4
#define RANDOM_STEPS 20000
#define RANDOM_SPACES 12
#define RANDOM_PAGES 24
#define SMALL_CTX_LIMIT (IA64_FIRST_CONTEXT + IA64_MAX_MMS + 8)
#define PTCE_PER_LOOP (IA64_TC_SETS)

struct fix {
	struct ia64_machine m;
	uint64_t *bitmap, *flushmap;
};

static struct fix *fix_new(enum ia64_purge_policy policy, unsigned rid_bits,
			   uint32_t ctx_limit)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct ia64_config cfg = {
		.ncpus = NCPUS, .rid_bits = rid_bits, .ctx_limit = ctx_limit,
		.policy = policy, .check_every_purge = true,
	};

	f->bitmap = calloc(IA64_CTX_WORDS(rid_bits), sizeof(uint64_t));
	f->flushmap = calloc(IA64_CTX_WORDS(rid_bits), sizeof(uint64_t));
	if (!ia64_machine_init(&f->m, &cfg, f->bitmap, f->flushmap))
		abort();
	return f;
}

static void fix_free(struct fix *f)
{
	free(f->bitmap);
	free(f->flushmap);
	free(f);
}

static uint64_t sum(const struct ia64_machine *m, size_t off)
{
	uint64_t t = 0;

	for (unsigned c = 0; c < m->cfg.ncpus; c++)
		t += *(const uint64_t *)((const char *)&m->cpus[c].cnt + off);
	return t;
}
#define SUM(m, field) sum(m, offsetof(struct ia64_cpu_counters, field))

/* Space 0 runs on CPUs 1 and 2, which both touch page va. */
static void two_cpus_touch(struct ia64_machine *m, uint64_t va)
{
	ia64_space_create(m, 0);
	ia64_space_map(m, 0, va);
	ia64_switch_to(m, 1, 0);
	ia64_switch_to(m, 2, 0);
	ia64_touch(m, 1, va);
	ia64_touch(m, 2, va);
}

KTEST(ia64_tlb, rejects_bad_config)
{
	struct ia64_machine *m = calloc(1, sizeof(*m));
	uint64_t map[IA64_CTX_WORDS(IA64_RID_BITS_MIN)];
	struct ia64_config cfg = { .ncpus = NCPUS, .rid_bits = 17 };

	EXPECT_FALSE(ia64_machine_init(m, &cfg, map, map));
	EXPECT_TRUE(strstr(m->fault, "18..24") != NULL);
	cfg.rid_bits = 25;
	EXPECT_FALSE(ia64_machine_init(m, &cfg, map, map));
	cfg.rid_bits = 18;
	cfg.ncpus = IA64_MAX_CPUS + 1;
	EXPECT_FALSE(ia64_machine_init(m, &cfg, map, map));
	cfg.ncpus = NCPUS;
	cfg.ctx_limit = 3;
	EXPECT_FALSE(ia64_machine_init(m, &cfg, map, map));
	free(m);
}

KTEST(ia64_tlb, purge_active_space_is_ptc_ga)
{
	for (int pol = IA64_PURGE_OLD; pol <= IA64_PURGE_NEW; pol++) {
		struct fix *f = fix_new(pol, 24, 0);
		struct ia64_machine *m = &f->m;
		uint64_t va = ia64_user_va(1, 3);

		two_cpus_touch(m, va);
		EXPECT_TRUE(ia64_tc_lookup(m, 1, va));
		EXPECT_TRUE(ia64_tc_lookup(m, 2, va));
		/* CPU 1 itself unmaps: the space is active there, but CPU 2
		 * has it too, so the purge is global: one ptc.ga. */
		EXPECT_TRUE(ia64_unmap_page(m, 1, 0, va));
		EXPECT_FALSE(ia64_tc_lookup(m, 1, va));
		EXPECT_FALSE(ia64_tc_lookup(m, 2, va));
		EXPECT_EQ(m->cnt.global_purges, 0);
		EXPECT_EQ(SUM(m, ptc_ga), 1);
		EXPECT_EQ(SUM(m, ptc_e), 0);
		EXPECT_EQ(m->cnt.rid_switches, 0);
		EXPECT_STREQ(m->fault, "");
		fix_free(f);
	}
}

KTEST(ia64_tlb, purge_of_space_only_here_is_ptc_l)
{
	struct fix *f = fix_new(IA64_PURGE_OLD, 24, 0);
	struct ia64_machine *m = &f->m;
	uint64_t va = ia64_user_va(0, 7);

	ia64_space_create(m, 0);
	ia64_space_map(m, 0, va);
	ia64_switch_to(m, 3, 0);
	EXPECT_TRUE(ia64_touch(m, 3, va));
	EXPECT_TRUE(ia64_unmap_page(m, 3, 0, va));
	EXPECT_EQ(SUM(m, ptc_l), 1);
	EXPECT_EQ(SUM(m, ptc_ga), 0);
	EXPECT_EQ(m->cnt.local_range_flushes, 1);
	EXPECT_FALSE(ia64_tc_lookup(m, 3, va));
	EXPECT_FALSE(ia64_touch(m, 3, va)); /* now a page fault */
	EXPECT_STREQ(m->fault, "");
	fix_free(f);
}

KTEST(ia64_tlb, purge_inactive_space)
{
	for (int pol = IA64_PURGE_OLD; pol <= IA64_PURGE_NEW; pol++) {
		struct fix *f = fix_new(pol, 24, 0);
		struct ia64_machine *m = &f->m;
		uint64_t va = ia64_user_va(2, 9), other = ia64_user_va(2, 10);
		uint32_t rid_b;

		two_cpus_touch(m, va);
		ia64_space_map(m, 0, other);
		ia64_touch(m, 1, other);
		/* CPU 0 runs space 1 and reclaims a page of space 0. */
		ia64_space_create(m, 1);
		ia64_switch_to(m, 0, 1);
		rid_b = m->cpus[0].rr_rid[2];
		EXPECT_TRUE(ia64_unmap_page(m, 0, 0, va));
		EXPECT_FALSE(ia64_tc_lookup(m, 1, va));
		EXPECT_FALSE(ia64_tc_lookup(m, 2, va));
		EXPECT_EQ(m->cnt.inactive_purges, 1);
		if (pol == IA64_PURGE_OLD) {
			EXPECT_EQ(m->cnt.global_purges, 1);
			EXPECT_EQ(SUM(m, ptc_e_loops_purge), NCPUS);
			EXPECT_EQ(SUM(m, ptc_e), NCPUS * PTCE_PER_LOOP);
			EXPECT_EQ(SUM(m, ptc_ga), 0);
			/* Collateral: the other page went too. */
			EXPECT_FALSE(ia64_tc_lookup(m, 1, other));
		} else {
			EXPECT_EQ(m->cnt.global_purges, 0);
			EXPECT_EQ(SUM(m, ptc_e), 0);
			EXPECT_EQ(SUM(m, ptc_ga), 1);
			EXPECT_EQ(m->cnt.rid_switches, 1);
			/* Only the purged page went. */
			EXPECT_TRUE(ia64_tc_lookup(m, 1, other));
			/* CPU 0 borrowed space 0's IDs and is on space 1's
			 * again; it is now in space 0's CPU mask. */
			EXPECT_EQ(m->cpus[0].rr_rid[2], rid_b);
			EXPECT_EQ(m->mms[0].cpu_vm_mask, 0x7);
		}
		EXPECT_STREQ(m->fault, "");
		fix_free(f);
	}
}

KTEST(ia64_tlb, purge_by_kernel_thread)
{
	for (int pol = IA64_PURGE_OLD; pol <= IA64_PURGE_NEW; pol++) {
		struct fix *f = fix_new(pol, 24, 0);
		struct ia64_machine *m = &f->m;
		uint64_t va = ia64_user_va(1, 1), vb = ia64_user_va(1, 2);

		two_cpus_touch(m, va);
		ia64_space_map(m, 0, vb);
		ia64_touch(m, 2, vb);
		/* A kernel thread (kswapd) on CPU 1: space 0 stays active
		 * there lazily. It reclaims a page of that same space. */
		ia64_switch_to(m, 1, IA64_KTHREAD);
		EXPECT_FALSE(ia64_touch(m, 1, va));
		EXPECT_TRUE(ia64_unmap_page(m, 1, 0, va));
		if (pol == IA64_PURGE_OLD) {
			EXPECT_EQ(m->cnt.global_purges, 1);
		} else {
			EXPECT_EQ(m->cnt.global_purges, 0);
			EXPECT_EQ(m->cnt.rid_switches, 0);
			EXPECT_EQ(SUM(m, ptc_ga), 1);
		}
		/* CPU 3 never ran a user space: a kernel thread there has
		 * no region IDs to borrow, so both flush everything. */
		ia64_switch_to(m, 3, IA64_KTHREAD);
		EXPECT_TRUE(ia64_unmap_page(m, 3, 0, vb));
		EXPECT_EQ(m->cnt.global_purges,
			  pol == IA64_PURGE_OLD ? 2 : 1);
		EXPECT_FALSE(ia64_tc_lookup(m, 2, vb));
		EXPECT_STREQ(m->fault, "");
		fix_free(f);
	}
}

KTEST(ia64_tlb, wrong_region_id_purge_is_caught)
{
	struct fix *f = fix_new(IA64_PURGE_NEW, 24, 0);
	struct ia64_machine *m = &f->m;
	uint64_t va = ia64_user_va(3, 4);

	two_cpus_touch(m, va);
	ia64_space_create(m, 1);
	ia64_switch_to(m, 0, 1);
	/* What the old code could not do: ptc.ga from CPU 0 without
	 * loading space 0's IDs purges space 1's (absent) translation. */
	ia64_space_clear(m, 0, va);
	ia64_ptc_ga(m, 0, va, IA64_PAGE_SHIFT);
	EXPECT_FALSE(ia64_check(m));
	EXPECT_TRUE(strstr(m->fault, "stale translation") != NULL);
	fix_free(f);
}

KTEST(ia64_tlb, short_ptce_loop_is_caught)
{
	struct ia64_machine *m = calloc(1, sizeof(*m));
	uint64_t *bm = calloc(IA64_CTX_WORDS(18), 8), *fm = calloc(IA64_CTX_WORDS(18), 8);
	struct ia64_config cfg = {
		.ncpus = 2, .rid_bits = 18, .policy = IA64_PURGE_OLD,
		/* One set short of the TC: a wrong PAL_PTCE_INFO. */
		.ptce = { 0, { 1, IA64_TC_SETS - 1 }, { 0, 1ull << IA64_PTCE_SET_SHIFT } },
	};

	ASSERT_TRUE(ia64_machine_init(m, &cfg, bm, fm));
	ia64_space_create(m, 0);
	ia64_space_create(m, 1);
	for (unsigned p = 0; p < IA64_TC_SETS; p++) {
		ia64_space_map(m, 0, ia64_user_va(0, p));
		ia64_switch_to(m, 1, 0);
		ia64_touch(m, 1, ia64_user_va(0, p));
	}
	ia64_switch_to(m, 0, 1);
	for (unsigned p = 0; p < IA64_TC_SETS; p++)
		ia64_unmap_page(m, 0, 0, ia64_user_va(0, p));
	EXPECT_FALSE(ia64_check(m));
	EXPECT_TRUE(strstr(m->fault, "stale translation") != NULL);
	/* The default geometry covers every set. */
	cfg.ptce.count[0] = cfg.ptce.count[1] = 0;
	ASSERT_TRUE(ia64_machine_init(m, &cfg, bm, fm));
	for (unsigned p = 0; p < IA64_TC_SETS; p++) {
		ia64_space_create(m, (int)p);
		ia64_space_map(m, (int)p, ia64_user_va(0, p));
		ia64_switch_to(m, 1, (int)p);
		ia64_touch(m, 1, ia64_user_va(0, p));
	}
	ia64_flush_tlb_all(m);
	for (unsigned p = 0; p < IA64_TC_SETS; p++)
		EXPECT_FALSE(ia64_tc_holds(m, 1, ia64_rid(m->mms[p].context, 0),
					   ia64_user_va(0, p)));
	free(bm);
	free(fm);
	free(m);
}

KTEST(ia64_tlb, wrap_around_delays_flush)
{
	for (int pol = IA64_PURGE_OLD; pol <= IA64_PURGE_NEW; pol++) {
		struct fix *f = fix_new(pol, 18, SMALL_CTX_LIMIT);
		struct ia64_machine *m = &f->m;
		uint64_t va = ia64_user_va(0, 5);
		uint32_t ctx_a;
		int slot = 2;

		/* Space 0 on CPU 1 caches va under its context, exits while
		 * CPU 1 runs a kernel thread. */
		two_cpus_touch(m, va);
		ctx_a = m->mms[0].context;
		ia64_switch_to(m, 1, IA64_KTHREAD);
		ia64_switch_to(m, 2, IA64_KTHREAD);
		ia64_space_exit(m, 0);
		EXPECT_EQ(m->cpus[1].active, IA64_NO_MM);
		EXPECT_TRUE(ia64_tc_holds(m, 1, ia64_rid(ctx_a, 0), va));
		/* Spaces come and go on CPU 0 until the contexts run out;
		 * ctx_a is not handed out again before the wrap-around. */
		for (;;) {
			ia64_space_create(m, slot);
			ia64_switch_to(m, 0, slot);
			if (m->cnt.wraps)
				break;
			EXPECT_NE(m->mms[slot].context, ctx_a);
			ia64_switch_to(m, 0, IA64_KTHREAD);
			ia64_space_exit(m, slot);
			ASSERT_TRUE(ia64_check(m));
		}
		EXPECT_EQ(m->cnt.wraps, 1);
		/* The wrap freed the retired contexts; the lowest is ctx_a. */
		ASSERT_EQ(m->mms[slot].context, ctx_a);
		EXPECT_TRUE(m->cpus[1].need_tlb_flush);
		EXPECT_FALSE(m->cpus[0].need_tlb_flush);
		EXPECT_EQ(m->cpus[0].cnt.ptc_e_loops_wrap, 1);
		/* CPU 1 still holds the old space's translation under the
		 * reused ID: harmless, it flushes before loading any ID. */
		EXPECT_TRUE(ia64_tc_holds(m, 1, ia64_rid(ctx_a, 0), va));
		EXPECT_TRUE(ia64_check(m));
		/* CPU 1 loads it: the delayed flush empties its TC first. */
		ia64_switch_to(m, 1, slot);
		EXPECT_FALSE(m->cpus[1].need_tlb_flush);
		EXPECT_EQ(m->cpus[1].cnt.ptc_e_loops_wrap, 1);
		EXPECT_FALSE(ia64_tc_lookup(m, 1, va));
		EXPECT_FALSE(ia64_touch(m, 1, va));
		EXPECT_TRUE(ia64_check(m));
		EXPECT_STREQ(m->fault, "");
		fix_free(f);
	}
}

/* One random stream, fed to both policies; per-step invariant check. */
static void random_stream(struct ktest_ctx *ctx, uint64_t seed,
			  uint32_t ctx_limit)
{
	struct fix *f[2] = { fix_new(IA64_PURGE_OLD, 18, ctx_limit),
			     fix_new(IA64_PURGE_NEW, 18, ctx_limit) };
	uint64_t s = prng_seed(seed), no_active_purges = 0;

	for (int step = 0; step < RANDOM_STEPS; step++) {
		uint64_t r = prng_next(&s);
		unsigned cpu = (unsigned)(r % NCPUS);
		int slot = (int)((r >> 8) % RANDOM_SPACES);
		uint64_t va = ia64_user_va((unsigned)((r >> 16) % IA64_USER_REGIONS),
					   (unsigned)((r >> 24) % RANDOM_PAGES));
		unsigned op = (unsigned)((r >> 40) % 100);

		for (int p = 0; p < 2; p++) {
			struct ia64_machine *m = &f[p]->m;
			struct ia64_cpu *c = &m->cpus[cpu];

			if (!m->mms[slot].live) {
				if (op < 30)
					ia64_space_create(m, slot);
				continue;
			}
			if (op < 10) {
				ia64_switch_to(m, cpu, slot);
			} else if (op < 14) {
				ia64_switch_to(m, cpu, IA64_KTHREAD);
			} else if (op < 16) {
				for (unsigned i = 0; i < NCPUS; i++)
					if (m->cpus[i].active == slot &&
					    !m->cpus[i].kthread)
						ia64_switch_to(m, i, IA64_KTHREAD);
				ia64_space_exit(m, slot);
			} else if (op < 55) {
				if (!c->kthread && c->active != IA64_NO_MM) {
					ia64_space_map(m, c->active, va);
					ia64_touch(m, cpu, va);
				}
			} else if (ia64_space_mapped(m, slot, va)) {
				if (p == 0 && c->active == IA64_NO_MM)
					no_active_purges++;
				ia64_unmap_page(m, cpu, slot, va);
			}
			if (!ia64_check(m)) {
				ktest_fail(ctx, __FILE__, __LINE__,
					   "policy %d step %d: %s", p, step,
					   m->fault);
				goto out;
			}
		}
	}
	EXPECT_EQ(f[0]->m.cnt.range_flushes, f[1]->m.cnt.range_flushes);
	/* new adds the purging CPU to the space's CPU mask (as Linux's
	 * activate_context() does), so fewer later flushes stay local. */
	EXPECT_GE(f[1]->m.cnt.purge_calls, f[0]->m.cnt.purge_calls);
	EXPECT_GT(f[0]->m.cnt.global_purges, f[1]->m.cnt.global_purges);
	/* new flushes everything only when the caller has no space. */
	EXPECT_EQ(f[1]->m.cnt.global_purges, no_active_purges);
	EXPECT_EQ(SUM(&f[1]->m, ptc_e_loops_purge), no_active_purges * NCPUS);
	EXPECT_EQ(SUM(&f[0]->m, ptc_e_loops_purge),
		  f[0]->m.cnt.global_purges * NCPUS);
	EXPECT_GT(SUM(&f[1]->m, ptc_ga), SUM(&f[0]->m, ptc_ga));
	ktest_diag("seed %#llx: global purges old %llu new %llu, ptc.ga old %llu new %llu, wraps %llu",
		   (unsigned long long)seed,
		   (unsigned long long)f[0]->m.cnt.global_purges,
		   (unsigned long long)f[1]->m.cnt.global_purges,
		   (unsigned long long)SUM(&f[0]->m, ptc_ga),
		   (unsigned long long)SUM(&f[1]->m, ptc_ga),
		   (unsigned long long)f[1]->m.cnt.wraps);
out:
	fix_free(f[0]);
	fix_free(f[1]);
}

KTEST(ia64_tlb, random_streams_stay_coherent)
{
	random_stream(ctx, 0x9e3779b97f4a7c15ull, 0);
	random_stream(ctx, 0x1234567ull, SMALL_CTX_LIMIT);
	random_stream(ctx, 0xdeadbeefull, SMALL_CTX_LIMIT);
}
