/*
 * The reverse map; see mm/rmap.h.
 */
#include "lib/assert.h"
#include "lib/spinlock.h"
#include "mm/kmalloc.h"
#include "mm/page.h"
#include "mm/rmap.h"

static struct spinlock lock;
static struct rmap_item *hash[RMAP_BUCKETS];
static struct rmap_item *pool, *free_items;
static struct rmap_item lru = {.lru_prev = &lru, .lru_next = &lru};
static unsigned capacity, used;

bool rmap_init(unsigned max_items)
{
	if (pool)
		return true;
	spin_lock_init(&lock, NULL);
	pool = kzalloc(sizeof(*pool) * max_items);
	if (!pool)
		return false;
	for (unsigned i = 0; i < max_items; i++) {
		pool[i].hash_next = free_items;
		free_items = &pool[i];
	}
	capacity = max_items;
	return true;
}

bool rmap_ready(void)
{
	return pool != NULL;
}

void rmap_lock(void)
{
	spin_lock(&lock);
}

void rmap_unlock(void)
{
	spin_unlock(&lock);
}

static unsigned bucket(uint64_t pfn)
{
	return (unsigned)(pfn % RMAP_BUCKETS);
}

bool rmap_add(uint64_t pfn, struct addr_space *as, uint64_t va, bool anon)
{
	bool ok;

	if (!pool)
		return false;
	spin_lock(&lock);
	ok = rmap_add_locked(pfn, as, va, anon);
	spin_unlock(&lock);
	return ok;
}

struct rmap_item *rmap_first_locked(uint64_t pfn)
{
	for (struct rmap_item *it = hash[bucket(pfn)]; it; it = it->hash_next)
		if (it->pfn == pfn)
			return it;
	return NULL;
}

bool rmap_add_locked(uint64_t pfn, struct addr_space *as, uint64_t va,
		     bool anon)
{
	struct rmap_item *it = free_items;

	if (!it)
		return false;
	free_items = it->hash_next;
	it->pfn = pfn;
	it->as = as;
	it->va = va;
	it->anon = anon;
	it->hash_next = hash[bucket(pfn)];
	hash[bucket(pfn)] = it;
	if (anon) {
		it->lru_prev = lru.lru_prev;
		it->lru_next = &lru;
		lru.lru_prev->lru_next = it;
		lru.lru_prev = it;
	} else {
		it->lru_prev = it->lru_next = NULL;
	}
	used++;
	return true;
}

void rmap_drop_locked(struct rmap_item *it)
{
	struct rmap_item **pp = &hash[bucket(it->pfn)];

	while (*pp != it) {
		kassert(*pp);
		pp = &(*pp)->hash_next;
	}
	*pp = it->hash_next;
	if (it->anon) {
		it->lru_prev->lru_next = it->lru_next;
		it->lru_next->lru_prev = it->lru_prev;
	}
	it->as = NULL;
	it->hash_next = free_items;
	free_items = it;
	kassert(used > 0);
	used--;
}

static struct rmap_item *find_locked(uint64_t pfn, struct addr_space *as,
				     uint64_t va)
{
	for (struct rmap_item *it = hash[bucket(pfn)]; it; it = it->hash_next)
		if (it->pfn == pfn && it->as == as && it->va == va)
			return it;
	return NULL;
}

bool rmap_remove(uint64_t pfn, struct addr_space *as, uint64_t va)
{
	struct rmap_item *it;

	if (!pool)
		return false;
	spin_lock(&lock);
	it = find_locked(pfn, as, va);
	if (it)
		rmap_drop_locked(it);
	spin_unlock(&lock);
	return it != NULL;
}

unsigned rmap_count_locked(uint64_t pfn)
{
	unsigned n = 0;

	for (struct rmap_item *it = hash[bucket(pfn)]; it; it = it->hash_next)
		n += it->pfn == pfn;
	return n;
}

unsigned rmap_count(uint64_t pfn)
{
	unsigned n;

	if (!pool)
		return 0;
	spin_lock(&lock);
	n = rmap_count_locked(pfn);
	spin_unlock(&lock);
	return n;
}

unsigned rmap_used(void)
{
	return used;
}

unsigned rmap_capacity(void)
{
	return capacity;
}

struct rmap_item *rmap_oldest_anon_locked(void)
{
	return lru.lru_next == &lru ? NULL : lru.lru_next;
}

void rmap_remove_space_locked(struct addr_space *as, uint64_t va,
			      uint64_t npages)
{
	for (uint64_t i = 0; i < npages; i++) {
		struct vm_translation t;
		uint64_t p = va + i * PAGE_SIZE;
		struct rmap_item *it;

		if (!vm_translate(as, p, &t))
			continue;
		it = find_locked(t.phys >> PAGE_SHIFT, as, p);
		if (it)
			rmap_drop_locked(it);
	}
}
