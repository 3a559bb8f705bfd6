/*
 * libFuzzer harness for the shell's input path: the bytes go through the
 * serial key decoder (kernel/shell/line_edit.c) into the line editor, and every
 * line the editor completes, plus the raw input as one line, goes to the
 * command parser (kernel/shell/shell_parse.c) with the kernel's own command
 * table (kernel/shell/shell_table.c). Checked: the parser's verdict is
 * consistent (a command on SHELL_OK, a non-empty one-line message on
 * SHELL_ERROR), every word and setting lies inside the line, and the
 * editor keeps its invariants. The corpus is tests/fuzz/corpus/shell/,
 * which tests/host/test_shell.c replays on every make test.
 */
// HOST_SRCS: kernel/shell/shell_parse.c kernel/shell/shell_table.c kernel/shell/line_edit.c lib/term_esc.c lib/cmdline.c lib/string.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/shell/line_edit.h"
#include "kernel/shell/shell_parse.h"
#include "kernel/shell/shell_table.h"
#include "lib/assert.h"
#include "lib/keys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void discard(const char *s, size_t n)
{
	(void)s;
	(void)n;
}

static bool inside(const char *line, size_t len, const char *p)
{
	return p >= line && p <= line + len;
}

static void check_parse(char *line)
{
	size_t len = strlen(line);
	struct shell_parsed p;
	char err[SHELL_ERROR_MAX];

	switch (shell_parse(line, shell_commands, SHELL_CMD_COUNT, &p, err,
			    sizeof(err))) {
	case SHELL_OK:
		kassert(p.cmd >= shell_commands &&
			p.cmd < shell_commands + SHELL_CMD_COUNT);
		kassert(p.nsettings <= SHELL_MAX_SETTINGS);
		for (unsigned i = 0; i < SHELL_MAX_ARGS; i++)
			kassert(!p.arg[i].present ||
				inside(line, len, p.arg[i].word));
		for (unsigned i = 0; i < p.nsettings; i++)
			kassert(inside(line, len, p.settings[i].key) &&
				inside(line, len, p.settings[i].value) &&
				p.settings[i].key[0] && p.settings[i].value[0]);
		break;
	case SHELL_ERROR:
		kassert(err[0] != '\0' && strchr(err, '\n') == NULL);
		break;
	case SHELL_EMPTY:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct line_edit le;
	struct term_input in = {0};
	char *line = malloc(size + 1);

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	check_parse(line);
	free(line);

	line_edit_init(&le, discard);
	line_edit_start(&le, "> ");
	for (size_t i = 0; i < size; i++) {
		int key = term_input_feed(&in, data[i]);

		if (key == KEY_NONE)
			continue;
		if (line_edit_key(&le, key)) {
			char copy[LINE_EDIT_MAX + 1];

			memcpy(copy, le.buf, sizeof(copy));
			check_parse(copy);
			line_edit_start(&le, "> ");
		}
		kassert(le.cur <= le.len && le.len <= LINE_EDIT_MAX);
		kassert(le.buf[le.len] == '\0');
	}
	return 0;
}
