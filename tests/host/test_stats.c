/*
 * Host tests for lib/stats.c: summary statistics on known inputs (odd and
 * even counts, duplicates, one sample), the overflow-free mean and
 * mul-div, and fixed-point formatting with rounding.
 */
// HOST_SRCS: lib/stats.c
#include <stdint.h>
#include "lib/compiler.h"
#include "lib/ktest.h"
#include "lib/prng.h"
#include "lib/stats.h"
#include "tests/host/host_shim.h"

KTEST(stats, sort)
{
	uint64_t v[] = {5, 1, 4, 1, UINT64_MAX, 0, 3};
	static const uint64_t want[] = {0, 1, 1, 3, 4, 5, UINT64_MAX};

	stats_sort_u64(v, ARRAY_SIZE(v));
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		EXPECT_EQ(v[i], want[i]);
}

/*
 * Random, ascending, descending and few-distinct inputs of many sizes:
 * the result is ascending and holds the same values (the sum and the
 * xor of the values are kept, a cheap permutation check).
 */
KTEST(stats, sort_many_orders)
{
	enum { MAX_N = 2049, ORDERS = 4 };
	static uint64_t v[MAX_N];
	uint64_t rng = prng_seed(7);

	for (size_t n = 0; n <= MAX_N; n += n < 40 ? 1 : 97) {
		for (unsigned order = 0; order < ORDERS; order++) {
			uint64_t sum = 0, xr = 0, sum2 = 0, xr2 = 0;

			for (size_t i = 0; i < n; i++) {
				uint64_t r = prng_next(&rng);

				v[i] = order == 0 ? r :
				       order == 1 ? i :
				       order == 2 ? UINT64_MAX - i : r % 3;
				sum += v[i];
				xr ^= v[i];
			}
			stats_sort_u64(v, n);
			for (size_t i = 0; i < n; i++) {
				sum2 += v[i];
				xr2 ^= v[i];
				if (i > 0)
					ASSERT_TRUE(v[i - 1] <= v[i]);
			}
			EXPECT_EQ(sum2, sum);
			EXPECT_EQ(xr2, xr);
		}
	}
}

KTEST(stats, odd_count)
{
	const uint64_t s[] = {30, 10, 50, 20, 40};
	uint64_t scratch[ARRAY_SIZE(s)];
	struct stats st;

	stats_compute(&st, s, ARRAY_SIZE(s), scratch);
	EXPECT_EQ(st.n, 5);
	EXPECT_EQ(st.min, 10);
	EXPECT_EQ(st.max, 50);
	EXPECT_EQ(st.median, 30);
	EXPECT_EQ(st.mean, 30);
	/* deviations 0,20,20,10,10 -> sorted 0,10,10,20,20 */
	EXPECT_EQ(st.mad, 10);
	/* (50 - 10) / 30 = 1.333333 */
	EXPECT_EQ(st.spread_ppm, 1333333);
	EXPECT_EQ(st.mad_ppm, 333333);
	/* the input is left alone when scratch is separate */
	EXPECT_EQ(s[0], 30);
	EXPECT_EQ(s[1], 10);
}

KTEST(stats, even_count_median_rounds_down)
{
	uint64_t s[] = {4, 1, 3, 2};
	struct stats st;

	stats_compute(&st, s, ARRAY_SIZE(s), s);	/* in place */
	EXPECT_EQ(st.median, 2);	/* (2 + 3) / 2 = 2.5 -> 2 */
	EXPECT_EQ(st.mean, 2);		/* 10 / 4 = 2.5 -> 2 */
	EXPECT_EQ(st.min, 1);
	EXPECT_EQ(st.max, 4);
	/* |x - 2|: 1,0,1,2 -> 0,1,1,2 -> median (1 + 1) / 2 */
	EXPECT_EQ(st.mad, 1);
	EXPECT_EQ(st.spread_ppm, 1500000);
	/* in place: sorted afterwards */
	EXPECT_EQ(s[0], 0);	/* scratch reused for the deviations */
}

KTEST(stats, even_count_exact_median)
{
	const uint64_t s[] = {100, 300, 200, 400, 1000, 10};
	uint64_t scratch[ARRAY_SIZE(s)];
	struct stats st;

	stats_compute(&st, s, ARRAY_SIZE(s), scratch);
	EXPECT_EQ(st.median, 250);
	EXPECT_EQ(st.mean, 335);	/* 2010 / 6 */
	/* |x - 250|: 150,50,50,150,750,240 -> 50,50,150,150,240,750 */
	EXPECT_EQ(st.mad, 150);
	EXPECT_EQ(st.spread_ppm, 3960000);	/* 990 / 250 */
}

KTEST(stats, duplicates)
{
	const uint64_t s[] = {7, 7, 9, 7, 7, 7, 8};
	uint64_t scratch[ARRAY_SIZE(s)];
	struct stats st;

	stats_compute(&st, s, ARRAY_SIZE(s), scratch);
	EXPECT_EQ(st.median, 7);
	EXPECT_EQ(st.mad, 0);
	EXPECT_EQ(st.mean, 7);		/* 52 / 7 = 7.43 */
	EXPECT_EQ(st.spread_ppm, 285714);	/* 2 / 7 */
	EXPECT_EQ(st.mad_ppm, 0);
}

KTEST(stats, one_sample)
{
	const uint64_t s[] = {12345};
	uint64_t scratch[1];
	struct stats st;

	stats_compute(&st, s, 1, scratch);
	EXPECT_EQ(st.n, 1);
	EXPECT_EQ(st.min, 12345);
	EXPECT_EQ(st.median, 12345);
	EXPECT_EQ(st.max, 12345);
	EXPECT_EQ(st.mean, 12345);
	EXPECT_EQ(st.mad, 0);
	EXPECT_EQ(st.spread_ppm, 0);
}

KTEST(stats, zero_median)
{
	const uint64_t s[] = {0, 0, 5};
	uint64_t scratch[3];
	struct stats st;

	stats_compute(&st, s, 3, scratch);
	EXPECT_EQ(st.median, 0);
	EXPECT_EQ(st.spread_ppm, STATS_PPM_UNDEFINED);
	EXPECT_EQ(st.mad_ppm, 0);	/* mad is 0: nothing to relate */
}

KTEST(stats, mean_does_not_overflow)
{
	const uint64_t s[] = {UINT64_MAX, UINT64_MAX, UINT64_MAX - 2};
	uint64_t scratch[3];
	struct stats st;

	stats_compute(&st, s, 3, scratch);
	EXPECT_EQ(st.mean, UINT64_MAX - 1);
	EXPECT_EQ(st.median, UINT64_MAX);
}

KTEST(stats, zero_samples_is_a_bug)
{
	uint64_t scratch[1];
	struct stats st;

	EXPECT_TRUE(HOST_EXPECT_PANIC(stats_compute(&st, scratch, 0, scratch)));
}

KTEST(stats, muldiv)
{
	EXPECT_EQ(stats_muldiv(10, 3, 4), 7);
	EXPECT_EQ(stats_muldiv(0, 5, 7), 0);
	/* 2^64-1 squared over itself: needs all 128 bits */
	EXPECT_EQ(stats_muldiv(UINT64_MAX, UINT64_MAX, UINT64_MAX), UINT64_MAX);
	/* 3e9 ticks * 1e12 / 3e9 Hz: product is about 3e21 */
	EXPECT_EQ(stats_muldiv(3000000000ull, 1000000000000ull, 3000000000ull),
		  1000000000000ull);
	/* (2^63 + 1) * 6 / 4 = 1.5 * 2^63 + 1.5 -> floor */
	EXPECT_EQ(stats_muldiv((1ull << 63) + 1, 6, 4),
		  (1ull << 63) + (1ull << 62) + 1);
	/* result too large: saturates */
	EXPECT_EQ(stats_muldiv(UINT64_MAX, 2, 1), UINT64_MAX);
	EXPECT_TRUE(HOST_EXPECT_PANIC(stats_muldiv(1, 1, 0)));
}

#define CHECK_FIXED(expect, v, scale, dec)                                  \
	do {                                                                \
		char buf_[48];                                              \
		int n_ = stats_fmt_fixed(buf_, sizeof(buf_), v, scale, dec); \
		EXPECT_STREQ(buf_, expect);                                 \
		EXPECT_EQ(n_, sizeof(expect) - 1);                          \
	} while (0)

KTEST(stats, fmt_fixed)
{
	CHECK_FIXED("123.456", 123456, 3, 3);
	CHECK_FIXED("123.5", 123456, 3, 1);
	CHECK_FIXED("123.4", 123449, 3, 1);
	CHECK_FIXED("0.005", 5, 3, 3);
	CHECK_FIXED("0.01", 5, 3, 2);		/* half rounds up */
	CHECK_FIXED("1.00", 999, 3, 2);		/* carry into the integer */
	CHECK_FIXED("1", 999, 3, 0);
	CHECK_FIXED("42.000", 42, 0, 3);
	CHECK_FIXED("42", 42, 0, 0);
	CHECK_FIXED("18446744073709551.615", UINT64_MAX, 3, 3);
	CHECK_FIXED("18446744073709551.6", UINT64_MAX, 3, 1);
	CHECK_FIXED("0.0000", 0, 4, 4);
}

KTEST(stats, fmt_fixed_truncates_like_snprintf)
{
	char buf[4];
	int n = stats_fmt_fixed(buf, sizeof(buf), 123456, 3, 3);

	EXPECT_EQ(n, 7);
	EXPECT_STREQ(buf, "123");
}

KTEST(stats, pow10)
{
	EXPECT_EQ(stats_pow10(0), 1);
	EXPECT_EQ(stats_pow10(3), 1000);
	EXPECT_EQ(stats_pow10(19), 10000000000000000000ull);
	EXPECT_TRUE(HOST_EXPECT_PANIC(stats_pow10(20)));
}
