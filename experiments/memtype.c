/*
 * The memtype experiment (the groundwork for seed 000, which maps LTTng's
 * trace buffers write-back, write-combined or uncached and measures the
 * difference).
 *
 * One buffer of RAM is retyped through its direct-map alias to each of
 * WB, WT, WC, UC-, UC and WP in turn (set_memory_type(), with the flushes
 * the SDM asks for) and measured three ways:
 *   read     sequential 64-bit loads over the whole buffer   (MB/s)
 *   write    sequential 64-bit stores over the whole buffer  (MB/s)
 *   latency  a dependent-load chase through a random cyclic
 *            permutation of cache lines                      (TSC cycles)
 * The verdict compares UC and WB latency (kernel/bench/memtype_check.h, which
 * also owns the chase): on hardware that honours memory types an uncached
 * load costs a trip to DRAM every time. QEMU's TCG models no caches and
 * KVM on Intel normally ignores the guest's PAT for RAM, so there the
 * experiment says so instead of presenting equal numbers as a finding.
 */
#include "arch/x86_64/layout.h"
#include "kernel/bench/bench_env.h"
#include "kernel/bench/env_report.h"
#include "kernel/experiment.h"
#include "kernel/bench/memtype_check.h"
#include "kernel/options.h"
#include "arch/x86_64/cpufeature.h"
#include "lib/assert.h"
#include "lib/compiler.h"
#include "lib/kprintf.h"
#include "lib/stats.h"
#include "lib/string.h"
#include "mm/page_alloc.h"
#include "mm/vm.h"

#define QUICK_ORDER 4 /* 64 KiB: fits in any L2, so WB is at its best */
#define FULL_ORDER 8 /* 1 MiB */
#define QUICK_REPS 5
#define FULL_REPS 7
#define QUICK_MIN_TIME_NS 2000000ull /* 2 ms per repetition */
#define FULL_MIN_TIME_NS 20000000ull
#define MB 1000000ull
/*
 * Under the cache model every measurement runs a fixed amount of work
 * instead of growing until a repetition lasts min_time_ns of TSC time:
 * the TSC follows the host, so a calibrated count would follow the
 * host's speed, and a region's fixed cost (its doorbells, the loop's
 * set-up) would divide differently from boot to boot. The sizes are
 * what calibration chose for WB in quick mode on a 2-core development
 * host (16 passes over 64 KiB, 32768 chase loads), so a modelled run
 * costs about what it did (docs/cachemodel.md, "memtype and modelcal
 * count fixed work too").
 */
#define MODEL_SWEEP_BYTES MiB(1)	/* read or written per repetition */
#define MODEL_CHASE_LOADS 32768		/* dependent loads per repetition */

static const enum memtype probe_types[] = {MEMTYPE_WB, MEMTYPE_WT,
					   MEMTYPE_WC, MEMTYPE_UC_MINUS,
					   MEMTYPE_UC, MEMTYPE_WP};

struct probe_buf {
	struct memchase m; /* the buffer, also read and written whole */
	uint64_t expect_sum; /* what a full read must add up to */
	volatile uint64_t sink; /* keeps the loads from being optimised away */
};

BUILD_ASSERT((PAGE_SIZE << FULL_ORDER) <= MEMCHASE_MAX_BYTES);

static void fill_words(struct probe_buf *b)
{
	size_t n = b->m.bytes / sizeof(uint64_t);

	b->expect_sum = 0;
	for (size_t i = 0; i < n; i++) {
		b->m.words[i] = i * 0x9e3779b97f4a7c15ull;
		b->expect_sum += b->m.words[i];
	}
}

static uint64_t sum_words(const uint64_t *w, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += ((const volatile uint64_t *)w)[i];
	return s;
}

static void bench_read(void *arg, uint64_t iters)
{
	struct probe_buf *b = arg;

	for (uint64_t i = 0; i < iters; i++)
		b->sink = sum_words(b->m.words, b->m.bytes / sizeof(uint64_t));
}

static void bench_write(void *arg, uint64_t iters)
{
	struct probe_buf *b = arg;
	size_t n = b->m.bytes / sizeof(uint64_t);

	for (uint64_t i = 0; i < iters; i++)
		for (size_t j = 0; j < n; j++)
			((volatile uint64_t *)b->m.words)[j] = j + i;
}

/* Under a model: iters iterations a repetition, not calibrated
 * (min_time_ns 0: the first run at the fixed count is long enough, and
 * the count is not reported as capped). Elsewhere p is left alone. */
static void model_fixed_count(struct bench_params *p, uint64_t iters)
{
	if (!kopt.cachemodel[0])
		return;
	kassert(iters >= 1);
	p->min_time_ns = 0;
	p->min_iters = p->max_iters = iters;
}

/* The run's first line: the buffer, the repetitions and how long each
 * is (a fixed amount of work under a model, else a minimum time). */
static void say_plan(const struct memchase *m, const struct bench_params *p,
		     const struct bench_clock *clk)
{
	kprintf("memtype: buffer of %lu KiB at phys %#lx, %u repetitions ",
		(unsigned long)(m->bytes >> 10),
		(unsigned long)virt_to_phys(m->words), p->reps);
	if (kopt.cachemodel[0])
		kprintf("of a fixed amount of work (%lu KiB read or written, "
			"%u chase loads: a cache model is loaded)",
			(unsigned long)(MAX(m->bytes, MODEL_SWEEP_BYTES) >> 10),
			MODEL_CHASE_LOADS);
	else
		kprintf("of at least %lu ms each",
			(unsigned long)(p->min_time_ns / 1000000));
	kprintf(", clock %s at %lu kHz\n", clk->name,
		(unsigned long)(clk->hz / 1000));
}

static void rates_from(struct stats *out, const struct bench_result *r,
		       uint64_t bytes_per_iter)
{
	uint64_t v[BENCH_MAX_REPS];

	for (unsigned i = 0; i < r->samples.reps; i++)
		/* bytes/s * BENCH_SCALE / 10^6: MB/s with 3 decimals */
		v[i] = bench_rate_scaled(bytes_per_iter * r->samples.iters,
					 r->samples.ticks[i], r->hz) /
		       MB;
	stats_compute(out, v, r->samples.reps, v);
}

/*
 * The verdict line. noisy: the WB or UC latency the verdict rests on is
 * noisy (bench_figure_noisy()), so v is BENCH_UNKNOWN and the line says
 * "inconclusive (noisy)" rather than a finding the figures cannot carry.
 */
static void explain(enum bench_tristate v, bool noisy)
{
	if (kopt.cachemodel[0])
		kprintf("memtype: the cache model (profile %s) timed these "
			"same repetitions with the types honoured: its figures "
			"are in its own file (docs/cachemodel.md; make run "
			"prints them after the run).\n",
			kopt.cachemodel);
	if (noisy) {
		kprintf("memtype: verdict: inconclusive (noisy): the WB or UC "
			"latency it rests on spread more than %u%% over its "
			"repetitions (marked " BENCH_NOISY_MARK " above), so "
			"the host's load may have set it; run again on a "
			"quiet host.\n", BENCH_NOISY_SPREAD_PCT);
		return;
	}
	if (bench_env_is_tcg()) {
		kprintf("memtype: verdict: %s (measured). This is QEMU's TCG, "
			"which models neither caches nor memory types: every "
			"access is emulated the same way whatever the PAT "
			"says, so UC and WB should cost the same here. The "
			"figures above show emulation speed, not hardware; "
			"run on a real machine to see the difference.\n",
			v == BENCH_YES ? "HONOURED" :
			v == BENCH_NO  ? "NOT HONOURED" : "UNCLEAR");
		return;
	}
	if (v == BENCH_YES) {
		kprintf("memtype: verdict: HONOURED: uncached loads cost at "
			"least %ux a write-back load.\n",
			MEMTYPE_HONOURED_RATIO);
		return;
	}
	if (strcmp(cpu_info.hypervisor, "KVMKVMKVM") == 0)
		kprintf("memtype: verdict: %s. Under KVM on Intel the host "
			"normally ignores the guest's PAT for RAM (EPT "
			"ignore-PAT), so guest memory types have no effect.\n",
			v == BENCH_NO ? "NOT HONOURED" : "UNCLEAR");
	else
		kprintf("memtype: verdict: %s: UC latency is not clearly "
			"above WB latency on this platform.\n",
			v == BENCH_NO ? "NOT HONOURED" : "UNCLEAR");
}

/* Shell settings: run memtype kib=N reps=N (a latency sweep by hand).
 * The buffer is 4 KiB << order; kib is rounded up to such a size. */
#define MIN_KIB 4
#define MAX_KIB ((PAGE_SIZE << FULL_ORDER) >> 10)
static const struct experiment_param memtype_params[] = {
	{"kib", MIN_KIB, MAX_KIB,
	 "buffer size in KiB, rounded up to 4 KiB << n (quick 64, full 1024)"},
	{"reps", 1, BENCH_MAX_REPS, "repetitions"},
};

static int memtype_run(enum experiment_mode mode)
{
	unsigned order = mode == EXPERIMENT_FULL ? FULL_ORDER : QUICK_ORDER;
	uint64_t v;
	const struct bench_clock *clk = bench_kernel_clock();
	const struct bench_counters *ctr = bench_kernel_counters();
	struct bench_figure figs[3 * ARRAY_SIZE(probe_types)];
	struct bench_params p;
	struct probe_buf b = {0};
	size_t nfig = 0;
	uint64_t lat_wb = 0, lat_uc = 0;
	bool noisy = false;
	enum bench_tristate verdict;
	int rc = 0;

	if (experiment_param("kib", &v))
		for (order = 0; ((PAGE_SIZE << order) >> 10) < v; order++)
			;
	bench_env_report();
	bench_params_default(&p);
	p.reps = mode == EXPERIMENT_FULL ? FULL_REPS : QUICK_REPS;
	if (experiment_param("reps", &v))
		p.reps = (unsigned)v;
	p.min_time_ns =
		mode == EXPERIMENT_FULL ? FULL_MIN_TIME_NS : QUICK_MIN_TIME_NS;
	b.m.words = page_alloc(order);
	if (!b.m.words) {
		kprintf("memtype: no memory for a %lu KiB buffer\n",
			(unsigned long)((PAGE_SIZE << order) >> 10));
		return 1;
	}
	b.m.bytes = PAGE_SIZE << order;
	say_plan(&b.m, &p, clk);

	for (size_t i = 0; i < ARRAY_SIZE(probe_types) && !rc; i++) {
		enum memtype t = probe_types[i];
		struct bench_result r;
		struct vm_translation tr;
		struct stats st;
		const char *name = memtype_name(t);

		if (memchase_retype(&b.m, t)) {
			rc = 1;
			break;
		}
		/* Check the hardware is told what we think it is told. */
		if (!vm_translate(&kernel_space, (uint64_t)b.m.words, &tr) ||
		    tr.memtype != t) {
			kprintf("memtype: the buffer's PTE does not select %s\n",
				name);
			rc = 1;
			break;
		}
		fill_words(&b);
		model_fixed_count(&p, MAX(1, MODEL_SWEEP_BYTES / b.m.bytes));
		bench_run(&r, clk, ctr, &p, bench_read, &b);
		if (b.sink != b.expect_sum) {
			kprintf("memtype: %s read checksum %#lx, expected %#lx\n",
				name, (unsigned long)b.sink,
				(unsigned long)b.expect_sum);
			rc = 1;
		}
		rates_from(&st, &r, b.m.bytes);
		bench_figure_init(&figs[nfig], "memtype", name, "read", "MB/s",
				  BENCH_SCALE_DIGITS, &st);
		figs[nfig].capped = r.capped;
		figs[nfig++].size = b.m.bytes;

		bench_run(&r, clk, ctr, &p, bench_write, &b);
		rates_from(&st, &r, b.m.bytes);
		bench_figure_init(&figs[nfig], "memtype", name, "write",
				  "MB/s", BENCH_SCALE_DIGITS, &st);
		figs[nfig].capped = r.capped;
		figs[nfig++].size = b.m.bytes;

		memchase_build(&b.m);
		model_fixed_count(&p, MODEL_CHASE_LOADS);
		if (!memchase_is_one_cycle(&b.m)) {
			kprintf("memtype: %s: the chase is not one cycle\n",
				name);
			rc = 1;
		}
		bench_run(&r, clk, ctr, &p, memchase_run, &b.m);
		bench_figure_init(&figs[nfig], "memtype", name, "latency",
				  "tsc-cycles/load", BENCH_SCALE_DIGITS,
				  &r.ticks_per_iter);
		figs[nfig].capped = r.capped;
		figs[nfig].size = b.m.bytes;
		if (t == MEMTYPE_WB || t == MEMTYPE_UC)
			noisy |= bench_figure_noisy(&figs[nfig]);
		nfig++;
		if (t == MEMTYPE_WB)
			lat_wb = r.ticks_per_iter.median;
		if (t == MEMTYPE_UC)
			lat_uc = r.ticks_per_iter.median;
	}
	/* Back to WB before the frames go back: page_free() insists. */
	if (memchase_retype(&b.m, MEMTYPE_WB))
		return 1;
	page_free(b.m.words, order);
	if (rc)
		return rc;

	bench_report("memory-type probe (one buffer, six PAT types)", figs,
		     nfig);
	/* No verdict rests on noisy figures: unknown, and said why. */
	verdict = noisy ? BENCH_UNKNOWN : memtype_verdict_from(lat_wb, lat_uc);
	bench_env_set_memtypes(verdict);
	explain(bench_env_memtypes(), noisy);
	return 0;
}

EXPERIMENT_PARAMS(memtype, "memtype",
	   "read/write bandwidth and load latency of one buffer mapped WB, "
	   "WT, WC, UC-, UC and WP",
	   "000", 10, memtype_run, memtype_params);
