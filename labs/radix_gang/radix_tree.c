/*
 * Lab "radix_gang": the radix tree's RCU gang lookup (mm/radix_tree.c).
 * The task and hints: docs/labs/08-page-cache.md, "Your turn".
 *
 * Write gang() below: the walk behind radix_tree_gang_lookup(),
 * radix_tree_gang_lookup_slot(), radix_tree_gang_lookup_tag() and
 * radix_tree_next(), which the page cache uses to find a run of pages
 * without its lock. `make grade LAB=radix_gang` puts it in place of
 * mm/radix_tree.c's own (the region between the "lab radix_gang/gang:
 * begin" and "end" lines; keep those lines), builds tests/host/
 * test_radix_tree.c under ASan and UBSan (8-slot nodes for deep trees,
 * 64-slot nodes) and scores each check.
 *
 * Read mm/radix_tree.c's header first: the shape of the tree and its six
 * invariants. What you may use:
 *   rcu_dereference(root->rnode)  the top node (cast away const:
 *                          ((struct radix_tree_root *)root)->rnode)
 *   load_slot(&n->slots[o])       a slot's content (acquire load)
 *   n->shift               index bits [shift, shift + map_shift) pick
 *                          the slot; 0 in a leaf, whose slots hold items
 *   root->map_shift, nslots(root), slot_mask(root)
 *   shift_maxindex(root, shift)   the largest index under a top node
 *   node_tag_get(n, tag, o)       tag bit o of n
 *   check_node(n)          panics on a node freed under you (use it on
 *                          every node you reach)
 */

/* lab radix_gang/gang: begin */
/*
 * Find up to max items at indices >= first, in index order, and fill
 * the outputs that are not NULL: slots[k] (the address of the k-th
 * item's slot), items[k] (the item) and indices[k] (its index). With
 * tag >= 0, only items carrying that tag count. Runs under
 * rcu_read_lock() only, concurrently with inserts and deletes: it must
 * never follow node->parent (invariant 6) and must cope with a slot that
 * empties between two loads.
 *
 * Return: the number of items found (0 for an empty tree, or none at or
 * after first).
 *
 * Hints:
 * - Loop: from the root, walk down to the leaf covering the next
 *   candidate index. At each level, skip empty (or untagged) slots to
 *   the right; if none is left in the node, the next candidate is the
 *   first index of the next subtree of the node's size: restart from the
 *   root there (never climb up). Stop when that index would pass 2^64.
 * - When you skip slots, move the candidate index to the first index of
 *   the slot you land on.
 * - A child that reads as NULL was removed under you: restart from the
 *   root at the same index.
 * - In the leaf, take items slot by slot; stop when max is reached, or
 *   when the index wraps to 0 after the tree's last possible index.
 * - Test in the deep tree (8 slots) first: the off-by-one at a subtree's
 *   end shows there.
 */
static unsigned gang(const struct radix_tree_root *root, void ***slots,
		     void **items, uint64_t *indices, uint64_t first,
		     unsigned max, int tag)
{
	/* TODO: as it is, every gang lookup finds nothing. */
	(void)root;
	(void)slots;
	(void)items;
	(void)indices;
	(void)first;
	(void)max;
	(void)tag;
	return 0;
}
/* lab radix_gang/gang: end */
