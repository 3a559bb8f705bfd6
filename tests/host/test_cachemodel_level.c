/*
 * Host test of one cache level of the model (cachemodel/model_level.c).
 * level_find() looks a line up through the 16-bit tag filter of struct
 * level (cachemodel/model_internal.h) and must find exactly the way a
 * scan of every way's line number, in way order, finds; level_insert()
 * must fill the way a single pass over the ways picks (the first
 * invalid one, else the least recently used). Long pseudo-random runs of
 * fills, drops and state changes, on geometries from one way to 24 (the
 * LLC of xeon5400-2008), with whole and partial tag words and set counts
 * that are not powers of two, on lines chosen so that several of one set
 * share a tag: a lookup must pass over a way whose tag matches but whose
 * line does not, and over an invalid way that still holds the line.
 * After every step the tag invariant is checked for the set touched.
 */
// HOST_SRCS: cachemodel/model_level.c
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "cachemodel/model_internal.h"
#include "lib/ktest.h"
#include "lib/prng.h"

#define STEPS 200000
#define SEED 0x5eed1e7e1ull
/* Lines drawn per set: a few share a tag (colliding_lines()). */
#define POOL 12
/* Candidates tried per set to find lines sharing a tag. */
#define TAG_SEARCH (1u << 22)

struct geometry {
	uint32_t sets, ways;
};

static const struct geometry geometries[] = {
	{1, 1},   {4, 3},  {16, 4}, {8, 5},	{64, 8},
	{6, 12},  {32, 16}, {16, 24}, {5, 20}, {3, 24},
};

/* The lookup without the filter: every way in way order, its line
 * number and state. */
static long find_by_ways(const struct level *l, uint64_t line)
{
	uint64_t set = l->set_mask || l->sets == 1 ? line & l->set_mask
						    : line % l->sets;
	size_t base = (size_t)set * l->ways;

	for (uint32_t w = 0; w < l->ways; w++)
		if (l->line[base + w] == line && state_get(l, base + w) != ST_I)
			return (long)(base + w);
	return -1;
}

/* The way level_insert() must fill for a line of set: the first invalid
 * way, else the first of the least recently touched ones. */
static size_t victim_by_ways(const struct level *l, uint64_t set)
{
	size_t base = (size_t)set * l->ways, victim = base;

	for (uint32_t w = 0; w < l->ways; w++) {
		size_t i = base + w;

		if (state_get(l, i) == ST_I)
			return i;
		if (l->stamp[i] < l->stamp[victim])
			victim = i;
	}
	return victim;
}

/* Whether every way of set has its line's tag in its lane, and every
 * lane past the last way holds 0. */
static bool tags_hold(const struct level *l, uint64_t set)
{
	const uint64_t *t = &l->tag[set * l->tag_words];

	for (uint32_t w = 0; w < l->tag_words * TAG_LANES; w++) {
		uint64_t lane = t[w / TAG_LANES] >>
				(w % TAG_LANES * TAG_BITS) & TAG_LANE_MASK;
		uint64_t want = w < l->ways
					? level_tag(l->line[set * l->ways + w])
					: 0;

		if (lane != want)
			return false;
	}
	return true;
}

/* pool[0..POOL) for set: lines of that set, the first three sharing one
 * tag, the next two sharing another, the rest other lines of the set.
 * Returns false if TAG_SEARCH candidates held no such lines. */
static bool colliding_lines(const struct level *l, uint64_t set,
			    uint64_t *pool)
{
	static uint64_t first_with[1u << TAG_BITS];	/* 0: none yet */
	unsigned n = 0;

	for (size_t i = 0; i < (1u << TAG_BITS); i++)
		first_with[i] = 0;
	for (uint64_t k = 1; k < TAG_SEARCH && n < 5; k++) {
		uint64_t line = set + k * l->sets;
		uint64_t tag = level_tag(line);

		if (n == 2 && tag == level_tag(pool[0])) {
			pool[n++] = line;	/* the third of the first tag */
		} else if (first_with[tag] && (n == 0 || n == 3) &&
			   (n == 0 || tag != level_tag(pool[0]))) {
			pool[n++] = first_with[tag];	/* a pair */
			pool[n++] = line;
		} else if (!first_with[tag]) {
			first_with[tag] = line;
		}
	}
	for (unsigned i = n; i < POOL; i++)
		pool[i] = set + (TAG_SEARCH + i) * l->sets;
	return n == 5;
}

KTEST(cachemodel_level, find_matches_a_way_by_way_lookup)
{
	uint64_t rng = prng_seed(SEED);

	for (size_t g = 0; g < sizeof(geometries) / sizeof(geometries[0]); g++) {
		struct cm_model *m = calloc(1, sizeof(*m));
		struct cm_level_cfg cfg = {
			.size = geometries[g].sets * geometries[g].ways *
				CM_LINE_SIZE,
			.ways = geometries[g].ways,
			.latency = 1,
		};
		struct level l;
		uint64_t *pools;
		unsigned found = 0, skipped = 0, collided = 0;

		ASSERT_TRUE(m != NULL);
		ASSERT_TRUE(level_init(m, &l, &cfg));
		EXPECT_EQ(l.sets, geometries[g].sets);
		pools = calloc((size_t)l.sets * POOL, sizeof(*pools));
		ASSERT_TRUE(pools != NULL);
		for (uint64_t s = 0; s < l.sets; s++)
			EXPECT_TRUE(colliding_lines(&l, s, &pools[s * POOL]));
		for (unsigned step = 0; step < STEPS; step++) {
			uint64_t r = prng_next(&rng);
			uint64_t set = (r >> 8) % l.sets;
			uint64_t line = pools[set * POOL + (r >> 24) % POOL];
			long i = find_by_ways(&l, line);
			uint64_t vline;
			enum line_state vst;

			EXPECT_EQ(level_find(&l, line), i);
			switch (r % 4) {
			case 0:	/* fill when absent */
			case 1:
				if (i < 0) {
					size_t want = victim_by_ways(&l, set);

					level_insert(&l, line,
						     (enum line_state)(1 + (r >> 40) % 3),
						     &vline, &vst);
					EXPECT_EQ(find_by_ways(&l, line),
						  (long)want);
				}
				break;
			case 2: {	/* drop: the way keeps the line, invalid */
				enum line_state had =
					i < 0 ? ST_I : state_get(&l, (size_t)i);

				EXPECT_EQ(level_drop(&l, line), had);
				break;
			}
			default: /* a snoop or an upgrade changes its state */
				if (i >= 0)
					state_set(&l, (size_t)i,
						  (enum line_state)((r >> 40) % 4));
				break;
			}
			EXPECT_TRUE(tags_hold(&l, set));
			i = level_find(&l, line);
			EXPECT_EQ(i, find_by_ways(&l, line));
			if (i >= 0)
				found++;
			else
				skipped++;
			/* A lookup passed a way with its tag and not its line. */
			for (uint32_t w = 0; w < l.ways; w++) {
				uint64_t other = l.line[set * l.ways + w];

				if (other != line && level_tag(other) ==
							     level_tag(line)) {
					collided++;
					break;
				}
			}
		}
		/* The run met every case it is there for. */
		EXPECT_GT(found, STEPS / 10);
		EXPECT_GT(skipped, STEPS / 10);
		EXPECT_GT(collided, STEPS / 100);
		printf("# %u sets x %u ways: %u found, %u absent, %u past a shared tag\n",
		       l.sets, l.ways, found, skipped, collided);
		free(pools);
		level_free(&l);
		free(m);
	}
}
