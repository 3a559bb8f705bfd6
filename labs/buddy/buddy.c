/*
 * Lab "buddy": the buddy allocator's split and merge (mm/buddy.c).
 * The task and hints: docs/labs/12-allocators.md, "Your turn".
 *
 * Write the two functions below. `make grade LAB=buddy` puts them in
 * place of mm/buddy.c's own (each region between its "lab buddy/...:
 * begin" and "end" lines; keep those lines), builds tests/host/
 * test_buddy.c under ASan and UBSan and scores each check.
 *
 * What you may use (all in mm/buddy.c, read it first):
 *   ORDER_PAGES(o)              2^o, the frames of a block of order o
 *   in_array(b, pfn)            is pfn one of the frames b describes?
 *   pfn_page(b, pfn), page_pfn(b, page)   frame number <-> struct page
 *   mark_free(b, page, o)       put the block headed by page on
 *                               free_list[o] (sets PG_FREE and order)
 *   unmark_free(b, page, o)     take it off again (flags become 0)
 *   b->free_list[o], b->max_order, b->stats.splits, b->stats.merges
 * The buddy of the block at pfn of order o is pfn ^ 2^o.
 */

/* lab buddy/merge: begin */
/*
 * Free the block [pfn, pfn + 2^order): while its buddy (same order, the
 * other half of the aligned block of order + 1) is free, take the buddy
 * off its list and go on with the merged block one order up, never
 * beyond b->max_order; then put the final block on its free list. Count
 * each merge in b->stats.merges.
 *
 * Hints:
 * - A buddy outside the page array (in_array) cannot merge.
 * - A frame is a free block's head iff its flags have PG_FREE; its order
 *   must also be 'order' (a free block of a smaller order inside the
 *   buddy does not make the whole buddy free).
 * - The merged block starts at the lower of the two pfns: clear bit
 *   'order' of pfn.
 */
static void free_block(struct buddy *b, uint64_t pfn, unsigned int order)
{
	/* TODO: merge with free buddies. As it is, the block goes on its
	 * list unmerged: memory never coalesces into large blocks. */
	mark_free(b, pfn_page(b, pfn), order);
}
/* lab buddy/merge: end */

/* lab buddy/split: begin */
/*
 * Allocate a block of 2^order frames for owner: take the first block
 * from the smallest non-empty free list of order >= 'order' (at most
 * b->max_order), keep its lower half and give each upper half back to
 * the free list one order down (counting b->stats.splits) until the
 * block has 'order'. Then mark the head allocated: flags PG_HEAD, its
 * order and owner, reference count 1 (set_page_count), and count
 * b->stats.allocs.
 *
 * Return: the block's first frame number; BUDDY_NO_PFN, counted in
 * b->stats.failures, when no block is large enough or order exceeds
 * b->max_order.
 *
 * Hints:
 * - kassert(owner < PAGE_OWNER_COUNT) first, as the kernel does.
 * - The upper half of a block of order o + 1 at pfn starts at
 *   pfn + ORDER_PAGES(o).
 */
uint64_t buddy_alloc(struct buddy *b, unsigned int order, unsigned int owner)
{
	/* TODO: find, split, mark. */
	(void)order;
	(void)owner;
	b->stats.failures++;
	return BUDDY_NO_PFN;
}
/* lab buddy/split: end */
