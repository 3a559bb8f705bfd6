/*
 * The TLB gather: collect what an unmap (or a reclaim batch) changed,
 * flush once, and only then free the frames and page tables that were
 * mapped, since until the flush another CPU may still reach them
 * through a stale translation or a cached walk (Linux's mmu_gather).
 *
 *   tlb_gather_init(&g)
 *   clear entries ...; tlb_gather_range(&g, as, va, n)   for each change
 *   tlb_gather_frame(&g, phys)  a frame (data or table) to free later
 *   tlb_gather_page(&g, page)   a page-cache reference to drop later
 *   tlb_gather_put_page(&g, page)  the same for a page on no LRU, chained
 *                               through page->lru: no limit, no early flush
 *   tlb_gather_finish(&g)       one flush, then the frees
 *
 * Ranges of one space are flushed as one range (single invalidations up
 * to the ceiling); changes in several spaces are flushed as a full flush
 * of the lower half on every CPU that had one of them loaded, with one
 * IPI per CPU per gather: a batched reclaim is one gather.
 *
 * Invariants:
 *  1. A frame passed to tlb_gather_frame() is freed, a reference passed
 *     to tlb_gather_page() dropped, after a flush that covers every
 *     change gathered before it, never before.
 *  2. A full frame array triggers that flush early; nothing is dropped,
 *     and the last range gathered stays pending (gathered again), so a
 *     page table its unmap unhooks next is still covered by a flush.
 *  3. The chained pages (tlb_gather_put_page) never trigger a flush: a
 *     reclaim batch of any size is one flush (Linux's page list between
 *     try_to_unmap() and try_to_unmap_flush()).
 */
#ifndef MM_TLB_GATHER_H
#define MM_TLB_GATHER_H

#include <stdbool.h>
#include <stdint.h>
#include "mm/vm.h"

struct page;

#define TLB_GATHER_FRAMES 64

struct tlb_gather {
	struct addr_space *as; /* the space of the changes so far */
	bool several;	       /* changes in more than one space */
	bool kernel;	       /* a kernel-half change: every CPU, globals */
	bool structure;	       /* page tables freed: flush everything */
	bool pending;	       /* changes not flushed yet */
	uint64_t start, end;   /* union of the ranges in as */
	/* The last range gathered, re-armed after an early flush. */
	struct addr_space *last_as;
	uint64_t last_va, last_npages;
	uint64_t cpus[VM_CPU_WORDS];
	uint64_t frames[TLB_GATHER_FRAMES];
	unsigned nframes;
	struct page *refs[TLB_GATHER_FRAMES]; /* page-cache references */
	unsigned nrefs;
	struct page *later; /* tlb_gather_put_page()'s, via page->lru.next */
	/* Totals over the gather's life. */
	uint64_t flushes, frames_freed, refs_dropped;
};

void tlb_gather_init(struct tlb_gather *g);
/* Entries of [va, va + npages) in as were cleared or weakened. */
void tlb_gather_range(struct tlb_gather *g, struct addr_space *as,
		      uint64_t va, uint64_t npages);
/* A page table was unhooked: free it after the flush, flush it all. */
void tlb_gather_table(struct tlb_gather *g, uint64_t phys);
/* Free the order-0 frame phys after the flush (flushes early if full). */
void tlb_gather_frame(struct tlb_gather *g, uint64_t phys);
/* Drop a reference on page (page_cache_release) after the flush
 * (flushes early if full). */
void tlb_gather_page(struct tlb_gather *g, struct page *page);
/*
 * Drop a reference on page (page_cache_release: frees the frame when it
 * was the last) after the flush. The page must be on no LRU (asserted):
 * its lru link chains it to the gather until then, so this never
 * flushes early, whatever the number of pages.
 */
void tlb_gather_put_page(struct tlb_gather *g, struct page *page);
/* Flush what is pending, then free the frames. The gather stays usable. */
void tlb_gather_flush(struct tlb_gather *g);
void tlb_gather_finish(struct tlb_gather *g);

#endif
