/*
 * The tlb_purge experiment (seed 003): how much TLB-flush work reclaim
 * costs when it unmaps pages of address spaces that are not running.
 *
 * Load, on N CPUs (workloads/purge_files.h, workloads/purge_jobs.h):
 *   CPU 0 (the caller) streams: it reads the pages of PURGE_FILES files,
 *     in turn and over and over, into the page cache (the seed's find / |
 *     xargs cat), with its own small space loaded; when free memory falls
 *     below the run's budget it reclaims (here): RECLAIM_BATCH_DEFAULT of
 *     the oldest cached file pages (unmapping them from every space that
 *     maps them) and as many anonymous pages of the jobs (oldest first).
 *   CPUs 1..N-1 run compile-shaped jobs (the seed's make -j50): each
 *     runs PURGE_JOB_SPACES spaces in turn, switching from one straight
 *     to the next, so (like a CPU of a make -j50 box, which always has
 *     more jobs than CPUs) it always has one job's space loaded and the
 *     others wait. Every space maps the toolchain, PURGE_TOOL_FILES files
 *     (the compiler and its C library) shared by every job, and has an
 *     anonymous heap; its turn executes toolchain pages and faults in and
 *     writes part of its heap; a space exits after a few turns and a new
 *     one takes its place. The jobs check every word they read.
 *
 * What a reclaimed page costs in shootdowns (the reason for this shape):
 * a shootdown goes only to the CPUs that have one of the page's spaces
 * loaded. A cat page is mapped by nobody: no IPI under either policy. A
 * job's heap page belongs to one space, loaded somewhere only while it
 * is that space's turn. A toolchain page is mapped by every live job
 * space, so each job CPU has one of them loaded: naive sends one IPI per
 * job CPU for it (one per loaded mapping), batched one per job CPU per
 * batch. The batched policy's gain per page is thus at most the batch
 * size (RECLAIM_BATCH_DEFAULT, Linux's 32); full mode also runs batched
 * variants with larger batches (tp_sweep) and prints the gain of each.
 *
 * Two x86_64 policies in one boot (mm/reclaim.h): naive (a shootdown per
 * mapping) and batched (one flush per batch). They take turns, one
 * reclaim pass each, so both meet the same pages (tp_run_variants()). Every
 * second of TSC time (under a cache model every few passes: "Lockstep"
 * below) a line in the seed's style:
 *   tlb: shootdown IPIs 11612 (naive) 9 (batched)
 *   PTC.E: 1161198 (old) 0 (new)
 * The second line is the ia64 model (arch/ia64/, fed by
 * experiments/tlb_purge_model.c): the same stream of
 * events (spaces created, loaded, faulting, exiting; every reclaimed
 * page a purge request from CPU 0) is fed to two modelled machines, one
 * per version of ia64_global_tlb_purge(). Reclaim alternates between a
 * kernel thread (kswapd: lazy TLB, CPU 0's last space stays active) and
 * direct reclaim in the streaming task; those are model inputs. PTC.E
 * counts flush_tlb_all() calls (global purges), as the seed did.
 *
 * The files (experiments/tlb_purge.h): this one sets a run up and runs
 * it; tlb_purge_reclaim.c streams and reclaims on CPU 0,
 * tlb_purge_report.c prints the tables, the figures and the checks,
 * tlb_purge_model.c feeds the ia64 model.
 */
#include "experiments/tlb_purge.h"
#include "arch/ia64/machine.h"
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/model_doorbell.h"
#include "arch/x86_64/tlb.h"
#include "experiments/tlb_purge_model.h"
#include "kernel/bench/bench_smp.h"
#include "kernel/bench/env_report.h"
#include "kernel/experiment.h"
#include "kernel/options.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/bench.h"
#include "lib/bench_output.h"
#include "lib/kprintf.h"
#include "lib/string.h"
#include "mm/page_alloc.h"
#include "mm/reclaim.h"
#include "mm/space.h"
#include "mm/tlb.h"
#include "workloads/purge_files.h"
#include "workloads/purge_jobs.h"

BUILD_ASSERT(PURGE_CACHE_SLOTS > 1536); /* above tp_full's budget */
#define TP_MAX_JOB_CPUS (IA64_MAX_CPUS - 1)
BUILD_ASSERT(TP_MAX_JOB_CPUS <= PURGE_MAX_JOBS);
/* The model region of the measured run (tools/model/model.py's keyed label:
 * both ia64 versions' figures, from one stream of events). */
#define TP_MODEL_LABEL                                                        \
	"tlb_purge|old+new|global_purges+ptc_e+ptc_ga+purge_calls|0"

/* Quick: bounded so that naive's IPIs (milliseconds each under TCG)
 * keep the experiments boot short; the time cap only matters on a host
 * too loaded to give the vCPUs time (the closing line says so). The
 * budget stays below what the files alone take in the page cache
 * (PURGE_CACHE_SLOTS pages), so pressure always comes; full mode's is
 * several times its largest batch. */
static const struct tp_size tp_quick = {256, 30000, 512};
static const struct tp_size tp_full = {4096, 240000, 1536};

/* The jobs' events go to the ia64 model. */
static const struct purge_jobs_ops tp_load_ops = {
	.space_new = tp_model_create,
	.cpu_idle = tp_model_idle,
	.space_gone = tp_model_exit,
	.turn = tp_model_turn,
};

/*
 * Batch sizes of the extra batched variants (sweep=1, full mode's
 * default): Linux's batch times 2 to 16, to show how the gain per page
 * follows the batch size.
 */
static const unsigned tp_sweep[TP_SWEEP_COUNT] = {64, 128, 256};

/*
 * Quick mode's CPUs: no more than the host runs at once (measured,
 * kernel/bench/bench_smp.h), at least 2. A naive shootdown to a vCPU that the
 * host has descheduled waits for that vCPU's time slice: 15 job CPUs on
 * a 2-core host made one reclaim pass last most of a minute. The other
 * CPUs stay idle in the kernel's space, so no shootdown goes to them.
 * Full mode uses every CPU, and so does a run under a cache model: it
 * paces the vCPUs by modelled time (docs/cachemodel.md), so a shootdown
 * waits for the target's modelled clock, not for a host time slice.
 */
static unsigned tp_quick_cpus(unsigned cpus)
{
	struct cpumask all;
	unsigned tenths, use;

	if (kopt.cachemodel[0])
		return cpus;
	cpumask_online(&all, false);
	tenths = bench_parallel_tenths(&all);
	use = MAX(2u, MIN(cpus, (tenths + 9) / 10));
	if (use < cpus)
		kprintf("tlb_purge: the host runs these %u CPUs like %u.%u at "
			"once (measured over %u ms): quick mode uses CPUs "
			"0..%u (runmode=full uses all)\n", smp_cpus_online(),
			tenths / 10, tenths % 10, BENCH_PARALLEL_WINDOW_MS,
			use - 1);
	return use;
}

/* The variants: naive, batched (batch pages per flush) and, with sweep,
 * batched with each batch size of tp_sweep but batch. Returns how many. */
static unsigned variants_init(struct tp_variant *ph, unsigned batch,
			      bool sweep)
{
	unsigned nph;

	memset(ph, 0, TP_MAX_VARIANTS * sizeof(*ph));
	ph[0].policy = TLB_POLICY_NAIVE;
	ph[0].batch = RECLAIM_BATCH_DEFAULT;
	ph[1].policy = TLB_POLICY_BATCHED;
	ph[1].batch = batch;
	nph = TLB_POLICY_COUNT;
	for (unsigned i = 0; sweep && i < ARRAY_SIZE(tp_sweep); i++) {
		if (tp_sweep[i] == batch)
			continue;
		ph[nph].policy = TLB_POLICY_BATCHED;
		ph[nph].batch = tp_sweep[i];
		nph++;
	}
	for (unsigned p = 0; p < nph; p++) {
		if (p < TLB_POLICY_COUNT && ph[p].batch == RECLAIM_BATCH_DEFAULT)
			ksnprintf(ph[p].name, sizeof(ph[p].name), "%s",
				  tlb_policy_name(ph[p].policy));
		else
			ksnprintf(ph[p].name, sizeof(ph[p].name), "%s_b%u",
				  tlb_policy_name(ph[p].policy), ph[p].batch);
	}
	return nph;
}

/* Stops the jobs, prints what each did; returns the words they read
 * back wrong. */
static uint64_t jobs_stop(void)
{
	uint64_t bad = purge_jobs_stop();

	for (unsigned i = 0; i < purge_jobs_count(); i++) {
		const struct purge_job *j = purge_job_get(i);

		kprintf("tlb_purge: cpu %u: %lu spaces, %lu page touches\n",
			j->cpu, (unsigned long)j->spaces,
			(unsigned long)j->touches);
	}
	return bad;
}

static int tlb_purge_run_all(enum experiment_mode mode)
{
	const struct tp_size *size = mode == EXPERIMENT_FULL ? &tp_full :
								&tp_quick;
	static struct tp_variant ph[TP_MAX_VARIANTS];
	unsigned cpus = smp_cpus_online(), self = smp_this_cpu(), nph, cut;
	unsigned jobs;
	struct addr_space *me = NULL;
	uint64_t low_free, bad = 0, v, direct0, region, pages = 0;
	unsigned batch = RECLAIM_BATCH_DEFAULT;
	bool sweep = mode == EXPERIMENT_FULL, lockstep;
	struct space_stats ss;
	int rc = 0, my_slot;

	bench_env_report();
	if (cpus > IA64_MAX_CPUS)
		cpus = IA64_MAX_CPUS;
	if (self != 0 || cpus < 2) {
		bench_missing("tlb_purge", NULL, NULL, BENCH_SKIPPED,
			      "needs CPU 0 and another CPU; this machine has "
			      "%u CPU%s online (run on CPU %u)", cpus,
			      cpus == 1 ? "" : "s", self);
		return 0;
	}
	if (mode == EXPERIMENT_QUICK)
		cpus = tp_quick_cpus(cpus);
	if (experiment_param("batch", &v))
		batch = (unsigned)v;
	if (experiment_param("sweep", &v))
		sweep = v != 0;
	lockstep = kopt.cachemodel[0] != '\0';
	tp_reclaim_init(lockstep);
	tp_model_init();
	nph = variants_init(ph, batch, sweep);
	purge_files_init();
	purge_jobs_init(&tp_load_ops);
	if (lockstep) /* Before any job starts: its warm-up rounds, no more. */
		purge_jobs_limit_rounds(TP_WARM_ROUNDS);
	me = space_create("cat");
	if (!me || !tp_model_setup(cpus) ||
	    space_add_anon(me, PURGE_UVA, 1, VM_WRITE) != VM_OK) {
		kprintf("tlb_purge: not enough memory to set up\n");
		rc = 1;
		goto out;
	}
	low_free = page_alloc_free_pages() > size->budget_pages ?
			   page_alloc_free_pages() - size->budget_pages :
			   0;
	kprintf("tlb_purge: %u CPUs: CPU 0 streams %u files of %u pages "
		"into the page cache and reclaims, %u run jobs of %u spaces "
		"x (%u anonymous + %u x %u toolchain pages shared by every "
		"space); budget %lu pages; %lu reclaimed pages per variant (at "
		"most %lu ms); batch %u pages (naive: passes of %u)%s; PCIDs "
		"%s, flush ceiling %u\n", cpus, PURGE_FILES, PURGE_FILE_PAGES,
		cpus - 1, PURGE_JOB_SPACES, PURGE_JOB_PAGES, PURGE_TOOL_FILES,
		PURGE_TOOL_PAGES, (unsigned long)size->budget_pages,
		(unsigned long)size->phase_pages,
		(unsigned long)tp_run_ms(size), batch, RECLAIM_BATCH_DEFAULT,
		nph > TLB_POLICY_COUNT ? "; also batches of 64, 128, 256" : "",
		tlb_pcid_active() ? "on" : "off", tlb_flush_ceiling);
	tlb_switch_to(me);
	my_slot = tp_model_create(me);
	tp_model_switch(0, my_slot);
	*(volatile uint64_t *)PURGE_UVA = 1; /* cat's own buffer */
	jobs = purge_jobs_start(cpus - 1);
	if (jobs < cpus - 1)
		kprintf("tlb_purge: CPU %u is busy\n", jobs + 1);
	space_stats(&ss);
	direct0 = ss.direct_reclaims;
	tp_warm_up(size, low_free);
	/* A cache model counts the measured run, every CPU, per reclaimed
	 * page; the ia64 figures of both versions share that one region. */
	model_doorbell_label(TP_MODEL_LABEL);
	region = bench_region_begin_all();
	cut = tp_run_variants(ph, nph, size, my_slot, low_free);
	for (unsigned p = 0; p < nph; p++)
		pages += ph[p].pages;
	bench_region_end(region, pages);
	model_doorbell_label("tlb_purge");
	bad = jobs_stop();
	tp_closing_line(ph, size);
	tlb_switch_to(&kernel_space);
	tp_model_idle(0);
	tp_model_exit(my_slot);
	rc |= tp_report(ph, nph, cpus, size);
	if (cut)
		kprintf("tlb_purge: FAILED: %u of %u variants cut short by the "
			"time cap: no comparison\n", cut, nph);
	space_stats(&ss);
	/* Their IPIs would count in a variant's: none expected, the budget
	 * keeps free memory far above the allocator's watermark. */
	kprintf("tlb_purge: page faults that reclaimed mapped pages "
		"themselves: %lu\n",
		(unsigned long)(ss.direct_reclaims - direct0));
	rc |= tp_checks(ph, nph, bad);
out:
	purge_files_free();
	if (me)
		space_destroy(me);
	tp_model_teardown();
	return rc;
}

/* Under a model the CPUs run one at a time, the turn passing by modelled
 * clock: the jobs' and the reclaimer's allocations and frees then follow
 * modelled time, not the host's order, and so does the state they leave
 * the page allocator in, where an experiment run after this one (the
 * page cache's lockstep points) places its memory (docs/cachemodel.md,
 * "Serial pacing"). */
static int tlb_purge_run(enum experiment_mode mode)
{
	int rc;

	if (kopt.cachemodel[0])
		model_doorbell_serial(true);
	rc = tlb_purge_run_all(mode);
	if (kopt.cachemodel[0])
		model_doorbell_serial(false);
	return rc;
}

static const struct experiment_param tp_params[] = {
	{"batch", 1, RECLAIM_BATCH_MAX,
	 "pages per flush of the batched variant (32: Linux's SWAP_CLUSTER_MAX)"},
	{"sweep", 0, 1,
	 "1: also batched variants of 64, 128 and 256 pages (full mode's "
	 "default), 0: not (quick's)"},
};

EXPERIMENT_PARAMS(tlb_purge, "tlb_purge",
		  "reclaim unmapping pages of spaces that are not running: "
		  "x86_64 shootdown IPIs naive vs batched, ia64 global purges "
		  "old vs new (modelled)",
		  "003", 45, tlb_purge_run, tp_params);
