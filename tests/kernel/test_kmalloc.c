/*
 * In-kernel tests of kmalloc (mm/kmalloc.c) over the real page allocator:
 * every class, cache-line alignment, large blocks, a random sequence
 * against a shadow record, and the page allocator's free count back where
 * it started once everything is freed.
 *
 * Other kernel code may hold kmalloc objects while these run, so the
 * checks compare counters before and after rather than against zero.
 * Objects in this CPU's per-CPU caches keep their slabs' pages, so each
 * page count is read after kmalloc_drain_cpu(); the last test runs on
 * every online CPU and drains each one.
 */
#include "lib/compiler.h"
#include "lib/kprintf.h"
#include "lib/ktest.h"
#include "lib/prng.h"
#include "lib/string.h"
#include "kernel/smp_call.h"
#include "kernel/options.h"
#include "mm/kmalloc.h"
#include "mm/page.h"
#include "mm/page_alloc.h"

/*
 * Weak, so this file links before mm/page_alloc.c exists; the tests that
 * need the page allocator skip while the symbol is missing.
 */
#pragma weak page_alloc_free_pages

#define SHADOW_SLOTS 128
#define SHADOW_OPS 4000
#define LARGE_TEST_BYTES (5 * PAGE_SIZE) /* an order-3 block */
#define RNG_SEED 0x2545f4914f6cdd1dull
#define PERCPU_OBJS 48 /* more than a cache holds: refills and flushes */
#define PERCPU_SIZE 64

static uint64_t rng_state;

static uint64_t rng(void)
{
	return prng_next(&rng_state);
}

static uint8_t pattern(unsigned slot, size_t i)
{
	return (uint8_t)(slot * 13 + i * 7 + 1);
}

static bool ready(struct ktest_ctx *ctx)
{
	if (!kmalloc_initialized()) {
		ktest_skip(ctx, "kmalloc_init() not called at boot");
		return false;
	}
	if (!page_alloc_free_pages) {
		ktest_skip(ctx, "page allocator not linked");
		return false;
	}
	return true;
}

/* ready(), then this CPU's cache drained and the free-page count taken
 * into *free0: the baseline a leak check compares with. */
static bool start(struct ktest_ctx *ctx, uint64_t *free0)
{
	if (!ready(ctx))
		return false;
	kmalloc_drain_cpu();
	*free0 = page_alloc_free_pages();
	return true;
}

/* One object of each size class and of a large size; all come back. */
KTEST(kmalloc, every_class_returns_pages)
{
	struct kmalloc_stats st;
	void *p[16];
	unsigned n = 0;
	uint64_t free0;
	size_t bytes0;

	if (!start(ctx, &free0))
		return;
	bytes0 = kmalloc_in_use_bytes();
	/* The last two rows are the record class and "large". */
	for (unsigned i = 0; i + 2 < kmalloc_stats_rows() &&
			     n + 1 < ARRAY_SIZE(p); i++) {
		ASSERT_TRUE(kmalloc_stats_get(i, &st));
		p[n] = kmalloc(st.obj_size);
		ASSERT_NE(p[n], NULL);
		EXPECT_EQ(ksize(p[n]), st.obj_size);
		EXPECT_EQ((uintptr_t)p[n] % KMALLOC_MIN_ALIGN, 0);
		memset(p[n], 0xa5, st.obj_size);
		n++;
	}
	p[n] = kzalloc(LARGE_TEST_BYTES);
	ASSERT_NE(p[n], NULL);
	EXPECT_EQ((uintptr_t)p[n] % PAGE_SIZE, 0);
	EXPECT_EQ(((uint8_t *)p[n])[LARGE_TEST_BYTES - 1], 0);
	n++;
	EXPECT_LT(page_alloc_free_pages(), free0);
	EXPECT_GT(kmalloc_in_use_bytes(), bytes0);
	while (n)
		kfree(p[--n]);
	EXPECT_EQ(kmalloc_in_use_bytes(), bytes0);
	kmalloc_drain_cpu();
	EXPECT_EQ(page_alloc_free_pages(), free0);
}

KTEST(kmalloc, cache_aligned_objects_own_their_lines)
{
	enum { N = 64 };
	void *p[N];
	void *plain[N];
	uint64_t free0;

	if (!start(ctx, &free0))
		return;
	for (unsigned i = 0; i < N; i++) {
		p[i] = kmalloc_cache_aligned(8 + i);
		plain[i] = kmalloc(8 + i % 64);
		ASSERT_NE(p[i], NULL);
		ASSERT_NE(plain[i], NULL);
		EXPECT_EQ((uintptr_t)p[i] % CACHE_LINE_SIZE, 0);
	}
	for (unsigned i = 0; i < N; i++) {
		uintptr_t lo = (uintptr_t)p[i];
		uintptr_t hi = ALIGN_UP(lo + 8 + i, CACHE_LINE_SIZE);

		for (unsigned j = 0; j < N; j++) {
			uintptr_t a = (uintptr_t)plain[j];
			uintptr_t b = (uintptr_t)p[j];

			EXPECT_FALSE(a < hi && lo < a + ksize(plain[j]));
			if (j != i)
				EXPECT_FALSE(b < hi && lo < b + ksize(p[j]));
		}
	}
	for (unsigned i = 0; i < N; i++) {
		kfree(p[i]);
		kfree(plain[i]);
	}
	kmalloc_drain_cpu();
	EXPECT_EQ(page_alloc_free_pages(), free0);
}

KTEST(kmalloc, random_against_shadow)
{
	static struct { uint8_t *p; size_t size; } sh[SHADOW_SLOTS];
	uint64_t free0;
	size_t bytes0;

	if (!start(ctx, &free0))
		return;
	bytes0 = kmalloc_in_use_bytes();
	rng_state = RNG_SEED;
	memset(sh, 0, sizeof(sh));
	for (unsigned op = 0; op < SHADOW_OPS; op++) {
		unsigned s = rng() % SHADOW_SLOTS;

		if (sh[s].p) {
			for (size_t i = 0; i < sh[s].size; i++)
				if (sh[s].p[i] != pattern(s, i)) {
					ktest_fail(ctx, __FILE__, __LINE__,
						   "object %p byte %zu changed",
						   sh[s].p, i);
					break;
				}
			kfree(sh[s].p);
			sh[s].p = NULL;
			continue;
		}
		sh[s].size = rng() % 16 ? 1 + rng() % 1024
					: 1 + rng() % (3 * PAGE_SIZE);
		sh[s].p = kmalloc(sh[s].size);
		ASSERT_NE(sh[s].p, NULL);
		for (size_t i = 0; i < sh[s].size; i++)
			sh[s].p[i] = pattern(s, i);
	}
	for (unsigned s = 0; s < SHADOW_SLOTS; s++)
		kfree(sh[s].p);
	EXPECT_EQ(kmalloc_in_use_bytes(), bytes0);
	kmalloc_drain_cpu();
	EXPECT_EQ(page_alloc_free_pages(), free0);
	kmalloc_stats_print();
}

/*
 * Exhausting the real page allocator would starve the rest of the boot
 * (the host test does that with a small budget); ask for a size no block
 * can hold instead: NULL, counted, nothing taken.
 */
KTEST(kmalloc, oversized_request_fails_cleanly)
{
	struct kmalloc_stats before, after;
	unsigned large = kmalloc_stats_rows() - 1;
	uint64_t free0;

	if (!start(ctx, &free0))
		return;
	kmalloc_stats_get(large, &before);
	EXPECT_EQ(kmalloc(((size_t)PAGE_SIZE << KMALLOC_MAX_ORDER) + 1), NULL);
	kmalloc_stats_get(large, &after);
	EXPECT_EQ(after.failures, before.failures + 1);
	kmalloc_drain_cpu();
	EXPECT_EQ(page_alloc_free_pages(), free0);
}

struct percpu_result {
	uint32_t ran, bad;
};

static struct percpu_result percpu_res[MAX_CPUS];

/* On one CPU: fill, free, refill (from its cache), check, free, drain. */
static void percpu_round(void *arg __unused)
{
	struct percpu_result *r = &percpu_res[smp_this_cpu()];
	uint8_t *p[PERCPU_OBJS];

	for (unsigned round = 0; round < 2; round++) {
		for (unsigned i = 0; i < PERCPU_OBJS; i++) {
			p[i] = kmalloc(PERCPU_SIZE);
			if (!p[i]) {
				r->bad++;
				continue;
			}
			memset(p[i], (int)(i + round), PERCPU_SIZE);
		}
		for (unsigned i = 0; i < PERCPU_OBJS; i++) {
			if (!p[i])
				continue;
			if (p[i][0] != (uint8_t)(i + round) ||
			    p[i][PERCPU_SIZE - 1] != (uint8_t)(i + round))
				r->bad++;
			kfree(p[i]);
		}
	}
	kmalloc_drain_cpu();
	r->ran++;
}

KTEST(kmalloc, every_cpu_allocates_and_drains)
{
	struct cpumask online;
	uint64_t free0;
	size_t bytes0;
	unsigned n;

	if (!ready(ctx))
		return;
	memset(percpu_res, 0, sizeof(percpu_res));
	cpumask_online(&online, false);
	/* A first round gives every CPU its cache page (kept for good). */
	n = smp_run_on(&online, percpu_round, NULL);
	EXPECT_EQ(n, smp_cpus_online());
	free0 = page_alloc_free_pages();
	bytes0 = kmalloc_in_use_bytes();
	EXPECT_EQ(smp_run_on(&online, percpu_round, NULL), n);
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (!cpumask_test(&online, cpu))
			continue;
		EXPECT_EQ(percpu_res[cpu].ran, 2);
		EXPECT_EQ(percpu_res[cpu].bad, 0);
	}
	EXPECT_EQ(kmalloc_in_use_bytes(), bytes0);
	/* Each CPU drained itself: every slab page is back. */
	EXPECT_EQ(page_alloc_free_pages(), free0);
}
