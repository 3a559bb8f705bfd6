/*
 * The shell's command parser, portable (host-tested and fuzzed): a line
 * is split into words, the first names a command in a table, the others
 * are checked against that command's argument specs. Nothing is run
 * here; kernel/shell/shell.c dispatches what this returns.
 *
 *   ARG_CHOICE    one word of a fixed list       info cpu
 *   ARG_NUMBER    decimal or 0x-hex, in [min,max] pt 0xffffffff80100000
 *   ARG_ADDRESS   a number as above, or a symbol name   pt kmain
 *   ARG_WORD      any word (checked by the command)  run tbench
 *   ARG_SETTINGS  the rest: KEY=VALUE words       run copy size=65536
 *
 * An optional ARG_CHOICE is skipped when the word is not in its list, so
 * "run copy size=1" and "run copy full size=1" both parse.
 */
#ifndef KERNEL_SHELL_PARSE_H
#define KERNEL_SHELL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHELL_MAX_WORDS 16
#define SHELL_MAX_ARGS 4
#define SHELL_MAX_SETTINGS 8
#define SHELL_ERROR_MAX 160

enum shell_arg_kind {
	ARG_CHOICE,
	ARG_NUMBER,
	ARG_ADDRESS,
	ARG_WORD,
	ARG_SETTINGS,
};

struct shell_arg_spec {
	const char *name; /* as in the usage line: TOPIC, ADDRESS */
	enum shell_arg_kind kind;
	bool optional;
	/* ARG_CHOICE: NULL-terminated, lower case; matched in any case */
	const char *const *choices;
	uint64_t min, max; /* ARG_NUMBER */
};

struct shell_command {
	const char *name;
	const char *usage; /* "pt ADDRESS" */
	const char *help; /* one line */
	const char *details; /* help COMMAND: more lines, or NULL */
	const struct shell_arg_spec *args;
	unsigned nargs; /* <= SHELL_MAX_ARGS; ARG_SETTINGS only last */
};

struct shell_value {
	bool present;
	const char *word; /* the word as typed */
	uint64_t number; /* ARG_NUMBER, ARG_ADDRESS given as a number */
	bool symbol; /* ARG_ADDRESS given as a name: resolve word */
	int choice; /* ARG_CHOICE: index into choices */
};

struct shell_setting {
	const char *key, *value;
};

struct shell_parsed {
	const struct shell_command *cmd;
	struct shell_value arg[SHELL_MAX_ARGS];
	struct shell_setting settings[SHELL_MAX_SETTINGS];
	unsigned nsettings;
};

enum shell_parse_result { SHELL_EMPTY, SHELL_OK, SHELL_ERROR };

/*
 * Parse line (modified in place: words are NUL-terminated inside it)
 * against table[0..n). On SHELL_OK *out describes the command; on
 * SHELL_ERROR err holds a one-line message naming the command and the
 * bad word (never longer than errlen - 1). Lines with control bytes,
 * too many words or duplicate settings are errors.
 */
enum shell_parse_result shell_parse(char *line,
				    const struct shell_command *table,
				    size_t n, struct shell_parsed *out,
				    char *err, size_t errlen);

/* The command named name in table[0..n), or NULL. */
const struct shell_command *shell_find(const struct shell_command *table,
				       size_t n, const char *name);

/* Write "a|b|c" for a choice list into buf; returns buf. */
const char *shell_choices_text(const char *const *choices, char *buf,
			       size_t len);

#endif
