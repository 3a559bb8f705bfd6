/*
 * tlb_purge_report: what a tlb_purge run prints (see
 * experiments/tlb_purge.h): the seed's closing lines, the x86_64 table
 * per policy and CPU, the figures (@@RESULT) of every variant and of the
 * two modelled ia64 versions, the table by batch size with each batched
 * variant's gain over naive, the ia64 model's counters, and the run's
 * own checks.
 */
#include "experiments/tlb_purge.h"
#include "arch/ia64/machine.h"
#include "experiments/tlb_purge_model.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/bench.h"
#include "lib/bench_output.h"
#include "lib/kprintf.h"
#include "lib/stats.h"
#include "workloads/purge_files.h"

#define TP_FIG_SCALE 3
#define TP_MAX_FIGS 80

void tp_closing_line(const struct tp_variant *ph, const struct tp_size *size)
{
	if (tp_variant_done(&ph[0], size) && tp_variant_done(&ph[1], size))
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

		if (!tp_variant_done(&ph[0], size) || !tp_variant_done(&ph[p], size))
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

/* A variant the time cap left short of its pages has no figures: its
 * IPIs would read as a policy's cost. */
int tp_report(const struct tp_variant *ph, unsigned nph, unsigned cpus,
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

		if (!tp_variant_done(&ph[p], size)) {
			bench_missing("tlb_purge", v, NULL, BENCH_CUT_SHORT,
				      "the %lu ms time cap stopped reclaim "
				      "after %lu of its %lu pages (%lu "
				      "passes)", (unsigned long)tp_run_ms(size),
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

int tp_checks(const struct tp_variant *ph, unsigned nph, uint64_t bad)
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
