/*
 * Shell command parser (see kernel/shell/shell_parse.h).
 *
 * Invariants:
 *   1. Every word handed out points into the caller's line, which stays
 *      NUL-terminated; no word is longer than the line.
 *   2. An error leaves *out unspecified but err always terminated.
 *   3. Bytes outside printable ASCII are refused before any lookup, so
 *      messages that quote a word never carry control characters.
 */
#include "kernel/shell/shell_parse.h"
#include "lib/cmdline.h"
#include "lib/kprintf.h"
#include "lib/string.h"

#define PRINTABLE_FIRST 0x21
#define PRINTABLE_LAST 0x7e
#define CHOICES_TEXT_MAX 96
/* Words quoted in a message are cut to this many characters. */
#define QUOTE_MAX 24

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

const struct shell_command *shell_find(const struct shell_command *table,
				       size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

const char *shell_choices_text(const char *const *choices, char *buf,
			       size_t len)
{
	size_t used = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (unsigned i = 0; choices && choices[i]; i++) {
		int w = ksnprintf(buf + used, len - used, "%s%s", i ? "|" : "",
				  choices[i]);

		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
	return buf;
}

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Choices are written in lower case and matched in any case: `memtype
 * WC` is `memtype wc`, as trace.memtype=WC is trace.memtype=wc. */
static bool choice_eq(const char *choice, const char *word)
{
	while (*choice && *choice == ascii_lower(*word)) {
		choice++;
		word++;
	}
	return *choice == '\0' && *word == '\0';
}

static int choice_index(const char *const *choices, const char *word)
{
	for (int i = 0; choices && choices[i]; i++)
		if (choice_eq(choices[i], word))
			return i;
	return -1;
}

/* Split line into words; returns the count or -1 (err set). */
static int split(char *line, char **words, char *err, size_t errlen)
{
	int n = 0;
	char *p = line;

	for (char *q = line; *q; q++) {
		unsigned char c = (unsigned char)*q;

		if (!is_space(*q) &&
		    (c < PRINTABLE_FIRST || c > PRINTABLE_LAST)) {
			ksnprintf(err, errlen, "the line has a control or "
				  "non-ASCII byte (0x%02x)", c);
			return -1;
		}
	}
	for (;;) {
		while (is_space(*p))
			p++;
		if (!*p)
			return n;
		if (n == SHELL_MAX_WORDS) {
			ksnprintf(err, errlen, "too many words (at most %d)",
				  SHELL_MAX_WORDS);
			return -1;
		}
		words[n++] = p;
		while (*p && !is_space(*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
}

static bool ident_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

static bool key_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static bool parse_setting(const struct shell_command *cmd, char *word,
			  struct shell_parsed *out, char *err, size_t errlen)
{
	char *eq = strchr(word, '=');

	if (!eq || eq == word || !eq[1]) {
		ksnprintf(err, errlen, "%s: '%.*s' is not KEY=VALUE (usage: "
			  "%s)", cmd->name, QUOTE_MAX, word, cmd->usage);
		return false;
	}
	*eq = '\0';
	for (const char *k = word; *k; k++) {
		if (!key_char_ok(*k)) {
			ksnprintf(err, errlen, "%s: bad setting name '%.*s' "
				  "(lower case, digits, _)", cmd->name,
				  QUOTE_MAX, word);
			return false;
		}
	}
	for (unsigned i = 0; i < out->nsettings; i++) {
		if (strcmp(out->settings[i].key, word) == 0) {
			ksnprintf(err, errlen, "%s: '%.*s' is set twice",
				  cmd->name, QUOTE_MAX, word);
			return false;
		}
	}
	if (out->nsettings == SHELL_MAX_SETTINGS) {
		ksnprintf(err, errlen, "%s: too many settings (at most %d)",
			  cmd->name, SHELL_MAX_SETTINGS);
		return false;
	}
	out->settings[out->nsettings].key = word;
	out->settings[out->nsettings].value = eq + 1;
	out->nsettings++;
	return true;
}

/* Check words[*i] against spec a (index k); advances *i when it takes the
 * word. Returns false with err set on a bad or missing word. */
static bool parse_arg(const struct shell_command *cmd, unsigned k,
		      char **words, int nwords, int *i,
		      struct shell_parsed *out, char *err, size_t errlen)
{
	const struct shell_arg_spec *a = &cmd->args[k];
	struct shell_value *v = &out->arg[k];
	char list[CHOICES_TEXT_MAX];
	const char *w;

	if (a->kind == ARG_SETTINGS) {
		for (; *i < nwords; (*i)++)
			if (!parse_setting(cmd, words[*i], out, err, errlen))
				return false;
		return true;
	}
	if (*i == nwords) {
		if (a->optional)
			return true;
		if (a->kind == ARG_CHOICE)
			ksnprintf(err, errlen, "%s: missing %s (one of %s)",
				  cmd->name, a->name,
				  shell_choices_text(a->choices, list,
						     sizeof(list)));
		else
			ksnprintf(err, errlen, "%s: missing %s (usage: %s)",
				  cmd->name, a->name, cmd->usage);
		return false;
	}
	w = words[*i];
	switch (a->kind) {
	case ARG_CHOICE:
		v->choice = choice_index(a->choices, w);
		if (v->choice < 0) {
			if (a->optional)
				return true; /* maybe the next spec's word */
			ksnprintf(err, errlen, "%s: '%.*s' is not a %s (one "
				  "of %s)", cmd->name, QUOTE_MAX, w, a->name,
				  shell_choices_text(a->choices, list,
						     sizeof(list)));
			return false;
		}
		break;
	case ARG_ADDRESS:
		if (ident_char(w[0], true)) {
			for (const char *c = w; *c; c++) {
				if (!ident_char(*c, false)) {
					ksnprintf(err, errlen, "%s: %s '%.*s' "
						  "is neither a number nor a "
						  "symbol name", cmd->name,
						  a->name, QUOTE_MAX, w);
					return false;
				}
			}
			v->symbol = true;
			break;
		}
		__attribute__((fallthrough)); /* a number */
	case ARG_NUMBER: {
		unsigned long long x;

		if (!cmdline_parse_u64(w, strlen(w), &x)) {
			ksnprintf(err, errlen, "%s: %s '%.*s' is not a number "
				  "(decimal or 0x-hex)", cmd->name, a->name,
				  QUOTE_MAX, w);
			return false;
		}
		if (x < a->min || x > a->max) {
			ksnprintf(err, errlen, "%s: %s %llu is out of range "
				  "(%llu..%llu)", cmd->name, a->name, x,
				  (unsigned long long)a->min,
				  (unsigned long long)a->max);
			return false;
		}
		v->number = x;
		break;
	}
	case ARG_WORD:
		/* An optional word gives way to a following KEY=VALUE. */
		if (a->optional && strchr(w, '='))
			return true;
		break;
	default:
		break;
	}
	v->present = true;
	v->word = w;
	(*i)++;
	return true;
}

enum shell_parse_result shell_parse(char *line,
				    const struct shell_command *table,
				    size_t n, struct shell_parsed *out,
				    char *err, size_t errlen)
{
	char *words[SHELL_MAX_WORDS];
	int nwords, i = 1;
	const struct shell_command *cmd;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	nwords = split(line, words, err, errlen);
	if (nwords < 0)
		return SHELL_ERROR;
	if (nwords == 0)
		return SHELL_EMPTY;
	cmd = shell_find(table, n, words[0]);
	if (!cmd) {
		ksnprintf(err, errlen, "unknown command '%.*s' (help lists "
			  "the commands)", QUOTE_MAX, words[0]);
		return SHELL_ERROR;
	}
	out->cmd = cmd;
	for (unsigned k = 0; k < cmd->nargs && k < SHELL_MAX_ARGS; k++)
		if (!parse_arg(cmd, k, words, nwords, &i, out, err, errlen))
			return SHELL_ERROR;
	if (i < nwords) {
		ksnprintf(err, errlen, "%s: unexpected '%.*s' (usage: %s)",
			  cmd->name, QUOTE_MAX, words[i], cmd->usage);
		return SHELL_ERROR;
	}
	return SHELL_OK;
}
