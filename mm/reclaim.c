/*
 * Reclaim of anonymous and page-cache pages with the naive or the
 * batched TLB policy; see mm/reclaim.h.
 */
#include "lib/assert.h"
#include "lib/atomic.h"
#include "mm/filemap.h"
#include "mm/page.h"
#include "mm/page_alloc.h"
#include "mm/reclaim.h"
#include "mm/rmap.h"
#include "mm/tlb.h"
#include "mm/tlb_gather.h"

const char *tlb_policy_name(enum tlb_policy p)
{
	return p == TLB_POLICY_NAIVE ? "naive" : "batched";
}

static unsigned batch_size(unsigned batch)
{
	if (batch == 0)
		return RECLAIM_BATCH_DEFAULT;
	kassert(batch <= RECLAIM_BATCH_MAX);
	return batch;
}

/* End of a batch of the batched policy: its one flush, if it needs one. */
static void end_batch(struct tlb_gather *g, struct reclaim_result *res)
{
	if (g->pending)
		res->batches++;
	tlb_gather_flush(g);
}

/*
 * One reclaim pass: its gather, its result and where it stands in a
 * batch. Both reclaims run it the same way: pass_begin(), then per
 * mapping removed pass_unmapped(), per page reclaimed pass_page_done(),
 * and pass_end() for the result.
 */
struct reclaim_pass {
	struct tlb_gather g;
	struct reclaim_result res;
	enum tlb_policy policy;
	unsigned batch, in_batch;
};

static void pass_begin(struct reclaim_pass *p, enum tlb_policy policy,
		       unsigned batch)
{
	kassert(policy < TLB_POLICY_COUNT);
	p->res = (struct reclaim_result){0, 0, 0, 0};
	p->policy = policy;
	p->batch = batch_size(batch);
	p->in_batch = 0;
	tlb_gather_init(&p->g);
}

/* A mapping is gone: the naive policy flushes it at once. */
static void pass_unmapped(struct reclaim_pass *p)
{
	if (p->policy == TLB_POLICY_NAIVE) {
		tlb_gather_flush(&p->g);
		p->res.batches++;
	}
}

/* A page is reclaimed: the batched policy ends a batch every batch pages. */
static void pass_page_done(struct reclaim_pass *p)
{
	if (p->policy == TLB_POLICY_BATCHED && ++p->in_batch == p->batch) {
		end_batch(&p->g, &p->res);
		p->in_batch = 0;
	}
}

/* The last batch's flush, the gather's end; the pass's result. */
static struct reclaim_result pass_end(struct reclaim_pass *p)
{
	end_batch(&p->g, &p->res);
	tlb_gather_finish(&p->g);
	return p->res;
}

struct reclaim_result reclaim_anon(uint64_t nr, enum tlb_policy policy,
				   unsigned batch, reclaim_observer observe,
				   void *arg)
{
	struct reclaim_pass p;

	pass_begin(&p, policy, batch);
	while (p.res.pages < nr) {
		struct rmap_item *it;
		struct addr_space *as;
		uint64_t va, pfn;

		rmap_lock();
		it = rmap_oldest_anon_locked();
		if (!it) {
			rmap_unlock();
			break;
		}
		as = it->as;
		va = it->va;
		pfn = it->pfn;
		if (observe)
			observe(as, va, arg);
		rmap_drop_locked(it);
		vm_unmap_gather(as, va, 1, &p.g, false);
		/* The frame's only reference, dropped after the flush; chained,
		 * so a batch of any size stays one flush. */
		tlb_gather_put_page(&p.g, pfn_to_page(pfn));
		atomic_fetch_sub_relaxed(&as->resident, 1);
		/* The space cannot go away while we hold the map. */
		pass_unmapped(&p);
		rmap_unlock();
		p.res.pages++;
		p.res.mapped_pages++;
		p.res.mappings++;
		pass_page_done(&p);
	}
	return pass_end(&p);
}

/* The default victim's test, under the reverse-map lock (held by
 * reclaim_file()) and the page's file lock: the cache's reference and
 * one per mapping, nothing else. */
static bool nobody_else_holds(struct page *page)
{
	return page_count(page) <= 1 + rmap_count_locked(page_to_pfn(page));
}

static struct page *evict_oldest(void *arg)
{
	(void)arg;
	return pagecache_evict_oldest_if(nobody_else_holds);
}

struct reclaim_result reclaim_file(uint64_t nr, enum tlb_policy policy,
				   unsigned batch,
				   struct page *(*evict)(void *),
				   void *evict_arg, reclaim_observer observe,
				   void *arg)
{
	struct reclaim_pass p;

	pass_begin(&p, policy, batch);
	if (!evict)
		evict = evict_oldest;
	while (p.res.pages < nr) {
		struct rmap_item *it;
		struct page *page;
		uint64_t pfn, mappings = 0;

		rmap_lock();
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
			bool last;

			kassert(!it->anon);
			if (observe)
				observe(as, va, arg);
			rmap_drop_locked(it);
			vm_unmap_gather(as, va, 1, &p.g, false);
			/* The mapping's reference. Not the last: the cache's,
			 * which evict handed us, keeps the frame until after
			 * the flush (rmap.h invariant 3). */
			last = put_page_testzero(page);
			kassert(!last);
			mappings++;
			pass_unmapped(&p);
		}
		rmap_unlock();
		/* The cache's reference, dropped after the flush. */
		tlb_gather_put_page(&p.g, page);
		p.res.pages++;
		p.res.mapped_pages += mappings != 0;
		p.res.mappings += mappings;
		pass_page_done(&p);
	}
	return pass_end(&p);
}

uint64_t reclaim_page_cache(uint64_t nr)
{
	return shrink_page_cache(nr);
}

uint64_t reclaim_mapped(uint64_t nr)
{
	uint64_t done;

	kassert(tlb_shootdown_may_wait());
	done = shrink_page_cache(nr);
	if (done < nr && rmap_ready())
		done += reclaim_file(nr - done, TLB_POLICY_BATCHED, 0, NULL,
				     NULL, NULL, NULL)
				.pages;
	return done;
}
