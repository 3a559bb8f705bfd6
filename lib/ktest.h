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
 * for none, else a comma-separated list of suite names. Returns the number
 * of failed tests (0 when all passed or were skipped).
 */
int ktest_run(const char *filter);

/* True when suite appears in filter (same rules as ktest_run). */
bool ktest_suite_selected(const char *filter, const char *suite);

__printf(4, 5) void ktest_fail(struct ktest_ctx *ctx, const char *file,
			       int line, const char *fmt, ...);
void ktest_skip(struct ktest_ctx *ctx, const char *reason);
__printf(1, 2) void ktest_diag(const char *fmt, ...);

#define KTEST_CMP(ctx, a, op, b, on_fail)                                   \
	do {                                                                \
		uint64_t ktest_a_ = (uint64_t)(a), ktest_b_ = (uint64_t)(b); \
		if (!(ktest_a_ op ktest_b_)) {                              \
			ktest_fail(ctx, __FILE__, __LINE__,                 \
				   "expected %s %s %s, got %#llx (%lld) vs "  \
				   "%#llx (%lld)",                          \
				   #a, #op, #b,                             \
				   (unsigned long long)ktest_a_,            \
				   (long long)ktest_a_,                     \
				   (unsigned long long)ktest_b_,            \
				   (long long)ktest_b_);                    \
			on_fail;                                            \
		}                                                           \
	} while (0)

#define EXPECT_EQ(a, b) KTEST_CMP(ctx, a, ==, b, (void)0)
#define EXPECT_NE(a, b) KTEST_CMP(ctx, a, !=, b, (void)0)
#define EXPECT_LT(a, b) KTEST_CMP(ctx, a, <, b, (void)0)
#define EXPECT_LE(a, b) KTEST_CMP(ctx, a, <=, b, (void)0)
#define EXPECT_GT(a, b) KTEST_CMP(ctx, a, >, b, (void)0)
#define EXPECT_GE(a, b) KTEST_CMP(ctx, a, >=, b, (void)0)
#define EXPECT_TRUE(e) KTEST_CMP(ctx, !!(e), ==, 1, (void)0)
#define EXPECT_FALSE(e) KTEST_CMP(ctx, !!(e), ==, 0, (void)0)
#define ASSERT_EQ(a, b) KTEST_CMP(ctx, a, ==, b, return)
#define ASSERT_NE(a, b) KTEST_CMP(ctx, a, !=, b, return)
#define ASSERT_TRUE(e) KTEST_CMP(ctx, !!(e), ==, 1, return)
#define ASSERT_FALSE(e) KTEST_CMP(ctx, !!(e), ==, 0, return)

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
