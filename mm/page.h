/*
 * struct page: one small descriptor per physical frame.
 *
 * The descriptors live in one array indexed by frame number (pfn), placed
 * by the kernel in RAM at boot (or malloc'ed by a host test) and handed to
 * the buddy allocator (mm/buddy.h), which threads its free lists through
 * them so it never has to touch the frames themselves.
 *
 * Later capabilities hang off this descriptor without changing its role:
 * the page cache has its mapping, index and LRU link here; the reverse map
 * will add a list of the PTEs mapping the frame; the slab allocator keeps
 * its cache pointer in priv. At 64 bytes (one cache line) per 4 KiB frame
 * the array costs 1.6% of RAM.
 *
 * The reference count is atomic: the page cache takes references without
 * any lock (get_page_unless_zero(), see mm/filemap.c), so every access to
 * it, the allocator's included, goes through lib/atomic.h.
 *
 *    count 0  free, or frozen by its owner for removal: nobody may take
 *             a reference (get_page_unless_zero() fails)
 *    count n  n holders; the last put_page() returns true to its caller,
 *             who then frees the frame
 */
#ifndef MM_PAGE_H
#define MM_PAGE_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/config.h"


/* Physical address of a frame and back. */
#define PFN_PHYS(pfn) ((uint64_t)(pfn) << PAGE_SHIFT)
#define PHYS_PFN(addr) ((uint64_t)(addr) >> PAGE_SHIFT)

/*
 * State flags (page->flags). They say what state the frame is in; who uses
 * an allocated frame is page->owner. Only the first frame of a buddy block
 * (its head) carries PG_FREE or PG_HEAD: the other frames of the block are
 * described by the head, so splitting and merging cost O(1).
 */
enum page_flags {
	PG_FREE = 1u << 0,     /* head of a block on a buddy free list */
	PG_RESERVED = 1u << 1, /* not managed: hole, firmware, kernel image */
	PG_HEAD = 1u << 2,     /* head of an allocated buddy block */
	PG_LRU = 1u << 3,      /* on a page cache LRU list (page->lru) */
};

/* Who holds an allocated frame; recorded by buddy_alloc() for debugging. */
enum page_owner {
	PAGE_OWNER_NONE = 0, /* reserved frames, tails of blocks */
	PAGE_OWNER_BUDDY,    /* free, on a buddy free list */
	PAGE_OWNER_KERNEL,   /* generic kernel allocation */
	PAGE_OWNER_SLAB,     /* slab / kmalloc backing store */
	PAGE_OWNER_PAGETABLE,
	PAGE_OWNER_PAGECACHE,
	PAGE_OWNER_TRACE, /* trace ring buffers */
	PAGE_OWNER_TEST,  /* allocated by a test */
	PAGE_OWNER_COUNT,
};

/* Doubly linked list links; NULL-terminated, the list head is elsewhere. */
struct page_links {
	struct page *next;
	struct page *prev;
};

struct address_space;

struct page {
	struct page_links list; /* buddy free list while PG_FREE */
	uint16_t flags;		/* enum page_flags */
	uint8_t order;		/* block order (block heads only) */
	uint8_t owner;		/* enum page_owner */
	uint32_t refcount;	/* atomic: 1 when allocated, 0 when free */
	uintptr_t priv;		/* for the owner (slab: its cache) */
	struct address_space *mapping; /* page cache: the file, or NULL */
	uint64_t index;		/* page cache: page number in the file */
	struct page_links lru;	/* page cache: LRU list while PG_LRU */
};

BUILD_ASSERT(sizeof(struct page) <= 64);

/* The count now (a snapshot: it may change at once). */
static inline uint32_t page_count(const struct page *p)
{
	return atomic_load_acquire(&p->refcount);
}

/* Set the count of a page nobody else can see yet (the allocator). */
static inline void set_page_count(struct page *p, uint32_t n)
{
	atomic_store_release(&p->refcount, n);
}

/* Take another reference; the caller already holds one. */
static inline void get_page(struct page *p)
{
	uint32_t old = atomic_fetch_add_relaxed(&p->refcount, 1);

	kassert(old != 0);
}

/*
 * Drop a reference. Returns true when it was the last one: the caller
 * must then free the frame (nobody else can reach it through a count).
 */
static inline bool put_page_testzero(struct page *p)
{
	uint32_t old = atomic_fetch_sub_acq_rel(&p->refcount, 1);

	kassert(old != 0);
	return old == 1;
}

/*
 * Take a reference unless the count is zero (the page is free or frozen).
 * Returns true if a reference was taken. The speculative half of the
 * lockless page cache: the caller must re-check afterwards that the page
 * is still the one it looked for.
 */
static inline bool get_page_unless_zero(struct page *p)
{
	uint32_t c = atomic_load_relaxed(&p->refcount);

	while (c != 0) {
		uint32_t seen = atomic_cmpxchg(&p->refcount, c, c + 1);

		if (seen == c)
			return true;
		c = seen;
	}
	return false;
}

/*
 * Freeze: set the count from exactly 'expected' to 0, so that no new
 * reference can be taken. Returns false (count unchanged) when somebody
 * else holds a reference. page_ref_unfreeze() gives the count back.
 */
static inline bool page_ref_freeze(struct page *p, uint32_t expected)
{
	return atomic_cmpxchg(&p->refcount, expected, 0) == expected;
}

static inline void page_ref_unfreeze(struct page *p, uint32_t count)
{
	kassert(atomic_load_relaxed(&p->refcount) == 0);
	atomic_store_release(&p->refcount, count);
}
BUILD_ASSERT(PAGE_OWNER_COUNT <= UINT8_MAX);

#endif
