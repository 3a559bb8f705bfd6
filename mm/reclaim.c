/*
 * Reclaim of anonymous pages with the naive or the batched TLB policy;
 * see mm/reclaim.h.
 */
#include "lib/assert.h"
#include "lib/atomic.h"
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
	if (in_batch) {
		tlb_gather_flush(&g);
		res.batches++;
	}
	tlb_gather_finish(&g);
	return res;
}
