/*
 * Binary buddy allocator over physical frame numbers (docs/mm-buddy.md).
 *
 * Memory is handed out in blocks of 2^order frames, order 0..max_order,
 * each block aligned to its size in absolute pfn terms (so an order-9
 * block is a 2 MiB-aligned large page). Free blocks sit on one list per
 * order, threaded through their head's struct page (mm/page.h); the
 * allocator never reads or writes the frames themselves, except through
 * the optional poison hook, so it works before the direct map exists and
 * on the host with no frames at all.
 *
 * Not thread-safe: the caller serialises (a lock comes with SMP).
 */
#ifndef MM_BUDDY_H
#define MM_BUDDY_H

#include <stdbool.h>
#include <stdint.h>
#include "mm/page.h"

/* Largest order, compile-time cap; buddy_limit_order() lowers it at run
 * time (the host test stresses small orders that way). */
#ifndef BUDDY_MAX_ORDER
#define BUDDY_MAX_ORDER 10
#endif
#define BUDDY_NR_ORDERS (BUDDY_MAX_ORDER + 1)

/* buddy_alloc() result when nothing fits. */
#define BUDDY_NO_PFN UINT64_MAX

/* Called on every freed block before it merges, e.g. to fill it with junk
 * through the direct map so a use after free shows at once. */
typedef void (*buddy_poison_fn)(uint64_t pfn, unsigned int order);

struct buddy_stats {
	uint64_t nr_free[BUDDY_NR_ORDERS]; /* free blocks of each order */
	uint64_t free_pages;		   /* sum of nr_free[o] << o */
	uint64_t managed_pages;		   /* via buddy_add_range() */
	uint64_t allocs;		   /* successful buddy_alloc() calls */
	uint64_t frees;			   /* buddy_free() calls */
	uint64_t failures;		   /* buddy_alloc() found nothing */
	uint64_t splits;		   /* blocks halved to serve an alloc */
	uint64_t merges;		   /* buddy pairs joined on free */
};

struct buddy {
	struct page *pages; /* pages[pfn - first_pfn] */
	uint64_t first_pfn;
	uint64_t npages;
	unsigned int max_order;
	struct page *free_list[BUDDY_NR_ORDERS];
	buddy_poison_fn poison; /* NULL: no poisoning */
	struct buddy_stats stats;
};

/*
 * Take over pages[0..npages), describing frames first_pfn.. onwards. All
 * start reserved; buddy_add_range() makes RAM allocatable.
 */
void buddy_init(struct buddy *b, struct page *pages, uint64_t first_pfn,
		uint64_t npages);

/* Lower the largest order (<= BUDDY_MAX_ORDER); only before adding RAM. */
void buddy_limit_order(struct buddy *b, unsigned int max_order);

/* Install (or with NULL remove) the poison hook. */
void buddy_set_poison(struct buddy *b, buddy_poison_fn poison);

/*
 * Give frames [pfn_start, pfn_end) to the allocator. They must lie inside
 * the page array and not be managed yet (panics otherwise). Any alignment
 * is fine: the range is cut into the largest aligned blocks that fit.
 */
void buddy_add_range(struct buddy *b, uint64_t pfn_start, uint64_t pfn_end);

/* Allocate 2^order frames aligned to 2^order; BUDDY_NO_PFN when nothing
 * fits (or order is too large). owner is an enum page_owner. */
uint64_t buddy_alloc(struct buddy *b, unsigned int order, unsigned int owner);

/*
 * Return a block from buddy_alloc() with the same order. Panics, naming
 * the frame and the caller, on a pfn outside managed RAM, unaligned for
 * the order, already free, not the start of an allocation, or freed with
 * another order than it was allocated with.
 */
void buddy_free(struct buddy *b, uint64_t pfn, unsigned int order);

/*
 * Put every free list in ascending pfn order. The blocks, the counters
 * and what is free do not change, only which block each list hands out
 * first: afterwards the allocator's choices depend on which frames are
 * free, not on the order they were freed in (a cache model uses this so
 * that an experiment's memory lands alike in every boot, whatever order
 * the host ran the CPUs of the one before in). O(npages).
 */
void buddy_sort_free_lists(struct buddy *b);

/* Descriptor of a managed frame (NULL outside the page array). */
struct page *buddy_pfn_to_page(struct buddy *b, uint64_t pfn);

/*
 * Walk every free list and the page array and check the invariants: the
 * counters match the lists, free blocks are aligned, inside managed RAM
 * and disjoint, and no two free buddies of one order are left unmerged.
 * Reports each violation via kprintf and returns how many were found.
 */
unsigned int buddy_check(const struct buddy *b);

/* Print the per-order table and the counters via kprintf. */
void buddy_dump(const struct buddy *b);

#endif
