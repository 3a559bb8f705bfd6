/*
 * Host tests for the shell's portable parts: the command parser against
 * the kernel's own command table (kernel/shell/shell_parse.c,
 * kernel/shell/shell_table.c), the line editor and the serial key decoder
 * (kernel/shell/line_edit.c), and the screen consoles' control-sequence
 * interpreter (lib/term_esc.c), which here plays the terminal the
 * editor draws on. The fuzz corpus in tests/fuzz/corpus/shell/ is
 * replayed as a regression test: every file must parse to a command or
 * to a one-line error, under ASan and UBSan.
 */
// HOST_SRCS: kernel/shell/shell_parse.c kernel/shell/shell_table.c kernel/shell/line_edit.c lib/term_esc.c lib/cmdline.c lib/string.c
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include "kernel/shell/line_edit.h"
#include "kernel/shell/shell_parse.h"
#include "kernel/shell/shell_table.h"
#include "lib/keys.h"
#include "lib/ktest.h"
#include "lib/term_esc.h"

#define CORPUS_DIR "tests/fuzz/corpus/shell"
#define LINE_BUF 512

static enum shell_parse_result parse(const char *text, struct shell_parsed *p,
				     char *err)
{
	static char line[LINE_BUF];

	snprintf(line, sizeof(line), "%s", text);
	return shell_parse(line, shell_commands, SHELL_CMD_COUNT, p, err,
			   SHELL_ERROR_MAX);
}

KTEST(shell, parses_good_lines)
{
	struct shell_parsed p;
	char err[SHELL_ERROR_MAX];

	EXPECT_EQ(parse("", &p, err), SHELL_EMPTY);
	EXPECT_EQ(parse("   \t ", &p, err), SHELL_EMPTY);
	ASSERT_EQ(parse("info cpu", &p, err), SHELL_OK);
	EXPECT_TRUE(p.cmd == &shell_commands[SHELL_CMD_INFO]);
	EXPECT_EQ(p.arg[0].choice, INFO_CPU);
	ASSERT_EQ(parse("  info\tcaches  ", &p, err), SHELL_OK);
	EXPECT_EQ(p.arg[0].choice, INFO_CACHES);
	ASSERT_EQ(parse("pt 0xffffffff80100000", &p, err), SHELL_OK);
	EXPECT_EQ(p.arg[0].number, 0xffffffff80100000ull);
	ASSERT_EQ(parse("pt 4096", &p, err), SHELL_OK);
	EXPECT_EQ(p.arg[0].number, 4096);
	EXPECT_FALSE(p.arg[0].symbol);
	ASSERT_EQ(parse("pt kmain", &p, err), SHELL_OK);
	EXPECT_TRUE(p.arg[0].symbol);
	EXPECT_STREQ(p.arg[0].word, "kmain");
	ASSERT_EQ(parse("memtype uc-", &p, err), SHELL_OK);
	EXPECT_STREQ(shell_memtype_names[p.arg[0].choice], "uc-");
	/* Choices in any case, as trace.memtype= takes them. */
	ASSERT_EQ(parse("memtype WC", &p, err), SHELL_OK);
	EXPECT_STREQ(shell_memtype_names[p.arg[0].choice], "wc");
	ASSERT_EQ(parse("memtype Uc-", &p, err), SHELL_OK);
	EXPECT_STREQ(shell_memtype_names[p.arg[0].choice], "uc-");
	ASSERT_EQ(parse("info CACHES", &p, err), SHELL_OK);
	EXPECT_EQ(p.arg[0].choice, INFO_CACHES);
	ASSERT_EQ(parse("help", &p, err), SHELL_OK);
	EXPECT_FALSE(p.arg[0].present);
	ASSERT_EQ(parse("help run", &p, err), SHELL_OK);
	EXPECT_STREQ(p.arg[0].word, "run");
	ASSERT_EQ(parse("halt", &p, err), SHELL_OK);
}

KTEST(shell, run_arguments)
{
	struct shell_parsed p;
	char err[SHELL_ERROR_MAX];

	ASSERT_EQ(parse("run list", &p, err), SHELL_OK);
	EXPECT_STREQ(p.arg[SHELL_RUN_ARG_NAME].word, "list");
	EXPECT_FALSE(p.arg[SHELL_RUN_ARG_MODE].present);
	ASSERT_EQ(parse("run copy full", &p, err), SHELL_OK);
	EXPECT_TRUE(p.arg[SHELL_RUN_ARG_MODE].present);
	EXPECT_EQ(p.arg[SHELL_RUN_ARG_MODE].choice, 1);
	EXPECT_EQ(p.nsettings, 0);
	ASSERT_EQ(parse("run tbench clients=2 reps=1", &p, err), SHELL_OK);
	EXPECT_FALSE(p.arg[SHELL_RUN_ARG_MODE].present);
	ASSERT_EQ(p.nsettings, 2);
	EXPECT_STREQ(p.settings[0].key, "clients");
	EXPECT_STREQ(p.settings[0].value, "2");
	EXPECT_STREQ(p.settings[1].key, "reps");
	ASSERT_EQ(parse("run tbench quick clients=2", &p, err), SHELL_OK);
	EXPECT_EQ(p.arg[SHELL_RUN_ARG_MODE].choice, 0);
	EXPECT_EQ(p.nsettings, 1);
}

/* Each bad line gives SHELL_ERROR and a message starting with want. */
KTEST(shell, bad_input_one_line_errors)
{
	static const struct {
		const char *line, *want;
	} cases[] = {
		{"frobnicate", "unknown command 'frobnicate'"},
		{"info", "info: missing TOPIC (one of cpu|mem|pat|mtrr"},
		{"info disk", "info: 'disk' is not a TOPIC"},
		{"info cpu mem", "info: unexpected 'mem'"},
		{"pt", "pt: missing ADDRESS"},
		{"pt z.z", "pt: ADDRESS 'z.z' is neither a number nor"},
		{"pt 0x", "pt: ADDRESS '0x' is not a number"},
		{"pt 99999999999999999999999", "pt: ADDRESS"},
		{"pt -1", "pt: ADDRESS '-1' is not a number"},
		{"pt 1x", "pt: ADDRESS '1x' is not a number"},
		{"pt k-main", "pt: ADDRESS 'k-main' is neither a number nor"},
		{"memtype", "memtype: missing TYPE"},
		{"memtype WBX", "memtype: 'WBX' is not a TYPE"},
		{"memtype w", "memtype: 'w' is not a TYPE"},
		{"run", "run: missing NAME"},
		{"run copy fast", "run: 'fast' is not KEY=VALUE"},
		{"run copy =1", "run: '=1' is not KEY=VALUE"},
		{"run copy size=", "run: 'size=' is not KEY=VALUE"},
		{"run copy Size=1", "run: bad setting name 'Size'"},
		{"run copy a=1 a=2", "run: 'a' is set twice"},
		{"run x a=1 b=1 c=1 d=1 e=1 f=1 g=1 h=1 i=1",
		 "run: too many settings"},
		{"halt now", "halt: unexpected 'now'"},
		{"a b c d e f g h i j k l m n o p q", "too many words"},
		{"info\x01 cpu", "the line has a control"},
		{"info \xc3\xa9", "the line has a control or non-ASCII"},
	};
	struct shell_parsed p;
	char err[SHELL_ERROR_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT_EQ(parse(cases[i].line, &p, err), SHELL_ERROR);
		EXPECT_TRUE(strncmp(err, cases[i].want,
				    strlen(cases[i].want)) == 0);
		EXPECT_TRUE(strchr(err, '\n') == NULL);
		if (strncmp(err, cases[i].want, strlen(cases[i].want)))
			ktest_diag("line %zu: got \"%s\"", i, err);
	}
}

KTEST(shell, long_words_are_cut_in_messages)
{
	char line[300], err[SHELL_ERROR_MAX];
	struct shell_parsed p;

	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	EXPECT_EQ(shell_parse(line, shell_commands, SHELL_CMD_COUNT, &p, err,
			      sizeof(err)), SHELL_ERROR);
	EXPECT_LT(strlen(err), 80);
	/* A tiny error buffer is still terminated. */
	memset(line, 'x', sizeof(line) - 1);
	EXPECT_EQ(shell_parse(line, shell_commands, SHELL_CMD_COUNT, &p, err,
			      8), SHELL_ERROR);
	EXPECT_EQ(strlen(err), 7);
}

KTEST(shell, every_command_has_help)
{
	for (unsigned i = 0; i < SHELL_CMD_COUNT; i++) {
		const struct shell_command *c = &shell_commands[i];

		ASSERT_TRUE(c->name != NULL);
		EXPECT_TRUE(c->usage && c->help);
		EXPECT_LE(c->nargs, SHELL_MAX_ARGS);
		EXPECT_TRUE(strncmp(c->usage, c->name, strlen(c->name)) == 0);
		/* help's one-line list fits 80 columns: "  %-8s %s". */
		EXPECT_LE(strlen(c->name), 8);
		EXPECT_LE(2 + 8 + 1 + strlen(c->help), 80);
		/* help COMMAND's lines fit 80 columns too. */
		for (const char *l = c->details; l && *l;) {
			const char *nl = strchr(l, '\n');
			size_t n = nl ? (size_t)(nl - l) : strlen(l);

			EXPECT_LE(n, 80);
			l += n + (nl != NULL);
		}
		for (unsigned k = 0; k + 1 < c->nargs; k++)
			EXPECT_NE(c->args[k].kind, ARG_SETTINGS);
	}
}

/* ---- The line editor, drawing on a one-row terminal ---------------- */

#define TERM_COLS 80
static char screen[TERM_COLS + 1];
static unsigned scr_col, scr_newlines;
static struct term_esc scr_esc;

static void term_reset(void)
{
	memset(screen, ' ', TERM_COLS);
	screen[TERM_COLS] = '\0';
	scr_col = scr_newlines = 0;
	memset(&scr_esc, 0, sizeof(scr_esc));
}

static void term_out(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned count = 0;

		switch (term_esc_feed(&scr_esc, (uint8_t)s[i], &count)) {
		case TERM_PRINT:
			if (s[i] == '\n') {
				scr_newlines++;
				memset(screen, ' ', TERM_COLS);
				scr_col = 0;
			} else if (s[i] == '\r') {
				scr_col = 0;
			} else if (scr_col < TERM_COLS) {
				screen[scr_col++] = s[i];
			}
			break;
		case TERM_LEFT:
			scr_col = count > scr_col ? 0 : scr_col - count;
			break;
		case TERM_RIGHT:
			scr_col = scr_col + count >= TERM_COLS ? TERM_COLS - 1
							      : scr_col + count;
			break;
		case TERM_ERASE_EOL:
			memset(screen + scr_col, ' ', TERM_COLS - scr_col);
			break;
		default:
			break;
		}
	}
}

/* The visible row without trailing blanks. */
static const char *row(void)
{
	static char r[TERM_COLS + 1];
	int n = TERM_COLS;

	memcpy(r, screen, sizeof(r));
	while (n > 0 && r[n - 1] == ' ')
		n--;
	r[n] = '\0';
	return r;
}

static void type(struct line_edit *le, const char *s)
{
	for (; *s; s++)
		line_edit_key(le, (unsigned char)*s);
}

KTEST(shell, line_editing)
{
	static struct line_edit le;

	term_reset();
	line_edit_init(&le, term_out);
	line_edit_start(&le, "> ");
	type(&le, "info cpu");
	EXPECT_STREQ(row(), "> info cpu");
	EXPECT_EQ(scr_col, 10);
	/* Left x3, backspace: "info cpu" -> "infocpu" with cursor after o */
	line_edit_key(&le, KEY_LEFT);
	line_edit_key(&le, KEY_LEFT);
	line_edit_key(&le, KEY_LEFT);
	line_edit_key(&le, KEY_BACKSPACE);
	EXPECT_STREQ(row(), "> infocpu");
	EXPECT_EQ(scr_col, 6);
	type(&le, "  ");
	EXPECT_STREQ(row(), "> info  cpu");
	line_edit_key(&le, KEY_BACKSPACE);
	line_edit_key(&le, KEY_HOME);
	EXPECT_EQ(scr_col, 2);
	line_edit_key(&le, KEY_DELETE);
	EXPECT_STREQ(row(), "> nfo cpu");
	type(&le, "I");
	line_edit_key(&le, KEY_END);
	EXPECT_EQ(scr_col, 10);
	EXPECT_TRUE(line_edit_key(&le, KEY_ENTER));
	EXPECT_STREQ(le.buf, "Info cpu");
	EXPECT_EQ(scr_newlines, 1);
	/* Left at column 0 and Right at the end change nothing. */
	line_edit_start(&le, "> ");
	line_edit_key(&le, KEY_LEFT);
	line_edit_key(&le, KEY_BACKSPACE);
	line_edit_key(&le, KEY_RIGHT);
	EXPECT_EQ(le.cur, 0);
	EXPECT_EQ(scr_col, 2);
}

KTEST(shell, history)
{
	static struct line_edit le;

	term_reset();
	line_edit_init(&le, term_out);
	line_edit_start(&le, "> ");
	type(&le, "info mem");
	line_edit_key(&le, KEY_ENTER);
	line_edit_start(&le, "> ");
	type(&le, "help");
	line_edit_key(&le, KEY_ENTER);
	line_edit_start(&le, "> ");
	type(&le, "pt");
	line_edit_key(&le, KEY_UP);
	EXPECT_STREQ(row(), "> help");
	line_edit_key(&le, KEY_UP);
	EXPECT_STREQ(row(), "> info mem");
	EXPECT_EQ(scr_col, 10);
	line_edit_key(&le, KEY_UP); /* no older line */
	EXPECT_STREQ(le.buf, "info mem");
	line_edit_key(&le, KEY_DOWN);
	line_edit_key(&le, KEY_DOWN); /* back to the draft */
	EXPECT_STREQ(row(), "> pt");
	line_edit_key(&le, KEY_UP);
	EXPECT_TRUE(line_edit_key(&le, KEY_ENTER));
	EXPECT_STREQ(le.buf, "help");
	/* More lines than the ring holds: the oldest go. */
	for (int i = 0; i < LINE_EDIT_HISTORY + 3; i++) {
		char l[16];

		line_edit_start(&le, "> ");
		snprintf(l, sizeof(l), "cmd%d", i);
		type(&le, l);
		line_edit_key(&le, KEY_ENTER);
	}
	EXPECT_EQ(le.hist_count, LINE_EDIT_HISTORY);
	line_edit_start(&le, "> ");
	for (int i = 0; i < LINE_EDIT_HISTORY + 5; i++)
		line_edit_key(&le, KEY_UP);
	EXPECT_STREQ(le.buf, "cmd3");
}

KTEST(shell, full_line_and_cancel)
{
	static struct line_edit le;

	term_reset();
	line_edit_init(&le, term_out);
	line_edit_start(&le, "> ");
	for (int i = 0; i < LINE_EDIT_MAX + 10; i++)
		line_edit_key(&le, 'a');
	EXPECT_EQ(le.len, LINE_EDIT_MAX);
	line_edit_key(&le, KEY_CANCEL);
	EXPECT_EQ(le.len, 0);
	EXPECT_EQ(le.dropped, 0);
	EXPECT_STREQ(row(), ">");
	type(&le, "abc");
	line_edit_key(&le, KEY_KILL);
	EXPECT_EQ(le.len, 0);
	EXPECT_STREQ(row(), ">");
}

/* A line longer than the editor holds is never cut silently: the first
 * refused key prints a notice on its own row, the line is drawn again
 * below it, Enter reports how many keys were dropped, and an edit after
 * the notice starts the count again. */
KTEST(shell, full_line_says_so)
{
	static struct line_edit le;
	char want[TERM_COLS + 1];
	unsigned rows;

	term_reset();
	line_edit_init(&le, term_out);
	line_edit_start(&le, "> ");
	for (int i = 0; i < LINE_EDIT_MAX; i++)
		line_edit_key(&le, 'a' + i % 26);
	EXPECT_EQ(le.dropped, 0);
	rows = scr_newlines;
	line_edit_key(&le, 'x');
	EXPECT_EQ(le.dropped, 1);
	EXPECT_EQ(scr_newlines, rows + 2); /* the notice's row, then a new one */
	snprintf(want, sizeof(want), "> %.*s", LINE_EDIT_MAX, le.buf);
	EXPECT_STREQ(row(), want);
	EXPECT_EQ(scr_col, 2 + LINE_EDIT_MAX);
	type(&le, "yz");
	EXPECT_EQ(le.dropped, 3);
	EXPECT_EQ(scr_newlines, rows + 2); /* one notice per line */
	EXPECT_EQ(le.len, LINE_EDIT_MAX);
	EXPECT_TRUE(line_edit_key(&le, KEY_ENTER));
	EXPECT_EQ(le.dropped, 3);
	/* The next line starts clean. */
	line_edit_start(&le, "> ");
	EXPECT_EQ(le.dropped, 0);
	/* With the cursor inside the line, the redraw puts it back there. */
	for (int i = 0; i < LINE_EDIT_MAX; i++)
		line_edit_key(&le, 'b');
	line_edit_key(&le, KEY_HOME);
	line_edit_key(&le, KEY_RIGHT);
	line_edit_key(&le, 'q');
	EXPECT_EQ(le.dropped, 1);
	EXPECT_EQ(scr_col, 3);
	EXPECT_EQ(le.cur, 1);
	/* Erasing after the notice is an edit: nothing dropped since. */
	line_edit_key(&le, KEY_BACKSPACE);
	EXPECT_EQ(le.dropped, 0);
	EXPECT_EQ(le.len, LINE_EDIT_MAX - 1);
	line_edit_key(&le, 'q');
	EXPECT_EQ(le.dropped, 0);
	EXPECT_TRUE(line_edit_key(&le, KEY_ENTER));
	EXPECT_EQ(le.dropped, 0);
	EXPECT_EQ(strlen(le.buf), LINE_EDIT_MAX);
	EXPECT_EQ(le.buf[0], 'q');
}

static int feed_all(struct term_input *t, const char *bytes, int *keys)
{
	int n = 0;

	for (; *bytes; bytes++) {
		int k = term_input_feed(t, (uint8_t)*bytes);

		if (k != KEY_NONE)
			keys[n++] = k;
	}
	return n;
}

KTEST(shell, serial_key_decoder)
{
	struct term_input t = {0};
	int k[16];

	ASSERT_EQ(feed_all(&t, "a\x1b[A\x1b[B\x1b[C\x1b[D", k), 5);
	EXPECT_EQ(k[0], 'a');
	EXPECT_EQ(k[1], KEY_UP);
	EXPECT_EQ(k[2], KEY_DOWN);
	EXPECT_EQ(k[3], KEY_RIGHT);
	EXPECT_EQ(k[4], KEY_LEFT);
	ASSERT_EQ(feed_all(&t, "\x1bOA\x1b[3~\x7f\x08\x1b[1~\x1b[4~", k), 6);
	EXPECT_EQ(k[0], KEY_UP);
	EXPECT_EQ(k[1], KEY_DELETE);
	EXPECT_EQ(k[2], KEY_BACKSPACE);
	EXPECT_EQ(k[3], KEY_BACKSPACE);
	EXPECT_EQ(k[4], KEY_HOME);
	EXPECT_EQ(k[5], KEY_END);
	/* CR LF is one Enter; CR alone and LF alone are one each. */
	ASSERT_EQ(feed_all(&t, "x\r\ny\rz\n", k), 6);
	EXPECT_EQ(k[1], KEY_ENTER);
	EXPECT_EQ(k[2], 'y');
	EXPECT_EQ(k[3], KEY_ENTER);
	EXPECT_EQ(k[5], KEY_ENTER);
	/* Unknown sequences and control bytes vanish. */
	ASSERT_EQ(feed_all(&t, "\x1b[99;5Z\x02q", k), 1);
	EXPECT_EQ(k[0], 'q');
}

/* A lone Esc gives no key and takes none with it: the byte after it is
 * decoded as usual; a second Esc starts a sequence of its own; and a
 * pending Esc ends when the line goes quiet (term_input_idle), so even
 * '[' or 'O' typed after it by hand are ordinary keys. */
KTEST(shell, lone_escape_keeps_the_next_key)
{
	struct term_input t = {0};
	int k[16];

	ASSERT_EQ(feed_all(&t, "\x1bx", k), 1);
	EXPECT_EQ(k[0], 'x');
	EXPECT_FALSE(term_input_pending(&t));
	ASSERT_EQ(feed_all(&t, "\x1b\r", k), 1);
	EXPECT_EQ(k[0], KEY_ENTER);
	ASSERT_EQ(feed_all(&t, "\x1b\x7f", k), 1);
	EXPECT_EQ(k[0], KEY_BACKSPACE);
	ASSERT_EQ(feed_all(&t, "\x1b\x1b[A", k), 1);
	EXPECT_EQ(k[0], KEY_UP);
	ASSERT_EQ(feed_all(&t, "\x1b", k), 0);
	EXPECT_TRUE(term_input_pending(&t));
	term_input_idle(&t);
	EXPECT_FALSE(term_input_pending(&t));
	ASSERT_EQ(feed_all(&t, "[A", k), 2);
	EXPECT_EQ(k[0], '[');
	EXPECT_EQ(k[1], 'A');
	/* A sequence cut short by a quiet line ends there too. */
	ASSERT_EQ(feed_all(&t, "\x1b[1", k), 0);
	term_input_idle(&t);
	ASSERT_EQ(feed_all(&t, "~", k), 1);
	EXPECT_EQ(k[0], '~');
}

KTEST(shell, screen_escape_interpreter)
{
	struct term_esc t = {0};
	unsigned n = 0;

	EXPECT_EQ(term_esc_feed(&t, 'x', &n), TERM_PRINT);
	EXPECT_EQ(term_esc_feed(&t, '\b', &n), TERM_LEFT);
	EXPECT_EQ(n, 1);
	EXPECT_EQ(term_esc_feed(&t, 0x1b, &n), TERM_SWALLOW);
	EXPECT_EQ(term_esc_feed(&t, '[', &n), TERM_SWALLOW);
	EXPECT_EQ(term_esc_feed(&t, '1', &n), TERM_SWALLOW);
	EXPECT_EQ(term_esc_feed(&t, '2', &n), TERM_SWALLOW);
	EXPECT_EQ(term_esc_feed(&t, 'C', &n), TERM_RIGHT);
	EXPECT_EQ(n, 12);
	EXPECT_EQ(term_esc_feed(&t, 0x1b, &n), TERM_SWALLOW);
	EXPECT_EQ(term_esc_feed(&t, '[', &n), TERM_SWALLOW);
	EXPECT_EQ(term_esc_feed(&t, 'K', &n), TERM_ERASE_EOL);
	/* A huge count is clamped; an unknown final byte is swallowed. */
	for (const char *s = "\x1b[99999999D"; *s; s++)
		term_esc_feed(&t, (uint8_t)*s, &n);
	EXPECT_EQ(n, TERM_ESC_MAX_COUNT);
	for (const char *s = "\x1b[2J"; *s; s++)
		EXPECT_EQ(term_esc_feed(&t, (uint8_t)*s, &n), TERM_SWALLOW);
	EXPECT_EQ(term_esc_feed(&t, 'y', &n), TERM_PRINT);
}

KTEST(shell, fuzz_corpus_regression)
{
	DIR *d = opendir(CORPUS_DIR);
	struct dirent *de;
	unsigned files = 0;

	ASSERT_TRUE(d != NULL);
	while ((de = readdir(d))) {
		char path[LINE_BUF], line[LINE_BUF], err[SHELL_ERROR_MAX];
		struct shell_parsed p;
		FILE *f;
		size_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", CORPUS_DIR, de->d_name);
		f = fopen(path, "rb");
		ASSERT_TRUE(f != NULL);
		n = fread(line, 1, sizeof(line) - 1, f);
		fclose(f);
		line[n] = '\0';
		if (shell_parse(line, shell_commands, SHELL_CMD_COUNT, &p, err,
				sizeof(err)) == SHELL_ERROR) {
			EXPECT_TRUE(strchr(err, '\n') == NULL);
			EXPECT_GT(strlen(err), 0);
		}
		files++;
	}
	closedir(d);
	EXPECT_GE(files, 10);
	ktest_diag("%u corpus files", files);
}
