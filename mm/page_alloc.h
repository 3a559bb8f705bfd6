/*
 * The kernel's physical page allocator: the buddy allocator (mm/buddy.c)
 * over the sanitised firmware memory map, with every frame reachable
 * through the direct map.
 */
#ifndef MM_PAGE_ALLOC_H
#define MM_PAGE_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "mm/page.h"

#define PAGE_ALLOC_FAILED (~0ull)

struct fwmap;
struct fwmap_entry;

/* What the boot loader reported, as page_alloc_init() needs it. */
struct page_alloc_boot {
	/* The firmware's memory map, raw (sanitised here). */
	const struct fwmap_entry *firmware_map;
	size_t firmware_entries;
	/* Ranges still in use (boot information, modules), with their
	 * fwmap type: reserved, never handed out. */
	const struct fwmap_entry *in_use;
	size_t in_use_entries;
	bool poison;	/* fill freed frames with a pattern */
};

/* Build the allocator from the boot memory map. Called once at boot;
 * until page_alloc_enable_high() only frames below 4 GiB are handed out.
 * Panics if the map has no usable RAM or no room for the page array. */
void page_alloc_init(const struct page_alloc_boot *boot);
/* Add the frames above 4 GiB, once the kernel's direct map reaches them. */
void page_alloc_enable_high(void);
/* Treat memory at or above 2^phys_bits as unusable (CPUID MAXPHYADDR). */
void page_alloc_set_phys_limit(unsigned phys_bits);
/* 2^phys_bits as set above (2^52 before): the first unaddressable byte. */
uint64_t page_alloc_phys_limit(void);
/* The sanitised memory map (reserved ranges included). */
const struct fwmap *page_alloc_fwmap(void);
/* Walk the free lists and check their invariants; returns problems. */
unsigned page_alloc_check(void);

/* 2^order contiguous frames; returns the physical address, or
 * PAGE_ALLOC_FAILED when memory is exhausted. */
uint64_t page_alloc_phys(unsigned order, unsigned owner);
/* Drops a reference of the block; frees it when that was the last. */
void page_free_phys(uint64_t phys, unsigned order);

/* The same through the direct map: NULL when exhausted. Zeroed. */
void *page_alloc(unsigned order);
void page_free(void *va, unsigned order);

/* buddy_sort_free_lists() on the allocator, under its lock (mm/buddy.h). */
void page_alloc_sort_free_lists(void);

/* Free pages now; managed pages; free pages when boot set-up finished. */
uint64_t page_alloc_free_pages(void);
uint64_t page_alloc_total_pages(void);
uint64_t page_alloc_boot_free_pages(void);
/* Descriptor of a managed frame, or NULL outside the managed range. */
struct page *pfn_to_page(uint64_t pfn);
/* Frame number and direct-map address of a descriptor (from pfn_to_page). */
uint64_t page_to_pfn(const struct page *p);
void *page_address(const struct page *p);
/* Descriptor of a direct-map address; NULL for any other address. */
struct page *virt_to_page(const void *va);

/*
 * One frame with count 1 (not zeroed), or NULL when memory is exhausted.
 * free_page_frame() takes back a block whose count already dropped to 0
 * (put_page_testzero() returned true); page_free_phys() instead drops one
 * reference and frees only if it was the last.
 */
struct page *alloc_page_frame(unsigned owner);
void free_page_frame(struct page *p);

/*
 * Reclaim hook: when free memory is below low_watermark pages, each
 * allocation first calls fn(nr) with the pages missing; fn frees what it
 * can without waiting for locks (it may run under any lock but page_lock)
 * and returns the pages freed. fn NULL removes the hook.
 */
struct page_frame_ops;
/* These two and page_address() as the page cache's frame source. */
extern const struct page_frame_ops page_alloc_frames;

typedef uint64_t (*page_reclaim_fn)(uint64_t nr);
void page_alloc_set_reclaim(page_reclaim_fn fn, uint64_t low_watermark);
void page_alloc_print(void);

#endif
