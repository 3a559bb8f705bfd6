/*
 * One cache level: sets x ways of line numbers, MESI states
 * and LRU stamps (struct level, cachemodel/model_internal.h): making and
 * freeing one, finding, inserting (evicting the least recently used way)
 * and dropping a line. Who writes which array is said at struct level.
 *
 * A lookup compares 16-bit tags four at a time before it reads a line
 * number (struct level's tag[]): a 24-way LLC set is six words, not 24
 * line numbers over three host cache lines. The way a lookup finds, and
 * so every figure, is the one comparing line numbers way by way finds.
 */
#include <stdlib.h>
#include <string.h>
#include "cachemodel/model_internal.h"

/* 1 in every lane of a tag word, and each lane's top bit. */
#define TAG_LANES_ONE (~0ull / TAG_LANE_MASK)
#define TAG_LANES_TOP (TAG_LANES_ONE << (TAG_BITS - 1))

bool level_init(struct cm_model *m, struct level *l,
		const struct cm_level_cfg *c)
{
	size_t n, words;

	memset(l, 0, sizeof(*l));
	l->fills = &m->fills;
	if (c->size == 0)
		return true;
	l->ways = c->ways;
	l->sets = c->size / (c->ways * CM_LINE_SIZE);
	if ((l->sets & (l->sets - 1)) == 0)
		l->set_mask = l->sets - 1;
	l->latency = c->latency;
	l->tag_words = (l->ways + TAG_LANES - 1) / TAG_LANES;
	n = (size_t)l->sets * l->ways;
	words = (size_t)l->sets * l->tag_words;
	l->line = calloc(n, sizeof(*l->line));
	l->tag = calloc(words, sizeof(*l->tag));
	l->state = calloc(n, sizeof(*l->state));
	l->stamp = calloc(n, sizeof(*l->stamp));
	m->bytes += n * (sizeof(*l->line) + sizeof(*l->state) +
			 sizeof(*l->stamp)) +
		    words * sizeof(*l->tag);
	/* Zeroed ways hold line 0, whose tag is 0: tag[]'s invariant. */
	return l->line && l->tag && l->state && l->stamp;
}

void level_free(struct level *l)
{
	free(l->line);
	free(l->tag);
	free(l->state);
	free(l->stamp);
}

/* line's set (no division for the usual sizes). */
static size_t set_of(const struct level *l, uint64_t line)
{
	return (size_t)(l->set_mask || l->sets == 1 ? line & l->set_mask
						    : line % l->sets);
}

long level_find(const struct level *l, uint64_t line)
{
	uint64_t want = level_tag(line) * TAG_LANES_ONE;
	const uint64_t *tags;
	size_t set, base;

	if (!level_present(l))
		return -1;
	set = set_of(l, line);
	base = set * l->ways;
	tags = &l->tag[set * l->tag_words];
	for (uint32_t k = 0; k < l->tag_words; k++) {
		uint64_t x = tags[k] ^ want;
		/* The top bit of each lane of x that is zero, and perhaps
		 * of a lane above one (a borrow): a superset of the lanes
		 * whose tag is line's, each checked in way order. */
		uint64_t match = (x - TAG_LANES_ONE) & ~x & TAG_LANES_TOP;

		while (match) {
			uint32_t w = k * TAG_LANES +
				     (uint32_t)__builtin_ctzll(match) / TAG_BITS;

			match &= match - 1;
			if (w < l->ways && l->line[base + w] == line &&
			    state_get(l, base + w) != ST_I)
				return (long)(base + w);
		}
	}
	return -1;
}

size_t level_insert(struct level *l, uint64_t line,
		    enum line_state st, uint64_t *vline,
		    enum line_state *vstate)
{
	size_t set = set_of(l, line), base = set * l->ways, victim = base;
	uint64_t *tag;
	unsigned shift;

	/* The first invalid way, else the least recently used one: the
	 * states first, as they are a few words and the stamps are not. */
	while (victim < base + l->ways && state_get(l, victim) != ST_I)
		victim++;
	if (victim == base + l->ways) {
		victim = base;
		for (size_t i = base + 1; i < base + l->ways; i++)
			if (l->stamp[i] < l->stamp[victim])
				victim = i;
	}
	*vline = l->line[victim];
	*vstate = state_get(l, victim);
	__atomic_store_n(l->fills,
			 __atomic_load_n(l->fills, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	l->line[victim] = line;
	tag = &l->tag[set * l->tag_words + (victim - base) / TAG_LANES];
	shift = (unsigned)((victim - base) % TAG_LANES) * TAG_BITS;
	*tag = (*tag & ~(TAG_LANE_MASK << shift)) | level_tag(line) << shift;
	state_set(l, victim, st);
	level_touch(l, (long)victim);
	return victim;
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
