/*
 * tlb_purge_reclaim: CPU 0's part of a tlb_purge run (see
 * experiments/tlb_purge.h). It streams the files through the page cache
 * and, under pressure, reclaims one pass at a time, the variants taking
 * turns so that each meets the same pages; kswapd and direct reclaim
 * alternate as the ia64 model's inputs. What each pass cost (IPIs,
 * flushes, pages, TSC time, per CPU) is added to its variant.
 */
#include "experiments/tlb_purge.h"
#include "arch/ia64/machine.h"
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/tlb.h"
#include "arch/x86_64/tsc.h"
#include "experiments/tlb_purge_model.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/kprintf.h"
#include "lib/stats.h"
#include "mm/page_alloc.h"
#include "mm/reclaim.h"
#include "mm/tlb.h"
#include "workloads/purge_files.h"
#include "workloads/purge_jobs.h"

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

/* The run's reclaim. */
static struct {
	bool kswapd_turn;
	bool lockstep;		/* the jobs' rounds are counted out */
} tp;

void tp_reclaim_init(bool lockstep)
{
	tp.kswapd_turn = false;
	tp.lockstep = lockstep;
}

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

uint64_t tp_run_ms(const struct tp_size *size)
{
	return size->run_ms * (tp.lockstep ? TP_LOCKSTEP_CAP_FACTOR : 1);
}

/* Reclaim then starts under pressure, with the jobs' pages in place. In
 * lockstep the jobs' warm-up rounds come first, then the stream alone. */
void tp_warm_up(const struct tp_size *size, uint64_t low_free)
{
	uint64_t t0 = rdtsc();
	uint64_t end = t0 + stats_muldiv(tp_run_ms(size), tsc_hz(), TP_MS);

	if (tp.lockstep)
		purge_jobs_advance(0, end); /* the rounds allowed at the start */
	while (rdtsc() < end) {
		bool full = page_alloc_free_pages() < low_free ||
			    purge_cache_pages() == PURGE_CACHE_SLOTS;

		if (full && purge_jobs_done_rounds(TP_WARM_ROUNDS))
			break;
		if (!full && !purge_stream())
			break;
	}
	kprintf("tlb_purge: warm-up: %lu ms, the page cache holds %u pages of the files\n",
		(unsigned long)stats_muldiv(rdtsc() - t0, TP_MS, tsc_hz()),
		purge_cache_pages());
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
		if (!tp_variant_done(&ph[p], size) && (!v || ph[p].pages < v->pages))
			v = &ph[p];
	kassert(v);
	return v;
}

/*
 * A pass goes to the variant furthest behind in pages, so each meets the
 * same mix of pages on the LRU (cat's, the toolchain's, the heaps') over
 * the same stretch of the run, as sequential phases would not, and a
 * time cap leaves them all about as far.
 */
unsigned tp_run_variants(struct tp_variant *ph, unsigned nph,
			 const struct tp_size *size, int my_slot,
			 uint64_t low_free)
{
	uint64_t t0 = rdtsc(), next = t0 + tsc_hz();
	uint64_t end = t0 + stats_muldiv(tp_run_ms(size), tsc_hz(), TP_MS);
	unsigned left = nph;

	uint64_t passes = 0;

	while (left && rdtsc() < end) {
		if (!purge_stream() || page_alloc_free_pages() < low_free) {
			struct tp_variant *v = behind(ph, nph, size);

			if (tp.lockstep &&
			    !purge_jobs_advance(TP_LOCKSTEP_ROUNDS, end))
				break;
			reclaim_pass(v, my_slot);
			left -= tp_variant_done(v, size);
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
