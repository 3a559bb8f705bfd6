/*
 * Reclaim of anonymous and page-cache pages through the reverse map,
 * with two TLB policies:
 *
 *   naive    unmap a page and flush it at once: one shootdown per mapping
 *            to every CPU that has its space loaded (try_to_unmap with
 *            ptep_clear_flush)
 *   batched  unmap a batch of pages, gathering the CPUs to reach, then
 *            one flush: at most one IPI per CPU per batch, and the frames
 *            freed after it (Linux's batched unmap flush since 4.3)
 *
 * There is no swap: a reclaimed anonymous page's contents are dropped,
 * and a later touch faults in a zeroed page. What matters here is the
 * TLB work, which is the same as for a page written out first.
 *
 * Where reclaim runs (and why the allocator's hook never unmaps):
 *   page_alloc_phys() below its watermark -> reclaim_page_cache(): only
 *     pages nobody maps; it sends no IPI and waits for no CPU, so it is
 *     safe from any context (interrupts off, locks held: vm_map()
 *     allocates page tables under its space's lock).
 *   a page fault that found no memory -> reclaim_mapped() (direct
 *     reclaim): mapped pages too, batched; the fault holds no lock and
 *     runs with interrupts on (asserted with tlb_shootdown_may_wait()).
 *   explicit callers (the tlb_purge experiment, as kswapd) ->
 *     reclaim_file() and reclaim_anon().
 *
 * Invariants:
 *  1. A reclaimed frame is freed (a page-cache page's last reference
 *     dropped) only after the flush that covers every unmap of it.
 *  2. With the batched policy a batch of `batch` pages is one flush: one
 *     IPI per CPU that had one of the batch's spaces loaded, whatever
 *     the number of pages or mappings (mm/tlb_gather.h invariant 3).
 *  3. A page-cache page that someone holds beyond the cache and its
 *     mappings (a reader between find_get_page() and release, a fault
 *     about to map it) is not taken (reclaim_file() with the default
 *     victim), as Linux's reference freeze in __remove_mapping() fails
 *     for it.
 */
#ifndef MM_RECLAIM_H
#define MM_RECLAIM_H

#include <stdint.h>
#include "mm/vm.h"

struct page;

/*
 * Pages per reclaim batch, Linux's SWAP_CLUSTER_MAX: shrink_inactive_list()
 * isolates at most this many pages from an LRU list and hands them to
 * shrink_page_list(), which unmaps each with try_to_unmap(TTU_BATCH_FLUSH)
 * and calls try_to_unmap_flush() once before freeing them. So a batch of
 * 32 pages costs at most one IPI per CPU, and batched reclaim can save at
 * most a factor of 32 in IPIs per page over flushing each unmap (less
 * when unmapped pages, which need no flush at all, share the batch).
 */
#define RECLAIM_BATCH_DEFAULT 32
/* The largest batch a caller may ask for (the tlb_purge sweep's top). */
#define RECLAIM_BATCH_MAX 1024

enum tlb_policy { TLB_POLICY_NAIVE, TLB_POLICY_BATCHED, TLB_POLICY_COUNT };

const char *tlb_policy_name(enum tlb_policy p);

/* Called (rmap lock held, before the unmap) for each mapping removed. */
typedef void (*reclaim_observer)(struct addr_space *as, uint64_t va,
				 void *arg);

struct reclaim_result {
	uint64_t pages;	       /* unmapped (if mapped) and freed */
	uint64_t mapped_pages; /* of those, pages some space mapped */
	uint64_t mappings;     /* (space, address) pairs unmapped */
	uint64_t batches;      /* flushes issued */
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
 * so that the frame is freed after the flush, unless a reader still
 * holds one. naive flushes per mapping; batched once per batch pages
 * (0: RECLAIM_BATCH_DEFAULT). evict(evict_arg), called with the
 * reverse-map lock held, picks the victim: it takes it out of its cache
 * and returns it with a reference for the caller, or NULL when there is
 * none; NULL evict means the oldest page that nobody holds beyond the
 * cache and its mappings (invariant 3). Returns what it did.
 */
struct reclaim_result reclaim_file(uint64_t nr, enum tlb_policy policy,
				   unsigned batch,
				   struct page *(*evict)(void *),
				   void *evict_arg, reclaim_observer observe,
				   void *arg);

/*
 * The page allocator's reclaim hook (page_alloc_set_reclaim): the cached
 * pages nobody maps or holds (shrink_page_cache()), never a mapped one:
 * it may run with interrupts off or under a space's lock, where waiting
 * for a shootdown could deadlock. Returns the pages freed.
 */
uint64_t reclaim_page_cache(uint64_t nr);

/*
 * Direct reclaim for a caller that holds no lock and may wait for other
 * CPUs (asserted: tlb_shootdown_may_wait()), such as a page fault that
 * found no free frame: the unmapped pages first, then up to the rest of
 * nr mapped page-cache pages, batched. Returns the pages freed or taken
 * out of the cache.
 */
uint64_t reclaim_mapped(uint64_t nr);

#endif
