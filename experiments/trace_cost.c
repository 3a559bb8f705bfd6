/*
 * The trace_cost experiment: what one 16-byte trace event costs on the
 * fast path alone, per buffer memory type (WB, WC, UC), with no workload
 * and one CPU. The measurement itself, trace_event_cost(), is shared with
 * tbench and lives in experiments/trace_variants.c.
 */
#include "experiments/trace_variants.h"
#include "kernel/bench/env_report.h"
#include "kernel/experiment.h"
#include "lib/bench.h"

/* Figures of the trace_cost experiment: 3 memory types x 2 metrics. */
#define TRACE_COST_FIGS 6
#define TRACE_COST_SAMPLES_QUICK 20000
#define TRACE_COST_SAMPLES_FULL 200000

/*
 * The fast path alone (make run ICOUNT=1 KCMDLINE=run=trace_cost gives
 * instructions per event): no workload, one CPU.
 */
static int trace_cost_run(enum experiment_mode mode)
{
	static struct bench_figure figs[TRACE_COST_FIGS];
	size_t n;

	bench_env_report();
	n = trace_event_cost("trace_cost", figs, TRACE_COST_FIGS,
			     mode == EXPERIMENT_FULL ?
				     TRACE_COST_SAMPLES_FULL :
				     TRACE_COST_SAMPLES_QUICK);
	if (n == 0)
		return 1;
	bench_report("trace fast path: one 16-byte event per memory type",
		     figs, n);
	return 0;
}

EXPERIMENT(trace_cost, "trace_cost",
	   "cycles (instructions under ICOUNT=1) of one 16-byte trace event, "
	   "median and p99, buffers WB, WC and UC",
	   "000", 0, trace_cost_run);
