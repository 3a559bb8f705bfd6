/*
 * The tbench experiment (seeds 000 and 004, where LTTng's tracing
 * overhead is quoted as tbench MB/s with tracing off and on): runs of the
 * client/server engine of workloads/tbench.h, timed.
 *
 * Variants: "alternating" (one CPU: client and server take turns) and
 * "pairs=N" (N client/server pairs on 2N CPUs; full mode 1, 2, 4, ... up
 * to all the CPUs' worth, quick mode only the largest, capped at
 * TB_QUICK_MAX_PAIRS), with "pairs=N/pairP" per pair. Metrics:
 * throughput (MB/s of payload) and ops (requests/s).
 *
 * Under the cache-model QEMU plugin each repetition is a model region
 * labelled "tbench|VARIANT|throughput+ops|0" (both figures of the
 * variant; counted in requests), opened on the boot CPU over every CPU
 * (bench_region_begin_all()): with pairs it holds the clients' and the
 * servers' work, spin-waiting on the loopback included.
 *
 * Every repetition is checked against a reference run (alternating, on
 * the boot CPU), and quick mode also against the recorded constant of
 * workloads/tbench.h: a fast-but-wrong change fails the experiment.
 */
#include "arch/x86_64/model_doorbell.h"
#include "cachemodel/doorbell.h"
#include "kernel/bench/bench_env.h"
#include "kernel/bench/env_report.h"
#include "kernel/experiment.h"
#include "kernel/options.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/kprintf.h"
#include "lib/stats.h"
#include "mm/kmalloc.h"
#include "mm/page_alloc.h"
#include "mm/vm.h"
#include "workloads/tbench.h"
#include "experiments/trace_variants.h"

static struct tbench_run tb_run;

/* Full mode on many CPUs: 16 traced variants x (2 figures, 2 work figures
 * under -icount, a pair's each), the untraced pair counts, 6 event costs. */
#define TB_MAX_FIGS 192
#define MB 1000000ull

static void tb_rates(struct stats *mbs, struct stats *ops,
		     const uint64_t *ticks, unsigned reps, uint64_t bytes,
		     uint64_t nops)
{
	const struct bench_clock *clk = bench_kernel_clock();
	uint64_t v[BENCH_MAX_REPS], w[BENCH_MAX_REPS];

	for (unsigned i = 0; i < reps; i++) {
		v[i] = bench_rate_scaled(bytes, ticks[i], clk->hz) / MB;
		w[i] = bench_rate_scaled(nops, ticks[i], clk->hz);
	}
	stats_compute(mbs, v, reps, v);
	stats_compute(ops, w, reps, w);
}

static char tb_variant_names[TB_MAX_FIGS][BENCH_FIELD_MAX];

/*
 * Measure one variant (named name, or after its pairs when name is NULL);
 * appends its figures and leaves each repetition's ticks (the slowest
 * pair's) in wall[0 .. size->reps). Returns 0 or 1 (failure).
 */
static int tb_variant(unsigned npairs, const struct tbench_size *size,
		      const struct tbench_check *ref, struct bench_figure *figs,
		      size_t *nfig, const char *name, uint64_t *wall)
{
	static uint64_t pt[MAX_CPUS / 2][BENCH_MAX_REPS];
	static uint64_t pbytes[MAX_CPUS / 2], pops[MAX_CPUS / 2];
	unsigned np = npairs ? npairs : 1, cpus = npairs ? 2 * npairs : 1;
	char *vname = tb_variant_names[*nfig];
	char label[DB_LABEL_MAX];
	struct stats mbs, ops;
	int rc = 0;

	kassert(size->reps <= BENCH_MAX_REPS);
	if (*nfig + 2 > TB_MAX_FIGS) {
		kprintf("tbench: no room for more than %u figures\n",
			TB_MAX_FIGS);
		return 1;
	}
	if (name)
		ksnprintf(vname, BENCH_FIELD_MAX, "%s", name);
	else if (npairs)
		ksnprintf(vname, BENCH_FIELD_MAX, "pairs=%u", npairs);
	else
		ksnprintf(vname, BENCH_FIELD_MAX, "alternating");
	if (!tbench_run_setup(&tb_run, npairs, size)) {
		kprintf("tbench: %s: cannot set up (memory or CPUs)\n", vname);
		tbench_run_teardown(&tb_run);
		return 1;
	}
	ksnprintf(label, sizeof(label), "tbench|%s|throughput+ops|0",
		  vname);
	for (unsigned r = 0; r < size->reps; r++) {
		struct tbench_check chk;
		uint64_t region;
		bool done;

		model_doorbell_label(label);
		region = bench_region_begin_all();
		done = tbench_run_once(&tb_run, &chk);
		bench_region_end(region, ref->ops);
		model_doorbell_label("tbench");
		if (!done) {
			kprintf("tbench: %s: files left behind\n", vname);
			rc = 1;
		}
		if (chk.hash != ref->hash || chk.bytes != ref->bytes) {
			kprintf("tbench: %s rep %u: checksum %#lx bytes %lu, "
				"reference %#lx bytes %lu\n", vname, r,
				(unsigned long)chk.hash,
				(unsigned long)chk.bytes,
				(unsigned long)ref->hash,
				(unsigned long)ref->bytes);
			rc = 1;
		}
		wall[r] = 0;
		for (unsigned p = 0; p < np; p++) {
			pt[p][r] = tb_run.pair[p].ticks;
			pbytes[p] = tb_run.pair[p].bytes;
			pops[p] = tb_run.pair[p].ops;
			wall[r] = MAX(wall[r], pt[p][r]);
		}
	}
	tbench_run_teardown(&tb_run);
	if (rc)
		return rc;

	tb_rates(&mbs, &ops, wall, size->reps, ref->bytes, ref->ops);
	bench_figure_init(&figs[*nfig], "tbench", vname, "throughput", "MB/s",
			  BENCH_SCALE_DIGITS, &mbs);
	figs[*nfig].cpus = cpus;
	figs[*nfig].clients = size->clients;
	(*nfig)++;
	bench_figure_init(&figs[*nfig], "tbench", vname, "ops", "ops/s",
			  BENCH_SCALE_DIGITS, &ops);
	figs[*nfig].cpus = cpus;
	figs[*nfig].clients = size->clients;
	(*nfig)++;
	for (unsigned p = 0; npairs > 1 && p < np && *nfig < TB_MAX_FIGS;
	     p++) {
		char *pname = tb_variant_names[*nfig];

		ksnprintf(pname, BENCH_FIELD_MAX, "%s/pair%u", vname, p);
		tb_rates(&mbs, &ops, pt[p], size->reps, pbytes[p], pops[p]);
		bench_figure_init(&figs[*nfig], "tbench", pname, "throughput",
				  "MB/s", BENCH_SCALE_DIGITS, &mbs);
		figs[*nfig].cpus = 2;
		(*nfig)++;
	}
	return 0;
}

/* Timed emits per memory type for the per-event cost figures. */
#define TB_EVENT_COST_SAMPLES 20000

/* What a traced run needs besides its name: run() of
 * struct traced_workload. */
struct tb_traced {
	unsigned npairs;
	const struct tbench_size *size;
	const struct tbench_check *ref;
	struct bench_figure *figs;
	size_t *nfig;
};

static int tb_traced_run(void *arg, const char *variant, uint64_t *ticks)
{
	struct tb_traced *t = arg;

	return tb_variant(t->npairs, t->size, t->ref, t->figs, t->nfig,
			  variant, ticks);
}

/*
 * The tracing variants (seeds 000 and 004), all on the largest pair
 * count, after the direct map was split for the buffers; full mode adds
 * every combination of the seed-004 switches. Under QEMU -icount each
 * also gives its instructions per request and, against trace_off, the
 * slowdown they make. Then the per-event cost for each buffer memory
 * type. Returns 0 or 1.
 */
static int tb_trace_variants(enum experiment_mode mode,
			     const struct tbench_size *size,
			     const struct tbench_check *ref,
			     struct bench_figure *figs, size_t *nfig,
			     unsigned maxpairs)
{
	struct tbench_size traced = *size;
	struct tb_traced t = {maxpairs, &traced, ref, figs, nfig};
	/* ref->ops: requests of all clients in one repetition. */
	struct traced_workload w = {
		.exp = "tbench", .op = "request", .unit = "insns/request",
		.ops = ref->ops, .run = tb_traced_run, .arg = &t,
		.figs = figs, .nfig = nfig, .room = TB_MAX_FIGS,
	};
	int rc = trace_variants_run_all(&w, mode, &traced.reps,
					trace_variants_count, true);

	if (!rc)
		*nfig += trace_event_cost("tbench", figs + *nfig,
					  TB_MAX_FIGS - *nfig,
					  TB_EVENT_COST_SAMPLES);
	return rc;
}

/* Client/server pairs in quick mode; full mode uses every CPU. */
#define TB_QUICK_MAX_PAIRS 1

/*
 * Whether the host runs the quick pair's two CPUs at once, measured the
 * way the pair works: CPU 0 and the next online CPU pass a token back
 * and forth for TB_PINGPONG_MS. Each side spins for the other's move,
 * as client and server spin for requests. When the host runs both
 * vCPUs, a round trip takes microseconds; when it runs them in turn,
 * each waits for a host time slice (milliseconds), and a quick run of
 * pairs took minutes. Below TB_PAIR_MIN_ROUNDS round trips quick mode
 * lets client and server alternate on one CPU, and says so.
 */
#define TB_PINGPONG_MS 100
#define TB_PAIR_MIN_ROUNDS 1000 /* i.e. 100 us a round trip */
static struct {
	uint64_t token, end;
} tb_pp;

static void tb_pong(void *arg)
{
	uint64_t t;

	(void)arg;
	/* Odd values are ours to answer; 0 ends the game, and a swap (not
	 * a store) never overwrites it. */
	while ((t = atomic_load_acquire(&tb_pp.token)) != 0)
		if (t & 1)
			atomic_cmpxchg(&tb_pp.token, t, t + 1);
		else
			cpu_relax();
}

static bool tb_pair_runs(void)
{
	const struct bench_clock *clk = bench_kernel_clock();
	unsigned other = MAX_CPUS;
	uint64_t rounds = 0, t;

	for (unsigned cpu = 1; cpu < MAX_CPUS && other == MAX_CPUS; cpu++)
		if (smp_cpu_online(cpu))
			other = cpu;
	if (other == MAX_CPUS)
		return false;
	atomic_store_release(&tb_pp.token, 2);
	if (!smp_work_post(other, tb_pong, NULL))
		return true; /* busy: leave the decision to the run */
	tb_pp.end = clk->now() + clk->hz * TB_PINGPONG_MS / 1000;
	for (t = 2; clk->now() < tb_pp.end; rounds++) {
		atomic_store_release(&tb_pp.token, t + 1);
		while (atomic_load_acquire(&tb_pp.token) != t + 2 &&
		       clk->now() < tb_pp.end)
			cpu_relax();
		t += 2;
	}
	atomic_store_release(&tb_pp.token, 0);
	smp_work_wait(other);
	if (rounds >= TB_PAIR_MIN_ROUNDS)
		return true;
	kprintf("tbench: CPUs 0 and %u passed a token back and forth %lu "
		"times in %u ms: the host does not run them at once, too "
		"slow for a spinning pair; quick mode lets client and server "
		"alternate on one CPU (runmode=full runs pairs)\n", other,
		(unsigned long)rounds, TB_PINGPONG_MS);
	return false;
}

/* Shell settings: run tbench clients=N steps=N reps=N. */
#define TB_MAX_CLIENTS 64
#define TB_MAX_STEPS 100000
static const struct experiment_param tb_params[] = {
	{"clients", 1, TB_MAX_CLIENTS, "logical clients (quick 4, full 16)"},
	{"steps", 1, TB_MAX_STEPS,
	 "script steps per client (quick 300, full 2000)"},
	TRACED_WORKLOAD_PARAMS("repetitions (quick 3, full 7)"),
};

static int tbench_run_all(enum experiment_mode mode)
{
	struct tbench_size custom = mode == EXPERIMENT_FULL ? tbench_full :
							      tbench_quick;
	const struct tbench_size *size = &custom;
	static struct bench_figure figs[TB_MAX_FIGS];
	unsigned cpus = smp_cpus_online(), maxpairs = cpus / 2;
	uint64_t free_before = page_alloc_free_pages(), t0, t1;
	uint64_t kmalloc_before = kmalloc_backend_pages();
	size_t in_use_before = kmalloc_in_use_bytes();
	uint64_t tables_before = READ_ONCE(kernel_space.table_pages);
	int64_t lost, leaked, held_kmalloc, held_tables;
	struct tbench_check ref;
	uint64_t wall[BENCH_MAX_REPS];
	size_t nfig = 0;
	bool configured = false;
	int rc = 0;
	uint64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(tb_params); i++)
		configured |= experiment_param(tb_params[i].name, &v);
	if (experiment_param("clients", &v))
		custom.clients = (unsigned)v;
	if (experiment_param("steps", &v))
		custom.steps = (unsigned)v;
	if (experiment_param("reps", &v))
		custom.reps = (unsigned)v;
	bench_env_report();
	if (mode == EXPERIMENT_QUICK && maxpairs > TB_QUICK_MAX_PAIRS) {
		/* Spinning pairs need a host core each to make progress;
		 * quick runs stay within what a 2-core host can carry. */
		kprintf("tbench: quick mode caps pairs at %u (runmode=full "
			"uses %u)\n", TB_QUICK_MAX_PAIRS, maxpairs);
		maxpairs = TB_QUICK_MAX_PAIRS;
	}
	/* Settings given in the shell are taken as asked: only the
	 * unconfigured quick run adapts to the host, and not under a cache
	 * model, which paces a spinning pair by modelled time. */
	if (mode == EXPERIMENT_QUICK && maxpairs > 0 && !configured &&
	    !kopt.cachemodel[0] && !tb_pair_runs())
		maxpairs = 0;
	kprintf("tbench: %u logical clients x %u requests, %u repetitions, "
		"%u CPUs online; payload sizes 128 B..64 KiB; ring %u B per "
		"direction\n", size->clients, size->steps, size->reps, cpus,
		TBENCH_RING_PAIRED);
	t0 = bench_kernel_clock()->now();
	if (!tbench_checksum(size, 0, &ref)) {
		kprintf("tbench: the reference run failed\n");
		return 1;
	}
	t1 = bench_kernel_clock()->now();
	kprintf("tbench: reference (alternating, this CPU): %lu requests, "
		"%lu payload bytes, checksum %#lx, %lu ms\n",
		(unsigned long)ref.ops, (unsigned long)ref.bytes,
		(unsigned long)ref.hash,
		(unsigned long)stats_muldiv(t1 - t0, 1000,
					    bench_kernel_clock()->hz));
	/* The recorded checksum holds for the quick script (clients and
	 * steps); repetitions and trace= do not change it. */
	if (mode == EXPERIMENT_QUICK &&
	    custom.clients == tbench_quick.clients &&
	    custom.steps == tbench_quick.steps &&
	    (ref.hash != TBENCH_QUICK_EXPECT_HASH ||
	     ref.bytes != TBENCH_QUICK_EXPECT_BYTES)) {
		kprintf("tbench: quick checksum %#lx bytes %lu, expected "
			"%#llx bytes %llu\n", (unsigned long)ref.hash,
			(unsigned long)ref.bytes, TBENCH_QUICK_EXPECT_HASH,
			TBENCH_QUICK_EXPECT_BYTES);
		rc = 1;
	}
	if (maxpairs == 0) {
		kprintf("tbench: %s: client and server alternate on this CPU "
			"(variant \"alternating\")\n", cpus < 2 ?
			"one CPU" : "no pair in quick mode on this host");
		rc |= tb_variant(0, size, &ref, figs, &nfig, NULL, wall);
	} else {
		/* Full mode: 1, 2, 4, ... pairs and all the CPUs' worth;
		 * quick mode: only the latter. */
		unsigned np = mode == EXPERIMENT_FULL ? 1 : maxpairs;

		for (; !rc; np = MIN(2 * np, maxpairs)) {
			rc |= tb_variant(np, size, &ref, figs, &nfig, NULL,
					 wall);
			if (np == maxpairs)
				break;
		}
	}
	if (!rc && trace_variants_wanted())
		rc |= tb_trace_variants(mode, size, &ref, figs, &nfig,
					maxpairs);
	/* Pages neither free again nor held by kmalloc's slab caches
	 * (which keep empty slabs) nor by the kernel's page tables are
	 * leaked: a failure. So are live kmalloc objects left behind. The
	 * page tables grow when a traced variant's WC or UC buffer lands
	 * in a 2 MiB page of the direct map not split before: the split
	 * stays (mm/kernel_map.c), its table is the kernel's. More CPUs,
	 * more buffers, more 2 MiB pages touched. */
	lost = (int64_t)(free_before - page_alloc_free_pages());
	held_kmalloc = (int64_t)(kmalloc_backend_pages() - kmalloc_before);
	held_tables = (int64_t)(READ_ONCE(kernel_space.table_pages) -
				tables_before);
	leaked = lost - held_kmalloc - held_tables;
	if (lost)
		kprintf("tbench: %ld pages fewer free than before, %ld of "
			"them held by kmalloc's caches, %ld by the direct "
			"map's page tables (split for WC/UC trace buffers)\n",
			(long)lost, (long)held_kmalloc, (long)held_tables);
	if (leaked > 0 || kmalloc_in_use_bytes() > in_use_before) {
		kprintf("tbench: LEAK: %ld pages and %ld kmalloc bytes not "
			"returned after the run\n", (long)leaked,
			(long)(kmalloc_in_use_bytes() - in_use_before));
		rc = 1;
	}
	if (rc) {
		kprintf("tbench: FAILED\n");
		return rc;
	}
	bench_report("tbench-like (client/server pairs over loopback, "
		     "ramfs)", figs, nfig);
	return 0;
}

/* Under a model the pairs run one CPU at a time, the turn passing by
 * modelled clock: each request hands lines between client and server at
 * a grain finer than the quantum, and concurrent pacing left their order
 * inside it, and so the figures, to the host's load (docs/cachemodel.md,
 * "Serial pacing"). On this experiment it costs next to nothing. */
static int tbench_run(enum experiment_mode mode)
{
	int rc;

	if (kopt.cachemodel[0])
		model_doorbell_serial(true);
	rc = tbench_run_all(mode);
	if (kopt.cachemodel[0])
		model_doorbell_serial(false);
	return rc;
}

EXPERIMENT_PARAMS(tbench, "tbench",
	   "client/server pairs exchange dbench-style file requests over an "
	   "in-kernel loopback; MB/s and ops/s",
	   "000,004", 30, tbench_run, tb_params);
