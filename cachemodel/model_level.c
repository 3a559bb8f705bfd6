/*
 * One cache level of the model: sets x ways of line numbers, MESI states
 * and LRU stamps (struct level, cachemodel/model_internal.h): making and
 * freeing one, finding, inserting (evicting the least recently used way)
 * and dropping a line. Who writes which array is said at struct level.
 */
#include <stdlib.h>
#include <string.h>
#include "cachemodel/model_internal.h"

bool level_init(struct cm_model *m, struct level *l,
		const struct cm_level_cfg *c)
{
	size_t n;

	memset(l, 0, sizeof(*l));
	l->fills = &m->fills;
	if (c->size == 0)
		return true;
	l->ways = c->ways;
	l->sets = c->size / (c->ways * CM_LINE_SIZE);
	if ((l->sets & (l->sets - 1)) == 0)
		l->set_mask = l->sets - 1;
	l->latency = c->latency;
	n = (size_t)l->sets * l->ways;
	l->line = calloc(n, sizeof(*l->line));
	l->state = calloc(n, sizeof(*l->state));
	l->stamp = calloc(n, sizeof(*l->stamp));
	m->bytes += n * (sizeof(*l->line) + sizeof(*l->state) +
			 sizeof(*l->stamp));
	return l->line && l->state && l->stamp;
}

void level_free(struct level *l)
{
	free(l->line);
	free(l->state);
	free(l->stamp);
}

/* Index of way 0 of line's set (no division for the usual sizes). */
static size_t set_base(const struct level *l, uint64_t line)
{
	uint64_t set = l->set_mask || l->sets == 1 ? line & l->set_mask
						    : line % l->sets;

	return (size_t)set * l->ways;
}

long level_find(const struct level *l, uint64_t line)
{
	size_t base;

	if (!level_present(l))
		return -1;
	base = set_base(l, line);
	for (uint32_t w = 0; w < l->ways; w++)
		if (l->line[base + w] == line && state_get(l, base + w) != ST_I)
			return (long)(base + w);
	return -1;
}

void level_insert(struct level *l, uint64_t line,
		  enum line_state st, uint64_t *vline,
		  enum line_state *vstate)
{
	size_t base = set_base(l, line);
	size_t victim = base;

	for (uint32_t w = 0; w < l->ways; w++) {
		size_t i = base + w;

		if (state_get(l, i) == ST_I) {
			victim = i;
			break;
		}
		if (l->stamp[i] < l->stamp[victim])
			victim = i;
	}
	*vline = l->line[victim];
	*vstate = state_get(l, victim);
	__atomic_store_n(l->fills,
			 __atomic_load_n(l->fills, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	l->line[victim] = line;
	state_set(l, victim, st);
	level_touch(l, (long)victim);
}

enum line_state level_drop(struct level *l, uint64_t line)
{
	long i = level_find(l, line);
	enum line_state st;

	if (i < 0)
		return ST_I;
	st = state_get(l, (size_t)i);
	state_set(l, (size_t)i, ST_I);
	return st;
}
