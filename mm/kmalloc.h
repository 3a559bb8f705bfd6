/*
 * kmalloc: the kernel's small-object allocator (docs/kmalloc.md).
 *
 * Sizes up to about half a page come from size classes (8, 16, ... 1024
 * bytes and a top class two of which fit in a page), each class carving
 * one-page slabs; larger sizes get a power-of-two block of pages straight
 * from the page allocator. kmalloc_aligned(size, CACHE_LINE_SIZE) gives an
 * object that shares its cache lines with nothing else: LTTng once lost a
 * large part of its tracing overhead to commit counters that kzalloc()
 * had packed into one line (seed 004).
 *
 * Portable: the allocator only sees pages through struct kmalloc_backend,
 * so the same code runs in the kernel (page_alloc/page_free) and in host
 * tests (aligned_alloc).
 *
 * Every class and the large-block table has its own spinlock, so several
 * CPUs may allocate at once. Once kmalloc_enable_cpu_caches() is called, each
 * CPU also keeps a small cache of free objects per class ("magazines"),
 * used without any lock. No function here may be called from an
 * interrupt handler: the per-CPU caches rely on a CPU's kmalloc/kfree
 * never being interrupted by another one on the same CPU (there is no
 * preemption or migration), and the locks do not disable interrupts.
 */
#ifndef MM_KMALLOC_H
#define MM_KMALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/compiler.h"

/*
 * Where kmalloc gets its pages. alloc_pages returns 2^order contiguous,
 * page-aligned pages (NULL when exhausted); free_pages gives them back
 * with the same order. Both must be safe to call from several CPUs.
 */
struct kmalloc_backend {
	void *(*alloc_pages)(unsigned order);
	void (*free_pages)(void *p, unsigned order);
};

/* Every object is aligned to at least this. */
#define KMALLOC_MIN_ALIGN 8
/* Largest large block: 2^KMALLOC_MAX_ORDER pages (4 MiB with 4 KiB pages). */
#define KMALLOC_MAX_ORDER 10

/*
 * Set the backend and reset every class. Called once at boot before the
 * first kmalloc; host tests call it again at the start of each test
 * (whatever was live before is forgotten, not freed).
 */
void kmalloc_init(const struct kmalloc_backend *backend);
bool kmalloc_initialized(void);

/*
 * size bytes aligned to KMALLOC_MIN_ALIGN, or NULL when the backend is
 * exhausted or size is beyond 2^KMALLOC_MAX_ORDER pages. The contents
 * are the free poison (not zero). kmalloc(0) returns a unique minimal
 * object, to be freed like any other.
 */
void *kmalloc(size_t size);

/*
 * Turn on the per-CPU caches: cpu_id() returns the caller's CPU number
 * (CPUs numbered ncpus_max or more, capped at MAX_CPUS, use the locked
 * path).
 * Call once after kmalloc_init(), before other CPUs use kmalloc; it
 * cannot be undone (kmalloc_init() resets it). Without this call kmalloc
 * behaves as a plain locked slab allocator.
 */
void kmalloc_enable_cpu_caches(unsigned (*cpu_id)(void), unsigned ncpus_max);

/*
 * Give every object in the calling CPU's caches back to its slab (empty
 * slabs go back to the backend). Objects in caches count as free for
 * kmalloc_in_use_bytes(), but their pages stay held until drained: call
 * this before comparing backend page counts. Must run on the CPU whose
 * caches it drains, outside interrupt handlers (in the kernel: as a work
 * item, smp_run_on(), never smp_call(), whose IPI could interrupt a
 * kmalloc in progress on that CPU).
 */
void kmalloc_drain_cpu(void);
/*
 * Drain every CPU: run_on_each_cpu(fn) must call fn() once on each CPU
 * that may have used kmalloc, under the same rules as above, and return
 * when all are done. Does nothing without per-CPU caches.
 */
void kmalloc_drain_all(void (*run_on_each_cpu)(void (*fn)(void)));
/*
 * Put each class's slabs with room in ascending address order, so that
 * the next objects come from the lowest slab: after kmalloc_drain_all(),
 * where objects go then depends on which are in use, not on the order
 * they were freed in (a cache model uses this: mm/buddy.h,
 * buddy_sort_free_lists()). Takes each class's lock in turn.
 */
void kmalloc_sort_partial(void);

/* kmalloc() then zero the size bytes. */
void *kzalloc(size_t size);

/*
 * size bytes aligned to align (a power of two, at most PAGE_SIZE; a bad
 * align panics). The object is rounded up to a multiple of align and no
 * other allocation overlaps [p, p + ALIGN_UP(size, align)): with align =
 * CACHE_LINE_SIZE the object owns whole cache lines.
 */
void *kmalloc_aligned(size_t size, size_t align);

/* Cache-line-aligned allocation, zeroed or not. */
static inline void *kmalloc_cache_aligned(size_t size)
{
	return kmalloc_aligned(size, CACHE_LINE_SIZE);
}
void *kzalloc_aligned(size_t size, size_t align);

/*
 * Free an object from any kmalloc variant; kfree(NULL) does nothing.
 * Panics, naming the address and the caller, on a double free, a pointer
 * not from kmalloc, or a pointer inside (not at the start of) an object.
 */
void kfree(void *ptr);

/* Usable size of a live object: its class size or its block size. */
size_t ksize(const void *ptr);

/*
 * Statistics. Rows 0 .. kmalloc_stats_rows()-1 are the size classes in
 * increasing size, then the internal class holding large-block records,
 * then "large" (obj_size 0; in_use counts blocks, pages the pages held).
 */
struct kmalloc_stats {
	const char *name;
	size_t obj_size;	/* bytes per object, 0 for "large" */
	unsigned per_slab;	/* objects per one-page slab */
	uint64_t in_use;	/* live objects (blocks for "large") */
	uint64_t slabs;		/* slabs held (blocks for "large") */
	uint64_t pages;		/* backend pages held */
	uint64_t allocs;	/* successful allocations */
	uint64_t frees;
	uint64_t failures;	/* allocations that returned NULL */
	/* Per-CPU caches (0 for the record class and "large"): */
	uint64_t cached;	/* free objects sitting in caches now */
	uint64_t cache_hits;	/* allocations served with no lock */
	uint64_t cache_refills;	/* empty cache refilled under the lock */
	uint64_t cache_flushes;	/* full cache (or drain) flushed back */
};

unsigned kmalloc_stats_rows(void);
/* Fill *out for row i; false if there is no such row. */
bool kmalloc_stats_get(unsigned i, struct kmalloc_stats *out);
/* Print every row as a table, plus the totals, with kprintf. */
void kmalloc_stats_print(void);

/* Bytes held by live user objects (class size or block size each). */
size_t kmalloc_in_use_bytes(void);
/* Backend pages kmalloc holds now (slabs, records, large blocks, and
 * the per-CPU cache pages). */
uint64_t kmalloc_backend_pages(void);
/* Pages holding per-CPU caches: one per CPU that used kmalloc, kept
 * until kmalloc_init() (statistics may read them from any CPU). */
uint64_t kmalloc_percpu_pages(void);

#endif
