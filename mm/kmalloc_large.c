/*
 * kmalloc's large blocks: requests larger than the top size class get
 * 2^order pages straight from the backend, with no header, so a large
 * block always starts a page (mm/kmalloc.c's header, rule 1: a
 * page-aligned pointer can only be a large block). Where each block is
 * and its order are kept in a record, an object of kmalloc's internal
 * record class, chained in a hash keyed by the block's page number
 * (large_table in mm/kmalloc.c's picture).
 *
 * Locking: large.lock guards the hash and the counters; the backend and
 * the record class are called without it.
 */
#include "mm/kmalloc.h"
#include "mm/kmalloc_internal.h"
#include "lib/assert.h"
#include "lib/compiler.h"
#include "lib/config.h"
#include "lib/panic.h"
#include "lib/spinlock.h"
#include "lib/string.h"

#define LARGE_HASH_BUCKETS 64u

static struct {
	struct spinlock lock;
	struct large_rec *bucket[LARGE_HASH_BUCKETS];
	uint64_t in_use, pages, allocs, frees, failures;
} large __aligned(CACHE_LINE_SIZE);

void kmalloc_large_init(void)
{
	spin_lock_init(&large.lock, NULL);
	memset(large.bucket, 0, sizeof(large.bucket));
	large.in_use = large.pages = large.allocs = 0;
	large.frees = large.failures = 0;
}

static inline unsigned large_hash(const void *p)
{
	return ((uintptr_t)p >> PAGE_SHIFT) % LARGE_HASH_BUCKETS;
}

/* Smallest order whose block holds size bytes (size <= max block). */
static unsigned order_for(size_t size)
{
	unsigned order = 0;

	while (((size_t)PAGE_SIZE << order) < size)
		order++;
	return order;
}

void kmalloc_large_fail(void)
{
	spin_lock(&large.lock);
	large.failures++;
	spin_unlock(&large.lock);
}

void *kmalloc_large_alloc(size_t size)
{
	unsigned order = order_for(size);
	struct large_rec *rec;
	void *p;

	rec = kmalloc_rec_alloc();
	if (!rec) {
		kmalloc_large_fail();
		return NULL;
	}
	p = kmalloc_backend()->alloc_pages(order);
	if (!p) {
		kmalloc_rec_free(rec, __builtin_return_address(0));
		kmalloc_large_fail();
		return NULL;
	}
	if (!IS_ALIGNED((uintptr_t)p, PAGE_SIZE))
		panic("kmalloc: backend returned unaligned block %p", p);
	rec->addr = p;
	rec->order = order;

	spin_lock(&large.lock);
	rec->next = large.bucket[large_hash(p)];
	large.bucket[large_hash(p)] = rec;
	large.in_use++;
	large.pages += 1ull << order;
	large.allocs++;
	spin_unlock(&large.lock);
	return p;
}

/* The record of the large block at p; large.lock held. NULL if none. */
static struct large_rec **large_find(const void *p)
{
	struct large_rec **pp = &large.bucket[large_hash(p)];

	while (*pp && (*pp)->addr != p)
		pp = &(*pp)->next;
	return *pp ? pp : NULL;
}

void kmalloc_large_free(void *p, void *caller)
{
	struct large_rec **pp, *rec;
	unsigned order;

	spin_lock(&large.lock);
	pp = large_find(p);
	if (!pp) {
		spin_unlock(&large.lock);
		panic("kfree(%p) from %p: page-aligned pointer that is no live "
		      "large block (double free, or not from kmalloc)", p,
		      caller);
	}
	rec = *pp;
	*pp = rec->next;
	order = rec->order;
	large.in_use--;
	large.pages -= 1ull << order;
	large.frees++;
	spin_unlock(&large.lock);

	kmalloc_backend()->free_pages(p, order);
	kmalloc_rec_free(rec, caller);
}

size_t kmalloc_large_size(const void *p)
{
	struct large_rec **pp;
	size_t size;

	spin_lock(&large.lock);
	pp = large_find(p);
	size = pp ? (size_t)PAGE_SIZE << (*pp)->order : 0;
	spin_unlock(&large.lock);
	return size;
}

void kmalloc_large_stats(struct kmalloc_stats *out)
{
	spin_lock(&large.lock);
	*out = (struct kmalloc_stats){
		.name = "large",
		.in_use = large.in_use,
		.slabs = large.in_use,
		.pages = large.pages,
		.allocs = large.allocs,
		.frees = large.frees,
		.failures = large.failures,
	};
	spin_unlock(&large.lock);
}
