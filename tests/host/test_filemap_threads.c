/*
 * The page cache under ThreadSanitizer, each thread playing a CPU: for
 * every variant, readers look pages up (single and contiguous gang
 * lookups) and read misses in through readahead, while a reclaimer
 * shrinks the cache from the LRU and a remover deletes pages, for a
 * bounded time. Frames come from a small pool, so reclaim is constant;
 * freed frames and RCU-freed tree nodes are poisoned. Every page a reader
 * gets must be the page it asked for, with the store's contents: a broken
 * speculative protocol shows up as a wrong page, poisoned data, or a TSan
 * race between a free and a reader.
 */
// HOST_SRCS: mm/filemap.c mm/radix_tree.c mm/kmalloc.c mm/kmalloc_large.c mm/kmalloc_stats.c lib/rcu.c lib/spinlock.c lib/rwlock.c lib/string.c tests/host/host_cycles.c tests/host/host_cpu.c
// HOST_SANITIZE: thread
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/ktest.h"
#include "lib/prng.h"
#include "lib/rcu.h"
#include "mm/filemap.h"
#include "mm/kmalloc.h"
#include "tests/host/host_mm.h"
#include "tests/host/host_thread_group.h"
#include "tests/host/host_threads.h"

#define NR_FRAMES 192
#define LOW_WATERMARK 16
#define FILE_PAGES 160
#define NR_READERS 3
#define RUN_NS 700000000ull
#define GANG 16
#define POISON_BYTE 0xdb

static struct page frame_desc[NR_FRAMES];
static uint8_t (*frame_data)[PAGE_SIZE];
static struct page *free_frames;
static uint64_t nr_free;
static struct spinlock frame_lock = SPINLOCK_INIT(NULL);

static struct page *frame_alloc(void)
{
	struct page *p;

	if (atomic_load_relaxed(&nr_free) < LOW_WATERMARK)
		shrink_page_cache(LOW_WATERMARK); /* the allocator's hook */
	spin_lock(&frame_lock);
	p = free_frames;
	if (p) {
		free_frames = p->list.next;
		atomic_store_relaxed(&nr_free, nr_free - 1);
	}
	spin_unlock(&frame_lock);
	if (p) {
		p->mapping = NULL;
		set_page_count(p, 1);
	}
	return p;
}

static void *frame_address(struct page *p)
{
	return frame_data[p - frame_desc];
}

static void frame_free(struct page *p)
{
	kassert(page_count(p) == 0);
	memset(frame_address(p), POISON_BYTE, PAGE_SIZE);
	spin_lock(&frame_lock);
	p->list.next = free_frames;
	free_frames = p;
	atomic_store_relaxed(&nr_free, nr_free + 1);
	spin_unlock(&frame_lock);
}

static const struct page_frame_ops pool_frames = {
	.alloc = frame_alloc, .free = frame_free, .address = frame_address,
};

/* Deterministic contents: every 8-byte word names its file and page. */
static uint64_t word_of(uint64_t file, uint64_t index, unsigned w)
{
	return (file << 48) ^ (index << 16) ^ w ^ 0x5a5a000000000000ull;
}

static bool store_read(void *file, uint64_t index, void *buf)
{
	uint64_t *b = buf;

	for (unsigned w = 0; w < PAGE_SIZE / 8; w++)
		b[w] = word_of((uintptr_t)file, index, w);
	return true;
}

static const struct backing_store pattern_store = {.read_page = store_read};

static bool page_ok(struct page *p, uint64_t file, uint64_t index)
{
	const uint64_t *b = frame_address(p);

	return p->index == index && b[0] == word_of(file, index, 0) &&
	       b[PAGE_SIZE / 8 - 1] == word_of(file, index, PAGE_SIZE / 8 - 1);
}

static struct address_space file_as;
static uint64_t stop, bad, hits, misses, gang_pages, removed, reclaimed;

struct worker {
	unsigned cpu;
	uint64_t rng;
};

static uint64_t rnd(struct worker *w)
{
	return prng_next(&w->rng);
}

static void *reader(void *arg)
{
	struct worker *w = arg;
	struct file_ra_state ra;

	host_set_thread_cpu(w->cpu);
	rcu_idle_exit();
	file_ra_state_init(&ra);
	while (!atomic_load_acquire(&stop)) {
		uint64_t index = rnd(w) % FILE_PAGES;
		struct page *pages[GANG];
		struct page *p = find_get_page(&file_as, index);
		unsigned n;

		if (!p) {
			page_cache_readahead(&file_as, &ra, index);
			atomic_fetch_add_relaxed(&misses, 1);
		} else {
			if (!page_ok(p, 1, index))
				atomic_fetch_add_relaxed(&bad, 1);
			page_cache_release(p);
			atomic_fetch_add_relaxed(&hits, 1);
		}
		n = find_get_pages_contig(&file_as, index, GANG, pages);
		for (unsigned i = 0; i < n; i++) {
			if (!page_ok(pages[i], 1, index + i))
				atomic_fetch_add_relaxed(&bad, 1);
			page_cache_release(pages[i]);
		}
		atomic_fetch_add_relaxed(&gang_pages, n);
		rcu_quiescent_state();
	}
	rcu_idle_enter();
	return NULL;
}

static void *remover(void *arg)
{
	struct worker *w = arg;

	host_set_thread_cpu(w->cpu);
	rcu_idle_exit();
	while (!atomic_load_acquire(&stop)) {
		uint64_t index = rnd(w) % FILE_PAGES;
		struct page *p = find_get_page(&file_as, index);

		if (p) {
			if (remove_from_page_cache(p))
				atomic_fetch_add_relaxed(&removed, 1);
			page_cache_release(p);
		}
		atomic_fetch_add_relaxed(&reclaimed, shrink_page_cache(4));
		rcu_quiescent_state();
	}
	rcu_idle_enter();
	return NULL;
}

static void setup_once(void)
{
	if (!host_mm_init_once())
		return;
	frame_data = aligned_alloc(PAGE_SIZE, (size_t)NR_FRAMES * PAGE_SIZE);
	for (unsigned i = 0; i < NR_FRAMES; i++)
		frame_free(&frame_desc[i]);
	pagecache_init(&pool_frames);
	pagecache_stats_enable();
}

static void stress(struct ktest_ctx *ctx, enum pagecache_variant v)
{
	struct worker w[NR_READERS + 1]; /* the readers, then the remover */
	struct host_thread_group readers, removers;
	struct pagecache_stats before, after;
	uint64_t t0;

	setup_once();
	host_set_thread_cpu(0);
	rcu_idle_exit();
	address_space_init(&file_as, v, &pattern_store, (void *)1, FILE_PAGES,
			   NULL, NULL);
	stop = bad = hits = misses = gang_pages = removed = reclaimed = 0;
	pagecache_stats_read(&before);
	for (unsigned i = 0; i <= NR_READERS; i++) {
		w[i].cpu = i + 1;
		w[i].rng = prng_seed(0x1234567ull * (i + 1) + v);
	}
	host_thread_group_start(&readers, NR_READERS, reader, w, sizeof(w[0]));
	host_thread_group_start(&removers, 1, remover, &w[NR_READERS], 0);
	t0 = host_now_ns();
	while (host_now_ns() - t0 < RUN_NS) {
		struct timespec ts = {0, 1000000};

		nanosleep(&ts, NULL);
		rcu_quiescent_state();
	}
	atomic_store_release(&stop, 1);
	host_thread_group_join(&readers);
	host_thread_group_join(&removers);
	/* The cumulative counters: every page read in and reclaimed was
	 * this file's; lookups include the remover's and the gang ones. */
	pagecache_stats_read(&after);
	EXPECT_EQ(after.readahead_pages - before.readahead_pages,
		  file_as.readahead_pages);
	EXPECT_EQ(after.reclaimed_pages - before.reclaimed_pages,
		  file_as.reclaimed_pages);
	EXPECT_GE(after.lookups - before.lookups, hits + misses);
	EXPECT_GE(after.hits - before.hits, hits);
	EXPECT_EQ(after.misses, after.lookups - after.hits);
	EXPECT_EQ(bad, 0);
	EXPECT_GT(hits, 0);
	EXPECT_GT(misses, 0);
	EXPECT_GT(gang_pages, 0);
	EXPECT_GT(removed, 0);
	/* Reclaim only trylocks a file, but its wait is bounded in every
	 * variant (under lockless, gang lookups stop taking the lock once
	 * reclaim keeps losing it): it must have made progress. */
	EXPECT_GT(file_as.reclaimed_pages, 0);
	EXPECT_EQ(file_as.nrpages, pagecache_lru_pages());
	EXPECT_EQ(radix_tree_check(&file_as.page_tree), file_as.nrpages);
	truncate_inode_pages(&file_as);
	EXPECT_EQ(pagecache_lru_pages(), 0);
	EXPECT_EQ(nr_free, NR_FRAMES);
	EXPECT_EQ(file_as.page_tree.nodes, 0);
	rcu_barrier();
	rcu_idle_enter();
}

KTEST(filemap_threads, vanilla)
{
	stress(ctx, PAGECACHE_VANILLA);
}

KTEST(filemap_threads, lockless)
{
	stress(ctx, PAGECACHE_LOCKLESS);
}

KTEST(filemap_threads, lockless_nogang)
{
	stress(ctx, PAGECACHE_LOCKLESS_NOGANG);
}

KTEST(filemap_threads, lockless_gang)
{
	stress(ctx, PAGECACHE_LOCKLESS_GANG);
}
