/*
 * Benchmark harness, portable half: calibration, repetitions and
 * statistics around a measured function. It knows nothing of the CPU:
 * time comes from a struct bench_clock (the kernel passes the TSC and
 * its calibrated frequency, host tests a fake clock), and optional event
 * counts from a struct bench_counters (the kernel's PMU backend, or
 * NULL).
 *
 * Execution and statistics are kept apart so that a multi-CPU runner in
 * the kernel can do the execution itself:
 *
 *   single CPU:  bench_run() = bench_calibrate() + warm-up
 *                + reps x bench_sample_once() + bench_result_from_samples()
 *
 *   N CPUs:      iters = bench_calibrate() on one CPU, then on every CPU
 *                behind a start barrier: reps x bench_sample_once() into
 *                that CPU's struct bench_samples; afterwards, on one CPU,
 *                bench_result_from_samples() per CPU and
 *                bench_aggregate() over all of them.
 *
 * Units. Raw samples are clock ticks per repetition. Derived figures are
 * fixed-point integers scaled by 10^BENCH_SCALE_DIGITS (milli-units):
 * ticks_per_iter 1500 means 1.5 ticks per iteration, ns_per_iter 1500
 * means 1.5 ns. The clock read itself (two now() calls per repetition)
 * is included; calibrating to a minimum run time keeps it negligible.
 */
#ifndef LIB_BENCH_H
#define LIB_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/stats.h"

/* Derived per-iteration figures are scaled by 10^3 (milli-units). */
#define BENCH_SCALE_DIGITS 3
#define BENCH_SCALE 1000ull

#define BENCH_MAX_REPS 32
#define BENCH_MAX_COUNTERS 4
#define BENCH_DEFAULT_REPS 7
#define BENCH_DEFAULT_WARMUP 1
/* One repetition should last at least this long (10 ms). */
#define BENCH_DEFAULT_MIN_TIME_NS 10000000ull
/* Iteration growth stops here even if the minimum time is not reached. */
#define BENCH_DEFAULT_MAX_ITERS (1ull << 40)
#define BENCH_NSEC_PER_SEC 1000000000ull

struct bench_clock {
	uint64_t (*now)(void);	/* monotonic on one CPU */
	uint64_t hz;		/* ticks per second, > 0 */
	const char *name;	/* e.g. "tsc" */
};

/*
 * Optional event counters read around each measured repetition. start()
 * zeroes and enables the n events, stop() freezes them, read() stores
 * the n counts since start(). ctx is passed back to each call.
 */
struct bench_counters {
	unsigned n;			/* <= BENCH_MAX_COUNTERS */
	const char *const *names;	/* n names, e.g. "llc_misses" */
	void (*start)(void *ctx);
	void (*stop)(void *ctx);
	void (*read)(void *ctx, uint64_t *values);
	void *ctx;
};

/*
 * Optional region marks around every measured repetition, for a timing
 * model that reports per region (the kernel's cache-model doorbell).
 * begin(id) comes before the repetition's first clock read, end(id)
 * after its last, so the marks stay out of the timed window; end() also
 * says how many iterations the repetition ran, so a model can report
 * per-iteration figures. Ids are unique per boot and increase.
 */
struct bench_region_ops {
	void (*begin)(uint64_t id);
	void (*end)(uint64_t id, uint64_t iters); /* iterations it ran */
	/* A region whose work runs on several CPUs (NULL: begin is used). */
	void (*begin_all)(uint64_t id);
};

/* Install ops (NULL: no marks). Set once, before experiments run. */
void bench_set_region_ops(const struct bench_region_ops *ops);

/*
 * Mark a measured section that bench_run() does not time (an experiment
 * with its own clock): begin returns the region's id, unique per boot
 * (0 when no ops are installed: nothing is marked); end closes it with
 * the units of work it held (0: not counted). Ids share bench_run()'s
 * sequence. The section's label is the experiment's business.
 */
uint64_t bench_region_begin(void);
void bench_region_end(uint64_t id, uint64_t iters);

/*
 * As bench_region_begin(), for a section whose work this CPU hands to
 * several CPUs and waits for (client/server pairs, parallel build
 * workers): the model counts the work of every CPU that ran during the
 * region, not only this one's. Close it with bench_region_end() on the
 * same CPU. Returns the id, 0 when no ops are installed.
 */
uint64_t bench_region_begin_all(void);

/* The measured function: do 'iters' iterations of the work. */
typedef void (*bench_fn)(void *arg, uint64_t iters);

struct bench_params {
	unsigned reps;		/* measured repetitions, 1..BENCH_MAX_REPS */
	unsigned warmup;	/* unmeasured runs at the chosen count */
	uint64_t min_time_ns;	/* each repetition lasts at least this */
	uint64_t min_iters;	/* iteration growth starts here, >= 1 */
	uint64_t max_iters;	/* ... and stops here */
};

/* Raw measurements of one CPU: what execution hands to statistics. */
struct bench_samples {
	uint64_t iters;		/* iterations in every repetition */
	unsigned reps;		/* repetitions recorded so far */
	unsigned ncounters;
	uint64_t ticks[BENCH_MAX_REPS];
	uint64_t counters[BENCH_MAX_REPS][BENCH_MAX_COUNTERS];
};

struct bench_result {
	struct bench_samples samples;
	uint64_t hz;
	unsigned cpus;		/* 1, or the CPU count of an aggregate */
	bool capped;		/* max_iters reached before min_time_ns */
	/* Per repetition: ticks * BENCH_SCALE / iters. */
	struct stats ticks_per_iter;
	/* Per repetition: nanoseconds * BENCH_SCALE / iters. */
	struct stats ns_per_iter;
	/* Per repetition: events * BENCH_SCALE / iters, per counter. */
	const char *counter_names[BENCH_MAX_COUNTERS];
	struct stats counter_per_iter[BENCH_MAX_COUNTERS];
};

/* Defaults: 7 repetitions, 1 warm-up run, 10 ms per repetition. */
void bench_params_default(struct bench_params *p);

/*
 * Run fn with iters = min_iters, 2*min_iters, 4*min_iters, ... until one
 * run lasts at least min_time_ns (or max_iters is reached; *capped then
 * says so, if not NULL). These runs double as the first warm-up. Returns
 * the chosen count.
 */
uint64_t bench_calibrate(const struct bench_clock *clk,
			 const struct bench_params *p, bench_fn fn, void *arg,
			 bool *capped);

/* Start an empty sample set for 'iters' iterations per repetition. */
void bench_samples_init(struct bench_samples *s, uint64_t iters,
			unsigned ncounters);

/*
 * Run one measured repetition of s->iters iterations and append its
 * ticks (and counter values, if ctr is not NULL) to s.
 */
void bench_sample_once(struct bench_samples *s, const struct bench_clock *clk,
		       const struct bench_counters *ctr, bench_fn fn,
		       void *arg);

/*
 * Statistics over recorded samples (pure; no clock, no counters).
 * counter_names may be NULL when s->ncounters is 0.
 */
void bench_result_from_samples(struct bench_result *res,
			       const struct bench_samples *s, uint64_t hz,
			       const char *const *counter_names);

/*
 * Combine the results of CPUs that ran the same repetitions at the same
 * time (started behind one barrier). Repetition r of the aggregate has
 * the sum of the CPUs' iterations and lasts as long as the slowest CPU's
 * repetition r, so its per-iteration cost is wall time over total work
 * (the inverse of throughput). Counter values are summed. All inputs
 * must have the same reps and ncounters.
 */
void bench_aggregate(struct bench_result *agg,
		     const struct bench_result *percpu, unsigned ncpus);

/*
 * How well n CPUs' windows [start[i], end[i]) of one repetition
 * overlapped: the time all of them were running (latest start to
 * earliest end) over the span from the earliest start to the latest end,
 * in per mille. 1000: they ran exactly together; 0: some CPU ended
 * before another started, so at least one ran alone. The aggregate of
 * bench_aggregate() assumes the CPUs ran together; this says whether they
 * did. n == 1 gives 1000.
 */
#define BENCH_OVERLAP_FULL 1000u
unsigned bench_window_overlap(const uint64_t *start, const uint64_t *end,
			      unsigned n);

/* Calibrate, warm up, measure p->reps repetitions, compute statistics. */
void bench_run(struct bench_result *res, const struct bench_clock *clk,
	       const struct bench_counters *ctr, const struct bench_params *p,
	       bench_fn fn, void *arg);

/*
 * Ticks to a rate scaled by BENCH_SCALE: 'amount' units of work done in
 * 'ticks' at 'hz' -> units per second * BENCH_SCALE, e.g. bytes in a
 * run to bytes/s. Saturates; returns 0 when ticks is 0.
 */
uint64_t bench_rate_scaled(uint64_t amount, uint64_t ticks, uint64_t hz);

#endif
