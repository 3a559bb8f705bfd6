/*
 * In-kernel test of bench_run_cpus(): every online CPU takes part, every
 * round is recorded, and the aggregate adds up the CPUs' work.
 */
#include "kernel/bench/bench_smp.h"
#include "lib/ktest.h"
#include "lib/string.h"

static uint64_t done[MAX_CPUS];

static void count_iters(void *arg, uint64_t iters)
{
	uint64_t *c = arg;

	for (uint64_t i = 0; i < iters; i++)
		__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static void *slot_of(unsigned cpu, void *ctx)
{
	return &((uint64_t *)ctx)[cpu];
}

KTEST(bench_smp, all_cpus_all_rounds)
{
	static struct bench_result percpu[MAX_CPUS];
	static unsigned ids[MAX_CPUS];
	struct bench_result agg;
	struct bench_overlap ov;
	struct bench_params p;
	struct cpumask all;
	unsigned n, me = smp_this_cpu();
	uint64_t total = 0;

	bench_params_default(&p);
	p.reps = 3;
	p.min_time_ns = 100000;
	memset(done, 0, sizeof(done));
	cpumask_online(&all, false);
	n = bench_run_cpus(&all, &p, count_iters, slot_of, done, percpu, ids,
			   MAX_CPUS, &agg, &ov);
	ASSERT_EQ(n, smp_cpus_online());
	EXPECT_EQ(ov.reps, p.reps);
	EXPECT_LE(ov.min_permille, ov.max_permille);
	EXPECT_LE(ov.max_permille, BENCH_OVERLAP_FULL);
	EXPECT_LE(ov.alone_reps, p.reps);
	if (n == 1)
		EXPECT_EQ(ov.min_permille, BENCH_OVERLAP_FULL);
	for (unsigned i = 0; i < n; i++) {
		uint64_t rounds = (uint64_t)(p.warmup + p.reps) *
				  percpu[i].samples.iters;

		EXPECT_EQ(percpu[i].samples.reps, p.reps);
		EXPECT_GT(percpu[i].samples.iters, 0);
		/* The calling CPU also ran the calibration. */
		if (ids[i] == me)
			EXPECT_GE(done[ids[i]], rounds);
		else
			EXPECT_EQ(done[ids[i]], rounds);
		total += percpu[i].samples.iters;
	}
	EXPECT_EQ(agg.samples.iters, total);
	EXPECT_EQ(agg.cpus, n);
	EXPECT_EQ(agg.samples.reps, p.reps);
}
