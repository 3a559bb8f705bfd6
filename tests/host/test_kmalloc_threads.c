/*
 * mm/kmalloc.c from several threads at once, under ThreadSanitizer: each
 * worker allocates and frees objects of every class (and large blocks),
 * writes its own pattern into them and checks it before freeing. A class
 * lock that fails to exclude shows up as a TSan race report, as an object
 * handed to two threads (a pattern overwritten), or as counters that do
 * not add up exactly at the end.
 *
 * The second test runs the same workers as distinct CPUs (each thread's
 * CPU number, lib/this_cpu.h, behind kmalloc_enable_cpu_caches()), so they
 * allocate from their per-CPU caches without locks, then drains every
 * "CPU" and checks the counters and pages are exact.
 *
 * Workers never call EXPECT_*: they count what went wrong and the test
 * thread checks after joining them.
 */
// HOST_SRCS: mm/kmalloc.c mm/kmalloc_large.c mm/kmalloc_stats.c lib/spinlock.c tests/host/host_cycles.c tests/host/host_cpu.c
// HOST_SANITIZE: thread
#include <stdint.h>
#include <string.h>
#include "lib/atomic.h"
#include "lib/ktest.h"
#include "lib/prng.h"
#include "lib/this_cpu.h"
#include "mm/kmalloc.h"
#include "mm/page.h"
#include "tests/host/host_thread_group.h"
#include "tests/host/host_threads.h"

#define NR_THREADS 4
#define OPS_PER_THREAD 5000
#define SLOTS_PER_THREAD 64
#define LARGE_EVERY 64 /* one allocation in this many is a large block */
#define LARGE_MAX (3 * PAGE_SIZE)
#define SMALL_MAX 2048

static uint64_t pages_out, alloc_calls, free_calls;

/* The host page source, counting what is out. */
static void *tb_alloc(unsigned order)
{
	void *p = host_pages_alloc(order);

	if (p) {
		atomic_fetch_add_relaxed(&pages_out, 1ull << order);
		atomic_fetch_add_relaxed(&alloc_calls, 1);
	}
	return p;
}

static void tb_free(void *p, unsigned order)
{
	atomic_fetch_add_relaxed(&pages_out, -(1ull << order));
	atomic_fetch_add_relaxed(&free_calls, 1);
	host_pages_free(p, order);
}

static const struct kmalloc_backend thread_backend = {
	.alloc_pages = tb_alloc,
	.free_pages = tb_free,
};

struct worker {
	unsigned id; /* also its CPU number */
	uint64_t rng;
	uint64_t allocs, frees, corrupt, nulls, misaligned;
};

static uint64_t next_rand(struct worker *w)
{
	return prng_next(&w->rng);
}

/* A byte that only this thread and this slot write. */
static uint8_t tag_of(const struct worker *w, unsigned slot)
{
	return (uint8_t)(w->id * SLOTS_PER_THREAD + slot + 1);
}

static bool intact(const uint8_t *p, size_t n, uint8_t tag)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != tag)
			return false;
	return true;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t *obj[SLOTS_PER_THREAD] = { 0 };
	size_t size[SLOTS_PER_THREAD] = { 0 };

	host_set_thread_cpu(w->id);

	for (unsigned op = 0; op < OPS_PER_THREAD; op++) {
		unsigned s = next_rand(w) % SLOTS_PER_THREAD;
		uint64_t r = next_rand(w);

		if (obj[s]) {
			if (!intact(obj[s], size[s], tag_of(w, s)))
				w->corrupt++;
			kfree(obj[s]);
			obj[s] = NULL;
			w->frees++;
			continue;
		}
		if (r % LARGE_EVERY == 0) {
			size[s] = 1 + r / LARGE_EVERY % LARGE_MAX;
			obj[s] = kmalloc(size[s]);
		} else if (r % 4 == 1) {
			size[s] = 1 + r / 4 % 256;
			obj[s] = kmalloc_cache_aligned(size[s]);
			if (obj[s] && (uintptr_t)obj[s] % CACHE_LINE_SIZE)
				w->misaligned++;
		} else {
			size[s] = 1 + r / 4 % SMALL_MAX;
			obj[s] = kmalloc(size[s]);
		}
		if (!obj[s]) {
			w->nulls++;
			continue;
		}
		w->allocs++;
		memset(obj[s], tag_of(w, s), size[s]);
	}
	for (unsigned s = 0; s < SLOTS_PER_THREAD; s++) {
		if (!obj[s])
			continue;
		if (!intact(obj[s], size[s], tag_of(w, s)))
			w->corrupt++;
		kfree(obj[s]);
		w->frees++;
	}
	return NULL;
}

/*
 * Runs NR_THREADS fresh workers to the end, worker i (CPU i) seeded with
 * seed_mul * (i + seed_add), and checks what each one counted. Returns
 * the objects they allocated in all; *frees gets those they freed.
 */
static uint64_t run_workers(struct ktest_ctx *ctx, uint64_t seed_mul,
			    unsigned seed_add, uint64_t *frees)
{
	static struct worker w[NR_THREADS];
	struct host_thread_group g;
	uint64_t allocs = 0;

	*frees = 0;
	for (unsigned i = 0; i < NR_THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].id = i;
		w[i].rng = seed_mul * (i + seed_add);
	}
	host_thread_group_start(&g, NR_THREADS, worker_main, w, sizeof(w[0]));
	host_thread_group_join(&g);
	for (unsigned i = 0; i < NR_THREADS; i++) {
		EXPECT_EQ(w[i].corrupt, 0);
		EXPECT_EQ(w[i].nulls, 0);
		EXPECT_EQ(w[i].misaligned, 0);
		EXPECT_EQ(w[i].allocs, w[i].frees);
		allocs += w[i].allocs;
		*frees += w[i].frees;
	}
	return allocs;
}

KTEST(kmalloc_threads, concurrent_alloc_free_exact_counters)
{
	uint64_t allocs, frees, sum_allocs = 0, sum_frees = 0;
	struct kmalloc_stats st;
	unsigned rec_row = kmalloc_stats_rows() - 2;
	/* The other test may have run first: its per-CPU cache pages stay
	 * out (kmalloc_init() forgets them), so compare with the start. */
	uint64_t pages0 = atomic_load_relaxed(&pages_out);
	uint64_t calls0 = atomic_load_relaxed(&alloc_calls) -
			  atomic_load_relaxed(&free_calls);

	kmalloc_init(&thread_backend);
	allocs = run_workers(ctx, 0x9e3779b97f4a7c15ull, 1, &frees);
	EXPECT_GT(allocs, NR_THREADS * OPS_PER_THREAD / 4);
	for (unsigned i = 0; kmalloc_stats_get(i, &st); i++) {
		EXPECT_EQ(st.in_use, 0);
		EXPECT_EQ(st.pages, 0);
		EXPECT_EQ(st.allocs, st.frees);
		if (i == rec_row)
			continue; /* records shadow "large" one for one */
		sum_allocs += st.allocs;
		sum_frees += st.frees;
	}
	EXPECT_EQ(sum_allocs, allocs);
	EXPECT_EQ(sum_frees, frees);
	EXPECT_EQ(kmalloc_in_use_bytes(), 0);
	EXPECT_EQ(atomic_load_relaxed(&pages_out), pages0);
	EXPECT_EQ(atomic_load_relaxed(&alloc_calls) -
		  atomic_load_relaxed(&free_calls), calls0);
}

struct drainer {
	unsigned cpu;
	void (*fn)(void);
};

static void *drainer_main(void *arg)
{
	struct drainer *d = arg;

	host_set_thread_cpu(d->cpu);
	d->fn();
	return NULL;
}

/* kmalloc_drain_all()'s runner: fn once as each CPU, all at once. */
static void run_on_each_thread_cpu(void (*fn)(void))
{
	static struct drainer d[NR_THREADS];
	struct host_thread_group g;

	for (unsigned i = 0; i < NR_THREADS; i++) {
		d[i].cpu = i;
		d[i].fn = fn;
	}
	host_thread_group_start(&g, NR_THREADS, drainer_main, d, sizeof(d[0]));
	host_thread_group_join(&g);
}

KTEST(kmalloc_threads, percpu_caches_exact_after_drain)
{
	uint64_t allocs, frees, sum_allocs = 0, hits = 0, cached = 0;
	uint64_t pages0 = atomic_load_relaxed(&pages_out);
	struct kmalloc_stats st;
	unsigned rec_row = kmalloc_stats_rows() - 2;

	kmalloc_init(&thread_backend);
	kmalloc_enable_cpu_caches(this_cpu_num, NR_THREADS);
	allocs = run_workers(ctx, 0x2545f4914f6cdd1dull, 3, &frees);
	/* Before draining: nothing in use, but caches hold free objects. */
	EXPECT_EQ(kmalloc_in_use_bytes(), 0);
	for (unsigned i = 0; i < rec_row; i++) {
		ASSERT_TRUE(kmalloc_stats_get(i, &st));
		hits += st.cache_hits;
		cached += st.cached;
	}
	EXPECT_GT(hits, allocs / 2); /* most allocations took no lock */
	EXPECT_GT(cached, 0);
	kmalloc_drain_all(run_on_each_thread_cpu);
	for (unsigned i = 0; kmalloc_stats_get(i, &st); i++) {
		EXPECT_EQ(st.in_use, 0);
		EXPECT_EQ(st.cached, 0);
		EXPECT_EQ(st.pages, 0);
		EXPECT_EQ(st.allocs, st.frees);
		if (i != rec_row)
			sum_allocs += st.allocs;
	}
	EXPECT_EQ(sum_allocs, allocs);
	EXPECT_EQ(kmalloc_percpu_pages(), NR_THREADS);
	EXPECT_EQ(kmalloc_backend_pages(), NR_THREADS);
	EXPECT_EQ(atomic_load_relaxed(&pages_out) - pages0, NR_THREADS);
}
