/*
 * Parser of the machine-profile file (format in cachemodel/profile.h).
 * One pass over the text; only the wanted section is stored, the other
 * section names are collected for the error message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cachemodel/profile.h"

#define LINE_MAX_LEN 256
#define NAMES_MAX 512

enum key_kind {
	KEY_NUMBER,
	KEY_LEVEL,
};

struct key {
	const char *name;
	enum key_kind kind;
	size_t offset;
	bool optional;		/* absent: 0 */
};

#define NUM(f) { #f, KEY_NUMBER, offsetof(struct cm_profile, f), false }
#define OPT(f) { #f, KEY_NUMBER, offsetof(struct cm_profile, f), true }
#define LVL(f) { #f, KEY_LEVEL, offsetof(struct cm_profile, f), false }
static const struct key keys[] = {
	NUM(freq_mhz), NUM(cpi_x100), LVL(l1d), LVL(l2), LVL(llc),
	NUM(mem_latency), NUM(remote_latency), NUM(uc_load), NUM(uc_store),
	NUM(wc_buffers), NUM(wc_burst), NUM(wc_chunk), NUM(locked),
	NUM(fence), NUM(clflush), OPT(sfence), OPT(llc_inclusive),
	OPT(bus_cpus), OPT(llc_cpus), OPT(fill_buffers), OPT(store_buffer),
	OPT(prefetch_next), OPT(prefetch_ahead), OPT(l2_queue),
	OPT(l1_fill),
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static bool parse_u32(const char **s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	while (**s == ' ' || **s == '\t')
		(*s)++;
	if (**s < '0' || **s > '9')
		return false;
	v = strtoull(*s, &end, 0);
	if (v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	*s = end;
	return true;
}

static bool rest_empty(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == '\0' || *s == '#';
}

/* Apply one "key values" line to p; returns an error message or NULL. */
static const char *apply(struct cm_profile *p, const char *line,
			 bool seen[NKEYS])
{
	size_t klen = strcspn(line, " \t");
	const char *v = line + klen;

	for (size_t k = 0; k < NKEYS; k++) {
		char *field = (char *)p + keys[k].offset;

		if (strlen(keys[k].name) != klen ||
		    strncmp(keys[k].name, line, klen))
			continue;
		if (seen[k])
			return "key given twice";
		seen[k] = true;
		if (keys[k].kind == KEY_NUMBER) {
			if (!parse_u32(&v, (uint32_t *)field))
				return "expected one number";
		} else {
			struct cm_level_cfg *l = (struct cm_level_cfg *)field;

			if (!parse_u32(&v, &l->size) ||
			    !parse_u32(&v, &l->ways) ||
			    !parse_u32(&v, &l->latency))
				return "expected: bytes ways latency";
		}
		return rest_empty(v) ? NULL : "unexpected text after the value";
	}
	return "unknown key";
}

bool cm_profile_parse(const char *text, const char *name,
		      struct cm_profile *out, char *err, size_t err_size)
{
	bool seen[NKEYS] = {false};
	bool in = false, found = false;
	char names[NAMES_MAX] = "";
	unsigned lineno = 0;
	const char *e;

	memset(out, 0, sizeof(*out));
	if (strlen(name) >= CM_NAME_MAX) {
		snprintf(err, err_size, "profile name '%s' is too long", name);
		return false;
	}
	while (*text) {
		char line[LINE_MAX_LEN];
		size_t len = strcspn(text, "\n");
		const char *s = line;

		lineno++;
		if (len >= sizeof(line)) {
			snprintf(err, err_size, "line %u: too long", lineno);
			return false;
		}
		memcpy(line, text, len);
		line[len] = '\0';
		text += len + (text[len] == '\n');
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0' || *s == '#')
			continue;
		if (*s == '[') {
			size_t n = strcspn(s + 1, "]");

			if (s[1 + n] != ']' || n == 0 || n >= CM_NAME_MAX) {
				snprintf(err, err_size,
					 "line %u: bad section header", lineno);
				return false;
			}
			in = strlen(name) == n && !strncmp(s + 1, name, n);
			if (in && found) {
				snprintf(err, err_size,
					 "line %u: profile '%s' defined twice",
					 lineno, name);
				return false;
			}
			found |= in;
			if (strlen(names) + n + 2 < sizeof(names)) {
				strcat(names, names[0] ? " " : "");
				strncat(names, s + 1, n);
			}
			continue;
		}
		if (!in)
			continue;
		e = apply(out, s, seen);
		if (e) {
			snprintf(err, err_size, "line %u: %s", lineno, e);
			return false;
		}
	}
	if (!found) {
		snprintf(err, err_size, "no profile '%s' (profiles: %s)", name,
			 names[0] ? names : "none");
		return false;
	}
	for (size_t k = 0; k < NKEYS; k++) {
		if (!seen[k] && !keys[k].optional) {
			snprintf(err, err_size, "profile '%s' lacks '%s'",
				 name, keys[k].name);
			return false;
		}
	}
	strcpy(out->name, name);
	e = cm_profile_check(out);
	if (e) {
		snprintf(err, err_size, "profile '%s': %s", name, e);
		return false;
	}
	return true;
}
