/*
 * False sharing (seed 004, LTTng 0.108: "cache-line-aligned commit
 * counters"): every CPU increments its own counter, either packed next
 * to the others in one cache line or alone on its own line. On hardware
 * the packed variant makes the line bounce between the CPUs' caches on
 * every increment. QEMU's TCG models no guest caches, but its vCPU
 * threads write the same host memory, so the host's caches bounce
 * instead: the output says whose effect it is.
 *
 * Also the showcase of bench_run_cpus(): all CPUs run each repetition
 * together behind a barrier; per-CPU and aggregate figures.
 */
#include "arch/x86_64/model_doorbell.h"
#include "kernel/bench/bench_env.h"
#include "kernel/bench/env_report.h"
#include "kernel/bench/bench_smp.h"
#include "kernel/experiment.h"
#include "kernel/options.h"
#include "lib/assert.h"
#include "lib/bench_output.h"
#include "lib/kprintf.h"
#include "lib/string.h"
#include "mm/kmalloc.h"

#define FS_QUICK_REPS 5
#define FS_FULL_REPS 7
#define FS_QUICK_MIN_NS 2000000ull
#define FS_FULL_MIN_NS 20000000ull
#define NS_PER_OP_SCALE BENCH_SCALE_DIGITS
/* Below this many CPUs quick mode uses them all without probing. */
#define FS_PROBE_MIN_CPUS 3
/* ... and uses them all while the host runs a third of them at once. */
#define FS_OVERSUBSCRIBED 3
/* Attempts at a variant whose CPUs never ran a repetition together. */
#define FS_ATTEMPTS 3
/* The pacing quantum asked of a cache model, in modelled cycles: well
 * under a line's hand-over (80 to 200 cycles on the profiles), so the
 * CPUs' increments interleave as on hardware rather than in turns of a
 * quantum's worth of them (at the default quantum a packed increment
 * moved the line 0.2 to 0.3 times, and differently in each boot; at 100
 * cycles and below once: docs/cachemodel.md, "Sharing and the quantum:
 * falseshare"). */
#define FS_MODEL_QUANTUM 20
/* Increments per CPU and repetition under a cache model, where the count
 * is fixed rather than grown until a repetition lasts FS_*_MIN_NS on the
 * guest's clock: that clock is the host's, so the count followed the
 * host's speed and load (16384 to 131072 in four boots of one image),
 * and with it the time a boot takes (every increment paced at
 * FS_MODEL_QUANTUM) and the share of a repetition's start in its
 * figure: the CPUs leave the start barrier 30 to 1500 instructions apart
 * (the order inside a quantum), which at 8192 moved a packed
 * repetition's modelled cycles per increment by up to 2.6 % between
 * boots, at 32768 by 0.46 % and at 65536 by 0.15 %; 32768 costs half
 * the modelled CPU time of 65536 (docs/cachemodel.md, "A fixed count of
 * increments"). */
#define FS_MODEL_ITERS_QUICK 32768
#define FS_MODEL_ITERS_FULL 262144

struct fs_ctx {
	volatile uint64_t *counter[MAX_CPUS];
};

static void fs_increment(void *arg, uint64_t iters)
{
	volatile uint64_t *c = arg;

	for (uint64_t i = 0; i < iters; i++)
		(*c)++;
}

static void *fs_arg_of(unsigned cpu, void *ctx)
{
	return (void *)((struct fs_ctx *)ctx)->counter[cpu];
}

/*
 * Measure one variant on the CPUs of use. Its aggregate figure needs the
 * CPUs to have run together: when in no repetition of FS_ATTEMPTS tries
 * did they (a host that ran them in turn), it has none, a SKIPPED line
 * says why (the host lacks CPUs that run at once), and *apart is set.
 * Returns 0, or 1 on failure.
 */
static int fs_variant(const char *name, bool aligned,
		      enum experiment_mode mode, const struct cpumask *use,
		      struct bench_figure *figs, size_t *nfig, bool *apart)
{
	static struct bench_result percpu[MAX_CPUS];
	static unsigned ids[MAX_CPUS];
	static struct fs_ctx ctx;
	struct bench_result agg;
	struct bench_params p;
	struct bench_overlap ov;
	uint64_t *packed = NULL, v;
	unsigned n = 0, rank = 0, ncpu = smp_cpus_online();
	int rc = 0;

	bench_params_default(&p);
	p.reps = mode == EXPERIMENT_FULL ? FS_FULL_REPS : FS_QUICK_REPS;
	if (experiment_param("reps", &v))
		p.reps = (unsigned)v;
	p.min_time_ns = mode == EXPERIMENT_FULL ? FS_FULL_MIN_NS :
						  FS_QUICK_MIN_NS;
	if (kopt.cachemodel[0]) {
		/* The first run at min_iters lasts at least 0 ns: the
		 * count is fixed, and not reported as capped. */
		p.min_time_ns = 0;
		p.min_iters = p.max_iters = mode == EXPERIMENT_FULL ?
						    FS_MODEL_ITERS_FULL :
						    FS_MODEL_ITERS_QUICK;
	}
	memset(&ctx, 0, sizeof(ctx));
	if (!aligned) {
		/* All counters side by side: 8 per 64-byte line. */
		packed = kmalloc_cache_aligned(ncpu * sizeof(uint64_t));
		if (!packed)
			return 1;
		memset(packed, 0, ncpu * sizeof(uint64_t));
	}
	/* Counters are indexed by CPU number, which may have gaps (an AP
	 * that did not answer keeps its number); packed slots go by rank. */
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (!smp_cpu_online(cpu))
			continue;
		kassert(rank < ncpu);
		ctx.counter[cpu] = aligned ? kzalloc_aligned(CACHE_LINE_SIZE,
							     CACHE_LINE_SIZE) :
					     &packed[rank];
		rank++;
		if (!ctx.counter[cpu])
			rc = 1;
	}
	/* A host busy elsewhere may run the CPUs in turn through a whole
	 * attempt: try again, a few times, before saying so (the lines
	 * below describe the last attempt). */
	for (unsigned attempt = 1; !rc; attempt++) {
		for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
			if (ctx.counter[cpu])
				*ctx.counter[cpu] = 0;
		n = bench_run_cpus(use, &p, fs_increment, fs_arg_of, &ctx,
				   percpu, ids, MAX_CPUS, &agg, &ov);
		if (n <= 1 || ov.alone_reps < ov.reps ||
		    attempt == FS_ATTEMPTS)
			break;
	}
	if (rc || n == 0)
		rc = 1;
	if (!rc && n > 1) {
		kprintf("falseshare: %s: the %u CPUs' windows overlapped "
			"%u.%u%%..%u.%u%% of each repetition's span\n", name, n,
			ov.min_permille / 10, ov.min_permille % 10,
			ov.max_permille / 10, ov.max_permille % 10);
		if (ov.alone_reps)
			kprintf("falseshare: %s: WARNING: in %u of %u "
				"repetitions a CPU finished before another "
				"started (it ran alone): the aggregate is not "
				"a measurement of sharing\n", name,
				ov.alone_reps, ov.reps);
	}

	/* Self-check: every CPU did at least its rounds, exactly. */
	for (unsigned i = 0; i < n && !rc; i++) {
		uint64_t want = (uint64_t)(p.warmup + p.reps) *
				percpu[i].samples.iters;
		uint64_t got = *ctx.counter[ids[i]];

		if (got < want || (ids[i] != smp_this_cpu() && got != want)) {
			kprintf("falseshare: cpu %u counted %lu, expected %lu\n",
				ids[i], (unsigned long)got,
				(unsigned long)want);
			rc = 1;
		}
	}
	for (unsigned i = 0; i < n && !rc; i++) {
		/* One name per figure: figures outlive this call. */
		static char variants[2 * (MAX_CPUS + 1)][32];
		char *v = variants[*nfig];

		ksnprintf(v, sizeof(variants[0]), "%s/cpu%u", name, ids[i]);
		bench_figure_init(&figs[*nfig], "falseshare", v,
				  "increment", "ns/op", NS_PER_OP_SCALE,
				  &percpu[i].ns_per_iter);
		figs[*nfig].capped = percpu[i].capped;
		figs[(*nfig)++].cpus = 1;
	}
	if (!rc && n > 1 && ov.alone_reps == ov.reps) {
		bench_missing("falseshare", name, "increment",
			      BENCH_SKIPPED, "needs %u CPUs running at once; "
			      "in none of %u repetitions, %u attempts, did "
			      "this host run them together", n, ov.reps,
			      FS_ATTEMPTS);
		*apart = true;
	} else if (!rc) {
		bench_figure_init(&figs[*nfig], "falseshare", name,
				  "increment", "ns/op", NS_PER_OP_SCALE,
				  &agg.ns_per_iter);
		figs[*nfig].capped = agg.capped;
		figs[(*nfig)++].cpus = n;
	}
	for (unsigned cpu = 0; cpu < MAX_CPUS && aligned; cpu++)
		if (ctx.counter[cpu])
			kfree((void *)ctx.counter[cpu]);
	kfree(packed);
	return rc;
}

/* Shell settings: run falseshare reps=N. */
static const struct experiment_param fs_params[] = {
	{"reps", 1, BENCH_MAX_REPS, "repetitions (quick 5, full 7)"},
};

/*
 * Quick mode's CPUs: all online ones, unless the host runs fewer than a
 * third of them at once (measured, kernel/bench/bench_smp.h): then as many as
 * it runs, at least 2, the lowest-numbered. Sixteen vCPUs on a 2-core
 * host never ran a repetition together; three or four on it overlap.
 * Under a cache model all of them: pacing runs them together in modelled
 * time however the host runs them, and a count the host's load chose
 * would make two boots of one image measure different things.
 */
static void fs_cpus(enum experiment_mode mode, struct cpumask *use)
{
	unsigned ncpu = smp_cpus_online(), tenths, want, got = 0;
	struct cpumask all;

	cpumask_online(&all, false);
	*use = all;
	if (mode != EXPERIMENT_QUICK || ncpu < FS_PROBE_MIN_CPUS ||
	    kopt.cachemodel[0])
		return;
	tenths = bench_parallel_tenths(&all);
	if (FS_OVERSUBSCRIBED * tenths >= ncpu * 10)
		return;
	want = MAX(2u, (tenths + 9) / 10);
	cpumask_clear(use);
	for (unsigned cpu = 0; cpu < MAX_CPUS && got < want; cpu++)
		if (cpumask_test(&all, cpu)) {
			cpumask_set(use, cpu);
			got++;
		}
	kprintf("falseshare: the host runs these %u CPUs like %u.%u at once "
		"(measured over %u ms): quick mode uses %u of them "
		"(runmode=full uses all)\n", ncpu, tenths / 10, tenths % 10,
		BENCH_PARALLEL_WINDOW_MS, got);
}

static int falseshare_run(enum experiment_mode mode)
{
	static struct bench_figure figs[2 * (MAX_CPUS + 1)];
	struct cpumask use;
	size_t nfig = 0;
	bool apart = false;
	int rc;

	bench_env_report();
	if (smp_cpus_online() < 2)
		kprintf("falseshare: only one CPU online: nothing can share "
			"a line; the figures are a single-CPU baseline\n");
	fs_cpus(mode, &use);
	if (kopt.cachemodel[0])
		model_doorbell_quantum(FS_MODEL_QUANTUM);
	rc = fs_variant("packed", false, mode, &use, figs, &nfig, &apart) ||
	     fs_variant("aligned", true, mode, &use, figs, &nfig, &apart);
	if (kopt.cachemodel[0])
		model_doorbell_quantum(0);	/* the run's own again */
	if (rc)
		return 1;
	bench_report("false sharing: per-CPU counters packed in one line vs "
		     "one line each (aggregate = wall time / all increments)",
		     figs, nfig);
	if (bench_env_is_tcg())
		kprintf("falseshare: NOTE: QEMU TCG models no guest caches. "
			"Its vCPUs are host threads writing the same host "
			"memory, so a packed/aligned difference here comes "
			"from the host's own caches, scaled by emulation: "
			"real, but not a figure for any guest CPU.\n");
	if (apart)
		kprintf("falseshare: a variant's CPUs never ran together: "
			"no packed/aligned comparison on this host\n");
	return 0;
}

EXPERIMENT_PARAMS(falseshare, "falseshare",
	   "per-CPU counters in one cache line vs one line each, all CPUs "
	   "at once",
	   "004", 50, falseshare_run, fs_params);
