/*
 * The reverse map: for a frame, the (space, address) pairs that map it,
 * so reclaim can unmap a page from spaces that are not running anywhere.
 * Anonymous pages also sit on one list in mapping order (oldest first),
 * the order reclaim takes them in.
 *
 *   hash[pfn % RMAP_BUCKETS] -> item -> item ...   (every mapping)
 *   lru: oldest item <-> ... <-> newest item        (anonymous ones)
 *
 * Items come from a pool allocated once (rmap_init), so the page-fault
 * path never calls kmalloc. One lock covers hash, list and pool; the
 * lock order is rmap lock, then a space's lock.
 *
 * Invariants:
 *  1. An item exists exactly while its (space, address) maps its frame
 *     through a fault or a file mapping, and not after the unmap.
 *  2. An item is on the anonymous list iff its frame is anonymous.
 *  3. A file item (a page-cache page) stands for one page reference the
 *     mapping holds; whoever drops the item drops that reference, after
 *     the TLB flush that follows the unmap (tlb_gather_page()), or at
 *     once when it also holds another reference that it drops only after
 *     that flush (reclaim holds the cache's): the frame outlives every
 *     stale translation either way.
 */
#ifndef MM_RMAP_H
#define MM_RMAP_H

#include <stdbool.h>
#include <stdint.h>
#include "mm/vm.h"

#define RMAP_BUCKETS 4096

struct rmap_item {
	uint64_t pfn;
	struct addr_space *as;
	uint64_t va;
	bool anon;
	struct rmap_item *hash_next;
	struct rmap_item *lru_prev, *lru_next;
};

/* Allocate the pool for max_items mappings. Returns false without
 * memory (and the map stays unusable: rmap_add fails). */
bool rmap_init(unsigned max_items);
bool rmap_ready(void);
/* Record that as maps pfn at va. Returns false when the pool is empty. */
bool rmap_add(uint64_t pfn, struct addr_space *as, uint64_t va, bool anon);
/* Forget that mapping; returns false if it was not recorded. */
bool rmap_remove(uint64_t pfn, struct addr_space *as, uint64_t va);
/* Mappings of pfn recorded now. */
unsigned rmap_count(uint64_t pfn);
/* The same with the lock held. */
unsigned rmap_count_locked(uint64_t pfn);
/* Items in use, and the pool's size. */
unsigned rmap_used(void);
unsigned rmap_capacity(void);

/* Lock held: the caller walks or changes the map itself. */
void rmap_lock(void);
void rmap_unlock(void);
/* With the lock held: the oldest anonymous mapping, or NULL. */
struct rmap_item *rmap_oldest_anon_locked(void);
/* With the lock held: drop item (returns it to the pool). */
void rmap_drop_locked(struct rmap_item *it);
/* With the lock held: record a mapping (rmap_add's locked twin). */
bool rmap_add_locked(uint64_t pfn, struct addr_space *as, uint64_t va,
		     bool anon);
/* With the lock held: any one mapping of pfn, or NULL. */
struct rmap_item *rmap_first_locked(uint64_t pfn);
/* With the lock held: forget every mapping of as in [va, va + npages). */
void rmap_remove_space_locked(struct addr_space *as, uint64_t va,
			      uint64_t npages);

#endif
