/*
 * Host tests of the test API itself (lib/ktest.h): every comparison macro
 * must fail when its relation does not hold, and signed operands must
 * compare as signed (EXPECT_GE(-1, 0) fails), unsigned ones as unsigned
 * (EXPECT_LT(0, UINT64_MAX) holds), mixed ones on their mathematical
 * values. A test API whose checks cannot fail proves nothing. The filter
 * selects suites and single tests.
 */
#include <stdint.h>
#include <stdio.h>
#include "lib/ktest.h"

/* Run one check against a private context and give back whether it
 * failed; the outer test's ctx is shadowed so the check's failure does
 * not fail the test that provokes it. */
#define FAILS(check)                                                        \
	({                                                                  \
		struct ktest_ctx ktest_inner_ = {false, false, NULL};       \
		{                                                           \
			struct ktest_ctx *ctx = &ktest_inner_;              \
			check;                                              \
		}                                                           \
		ktest_inner_.failed;                                        \
	})

/* ASSERT_* return from the function they are used in: each runs inside
 * a function of its own. */
static void assert_eq(struct ktest_ctx *ctx, long a, long b)
{
	ASSERT_EQ(a, b);
}

static void assert_ne(struct ktest_ctx *ctx, long a, long b)
{
	ASSERT_NE(a, b);
}

static void assert_true(struct ktest_ctx *ctx, long e)
{
	ASSERT_TRUE(e);
}

static void assert_false(struct ktest_ctx *ctx, long e)
{
	ASSERT_FALSE(e);
}

KTEST(ktest_api, each_comparison_can_fail)
{
	EXPECT_TRUE(FAILS(EXPECT_EQ(1, 2)));
	EXPECT_TRUE(FAILS(EXPECT_NE(3, 3)));
	EXPECT_TRUE(FAILS(EXPECT_LT(2, 2)));
	EXPECT_TRUE(FAILS(EXPECT_LE(3, 2)));
	EXPECT_TRUE(FAILS(EXPECT_GT(2, 2)));
	EXPECT_TRUE(FAILS(EXPECT_GE(2, 3)));
	EXPECT_TRUE(FAILS(EXPECT_TRUE(0)));
	EXPECT_TRUE(FAILS(EXPECT_FALSE(1)));
	EXPECT_TRUE(FAILS(EXPECT_STREQ("a", "b")));
	EXPECT_TRUE(FAILS(assert_eq(ctx, 1, 2)));
	EXPECT_TRUE(FAILS(assert_ne(ctx, 4, 4)));
	EXPECT_TRUE(FAILS(assert_true(ctx, 0)));
	EXPECT_TRUE(FAILS(assert_false(ctx, 1)));
	EXPECT_FALSE(FAILS(assert_eq(ctx, 2, 2)));
}

KTEST(ktest_api, each_comparison_can_pass)
{
	EXPECT_FALSE(FAILS(EXPECT_EQ(2, 2)));
	EXPECT_FALSE(FAILS(EXPECT_NE(2, 3)));
	EXPECT_FALSE(FAILS(EXPECT_LT(2, 3)));
	EXPECT_FALSE(FAILS(EXPECT_LE(3, 3)));
	EXPECT_FALSE(FAILS(EXPECT_GT(3, 2)));
	EXPECT_FALSE(FAILS(EXPECT_GE(3, 3)));
}

KTEST(ktest_api, signed_compares_as_signed)
{
	int neg = -1;
	long long big_neg = INT64_MIN;
	int64_t err = -22;

	EXPECT_TRUE(FAILS(EXPECT_GE(neg, 0)));
	EXPECT_TRUE(FAILS(EXPECT_GE(err, 0)));
	EXPECT_TRUE(FAILS(EXPECT_GT(neg, 0)));
	EXPECT_TRUE(FAILS(EXPECT_EQ(neg, UINT64_MAX)));
	EXPECT_FALSE(FAILS(EXPECT_LT(neg, 0)));
	EXPECT_FALSE(FAILS(EXPECT_LT(big_neg, neg)));
	EXPECT_FALSE(FAILS(EXPECT_NE(neg, UINT64_MAX)));
}

KTEST(ktest_api, unsigned_compares_as_unsigned)
{
	uint64_t top = UINT64_MAX;
	unsigned int u = 0x80000000u;

	EXPECT_FALSE(FAILS(EXPECT_LT(0, top)));
	EXPECT_FALSE(FAILS(EXPECT_GT(u, 0)));
	EXPECT_FALSE(FAILS(EXPECT_GT(top, -1)));
	EXPECT_TRUE(FAILS(EXPECT_LT(top, 0)));
}

KTEST(ktest_api, pointers_compare)
{
	int x;
	int *p = &x, *null = NULL;

	EXPECT_TRUE(FAILS(EXPECT_EQ(p, NULL)));
	EXPECT_TRUE(FAILS(EXPECT_NE(null, NULL)));
	EXPECT_FALSE(FAILS(EXPECT_NE(p, NULL)));
}

/* The filter of ktest_run() (and of ktest= and a host program's argument):
 * suite names and "suite.test" names, comma-separated. tools/labs/grade.py
 * runs each check of a coding lab on its own with "suite.test". */
KTEST(ktest_api, filter_selects_suites_and_tests)
{
	EXPECT_TRUE(ktest_suite_selected(NULL, "buddy"));
	EXPECT_TRUE(ktest_suite_selected("all", "buddy"));
	EXPECT_FALSE(ktest_suite_selected("none", "buddy"));
	EXPECT_TRUE(ktest_suite_selected("kmalloc,buddy", "buddy"));
	EXPECT_TRUE(ktest_suite_selected("buddy.poison_hook", "buddy"));
	EXPECT_TRUE(ktest_suite_selected("x,buddy.poison_hook", "buddy"));
	EXPECT_FALSE(ktest_suite_selected("buddy", "bud"));
	EXPECT_FALSE(ktest_suite_selected("bud", "buddy"));
	EXPECT_FALSE(ktest_suite_selected("buddy.x", "bud"));
	EXPECT_FALSE(ktest_suite_selected("buddyx.y", "buddy"));
	EXPECT_FALSE(ktest_suite_selected("buddy_x", "buddy"));
}
