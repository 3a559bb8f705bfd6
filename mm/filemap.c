/*
 * The page cache (see filemap.h and docs/pagecache.md).
 *
 *   address_space                      global
 *   +-------------+                    +----------------------------+
 *   | page_tree --+--> radix tree      | LRU: head (newest) ... tail |
 *   | tree_rwlock |    index -> page   |  lru_lock                  |
 *   | tree_lock   |                    +----------------------------+
 *   +-------------+
 *
 * The speculative reference protocol (lockless variants), in
 * find_get_page() and the lockless_gang find_get_pages_contig():
 *
 *   1. Under rcu_read_lock(), find the slot and read the page pointer.
 *      RCU keeps the tree nodes alive; the struct page itself is never
 *      freed (only its frame is), so reading it is always safe.
 *   2. get_page_unless_zero(): take a reference only if the count is not
 *      zero. Zero means the page is free or frozen by a remover, whose
 *      slot update we will see: look again.
 *   3. Re-read the slot. If it no longer holds this page, the page was
 *      removed (and perhaps reused) between 1 and 2: drop the reference
 *      and look again. If it does, the reference pins the right page:
 *      a remover must freeze the count to zero first, which our
 *      reference prevents.
 *
 * The removal side (shrink_page_cache()) pairs with it: under the tree's
 * writer lock it freezes the count from exactly 1 (the cache's own
 * reference) to 0, then deletes the slot. A lookup between the freeze and
 * the delete fails step 2 and retries; one after the delete finds no
 * page; one that took its reference before the freeze makes the freeze
 * fail, and the page stays.
 *
 * Invariants:
 *  1. A page is in a tree exactly when page->mapping is that tree's file
 *     and it is on the LRU (PG_LRU): both change under the file's writer
 *     lock, the LRU link also under lru_lock.
 *  2. A cached page's count includes one reference for the cache; only a
 *     remover holding the writer lock may drop it (or freeze it).
 *  3. page->mapping and page->index are written before the page is
 *     published in the tree (release store) and cleared only after it is
 *     deleted.
 *  4. Lock order: a file's writer lock, then lru_lock. Reclaim, which
 *     holds lru_lock first, only trylocks a file's lock; reclaim_lock
 *     (trylock) keeps one reclaimer at a time, so an allocation made
 *     under a file's lock that recurses into reclaim cannot deadlock.
 *  5. Reclaim's wait for a file is bounded. A trylock loses only to a
 *     holder or a queue; the RCU variants' readers never take the lock,
 *     and under lockless, once reclaim has lost RECLAIM_BUSY_LIMIT
 *     trylocks of a file in a row, that file's gang lookups run the
 *     speculative protocol instead of queueing (reclaim_waiting) until
 *     reclaim wins one: then only writers and the lookups queued before
 *     the flag stand in its way. Reclaim holds lru_lock while it
 *     trylocks, and the holder may be an insert waiting for lru_lock:
 *     before giving up on a page reclaim drops lru_lock once and tries
 *     again. Not bounded: vanilla, whose readers hold the rwlock, and a
 *     write trylock fails while any does (see docs/pagecache.md).
 */
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/compiler.h"
#include "lib/config.h"
#include "lib/rcu.h"
#include "lib/string.h"
#include "lib/this_cpu.h"
#include "mm/filemap.h"

static const struct page_frame_ops *frames;

static struct spinlock lru_lock = SPINLOCK_INIT(NULL);
static struct page *lru_head, *lru_tail;
static uint64_t lru_pages;
static struct spinlock reclaim_lock = SPINLOCK_INIT(NULL);

/*
 * Cumulative counters, one cache line per CPU so that counting never
 * makes lookups on different CPUs share a line (the lockless lookup's
 * whole point). Each CPU writes only its own line; readers sum.
 */
struct pagecache_cpu_stats {
	uint64_t lookups, hits, readahead, reclaimed;
} __aligned(CACHE_LINE_SIZE);
static struct pagecache_cpu_stats cpu_stats[MAX_CPUS];
static bool stats_enabled;

void pagecache_stats_enable(void)
{
	WRITE_ONCE(stats_enabled, true);
}

static struct pagecache_cpu_stats *my_stats(void)
{
	return READ_ONCE(stats_enabled) ? &cpu_stats[this_cpu_num()] : NULL;
}

static void count_lookup(bool hit)
{
	struct pagecache_cpu_stats *s = my_stats();

	if (!s)
		return;
	WRITE_ONCE(s->lookups, s->lookups + 1);
	if (hit)
		WRITE_ONCE(s->hits, s->hits + 1);
}

static void count_pages(uint64_t *counter, uint64_t n)
{
	if (n)
		WRITE_ONCE(*counter, *counter + n);
}

void pagecache_stats_read(struct pagecache_stats *out)
{
	struct rcu_stats rcu;

	memset(out, 0, sizeof(*out));
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++) {
		const struct pagecache_cpu_stats *s = &cpu_stats[cpu];

		out->lookups += READ_ONCE(s->lookups);
		out->hits += READ_ONCE(s->hits);
		out->readahead_pages += READ_ONCE(s->readahead);
		out->reclaimed_pages += READ_ONCE(s->reclaimed);
	}
	out->misses = out->lookups - out->hits;
	out->cached_pages = pagecache_lru_pages();
	rcu_stats_get(&rcu);
	out->rcu_grace_periods = rcu.gp_completed;
}

static const char *const variant_names[PAGECACHE_VARIANTS] = {
	[PAGECACHE_VANILLA] = "vanilla",
	[PAGECACHE_LOCKLESS] = "lockless",
	[PAGECACHE_LOCKLESS_NOGANG] = "lockless_nogang",
	[PAGECACHE_LOCKLESS_GANG] = "lockless_gang",
};

const char *pagecache_variant_name(enum pagecache_variant v)
{
	return v < PAGECACHE_VARIANTS ? variant_names[v] : "?";
}

void pagecache_init(const struct page_frame_ops *ops)
{
	frames = ops;
}

void address_space_init(struct address_space *m, enum pagecache_variant v,
			const struct backing_store *store, void *file,
			uint64_t size_pages, struct rwlock_stats *rw_stats,
			struct lock_stats *spin_stats)
{
	kassert(v < PAGECACHE_VARIANTS);
	radix_tree_init(&m->page_tree, RADIX_TREE_MAP_SHIFT_DEFAULT);
	m->variant = v;
	rwlock_init(&m->tree_rwlock, rw_stats);
	spin_lock_init(&m->tree_lock, spin_stats);
	m->nrpages = 0;
	m->size_pages = size_pages;
	m->store = store;
	m->file = file;
	m->readahead_pages = 0;
	m->reclaimed_pages = 0;
	m->reclaim_busy = 0;
	m->reclaim_waiting = 0;
}

/* The writers' lock of the variant. */
static void tree_write_lock(struct address_space *m)
{
	if (m->variant == PAGECACHE_VANILLA)
		write_lock(&m->tree_rwlock);
	else
		spin_lock(&m->tree_lock);
}

static bool tree_write_trylock(struct address_space *m)
{
	return m->variant == PAGECACHE_VANILLA ?
		       write_trylock(&m->tree_rwlock) :
		       spin_trylock(&m->tree_lock);
}

/* Reclaim (lru_lock held) lost a trylock of m: invariant 5. */
static void reclaim_lost(struct address_space *m)
{
	if (m->variant == PAGECACHE_LOCKLESS &&
	    ++m->reclaim_busy >= RECLAIM_BUSY_LIMIT)
		atomic_store_release(&m->reclaim_waiting, 1);
}

/* Reclaim (lru_lock held) got m's lock. */
static void reclaim_won(struct address_space *m)
{
	m->reclaim_busy = 0;
	if (atomic_load_relaxed(&m->reclaim_waiting))
		atomic_store_release(&m->reclaim_waiting, 0);
}

static void tree_write_unlock(struct address_space *m)
{
	if (m->variant == PAGECACHE_VANILLA)
		write_unlock(&m->tree_rwlock);
	else
		spin_unlock(&m->tree_lock);
}

void *page_data(struct page *page)
{
	return frames->address(page);
}

void page_cache_release(struct page *page)
{
	if (put_page_testzero(page))
		frames->free(page);
}

/* LRU helpers: lru_lock held. */
static void lru_link_head(struct page *p)
{
	p->lru.prev = NULL;
	p->lru.next = lru_head;
	if (lru_head)
		lru_head->lru.prev = p;
	else
		lru_tail = p;
	lru_head = p;
	p->flags |= PG_LRU;
	WRITE_ONCE(lru_pages, lru_pages + 1);
}

static void lru_unlink(struct page *p)
{
	kassert(p->flags & PG_LRU);
	if (p->lru.prev)
		p->lru.prev->lru.next = p->lru.next;
	else
		lru_head = p->lru.next;
	if (p->lru.next)
		p->lru.next->lru.prev = p->lru.prev;
	else
		lru_tail = p->lru.prev;
	p->lru.next = p->lru.prev = NULL;
	p->flags &= (uint16_t)~PG_LRU;
	WRITE_ONCE(lru_pages, lru_pages - 1);
}

uint64_t pagecache_lru_pages(void)
{
	return READ_ONCE(lru_pages);
}

static struct page *find_get_page_uncounted(struct address_space *m,
					     uint64_t index)
{
	struct page *page;
	void **slot;

	if (m->variant == PAGECACHE_VANILLA) {
		read_lock(&m->tree_rwlock);
		page = radix_tree_lookup(&m->page_tree, index);
		if (page)
			get_page(page);
		read_unlock(&m->tree_rwlock);
		return page;
	}
	rcu_read_lock();
repeat:
	page = NULL;
	slot = radix_tree_lookup_slot(&m->page_tree, index); /* step 1 */
	if (slot) {
		page = radix_tree_deref_slot(slot);
		if (!page)
			goto out; /* deleted since the walk */
		if (!get_page_unless_zero(page)) /* step 2 */
			goto repeat;
		if (page != radix_tree_deref_slot(slot)) { /* step 3 */
			page_cache_release(page);
			goto repeat;
		}
	}
out:
	rcu_read_unlock();
	return page;
}

__attribute__((noinline)) struct page *find_get_page(struct address_space *m,
						     uint64_t index)
{
	struct page *page = find_get_page_uncounted(m, index);

	count_lookup(page != NULL);
	return page;
}

/* Take references on a contiguous run found under a lock. */
static unsigned get_contig_locked(struct address_space *m, uint64_t start,
				  unsigned nr, struct page **pages)
{
	uint64_t indices[RADIX_TREE_MAX_SLOTS];
	unsigned n, i;

	nr = MIN(nr, RADIX_TREE_MAX_SLOTS);
	n = radix_tree_gang_lookup(&m->page_tree, (void **)pages, indices,
				   start, nr);
	for (i = 0; i < n && indices[i] == start + i; i++)
		get_page(pages[i]);
	return i;
}

/*
 * lockless_gang: the speculative protocol on every slot of a run, walking
 * each leaf's slot array directly after one descent per leaf (as Linux's
 * find_get_pages_contig() does with radix_tree_for_each_contig()): per
 * page, only the slot loads and the reference remain.
 */
static unsigned get_contig_rcu(struct address_space *m, uint64_t start,
			       unsigned nr, struct page **pages)
{
	unsigned ret = 0;

	rcu_read_lock();
	while (ret < nr) {
		unsigned avail;
		void **slot = radix_tree_lookup_chunk(&m->page_tree,
						      start + ret, &avail);

		if (!slot)
			break; /* no leaf covers the index: a gap */
		for (avail = MIN(avail, nr - ret); avail; avail--, slot++) {
			struct page *page;
repeat:
			page = radix_tree_deref_slot(slot);
			if (!page)
				goto out; /* a gap, or removed: the run ends */
			if (!get_page_unless_zero(page))
				goto repeat; /* frozen: its slot changes */
			if (page != radix_tree_deref_slot(slot)) {
				page_cache_release(page);
				goto repeat;
			}
			pages[ret++] = page;
		}
	}
out:
	rcu_read_unlock();
	return ret;
}

__attribute__((noinline)) unsigned find_get_pages_contig(
	struct address_space *m, uint64_t start, unsigned nr,
	struct page **pages)
{
	unsigned n = 0;

	switch (m->variant) {
	case PAGECACHE_VANILLA:
		read_lock(&m->tree_rwlock);
		n = get_contig_locked(m, start, nr, pages);
		read_unlock(&m->tree_rwlock);
		break;
	case PAGECACHE_LOCKLESS:
		/* Reclaim keeps losing the lock to lookups (invariant 5):
		 * let it win, taking no lock ourselves. */
		if (atomic_load_relaxed(&m->reclaim_waiting)) {
			n = get_contig_rcu(m, start, nr, pages);
			break;
		}
		/* The 2006 patch: read_lock became spin_lock. */
		spin_lock(&m->tree_lock);
		n = get_contig_locked(m, start, nr, pages);
		spin_unlock(&m->tree_lock);
		break;
	case PAGECACHE_LOCKLESS_NOGANG:
		while (n < nr &&
		       (pages[n] = find_get_page_uncounted(m, start + n)))
			n++;
		break;
	case PAGECACHE_LOCKLESS_GANG:
	default:
		n = get_contig_rcu(m, start, nr, pages);
		break;
	}
	count_lookup(n > 0);
	return n;
}

int add_to_page_cache_lru(struct page *page, struct address_space *m,
			  uint64_t index)
{
	int err;

	kassert(page_count(page) >= 1 && !page->mapping);
	page->mapping = m;
	page->index = index;
	get_page(page); /* the cache's reference (invariant 2) */
	tree_write_lock(m);
	err = radix_tree_insert(&m->page_tree, index, page);
	if (err == RADIX_TREE_OK) {
		m->nrpages++;
		spin_lock(&lru_lock);
		lru_link_head(page);
		spin_unlock(&lru_lock);
	}
	tree_write_unlock(m);
	if (err != RADIX_TREE_OK) {
		page->mapping = NULL;
		kassert(!put_page_testzero(page));
	}
	return err;
}

/* Take page out of m's tree and LRU; the writer lock is held. */
static void delete_from_tree(struct address_space *m, struct page *page,
			     bool lru_locked)
{
	void *gone = radix_tree_delete(&m->page_tree, page->index);

	kassert(gone == page);
	m->nrpages--;
	if (!lru_locked)
		spin_lock(&lru_lock);
	lru_unlink(page);
	if (!lru_locked)
		spin_unlock(&lru_lock);
	page->mapping = NULL;
}

bool remove_from_page_cache(struct page *page)
{
	struct address_space *m = page->mapping;

	if (!m)
		return false;
	tree_write_lock(m);
	if (page->mapping != m ||
	    radix_tree_lookup(&m->page_tree, page->index) != page) {
		tree_write_unlock(m);
		return false;
	}
	delete_from_tree(m, page, false);
	tree_write_unlock(m);
	/* The caller still holds a reference: never the last. */
	kassert(!put_page_testzero(page));
	return true;
}

uint64_t truncate_inode_pages(struct address_space *m)
{
	struct page *pages[RADIX_TREE_MAX_SLOTS];
	uint64_t freed = 0;
	unsigned n;

	do {
		tree_write_lock(m);
		n = radix_tree_gang_lookup(&m->page_tree, (void **)pages, NULL,
					   0, RADIX_TREE_MAX_SLOTS);
		for (unsigned i = 0; i < n; i++)
			delete_from_tree(m, pages[i], false);
		tree_write_unlock(m);
		for (unsigned i = 0; i < n; i++)
			page_cache_release(pages[i]);
		freed += n;
	} while (n);
	return freed;
}

/* Is index cached? (No reference taken: a hint for readahead.) */
static bool page_cached(struct address_space *m, uint64_t index)
{
	bool cached;

	rcu_read_lock();
	cached = radix_tree_lookup(&m->page_tree, index) != NULL;
	rcu_read_unlock();
	return cached;
}

__attribute__((noinline)) unsigned __do_page_cache_readahead(
	struct address_space *m, uint64_t start, unsigned nr)
{
	unsigned read = 0;

	for (uint64_t i = start; i < start + nr && i < m->size_pages; i++) {
		struct page *page;
		int err;

		if (page_cached(m, i))
			continue;
		page = frames->alloc();
		if (!page)
			break;
		if (!m->store->read_page(m->file, i, page_data(page))) {
			page_cache_release(page);
			break;
		}
		err = add_to_page_cache_lru(page, m, i);
		page_cache_release(page); /* frees it if the insert failed */
		if (err == RADIX_TREE_OK)
			read++;
		else if (err == RADIX_TREE_ENOMEM)
			break;
	}
	atomic_fetch_add_relaxed(&m->readahead_pages, read);
	if (my_stats())
		count_pages(&my_stats()->readahead, read);
	return read;
}

void file_ra_state_init(struct file_ra_state *ra)
{
	ra->start = 0;
	ra->size = 0;
	ra->prev = UINT64_MAX;
}

__attribute__((noinline)) unsigned page_cache_readahead(
	struct address_space *m, struct file_ra_state *ra, uint64_t index)
{
	bool sequential = ra->prev != UINT64_MAX &&
			  (index == ra->prev + 1 ||
			   (index >= ra->start && index < ra->start + ra->size));

	if (sequential)
		ra->size = MIN(MAX(ra->size * 2, (uint64_t)READAHEAD_MIN_PAGES),
			       (uint64_t)READAHEAD_MAX_PAGES);
	else
		ra->size = READAHEAD_MIN_PAGES;
	ra->start = index;
	ra->prev = index + ra->size - 1;
	return __do_page_cache_readahead(m, index, (unsigned)ra->size);
}

uint64_t shrink_page_cache(uint64_t nr)
{
	struct page *freed_list = NULL, *retried = NULL;
	uint64_t freed = 0, scan;

	if (!spin_trylock(&reclaim_lock))
		return 0;
	spin_lock(&lru_lock);
	for (scan = lru_pages; freed < nr && scan > 0 && lru_tail; scan--) {
		struct page *page = lru_tail;
		struct address_space *m = page->mapping;

		kassert(m);
		if (!tree_write_trylock(m)) {
			reclaim_lost(m);
			if (page != retried) {
				/* The holder may be an insert waiting for
				 * lru_lock: let it finish, then look at the
				 * tail once more (invariant 5). */
				retried = page;
				spin_unlock(&lru_lock);
				cpu_relax();
				spin_lock(&lru_lock);
				continue;
			}
			lru_unlink(page); /* busy file: rotate */
			lru_link_head(page);
			continue;
		}
		reclaim_won(m);
		/* Only the cache's reference left? Then nobody can take
		 * another one from now on (the speculative protocol's
		 * step 2 fails on zero). */
		if (!page_ref_freeze(page, 1)) {
			tree_write_unlock(m);
			lru_unlink(page);
			lru_link_head(page);
			continue;
		}
		delete_from_tree(m, page, true);
		m->reclaimed_pages++;
		tree_write_unlock(m);
		page->lru.next = freed_list;
		freed_list = page;
		freed++;
	}
	spin_unlock(&lru_lock);
	while (freed_list) {
		struct page *p = freed_list;

		freed_list = p->lru.next;
		p->lru.next = NULL;
		frames->free(p); /* count is 0: frozen */
	}
	spin_unlock(&reclaim_lock);
	if (my_stats())
		count_pages(&my_stats()->reclaimed, freed);
	return freed;
}

struct page *pagecache_evict_oldest(void)
{
	return pagecache_evict_oldest_if(NULL);
}

struct page *pagecache_evict_oldest_if(bool (*may_evict)(struct page *))
{
	struct page *page = NULL;

	spin_lock(&lru_lock);
	for (uint64_t scan = lru_pages; scan > 0 && lru_tail; scan--) {
		struct page *p = lru_tail;
		struct address_space *m = p->mapping;

		kassert(m);
		if (!tree_write_trylock(m)) {
			reclaim_lost(m);
			lru_unlink(p); /* busy file: rotate */
			lru_link_head(p);
			continue;
		}
		reclaim_won(m);
		if (may_evict && !may_evict(p)) {
			tree_write_unlock(m);
			lru_unlink(p); /* held: rotate */
			lru_link_head(p);
			continue;
		}
		delete_from_tree(m, p, true);
		m->reclaimed_pages++;
		tree_write_unlock(m);
		page = p; /* the cache's reference, now the caller's */
		break;
	}
	spin_unlock(&lru_lock);
	if (page && my_stats())
		count_pages(&my_stats()->reclaimed, 1);
	return page;
}
