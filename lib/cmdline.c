/*
 * Command-line tokenizer. Grammar (whitespace separates tokens):
 *   token := key | key "=" value
 *   key   := [A-Za-z0-9_.-]+
 *   value := bare characters up to whitespace | '"' anything but '"' '"'
 * A quote is special only where it opens a value (key="..."); anywhere
 * else it is a bad character. A token that breaks the grammar is reported
 * and skipped up to the next whitespace, so one typo (a stray quote, an
 * unterminated one) never hides the options after it.
 */
#include "lib/cmdline.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

void cmdline_iter_init(struct cmdline_iter *it, const char *line)
{
	it->p = line ? line : "";
	it->index = 0;
	it->error = NULL;
	it->error_at = NULL;
	it->error_len = 0;
}

/* Skip to the end of a malformed token (the next whitespace: a quote in
 * a bad token opens nothing) and report. */
static enum cmdline_status fail(struct cmdline_iter *it, const char *start,
				const char *why)
{
	const char *p = it->p;

	while (*p && !is_space(*p))
		p++;
	it->error = why;
	it->error_at = start;
	it->error_len = (size_t)(p - start);
	it->p = p;
	it->index++;
	return CMDLINE_ERROR;
}

enum cmdline_status cmdline_next(struct cmdline_iter *it,
				 struct cmdline_token *tok)
{
	const char *start;

	while (is_space(*it->p))
		it->p++;
	if (!*it->p)
		return CMDLINE_END;
	start = it->p;
	tok->key = it->p;
	while (is_key_char(*it->p))
		it->p++;
	tok->key_len = (size_t)(it->p - start);
	if (tok->key_len == 0)
		return fail(it, start, *it->p == '=' ? "empty option name" :
						       "bad character in option name");
	tok->value = NULL;
	tok->value_len = 0;
	if (*it->p == '=') {
		it->p++;
		if (*it->p == '"') {
			const char *v = ++it->p;

			while (*it->p && *it->p != '"')
				it->p++;
			if (!*it->p) {
				/* No closing quote: the token ends at the
				 * next whitespace after the opening one. */
				it->p = v;
				return fail(it, start, "unterminated quote");
			}
			tok->value = v;
			tok->value_len = (size_t)(it->p - v);
			it->p++;
		} else {
			tok->value = it->p;
			while (*it->p && !is_space(*it->p) && *it->p != '"')
				it->p++;
			tok->value_len = (size_t)(it->p - tok->value);
		}
	}
	if (*it->p == '"')
		return fail(it, start, "stray quote in option");
	if (*it->p && !is_space(*it->p))
		return fail(it, start, "bad character in option");
	tok->index = it->index++;
	return CMDLINE_TOKEN;
}

const char *cmdline_list_next(const char **list, const char *end,
			      size_t *len)
{
	const char *s = *list, *p = s;

	if (!s || s > end)
		return NULL;
	while (p < end && *p != ',')
		p++;
	*len = (size_t)(p - s);
	*list = p < end ? p + 1 : end + 1;
	return s;
}

bool cmdline_eq(const char *s, size_t len, const char *cstr)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (cstr[i] != s[i] || !cstr[i])
			return false;
	return cstr[len] == '\0';
}

bool cmdline_parse_u64(const char *s, size_t len, unsigned long long *out)
{
	unsigned long long v = 0;
	unsigned base = 10;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == len)
		return false;
	for (; i < len; i++) {
		unsigned d;
		char c = s[i];

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return false;
		if (v > (~0ull - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}
