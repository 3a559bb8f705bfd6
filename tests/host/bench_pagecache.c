/*
 * Host benchmark of the page cache variants (not a test: built without
 * sanitizers, at -O2, by `make host-bench`): 1..N threads, one per CPU,
 * each reading the same cached file in 16-page chunks the splice way
 * (find_get_pages_contig(), then drop the references), for a fixed time.
 * Prints page lookups per second and MiB/s against threads per variant,
 * the lockless_gang 2-thread/1-thread ratio, and the cycles per page of a
 * 16-page gang lookup against 16 single lookups on one thread.
 *
 *   build/host/bench_pagecache [max_threads] [ms_per_point]
 *
 * Host threads are scheduled by the host's kernel: on a machine shared
 * with other work the scaling figures are those of the CPUs it got.
 */
// HOST_SRCS: mm/filemap.c mm/radix_tree.c mm/kmalloc.c lib/rcu.c lib/spinlock.c lib/rwlock.c tests/host/host_cycles.c
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/cycles.h"
#include "lib/rcu.h"
#include "mm/filemap.h"
#include "mm/kmalloc.h"
#include "tests/host/host_threads.h"

#define FILE_PAGES 1024 /* 4 MiB, all cached */
#define CHUNK_PAGES 16
#define MAX_THREADS 16
#define DEFAULT_THREADS 4
#define DEFAULT_MS 300
#define COST_ROUNDS 200000
#define NSEC_PER_MSEC 1000000ull

/* Frames for one cached copy of the file per variant. */
#define NR_FRAMES (PAGECACHE_VARIANTS * FILE_PAGES)
static struct page descs[NR_FRAMES];
static uint8_t (*data)[PAGE_SIZE];
static unsigned next_frame;

static struct page *frame_alloc(void)
{
	struct page *p;

	if (next_frame == NR_FRAMES)
		return NULL;
	p = &descs[next_frame++];
	set_page_count(p, 1);
	return p;
}

static void frame_free(struct page *p __attribute__((unused)))
{
	/* Pages stay cached for the whole run: nothing is freed early. */
}

static void *frame_address(struct page *p)
{
	return data[p - descs];
}

static const struct page_frame_ops frames = {
	.alloc = frame_alloc, .free = frame_free, .address = frame_address,
};

static bool store_read(void *file __attribute__((unused)), uint64_t index,
		       void *buf)
{
	memset(buf, (int)(index & 0xff), PAGE_SIZE);
	return true;
}

static const struct backing_store store = {.read_page = store_read};

static struct address_space files[PAGECACHE_VARIANTS];
static pthread_barrier_t start;

struct worker {
	pthread_t t;
	unsigned cpu, nthreads;
	struct address_space *m;
	uint64_t run_ns, pages, ns;
} __attribute__((aligned(64)));

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct page *pages[CHUNK_PAGES];
	uint64_t pos = (uint64_t)w->cpu * FILE_PAGES / w->nthreads, t0;

	host_set_thread_cpu(w->cpu);
	rcu_idle_exit();
	pthread_barrier_wait(&start);
	t0 = host_now_ns();
	while (host_now_ns() - t0 < w->run_ns) {
		for (int k = 0; k < 64; k++) {
			unsigned n = find_get_pages_contig(w->m, pos,
							   CHUNK_PAGES, pages);

			for (unsigned i = 0; i < n; i++)
				page_cache_release(pages[i]);
			w->pages += n;
			pos = (pos + CHUNK_PAGES) % FILE_PAGES;
		}
		rcu_quiescent_state();
	}
	w->ns = host_now_ns() - t0;
	rcu_idle_enter();
	return NULL;
}

/* Aggregate pages per second of n threads on file m. */
static double run_point(struct address_space *m, unsigned n, uint64_t run_ns)
{
	static struct worker w[MAX_THREADS];
	uint64_t pages = 0, ns = 0;

	pthread_barrier_init(&start, NULL, n);
	for (unsigned i = 0; i < n; i++) {
		w[i] = (struct worker){.cpu = i + 1, .nthreads = n, .m = m,
				       .run_ns = run_ns};
		pthread_create(&w[i].t, NULL, worker_main, &w[i]);
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_join(w[i].t, NULL);
		pages += w[i].pages;
		ns = w[i].ns > ns ? w[i].ns : ns;
	}
	pthread_barrier_destroy(&start);
	return (double)pages * HOST_NSEC_PER_SEC / (double)ns;
}

int main(int argc, char **argv)
{
	unsigned maxt = argc > 1 ? (unsigned)atoi(argv[1]) : DEFAULT_THREADS;
	uint64_t ms = argc > 2 ? (uint64_t)atoi(argv[2]) : DEFAULT_MS;
	double rate[PAGECACHE_VARIANTS][MAX_THREADS + 1];
	struct page *pages[CHUNK_PAGES];
	uint64_t t0, gang_cycles, single_cycles;

	if (maxt < 1 || maxt > MAX_THREADS || ms < 1) {
		fprintf(stderr, "usage: %s [threads 1..%d] [ms per point]\n",
			argv[0], MAX_THREADS);
		return 2;
	}
	kmalloc_init(&host_kmalloc_backend);
	rcu_init(host_thread_cpu, NULL);
	rcu_idle_exit();
	data = aligned_alloc(PAGE_SIZE, (size_t)NR_FRAMES * PAGE_SIZE);
	pagecache_init(&frames);
	/* One cached file per variant: the same pages, read in once. */
	for (unsigned v = 0; v < PAGECACHE_VARIANTS; v++) {
		address_space_init(&files[v], v, &store, NULL, FILE_PAGES, NULL,
				   NULL);
		if (__do_page_cache_readahead(&files[v], 0, FILE_PAGES) !=
		    FILE_PAGES) {
			fprintf(stderr, "bench_pagecache: could not fill the "
				"cache\n");
			return 1;
		}
	}
	printf("page cache lookups, %u-page chunks of a cached %u-page file, "
	       "%lu ms per point\n", CHUNK_PAGES, FILE_PAGES,
	       (unsigned long)ms);
	printf("%-16s %8s %16s %12s\n", "variant", "threads", "pages/s",
	       "MiB/s");
	for (unsigned v = 0; v < PAGECACHE_VARIANTS; v++)
		for (unsigned n = 1; n <= maxt; n++) {
			rate[v][n] = run_point(&files[v], n, ms * NSEC_PER_MSEC);
			printf("%-16s %8u %16.0f %12.1f\n",
			       pagecache_variant_name(v), n, rate[v][n],
			       rate[v][n] * PAGE_SIZE / (1 << 20));
		}
	if (maxt >= 2)
		for (unsigned v = 0; v < PAGECACHE_VARIANTS; v++)
			printf("%s: 2 threads / 1 thread = %.2f%s\n",
			       pagecache_variant_name(v),
			       rate[v][2] / rate[v][1],
			       v == PAGECACHE_LOCKLESS_GANG ? " (target >= 1.8)" :
							      "");

	/* Gang of 16 vs 16 single lookups, one thread. */
	t0 = cycles_now();
	for (unsigned r = 0; r < COST_ROUNDS; r++) {
		uint64_t pos = (uint64_t)r * CHUNK_PAGES % FILE_PAGES;
		unsigned n = find_get_pages_contig(
			&files[PAGECACHE_LOCKLESS_GANG], pos, CHUNK_PAGES,
			pages);

		for (unsigned i = 0; i < n; i++)
			page_cache_release(pages[i]);
	}
	gang_cycles = cycles_now() - t0;
	t0 = cycles_now();
	for (unsigned r = 0; r < COST_ROUNDS; r++) {
		uint64_t pos = (uint64_t)r * CHUNK_PAGES % FILE_PAGES;

		for (unsigned i = 0; i < CHUNK_PAGES; i++) {
			struct page *p = find_get_page(
				&files[PAGECACHE_LOCKLESS_GANG], pos + i);

			if (p)
				page_cache_release(p);
		}
	}
	single_cycles = cycles_now() - t0;
	printf("lookup cost, one thread: gang of 16 %.1f cycles/page, 16 "
	       "single lookups %.1f cycles/page, ratio %.2f (target >= 3)\n",
	       (double)gang_cycles / (COST_ROUNDS * CHUNK_PAGES),
	       (double)single_cycles / (COST_ROUNDS * CHUNK_PAGES),
	       (double)single_cycles / (double)gang_cycles);
	return 0;
}
