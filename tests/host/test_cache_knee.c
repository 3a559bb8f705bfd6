/*
 * Host tests for lib/cache_knee.c: a hardware-like sweep (L1, L2, L3,
 * DRAM) has knees and says yes, a flat sweep (QEMU TCG) says no, a mild
 * slope says unknown, too few points say unknown.
 */
// HOST_SRCS: lib/cache_knee.c lib/string.c
#include "lib/cache_knee.h"
#include "lib/ktest.h"

#define KIB 1024ull
#define MIB (1024 * KIB)

KTEST(cache_knee, hardware_hierarchy)
{
	/* Cycles per load, as a desktop CPU shows them. */
	const struct cache_point pts[] = {
		{ 4 * KIB, 4 },	    { 16 * KIB, 4 },   { 64 * KIB, 12 },
		{ 256 * KIB, 13 },  { 1 * MIB, 40 },   { 4 * MIB, 42 },
		{ 16 * MIB, 180 },  { 64 * MIB, 210 },
	};
	struct cache_knees k;

	EXPECT_EQ(cache_knees_find(pts, 8, &k), BENCH_YES);
	ASSERT_EQ(k.n, 3);
	EXPECT_EQ(k.after_bytes[0], 16 * KIB);
	EXPECT_EQ(k.after_bytes[1], 256 * KIB);
	EXPECT_EQ(k.after_bytes[2], 4 * MIB);
	EXPECT_EQ(k.ratio_x10[0], 30);
	EXPECT_EQ(k.overall_x10, 525);
}

KTEST(cache_knee, flat_line_is_no)
{
	const struct cache_point pts[] = {
		{ 4 * KIB, 100 },  { 64 * KIB, 102 }, { 1 * MIB, 99 },
		{ 16 * MIB, 108 }, { 64 * MIB, 110 },
	};
	struct cache_knees k;

	EXPECT_EQ(cache_knees_find(pts, 5, &k), BENCH_NO);
	EXPECT_EQ(k.n, 0);
	EXPECT_EQ(k.overall_x10, 11);
}

KTEST(cache_knee, in_between_is_unknown)
{
	/* One knee of 1.6x and nothing else: not enough to say. */
	const struct cache_point pts[] = {
		{ 4 * KIB, 100 }, { 1 * MIB, 100 }, { 64 * MIB, 160 },
	};
	const struct cache_point two[] = { { 4 * KIB, 1 }, { 8 * KIB, 1 } };
	const struct cache_point none[] = { { 4 * KIB, 0 } };
	struct cache_knees k;

	EXPECT_EQ(cache_knees_find(pts, 3, &k), BENCH_UNKNOWN);
	EXPECT_EQ(k.n, 1);
	EXPECT_EQ(cache_knees_find(two, 2, &k), BENCH_UNKNOWN);
	EXPECT_EQ(cache_knees_find(none, 1, &k), BENCH_UNKNOWN);
}
