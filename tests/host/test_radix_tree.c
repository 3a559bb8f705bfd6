/*
 * mm/radix_tree.c against a shadow (a sorted array of index/item pairs),
 * under ASan and UBSan, with 8-slot nodes (deep trees) and 64-slot nodes:
 * random, dense and sparse index sets; insert, lookup, slot lookup,
 * delete, gang lookup, tags and tagged gang lookup, iteration, height
 * growth and shrinking. radix_tree_check() verifies the structural
 * invariants after every phase. Freed nodes go through RCU (one CPU here,
 * so rcu_barrier() runs them) and are poisoned.
 */
// HOST_SRCS: mm/radix_tree.c mm/kmalloc.c mm/kmalloc_large.c mm/kmalloc_stats.c lib/rcu.c lib/spinlock.c lib/string.c tests/host/host_cycles.c tests/host/host_cpu.c
#include <stdlib.h>
#include <string.h>
#include "lib/ktest.h"
#include "lib/prng.h"
#include "lib/rcu.h"
#include "mm/kmalloc.h"
#include "mm/page.h"
#include "mm/radix_tree.h"
#include "tests/host/host_mm.h"

#define NR_ITEMS 3000
#define GANG_MAX 16
#define GANG_PROBES 400

static void setup(void)
{
	if (host_mm_init_once())
		rcu_idle_exit();
}

static void *item_of(uint64_t index)
{
	/* Never NULL, bit 0 clear; the tree never dereferences items. */
	return (void *)(uintptr_t)((index << 4) | 0x10);
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	return prng_next(&rng_state);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

enum set_kind { SET_RANDOM, SET_DENSE, SET_SPARSE };

/* n distinct indices of the kind, sorted; returns the count. */
static unsigned make_set(uint64_t *idx, unsigned n, enum set_kind kind,
			 uint64_t seed)
{
	unsigned m = 0;

	rng_state = prng_seed(seed);
	for (unsigned i = 0; i < n; i++) {
		switch (kind) {
		case SET_RANDOM: /* anywhere in 40 bits */
			idx[i] = rnd() & ((1ull << 40) - 1);
			break;
		case SET_DENSE: /* 0..n-1 with a few holes */
			idx[i] = i + (i / 97);
			break;
		case SET_SPARSE: /* far apart, some near the top */
			idx[i] = (i % 7 == 0) ? UINT64_MAX - i :
						 (uint64_t)i * 1000003ull;
			break;
		}
	}
	qsort(idx, n, sizeof(idx[0]), cmp_u64);
	for (unsigned i = 0; i < n; i++)
		if (m == 0 || idx[i] != idx[m - 1])
			idx[m++] = idx[i];
	return m;
}

/* Position of the first shadow index >= x. */
static unsigned lower_bound(const uint64_t *idx, unsigned n, uint64_t x)
{
	unsigned lo = 0, hi = n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (idx[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool present(const uint64_t *idx, const bool *live, unsigned n,
		    uint64_t x)
{
	unsigned p = lower_bound(idx, n, x);

	return p < n && idx[p] == x && live[p];
}

/* Compare a gang lookup from 'first' with the shadow; returns mismatches. */
static unsigned check_gang(struct radix_tree_root *t, const uint64_t *idx,
			   const bool *live, const bool *tagged, unsigned n,
			   uint64_t first, int tag)
{
	void *got[GANG_MAX];
	uint64_t got_idx[GANG_MAX];
	unsigned k, want = 0, bad = 0;

	k = tag < 0 ? radix_tree_gang_lookup(t, got, got_idx, first, GANG_MAX) :
		      radix_tree_gang_lookup_tag(t, got, got_idx, first,
						 GANG_MAX,
						 (enum radix_tree_tag)tag);
	for (unsigned p = lower_bound(idx, n, first); p < n && want < GANG_MAX;
	     p++) {
		if (!live[p] || (tag >= 0 && !tagged[p]))
			continue;
		if (want >= k || got_idx[want] != idx[p] ||
		    got[want] != item_of(idx[p]))
			bad++;
		want++;
	}
	return bad + (want != k);
}

static void run_set(struct ktest_ctx *ctx, unsigned shift, enum set_kind kind)
{
	static uint64_t idx[NR_ITEMS];
	static bool live[NR_ITEMS], tagged[NR_ITEMS];
	struct radix_tree_root t;
	unsigned n = make_set(idx, NR_ITEMS, kind, 0x9e3779b97f4a7c15ull + kind),
		 bad = 0, nlive = 0;

	setup();
	radix_tree_init(&t, shift);
	EXPECT_EQ(radix_tree_height(&t), 0);
	/* Insert in a shuffled order. */
	memset(live, 0, sizeof(live));
	memset(tagged, 0, sizeof(tagged));
	for (unsigned i = 0; i < n; i++) {
		unsigned p = (unsigned)((i * 7919ull) % n);

		if (live[p])
			continue;
		if (radix_tree_insert(&t, idx[p], item_of(idx[p])) != RADIX_TREE_OK)
			bad++;
		live[p] = true;
		nlive++;
	}
	for (unsigned p = 0; p < n; p++)
		if (!live[p]) {
			bad += radix_tree_insert(&t, idx[p], item_of(idx[p])) !=
			       RADIX_TREE_OK;
			live[p] = true;
			nlive++;
		}
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(radix_tree_check(&t), nlive);
	EXPECT_EQ(radix_tree_insert(&t, idx[0], item_of(1)), RADIX_TREE_EEXIST);
	EXPECT_GE(radix_tree_maxindex(&t), idx[n - 1]);

	/* Lookups: every item, and probes next to them. */
	for (unsigned p = 0; p < n; p++) {
		void **slot = radix_tree_lookup_slot(&t, idx[p]);

		bad += radix_tree_lookup(&t, idx[p]) != item_of(idx[p]);
		bad += !slot || radix_tree_deref_slot(slot) != item_of(idx[p]);
		if (!present(idx, live, n, idx[p] + 1))
			bad += radix_tree_lookup(&t, idx[p] + 1) != NULL;
	}
	EXPECT_EQ(bad, 0);

	/* Tags on every third item, then cleared on every sixth. */
	for (unsigned p = 0; p < n; p += 3) {
		bad += radix_tree_tag_set(&t, idx[p], RADIX_TREE_TAG_DIRTY) !=
		       item_of(idx[p]);
		tagged[p] = true;
	}
	for (unsigned p = 0; p < n; p += 6) {
		radix_tree_tag_clear(&t, idx[p], RADIX_TREE_TAG_DIRTY);
		tagged[p] = false;
	}
	EXPECT_EQ(bad, 0);
	EXPECT_TRUE(radix_tree_tagged(&t, RADIX_TREE_TAG_DIRTY));
	EXPECT_FALSE(radix_tree_tagged(&t, RADIX_TREE_TAG_WRITEBACK));
	for (unsigned p = 0; p < n; p++)
		bad += radix_tree_tag_get(&t, idx[p], RADIX_TREE_TAG_DIRTY) !=
		       tagged[p];
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(radix_tree_check(&t), nlive);

	/* Gang lookups from the items and from random points. */
	rng_state = 12345;
	for (unsigned i = 0; i < GANG_PROBES; i++) {
		uint64_t first = (i & 1) ? idx[rnd() % n] : rnd();

		bad += check_gang(&t, idx, live, tagged, n, first, -1);
		bad += check_gang(&t, idx, live, tagged, n, first,
				  RADIX_TREE_TAG_DIRTY);
	}
	bad += check_gang(&t, idx, live, tagged, n, 0, -1);
	EXPECT_EQ(bad, 0);

	/* Delete every other item; check everything again. */
	for (unsigned p = 0; p < n; p += 2) {
		bad += radix_tree_delete(&t, idx[p]) != item_of(idx[p]);
		bad += radix_tree_delete(&t, idx[p]) != NULL;
		live[p] = false;
		tagged[p] = false;
		nlive--;
	}
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(radix_tree_check(&t), nlive);
	for (unsigned p = 0; p < n; p++)
		bad += radix_tree_lookup(&t, idx[p]) !=
		       (live[p] ? item_of(idx[p]) : NULL);
	for (unsigned i = 0; i < GANG_PROBES; i++) {
		uint64_t first = (i & 1) ? idx[rnd() % n] : rnd();

		bad += check_gang(&t, idx, live, tagged, n, first, -1);
		bad += check_gang(&t, idx, live, tagged, n, first,
				  RADIX_TREE_TAG_DIRTY);
	}
	EXPECT_EQ(bad, 0);

	/* Iteration visits the live items in order. */
	{
		uint64_t i = 0, visited = 0;
		unsigned p = 0;
		void *item;

		while ((item = radix_tree_next(&t, &i))) {
			while (p < n && !live[p])
				p++;
			bad += p >= n || i != idx[p] || item != item_of(i);
			p++;
			visited++;
			if (i == UINT64_MAX)
				break;
			i++;
		}
		EXPECT_EQ(visited, nlive);
		EXPECT_EQ(bad, 0);
	}

	/* Delete the rest: the tree empties and loses all its nodes. */
	for (unsigned p = 0; p < n; p++)
		if (live[p])
			bad += radix_tree_delete(&t, idx[p]) != item_of(idx[p]);
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(radix_tree_height(&t), 0);
	EXPECT_EQ(t.nodes, 0);
	EXPECT_FALSE(radix_tree_tagged(&t, RADIX_TREE_TAG_DIRTY));
	rcu_barrier();
}

KTEST(radix_tree, random_shift3)
{
	run_set(ctx, 3, SET_RANDOM);
}

KTEST(radix_tree, dense_shift3)
{
	run_set(ctx, 3, SET_DENSE);
}

KTEST(radix_tree, sparse_shift3)
{
	run_set(ctx, 3, SET_SPARSE);
}

KTEST(radix_tree, random_shift6)
{
	run_set(ctx, 6, SET_RANDOM);
}

KTEST(radix_tree, dense_shift6)
{
	run_set(ctx, 6, SET_DENSE);
}

KTEST(radix_tree, sparse_shift6)
{
	run_set(ctx, 6, SET_SPARSE);
}

KTEST(radix_tree, height_grows_and_shrinks)
{
	struct radix_tree_root t;

	setup();
	radix_tree_init(&t, 3);
	ASSERT_EQ(radix_tree_insert(&t, 5, item_of(5)), RADIX_TREE_OK);
	EXPECT_EQ(radix_tree_height(&t), 1);
	EXPECT_EQ(radix_tree_maxindex(&t), 7);
	ASSERT_EQ(radix_tree_insert(&t, 8, item_of(8)), RADIX_TREE_OK);
	EXPECT_EQ(radix_tree_height(&t), 2);
	ASSERT_EQ(radix_tree_insert(&t, 1ull << 30, item_of(1ull << 30)),
		  RADIX_TREE_OK);
	EXPECT_EQ(radix_tree_height(&t), 11); /* 31 bits / 3 per level */
	EXPECT_EQ(radix_tree_lookup(&t, 5), item_of(5));
	EXPECT_EQ(radix_tree_check(&t), 3);
	radix_tree_tag_set(&t, 5, RADIX_TREE_TAG_WRITEBACK);
	EXPECT_EQ(radix_tree_delete(&t, 1ull << 30), item_of(1ull << 30));
	EXPECT_EQ(radix_tree_height(&t), 2);
	EXPECT_TRUE(radix_tree_tagged(&t, RADIX_TREE_TAG_WRITEBACK));
	EXPECT_EQ(radix_tree_delete(&t, 8), item_of(8));
	EXPECT_EQ(radix_tree_height(&t), 1);
	EXPECT_EQ(radix_tree_check(&t), 1);
	ASSERT_EQ(radix_tree_insert(&t, UINT64_MAX, item_of(7)), RADIX_TREE_OK);
	EXPECT_EQ(radix_tree_maxindex(&t), UINT64_MAX);
	EXPECT_EQ(radix_tree_lookup(&t, UINT64_MAX), item_of(7));
	EXPECT_EQ(radix_tree_delete(&t, UINT64_MAX), item_of(7));
	EXPECT_EQ(radix_tree_delete(&t, 5), item_of(5));
	EXPECT_EQ(radix_tree_height(&t), 0);
	EXPECT_EQ(t.nodes, 0);
	rcu_barrier();
}

KTEST(radix_tree, rcu_freed_nodes_are_poisoned)
{
	struct radix_tree_root t;
	struct radix_tree_node *leaf;
	struct rcu_stats a, b;

	setup();
	radix_tree_init(&t, 6);
	/* Index 100 needs two levels of 64 slots: top and leaf. */
	ASSERT_EQ(radix_tree_insert(&t, 100, item_of(100)), RADIX_TREE_OK);
	ASSERT_EQ(radix_tree_height(&t), 2);
	leaf = t.rnode->slots[1];
	rcu_stats_get(&a);
	/* A reader inside its section keeps the node readable... */
	rcu_read_lock();
	EXPECT_EQ(radix_tree_delete(&t, 100), item_of(100));
	EXPECT_EQ(leaf->magic, 0x52444e31u);
	rcu_read_unlock();
	/* ...and after the grace period the free has run. */
	rcu_barrier();
	rcu_stats_get(&b);
	EXPECT_EQ(b.cbs_invoked - a.cbs_invoked, 2);
}
