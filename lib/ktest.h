/*
 * ktest: one test API for the kernel and for host builds.
 *
 * A test is declared with KTEST(suite, name) { ... } anywhere; the
 * descriptor lands in the "ktests" linker section, so no list has to be
 * kept by hand. ktest_run() groups tests by suite and reports KTAP v1:
 *
 *   KTAP version 1
 *   1..2                       <- number of suites
 *       KTAP version 1
 *       # Subtest: string
 *       1..3
 *       ok 1 memcpy_overlap
 *       not ok 2 strlen_empty
 *       ok 3 needs_x2apic # SKIP no x2APIC
 *   ok 1 string                <- the suite's verdict
 *
 * EXPECT_* record a failure and go on; ASSERT_* record it and return from
 * the test. Both print the failing values as "# file:line: ..." lines.
 */
#ifndef LIB_KTEST_H
#define LIB_KTEST_H

#include <stdbool.h>
#include <stdint.h>
#include "compiler.h"

struct ktest_ctx {
	bool failed;
	bool skipped;
	const char *skip_reason;
};

struct ktest {
	const char *suite;
	const char *name;
	void (*fn)(struct ktest_ctx *ctx);
};

#define KTEST(suite, name)                                                  \
	static void ktest_fn_##suite##_##name(struct ktest_ctx *ctx);       \
	static const struct ktest ktest_desc_##suite##_##name __used        \
		__section("ktests") __aligned(8) = {                        \
			#suite, #name, ktest_fn_##suite##_##name};           \
	static void ktest_fn_##suite##_##name(struct ktest_ctx *ctx __unused)

/*
 * Run the selected suites. filter is NULL or "all" for every suite, "none"
 * for none, else a comma-separated list of suite names and "suite.test"
 * names (one test of a suite). Returns the number of failed tests (0 when
 * all passed or were skipped), counting each name that matches nothing
 * as one.
 */
int ktest_run(const char *filter);

/* True when filter selects suite or one of its tests (same rules as
 * ktest_run). */
bool ktest_suite_selected(const char *filter, const char *suite);

__printf(4, 5) void ktest_fail(struct ktest_ctx *ctx, const char *file,
			       int line, const char *fmt, ...);
void ktest_skip(struct ktest_ctx *ctx, const char *reason);
__printf(1, 2) void ktest_diag(const char *fmt, ...);

/*
 * Comparisons are on the mathematical values of the operands, whatever
 * their types: a signed operand is taken as signed (so EXPECT_GE(-1, 0)
 * fails), an unsigned one as unsigned (so EXPECT_LT(0, UINT64_MAX) holds),
 * without C's usual conversions that turn -1 into 2^64 - 1. Pointers and
 * bools compare as unsigned. tests/host/test_ktest.c proves that each
 * comparison can fail.
 */
enum ktest_op { KTEST_OP_EQ, KTEST_OP_NE, KTEST_OP_LT, KTEST_OP_LE,
		KTEST_OP_GT, KTEST_OP_GE };

/* One operand: its bits widened to 64, and whether it is negative. */
struct ktest_val {
	uint64_t bits;
	bool negative;
};

#define KTEST_IS_SIGNED(x)                                                  \
	_Generic((x), signed char: 1, short: 1, int: 1, long: 1,            \
		 long long: 1, default: 0)

static inline struct ktest_val ktest_sval(int64_t v)
{
	return (struct ktest_val){(uint64_t)v, v < 0};
}

static inline struct ktest_val ktest_uval(uint64_t v)
{
	return (struct ktest_val){v, false};
}

#define KTEST_VAL(x)                                                        \
	(KTEST_IS_SIGNED(x) ? ktest_sval((int64_t)(x))                      \
			    : ktest_uval((uint64_t)(x)))

/* True when a op b holds for the operands' mathematical values. */
bool ktest_cmp(struct ktest_val a, enum ktest_op op, struct ktest_val b);

#define KTEST_CMP(ctx, a, op, b, on_fail)                                   \
	do {                                                                \
		__auto_type ktest_ra_ = (a);                                \
		__auto_type ktest_rb_ = (b);                                \
		struct ktest_val ktest_a_ = KTEST_VAL(ktest_ra_);           \
		struct ktest_val ktest_b_ = KTEST_VAL(ktest_rb_);           \
		if (!ktest_cmp(ktest_a_, op, ktest_b_)) {                   \
			ktest_fail(ctx, __FILE__, __LINE__,                 \
				   "expected %s %s %s, got %#llx (%lld) vs "  \
				   "%#llx (%lld)",                          \
				   #a, ktest_op_name(op), #b,               \
				   (unsigned long long)ktest_a_.bits,       \
				   (long long)ktest_a_.bits,                \
				   (unsigned long long)ktest_b_.bits,       \
				   (long long)ktest_b_.bits);               \
			on_fail;                                            \
		}                                                           \
	} while (0)

/* "==", "<", ... for the failure message. */
const char *ktest_op_name(enum ktest_op op);

#define EXPECT_EQ(a, b) KTEST_CMP(ctx, a, KTEST_OP_EQ, b, (void)0)
#define EXPECT_NE(a, b) KTEST_CMP(ctx, a, KTEST_OP_NE, b, (void)0)
#define EXPECT_LT(a, b) KTEST_CMP(ctx, a, KTEST_OP_LT, b, (void)0)
#define EXPECT_LE(a, b) KTEST_CMP(ctx, a, KTEST_OP_LE, b, (void)0)
#define EXPECT_GT(a, b) KTEST_CMP(ctx, a, KTEST_OP_GT, b, (void)0)
#define EXPECT_GE(a, b) KTEST_CMP(ctx, a, KTEST_OP_GE, b, (void)0)
#define EXPECT_TRUE(e) KTEST_CMP(ctx, !!(e), KTEST_OP_EQ, 1, (void)0)
#define EXPECT_FALSE(e) KTEST_CMP(ctx, !!(e), KTEST_OP_EQ, 0, (void)0)
#define ASSERT_EQ(a, b) KTEST_CMP(ctx, a, KTEST_OP_EQ, b, return)
#define ASSERT_NE(a, b) KTEST_CMP(ctx, a, KTEST_OP_NE, b, return)
#define ASSERT_LT(a, b) KTEST_CMP(ctx, a, KTEST_OP_LT, b, return)
#define ASSERT_GT(a, b) KTEST_CMP(ctx, a, KTEST_OP_GT, b, return)
#define ASSERT_TRUE(e) KTEST_CMP(ctx, !!(e), KTEST_OP_EQ, 1, return)
#define ASSERT_FALSE(e) KTEST_CMP(ctx, !!(e), KTEST_OP_EQ, 0, return)

#define EXPECT_STREQ(a, b)                                                  \
	do {                                                                \
		const char *ktest_sa_ = (a), *ktest_sb_ = (b);              \
		if (!ktest_streq(ktest_sa_, ktest_sb_))                     \
			ktest_fail(ctx, __FILE__, __LINE__,                 \
				   "expected %s == %s, got \"%s\" vs \"%s\"", \
				   #a, #b, ktest_sa_ ? ktest_sa_ : "(null)",  \
				   ktest_sb_ ? ktest_sb_ : "(null)");        \
	} while (0)

#define KTEST_SKIP(reason)                                                  \
	do {                                                                \
		ktest_skip(ctx, reason);                                    \
		return;                                                     \
	} while (0)

bool ktest_streq(const char *a, const char *b);

#endif
