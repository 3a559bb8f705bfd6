/*
 * struct page: one small descriptor per physical frame.
 *
 * The descriptors live in one array indexed by frame number (pfn), placed
 * by the kernel in RAM at boot (or malloc'ed by a host test) and handed to
 * the buddy allocator (mm/buddy.h), which threads its free lists through
 * them so it never has to touch the frames themselves.
 *
 * Later capabilities hang off this descriptor without changing its role:
 * the page cache (seed 002) adds a mapping and an index, the reverse map
 * (seed 003) a list of the PTEs mapping the frame, the slab allocator its
 * cache pointer (in priv today). Keep the structure small: at 32 bytes per
 * 4 KiB frame it costs 0.8% of RAM.
 */
#ifndef MM_PAGE_H
#define MM_PAGE_H

#include <stdint.h>
#include "lib/assert.h"
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

struct page {
	struct page_links list; /* buddy free list while PG_FREE */
	uint16_t flags;		/* enum page_flags */
	uint8_t order;		/* block order (block heads only) */
	uint8_t owner;		/* enum page_owner */
	uint32_t refcount;	/* 1 when allocated, 0 when free */
	uintptr_t priv;		/* for the owner (slab: its cache) */
};

BUILD_ASSERT(sizeof(struct page) <= 32);
BUILD_ASSERT(PAGE_OWNER_COUNT <= UINT8_MAX);

#endif
