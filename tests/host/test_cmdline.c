/*
 * Host tests for the command-line tokenizer (lib/cmdline.c) and the typed
 * kernel options (kernel/options.c): good lines, every kind of malformed
 * token, that one bad option never hides the ones after it, and options
 * an experiment declares with OPTION_* (three declared here, as an
 * experiment declares its own).
 */
// HOST_SRCS: lib/cmdline.c kernel/options.c lib/string.c
#include <stdio.h>
#include <string.h>
#include "kernel/options.h"
#include "lib/cmdline.h"
#include "lib/ktest.h"
#include "tests/host/host_shim.h"

/* An experiment's options, declared as experiments/ declares them. */
static unsigned demo_kib;
static char demo_name[OPT_STRING_MAX];
static enum crash_kind demo_crash;
OPTION_UINT(demo_kib, "demo", "demo.kib", demo_kib, 256, 64, 1024,
	    "a number with a default inside its range");
OPTION_STRING(demo_name, "demo", "demo.name", demo_name, "WB",
	      "a string with a default");
OPTION_ENUM(demo_crash, "demo", "demo.crash", demo_crash, crash_kind_names,
	    CRASH_NONE, "an enum sharing crash='s names");

struct seen {
	int tokens, errors;
	char keys[8][32];
	char values[8][64];
	int has_value[8];
};

static void tokenize(const char *line, struct seen *s)
{
	struct cmdline_iter it;
	struct cmdline_token t;
	enum cmdline_status st;

	memset(s, 0, sizeof(*s));
	cmdline_iter_init(&it, line);
	while ((st = cmdline_next(&it, &t)) != CMDLINE_END) {
		if (st == CMDLINE_ERROR) {
			s->errors++;
			continue;
		}
		if (s->tokens < 8) {
			snprintf(s->keys[s->tokens], 32, "%.*s",
				 (int)t.key_len, t.key);
			if (t.value)
				snprintf(s->values[s->tokens], 64, "%.*s",
					 (int)t.value_len, t.value);
			s->has_value[s->tokens] = t.value != NULL;
		}
		s->tokens++;
	}
}

KTEST(cmdline, tokens_flags_and_values)
{
	struct seen s;

	tokenize("  ktest=all nosmp  run=copy,tbench\tmaxcpus=4 ", &s);
	EXPECT_EQ(s.tokens, 4);
	EXPECT_EQ(s.errors, 0);
	EXPECT_STREQ(s.keys[0], "ktest");
	EXPECT_STREQ(s.values[0], "all");
	EXPECT_STREQ(s.keys[1], "nosmp");
	EXPECT_FALSE(s.has_value[1]);
	EXPECT_STREQ(s.values[2], "copy,tbench");
	EXPECT_STREQ(s.values[3], "4");
}

KTEST(cmdline, quoted_and_empty_values)
{
	struct seen s;

	tokenize("label=\"two words\" empty= x", &s);
	EXPECT_EQ(s.tokens, 3);
	EXPECT_STREQ(s.values[0], "two words");
	EXPECT_TRUE(s.has_value[1]);
	EXPECT_STREQ(s.values[1], "");
	EXPECT_STREQ(s.keys[2], "x");
}

KTEST(cmdline, malformed_tokens_are_skipped)
{
	struct seen s;

	tokenize("=oops a b!c d=\"open ok=1", &s);
	/* "=oops", "b!c" and d="open are bad; ok=1 survives them. */
	EXPECT_EQ(s.errors, 3);
	EXPECT_EQ(s.tokens, 2);
	EXPECT_STREQ(s.keys[0], "a");
	EXPECT_STREQ(s.keys[1], "ok");
	EXPECT_STREQ(s.values[1], "1");
	tokenize("", &s);
	EXPECT_EQ(s.tokens + s.errors, 0);
	tokenize(NULL, &s);
	EXPECT_EQ(s.tokens + s.errors, 0);
}

KTEST(cmdline, stray_quote_costs_one_token)
{
	struct cmdline_iter it;
	struct cmdline_token t;
	struct seen s;

	/* A quote inside a bare value is a bad character: the token is
	 * reported whole and maxcpus=1 is still parsed. */
	tokenize("run=no\"ne maxcpus=1", &s);
	EXPECT_EQ(s.errors, 1);
	EXPECT_EQ(s.tokens, 1);
	EXPECT_STREQ(s.keys[0], "maxcpus");
	EXPECT_STREQ(s.values[0], "1");
	cmdline_iter_init(&it, "run=no\"ne maxcpus=1");
	EXPECT_EQ(cmdline_next(&it, &t), CMDLINE_ERROR);
	EXPECT_EQ(it.error_len, strlen("run=no\"ne"));
	/* Two stray quotes must not pair up across the space. */
	tokenize("a=x\"y b=1 c=z\"w d=2", &s);
	EXPECT_EQ(s.errors, 2);
	EXPECT_EQ(s.tokens, 2);
	EXPECT_STREQ(s.keys[0], "b");
	EXPECT_STREQ(s.keys[1], "d");
	/* A closed quoted value followed by junk costs only that token. */
	tokenize("k=\"a b\"x e=3", &s);
	EXPECT_EQ(s.errors, 1);
	EXPECT_EQ(s.tokens, 1);
	EXPECT_STREQ(s.keys[0], "e");
}

KTEST(cmdline, list_splitting)
{
	const char *v = "serial,,fb";
	const char *p = v, *e;
	size_t len;
	int n = 0;
	size_t lens[4];

	while ((e = cmdline_list_next(&p, v + strlen(v), &len)) && n < 4)
		lens[n++] = len;
	EXPECT_EQ(n, 3);
	EXPECT_EQ(lens[0], 6);
	EXPECT_EQ(lens[1], 0);
	EXPECT_EQ(lens[2], 2);
}

KTEST(cmdline, numbers)
{
	unsigned long long v;

	EXPECT_TRUE(cmdline_parse_u64("42", 2, &v));
	EXPECT_EQ(v, 42);
	EXPECT_TRUE(cmdline_parse_u64("0x1F", 4, &v));
	EXPECT_EQ(v, 31);
	EXPECT_TRUE(cmdline_parse_u64("18446744073709551615", 20, &v));
	EXPECT_EQ(v, 18446744073709551615ull);
	EXPECT_FALSE(cmdline_parse_u64("18446744073709551616", 20, &v));
	EXPECT_FALSE(cmdline_parse_u64("0x", 2, &v));
	EXPECT_FALSE(cmdline_parse_u64("12a", 3, &v));
	EXPECT_FALSE(cmdline_parse_u64("", 0, &v));
}

KTEST(options, defaults)
{
	EXPECT_EQ(options_parse(""), 0);
	EXPECT_EQ(kopt.exit, EXIT_QEMU);
	EXPECT_STREQ(kopt.ktest, "none");
	EXPECT_STREQ(kopt.run, "default");
	EXPECT_EQ(kopt.maxcpus, MAX_CPUS);
	EXPECT_EQ(kopt.consoles, CONSOLE_ALL);
	EXPECT_EQ(kopt.crash, CRASH_NONE);
}

KTEST(options, typed_values)
{
	EXPECT_EQ(options_parse("exit=halt ktest=mm,smp run=copy maxcpus=0x8 "
				"console=serial,fb loglevel=7 crash=pf poison"),
		  0);
	EXPECT_EQ(kopt.exit, EXIT_HALT);
	EXPECT_STREQ(kopt.ktest, "mm,smp");
	EXPECT_STREQ(kopt.run, "copy");
	EXPECT_EQ(kopt.maxcpus, 8);
	EXPECT_EQ(kopt.consoles, CONSOLE_SERIAL | CONSOLE_FB);
	EXPECT_EQ(kopt.loglevel, 7);
	EXPECT_EQ(kopt.crash, CRASH_PAGE_FAULT);
	EXPECT_TRUE(kopt.poison);
	EXPECT_EQ(options_parse("nosmp"), 0);
	EXPECT_EQ(kopt.maxcpus, 1);
}

KTEST(options, bad_options_reported_and_ignored)
{
	/* Eight mistakes; the good options around them still apply. */
	EXPECT_EQ(options_parse("bogus=1 exit=sideways maxcpus=0 maxcpus=999 "
				"nosmp=yes ktest= ktest=mm console=tty,serial "
				"=x run=tbench"),
		  8);
	EXPECT_EQ(kopt.exit, EXIT_QEMU);
	EXPECT_EQ(kopt.maxcpus, MAX_CPUS);
	EXPECT_FALSE(kopt.nosmp);
	EXPECT_STREQ(kopt.ktest, "mm");
	EXPECT_EQ(kopt.consoles, CONSOLE_SERIAL);
	EXPECT_STREQ(kopt.run, "tbench");
}

/* docs/labs/09-tlb-shootdowns.md compares tlb.ceiling=1 and =512; 0 is
 * outside the range and refused with a message, never taken silently. */
KTEST(options, tlb_ceiling_range)
{
	EXPECT_EQ(options_parse("tlb.ceiling=0"), 1);
	EXPECT_EQ(kopt.tlb_ceiling, 0); /* unset: the default applies */
	EXPECT_EQ(options_parse("tlb.ceiling=4097"), 1);
	EXPECT_EQ(kopt.tlb_ceiling, 0);
	EXPECT_EQ(options_parse("tlb.ceiling=1"), 0);
	EXPECT_EQ(kopt.tlb_ceiling, 1);
	EXPECT_EQ(options_parse("tlb.ceiling=512"), 0);
	EXPECT_EQ(kopt.tlb_ceiling, 512);
}

KTEST(options, stray_quote_keeps_later_options)
{
	EXPECT_EQ(options_parse("run=no\"ne maxcpus=1"), 1);
	EXPECT_EQ(kopt.maxcpus, 1);
	EXPECT_STREQ(kopt.run, "default");
}

KTEST(options, print_shows_every_flag)
{
	char out[512];

	options_parse("icount poison nosmp");
	host_capture_start(out, sizeof(out));
	options_print();
	host_capture_stop();
	EXPECT_TRUE(strstr(out, " icount") != NULL);
	EXPECT_TRUE(strstr(out, " poison") != NULL);
	EXPECT_TRUE(strstr(out, " nosmp") != NULL);
	options_parse("");
	host_capture_start(out, sizeof(out));
	options_print();
	host_capture_stop();
	EXPECT_TRUE(strstr(out, "icount") == NULL);
}

KTEST(options, overlong_string_rejected)
{
	char line[OPT_STRING_MAX + 16];

	memset(line, 'a', sizeof(line));
	memcpy(line, "run=", 4);
	line[sizeof(line) - 1] = '\0';
	EXPECT_EQ(options_parse(line), 1);
	EXPECT_STREQ(kopt.run, "default");
}

KTEST(options, experiment_options_typed_and_reset)
{
	char out[1024];

	EXPECT_EQ(options_parse("demo.kib=512 demo.name=wc demo.crash=pf "
				"maxcpus=2"),
		  0);
	EXPECT_EQ(demo_kib, 512);
	EXPECT_STREQ(demo_name, "wc");
	EXPECT_EQ(demo_crash, CRASH_PAGE_FAULT);
	EXPECT_EQ(kopt.maxcpus, 2);
	/* Set away from the default: the boot report shows them. */
	host_capture_start(out, sizeof(out));
	options_print();
	host_capture_stop();
	EXPECT_TRUE(strstr(out, " demo.kib=512") != NULL);
	EXPECT_TRUE(strstr(out, " demo.name=wc") != NULL);
	EXPECT_TRUE(strstr(out, " demo.crash=pf") != NULL);
	/* Every parse starts from the defaults. */
	EXPECT_EQ(options_parse(""), 0);
	EXPECT_EQ(demo_kib, 256);
	EXPECT_STREQ(demo_name, "WB");
	EXPECT_EQ(demo_crash, CRASH_NONE);
	host_capture_start(out, sizeof(out));
	options_print();
	host_capture_stop();
	EXPECT_TRUE(strstr(out, "demo.") == NULL);
}

KTEST(options, experiment_options_checked)
{
	char out[1024];

	/* Out of range, unknown choice, flag-style: refused, defaults kept. */
	EXPECT_EQ(options_parse("demo.kib=63 demo.kib=1025 demo.crash=boom "
				"demo.name"),
		  4);
	EXPECT_EQ(demo_kib, 256);
	EXPECT_EQ(demo_crash, CRASH_NONE);
	EXPECT_STREQ(demo_name, "WB");
	host_capture_start(out, sizeof(out));
	options_list_experiment_options();
	host_capture_stop();
	EXPECT_TRUE(strstr(out, "demo") != NULL);
	EXPECT_TRUE(strstr(out, "demo.kib=64..1024") != NULL);
	EXPECT_TRUE(strstr(out, "demo.crash=none|pf|") != NULL);
}
