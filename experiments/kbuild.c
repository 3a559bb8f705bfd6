/*
 * The kbuild experiment (seeds 000, 001 and 003 time `make -j N` of a
 * kernel): builds of the synthetic tree of workloads/kbuild.h, timed.
 *
 * Variants "j=1" and "j=N" (N: every CPU in full mode, at most
 * KB_QUICK_MAX_JOBS in quick mode), with "j=N/cpuC" per CPU; at -j N
 * also the seed-000 tracing variants (experiments/trace_variants.h) and
 * seed 001's "copy_std" and "copy_movnti" (the objects written with rep
 * movsb or with non-temporal movnti stores: kb_copy_variants()). Metrics:
 *   real_ms  first worker start .. last worker end (the seeds' real)
 *   busy_ms  time the workers spent compiling, summed over CPUs (the
 *            seeds' user+sys: there is no user mode here), and per CPU.
 *
 * Every build's objects must hash to the reference compile's value, and
 * in quick mode that value must be the recorded constant of kbuild.h.
 *
 * Under the cache-model QEMU plugin each build is a model region over
 * every CPU (bench_region_begin_all()) labelled
 * "kbuild|VARIANT|real_ms+busy_ms|0", counted in source files: the
 * modelled cycles per file are the workers' summed work.
 */
#include "arch/x86_64/model_doorbell.h"
#include "arch/x86_64/tsc.h"
#include "cachemodel/doorbell.h"
#include "kernel/bench/env_report.h"
#include "kernel/experiment.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/bench.h"
#include "lib/kprintf.h"
#include "lib/stats.h"
#include "workloads/copy_routines.h"
#include "workloads/corpus.h"
#include "workloads/kbuild.h"
#include "experiments/trace_variants.h"

#define KB_MS_SCALE 1000ull	/* ms with 3 decimals */

static struct kbuild_run kb_run;

/* 8 variants x (2 figures, a CPU's each), 2 work figures per traced one. */
#define KB_MAX_FIGS 128

static char kb_variant_names[KB_MAX_FIGS][BENCH_FIELD_MAX];

static uint64_t ticks_to_ms_scaled(uint64_t ticks)
{
	return stats_muldiv(ticks, KB_MS_SCALE * 1000, tsc_hz());
}

static void kb_fig(struct bench_figure *f, const char *variant,
		   const char *metric, uint64_t *ms, unsigned reps,
		   unsigned cpus)
{
	struct stats st;

	stats_compute(&st, ms, reps, ms);
	bench_figure_init(f, "kbuild", variant, metric, "ms",
			  BENCH_SCALE_DIGITS, &st);
	f->cpus = cpus;
}

/*
 * Measure "make -j jobs" reps times under the variant name (NULL: "j=N");
 * appends figures and, when real_ticks is not NULL, leaves each build's
 * first-start-to-last-end ticks there. 0 or 1.
 */
static int kb_variant(unsigned jobs, uint64_t expect,
		      struct bench_figure *figs, size_t *nfig,
		      const char *name, uint64_t *real_ticks)
{
	static uint64_t cpu_ms[MAX_CPUS][BENCH_MAX_REPS];
	uint64_t real[BENCH_MAX_REPS], busy[BENCH_MAX_REPS];
	unsigned reps = kb_run.size->reps, cpus[MAX_CPUS], n = 0;
	char *vname = kb_variant_names[*nfig];
	char label[DB_LABEL_MAX];

	kassert(reps <= BENCH_MAX_REPS);
	if (*nfig + 2 > KB_MAX_FIGS) {
		kprintf("kbuild: no room for more than %u figures\n",
			KB_MAX_FIGS);
		return 1;
	}
	if (name)
		ksnprintf(vname, BENCH_FIELD_MAX, "%s", name);
	else
		ksnprintf(vname, BENCH_FIELD_MAX, "j=%u", jobs);
	ksnprintf(label, sizeof(label), "kbuild|%s|real_ms+busy_ms|0", vname);
	for (unsigned r = 0; r < reps; r++) {
		uint64_t h = 0, first = UINT64_MAX, last = 0, sum = 0;
		uint64_t allocs = 0, region;
		bool built;

		model_doorbell_label(label);
		region = bench_region_begin_all();
		built = kbuild_build(&kb_run, jobs, &h);
		bench_region_end(region, kb_run.size->corpus.files);
		model_doorbell_label("kbuild");
		if (!built || h != expect) {
			kprintf("kbuild: %s rep %u: objects hash %#lx, "
				"reference %#lx\n", vname, r, (unsigned long)h,
				(unsigned long)expect);
			return 1;
		}
		n = 0;
		for (unsigned c = 0; c < MAX_CPUS; c++) {
			struct kbuild_cpu *k = &kb_run.cpu[c];

			if (!cpumask_test(&kb_run.mask, c))
				continue;
			first = MIN(first, k->t_start);
			last = MAX(last, k->t_end);
			sum += k->busy;
			allocs += k->cs.allocs;
			cpu_ms[n][r] = ticks_to_ms_scaled(k->busy);
			cpus[n++] = c;
		}
		real[r] = ticks_to_ms_scaled(last - first);
		if (real_ticks)
			real_ticks[r] = last - first;
		busy[r] = ticks_to_ms_scaled(sum);
		kprintf("kbuild: %s rep %u: real %lu cycles, busy %lu cycles "
			"over %u CPUs, %lu kmalloc calls\n", vname, r,
			(unsigned long)(last - first), (unsigned long)sum,
			jobs, (unsigned long)allocs);
	}
	kb_fig(&figs[(*nfig)++], vname, "real_ms", real, reps, jobs);
	kb_fig(&figs[(*nfig)++], vname, "busy_ms", busy, reps, jobs);
	for (unsigned i = 0; jobs > 1 && i < n && *nfig < KB_MAX_FIGS; i++) {
		char *cname = kb_variant_names[*nfig];

		ksnprintf(cname, BENCH_FIELD_MAX, "%s/cpu%u", vname, cpus[i]);
		kb_fig(&figs[(*nfig)++], cname, "busy_ms", cpu_ms[i], reps, 1);
	}
	return 0;
}

/*
 * Seed 001's variants: the build at -j jobs with the objects written by
 * an ordinary copy (copy_std: rep movsb, the CPU's string copy) and by a
 * non-temporal one (copy_movnti), as the seed's kernel build ran with the
 * original and the cache-aware __copy_from_user_ll(), each as many times
 * as a traced variant (trace_variants_reps()). Returns 0 or 1.
 */
static const struct {
	const char *name;
	ramfs_copy_fn fn;
} kb_copies[] = {
	{"copy_std", copy_rep_movsb},
	{"copy_movnti", copy_movnti},
};

static int kb_copy_variants(enum experiment_mode mode, unsigned jobs,
			    uint64_t expect, struct bench_figure *figs,
			    size_t *nfig)
{
	const struct kbuild_size *size = kb_run.size;
	struct kbuild_size copies = *size;
	int rc = 0;

	copies.reps = trace_variants_reps(mode, size->reps);
	kb_run.size = &copies;
	for (size_t i = 0; i < ARRAY_SIZE(kb_copies) && !rc; i++) {
		kb_run.write_copy = kb_copies[i].fn;
		rc |= kb_variant(jobs, expect, figs, nfig, kb_copies[i].name,
				 NULL);
	}
	kb_run.write_copy = NULL;
	kb_run.size = size;
	return rc;
}

/* The seed-000 variants: trace_off, trace_wb, trace_wc, trace_uc. */
#define KB_TRACE_VARIANTS 4

/* What a traced build needs besides its name: run() of
 * struct traced_workload. */
struct kb_traced {
	unsigned jobs;
	uint64_t expect;
	struct bench_figure *figs;
	size_t *nfig;
};

static int kb_traced_build(void *arg, const char *variant, uint64_t *ticks)
{
	struct kb_traced *t = arg;

	return kb_variant(t->jobs, t->expect, t->figs, t->nfig, variant,
			  ticks);
}

/*
 * The build at -j jobs under each seed-000 tracing variant, after the
 * direct map was split for the buffers. Returns 0 or 1.
 */
static int kb_trace_variants(enum experiment_mode mode, unsigned jobs,
			     uint64_t expect, struct bench_figure *figs,
			     size_t *nfig)
{
	const struct kbuild_size *size = kb_run.size;
	struct kbuild_size traced = *size;
	struct kb_traced t = {jobs, expect, figs, nfig};
	/* Under -icount: instructions per file, slowdown over trace_off
	 * (the real_ms window: every worker's work). */
	struct traced_workload w = {
		.exp = "kbuild", .op = "file", .unit = "insns/file",
		.ops = traced.corpus.files, .run = kb_traced_build, .arg = &t,
		.figs = figs, .nfig = nfig, .room = KB_MAX_FIGS,
	};
	int rc;

	kb_run.size = &traced;
	rc = trace_variants_run_all(&w, mode, &traced.reps,
				    KB_TRACE_VARIANTS, false);
	kb_run.size = size;
	return rc;
}

/* Workers in quick mode (tests and make run); full mode uses every CPU. */
#define KB_QUICK_MAX_JOBS 2

/* Shell settings: run kbuild files=N reps=N. Sources and objects
 * share the ramfs inodes (KBUILD_MAX_FILES). */
#define KB_MIN_FILES 2
static const struct experiment_param kb_params[] = {
	{"files", KB_MIN_FILES, KBUILD_MAX_FILES / 2 - 1,
	 "source files (quick 48, full 400)"},
	{"copy", 0, 1,
	 "1: also the copy-routine variants copy_std, copy_movnti (default), "
	 "0: not"},
	TRACED_WORKLOAD_PARAMS("repetitions (quick 3, full 5)"),
};

static int kbuild_run(enum experiment_mode mode)
{
	struct kbuild_size custom = mode == EXPERIMENT_FULL ? kbuild_full :
							      kbuild_quick;
	const struct kbuild_size *size = &custom;
	static struct bench_figure figs[KB_MAX_FIGS];
	unsigned cpus = smp_cpus_online();
	uint64_t expect = 0, bytes = 0, t0, t1;
	size_t nfig = 0;
	int rc = 0;
	uint64_t v;

	if (experiment_param("files", &v))
		custom.corpus.files = (unsigned)v;
	if (experiment_param("reps", &v))
		custom.reps = (unsigned)v;
	bench_env_report();
	for (unsigned i = 0; i < size->corpus.files; i++)
		bytes += corpus_file_size(&size->corpus, i);
	kprintf("kbuild: %u source files, %lu KiB, vocabulary %u, "
		"%u repetitions, %u CPUs online; tsc %lu kHz\n",
		size->corpus.files, (unsigned long)(bytes >> 10),
		size->corpus.vocabulary, size->reps, cpus,
		(unsigned long)(tsc_hz() / 1000));
	t0 = rdtsc_ordered();
	if (!kbuild_reference(&size->corpus, &expect)) {
		kprintf("kbuild: the reference compile failed\n");
		return 1;
	}
	t1 = rdtsc_ordered();
	kprintf("kbuild: reference compile (one CPU, no ramfs): objects "
		"hash %#lx, %lu ms\n", (unsigned long)expect,
		(unsigned long)(ticks_to_ms_scaled(t1 - t0) / KB_MS_SCALE));
	/* The recorded hash holds for the quick tree; reps= and trace= do
	 * not change it. */
	if (mode == EXPERIMENT_QUICK &&
	    custom.corpus.files == kbuild_quick.corpus.files &&
	    expect != KBUILD_QUICK_EXPECT_HASH) {
		kprintf("kbuild: quick objects hash %#lx, expected %#llx\n",
			(unsigned long)expect, KBUILD_QUICK_EXPECT_HASH);
		rc = 1;
	}
	if (!kbuild_setup(&kb_run, size)) {
		kprintf("kbuild: cannot write the source tree to ramfs\n");
		kbuild_teardown(&kb_run);
		return 1;
	}
	rc |= kb_variant(1, expect, figs, &nfig, NULL, NULL);
	if (mode == EXPERIMENT_QUICK && cpus > KB_QUICK_MAX_JOBS) {
		/* Every worker hammers kmalloc's class locks; with more
		 * vCPUs than host cores each lock hand-off can wait for a
		 * host time slice, and the quick run would take minutes. */
		kprintf("kbuild: quick mode caps -j at %u (runmode=full uses "
			"all %u CPUs)\n", KB_QUICK_MAX_JOBS, cpus);
		cpus = KB_QUICK_MAX_JOBS;
	}
	if (cpus > 1 && !rc)
		rc |= kb_variant(cpus, expect, figs, &nfig, NULL, NULL);
	if (!rc && trace_variants_wanted())
		rc |= kb_trace_variants(mode, cpus, expect, figs, &nfig);
	/* Last, so that the builds before them meet the allocator as they
	 * did before these variants existed. */
	if (!rc && !(experiment_param("copy", &v) && v == 0))
		rc |= kb_copy_variants(mode, cpus, expect, figs, &nfig);
	kbuild_teardown(&kb_run);
	if (rc) {
		kprintf("kbuild: FAILED\n");
		return rc;
	}
	bench_report("kbuild-like (make -j N of a synthetic tree into ramfs)",
		     figs, nfig);
	return 0;
}

EXPERIMENT_PARAMS(kbuild, "kbuild",
	   "make -j N of a synthetic source tree: tokenise, symbol tables "
	   "from kmalloc, objects into ramfs; real and busy time",
	   "000,001,003", 40, kbuild_run, kb_params);
