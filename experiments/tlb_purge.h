/*
 * tlb_purge: what the files of the tlb_purge experiment share: the run's
 * size, the variants, and the steps of a run. experiments/tlb_purge.c
 * (the experiment's description) sets a run up and runs it;
 * tlb_purge_reclaim.c streams and reclaims on CPU 0, the variants taking
 * turns; tlb_purge_report.c prints the tables, the figures and the run's
 * own checks. The feed to the ia64 model is experiments/tlb_purge_model.h,
 * the load workloads/purge_files.h and workloads/purge_jobs.h.
 *
 * One run at a time, on CPU 0: the state is the files'.
 */
#ifndef EXPERIMENTS_TLB_PURGE_H
#define EXPERIMENTS_TLB_PURGE_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/bench_output.h"
#include "lib/config.h"
#include "mm/reclaim.h"
#include "mm/tlb.h"

#define TP_WARM_ROUNDS 2	     /* job rounds before measuring */
#define TP_MS 1000ull
#define TP_SWEEP_COUNT 3	     /* extra batch sizes (tlb_purge.c) */
#define TP_MAX_VARIANTS (TLB_POLICY_COUNT + TP_SWEEP_COUNT)

struct tp_size {
	uint64_t phase_pages;	/* pages each variant reclaims (at least) */
	uint64_t run_ms;	/* TSC time cap of the warm-up, and of reclaim */
	uint64_t budget_pages;	/* memory the load may take */
};

/* A reclaim policy with its batch, and what its passes cost. */
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

/* A variant has reclaimed its pages. */
static inline bool tp_variant_done(const struct tp_variant *ph,
				   const struct tp_size *size)
{
	return ph->pages >= size->phase_pages;
}

/* ---- tlb_purge_reclaim.c: CPU 0's stream and reclaim --------------- */

/* Starts a run's reclaim: kswapd's turn comes first; lockstep (under a
 * cache model) counts out the jobs' rounds. Call before the jobs start. */
void tp_reclaim_init(bool lockstep);
/* The run's time cap (warm-up, and reclaim), in ms of TSC time. */
uint64_t tp_run_ms(const struct tp_size *size);
/* Streams until the load has taken its budget (free pages below
 * low_free, or every file page cached) and every job has run
 * TP_WARM_ROUNDS rounds, or the time cap; prints how long it took. */
void tp_warm_up(const struct tp_size *size, uint64_t low_free);
/*
 * Streams, and under pressure (free pages below low_free, or no memory
 * to stream) reclaims one pass at a time, the nph variants ph[] taking
 * turns, until each has its pages or the time cap; my_slot is CPU 0's
 * own space in the ia64 model. Prints a progress line in the seed's
 * style and, at the end, what each variant did. Returns how many
 * variants the cap left short of their pages.
 */
unsigned tp_run_variants(struct tp_variant *ph, unsigned nph,
			 const struct tp_size *size, int my_slot,
			 uint64_t low_free);

/* ---- tlb_purge_report.c: what a run prints ------------------------- */

/* The seed's closing lines: the naive (ph[0]) and batched (ph[1])
 * variants' IPIs when both did their pages, else how far each got; then
 * the ia64 model's global purges. */
void tp_closing_line(const struct tp_variant *ph, const struct tp_size *size);
/* The tables and figures of the nph variants ph[] on cpus CPUs, and the
 * ia64 model's. A variant the time cap left short of its pages has no
 * figures: a BENCH_CUT_SHORT line instead, and the result is 1. */
int tp_report(const struct tp_variant *ph, unsigned nph, unsigned cpus,
	      const struct tp_size *size);
/* The run's own checks, each a FAILED line: bad words the jobs read
 * back, streamed pages with wrong data, a fault of the ia64 model, more
 * than one IPI per batch for a CPU in a batched variant. Returns 1 if
 * any failed. */
int tp_checks(const struct tp_variant *ph, unsigned nph, uint64_t bad);

#endif
