/*
 * In-kernel tests of the page cache, RCU and the radix tree on every
 * online CPU (the smp4 boot runs them on 4): lookups, readahead inserts,
 * removals and reclaim (directly and through the page allocator's
 * watermark hook) at once, with every page checked against the backing
 * store; the four variants return the same bytes; grace periods complete
 * while clients that never leave their work item run.
 */
#include "kernel/smp_call.h"
#include "lib/cycles.h"
#include "lib/ktest.h"
#include "lib/prng.h"
#include "lib/rcu.h"
#include "lib/string.h"
#include "mm/filemap.h"
#include "mm/page_alloc.h"
#include "workloads/corpus.h"
#include "workloads/pagefile.h"

#define STRESS_FILE_PAGES 192
/* Iterations per CPU: STRESS_ITERS_TOTAL shared out, within bounds, so
 * 16-CPU boots on a 2-core host stay short. */
#define STRESS_ITERS_MAX 1500
#define STRESS_ITERS_MIN 300
#define STRESS_ITERS_TOTAL 6000
#define STRESS_GANG 16
#define SAME_DATA_PAGES 96
#define GP_ROUNDS 20
/* The allocator's watermark during the stress: just above free memory,
 * so that allocations call the reclaim hook. */
#define STRESS_WATERMARK_MARGIN 64

struct stress {
	struct address_space m;
	struct pagefile f;
	struct smp_barrier barrier;
	unsigned iters; /* per CPU */
	uint64_t bad, hits, misses, removed, reclaimed, gang_pages;
};

static void stress_cpu(void *arg)
{
	struct stress *st = arg;
	unsigned cpu = smp_this_cpu();
	uint64_t rng = prng_seed(0x9e3779b97f4a7c15ull * (cpu + 1));
	struct file_ra_state ra;

	file_ra_state_init(&ra);
	smp_barrier_wait(&st->barrier);
	for (unsigned it = 0; it < st->iters; it++) {
		uint64_t index = prng_next(&rng) % STRESS_FILE_PAGES;
		struct page *pages[STRESS_GANG];
		struct page *p = find_get_page(&st->m, index);
		unsigned n;

		if (p) {
			if (p->index != index ||
			    !pagefile_page_spot_ok(st->f.id, index,
						   page_data(p)))
				atomic_fetch_add_relaxed(&st->bad, 1);
			/* CPU 0 also removes what it finds, now and then
			 * (and until its first removal: reclaim may keep
			 * the cache nearly empty). */
			if (cpu == 0 &&
			    (it % 8 == 0 || !atomic_load_relaxed(&st->removed)) &&
			    remove_from_page_cache(p))
				atomic_fetch_add_relaxed(&st->removed, 1);
			page_cache_release(p);
			atomic_fetch_add_relaxed(&st->hits, 1);
		} else {
			page_cache_readahead(&st->m, &ra, index);
			atomic_fetch_add_relaxed(&st->misses, 1);
		}
		n = find_get_pages_contig(&st->m, index, STRESS_GANG, pages);
		for (unsigned i = 0; i < n; i++) {
			if (pages[i]->index != index + i ||
			    !pagefile_page_spot_ok(st->f.id, index + i,
						   page_data(pages[i])))
				atomic_fetch_add_relaxed(&st->bad, 1);
			page_cache_release(pages[i]);
		}
		atomic_fetch_add_relaxed(&st->gang_pages, n);
		if (it % 4 == (cpu % 4))
			atomic_fetch_add_relaxed(&st->reclaimed,
						 shrink_page_cache(8));
		rcu_quiescent_state();
	}
	smp_barrier_wait(&st->barrier);
}

static void run_stress(struct ktest_ctx *ctx, enum pagecache_variant v)
{
	static struct stress st;
	struct cpumask all;
	uint64_t in_cache;

	memset(&st, 0, sizeof(st));
	st.f = (struct pagefile){.id = 7 + v, .size_pages = STRESS_FILE_PAGES};
	address_space_init(&st.m, v, &pagefile_store, &st.f,
			   STRESS_FILE_PAGES, NULL, NULL);
	cpumask_online(&all, false);
	smp_barrier_init(&st.barrier, cpumask_weight(&all));
	st.iters = MAX(MIN(STRESS_ITERS_TOTAL / cpumask_weight(&all),
			   STRESS_ITERS_MAX), STRESS_ITERS_MIN);
	page_alloc_set_reclaim(shrink_page_cache, page_alloc_free_pages() +
							  STRESS_WATERMARK_MARGIN);
	smp_run_on(&all, stress_cpu, &st);
	page_alloc_set_reclaim(shrink_page_cache,
			       PAGECACHE_LOW_WATERMARK_PAGES);
	EXPECT_EQ(st.bad, 0);
	EXPECT_GT(st.hits, 0);
	EXPECT_GT(st.misses, 0);
	EXPECT_GT(st.gang_pages, 0);
	EXPECT_GT(st.removed, 0);
	EXPECT_GT(st.m.reclaimed_pages, 0);
	/* Consistency: tree, counters and contents agree. */
	in_cache = radix_tree_check(&st.m.page_tree);
	EXPECT_EQ(in_cache, st.m.nrpages);
	for (uint64_t i = 0; i < STRESS_FILE_PAGES; i++) {
		struct page *p = find_get_page(&st.m, i);

		if (!p)
			continue;
		EXPECT_TRUE(p->mapping == &st.m && p->index == i &&
			    pagefile_page_ok(st.f.id, i, page_data(p)));
		page_cache_release(p);
	}
	EXPECT_EQ(truncate_inode_pages(&st.m), in_cache);
	EXPECT_EQ(st.m.page_tree.nodes, 0);
	rcu_barrier();
}

KTEST(pagecache, stress_lockless_gang)
{
	run_stress(ctx, PAGECACHE_LOCKLESS_GANG);
}

KTEST(pagecache, stress_vanilla)
{
	run_stress(ctx, PAGECACHE_VANILLA);
}

KTEST(pagecache, stress_lockless_nogang)
{
	run_stress(ctx, PAGECACHE_LOCKLESS_NOGANG);
}

/* Read the whole file the splice way; hash what was read. */
static uint64_t read_all(struct address_space *m, uint64_t *pages_read)
{
	struct file_ra_state ra;
	uint64_t h = CORPUS_HASH_INIT, pos = 0;
	unsigned misses = 0;

	file_ra_state_init(&ra);
	while (pos < m->size_pages && misses < 2 * m->size_pages) {
		struct page *pages[STRESS_GANG];
		unsigned n = find_get_pages_contig(m, pos, STRESS_GANG, pages);

		if (n == 0) {
			page_cache_readahead(m, &ra, pos);
			misses++;
			continue;
		}
		for (unsigned i = 0; i < n && pos + i < m->size_pages; i++)
			h = corpus_hash64(h, page_data(pages[i]), PAGE_SIZE);
		for (unsigned i = 0; i < n; i++)
			page_cache_release(pages[i]);
		pos += n;
	}
	*pages_read = pos;
	return h;
}

KTEST(pagecache, every_variant_returns_the_same_data)
{
	static struct address_space m;
	static uint8_t page[PAGE_SIZE];
	struct pagefile f = {.id = 42, .size_pages = SAME_DATA_PAGES};
	uint64_t want = CORPUS_HASH_INIT;

	for (uint64_t i = 0; i < SAME_DATA_PAGES; i++) {
		ASSERT_TRUE(pagefile_store.read_page(&f, i, page));
		want = corpus_hash64(want, page, PAGE_SIZE);
	}
	for (unsigned v = 0; v < PAGECACHE_VARIANTS; v++) {
		uint64_t n, h;

		address_space_init(&m, v, &pagefile_store, &f, SAME_DATA_PAGES,
				   NULL, NULL);
		h = read_all(&m, &n);
		EXPECT_EQ(n, SAME_DATA_PAGES);
		EXPECT_EQ(h, want);
		/* Twice: the second pass is served from the cache. */
		h = read_all(&m, &n);
		EXPECT_EQ(h, want);
		EXPECT_EQ(m.readahead_pages, SAME_DATA_PAGES);
		EXPECT_EQ(truncate_inode_pages(&m), SAME_DATA_PAGES);
	}
	rcu_barrier();
}

KTEST(pagecache, readahead_window_grows_when_sequential)
{
	static struct address_space m;
	struct pagefile f = {.id = 43, .size_pages = 1024};
	struct file_ra_state ra;

	address_space_init(&m, PAGECACHE_LOCKLESS_GANG, &pagefile_store, &f,
			   f.size_pages, NULL, NULL);
	file_ra_state_init(&ra);
	EXPECT_EQ(page_cache_readahead(&m, &ra, 0), READAHEAD_MIN_PAGES);
	EXPECT_EQ(page_cache_readahead(&m, &ra, ra.prev + 1),
		  2 * READAHEAD_MIN_PAGES);
	EXPECT_EQ(page_cache_readahead(&m, &ra, ra.prev + 1),
		  4 * READAHEAD_MIN_PAGES);
	for (int i = 0; i < 8; i++)
		page_cache_readahead(&m, &ra, ra.prev + 1);
	EXPECT_EQ(ra.size, READAHEAD_MAX_PAGES);
	/* A jump resets the window. */
	EXPECT_EQ(page_cache_readahead(&m, &ra, 900), READAHEAD_MIN_PAGES);
	EXPECT_EQ(truncate_inode_pages(&m), m.readahead_pages);
	rcu_barrier();
}

struct gp_run {
	struct address_space m;
	struct pagefile f;
	uint64_t stop;
	uint64_t client_loops[MAX_CPUS];
	uint64_t loops_at_sync[GP_ROUNDS + 1];
	uint64_t cb_ran;
	uint32_t started, nclients;
	struct rcu_head head;
};

static void gp_cb(struct rcu_head *h)
{
	struct gp_run *r = (struct gp_run *)((char *)h -
					     __builtin_offsetof(struct gp_run,
								head));

	atomic_store_release(&r->cb_ran, 1);
}

static uint64_t clients_total(struct gp_run *r)
{
	uint64_t t = 0;

	for (unsigned c = 0; c < MAX_CPUS; c++)
		t += atomic_load_relaxed(&r->client_loops[c]);
	return t;
}

static void gp_cpu(void *arg)
{
	struct gp_run *r = arg;
	unsigned cpu = smp_this_cpu();

	if (cpu != 0) {
		/* A client: one work item that never ends by itself. */
		atomic_fetch_add_relaxed(&r->started, 1);
		while (!atomic_load_acquire(&r->stop)) {
			struct page *p = find_get_page(&r->m, cpu % 8);

			if (p)
				page_cache_release(p);
			atomic_fetch_add_relaxed(&r->client_loops[cpu], 1);
			rcu_quiescent_state();
		}
		return;
	}
	/* Wait until every client runs (not halted: idle CPUs are not
	 * waited for, which would make the test pass without clients). */
	while (atomic_load_acquire(&r->started) < r->nclients) {
		rcu_quiescent_state();
		cpu_relax();
	}
	while (clients_total(r) == 0)
		cpu_relax();
	r->loops_at_sync[0] = clients_total(r);
	call_rcu(&r->head, gp_cb);
	for (unsigned i = 1; i <= GP_ROUNDS; i++) {
		synchronize_rcu();
		r->loops_at_sync[i] = clients_total(r);
	}
	atomic_store_release(&r->stop, 1);
}

KTEST(rcu, grace_periods_complete_while_clients_run)
{
	static struct gp_run r;
	struct rcu_stats a, b;
	struct cpumask all;
	struct file_ra_state ra;

	if (smp_cpus_online() < 2)
		KTEST_SKIP("one CPU");
	memset(&r, 0, sizeof(r));
	r.f = (struct pagefile){.id = 44, .size_pages = 8};
	address_space_init(&r.m, PAGECACHE_LOCKLESS_GANG, &pagefile_store, &r.f,
			   8, NULL, NULL);
	file_ra_state_init(&ra);
	page_cache_readahead(&r.m, &ra, 0);
	rcu_stats_get(&a);
	cpumask_online(&all, false);
	r.nclients = cpumask_weight(&all) - 1;
	smp_run_on(&all, gp_cpu, &r);
	rcu_stats_get(&b);
	EXPECT_GE(b.gp_completed - a.gp_completed, GP_ROUNDS);
	EXPECT_EQ(atomic_load_acquire(&r.cb_ran), 1);
	/* The clients kept running across the grace periods. */
	EXPECT_GT(r.loops_at_sync[GP_ROUNDS], r.loops_at_sync[0]);
	truncate_inode_pages(&r.m);
	rcu_barrier();
}
