/*
 * Reading a latency sweep: is there a cache hierarchy? A dependent-load
 * chase over working sets from a few KiB to several times the last-level
 * cache costs little while the set fits a cache and jumps where it stops
 * fitting (a "knee"); on a platform that models no caches the line is
 * flat. This file turns the points into knees and a verdict; the
 * measurement is kernel/bench/cache_sweep.c. Pure arithmetic, host-tested.
 */
#ifndef LIB_CACHE_KNEE_H
#define LIB_CACHE_KNEE_H

#include <stddef.h>
#include <stdint.h>
#include "lib/bench_output.h"

/* A step up of at least this (tenths) from one size to the next. */
#define CACHE_KNEE_RATIO_X10 13
/* Largest over smallest latency: at least this (tenths) means caches... */
#define CACHE_MODELLED_RATIO_X10 20
/* ... at most this means a flat line: nothing cached differently. */
#define CACHE_FLAT_RATIO_X10 13

#define CACHE_SWEEP_MAX_POINTS 24

struct cache_point {
	uint64_t bytes;		/* working set */
	uint64_t latency;	/* per load, any unit, > 0; 0: not measured */
};

struct cache_knees {
	unsigned n;
	uint64_t after_bytes[CACHE_SWEEP_MAX_POINTS]; /* last size before */
	unsigned ratio_x10[CACHE_SWEEP_MAX_POINTS];   /* the step, tenths */
	unsigned overall_x10;	/* largest / smallest latency, tenths */
};

/*
 * pts[0..n) in increasing bytes. Fills *k with the knees (consecutive
 * measured points whose latency grows by CACHE_KNEE_RATIO_X10 or more)
 * and returns BENCH_YES when the latency over the sweep grows by
 * CACHE_MODELLED_RATIO_X10 or more with at least one knee, BENCH_NO when
 * it stays within CACHE_FLAT_RATIO_X10 over a sweep of at least three
 * measured points, BENCH_UNKNOWN otherwise.
 */
enum bench_tristate cache_knees_find(const struct cache_point *pts, size_t n,
				     struct cache_knees *k);

#endif
