/*
 * Host tests for lib/kprintf.c: every conversion, width, padding and
 * truncation against the expected text.
 */
// HOST_SRCS:
#include <stdint.h>
#include "lib/kprintf.h"
#include "lib/ktest.h"

#define CHECK_FMT(expect, ...)                                              \
	do {                                                                \
		char buf_[128];                                             \
		ksnprintf(buf_, sizeof(buf_), __VA_ARGS__);                 \
		EXPECT_STREQ(buf_, expect);                                 \
	} while (0)

KTEST(kprintf, integers)
{
	CHECK_FMT("42", "%d", 42);
	CHECK_FMT("-42", "%d", -42);
	CHECK_FMT("-2147483648", "%d", INT32_MIN);
	CHECK_FMT("4294967295", "%u", 4294967295u);
	CHECK_FMT("-9223372036854775808", "%lld", (long long)INT64_MIN);
	CHECK_FMT("18446744073709551615", "%lu", UINT64_MAX);
	CHECK_FMT("123456789", "%zu", (size_t)123456789);
	CHECK_FMT("ff", "%x", 255);
	CHECK_FMT("FF", "%X", 255);
	CHECK_FMT("0xff", "%#x", 255);
	CHECK_FMT("0", "%#x", 0);
	CHECK_FMT("ffffffff80000000", "%lx", 0xffffffff80000000ul);
	CHECK_FMT("17", "%o", 15);
	CHECK_FMT("-1", "%hhd", 255);
}

KTEST(kprintf, width_and_padding)
{
	CHECK_FMT("   42", "%5d", 42);
	CHECK_FMT("42   |", "%-5d|", 42);
	CHECK_FMT("00042", "%05d", 42);
	CHECK_FMT("-0042", "%05d", -42);
	CHECK_FMT("0000beef", "%08x", 0xbeef);
	CHECK_FMT("  abc", "%5s", "abc");
	CHECK_FMT("abc  |", "%-5s|", "abc");
	CHECK_FMT("ab", "%.2s", "abcdef");
	CHECK_FMT("   ab", "%*.*s", 5, 2, "abcdef");
	CHECK_FMT("    x", "%5c", 'x');
	CHECK_FMT("x    |", "%-5c|", 'x');
}

KTEST(kprintf, pointers_strings_percent)
{
	CHECK_FMT("0x00000000deadbeef", "%p", (void *)0xdeadbeef);
	{
		const char *volatile nullstr = NULL; /* hide NULL from -Wformat */
		CHECK_FMT("(null)", "%s", nullstr);
	}
	CHECK_FMT("100%", "%d%%", 100);
	CHECK_FMT("a", "%c", 'a');
}

KTEST(kprintf, truncation_returns_full_length)
{
	char buf[8];
	int n = ksnprintf(buf, sizeof(buf), "%s", "0123456789");

	EXPECT_EQ(n, 10);
	EXPECT_STREQ(buf, "0123456");
	n = ksnprintf(buf, 1, "%d", 12345);
	EXPECT_EQ(n, 5);
	EXPECT_EQ(buf[0], 0);
}
