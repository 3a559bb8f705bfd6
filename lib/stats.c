/*
 * Summary statistics over sets of uint64 samples, integers only
 * (see lib/stats.h for why).
 */
#include "lib/stats.h"
#include "lib/assert.h"
#include "lib/kprintf.h"

#define U32_MASK 0xffffffffull
#define U64_BITS 64
#define STATS_MAX_POW10 19
#define STATS_MAX_FIXED_DIGITS 18

/*
 * Move v[root] down the max-heap v[0..n) until neither child is larger.
 * Children of i are 2i + 1 and 2i + 2.
 */
static void sift_down(uint64_t *v, size_t root, size_t n)
{
	uint64_t x = v[root];

	for (;;) {
		size_t child = 2 * root + 1;

		if (child >= n)
			break;
		if (child + 1 < n && v[child + 1] > v[child])
			child++;
		if (v[child] <= x)
			break;
		v[root] = v[child];
		root = child;
	}
	v[root] = x;
}

/*
 * Heapsort: O(n log n) comparisons whatever the order of the input, in
 * place, no recursion. Benchmarks sort tens of thousands of timings
 * (and their deviations from the median) on every figure: a quadratic
 * sort made the summary dearer than the measurement, most of all under
 * an instrumented emulator that pays for every memory access.
 */
void stats_sort_u64(uint64_t *v, size_t n)
{
	if (n < 2)
		return;
	/* Build a max-heap: sift down every node that has a child. */
	for (size_t i = n / 2; i-- > 0;)
		sift_down(v, i, n);
	/* Move the largest to the end; the heap shrinks by one. */
	for (size_t end = n - 1; end > 0; end--) {
		uint64_t top = v[0];

		v[0] = v[end];
		v[end] = top;
		sift_down(v, 0, end);
	}
}

/* Median of a sorted array; the mean of the middle two is rounded down. */
static uint64_t sorted_median(const uint64_t *v, size_t n)
{
	uint64_t lo = v[(n - 1) / 2], hi = v[n / 2];

	return lo + (hi - lo) / 2;
}

/* part / whole in ppm, or STATS_PPM_UNDEFINED when whole is 0. */
static uint64_t ratio_ppm(uint64_t part, uint64_t whole)
{
	if (part == 0)
		return 0;
	if (whole == 0)
		return STATS_PPM_UNDEFINED;
	return stats_muldiv(part, STATS_PPM, whole);
}

void stats_compute(struct stats *st, const uint64_t *samples, size_t n,
		   uint64_t *scratch)
{
	uint64_t quot = 0, rem = 0;

	kassert(n > 0);
	kassert(samples != NULL && scratch != NULL);

	/*
	 * Exact floor of the mean without a 128-bit sum: add the quotients
	 * and the remainders of x / n separately; the remainders sum to at
	 * most n * (n - 1), which cannot overflow for any sane n.
	 */
	for (size_t i = 0; i < n; i++) {
		scratch[i] = samples[i];
		quot += samples[i] / n;
		rem += samples[i] % n;
	}
	st->n = n;
	st->mean = quot + rem / n;

	stats_sort_u64(scratch, n);
	st->min = scratch[0];
	st->max = scratch[n - 1];
	st->median = sorted_median(scratch, n);

	for (size_t i = 0; i < n; i++)
		scratch[i] = scratch[i] > st->median ? scratch[i] - st->median
						     : st->median - scratch[i];
	stats_sort_u64(scratch, n);
	st->mad = sorted_median(scratch, n);

	st->spread_ppm = ratio_ppm(st->max - st->min, st->median);
	st->mad_ppm = ratio_ppm(st->mad, st->median);
}

/* Full 128-bit product of a and b, from four 32x32 partial products. */
static void mul_64x64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
	uint64_t a_lo = a & U32_MASK, a_hi = a >> 32;
	uint64_t b_lo = b & U32_MASK, b_hi = b >> 32;
	uint64_t p0 = a_lo * b_lo, p1 = a_lo * b_hi;
	uint64_t p2 = a_hi * b_lo, p3 = a_hi * b_hi;
	uint64_t mid = (p0 >> 32) + (p1 & U32_MASK) + (p2 & U32_MASK);

	*lo = (mid << 32) | (p0 & U32_MASK);
	*hi = p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
}

uint64_t stats_muldiv(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t hi, lo, q = 0, r;

	kassert(c != 0);
	mul_64x64(a, b, &hi, &lo);
	if (hi == 0)
		return lo / c;
	if (hi >= c)
		return UINT64_MAX;	/* quotient needs more than 64 bits */

	/*
	 * Restoring long division of hi:lo by c, one bit at a time. The
	 * running remainder can reach 65 bits for a moment; 'carry' keeps
	 * the lost top bit, and then the remainder is certainly >= c.
	 */
	r = hi;
	for (int i = U64_BITS - 1; i >= 0; i--) {
		bool carry = r >> (U64_BITS - 1);

		r = (r << 1) | ((lo >> i) & 1);
		q <<= 1;
		if (carry || r >= c) {
			r -= c;
			q |= 1;
		}
	}
	return q;
}

uint64_t stats_pow10(unsigned e)
{
	uint64_t p = 1;

	kassert(e <= STATS_MAX_POW10);
	while (e--)
		p *= 10;
	return p;
}

int stats_fmt_fixed(char *buf, size_t size, uint64_t value, unsigned scale,
		    unsigned decimals)
{
	uint64_t div, ip, frac;

	kassert(scale <= STATS_MAX_FIXED_DIGITS);
	kassert(decimals <= STATS_MAX_FIXED_DIGITS);
	div = stats_pow10(scale);
	ip = value / div;
	frac = value % div;

	if (decimals < scale) {
		uint64_t drop = stats_pow10(scale - decimals);
		uint64_t rest = frac % drop;

		frac /= drop;
		/* rest >= drop / 2, written so that it cannot overflow */
		if (rest >= drop - rest) {
			frac++;
			if (frac == stats_pow10(decimals)) {
				frac = 0;
				ip++;
			}
		}
	} else {
		frac *= stats_pow10(decimals - scale);
	}

	if (decimals == 0)
		return ksnprintf(buf, size, "%llu", (unsigned long long)ip);
	return ksnprintf(buf, size, "%llu.%0*llu", (unsigned long long)ip,
			 (int)decimals, (unsigned long long)frac);
}
