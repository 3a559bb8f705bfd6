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

/*
 * How many of the CPUs of mask the platform runs at once, measured, in
 * tenths of a CPU (19: 1.9 CPUs). Under QEMU TCG each vCPU is a host
 * thread: with more vCPUs than free host cores, or a loaded host, they
 * take turns, and work that needs them together (spinning pairs, TLB
 * shootdowns, barriers) waits for host time slices. The probe: once
 * every CPU of mask is at a start line, each spins through one common
 * window of BENCH_PARALLEL_WINDOW_MS (the TSC is synchronised), reading
 * the clock every few microseconds of work; a step between two reads of
 * more than 200 us is time the host did not run that CPU (stolen time,
 * as a hypervisor would report it). The CPUs' running times, summed,
 * over the window: how many ran at once on average. Under QEMU -icount
 * the vCPUs take turns on one host thread and the clock counts every
 * vCPU's instructions, so the probe finds 1.0 there, as it is. The
 * result is a snapshot of the host's load, clamped to 1..CPUs of mask.
 * The caller must be in mask; the other CPUs of mask must be idle.
 * Returns 0 when mask has no online CPU.
 */
#define BENCH_PARALLEL_WINDOW_MS 100
unsigned bench_parallel_tenths(const struct cpumask *mask);

#endif
