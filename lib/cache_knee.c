/*
 * Knees and verdict of a latency sweep (see cache_knee.h).
 */
#include "lib/cache_knee.h"
#include "lib/string.h"

#define TENTHS 10

enum bench_tristate cache_knees_find(const struct cache_point *pts, size_t n,
				     struct cache_knees *k)
{
	uint64_t lo = UINT64_MAX, hi = 0, prev = 0, prev_bytes = 0;
	unsigned measured = 0;

	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < n; i++) {
		uint64_t l = pts[i].latency;

		if (l == 0)
			continue;
		measured++;
		lo = l < lo ? l : lo;
		hi = l > hi ? l : hi;
		if (prev && l * TENTHS >= prev * CACHE_KNEE_RATIO_X10 &&
		    k->n < CACHE_SWEEP_MAX_POINTS) {
			k->after_bytes[k->n] = prev_bytes;
			k->ratio_x10[k->n++] =
				(unsigned)(l * TENTHS / prev);
		}
		prev = l;
		prev_bytes = pts[i].bytes;
	}
	if (measured < 2)
		return BENCH_UNKNOWN;
	k->overall_x10 = (unsigned)(hi * TENTHS / lo);
	if (k->overall_x10 >= CACHE_MODELLED_RATIO_X10 && k->n > 0)
		return BENCH_YES;
	if (k->overall_x10 <= CACHE_FLAT_RATIO_X10 && measured >= 3)
		return BENCH_NO;
	return BENCH_UNKNOWN;
}
