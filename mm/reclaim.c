/*
 * Reclaim of anonymous pages with the naive or the batched TLB policy;
 * see mm/reclaim.h.
 */
#include "lib/assert.h"
#include "lib/atomic.h"
#include "mm/filemap.h"
#include "mm/page_alloc.h"
#include "mm/reclaim.h"
#include "mm/rmap.h"
#include "mm/tlb_gather.h"

const char *tlb_policy_name(enum tlb_policy p)
{
	return p == TLB_POLICY_NAIVE ? "naive" : "batched";
}

struct reclaim_result reclaim_anon(uint64_t nr, enum tlb_policy policy,
				   unsigned batch, reclaim_observer observe,
				   void *arg)
{
	struct reclaim_result res = {0, 0};
	struct tlb_gather g;
	unsigned in_batch = 0;

	kassert(policy < TLB_POLICY_COUNT);
	if (batch == 0)
		batch = RECLAIM_BATCH_DEFAULT;
	tlb_gather_init(&g);
	while (res.pages < nr) {
		struct rmap_item *it;
		struct addr_space *as;
		uint64_t va;

		rmap_lock();
		it = rmap_oldest_anon_locked();
		if (!it) {
			rmap_unlock();
			break;
		}
		as = it->as;
		va = it->va;
		if (observe)
			observe(as, va, arg);
		rmap_drop_locked(it);
		/* The frame goes to the gather: freed after the flush. */
		vm_unmap_gather(as, va, 1, &g, true);
		atomic_fetch_sub_relaxed(&as->resident, 1);
		if (policy == TLB_POLICY_NAIVE) {
			/* The space cannot go away while we hold the map. */
			tlb_gather_flush(&g);
			res.batches++;
		}
		rmap_unlock();
		res.pages++;
		if (policy == TLB_POLICY_BATCHED && ++in_batch == batch) {
			tlb_gather_flush(&g);
			res.batches++;
			in_batch = 0;
		}
	}
	if (in_batch && g.pending)
		res.batches++;
	tlb_gather_finish(&g);
	return res;
}

static struct page *evict_oldest(void *arg)
{
	(void)arg;
	return pagecache_evict_oldest();
}

/* reclaim_file(), taking the reverse-map lock with trylock when wait is
 * false (and stopping when it is busy). */
static struct reclaim_result do_reclaim_file(
	uint64_t nr, enum tlb_policy policy, unsigned batch,
	struct page *(*evict)(void *), void *evict_arg,
	reclaim_observer observe, void *arg, bool wait)
{
	struct reclaim_result res = {0, 0};
	struct tlb_gather g;
	unsigned in_batch = 0;

	kassert(policy < TLB_POLICY_COUNT);
	if (batch == 0)
		batch = RECLAIM_BATCH_DEFAULT;
	if (!evict)
		evict = evict_oldest;
	tlb_gather_init(&g);
	while (res.pages < nr) {
		struct rmap_item *it;
		struct page *page;
		uint64_t pfn;

		if (wait)
			rmap_lock();
		else if (!rmap_trylock())
			break;
		/* Out of the cache first: no new fault can find it. */
		page = evict(evict_arg);
		if (!page) {
			rmap_unlock();
			break;
		}
		pfn = page_to_pfn(page);
		while ((it = rmap_first_locked(pfn))) {
			struct addr_space *as = it->as;
			uint64_t va = it->va;

			kassert(!it->anon);
			if (observe)
				observe(as, va, arg);
			rmap_drop_locked(it);
			vm_unmap_gather(as, va, 1, &g, false);
			/* The mapping's reference, dropped after the flush. */
			tlb_gather_page(&g, page);
			if (policy == TLB_POLICY_NAIVE) {
				tlb_gather_flush(&g);
				res.batches++;
			}
		}
		rmap_unlock();
		/* The cache's reference, which evict handed us. */
		tlb_gather_page(&g, page);
		res.pages++;
		if (policy == TLB_POLICY_BATCHED && ++in_batch == batch) {
			res.batches += g.pending;
			tlb_gather_flush(&g);
			in_batch = 0;
		}
	}
	if (in_batch && g.pending)
		res.batches++;
	tlb_gather_finish(&g);
	return res;
}

struct reclaim_result reclaim_file(uint64_t nr, enum tlb_policy policy,
				   unsigned batch,
				   struct page *(*evict)(void *),
				   void *evict_arg, reclaim_observer observe,
				   void *arg)
{
	return do_reclaim_file(nr, policy, batch, evict, evict_arg, observe,
			       arg, true);
}

uint64_t reclaim_page_cache(uint64_t nr)
{
	uint64_t done = shrink_page_cache(nr);

	if (done < nr && rmap_ready())
		done += do_reclaim_file(nr - done, TLB_POLICY_BATCHED, 0, NULL,
					NULL, NULL, NULL, false)
				.pages;
	return done;
}
