/*
 * kmalloc_internal: what the files of kmalloc share, not for its users
 * (they include mm/kmalloc.h). mm/kmalloc.c is the allocator, its slabs
 * and per-CPU caches, and the one home of its invariants: read its header
 * first. mm/kmalloc_large.c keeps the large blocks and their records;
 * mm/kmalloc_stats.c the statistics, read under the same locks.
 */
#ifndef MM_KMALLOC_INTERNAL_H
#define MM_KMALLOC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/compiler.h"
#include "lib/config.h"
#include "lib/spinlock.h"

/* Most objects one (CPU, class) cache holds (mm/kmalloc.c: the bounds). */
#define CPU_CACHE_MAX 32u

struct kmalloc_backend;
struct kmalloc_stats;
struct slab;

/*
 * One size class. Aligned to a cache line so that two CPUs working on
 * different classes do not bounce one line between them.
 */
struct kmalloc_class {
	struct spinlock lock;
	const char *name;
	uint32_t size;	/* object size */
	uint32_t align; /* every object is aligned to this */
	uint32_t first; /* offset of object 0 in the slab page */
	uint32_t nr;	/* objects per slab */
	bool internal;	/* not for kfree() by users */
	uint32_t cache_limit; /* per-CPU cache size, 0: not cached */
	uint32_t cache_batch; /* objects moved per refill or flush */
	struct slab *partial; /* slabs with at least one free object */
	/* out: used-bits set (callers and per-CPU caches); allocs, frees:
	 * the locked path only; refills, flushes: per-CPU cache traffic. */
	uint64_t out, slabs, allocs, frees, failures, refills, flushes;
} __aligned(CACHE_LINE_SIZE);

/*
 * One CPU's cache of one class. count and the counters are written only
 * by the owning CPU (count also only under the class lock when objects
 * move to or from slabs), and read by the statistics from any CPU, hence
 * the relaxed atomic accesses: plain moves on x86, no lock prefix.
 */
struct cpu_cache {
	uint32_t count;
	uint64_t allocs; /* objects handed to callers from this cache */
	uint64_t frees;	 /* objects kfree() put into this cache */
	void *obj[CPU_CACHE_MAX];
} __aligned(CACHE_LINE_SIZE);

/* Where a large block is; lives in the internal record class. */
struct large_rec {
	void *addr;
	struct large_rec *next; /* hash chain */
	uint32_t order;
};

/* The user classes (mm/kmalloc.c: their sizes and names), then the class
 * of the large blocks' records. */
#define NR_USER_CLASSES ((size_t)9)
#define REC_CLASS NR_USER_CLASSES /* index of the record class */
#define NR_CLASSES (NR_USER_CLASSES + 1)

/* The caches of one CPU: one backend page, allocated on its first use. */
struct kmalloc_cpu {
	struct cpu_cache cache[NR_USER_CLASSES];
};

/* The allocator's state (mm/kmalloc.c), read by the statistics. */
extern struct kmalloc_class kmalloc_classes[NR_CLASSES];
extern unsigned kmalloc_cpu_limit; /* CPU numbers below this have caches */
extern struct kmalloc_cpu *kmalloc_cpu_area[MAX_CPUS];
extern uint64_t kmalloc_cpu_area_pages;

/* The backend; panics when kmalloc_init() has not run. */
const struct kmalloc_backend *kmalloc_backend(void);
/* A record from the record class, NULL when the backend has no page. */
struct large_rec *kmalloc_rec_alloc(void);
/* Give a record back (caller: for the panic message of a bad one). */
void kmalloc_rec_free(struct large_rec *rec, void *caller);

/* mm/kmalloc_large.c: large blocks, 2^order pages straight from the
 * backend, found again through a hash of records keyed by address. */

/* Empty the table and its counters (kmalloc_init()). */
void kmalloc_large_init(void);
/* A block of at least size bytes (<= the largest order's), or NULL. */
void *kmalloc_large_alloc(size_t size);
/* Free the large block at p; panics when p is no live large block. */
void kmalloc_large_free(void *p, void *caller);
/* Count a failed large allocation. */
void kmalloc_large_fail(void);
/* Bytes of the live large block at p, 0 when p is none. */
size_t kmalloc_large_size(const void *p);
/* The "large" row of the statistics. */
void kmalloc_large_stats(struct kmalloc_stats *out);

#endif /* MM_KMALLOC_INTERNAL_H */
