/*
 * Summary statistics over sets of uint64 samples, in integers only.
 *
 * The kernel is built without floating point (-mno-sse), so every
 * benchmark figure is an integer, usually a fixed-point one: a value
 * "scaled by 10^3" (milli-units) stores 123.456 ns as 123456. The
 * statistics do not care about the scale; stats_fmt_fixed() puts the
 * decimal point back when printing.
 *
 * A set is a benchmark's repetitions (7..a few hundred) or a latency
 * distribution (tens of thousands of samples). Sorting is a heapsort:
 * O(n log n) on any input, with no allocation, no recursion and no libc.
 */
#ifndef LIB_STATS_H
#define LIB_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Relative figures (spread, relative MAD) are in parts per million. */
#define STATS_PPM 1000000ull

/* Relative spread when the median is 0 but the samples differ. */
#define STATS_PPM_UNDEFINED UINT64_MAX

struct stats {
	size_t n;
	uint64_t min;
	uint64_t max;
	/* Middle sample; for even n the floor of the two middle ones' mean. */
	uint64_t median;
	/* Floor of the exact arithmetic mean (no overflow for any input). */
	uint64_t mean;
	/* Median absolute deviation from the median, same rule as median. */
	uint64_t mad;
	/*
	 * (max - min) / median and mad / median, in ppm: 0 when the
	 * numerator is 0, else STATS_PPM_UNDEFINED when the median is 0.
	 */
	uint64_t spread_ppm;
	uint64_t mad_ppm;
};

/* Sort v[0..n) ascending, in place, in O(n log n). */
void stats_sort_u64(uint64_t *v, size_t n);

/*
 * Summarise samples[0..n), n >= 1. scratch must hold n values; it may be
 * samples itself, in which case samples end up reordered.
 */
void stats_compute(struct stats *st, const uint64_t *samples, size_t n,
		   uint64_t *scratch);

/*
 * floor(a * b / c) with a 128-bit intermediate product, so no precision
 * is lost for any 64-bit inputs; saturates at UINT64_MAX when the result
 * does not fit. c must not be 0.
 */
uint64_t stats_muldiv(uint64_t a, uint64_t b, uint64_t c);

/* 10^e for e <= 19 (the largest power of ten in a uint64). */
uint64_t stats_pow10(unsigned e);

/*
 * Write value / 10^scale as a decimal with exactly 'decimals' digits
 * after the point (none and no point when decimals is 0), rounding half
 * up when decimals < scale. scale and decimals are at most 18.
 * Returns the length it needed, like ksnprintf().
 * Example: (123456, 3, 1) -> "123.5"; (5, 3, 3) -> "0.005".
 */
int stats_fmt_fixed(char *buf, size_t size, uint64_t value, unsigned scale,
		    unsigned decimals);

#endif
