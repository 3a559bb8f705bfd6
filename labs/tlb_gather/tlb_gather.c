/*
 * Lab "tlb_gather": batching shootdowns in the TLB gather
 * (mm/tlb_gather.c). The task and hints: docs/labs/09-tlb-shootdowns.md,
 * "Your turn".
 *
 * Write tlb_gather_range() and tlb_gather_flush() below: what an unmap
 * records for each change, and the one flush (then the frees) that
 * covers them all. `make grade LAB=tlb_gather` puts them in place of
 * mm/tlb_gather.c's own (each region between its "lab tlb_gather/...:
 * begin" and "end" lines; keep those lines), builds tests/host/
 * test_tlb_gather.c under ASan and UBSan, which records every flush and
 * every free in order, and scores each check.
 *
 * Read mm/tlb_gather.h first (struct tlb_gather and invariants 1 to 3),
 * then the rest of mm/tlb_gather.c, which calls your two functions.
 * What you may use:
 *   tlb_space_changed(as, g->cpus)   bump as's TLB generation and OR the
 *                          CPUs that have as loaded into g->cpus
 *   tlb_flush_cpus(cpus, as, va, npages)   one IPI round: flush
 *                          [va, va + npages) of as on those CPUs; as NULL
 *                          or npages 0: their whole lower half
 *   tlb_flush_kernel_range(va, npages)     a kernel-half flush on every
 *                          CPU, globals included; npages 0: all
 *   page_free_phys(phys, 0), page_cache_release(page)   what the gather
 *                          frees and drops after the flush
 *   kernel_space, VM_USER_END, PAGE_SIZE
 */

/* lab tlb_gather/range: begin */
/*
 * Record that entries of [va, va + npages) in as were cleared or
 * weakened. Nothing is flushed here: the gather grows the pending range
 * and remembers who must flush.
 *
 * - npages == 0: nothing changed, nothing to record.
 * - Remember the range as the last one (g->last_as, g->last_va,
 *   g->last_npages): an early flush gathers it again (invariant 2).
 * - A kernel-half change (as is &kernel_space or va >= VM_USER_END) sets
 *   g->kernel; a user change calls tlb_space_changed(as, g->cpus) (the
 *   rule of mm/tlb.h: every page-table change bumps the generation, then
 *   collects the CPUs to flush).
 * - The first range of a gather sets g->as, g->start, g->end; later ones
 *   widen [start, end) to the union, and one in another space sets
 *   g->several. Then g->pending.
 */
void tlb_gather_range(struct tlb_gather *g, struct addr_space *as,
		      uint64_t va, uint64_t npages)
{
	/* TODO: as it is, nothing is recorded, so nothing will be flushed
	 * (and tlb_gather_table() finds no pending change). */
	(void)g;
	(void)as;
	(void)va;
	(void)npages;
}
/* lab tlb_gather/range: end */

/* lab tlb_gather/flush: begin */
/*
 * Flush what is pending, then free the frames, drop the references and
 * release the chained pages; the gather stays usable.
 *
 * - If g->pending: one flush covering everything. A single range of
 *   (g->end - g->start) / PAGE_SIZE pages, unless page tables were freed
 *   (g->structure) or several spaces changed (g->several): then a full
 *   flush (npages 0, space NULL). A kernel change flushes the kernel
 *   range on every CPU; a user change (or several spaces) flushes
 *   g->cpus. Count it in g->flushes.
 * - Only then (invariant 1): page_free_phys() every gathered frame,
 *   page_cache_release() every gathered reference and every page chained
 *   from g->later through page->lru.next (unlink each: lru.next = NULL).
 *   Count them in g->frames_freed and g->refs_dropped.
 * - Reset: nothing pending, no flags, no CPUs, empty arrays.
 */
void tlb_gather_flush(struct tlb_gather *g)
{
	/* TODO: as it is, nothing is flushed, freed or dropped. */
	(void)g;
}
/* lab tlb_gather/flush: end */
