/*
 * The tlb_purge experiment (seed 003): how much TLB-flush work reclaim
 * costs when it unmaps pages of address spaces that are not running.
 *
 * Load, on N CPUs (workloads/purge_load.h):
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
 * reclaim pass each, so both meet the same pages (run_variants()). Every
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
 */
#include "arch/ia64/machine.h"
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/model_doorbell.h"
#include "arch/x86_64/tlb.h"
#include "arch/x86_64/tsc.h"
#include "kernel/bench/env_report.h"
#include "kernel/bench/bench_smp.h"
#include "kernel/experiment.h"
#include "kernel/options.h"
#include "experiments/tlb_purge_model.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/bench.h"
#include "lib/bench_output.h"
#include "lib/kprintf.h"
#include "lib/stats.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "mm/page_alloc.h"
#include "mm/reclaim.h"
#include "mm/space.h"
#include "mm/tlb.h"
#include "workloads/purge_load.h"

BUILD_ASSERT(PURGE_CACHE_SLOTS > 1536); /* above tp_full's budget */
#define TP_WARM_ROUNDS 2	     /* job rounds before measuring */
#define TP_MAX_JOB_CPUS (IA64_MAX_CPUS - 1)
#define TP_MS 1000ull
#define TP_FIG_SCALE 3
#define TP_MAX_FIGS 80
/* The model region of the measured run (tools/model/model.py's keyed label:
 * both ia64 versions' figures, from one stream of events). */
#define TP_MODEL_LABEL                                                        \
	"tlb_purge|old+new|global_purges+ptc_e+ptc_ga+purge_calls|0"

struct tp_size {
	uint64_t phase_pages;	/* pages each variant reclaims (at least) */
	uint64_t run_ms;	/* TSC time cap of the warm-up, and of reclaim */
	uint64_t budget_pages;	/* memory the load may take */
};

/* Quick: bounded so that naive's IPIs (milliseconds each under TCG)
 * keep the experiments boot short; the time cap only matters on a host
 * too loaded to give the vCPUs time (the closing line says so). The
 * budget stays below what the files alone take in the page cache
 * (PURGE_CACHE_SLOTS pages), so pressure always comes; full mode's is
 * several times its largest batch. */
static const struct tp_size tp_quick = {256, 30000, 512};
static const struct tp_size tp_full = {4096, 240000, 1536};

/*
 * Lockstep, under a cache model. Free-running jobs do as many rounds
 * between two reclaim passes as the host's scheduling of the vCPUs
 * allows, so what reclaim finds on the LRU, and with it the ia64 model's
 * global purges, moved from run to run (660 and 571 in two modelled runs
 * of one kernel). Under a model the jobs' work is fixed instead, as
 * pagecache_splice fixes its clients' chunks: the jobs run their warm-up
 * rounds before CPU 0 streams, and TP_LOCKSTEP_ROUNDS more before each
 * reclaim pass, then wait in their last space while it runs (where a
 * job CPU of a make -j50 box is always found: in some job's space).
 * TP_LOCKSTEP_ROUNDS is assumed: one turn of each of a job's spaces per
 * pass. The per-second lines become one per TP_LOCKSTEP_LINE_PASSES
 * passes, so that CPU 0's work does not follow the host's clock either.
 * The time cap stays, on the host's clock, TP_LOCKSTEP_CAP_FACTOR times
 * longer: a modelled run is paced and slower, and on a loaded host a
 * naive pass took 16 s of it (4 CPUs, load average 18).
 */
#define TP_LOCKSTEP_ROUNDS 1
#define TP_LOCKSTEP_LINE_PASSES 8
#define TP_LOCKSTEP_CAP_FACTOR 10

/* Shared state of one run. */
static struct {
	bool kswapd_turn;
	struct purge_job jobs[TP_MAX_JOB_CPUS];
	unsigned njobs;
	bool lockstep;		/* the jobs' rounds are counted out */
	uint64_t round_limit;	/* in lockstep: rounds allowed so far */
} tp;

/* The jobs' events go to the ia64 model. */
static const struct purge_load_ops tp_load_ops = {
	.space_new = tp_model_create,
	.cpu_idle = tp_model_idle,
	.space_gone = tp_model_exit,
	.turn = tp_model_turn,
};

/* ---- reclaim (CPU 0), the variants taking turns --------------------- */

/*
 * Batch sizes of the extra batched variants (sweep=1, full mode's
 * default): Linux's batch times 2 to 16, to show how the gain per page
 * follows the batch size.
 */
static const unsigned tp_sweep[] = {64, 128, 256};
#define TP_MAX_VARIANTS (TLB_POLICY_COUNT + ARRAY_SIZE(tp_sweep))

struct tp_variant {
	enum tlb_policy policy;
	unsigned batch;		     /* pages per flush (batched) */
	char name[BENCH_FIELD_MAX];  /* naive, batched, batched_b64, ... */
	uint64_t pages, file_pages, batches, reclaims;
	uint64_t mapped_pages, mappings, mappings_loaded;
	struct tlb_cpu_stats cpu[MAX_CPUS]; /* over its passes */
	uint64_t ipis;	 /* sent, all CPUs, during its passes */
	uint64_t cycles; /* TSC time of its passes */
};

static uint64_t sum_sent(void)
{
	struct tlb_cpu_stats s;

	tlb_stats_sum(&s);
	return s.ipis_sent;
}

/* The seed's lines: the naive and the (first) batched variant's IPIs
 * so far, and the ia64 model's global purges. */
static void per_second(const struct tp_variant *ph)
{
	kprintf("tlb: shootdown IPIs %lu (naive) %lu (batched)\n",
		(unsigned long)ph[0].ipis, (unsigned long)ph[1].ipis);
	tp_model_line();
}

/* The run's time cap (warm-up, and reclaim), in ms of TSC time. */
static uint64_t run_ms(const struct tp_size *size)
{
	return size->run_ms * (tp.lockstep ? TP_LOCKSTEP_CAP_FACTOR : 1);
}

/* Whether every job has done at least rounds rounds. */
static bool jobs_done_rounds(uint64_t rounds)
{
	for (unsigned i = 0; i < tp.njobs; i++)
		if (atomic_load_acquire(&tp.jobs[i].rounds) < rounds)
			return false;
	return true;
}

static bool jobs_warm(void)
{
	return jobs_done_rounds(TP_WARM_ROUNDS);
}

/* In lockstep: let every job run n more rounds (0: none, wait for those
 * allowed) and wait until it has, or until the TSC passes end. False
 * when end came first. */
static bool jobs_advance(uint64_t n, uint64_t end)
{
	tp.round_limit += n;
	purge_load_limit_rounds(tp.round_limit);
	while (!jobs_done_rounds(tp.round_limit))
		if (rdtsc() >= end)
			return false;
		else
			cpu_relax();
	return true;
}

/* Stream until the load has taken its budget and every job has run
 * its spaces a few times: reclaim then starts under pressure, with
 * the jobs' pages in place. In lockstep the jobs' warm-up rounds come
 * first, then the stream alone. */
static void warm_up(const struct tp_size *size, uint64_t low_free)
{
	uint64_t t0 = rdtsc();
	uint64_t end = t0 + stats_muldiv(run_ms(size), tsc_hz(), TP_MS);

	if (tp.lockstep)
		jobs_advance(0, end); /* the rounds allowed at the start */
	while (rdtsc() < end) {
		bool full = page_alloc_free_pages() < low_free ||
			    purge_cache_pages() == PURGE_CACHE_SLOTS;

		if (full && jobs_warm())
			break;
		if (!full && !purge_stream())
			break;
	}
	kprintf("tlb_purge: warm-up: %lu ms, the page cache holds %u pages of the files\n",
		(unsigned long)stats_muldiv(rdtsc() - t0, TP_MS, tsc_hz()),
		purge_cache_pages());
}

/* A variant has reclaimed its pages. */
static bool variant_done(const struct tp_variant *ph, const struct tp_size *size)
{
	return ph->pages >= size->phase_pages;
}

/* The closing line: the seed's, when both variants did their pages;
 * else no comparison, and how far each got. */
static void closing_line(const struct tp_variant *ph,
			 const struct tp_size *size)
{
	if (variant_done(&ph[0], size) && variant_done(&ph[1], size))
		kprintf("tlb: shootdown IPIs %lu (naive) %lu (batched)\n",
			(unsigned long)ph[0].ipis, (unsigned long)ph[1].ipis);
	else
		kprintf("tlb: shootdown IPIs: no comparison, the run was cut "
			"short (naive %lu of %lu pages, batched %lu of %lu)\n",
			(unsigned long)ph[0].pages,
			(unsigned long)size->phase_pages,
			(unsigned long)ph[1].pages,
			(unsigned long)size->phase_pages);
	tp_model_line();
}

static void add_stats(struct tlb_cpu_stats *acc, const struct tlb_cpu_stats *a,
		      const struct tlb_cpu_stats *b)
{
	acc->single += b->single - a->single;
	acc->full += b->full - a->full;
	acc->ipis_sent += b->ipis_sent - a->ipis_sent;
	acc->ipis_received += b->ipis_received - a->ipis_received;
	acc->flushes += b->flushes - a->flushes;
	acc->pages += b->pages - a->pages;
	acc->pcid_hits += b->pcid_hits - a->pcid_hits;
	acc->pcid_flushes += b->pcid_flushes - a->pcid_flushes;
}

/*
 * One reclaim pass of variant ph: a list of cached file pages and one of
 * anonymous pages, `pass` pages each (fewer when a list runs dry), with
 * its policy and batch; what the pass cost is added to ph.
 */
static void reclaim_pass(struct tp_variant *ph, int my_slot)
{
	static struct tlb_cpu_stats s0[MAX_CPUS];
	unsigned cpus = smp_cpus_online();
	uint64_t t0 = rdtsc(), ipis0 = sum_sent(), loaded0 = tp_model_unmaps_loaded();
	/* Pages per list and pass: Linux's isolation size, or the batch
	 * when it is larger, so that a pass is one batch. */
	uint64_t pass = ph->policy == TLB_POLICY_BATCHED &&
				ph->batch > RECLAIM_BATCH_DEFAULT ?
			ph->batch :
			RECLAIM_BATCH_DEFAULT;
	struct reclaim_result f, a;

	for (unsigned c = 0; c < cpus; c++)
		tlb_stats_read(c, &s0[c]);
	/* kswapd and direct reclaim take turns (model). */
	tp.kswapd_turn = !tp.kswapd_turn;
	tp_model_switch(0, tp.kswapd_turn ? IA64_KTHREAD : my_slot);
	f = reclaim_file(pass, ph->policy, ph->batch, NULL, NULL, tp_model_purge,
			 NULL);
	a = reclaim_anon(pass, ph->policy, ph->batch, tp_model_purge, NULL);
	ph->mapped_pages += f.mapped_pages + a.mapped_pages;
	ph->mappings += f.mappings + a.mappings;
	ph->file_pages += f.pages;
	ph->pages += f.pages + a.pages;
	ph->batches += f.batches + a.batches;
	ph->reclaims++;
	ph->ipis += sum_sent() - ipis0;
	ph->mappings_loaded += tp_model_unmaps_loaded() - loaded0;
	for (unsigned c = 0; c < cpus; c++) {
		struct tlb_cpu_stats s1;

		tlb_stats_read(c, &s1);
		add_stats(&ph->cpu[c], &s0[c], &s1);
	}
	ph->cycles += rdtsc() - t0;
}

/* The variant with the fewest pages reclaimed so far (the first such),
 * among those not done; there is one while any is not done. */
static struct tp_variant *behind(struct tp_variant *ph, unsigned nph,
				 const struct tp_size *size)
{
	struct tp_variant *v = NULL;

	for (unsigned p = 0; p < nph; p++)
		if (!variant_done(&ph[p], size) && (!v || ph[p].pages < v->pages))
			v = &ph[p];
	kassert(v);
	return v;
}

/*
 * Stream, and under pressure reclaim, one pass at a time, the variants
 * taking turns: the pass goes to the variant furthest behind in pages,
 * so each meets the same mix of pages on the LRU (cat's, the
 * toolchain's, the heaps') over the same stretch of the run, as
 * sequential phases would not, and a time cap leaves them all about as
 * far. Until every variant has its pages, or the time cap. Returns
 * the number of variants the cap left short of their pages.
 */
static unsigned run_variants(struct tp_variant *ph, unsigned nph,
			     const struct tp_size *size, int my_slot,
			     uint64_t low_free)
{
	uint64_t t0 = rdtsc(), next = t0 + tsc_hz();
	uint64_t end = t0 + stats_muldiv(run_ms(size), tsc_hz(), TP_MS);
	unsigned left = nph;

	uint64_t passes = 0;

	while (left && rdtsc() < end) {
		if (!purge_stream() || page_alloc_free_pages() < low_free) {
			struct tp_variant *v = behind(ph, nph, size);

			if (tp.lockstep && !jobs_advance(TP_LOCKSTEP_ROUNDS,
							 end))
				break;
			reclaim_pass(v, my_slot);
			left -= variant_done(v, size);
			passes++;
			if (tp.lockstep &&
			    passes % TP_LOCKSTEP_LINE_PASSES == 0)
				per_second(ph);
		}
		if (!tp.lockstep && rdtsc() >= next) {
			/* One line per second; a pass longer than that
			 * gets one line, not one per second it took. */
			per_second(ph);
			next = rdtsc() + tsc_hz();
		}
	}
	kprintf("tlb_purge: reclaim ran %lu ms%s; the page cache holds %u "
		"pages of cat's files and %u of the toolchain (%lu of cat's "
		"read in, %lu evicted so far)\n",
		(unsigned long)stats_muldiv(rdtsc() - t0, TP_MS, tsc_hz()),
		left ? ", stopped by the time cap (a loaded host)" : "",
		purge_cache_pages(), purge_tool_pages(), (unsigned long)purge_cache_reads(),
		(unsigned long)purge_cache_evicted());
	for (unsigned p = 0; p < nph; p++)
		kprintf("tlb_purge: %s: %lu pages reclaimed (%lu file, %lu "
			"anonymous) in %lu passes (%lu ms), %lu flushes, %lu "
			"IPIs; %lu of the pages were mapped, by %lu mappings, "
			"%lu of them in a space loaded on another CPU at the "
			"unmap\n", ph[p].name, (unsigned long)ph[p].pages,
			(unsigned long)ph[p].file_pages,
			(unsigned long)(ph[p].pages - ph[p].file_pages),
			(unsigned long)ph[p].reclaims,
			(unsigned long)stats_muldiv(ph[p].cycles, TP_MS,
						    tsc_hz()),
			(unsigned long)ph[p].batches,
			(unsigned long)ph[p].ipis,
			(unsigned long)ph[p].mapped_pages,
			(unsigned long)ph[p].mappings,
			(unsigned long)ph[p].mappings_loaded);
	return left;
}

/* ---- results ------------------------------------------------------- */

static char tp_names[TP_MAX_FIGS][BENCH_FIELD_MAX];

static void fig(struct bench_figure *f, size_t *n, const char *variant,
		const char *metric, const char *unit, uint64_t scaled,
		unsigned cpus)
{
	struct stats st;
	uint64_t v = scaled, scratch = scaled;

	kassert(*n < TP_MAX_FIGS);
	stats_compute(&st, &v, 1, &scratch);
	bench_figure_init(&f[*n], "tlb_purge", variant, metric, unit,
			  TP_FIG_SCALE, &st);
	f[*n].cpus = cpus;
	(*n)++;
}

static uint64_t x1000(uint64_t v)
{
	return v * 1000;
}

static uint64_t model_sum(const struct ia64_machine *m, size_t off)
{
	uint64_t t = 0;

	for (unsigned c = 0; c < m->cfg.ncpus; c++)
		t += *(const uint64_t *)((const char *)&m->cpus[c].cnt + off);
	return t;
}
#define MODEL_SUM(m, field)                                                 \
	model_sum(m, __builtin_offsetof(struct ia64_cpu_counters, field))

/* The most IPIs one CPU received per flush batch in variant ph (x1000). */
static uint64_t worst_per_cpu_per_batch(const struct tp_variant *ph)
{
	uint64_t worst = 0;

	for (unsigned c = 0; c < smp_cpus_online() && ph->batches; c++) {
		uint64_t got = ph->cpu[c].ipis_received;
		uint64_t v = stats_muldiv(got, 1000, ph->batches);

		worst = v > worst ? v : worst;
	}
	return worst;
}

static void x86_table(const struct tp_variant *ph, unsigned nph,
		      unsigned cpus)
{
	kprintf("\ntlb_purge: x86_64 reclaim, per policy and CPU\n");
	kprintf("policy        cpu  IPIs-sent  IPIs-recv  single  full   "
		"pages/flush\n");
	for (unsigned p = 0; p < nph; p++) {
		for (unsigned c = 0; c < cpus; c++) {
			const struct tlb_cpu_stats *b = &ph[p].cpu[c];
			uint64_t fl = b->flushes;

			kprintf("%-13s %3u %10lu %10lu %7lu %5lu %8lu.%03lu\n",
				ph[p].name, c,
				(unsigned long)b->ipis_sent,
				(unsigned long)b->ipis_received,
				(unsigned long)b->single,
				(unsigned long)b->full,
				(unsigned long)(fl ? b->pages / fl : 0),
				(unsigned long)(fl ? (b->pages * 1000 / fl) % 1000 : 0));
		}
	}
}

/* IPIs per 1000 reclaimed pages of a variant (3 decimals: x1000). */
static uint64_t per_kpage(const struct tp_variant *ph)
{
	return ph->pages ? stats_muldiv(ph->ipis, 1000000, ph->pages) : 0;
}

/* The batched variants by batch size, then the gain per page of each
 * against the naive variant (those lines vary with timing: a quick run
 * may need no IPI at all). */
static void batch_table(const struct tp_variant *ph, unsigned nph,
			const struct tp_size *size)
{
	uint64_t naive = per_kpage(&ph[0]);

	kprintf("\ntlb_purge: IPIs per reclaimed page by batch size (naive: "
		"%lu IPIs for %lu pages; a batch saves at most its size)\n",
		(unsigned long)ph[0].ipis, (unsigned long)ph[0].pages);
	kprintf("variant        batch    pages  flushes     IPIs  "
		"IPIs/1000pages\n");
	for (unsigned p = 1; p < nph; p++) {
		uint64_t k = per_kpage(&ph[p]);

		kprintf("%-13s %6u %8lu %8lu %8lu %11lu.%03lu\n", ph[p].name,
			ph[p].batch, (unsigned long)ph[p].pages,
			(unsigned long)ph[p].batches,
			(unsigned long)ph[p].ipis, (unsigned long)(k / 1000),
			(unsigned long)(k % 1000));
	}
	for (unsigned p = 1; p < nph; p++) {
		uint64_t k = per_kpage(&ph[p]);

		if (!variant_done(&ph[0], size) || !variant_done(&ph[p], size))
			kprintf("tlb_purge: no ratio naive / %s: the run was "
				"cut short\n", ph[p].name);
		else if (!ph[0].pages || !ph[p].pages || !naive)
			kprintf("tlb_purge: no ratio (a variant reclaimed "
				"nothing, or naive needed no IPI)\n");
		else if (k)
			kprintf("tlb_purge: IPIs per reclaimed page, naive / "
				"%s = %lu.%03lu\n", ph[p].name,
				(unsigned long)(naive / k),
				(unsigned long)(naive * 1000 / k % 1000));
		else
			kprintf("tlb_purge: IPIs per reclaimed page, naive / "
				"%s: %s sent none (naive %lu.%03lu per 1000 "
				"pages)\n", ph[p].name, ph[p].name,
				(unsigned long)(naive / 1000),
				(unsigned long)(naive % 1000));
	}
}

/*
 * The tables and figures. A variant the time cap left short of its pages
 * has no figures (its IPIs would read as a policy's cost): a
 * BENCH_CUT_SHORT line instead, and the result is 1 (failed).
 */
static int report(const struct tp_variant *ph, unsigned nph, unsigned cpus,
		  const struct tp_size *size)
{
	static struct bench_figure f[TP_MAX_FIGS];
	const struct ia64_machine *old = tp_model_machine(0);
	const struct ia64_machine *new = tp_model_machine(1);
	size_t n = 0;
	int rc = 0;

	x86_table(ph, nph, cpus);
	for (unsigned p = 0; p < nph; p++) {
		const char *v = ph[p].name;

		if (!variant_done(&ph[p], size)) {
			bench_missing("tlb_purge", v, NULL, BENCH_CUT_SHORT,
				      "the %lu ms time cap stopped reclaim "
				      "after %lu of its %lu pages (%lu "
				      "passes)", (unsigned long)run_ms(size),
				      (unsigned long)ph[p].pages,
				      (unsigned long)size->phase_pages,
				      (unsigned long)ph[p].reclaims);
			rc = 1;
			continue;
		}

		fig(f, &n, v, "shootdown_ipis", "IPIs", x1000(ph[p].ipis), cpus);
		fig(f, &n, v, "reclaimed_pages", "pages", x1000(ph[p].pages), cpus);
		fig(f, &n, v, "flush_batches", "flushes", x1000(ph[p].batches), cpus);
		/* IPIs per 1000 reclaimed pages, 3 decimals. */
		fig(f, &n, v, "ipis_per_kpage", "IPIs/1000 pages",
		    per_kpage(&ph[p]), cpus);
		fig(f, &n, v, "ipis_per_cpu_per_batch", "IPIs", worst_per_cpu_per_batch(&ph[p]), cpus);
		/* Per-CPU figures for the two main variants only. */
		for (unsigned c = 1; p < TLB_POLICY_COUNT && c < cpus &&
				     n + 4 < TP_MAX_FIGS; c++) {
			char *name = tp_names[n];

			ksnprintf(name, BENCH_FIELD_MAX, "%s@cpu%u", v, c);
			fig(f, &n, name, "ipis_received", "IPIs",
			    x1000(ph[p].cpu[c].ipis_received), 1);
		}
	}
	for (int p = 0; p < 2; p++) {
		const struct ia64_machine *m = tp_model_machine(p);
		const char *v = p == 0 ? "old" : "new";

		fig(f, &n, v, "global_purges", "purges (ia64 model)",
		    x1000(m->cnt.global_purges), m->cfg.ncpus);
		fig(f, &n, v, "ptc_e", "ptc.e loops (ia64 model)",
		    x1000(MODEL_SUM(m, ptc_e_loops_purge)), m->cfg.ncpus);
		fig(f, &n, v, "ptc_ga", "ptc.ga (ia64 model)",
		    x1000(MODEL_SUM(m, ptc_ga)), m->cfg.ncpus);
		fig(f, &n, v, "purge_calls", "calls (ia64 model)",
		    x1000(m->cnt.purge_calls), m->cfg.ncpus);
	}
	bench_report("tlb_purge (seed 003): reclaim's TLB work, x86_64 "
		     "policies measured, ia64 purges modelled", f, n);
	batch_table(ph, nph, size);
	kprintf("tlb_purge: ia64 model (%u CPUs, %u-bit region IDs): purge "
		"calls old %lu new %lu; global purges old %lu new %lu; ptc.e "
		"loops for purges old %lu new %lu, for wrap-arounds old %lu "
		"new %lu; ptc.ga old %lu new %lu; region-ID switches new %lu; "
		"unmaps not modelled (not a job's) %lu, reported late %lu\n",
		old->cfg.ncpus, TP_RID_BITS,
		(unsigned long)old->cnt.purge_calls,
		(unsigned long)new->cnt.purge_calls,
		(unsigned long)old->cnt.global_purges,
		(unsigned long)new->cnt.global_purges,
		(unsigned long)MODEL_SUM(old, ptc_e_loops_purge),
		(unsigned long)MODEL_SUM(new, ptc_e_loops_purge),
		(unsigned long)MODEL_SUM(old, ptc_e_loops_wrap),
		(unsigned long)MODEL_SUM(new, ptc_e_loops_wrap),
		(unsigned long)MODEL_SUM(old, ptc_ga),
		(unsigned long)MODEL_SUM(new, ptc_ga),
		(unsigned long)new->cnt.rid_switches,
		(unsigned long)tp_model_skipped(), (unsigned long)tp_model_late());
	return rc;
}

/* ---- set-up and the run -------------------------------------------- */

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
	uint64_t bad = 0;

	purge_load_stop();
	for (unsigned i = 0; i < tp.njobs; i++) {
		smp_work_wait(i + 1);
		bad += tp.jobs[i].bad_words;
		kprintf("tlb_purge: cpu %u: %lu spaces, %lu page touches\n",
			i + 1, (unsigned long)tp.jobs[i].spaces,
			(unsigned long)tp.jobs[i].touches);
	}
	return bad;
}

/* The run's own checks, each a FAILED line: words and pages read back
 * wrong, a fault of the ia64 model, more than one IPI per batch for a
 * CPU in a batched variant. Returns 1 if any failed. */
static int checks(const struct tp_variant *ph, unsigned nph, uint64_t bad)
{
	int rc = 0;

	if (bad) {
		kprintf("tlb_purge: FAILED: %lu words read back neither zero "
			"nor what their space wrote\n", (unsigned long)bad);
		rc = 1;
	}
	if (purge_bad_pages()) {
		kprintf("tlb_purge: FAILED: %lu streamed pages did not hold "
			"their file's data\n", (unsigned long)purge_bad_pages());
		rc = 1;
	}
	for (int p = 0; p < 2; p++) {
		const struct ia64_machine *m = tp_model_machine(p);

		if (m->fault[0]) {
			kprintf("tlb_purge: FAILED: ia64 model (%s): %s\n",
				p ? "new" : "old", m->fault);
			rc = 1;
		}
	}
	for (unsigned p = 1; p < nph; p++) {
		if (worst_per_cpu_per_batch(&ph[p]) > 1000) {
			kprintf("tlb_purge: FAILED: a CPU got more than one IPI "
				"per batch in variant %s\n", ph[p].name);
			rc = 1;
		}
	}
	return rc;
}

static int tlb_purge_run(enum experiment_mode mode)
{
	const struct tp_size *size = mode == EXPERIMENT_FULL ? &tp_full :
								&tp_quick;
	static struct tp_variant ph[TP_MAX_VARIANTS];
	unsigned cpus = smp_cpus_online(), self = smp_this_cpu(), nph, cut;
	struct addr_space *me = NULL;
	uint64_t low_free, bad = 0, v, direct0, region, pages = 0;
	unsigned batch = RECLAIM_BATCH_DEFAULT;
	bool sweep = mode == EXPERIMENT_FULL;
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
	memset(&tp, 0, sizeof(tp));
	tp.lockstep = kopt.cachemodel[0] != '\0';
	tp_model_init();
	nph = variants_init(ph, batch, sweep);
	purge_load_init(&tp_load_ops);
	if (tp.lockstep) {
		/* Before any job starts: its warm-up rounds, no more. */
		tp.round_limit = TP_WARM_ROUNDS;
		purge_load_limit_rounds(tp.round_limit);
	}
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
		(unsigned long)run_ms(size), batch, RECLAIM_BATCH_DEFAULT,
		nph > TLB_POLICY_COUNT ? "; also batches of 64, 128, 256" : "",
		tlb_pcid_active() ? "on" : "off", tlb_flush_ceiling);
	tlb_switch_to(me);
	my_slot = tp_model_create(me);
	tp_model_switch(0, my_slot);
	*(volatile uint64_t *)PURGE_UVA = 1; /* cat's own buffer */
	tp.njobs = cpus - 1;
	for (unsigned i = 0; i < tp.njobs; i++) {
		tp.jobs[i].cpu = i + 1;
		if (!smp_work_post(i + 1, purge_job_main, &tp.jobs[i])) {
			kprintf("tlb_purge: CPU %u is busy\n", i + 1);
			tp.njobs = i;
			break;
		}
	}
	space_stats(&ss);
	direct0 = ss.direct_reclaims;
	warm_up(size, low_free);
	/* A cache model counts the measured run, every CPU, per reclaimed
	 * page; the ia64 figures of both versions share that one region. */
	model_doorbell_label(TP_MODEL_LABEL);
	region = bench_region_begin_all();
	cut = run_variants(ph, nph, size, my_slot, low_free);
	for (unsigned p = 0; p < nph; p++)
		pages += ph[p].pages;
	bench_region_end(region, pages);
	model_doorbell_label("tlb_purge");
	bad = jobs_stop();
	closing_line(ph, size);
	tlb_switch_to(&kernel_space);
	tp_model_idle(0);
	tp_model_exit(my_slot);
	rc |= report(ph, nph, cpus, size);
	if (cut)
		kprintf("tlb_purge: FAILED: %u of %u variants cut short by the "
			"time cap: no comparison\n", cut, nph);
	space_stats(&ss);
	/* Their IPIs would count in a variant's: none expected, the budget
	 * keeps free memory far above the allocator's watermark. */
	kprintf("tlb_purge: page faults that reclaimed mapped pages "
		"themselves: %lu\n",
		(unsigned long)(ss.direct_reclaims - direct0));
	rc |= checks(ph, nph, bad);
out:
	purge_load_free();
	if (me)
		space_destroy(me);
	tp_model_teardown();
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
