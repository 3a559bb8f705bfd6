/*
 * kmalloc's statistics (mm/kmalloc.h): one row per size class, the
 * record class and the large blocks, read under each one's lock so that
 * a row is a consistent view (mm/kmalloc.c's header: what the per-CPU
 * caches hold is free), and the totals and table built on those rows.
 */
#include "mm/kmalloc.h"
#include "mm/kmalloc_internal.h"
#include "lib/atomic.h"
#include "lib/compiler.h"
#include "lib/config.h"
#include "lib/kprintf.h"
#include "lib/spinlock.h"

unsigned kmalloc_stats_rows(void)
{
	return NR_CLASSES + 1;
}

bool kmalloc_stats_get(unsigned i, struct kmalloc_stats *out)
{
	if (i < NR_CLASSES) {
		struct kmalloc_class *c = &kmalloc_classes[i];
		uint64_t cached = 0, hits = 0, cfrees = 0;
		unsigned ncpu = atomic_load_relaxed(&kmalloc_cpu_limit);

		spin_lock(&c->lock);
		/* Counts change under this lock when objects cross between
		 * caches and slabs, so out - cached is a consistent view. */
		for (unsigned cpu = 0; c->cache_limit && cpu < ncpu; cpu++) {
			struct kmalloc_cpu *pc =
				atomic_load_acquire(&kmalloc_cpu_area[cpu]);

			if (!pc)
				continue;
			cached += atomic_load_relaxed(&pc->cache[i].count);
			hits += atomic_load_relaxed(&pc->cache[i].allocs);
			cfrees += atomic_load_relaxed(&pc->cache[i].frees);
		}
		*out = (struct kmalloc_stats){
			.name = c->name,
			.obj_size = c->size,
			.per_slab = c->nr,
			/* A counter read mid-move may lag: never wrap. */
			.in_use = c->out > cached ? c->out - cached : 0,
			.slabs = c->slabs,
			.pages = c->slabs,
			.allocs = c->allocs + hits,
			.frees = c->frees + cfrees,
			.failures = c->failures,
			.cached = cached,
			/* Each refill served one allocation: a miss. */
			.cache_hits = hits - MIN(hits, c->refills),
			.cache_refills = c->refills,
			.cache_flushes = c->flushes,
		};
		spin_unlock(&c->lock);
		return true;
	}
	if (i == NR_CLASSES) {
		kmalloc_large_stats(out);
		return true;
	}
	return false;
}

size_t kmalloc_in_use_bytes(void)
{
	struct kmalloc_stats st;
	size_t bytes = 0;

	for (unsigned i = 0; kmalloc_stats_get(i, &st); i++) {
		if (i == REC_CLASS)
			continue; /* bookkeeping, not user memory */
		if (st.obj_size)
			bytes += st.in_use * st.obj_size;
		else
			bytes += st.pages * PAGE_SIZE;
	}
	return bytes;
}

uint64_t kmalloc_backend_pages(void)
{
	struct kmalloc_stats st;
	uint64_t pages = 0;

	for (unsigned i = 0; kmalloc_stats_get(i, &st); i++)
		pages += st.pages;
	return pages + kmalloc_percpu_pages();
}

uint64_t kmalloc_percpu_pages(void)
{
	return atomic_load_relaxed(&kmalloc_cpu_area_pages);
}

void kmalloc_stats_print(void)
{
	struct kmalloc_stats st, sum = { .name = "total" };

	kprintf("kmalloc: %-12s %6s %5s %9s %7s %10s %10s %6s %6s %10s %8s "
		"%8s\n", "class", "size", "/slab", "in-use", "pages", "allocs",
		"frees", "fails", "cached", "hits", "refills", "flushes");
	for (unsigned i = 0; kmalloc_stats_get(i, &st); i++) {
		kprintf("kmalloc: %-12s %6zu %5u %9llu %7llu %10llu %10llu "
			"%6llu %6llu %10llu %8llu %8llu\n", st.name,
			st.obj_size, st.per_slab,
			(unsigned long long)st.in_use,
			(unsigned long long)st.pages,
			(unsigned long long)st.allocs,
			(unsigned long long)st.frees,
			(unsigned long long)st.failures,
			(unsigned long long)st.cached,
			(unsigned long long)st.cache_hits,
			(unsigned long long)st.cache_refills,
			(unsigned long long)st.cache_flushes);
		sum.pages += st.pages;
		if (i == REC_CLASS)
			continue; /* bookkeeping: counted by "large" */
		sum.allocs += st.allocs;
		sum.frees += st.frees;
		sum.failures += st.failures;
		sum.cached += st.cached;
		sum.cache_hits += st.cache_hits;
		sum.cache_refills += st.cache_refills;
		sum.cache_flushes += st.cache_flushes;
	}
	kprintf("kmalloc: %-12s %6s %5s %9s %7llu %10llu %10llu %6llu %6llu "
		"%10llu %8llu %8llu\n", sum.name, "", "", "",
		(unsigned long long)sum.pages, (unsigned long long)sum.allocs,
		(unsigned long long)sum.frees,
		(unsigned long long)sum.failures,
		(unsigned long long)sum.cached,
		(unsigned long long)sum.cache_hits,
		(unsigned long long)sum.cache_refills,
		(unsigned long long)sum.cache_flushes);
	kprintf("kmalloc: %zu bytes in use, %llu pages of per-CPU caches\n",
		kmalloc_in_use_bytes(),
		(unsigned long long)kmalloc_percpu_pages());
}
