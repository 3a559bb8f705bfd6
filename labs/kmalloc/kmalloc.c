/*
 * Lab "kmalloc": the free path, an object back to its slab
 * (mm/kmalloc.c). The task and hints: docs/labs/12-allocators.md,
 * "Your turn".
 *
 * Write slab_put() below. `make grade LAB=kmalloc` puts it in place of
 * mm/kmalloc.c's own (the region between the "lab kmalloc/slab_put:
 * begin" and "end" lines; keep those lines), builds tests/host/
 * test_kmalloc.c under ASan and UBSan and scores each check.
 *
 * Read first: mm/kmalloc.c's header (how kfree() finds the slab and
 * checks the pointer), struct slab and struct kmalloc_class, slab_take()
 * (the allocation this undoes) and class_free() (its caller). What you
 * may use:
 *   s->used[w]     bitmap words: bit i % BITS_PER_WORD of word
 *                  i / BITS_PER_WORD set while object i is handed out;
 *                  read with atomic_load_relaxed(), write with
 *                  atomic_store_relaxed() (kfree()'s per-CPU path reads
 *                  them without the lock)
 *   s->hint        no free object below this index (slab_take() starts
 *                  its search there)
 *   s->inuse, c->nr        objects handed out, objects per slab
 *   partial_push(c, s), partial_remove(c, s)  the class's list of slabs
 *                  with room (c->partial)
 *   c->out, c->slabs       objects out and slabs held, of the class
 *   s->tag         slab_tag(s) while the slab lives; 0 once it leaves
 */

/* lab kmalloc/slab_put: begin */
/*
 * Give object i of s (poisoned, its used-bit set) back to s. Class lock
 * held. Clear the object's used-bit, keep s->hint a lower bound of the
 * free indices, count the object in (s->inuse, c->out). A slab that was
 * full has room again: it goes back on the partial list. A slab that
 * became empty leaves the class: off the partial list, one slab fewer
 * in c->slabs, its tag wiped (so a stale pointer into it is caught).
 *
 * Return: true when s became empty and left the class (the caller hands
 * its page to the backend once the lock is dropped), else false.
 *
 * Hints:
 * - "Was full" is s->inuse == c->nr before you count the object in.
 * - A slab that was full is on no list; an empty one is always on the
 *   partial list by the time you remove it (why?).
 */
static bool slab_put(struct kmalloc_class *c, struct slab *s, unsigned i)
{
	/* TODO: the object stays marked in use and the slab is never
	 * given back: every kfree() leaks. */
	(void)c;
	(void)s;
	(void)i;
	return false;
}
/* lab kmalloc/slab_put: end */
