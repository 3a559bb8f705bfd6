/*
 * ktest runner: walks the "ktests" linker section, groups tests by suite
 * (in link order of each suite's first test) and prints KTAP v1, one nested
 * suite per subsystem. Shared verbatim by the kernel and host test programs.
 */
#include <stdarg.h>
#include "kprintf.h"
#include "ktest.h"
#include "string.h"

extern const struct ktest __start_ktests[];
extern const struct ktest __stop_ktests[];

static size_t ktest_count(void)
{
	return (size_t)(__stop_ktests - __start_ktests);
}

bool ktest_streq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

/*
 * Does the filter entry [p, p + n) select test t (name NULL: any test of
 * suite)? An entry is a suite name or "suite.test".
 */
static bool entry_selects(const char *p, size_t n, const char *suite,
			  const char *name)
{
	size_t len = strlen(suite);

	if (n < len || strncmp(p, suite, len) != 0)
		return false;
	if (n == len)
		return true;
	return p[len] == '.' &&
	       (!name || (strlen(name) == n - len - 1 &&
			  strncmp(p + len + 1, name, n - len - 1) == 0));
}

static bool selected(const char *filter, const char *suite, const char *name)
{
	const char *p = filter;

	if (!filter || strcmp(filter, "all") == 0)
		return true;
	if (strcmp(filter, "none") == 0)
		return false;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (entry_selects(p, n, suite, name))
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

bool ktest_suite_selected(const char *filter, const char *suite)
{
	return selected(filter, suite, NULL);
}

/* a < b, a == b or a > b as -1, 0, 1, on mathematical values: a negative
 * operand is below every non-negative one; two operands of the same sign
 * order like their 64-bit patterns. */
static int ktest_order(struct ktest_val a, struct ktest_val b)
{
	if (a.negative != b.negative)
		return a.negative ? -1 : 1;
	if (a.bits == b.bits)
		return 0;
	return a.bits < b.bits ? -1 : 1;
}

bool ktest_cmp(struct ktest_val a, enum ktest_op op, struct ktest_val b)
{
	int o = ktest_order(a, b);

	switch (op) {
	case KTEST_OP_EQ:
		return o == 0;
	case KTEST_OP_NE:
		return o != 0;
	case KTEST_OP_LT:
		return o < 0;
	case KTEST_OP_LE:
		return o <= 0;
	case KTEST_OP_GT:
		return o > 0;
	case KTEST_OP_GE:
		return o >= 0;
	}
	return false;
}

const char *ktest_op_name(enum ktest_op op)
{
	static const char *const names[] = {
		[KTEST_OP_EQ] = "==", [KTEST_OP_NE] = "!=",
		[KTEST_OP_LT] = "<",  [KTEST_OP_LE] = "<=",
		[KTEST_OP_GT] = ">",  [KTEST_OP_GE] = ">=",
	};

	return (unsigned int)op < sizeof(names) / sizeof(names[0]) ?
		       names[op] : "?";
}

void ktest_fail(struct ktest_ctx *ctx, const char *file, int line,
		const char *fmt, ...)
{
	va_list ap;

	ctx->failed = true;
	kprintf("    # %s:%d: ", file, line);
	va_start(ap, fmt);
	kvprintf(fmt, ap);
	va_end(ap);
	kprintf("\n");
}

void ktest_skip(struct ktest_ctx *ctx, const char *reason)
{
	ctx->skipped = true;
	ctx->skip_reason = reason;
}

void ktest_diag(const char *fmt, ...)
{
	va_list ap;

	kprintf("    # ");
	va_start(ap, fmt);
	kvprintf(fmt, ap);
	va_end(ap);
	kprintf("\n");
}

/* Is t the first test of its suite in the section? */
static bool first_of_suite(const struct ktest *t)
{
	for (const struct ktest *u = __start_ktests; u < t; u++)
		if (strcmp(u->suite, t->suite) == 0)
			return false;
	return true;
}

static int run_suite(const char *filter, const char *suite, int index,
		     int *failures)
{
	int n = 0, i = 0;
	bool suite_failed = false;

	for (const struct ktest *t = __start_ktests; t < __stop_ktests; t++)
		if (strcmp(t->suite, suite) == 0 &&
		    selected(filter, suite, t->name))
			n++;
	kprintf("    KTAP version 1\n    # Subtest: %s\n    1..%d\n", suite,
		n);
	for (const struct ktest *t = __start_ktests; t < __stop_ktests; t++) {
		struct ktest_ctx ctx = {false, false, NULL};

		if (strcmp(t->suite, suite) != 0 ||
		    !selected(filter, suite, t->name))
			continue;
		i++;
		t->fn(&ctx);
		if (ctx.failed) {
			suite_failed = true;
			(*failures)++;
			kprintf("    not ok %d %s\n", i, t->name);
		} else if (ctx.skipped) {
			kprintf("    ok %d %s # SKIP %s\n", i, t->name,
				ctx.skip_reason);
		} else {
			kprintf("    ok %d %s\n", i, t->name);
		}
	}
	kprintf("%s %d %s\n", suite_failed ? "not ok" : "ok", index, suite);
	return suite_failed;
}

/* Report names in filter that match no suite: a typo must not pass as
 * "all tests passed". Returns how many there were. */
static int unknown_suites(const char *filter)
{
	const char *p = filter;
	int unknown = 0;

	if (!filter || strcmp(filter, "all") == 0 ||
	    strcmp(filter, "none") == 0)
		return 0;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		bool found = false;

		for (const struct ktest *t = __start_ktests; t < __stop_ktests;
		     t++)
			if (entry_selects(p, n, t->suite, t->name))
				found = true;
		if (!found && n) {
			kprintf("# ktest: no suite or test named '%.*s'\n",
				(int)n, p);
			unknown++;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return unknown;
}

int ktest_run(const char *filter)
{
	int suites = 0, index = 0, failures = unknown_suites(filter);
	size_t total = ktest_count();

	for (const struct ktest *t = __start_ktests; t < __stop_ktests; t++)
		if (first_of_suite(t) && ktest_suite_selected(filter, t->suite))
			suites++;
	kprintf("KTAP version 1\n1..%d\n", suites);
	for (size_t k = 0; k < total; k++) {
		const struct ktest *t = &__start_ktests[k];

		if (first_of_suite(t) && ktest_suite_selected(filter, t->suite))
			run_suite(filter, t->suite, ++index, &failures);
	}
	kprintf("# ktest: %d suite(s), %d failure(s)\n", suites, failures);
	return failures;
}
