/*
 * Radix tree: a sparse array of pointers indexed by a 64-bit integer, the
 * page cache's index (file page number -> struct page). Lookups take no
 * lock: they run inside rcu_read_lock() and see each slot either before
 * or after any concurrent change (see radix_tree.c for the invariants and
 * the speculative protocol built on it in mm/filemap.c).
 *
 * Writers (insert, delete, tag changes) must exclude each other with a
 * lock of the caller's choice; lookups need only rcu_read_lock(), or the
 * writers' lock, or a read lock of an rwlock the writers write-lock.
 *
 * Items must be non-NULL pointers with bit 0 clear.
 */
#ifndef MM_RADIX_TREE_H
#define MM_RADIX_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/rcu.h"

/* Slots per node: 1 << map_shift, map_shift in [MIN, MAX]. */
#define RADIX_TREE_MAP_SHIFT_MAX 6
#define RADIX_TREE_MAP_SHIFT_MIN 3
#define RADIX_TREE_MAP_SHIFT_DEFAULT RADIX_TREE_MAP_SHIFT_MAX
#define RADIX_TREE_MAX_SLOTS (1u << RADIX_TREE_MAP_SHIFT_MAX)

/* Tags: one bit per item, summarised up the tree. */
enum radix_tree_tag {
	RADIX_TREE_TAG_DIRTY = 0,
	RADIX_TREE_TAG_WRITEBACK = 1,
	RADIX_TREE_MAX_TAGS,
};

/* Return codes of radix_tree_insert(). */
#define RADIX_TREE_OK 0
#define RADIX_TREE_EEXIST (-17)
#define RADIX_TREE_ENOMEM (-12)

struct radix_tree_node {
	uint32_t magic;  /* RADIX_NODE_ALIVE until freed (checked) */
	uint8_t shift;   /* index bits below this node's slots */
	uint8_t offset;  /* slot in the parent */
	uint16_t count;  /* non-NULL slots */
	struct radix_tree_node *parent; /* writers only */
	struct rcu_head rcu;
	uint64_t tags[RADIX_TREE_MAX_TAGS]; /* bit o: slot o tagged (below) */
	void *slots[RADIX_TREE_MAX_SLOTS];
};

struct radix_tree_root {
	struct radix_tree_node *rnode; /* top node, NULL when empty */
	unsigned map_shift;
	uint64_t nodes; /* nodes allocated (statistics, writers) */
};

/* An empty tree with 1 << map_shift slots per node (kassert on range). */
void radix_tree_init(struct radix_tree_root *root, unsigned map_shift);

/*
 * Store item at index. Returns RADIX_TREE_OK, RADIX_TREE_EEXIST when the
 * slot is taken, RADIX_TREE_ENOMEM when a node cannot be allocated (the
 * tree is unchanged but may have grown taller).
 */
int radix_tree_insert(struct radix_tree_root *root, uint64_t index,
		      void *item);

/* Remove and return the item at index (NULL if none); clears its tags,
 * frees emptied nodes through RCU and shrinks the height. */
void *radix_tree_delete(struct radix_tree_root *root, uint64_t index);

/* The item at index, or NULL. */
void *radix_tree_lookup(const struct radix_tree_root *root, uint64_t index);

/*
 * The slot holding index's item, or NULL if there is none. The caller
 * reads the slot with radix_tree_deref_slot(); a writer may replace the
 * item with radix_tree_replace_slot().
 */
void **radix_tree_lookup_slot(const struct radix_tree_root *root,
			      uint64_t index);

/*
 * The slots of a contiguous run, one leaf at a time (Linux's
 * radix_tree_next_chunk()): the slot of index and the slots after it in
 * the same leaf node. Returns a pointer to index's slot and sets *nr to
 * the slots from it to the end of that leaf (1 .. slots per node), or
 * returns NULL when no leaf covers index. The slots may hold NULL; read
 * them with radix_tree_deref_slot(). One descent serves up to a node's
 * worth of indices: gang lookups walk the leaf's slot array directly.
 * Lockless callers may use the array until rcu_read_unlock().
 */
void **radix_tree_lookup_chunk(const struct radix_tree_root *root,
			       uint64_t index, unsigned *nr);

static inline void *radix_tree_deref_slot(void **slot)
{
	return rcu_dereference(*slot);
}

void radix_tree_replace_slot(void **slot, void *item);

/*
 * Up to max items with index >= first, in ascending index order, into
 * results[] (and their indices into indices[], if not NULL). Returns the
 * count. Lockless callers get each item as it was at some moment during
 * the call.
 */
unsigned radix_tree_gang_lookup(const struct radix_tree_root *root,
				void **results, uint64_t *indices,
				uint64_t first, unsigned max);
/* The same, returning slots (for the speculative page cache protocol). */
unsigned radix_tree_gang_lookup_slot(const struct radix_tree_root *root,
				     void ***slots, uint64_t *indices,
				     uint64_t first, unsigned max);
/* Only items carrying tag. */
unsigned radix_tree_gang_lookup_tag(const struct radix_tree_root *root,
				    void **results, uint64_t *indices,
				    uint64_t first, unsigned max,
				    enum radix_tree_tag tag);

/* Set/clear tag on the item at index. Return the item, NULL if none. */
void *radix_tree_tag_set(struct radix_tree_root *root, uint64_t index,
			 enum radix_tree_tag tag);
void *radix_tree_tag_clear(struct radix_tree_root *root, uint64_t index,
			   enum radix_tree_tag tag);
/* Whether the item at index carries tag / any item does. */
bool radix_tree_tag_get(const struct radix_tree_root *root, uint64_t index,
			enum radix_tree_tag tag);
bool radix_tree_tagged(const struct radix_tree_root *root,
		       enum radix_tree_tag tag);

/*
 * Iteration: the first item with index >= *index, storing its index in
 * *index; NULL when there is none.
 *   for (i = 0; (item = radix_tree_next(root, &i)); i++) ...
 */
void *radix_tree_next(const struct radix_tree_root *root, uint64_t *index);

/* Levels of nodes (0 when empty) and the largest index they can hold. */
unsigned radix_tree_height(const struct radix_tree_root *root);
uint64_t radix_tree_maxindex(const struct radix_tree_root *root);

/*
 * Walk the whole tree (writers' lock held) and check counts, parent
 * links, shifts and tag summaries. Returns the number of items; on a
 * broken invariant panics with its number (radix_tree.c).
 */
uint64_t radix_tree_check(const struct radix_tree_root *root);

#endif
