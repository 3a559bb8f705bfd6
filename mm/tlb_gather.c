/*
 * The TLB gather; see mm/tlb_gather.h.
 */
#include "lib/assert.h"
#include "lib/string.h"
#include "mm/filemap.h"
#include "mm/page.h"
#include "mm/page_alloc.h"
#include "mm/tlb.h"
#include "mm/tlb_gather.h"

void tlb_gather_init(struct tlb_gather *g)
{
	memset(g, 0, sizeof(*g));
}

/* lab tlb_gather/range: begin (docs/labs/README.md) */
void tlb_gather_range(struct tlb_gather *g, struct addr_space *as,
		      uint64_t va, uint64_t npages)
{
	uint64_t end = va + npages * PAGE_SIZE;

	if (npages == 0)
		return;
	g->last_as = as;
	g->last_va = va;
	g->last_npages = npages;
	if (as == &kernel_space || va >= VM_USER_END) {
		g->kernel = true;
	} else {
		/* Bump the generation, then collect the loaded CPUs. */
		tlb_space_changed(as, g->cpus);
	}
	if (!g->pending) {
		g->as = as;
		g->start = va;
		g->end = end;
	} else {
		if (g->as != as)
			g->several = true;
		if (va < g->start)
			g->start = va;
		if (end > g->end)
			g->end = end;
	}
	g->pending = true;
}
/* lab tlb_gather/range: end */

void tlb_gather_table(struct tlb_gather *g, uint64_t phys)
{
	kassert(g->pending);
	g->structure = true;
	tlb_gather_frame(g, phys);
}

/*
 * An array is full: flush and free now (invariant 2). The unmap under
 * way may go on to unhook a page table of the last range's space
 * (tlb_gather_table() right after): gather that range again, which also
 * collects the CPUs that have the space loaded now, so that change is
 * flushed too before the table is freed.
 */
static void flush_early(struct tlb_gather *g)
{
	bool was_pending = g->pending;

	tlb_gather_flush(g);
	if (was_pending)
		tlb_gather_range(g, g->last_as, g->last_va, g->last_npages);
}

void tlb_gather_frame(struct tlb_gather *g, uint64_t phys)
{
	if (g->nframes == TLB_GATHER_FRAMES)
		flush_early(g);
	g->frames[g->nframes++] = phys;
}

void tlb_gather_page(struct tlb_gather *g, struct page *page)
{
	if (g->nrefs == TLB_GATHER_FRAMES)
		flush_early(g);
	g->refs[g->nrefs++] = page;
}

void tlb_gather_put_page(struct tlb_gather *g, struct page *page)
{
	kassert(!(page->flags & PG_LRU));
	page->lru.next = g->later;
	g->later = page;
}

/* lab tlb_gather/flush: begin (docs/labs/README.md) */
void tlb_gather_flush(struct tlb_gather *g)
{
	if (g->pending) {
		uint64_t npages = (g->end - g->start) / PAGE_SIZE;

		if (g->structure || g->several)
			npages = 0;
		if (g->kernel)
			tlb_flush_kernel_range(g->start, npages);
		if (!g->kernel || g->several)
			tlb_flush_cpus(g->cpus, npages ? g->as : NULL,
				       g->start, npages);
		g->flushes++;
	}
	for (unsigned i = 0; i < g->nframes; i++)
		page_free_phys(g->frames[i], 0);
	g->frames_freed += g->nframes;
	g->nframes = 0;
	for (unsigned i = 0; i < g->nrefs; i++)
		page_cache_release(g->refs[i]);
	g->refs_dropped += g->nrefs;
	g->nrefs = 0;
	while (g->later) {
		struct page *p = g->later;

		g->later = p->lru.next;
		p->lru.next = NULL;
		page_cache_release(p);
		g->refs_dropped++;
	}
	g->pending = g->several = g->kernel = g->structure = false;
	memset(g->cpus, 0, sizeof(g->cpus));
}
/* lab tlb_gather/flush: end */

void tlb_gather_finish(struct tlb_gather *g)
{
	tlb_gather_flush(g);
}
