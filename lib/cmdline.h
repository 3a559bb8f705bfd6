/*
 * A reusable tokenizer for "key=value flag key=\"quoted value\"" strings:
 * the kernel command line now, the shell's command parser later.
 * It never allocates and never modifies its input; tokens point into it.
 */
#ifndef LIB_CMDLINE_H
#define LIB_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>

struct cmdline_token {
	const char *key;
	size_t key_len;
	const char *value; /* NULL for a bare flag */
	size_t value_len;
	unsigned index; /* 0-based position on the line */
};

enum cmdline_status {
	CMDLINE_END,
	CMDLINE_TOKEN,
	CMDLINE_ERROR, /* malformed token: skipped, see error */
};

struct cmdline_iter {
	const char *p;
	unsigned index;
	const char *error; /* static text describing the last error */
	const char *error_at; /* where the malformed token starts */
	size_t error_len;
};

void cmdline_iter_init(struct cmdline_iter *it, const char *line);
/* Next token; on CMDLINE_ERROR the iterator has skipped the bad token. */
enum cmdline_status cmdline_next(struct cmdline_iter *it,
				 struct cmdline_token *tok);

/*
 * Split the comma-separated list [*list, end): returns the next element
 * (length in *len) and advances *list past it, or NULL after the last.
 * Empty elements come back with *len == 0; an empty list is one empty
 * element, so callers check for an empty value first.
 */
const char *cmdline_list_next(const char **list, const char *end,
			      size_t *len);

/* Compare a counted string with a C string. */
bool cmdline_eq(const char *s, size_t len, const char *cstr);
/* Parse a decimal or 0x-hex unsigned number; false on junk or overflow. */
bool cmdline_parse_u64(const char *s, size_t len, unsigned long long *out);

#endif
