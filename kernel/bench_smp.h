/*
 * Running one measured function on several CPUs at once: every
 * repetition starts behind a barrier, so the CPUs really overlap, and the
 * result is both per CPU and aggregate (lib/bench.h, bench_aggregate()).
 */
#ifndef KERNEL_BENCH_SMP_H
#define KERNEL_BENCH_SMP_H

#include "kernel/smp_call.h"
#include "lib/bench.h"

/*
 * Run fn on every online CPU of mask (the caller included if in mask).
 * The iteration count is calibrated once on the calling CPU; then
 * p->warmup + p->reps rounds, each started by a barrier. fn gets
 * arg_of(cpu, ctx) as its argument. percpu[] receives one result per
 * participating CPU (in CPU order, at most max), *cpus_out their ids,
 * agg the aggregate, *ov (if not NULL) how well the CPUs' windows
 * overlapped. Returns the number of CPUs that ran, 0 on error.
 */
struct bench_overlap {
	unsigned reps;		/* measured repetitions */
	unsigned min_permille;	/* worst repetition (bench_window_overlap) */
	unsigned max_permille;	/* best repetition */
	unsigned alone_reps;	/* repetitions where some CPU ran alone */
};
unsigned bench_run_cpus(const struct cpumask *mask,
			const struct bench_params *p, bench_fn fn,
			void *(*arg_of)(unsigned cpu, void *ctx), void *ctx,
			struct bench_result *percpu, unsigned *cpus_out,
			unsigned max, struct bench_result *agg,
			struct bench_overlap *ov);

#endif
