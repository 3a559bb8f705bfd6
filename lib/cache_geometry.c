/*
 * Parser of the cache-geometry text form (format and contract in
 * lib/cache_geometry.h).
 */
#include <stdbool.h>
#include <stddef.h>
#include "lib/cache_geometry.h"
#include "lib/cmdline.h"
#include "lib/compiler.h"
#include "lib/string.h"

#define GEOM_LINE_BYTES 64
#define GEOM_FIELDS 3		/* LEVEL:BYTES:WAYS */
#define GEOM_MAX_WAYS 1024	/* more than any real cache has */

/* Split [s, end) at ':' into at most max fields; returns the count, or
 * max + 1 when there are more. */
static unsigned split_fields(const char *s, const char *end,
			     const char **f, size_t *len, unsigned max)
{
	unsigned n = 0;
	const char *start = s;

	for (const char *p = s;; p++) {
		if (p == end || *p == ':') {
			if (n == max)
				return max + 1;
			f[n] = start;
			len[n++] = (size_t)(p - start);
			if (p == end)
				return n;
			start = p + 1;
		}
	}
}

static const char *parse_level(const char *e, size_t elen,
			       struct cache_geometry *g, bool *seen)
{
	const char *f[GEOM_FIELDS];
	size_t len[GEOM_FIELDS];
	unsigned long long bytes, ways;
	unsigned l;

	if (split_fields(e, e + elen, f, len, GEOM_FIELDS) != GEOM_FIELDS)
		return "each level is LEVEL:BYTES:WAYS";
	for (l = 0; l < CACHE_GEOM_LEVELS; l++)
		if (cmdline_eq(f[0], len[0], cache_geometry_level_name(l)))
			break;
	if (l == CACHE_GEOM_LEVELS)
		return "unknown level (l1d, l2, llc)";
	if (seen[l])
		return "a level given twice";
	seen[l] = true;
	if (!cmdline_parse_u64(f[1], len[1], &bytes) ||
	    !cmdline_parse_u64(f[2], len[2], &ways))
		return "BYTES and WAYS must be numbers";
	if (bytes == 0 && ways == 0)
		return NULL;			/* the level does not exist */
	if (ways == 0 || ways > GEOM_MAX_WAYS)
		return "WAYS must be 1..1024 for a level that exists";
	if (bytes == 0 || bytes % (ways * GEOM_LINE_BYTES) != 0)
		return "BYTES must be a non-zero multiple of WAYS x 64";
	g->level[l].bytes = bytes;
	g->level[l].ways = (unsigned)ways;
	return NULL;
}

const char *cache_geometry_parse(const char *text, struct cache_geometry *g)
{
	const char *list = text, *end = text + strlen(text), *e, *err = NULL;
	bool seen[CACHE_GEOM_LEVELS] = {false};
	size_t len;

	memset(g, 0, sizeof(*g));
	if (!*text)
		err = "empty";
	while (!err && (e = cmdline_list_next(&list, end, &len)))
		err = parse_level(e, len, g, seen);
	if (!err && g->level[CACHE_GEOM_LLC].bytes == 0)
		err = "the llc level is required";
	if (err)
		memset(g, 0, sizeof(*g));
	return err;
}
