/*
 * Benchmark harness, portable half (see lib/bench.h): iteration growth,
 * measured repetitions, and statistics over the raw samples.
 */
#include "lib/bench.h"
#include "lib/assert.h"
#include "lib/compiler.h"
#include "lib/atomic.h"

/* Picoseconds per second: ns_per_iter is in ns * BENCH_SCALE. */
#define BENCH_SCALED_NS_PER_SEC (BENCH_NSEC_PER_SEC * BENCH_SCALE)

void bench_params_default(struct bench_params *p)
{
	p->reps = BENCH_DEFAULT_REPS;
	p->warmup = BENCH_DEFAULT_WARMUP;
	p->min_time_ns = BENCH_DEFAULT_MIN_TIME_NS;
	p->min_iters = 1;
	p->max_iters = BENCH_DEFAULT_MAX_ITERS;
}

static uint64_t time_one_run(const struct bench_clock *clk, bench_fn fn,
			     void *arg, uint64_t iters)
{
	uint64_t t0 = clk->now();

	fn(arg, iters);
	return clk->now() - t0;
}

uint64_t bench_calibrate(const struct bench_clock *clk,
			 const struct bench_params *p, bench_fn fn, void *arg,
			 bool *capped)
{
	uint64_t min_ticks, iters;

	kassert(clk != NULL && clk->now != NULL && clk->hz > 0);
	kassert(p->min_iters >= 1 && p->min_iters <= p->max_iters);
	min_ticks = stats_muldiv(p->min_time_ns, clk->hz, BENCH_NSEC_PER_SEC);

	if (capped)
		*capped = false;
	for (iters = p->min_iters;; iters *= 2) {
		if (time_one_run(clk, fn, arg, iters) >= min_ticks)
			return iters;
		/* Doubling again would pass max_iters: stop at the cap. */
		if (iters > p->max_iters / 2) {
			if (capped)
				*capped = true;
			return iters;
		}
	}
}

void bench_samples_init(struct bench_samples *s, uint64_t iters,
			unsigned ncounters)
{
	kassert(iters > 0);
	kassert(ncounters <= BENCH_MAX_COUNTERS);
	s->iters = iters;
	s->reps = 0;
	s->ncounters = ncounters;
	for (unsigned r = 0; r < BENCH_MAX_REPS; r++) {
		s->ticks[r] = 0;
		for (unsigned c = 0; c < BENCH_MAX_COUNTERS; c++)
			s->counters[r][c] = 0;
	}
}

static const struct bench_region_ops *region_ops;
static uint64_t next_region_id;

void bench_set_region_ops(const struct bench_region_ops *ops)
{
	region_ops = ops;
}

uint64_t bench_region_begin(void)
{
	const struct bench_region_ops *ops = region_ops;
	uint64_t id;

	if (!ops)
		return 0;
	id = atomic_fetch_add_relaxed(&next_region_id, 1) + 1;
	ops->begin(id);
	return id;
}

uint64_t bench_region_begin_all(void)
{
	const struct bench_region_ops *ops = region_ops;
	uint64_t id;

	if (!ops)
		return 0;
	id = atomic_fetch_add_relaxed(&next_region_id, 1) + 1;
	if (ops->begin_all)
		ops->begin_all(id);
	else
		ops->begin(id);
	return id;
}

void bench_region_end(uint64_t id, uint64_t iters)
{
	const struct bench_region_ops *ops = region_ops;

	if (ops && id)
		ops->end(id, iters);
}

void bench_sample_once(struct bench_samples *s, const struct bench_clock *clk,
		       const struct bench_counters *ctr, bench_fn fn,
		       void *arg)
{
	unsigned r = s->reps;
	uint64_t t0, t1, region;

	kassert(r < BENCH_MAX_REPS);
	kassert(ctr == NULL || ctr->n == s->ncounters);
	kassert(ctr != NULL || s->ncounters == 0);

	region = bench_region_begin();
	/* Counters sit inside the timed window's edges, not around it. */
	t0 = clk->now();
	if (ctr)
		ctr->start(ctr->ctx);
	fn(arg, s->iters);
	if (ctr)
		ctr->stop(ctr->ctx);
	t1 = clk->now();
	bench_region_end(region, s->iters);

	s->ticks[r] = t1 - t0;
	if (ctr)
		ctr->read(ctr->ctx, s->counters[r]);
	s->reps = r + 1;
}

void bench_result_from_samples(struct bench_result *res,
			       const struct bench_samples *s, uint64_t hz,
			       const char *const *counter_names)
{
	uint64_t per_iter[BENCH_MAX_REPS];
	unsigned n = s->reps;

	kassert(n >= 1 && n <= BENCH_MAX_REPS);
	kassert(s->iters > 0 && hz > 0);
	kassert(s->ncounters <= BENCH_MAX_COUNTERS);
	kassert(s->ncounters == 0 || counter_names != NULL);

	res->samples = *s;
	res->hz = hz;
	res->cpus = 1;
	res->capped = false;

	for (unsigned r = 0; r < n; r++)
		per_iter[r] = stats_muldiv(s->ticks[r], BENCH_SCALE, s->iters);
	stats_compute(&res->ticks_per_iter, per_iter, n, per_iter);

	/* floor(floor(ps total) / iters) == floor(ps total / iters) */
	for (unsigned r = 0; r < n; r++)
		per_iter[r] = stats_muldiv(s->ticks[r],
					   BENCH_SCALED_NS_PER_SEC, hz) /
			      s->iters;
	stats_compute(&res->ns_per_iter, per_iter, n, per_iter);

	for (unsigned c = 0; c < BENCH_MAX_COUNTERS; c++) {
		if (c >= s->ncounters) {
			res->counter_names[c] = NULL;
			continue;
		}
		res->counter_names[c] = counter_names[c];
		for (unsigned r = 0; r < n; r++)
			per_iter[r] = stats_muldiv(s->counters[r][c],
						   BENCH_SCALE, s->iters);
		stats_compute(&res->counter_per_iter[c], per_iter, n,
			      per_iter);
	}
}

void bench_aggregate(struct bench_result *agg,
		     const struct bench_result *percpu, unsigned ncpus)
{
	struct bench_samples sum;
	const struct bench_samples *first;
	bool capped = false;

	kassert(ncpus >= 1);
	first = &percpu[0].samples;
	bench_samples_init(&sum, 1, first->ncounters);
	sum.iters = 0;
	sum.reps = first->reps;

	for (unsigned i = 0; i < ncpus; i++) {
		const struct bench_samples *s = &percpu[i].samples;

		kassert(s->reps == first->reps);
		kassert(s->ncounters == first->ncounters);
		kassert(percpu[i].hz == percpu[0].hz);
		sum.iters += s->iters;
		capped |= percpu[i].capped;
		for (unsigned r = 0; r < s->reps; r++) {
			if (s->ticks[r] > sum.ticks[r])
				sum.ticks[r] = s->ticks[r];
			for (unsigned c = 0; c < s->ncounters; c++)
				sum.counters[r][c] += s->counters[r][c];
		}
	}
	bench_result_from_samples(agg, &sum, percpu[0].hz,
				  percpu[0].counter_names);
	agg->cpus = ncpus;
	agg->capped = capped;
}

void bench_run(struct bench_result *res, const struct bench_clock *clk,
	       const struct bench_counters *ctr, const struct bench_params *p,
	       bench_fn fn, void *arg)
{
	struct bench_samples s;
	uint64_t iters;
	bool capped;

	kassert(p->reps >= 1 && p->reps <= BENCH_MAX_REPS);
	iters = bench_calibrate(clk, p, fn, arg, &capped);
	for (unsigned i = 0; i < p->warmup; i++)
		time_one_run(clk, fn, arg, iters);

	bench_samples_init(&s, iters, ctr ? ctr->n : 0);
	for (unsigned r = 0; r < p->reps; r++)
		bench_sample_once(&s, clk, ctr, fn, arg);
	bench_result_from_samples(res, &s, clk->hz, ctr ? ctr->names : NULL);
	res->capped = capped;
}

uint64_t bench_rate_scaled(uint64_t amount, uint64_t ticks, uint64_t hz)
{
	uint64_t per_sec;

	if (ticks == 0)
		return 0;
	per_sec = stats_muldiv(amount, hz, ticks);
	if (per_sec > UINT64_MAX / BENCH_SCALE)
		return UINT64_MAX;
	/* Keep the fraction: redo the division with the scale folded in. */
	if (hz <= UINT64_MAX / BENCH_SCALE)
		return stats_muldiv(amount, hz * BENCH_SCALE, ticks);
	return per_sec * BENCH_SCALE;
}

unsigned bench_window_overlap(const uint64_t *start, const uint64_t *end,
			      unsigned n)
{
	uint64_t first_start, last_start, first_end, last_end;

	kassert(n > 0);
	first_start = last_start = start[0];
	first_end = last_end = end[0];
	for (unsigned i = 0; i < n; i++) {
		kassert(end[i] >= start[i]);
		first_start = MIN(first_start, start[i]);
		last_start = MAX(last_start, start[i]);
		first_end = MIN(first_end, end[i]);
		last_end = MAX(last_end, end[i]);
	}
	if (first_end <= last_start)
		return 0;
	if (last_end == first_start)
		return BENCH_OVERLAP_FULL;
	return (unsigned)((first_end - last_start) * BENCH_OVERLAP_FULL /
			  (last_end - first_start));
}
