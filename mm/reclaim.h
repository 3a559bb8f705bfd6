/*
 * Reclaim of anonymous and page-cache pages through the reverse map,
 * with two TLB policies:
 *
 *   naive    unmap a page and flush it at once: one shootdown per page
 *            to every CPU that has its space loaded (try_to_unmap with
 *            ptep_clear_flush)
 *   batched  unmap a batch of pages, gathering the CPUs to reach, then
 *            one flush: at most one IPI per CPU per batch, and the frames
 *            freed after it (Linux's batched unmap flush since 4.3)
 *
 * There is no swap: a reclaimed anonymous page's contents are dropped,
 * and a later touch faults in a zeroed page. What matters here is the
 * TLB work, which is the same as for a page written out first.
 */
#ifndef MM_RECLAIM_H
#define MM_RECLAIM_H

#include <stdint.h>
#include "mm/vm.h"

struct page;

/* Linux's SWAP_CLUSTER_MAX: pages per reclaim batch. */
#define RECLAIM_BATCH_DEFAULT 32

enum tlb_policy { TLB_POLICY_NAIVE, TLB_POLICY_BATCHED, TLB_POLICY_COUNT };

const char *tlb_policy_name(enum tlb_policy p);

/* Called (rmap lock held, before the unmap) for each mapping removed. */
typedef void (*reclaim_observer)(struct addr_space *as, uint64_t va,
				 void *arg);

struct reclaim_result {
	uint64_t pages;	  /* unmapped and freed */
	uint64_t batches; /* flushes issued */
};

/*
 * Reclaim up to nr of the oldest anonymous pages (batch pages per flush
 * with the batched policy; 0 means RECLAIM_BATCH_DEFAULT). Returns what
 * it did; fewer pages than nr when the list ran dry.
 */
struct reclaim_result reclaim_anon(uint64_t nr, enum tlb_policy policy,
				   unsigned batch, reclaim_observer observe,
				   void *arg);

/*
 * Reclaim up to nr page-cache pages, oldest first, the way Linux's
 * shrink_page_list() does with mapped pages: take the page out of its
 * cache, try_to_unmap() it from every space that maps it (through the
 * reverse map), and drop the references (the mappings' and the cache's)
 * after the flush, which frees the frame unless a reader still holds
 * one. naive flushes per mapping; batched once per batch pages.
 * evict(evict_arg), called with the reverse-map lock held, picks the
 * victim: it takes it out of its cache and returns it with a reference
 * for the caller, or NULL when there is none; NULL evict means
 * pagecache_evict_oldest(). pages counts evicted pages, batches flushes.
 */
struct reclaim_result reclaim_file(uint64_t nr, enum tlb_policy policy,
				   unsigned batch,
				   struct page *(*evict)(void *),
				   void *evict_arg, reclaim_observer observe,
				   void *arg);

/*
 * The page allocator's reclaim hook (page_alloc_set_reclaim): first the
 * pages nobody maps (shrink_page_cache()), then, if that was not enough
 * and the reverse-map lock is free (the caller may hold it: a fault
 * allocating a page table), mapped ones with the batched policy.
 * Returns the pages taken out of the cache.
 */
uint64_t reclaim_page_cache(uint64_t nr);

#endif
