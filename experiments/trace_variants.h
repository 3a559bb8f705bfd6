/*
 * Tracing variants shared by the tbench and kbuild experiments (seeds
 * 000 and 004): each names a trace channel configuration, the workload
 * runs unchanged under it, and the experiment reports its figures under
 * the variant's name.
 *
 *   seed 000: trace_off, trace_wb, trace_wc, trace_uc (buffer memory type)
 *   seed 004: trace_inline_aligned vs trace_outofline_shared (LTTng 0.108:
 *             inlined fast path, commit counters on their own lines) and
 *             trace_array vs trace_list (0.110: page-pointer array)
 *   full mode: every combination of the three seed-004 switches,
 *             trace_<inline|outofline>_<aligned|shared>_<array|list>
 *
 * All traced variants are flight recorders (overwrite mode) with every
 * event on, so no variant is slowed by a full buffer.
 */
#ifndef EXPERIMENTS_TRACE_VARIANTS_H
#define EXPERIMENTS_TRACE_VARIANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/experiment.h"
#include "lib/bench.h"
#include "lib/bench_output.h"
#include "trace/trace.h"

struct trace_variant {
	const char *name;
	bool on;                       /* false: trace_off */
	enum memtype memtype;
	enum rb_page_index page_index;
	bool commit_packed;
	bool outofline;
};

/* The seed variants, in report order. */
extern const struct trace_variant trace_variants[];
extern const size_t trace_variants_count;

/* The eight combinations of the seed-004 switches (WB buffers). */
#define TRACE_COMBOS 8
/* Combination i (0 .. TRACE_COMBOS - 1); names live in a static table. */
const struct trace_variant *trace_combo(unsigned i);

/*
 * Retype a buffer-sized block WC and back, once per boot, so the direct
 * map is split where trace buffers will go before any variant is timed
 * (splits are permanent; trace_off must not run on larger pages than the
 * others). Returns nothing; a failure only loses that fairness (printed).
 */
void trace_variants_prepare(void);

/*
 * Start the channel for v on every online CPU with every event on
 * (nothing for trace_off). Returns 0, or -1 after a message.
 */
int trace_variant_start(const struct trace_variant *v);

/*
 * Stop and tear down. Returns the events emitted while it ran (recorded
 * or lost), 0 for trace_off.
 */
uint64_t trace_variant_stop(const struct trace_variant *v);

/*
 * Print one line for the run: variant, memory type, switches, events per
 * operation (events / ops, two decimals; op names one, as "file"), and
 * whether this platform honours memory types (the measured verdict of
 * the environment header), so no TCG figure reads as a hardware finding.
 */
void trace_variant_describe(const char *experiment,
			    const struct trace_variant *v, uint64_t events,
			    uint64_t ops, const char *op);

/*
 * The work one traced run added, deterministic under QEMU -icount (one
 * TSC tick per guest instruction; on one CPU the figures repeat exactly):
 * ticks[0..reps) are the run's repetitions, each ops operations. Appends
 * to figs, as experiment exp and variant v->name, metric "insns_per_op"
 * (unit, e.g. "insns/request" for op "request") and, for a traced variant once trace_off
 * went through here (its median kept in *off_ticks), "slowdown_insns" (%:
 * the operations per instruction lost against trace_off, 1 - off / ticks,
 * as the seeds count throughput lost), and prints both.
 * Without -icount the ticks are TCG's time, not instructions, and nothing
 * is added. Never a hardware figure: the cache model's cycles for the
 * same runs come from tools/model/model.py. Returns the figures added
 * (<= room).
 */
size_t trace_work_figures(const char *exp, const struct trace_variant *v,
			  const uint64_t *ticks, unsigned reps, uint64_t ops,
			  const char *op, const char *unit, uint64_t *off_ticks,
			  struct bench_figure *figs, size_t room);

/*
 * An experiment's workload, as the traced runs see it: run() measures
 * it reps times under the variant name given, appends its figures at
 * figs[*nfig] (figs holds room), and leaves each repetition's ticks in
 * ticks[0..reps); it returns 0, or 1 on a failure. ops: the operations
 * of one repetition, each an op ("file"); unit names the work figure's
 * ("insns/file"). arg is the experiment's. Set off_ticks to 0 before
 * the first variant: trace_off's median is kept there for the others.
 */
struct traced_workload {
	const char *exp, *op, *unit;
	uint64_t ops;
	unsigned reps;
	int (*run)(void *arg, const char *variant, uint64_t *ticks);
	void *arg;
	struct bench_figure *figs;
	size_t *nfig, room;
	uint64_t off_ticks;
};

/*
 * The shell settings every experiment with traced variants declares,
 * last in its parameter table: reps= (reps_help says its defaults) and
 * trace=, read by trace_variants_wanted().
 */
#define TRACED_WORKLOAD_PARAMS(reps_help)                                     \
	{"reps", 1, BENCH_MAX_REPS, reps_help},                               \
	{"trace", 0, 1, "1: also the traced variants (default), 0: not"}

/*
 * The shell setting trace= (TRACED_WORKLOAD_PARAMS): false when this run
 * set trace=0, so the experiment skips its traced variants.
 */
bool trace_variants_wanted(void);

/* Repetitions of each traced variant in quick mode unless trace.reps=
 * (kernel command line) or the shell's reps= asks for others. */
#define TRACE_QUICK_REPS 1

/*
 * The repetitions a run in mode makes of each traced variant (and
 * kbuild of each copy-routine variant), given asked, the experiment's
 * own count (its size's reps): full mode, and a shell run that set
 * reps=, take asked; quick mode otherwise takes trace.reps= from the
 * kernel command line (TRACE_QUICK_REPS unless set), with a cache model
 * or without, so that make run and make run MODEL= do the same work
 * (make bench-seeds sets trace.reps=3 for the seed table's spread).
 */
unsigned trace_variants_reps(enum experiment_mode mode, unsigned asked);

/*
 * The traced half of a tbench- or kbuild-like run, written once: the
 * repetitions first (trace_variants_reps() of mode and *reps), stored in
 * *reps, the experiment's count that w->run() reads, and in w->reps;
 * then the direct map split for the buffers (trace_variants_prepare()),
 * then trace_variant_run() of w under the first nseed seed variants and,
 * in full mode when combos is set, under every combination of the
 * seed-004 switches. Stops at the first failure. Returns 0, or 1 on a
 * failure.
 */
int trace_variants_run_all(struct traced_workload *w,
			   enum experiment_mode mode, unsigned *reps,
			   size_t nseed, bool combos);

/*
 * One traced run of w under v, the same for every experiment: start the
 * channel, run, stop, print the variant's line (events per operation),
 * then, under QEMU -icount and when the run succeeded, the work figures
 * (trace_work_figures()). Returns 0, or 1 when the channel did not start
 * or the run failed.
 */
int trace_variant_run(struct traced_workload *w,
		      const struct trace_variant *v);

/*
 * Per-event cost of the fast path on this CPU for each memory type the
 * seed compares (WB, WC, UC): n timed emits of a 16-byte payload, median
 * and 99th percentile in cycles, printed and appended to figs as
 * experiment exp, variant trace_wb/trace_wc/trace_uc, metrics
 * event_cycles and event_cycles_p99. Returns the figures added.
 */
size_t trace_event_cost(const char *exp, struct bench_figure *figs,
			size_t room, unsigned n);

#endif
