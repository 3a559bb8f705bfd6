/*
 * Radix tree with lockless lookups (see radix_tree.h).
 *
 * Shape, with map_shift = 2 (4 slots; the kernel uses 6, tests 3 and 6):
 *
 *   root->rnode
 *      |
 *   [shift 4 | s0 s1 s2 s3]          index bits 5..4 pick the slot
 *      |         \
 *   [shift 2 | ...]  [shift 2 | ...]   bits 3..2
 *      |
 *   [shift 0 | it it -- it]           bits 1..0; the slots hold items
 *
 * A node of shift s holds, in slot o, the subtree (or item, when s == 0)
 * for the indices whose bits [s, s + map_shift) equal o. The top node's
 * shift fixes the height; the largest index it holds is
 * 2^(shift + map_shift) - 1.
 *
 * Invariants (writers hold the caller's lock; lookups hold nothing but
 * rcu_read_lock()):
 *  1. A node's shift, its slot count and, for the top node, its position
 *     never change while it is reachable: a lookup that read the top node
 *     and its shift may walk down without re-checking anything.
 *  2. Every store a lookup can see is a release store (rcu_assign_pointer)
 *     of a fully initialised node or item, and every load of a slot or of
 *     root->rnode is an acquire load: a lookup never sees a half-built
 *     node.
 *  3. A node becomes unreachable (cleared from its parent's slot, or the
 *     root replaced by its only child) before it is handed to call_rcu();
 *     it is poisoned and freed only after a grace period, so a lookup that
 *     found it may still read it, and sees a consistent, older view.
 *     Shrinking leaves the old top node's slot 0 pointing at the new top,
 *     so a lookup that started at the old top still reaches live data.
 *  4. count is the number of non-NULL slots; a node with count 0 is
 *     removed at once (the top node included: an empty tree has no node).
 *  5. Tag bit o of a node is set exactly when slot o holds a tagged item
 *     (shift 0) or a child with any bit of that tag set. Lockless readers
 *     of tags get a hint that may be stale by one concurrent change.
 *  6. node->parent and node->offset are writers' data: lookups never
 *     follow them (a lookup restarts from the root instead).
 */
#include "lib/assert.h"
#include "lib/panic.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "mm/radix_tree.h"

#define RADIX_NODE_ALIVE 0x52444e31u /* "RDN1" */
#define RADIX_NODE_POISON_BYTE 0x6b

static unsigned nslots(const struct radix_tree_root *root)
{
	return 1u << root->map_shift;
}

static uint64_t slot_mask(const struct radix_tree_root *root)
{
	return nslots(root) - 1;
}

/* Largest index a top node of this shift holds. */
static uint64_t shift_maxindex(const struct radix_tree_root *root,
			       unsigned shift)
{
	unsigned bits = shift + root->map_shift;

	return bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
}

static void check_node(const struct radix_tree_node *n)
{
	if (n->magic != RADIX_NODE_ALIVE)
		panic("radix_tree: node %p is not alive (magic %#x): used "
		      "after its RCU free?", (const void *)n, n->magic);
}

void radix_tree_init(struct radix_tree_root *root, unsigned map_shift)
{
	kassert(map_shift >= RADIX_TREE_MAP_SHIFT_MIN &&
		map_shift <= RADIX_TREE_MAP_SHIFT_MAX);
	root->rnode = NULL;
	root->map_shift = map_shift;
	root->nodes = 0;
}

static struct radix_tree_node *node_alloc(struct radix_tree_root *root,
					  unsigned shift,
					  struct radix_tree_node *parent,
					  unsigned offset)
{
	struct radix_tree_node *n = kzalloc(sizeof(*n));

	if (!n)
		return NULL;
	n->magic = RADIX_NODE_ALIVE;
	n->shift = (uint8_t)shift;
	n->parent = parent;
	n->offset = (uint8_t)offset;
	root->nodes++;
	return n;
}

static void node_free_rcu(struct rcu_head *h)
{
	struct radix_tree_node *n = (struct radix_tree_node *)
		((char *)h - offsetof(struct radix_tree_node, rcu));

	/* Poison: a lookup still using it would read garbage and fail the
	 * magic check (and race with these stores under ThreadSanitizer). */
	memset(n, RADIX_NODE_POISON_BYTE, sizeof(*n));
	kfree(n);
}

static void node_free(struct radix_tree_root *root, struct radix_tree_node *n)
{
	root->nodes--;
	call_rcu(&n->rcu, node_free_rcu);
}

static void *load_slot(void *const *slot)
{
	return atomic_load_acquire((void **)slot);
}

unsigned radix_tree_height(const struct radix_tree_root *root)
{
	struct radix_tree_node *top = rcu_dereference(
		((struct radix_tree_root *)root)->rnode);

	return top ? top->shift / root->map_shift + 1 : 0;
}

uint64_t radix_tree_maxindex(const struct radix_tree_root *root)
{
	struct radix_tree_node *top = rcu_dereference(
		((struct radix_tree_root *)root)->rnode);

	return top ? shift_maxindex(root, top->shift) : 0;
}

/* Add levels on top until index fits. Returns false without memory. */
static bool grow(struct radix_tree_root *root, uint64_t index)
{
	struct radix_tree_node *top = root->rnode;

	while (index > shift_maxindex(root, top->shift)) {
		struct radix_tree_node *n =
			node_alloc(root, top->shift + root->map_shift, NULL, 0);

		if (!n)
			return false;
		for (unsigned t = 0; t < RADIX_TREE_MAX_TAGS; t++)
			if (top->tags[t])
				n->tags[t] = 1;
		atomic_store_relaxed(&n->slots[0], (void *)top);
		n->count = 1;
		top->parent = n;
		top->offset = 0;
		rcu_assign_pointer(root->rnode, n);
		top = n;
	}
	return true;
}

static void shrink(struct radix_tree_root *root);

/*
 * Undo a failed insert: free the empty nodes from n up (top, if it was
 * never published, with them), then shrink what grew.
 */
static void prune_empty(struct radix_tree_root *root, struct radix_tree_node *n,
			struct radix_tree_node *top)
{
	while (n && n->count == 0) {
		struct radix_tree_node *parent = n->parent;

		if (parent) {
			rcu_assign_pointer(parent->slots[n->offset], NULL);
			parent->count--;
		} else if (root->rnode == n) {
			rcu_assign_pointer(root->rnode, NULL);
		}
		node_free(root, n);
		if (n == top)
			return;
		n = parent;
	}
	shrink(root);
}

int radix_tree_insert(struct radix_tree_root *root, uint64_t index,
		      void *item)
{
	struct radix_tree_node *n;
	unsigned shift;

	kassert(item && !((uintptr_t)item & 1));
	if (!root->rnode) {
		unsigned s = 0;

		while (index > shift_maxindex(root, s))
			s += root->map_shift;
		n = node_alloc(root, s, NULL, 0);
		if (!n)
			return RADIX_TREE_ENOMEM;
		/* Published below, once it holds the path to the item. */
	} else {
		if (!grow(root, index))
			return RADIX_TREE_ENOMEM;
		n = root->rnode;
	}
	struct radix_tree_node *top = n;

	for (shift = n->shift; shift > 0; shift -= root->map_shift) {
		unsigned o = (index >> shift) & slot_mask(root);
		struct radix_tree_node *child = n->slots[o];

		if (!child) {
			child = node_alloc(root, shift - root->map_shift, n, o);
			if (!child) {
				prune_empty(root, n, top);
				return RADIX_TREE_ENOMEM;
			}
			rcu_assign_pointer(n->slots[o], (void *)child);
			n->count++;
		}
		n = child;
	}
	unsigned o = index & slot_mask(root);

	if (n->slots[o])
		return RADIX_TREE_EEXIST;
	rcu_assign_pointer(n->slots[o], item);
	n->count++;
	if (top != root->rnode)
		rcu_assign_pointer(root->rnode, top);
	return RADIX_TREE_OK;
}

/* The leaf node and offset of index, or NULL (lockless or writer). */
static struct radix_tree_node *walk(const struct radix_tree_root *root,
				    uint64_t index, unsigned *offset)
{
	struct radix_tree_node *n =
		rcu_dereference(((struct radix_tree_root *)root)->rnode);
	unsigned shift;

	if (!n)
		return NULL;
	shift = n->shift;
	if (index > shift_maxindex(root, shift))
		return NULL;
	for (;;) {
		unsigned o = (index >> shift) & slot_mask(root);

		check_node(n);
		if (shift == 0) {
			*offset = o;
			return n;
		}
		n = load_slot(&n->slots[o]);
		if (!n)
			return NULL;
		shift -= root->map_shift;
	}
}

void **radix_tree_lookup_slot(const struct radix_tree_root *root,
			      uint64_t index)
{
	unsigned o;
	struct radix_tree_node *leaf = walk(root, index, &o);

	if (!leaf || !load_slot(&leaf->slots[o]))
		return NULL;
	return &leaf->slots[o];
}

void **radix_tree_lookup_chunk(const struct radix_tree_root *root,
			       uint64_t index, unsigned *nr)
{
	unsigned o;
	struct radix_tree_node *leaf = walk(root, index, &o);

	if (!leaf)
		return NULL;
	*nr = nslots(root) - o;
	return &leaf->slots[o];
}

void *radix_tree_lookup(const struct radix_tree_root *root, uint64_t index)
{
	unsigned o;
	struct radix_tree_node *leaf = walk(root, index, &o);

	return leaf ? load_slot(&leaf->slots[o]) : NULL;
}

void radix_tree_replace_slot(void **slot, void *item)
{
	kassert(item && !((uintptr_t)item & 1));
	rcu_assign_pointer(*slot, item);
}

static bool node_tag_get(const struct radix_tree_node *n, unsigned tag,
			 unsigned o)
{
	return (atomic_load_relaxed(&n->tags[tag]) >> o) & 1;
}

static void node_tag_set(struct radix_tree_node *n, unsigned tag, unsigned o)
{
	atomic_fetch_or_relaxed(&n->tags[tag], 1ull << o);
}

static void node_tag_clear(struct radix_tree_node *n, unsigned tag,
			   unsigned o)
{
	atomic_fetch_and_release(&n->tags[tag], ~(1ull << o));
}

/* Set tag bit o of n and up the tree until a node already has it. */
static void set_tag_up(struct radix_tree_node *n, unsigned tag, unsigned o)
{
	for (; n; o = n->offset, n = n->parent) {
		if (node_tag_get(n, tag, o))
			break;
		node_tag_set(n, tag, o);
	}
}

/* Clear tag bit o of n and up the tree while nodes become untagged. */
static void clear_tag_up(struct radix_tree_node *n, unsigned tag, unsigned o)
{
	while (n) {
		node_tag_clear(n, tag, o);
		if (atomic_load_relaxed(&n->tags[tag]))
			break;
		o = n->offset;
		n = n->parent;
	}
}

/* Set (set) or clear tag on the item at index, under the tree's lock.
 * Returns the item, or NULL when index holds none. */
static void *tag_change(struct radix_tree_root *root, uint64_t index,
			enum radix_tree_tag tag, bool set)
{
	unsigned o;
	struct radix_tree_node *leaf = walk(root, index, &o);
	void *item;

	kassert(tag < RADIX_TREE_MAX_TAGS);
	if (!leaf || !(item = leaf->slots[o]))
		return NULL;
	if (set)
		set_tag_up(leaf, tag, o);
	else if (node_tag_get(leaf, tag, o))
		clear_tag_up(leaf, tag, o);
	return item;
}

void *radix_tree_tag_set(struct radix_tree_root *root, uint64_t index,
			 enum radix_tree_tag tag)
{
	return tag_change(root, index, tag, true);
}

void *radix_tree_tag_clear(struct radix_tree_root *root, uint64_t index,
			   enum radix_tree_tag tag)
{
	return tag_change(root, index, tag, false);
}

bool radix_tree_tag_get(const struct radix_tree_root *root, uint64_t index,
			enum radix_tree_tag tag)
{
	unsigned o;
	struct radix_tree_node *leaf = walk(root, index, &o);

	kassert(tag < RADIX_TREE_MAX_TAGS);
	return leaf && load_slot(&leaf->slots[o]) && node_tag_get(leaf, tag, o);
}

bool radix_tree_tagged(const struct radix_tree_root *root,
		       enum radix_tree_tag tag)
{
	struct radix_tree_node *top =
		rcu_dereference(((struct radix_tree_root *)root)->rnode);

	kassert(tag < RADIX_TREE_MAX_TAGS);
	return top && atomic_load_relaxed(&top->tags[tag]) != 0;
}

/* Replace a top node holding only slot 0 by its child (invariant 3). */
static void shrink(struct radix_tree_root *root)
{
	for (;;) {
		struct radix_tree_node *top = root->rnode;
		struct radix_tree_node *child;

		if (!top || top->shift == 0 || top->count != 1 ||
		    !top->slots[0])
			return;
		child = top->slots[0];
		child->parent = NULL;
		child->offset = 0;
		rcu_assign_pointer(root->rnode, child);
		node_free(root, top);
	}
}

void *radix_tree_delete(struct radix_tree_root *root, uint64_t index)
{
	unsigned o;
	struct radix_tree_node *n = walk(root, index, &o);
	void *item;

	if (!n || !(item = n->slots[o]))
		return NULL;
	for (unsigned t = 0; t < RADIX_TREE_MAX_TAGS; t++)
		if (node_tag_get(n, t, o))
			clear_tag_up(n, t, o);
	rcu_assign_pointer(n->slots[o], NULL);
	/* Free emptied nodes bottom up (invariant 4). */
	while (--n->count == 0) {
		struct radix_tree_node *parent = n->parent;

		if (!parent) {
			rcu_assign_pointer(root->rnode, NULL);
			node_free(root, n);
			return item;
		}
		o = n->offset;
		rcu_assign_pointer(parent->slots[o], NULL);
		node_free(root, n);
		n = parent;
	}
	shrink(root);
	return item;
}

/*
 * The gang walk: from index *pos, find the first leaf slot at or after it
 * that holds an item (carrying tag, if tag >= 0), then take items from
 * that leaf onwards into the outputs. A lookup never goes up through
 * parent links (invariant 6): at the end of a subtree it restarts from the
 * root at the next subtree's first index.
 */
/* lab radix_gang/gang: begin (docs/labs/README.md) */
static unsigned gang(const struct radix_tree_root *root, void ***slots,
		     void **items, uint64_t *indices, uint64_t first,
		     unsigned max, int tag)
{
	uint64_t index = first;
	unsigned found = 0;
	const unsigned ms = root->map_shift;

	while (found < max) {
		struct radix_tree_node *n = rcu_dereference(
			((struct radix_tree_root *)root)->rnode);
		unsigned shift, o;
		bool restart = false;

		if (!n)
			break;
		shift = n->shift;
		if (index > shift_maxindex(root, shift))
			break;
		/* Down to the leaf covering the next candidate. */
		for (;;) {
			uint64_t span = 1ull << shift; /* indices per slot */

			check_node(n);
			o = (index >> shift) & slot_mask(root);
			while (o < nslots(root) &&
			       (!load_slot(&n->slots[o]) ||
				(tag >= 0 && !node_tag_get(n, (unsigned)tag, o))))
				o++;
			if (o == nslots(root)) {
				/* Nothing left under n: next subtree. */
				uint64_t base = index & ~((span << ms) - 1);

				if (shift + ms >= 64 ||
				    base + (span << ms) == 0)
					return found;
				index = base + (span << ms);
				restart = true;
				break;
			}
			if (((index >> shift) & slot_mask(root)) != o)
				index = (index & ~((span << ms) - 1)) +
					(uint64_t)o * span;
			if (shift == 0)
				break;
			n = load_slot(&n->slots[o]);
			shift -= ms;
			if (!n) { /* removed under us: look again */
				restart = true;
				break;
			}
		}
		if (restart)
			continue;
		/* Collect from this leaf. */
		for (; o < nslots(root) && found < max; o++, index++) {
			void *item = load_slot(&n->slots[o]);

			if (!item ||
			    (tag >= 0 && !node_tag_get(n, (unsigned)tag, o)))
				continue;
			if (slots)
				slots[found] = &n->slots[o];
			if (items)
				items[found] = item;
			if (indices)
				indices[found] = index;
			found++;
		}
		if (o < nslots(root) || index == 0) /* max reached, or wrapped */
			break;
	}
	return found;
}
/* lab radix_gang/gang: end */

unsigned radix_tree_gang_lookup(const struct radix_tree_root *root,
				void **results, uint64_t *indices,
				uint64_t first, unsigned max)
{
	return gang(root, NULL, results, indices, first, max, -1);
}

unsigned radix_tree_gang_lookup_slot(const struct radix_tree_root *root,
				     void ***slots, uint64_t *indices,
				     uint64_t first, unsigned max)
{
	return gang(root, slots, NULL, indices, first, max, -1);
}

unsigned radix_tree_gang_lookup_tag(const struct radix_tree_root *root,
				    void **results, uint64_t *indices,
				    uint64_t first, unsigned max,
				    enum radix_tree_tag tag)
{
	kassert(tag < RADIX_TREE_MAX_TAGS);
	return gang(root, NULL, results, indices, first, max, (int)tag);
}

void *radix_tree_next(const struct radix_tree_root *root, uint64_t *index)
{
	void *item;

	return gang(root, NULL, &item, index, *index, 1, -1) ? item : NULL;
}

static __noreturn void check_broken(unsigned inv, const void *node,
				    const char *what)
{
	panic("radix_tree: invariant %u broken at node %p: %s", inv, node,
	      what);
}

static uint64_t check_subtree(const struct radix_tree_root *root,
			      const struct radix_tree_node *n,
			      uint64_t tags_out[RADIX_TREE_MAX_TAGS])
{
	uint64_t items = 0;
	unsigned count = 0;

	check_node(n);
	for (unsigned t = 0; t < RADIX_TREE_MAX_TAGS; t++)
		tags_out[t] = 0;
	for (unsigned o = 0; o < nslots(root); o++) {
		void *s = n->slots[o];

		if (!s) {
			for (unsigned t = 0; t < RADIX_TREE_MAX_TAGS; t++)
				if (node_tag_get(n, t, o))
					check_broken(5, n, "tag on an empty slot");
			continue;
		}
		count++;
		if (n->shift == 0) {
			items++;
			continue;
		}
		const struct radix_tree_node *c = s;
		uint64_t ct[RADIX_TREE_MAX_TAGS];

		if (c->parent != n || c->offset != o)
			check_broken(6, c, "parent link");
		if (c->shift + root->map_shift != n->shift)
			check_broken(1, c, "child shift");
		items += check_subtree(root, c, ct);
		for (unsigned t = 0; t < RADIX_TREE_MAX_TAGS; t++)
			if (!!ct[t] != node_tag_get(n, t, o))
				check_broken(5, n, "tag summary");
	}
	if (count != n->count)
		check_broken(4, n, "count");
	if (count == 0)
		check_broken(4, n, "empty node kept");
	for (unsigned t = 0; t < RADIX_TREE_MAX_TAGS; t++)
		tags_out[t] = n->tags[t];
	return items;
}

uint64_t radix_tree_check(const struct radix_tree_root *root)
{
	uint64_t tags[RADIX_TREE_MAX_TAGS];
	const struct radix_tree_node *top = root->rnode;

	if (!top)
		return 0;
	if (top->parent)
		check_broken(6, top, "top node has a parent");
	return check_subtree(root, top, tags);
}
