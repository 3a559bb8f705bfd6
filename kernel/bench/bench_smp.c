/*
 * Multi-CPU measurement: calibrate on one CPU, then every participant
 * runs the same iteration count in lock-step rounds:
 *
 *   round r:  barrier -> read clock -> fn(arg, iters) -> read clock
 *
 * Each CPU records its own ticks; bench_aggregate() turns the rounds into
 * wall time over total work. The clock is the TSC, which the boot check
 * (tsc_sync_check) found synchronised across CPUs.
 */
#include "kernel/bench/bench_env.h"
#include "kernel/bench/bench_smp.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/compiler.h"
#include "lib/kprintf.h"
#include "lib/string.h"

struct run {
	const struct bench_params *p;
	const struct bench_clock *clk;
	bench_fn fn;
	void *(*arg_of)(unsigned cpu, void *ctx);
	void *ctx;
	uint64_t iters;
	struct smp_barrier barrier;
	struct bench_samples samples[MAX_CPUS];
	/* Each CPU's window per measured repetition, for the overlap. */
	uint64_t win_start[MAX_CPUS][BENCH_MAX_REPS];
	uint64_t win_end[MAX_CPUS][BENCH_MAX_REPS];
};

static void participant(void *arg)
{
	struct run *r = arg;
	unsigned cpu = smp_this_cpu();
	void *fn_arg = r->arg_of(cpu, r->ctx);
	struct bench_samples *s = &r->samples[cpu];

	bench_samples_init(s, r->iters, 0);
	for (unsigned w = 0; w < r->p->warmup; w++) {
		smp_barrier_wait(&r->barrier);
		r->fn(fn_arg, r->iters);
	}
	for (unsigned rep = 0; rep < r->p->reps; rep++) {
		smp_barrier_wait(&r->barrier);
		r->win_start[cpu][rep] = r->clk->now();
		bench_sample_once(s, r->clk, NULL, r->fn, fn_arg);
		r->win_end[cpu][rep] = r->clk->now();
	}
}

unsigned bench_run_cpus(const struct cpumask *mask,
			const struct bench_params *p, bench_fn fn,
			void *(*arg_of)(unsigned cpu, void *ctx), void *ctx,
			struct bench_result *percpu, unsigned *cpus_out,
			unsigned max, struct bench_result *agg,
			struct bench_overlap *ov)
{
	static struct run run; /* large: not on a kernel stack */
	static uint64_t st[MAX_CPUS], en[MAX_CPUS];
	struct cpumask online;
	unsigned n = 0, ran;
	bool capped;

	kassert(p->reps >= 1 && p->reps <= BENCH_MAX_REPS);
	cpumask_clear(&online);
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		if (cpumask_test(mask, cpu) && smp_cpu_online(cpu)) {
			cpumask_set(&online, cpu);
			n++;
		}
	if (n == 0 || n > max)
		return 0;
	memset(&run, 0, sizeof(run));
	run.p = p;
	run.clk = bench_kernel_clock();
	run.fn = fn;
	run.arg_of = arg_of;
	run.ctx = ctx;
	run.iters = bench_calibrate(run.clk, p, fn,
				    arg_of(smp_this_cpu(), ctx), &capped);
	smp_barrier_init(&run.barrier, n);
	/* smp_run_on() waits for busy slots, so all n reach the barrier. */
	ran = smp_run_on(&online, participant, &run);
	kassert(ran == n);

	for (unsigned cpu = 0, i = 0; cpu < MAX_CPUS && i < n; cpu++) {
		if (!cpumask_test(&online, cpu))
			continue;
		bench_result_from_samples(&percpu[i], &run.samples[cpu],
					  run.clk->hz, NULL);
		percpu[i].capped = capped;
		cpus_out[i++] = cpu;
	}
	bench_aggregate(agg, percpu, n);
	if (ov) {
		ov->reps = p->reps;
		ov->min_permille = BENCH_OVERLAP_FULL;
		ov->max_permille = 0;
		ov->alone_reps = 0;
		for (unsigned rep = 0; rep < p->reps; rep++) {
			unsigned o;

			for (unsigned i = 0; i < n; i++) {
				st[i] = run.win_start[cpus_out[i]][rep];
				en[i] = run.win_end[cpus_out[i]][rep];
			}
			o = bench_window_overlap(st, en, n);
			ov->min_permille = MIN(ov->min_permille, o);
			ov->max_permille = MAX(ov->max_permille, o);
			if (o == 0)
				ov->alone_reps++;
		}
	}
	return n;
}

/* ---- how many CPUs run at once ------------------------------------ */

/* The window opens this long after the last CPU reached the start line. */
#define PARALLEL_LEAD_MS 2
/* A CPU not at the start line this long after it was handed the probe
 * is left out (it counts nothing: the host did not run it). */
#define PARALLEL_ARRIVE_MS 500
/* Loop passes between two clock reads: under QEMU TCG a TSC read takes a
 * lock shared by all vCPUs; reading it in a tight loop on 16 vCPUs would
 * time that lock. A block of passes takes microseconds. */
#define PARALLEL_PASSES_PER_READ 256u
/* Two clock reads further apart than this: the CPU did not run between
 * them (a host that descheduled the vCPU: milliseconds). */
#define PARALLEL_GAP_US 200
#define MS_PER_SEC 1000ull
#define US_PER_SEC 1000000ull
#define TENTHS 10ull

static struct {
	uint64_t start, end; /* TSC window, common to all CPUs; 0: not yet */
	uint64_t gap;	     /* ticks: a longer step between reads is lost */
	unsigned arrived;
	uint64_t ran[MAX_CPUS]; /* ticks of the window each CPU ran */
} probe;

/* Ticks of [start, end) this CPU ran: the steps between two clock reads
 * no longer than probe.gap, from its first read in the window (a CPU
 * that got there late did not run before). */
static uint64_t time_running(uint64_t start, uint64_t end)
{
	const struct bench_clock *clk = bench_kernel_clock();
	volatile uint64_t sink = 0;
	uint64_t ran = 0, prev, t;

	while ((t = clk->now()) < start)
		;
	if (t >= end)
		return 0;
	for (prev = t; prev < end; prev = t) {
		for (unsigned i = 0; i < PARALLEL_PASSES_PER_READ; i++)
			sink = sink + 1;
		t = clk->now();
		if (t - prev <= probe.gap)
			ran += MIN(t, end) - prev;
	}
	return ran;
}

static void probe_cpu(void *arg)
{
	uint64_t start;

	(void)arg;
	atomic_fetch_add_relaxed(&probe.arrived, 1);
	while (!(start = atomic_load_acquire(&probe.start)))
		cpu_relax();
	probe.ran[smp_this_cpu()] = time_running(start, probe.end);
}

unsigned bench_parallel_tenths(const struct cpumask *mask)
{
	const struct bench_clock *clk = bench_kernel_clock();
	uint64_t window = clk->hz * BENCH_PARALLEL_WINDOW_MS / MS_PER_SEC;
	uint64_t lead = clk->hz * PARALLEL_LEAD_MS / MS_PER_SEC;
	uint64_t give_up, total = 0, tenths;
	unsigned self = smp_this_cpu(), n = 0, posted = 0;

	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		n += cpumask_test(mask, cpu) && smp_cpu_online(cpu);
	if (n == 0)
		return 0;
	kassert(cpumask_test(mask, self));
	if (n == 1)
		return TENTHS;
	memset(&probe, 0, sizeof(probe));
	probe.gap = clk->hz * PARALLEL_GAP_US / US_PER_SEC;
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (cpu == self || !cpumask_test(mask, cpu) ||
		    !smp_cpu_online(cpu))
			continue;
		smp_work_wait(cpu);
		posted += smp_work_post(cpu, probe_cpu, NULL);
	}
	give_up = clk->now() + clk->hz * PARALLEL_ARRIVE_MS / MS_PER_SEC;
	while (atomic_load_relaxed(&probe.arrived) < posted &&
	       clk->now() < give_up)
		cpu_relax();
	probe.end = clk->now() + lead + window;
	atomic_store_release(&probe.start, probe.end - window);
	probe.ran[self] = time_running(probe.start, probe.end);
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		if (cpu != self && cpumask_test(mask, cpu) &&
		    smp_cpu_online(cpu))
			smp_work_wait(cpu);
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		total += probe.ran[cpu];
	tenths = total * TENTHS / window;
	return (unsigned)MAX(TENTHS, MIN(tenths, n * TENTHS));
}
