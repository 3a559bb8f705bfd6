/*
 * Host tests for mm/kmalloc.c under ASan/UBSan: every size class and its
 * boundaries, alignment (cache-aligned objects own their lines), large
 * blocks, contents of many live objects, random sequences against a
 * shadow record, bad frees and use-after-free panics, backend exhaustion.
 *
 * The backend hands out naturally aligned blocks from the host page source
 * (tests/host/host_threads.h) and keeps a table of them: it checks that
 * kmalloc frees exactly what it got (same address, same order), counts the
 * pages out, and can be limited to a page budget. Freed blocks are kept
 * (filled with junk) and reused rather than returned to libc, as a freed
 * frame stays mapped in the kernel's direct map, so a stale pointer can be
 * tested without ASan stopping the program first.
 */
// HOST_SRCS: mm/kmalloc.c mm/kmalloc_large.c mm/kmalloc_stats.c lib/spinlock.c tests/host/host_cycles.c tests/host/host_cpu.c
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/kprintf.h"
#include "lib/ktest.h"
#include "lib/prng.h"
#include "lib/this_cpu.h"
#include "mm/kmalloc.h"
#include "mm/page.h"
#include "tests/host/host_shim.h"
#include "tests/host/host_threads.h"

#define HB_MAX_BLOCKS 4096
#define HB_JUNK_NEW 0xa5  /* fresh pages: kmalloc must not expect zeroes */
#define HB_JUNK_FREED 0xdd
#define HB_NO_BUDGET UINT64_MAX
#define POISON_BYTE 0x6b  /* KMALLOC_POISON_FREE */
#define TOP_CLASS_SIZE 1984 /* (PAGE_SIZE - 128-byte header) / 2, lines */

struct hb_block {
	void *p;
	unsigned order;
	bool live;
};

static struct hb_block hb[HB_MAX_BLOCKS];
static unsigned hb_n;
static uint64_t hb_alloc_calls, hb_free_calls, hb_pages_live, hb_budget;
static unsigned hb_errors; /* frees of blocks the backend never gave out */

static void *hb_alloc(unsigned order)
{
	size_t bytes = (size_t)PAGE_SIZE << order;
	struct hb_block *b = NULL;

	if (hb_pages_live + (1ull << order) > hb_budget)
		return NULL;
	for (unsigned i = 0; i < hb_n && !b; i++)
		if (!hb[i].live && hb[i].order == order)
			b = &hb[i];
	if (!b) {
		if (hb_n == HB_MAX_BLOCKS)
			return NULL;
		b = &hb[hb_n++];
		b->p = host_pages_alloc(order);
		b->order = order;
		if (!b->p)
			abort();
	}
	memset(b->p, HB_JUNK_NEW, bytes);
	b->live = true;
	hb_alloc_calls++;
	hb_pages_live += 1ull << order;
	return b->p;
}

static void hb_free(void *p, unsigned order)
{
	hb_free_calls++;
	for (unsigned i = 0; i < hb_n; i++) {
		if (hb[i].p != p)
			continue;
		if (!hb[i].live || hb[i].order != order)
			break;
		hb[i].live = false;
		hb_pages_live -= 1ull << order;
		memset(p, HB_JUNK_FREED, (size_t)PAGE_SIZE << order);
		return;
	}
	hb_errors++;
}

static const struct kmalloc_backend host_backend = {
	.alloc_pages = hb_alloc,
	.free_pages = hb_free,
};

/* A fresh allocator over a fresh backend, for each test. */
static void setup(uint64_t budget)
{
	for (unsigned i = 0; i < hb_n; i++)
		host_pages_free(hb[i].p, hb[i].order);
	memset(hb, 0, sizeof(hb));
	hb_n = 0;
	hb_alloc_calls = hb_free_calls = hb_pages_live = 0;
	hb_errors = 0;
	hb_budget = budget;
	kmalloc_init(&host_backend);
}

static struct kmalloc_stats row(unsigned i)
{
	struct kmalloc_stats st;

	memset(&st, 0, sizeof(st));
	kmalloc_stats_get(i, &st);
	return st;
}

static unsigned large_row(void)
{
	return kmalloc_stats_rows() - 1;
}

/* Everything freed: every counter back to zero, every page returned. */
static void expect_all_returned(struct ktest_ctx *ctx)
{
	for (unsigned i = 0; i < kmalloc_stats_rows(); i++) {
		struct kmalloc_stats st = row(i);

		EXPECT_EQ(st.in_use, 0);
		EXPECT_EQ(st.slabs, 0);
		EXPECT_EQ(st.pages, 0);
		EXPECT_EQ(st.allocs, st.frees);
	}
	EXPECT_EQ(kmalloc_in_use_bytes(), 0);
	EXPECT_EQ(kmalloc_backend_pages(), 0);
	EXPECT_EQ(hb_pages_live, 0);
	EXPECT_EQ(hb_alloc_calls, hb_free_calls);
	EXPECT_EQ(hb_errors, 0);
}

/* Deterministic, so a failure can be replayed. */
static uint64_t rng_state;
static uint64_t rng(void)
{
	return prng_next(&rng_state);
}

static uint8_t pattern(uintptr_t seed, size_t i)
{
	return (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

static void fill(void *p, size_t n, uintptr_t seed)
{
	for (size_t i = 0; i < n; i++)
		((uint8_t *)p)[i] = pattern(seed, i);
}

/* Index of the first byte that differs from the pattern, or n. */
static size_t check(const void *p, size_t n, uintptr_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (((const uint8_t *)p)[i] != pattern(seed, i))
			return i;
	return n;
}

KTEST(kmalloc, class_table)
{
	static const size_t expect[] = { 8, 16, 32, 64, 128, 256, 512, 1024,
					 TOP_CLASS_SIZE };

	setup(HB_NO_BUDGET);
	/* user classes, the record class, "large" */
	ASSERT_EQ(kmalloc_stats_rows(), ARRAY_SIZE(expect) + 2);
	for (unsigned i = 0; i < ARRAY_SIZE(expect); i++) {
		struct kmalloc_stats st = row(i);

		EXPECT_EQ(st.obj_size, expect[i]);
		/* A slab is one page: header plus per_slab objects fit. */
		EXPECT_LE(128 + st.per_slab * st.obj_size, PAGE_SIZE);
		EXPECT_GE(st.per_slab, 2);
	}
	EXPECT_EQ(row(0).per_slab, (PAGE_SIZE - 128) / 8);
	EXPECT_EQ(row(ARRAY_SIZE(expect) - 1).per_slab, 2);
	EXPECT_EQ(row(large_row()).obj_size, 0);
	{
		struct kmalloc_stats st;

		EXPECT_FALSE(kmalloc_stats_get(kmalloc_stats_rows(), &st));
	}
}

/* Each size lands in the smallest class that holds it. */
KTEST(kmalloc, every_class_and_boundary)
{
	unsigned nuser = kmalloc_stats_rows() - 2;

	setup(HB_NO_BUDGET);
	for (unsigned i = 0; i < nuser; i++) {
		size_t lo = i ? row(i - 1).obj_size + 1 : 0;
		size_t hi = row(i).obj_size;
		size_t sizes[] = { lo, (lo + hi) / 2, hi };

		for (unsigned k = 0; k < ARRAY_SIZE(sizes); k++) {
			void *p = kmalloc(sizes[k]);

			ASSERT_NE(p, NULL);
			EXPECT_EQ(row(i).in_use, 1);
			EXPECT_EQ(row(i).slabs, 1);
			EXPECT_EQ(ksize(p), hi);
			EXPECT_EQ((uintptr_t)p % KMALLOC_MIN_ALIGN, 0);
			EXPECT_NE((uintptr_t)p % PAGE_SIZE, 0);
			EXPECT_EQ(kmalloc_in_use_bytes(), hi);
			fill(p, sizes[k], k);
			EXPECT_EQ(check(p, sizes[k], k), sizes[k]);
			kfree(p);
			EXPECT_EQ(row(i).in_use, 0);
			EXPECT_EQ(row(i).slabs, 0);
		}
	}
	/* One past the top class is a large block. */
	{
		void *p = kmalloc(row(nuser - 1).obj_size + 1);

		ASSERT_NE(p, NULL);
		EXPECT_EQ((uintptr_t)p % PAGE_SIZE, 0);
		EXPECT_EQ(row(large_row()).in_use, 1);
		kfree(p);
	}
	expect_all_returned(ctx);
}

/* Fill whole slabs of each class: objects are distinct and in range. */
KTEST(kmalloc, full_slabs_distinct_objects)
{
	enum { SLABS = 3 };
	unsigned nuser = kmalloc_stats_rows() - 2;
	static void *objs[SLABS * 496]; /* 496: per slab of kmalloc-8 */

	setup(HB_NO_BUDGET);
	for (unsigned c = 0; c < nuser; c++) {
		struct kmalloc_stats st = row(c);
		unsigned n = SLABS * st.per_slab;

		for (unsigned i = 0; i < n; i++) {
			objs[i] = kmalloc(st.obj_size);
			ASSERT_NE(objs[i], NULL);
			memset(objs[i], (int)i, st.obj_size);
		}
		EXPECT_EQ(row(c).slabs, SLABS);
		EXPECT_EQ(hb_pages_live, SLABS);
		for (unsigned i = 0; i < n; i++) {
			const uint8_t *b = objs[i];

			EXPECT_EQ(b[0], (uint8_t)i);
			EXPECT_EQ(b[st.obj_size - 1], (uint8_t)i);
		}
		/* Free in an interleaved order to exercise the partial list. */
		for (unsigned i = 0; i < n; i += 2)
			kfree(objs[i]);
		for (unsigned i = 1; i < n; i += 2)
			kfree(objs[i]);
		EXPECT_EQ(row(c).slabs, 0);
		EXPECT_EQ(hb_pages_live, 0);
	}
	expect_all_returned(ctx);
}

KTEST(kmalloc, aligned_requests)
{
	static const size_t sizes[] = { 1, 8, 24, 63, 64, 65, 100, 500,
					1000, 2000, 4096, 5000 };
	void *p;

	setup(HB_NO_BUDGET);
	for (size_t align = 1; align <= PAGE_SIZE; align <<= 1) {
		for (unsigned k = 0; k < ARRAY_SIZE(sizes); k++) {
			p = kmalloc_aligned(sizes[k], align);
			ASSERT_NE(p, NULL);
			EXPECT_EQ((uintptr_t)p % align, 0);
			EXPECT_EQ((uintptr_t)p % KMALLOC_MIN_ALIGN, 0);
			EXPECT_GE(ksize(p), sizes[k]);
			memset(p, 0x5a, sizes[k]);
			kfree(p);
		}
	}
	/* Bad alignments are programming errors. */
	EXPECT_TRUE(HOST_EXPECT_PANIC(kmalloc_aligned(64, 48)));
	EXPECT_TRUE(HOST_EXPECT_PANIC(kmalloc_aligned(64, 2 * PAGE_SIZE)));
	expect_all_returned(ctx);
}

/*
 * The LTTng lesson: cache-aligned objects, interleaved with ordinary ones
 * of the same classes, never share a cache line with any other object.
 */
KTEST(kmalloc, cache_aligned_owns_its_lines)
{
	enum { N = 300 };
	static void *p[2 * N];
	static bool aligned[2 * N];
	unsigned n = 0;

	setup(HB_NO_BUDGET);
	for (unsigned i = 0; i < N; i++) {
		size_t size = 1 + rng() % 200;

		aligned[n] = true;
		p[n] = kmalloc_cache_aligned(size);
		ASSERT_NE(p[n], NULL);
		EXPECT_EQ((uintptr_t)p[n] % CACHE_LINE_SIZE, 0);
		n++;
		aligned[n] = false;
		p[n] = kmalloc(1 + rng() % 120);
		ASSERT_NE(p[n], NULL);
		n++;
	}
	for (unsigned i = 0; i < n; i++) {
		uintptr_t lo, hi;

		if (!aligned[i])
			continue;
		lo = ALIGN_DOWN((uintptr_t)p[i], CACHE_LINE_SIZE);
		hi = ALIGN_UP((uintptr_t)p[i] + ksize(p[i]), CACHE_LINE_SIZE);
		for (unsigned j = 0; j < n; j++) {
			uintptr_t qlo = (uintptr_t)p[j];
			uintptr_t qhi = qlo + ksize(p[j]);

			if (j != i && qlo < hi && lo < qhi) {
				ktest_fail(ctx, __FILE__, __LINE__,
					   "%p shares a line with %p", p[i],
					   p[j]);
				goto out;
			}
		}
	}
out:
	for (unsigned i = 0; i < n; i++)
		kfree(p[i]);
	expect_all_returned(ctx);
}

KTEST(kmalloc, large_blocks)
{
	static const size_t sizes[] = { TOP_CLASS_SIZE + 1, 4096, 4097, 8192,
					100000, MiB(1), MiB(4) };
	static const unsigned orders[] = { 0, 0, 1, 1, 5, 8, 10 };
	void *p[ARRAY_SIZE(sizes)];
	uint64_t pages = 0;

	setup(HB_NO_BUDGET);
	for (unsigned i = 0; i < ARRAY_SIZE(sizes); i++) {
		p[i] = kmalloc(sizes[i]);
		ASSERT_NE(p[i], NULL);
		EXPECT_EQ((uintptr_t)p[i] % PAGE_SIZE, 0);
		EXPECT_EQ(ksize(p[i]), (size_t)PAGE_SIZE << orders[i]);
		fill(p[i], sizes[i], i);
		pages += 1ull << orders[i];
	}
	EXPECT_EQ(row(large_row()).in_use, ARRAY_SIZE(sizes));
	/* plus one slab of large-block records */
	EXPECT_EQ(hb_pages_live, pages + 1);
	EXPECT_EQ(kmalloc_backend_pages(), pages + 1);
	EXPECT_EQ(kmalloc_in_use_bytes(), pages * PAGE_SIZE);
	for (unsigned i = 0; i < ARRAY_SIZE(sizes); i++) {
		EXPECT_EQ(check(p[i], sizes[i], i), sizes[i]);
		kfree(p[i]);
	}
	/* Too big for any block: NULL, counted, nothing leaked. */
	EXPECT_EQ(kmalloc(MiB(4) + 1), NULL);
	EXPECT_EQ(kmalloc((size_t)-1), NULL);
	EXPECT_EQ(row(large_row()).failures, 2);
	expect_all_returned(ctx);
}

KTEST(kmalloc, kzalloc_zeroes)
{
	void *keep, *p;

	setup(HB_NO_BUDGET);
	keep = kmalloc(100); /* keeps the slab alive across the free */
	p = kmalloc(100);
	ASSERT_NE(p, NULL);
	memset(p, 0xff, 100);
	kfree(p);
	p = kzalloc(100);
	ASSERT_NE(p, NULL);
	for (unsigned i = 0; i < 100; i++)
		ASSERT_EQ(((uint8_t *)p)[i], 0);
	kfree(p);
	p = kzalloc(3 * PAGE_SIZE); /* the backend hands out junk pages */
	ASSERT_NE(p, NULL);
	for (unsigned i = 0; i < 3 * PAGE_SIZE; i++)
		ASSERT_EQ(((uint8_t *)p)[i], 0);
	kfree(p);
	p = kzalloc_aligned(70, CACHE_LINE_SIZE);
	ASSERT_NE(p, NULL);
	EXPECT_EQ((uintptr_t)p % CACHE_LINE_SIZE, 0);
	EXPECT_EQ(((uint8_t *)p)[69], 0);
	kfree(p);
	kfree(keep);
	expect_all_returned(ctx);
}

/* Many live objects of mixed sizes keep their contents. */
KTEST(kmalloc, fill_and_check_many)
{
	enum { N = 3000 };
	static void *p[N];
	static size_t sz[N];

	setup(HB_NO_BUDGET);
	rng_state = 0x1234567;
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned i = round; i < N; i += 1 + round) {
			sz[i] = rng() % 16 == 0 ? 1 + rng() % 20000
						: 1 + rng() % 2100;
			p[i] = kmalloc(sz[i]);
			ASSERT_NE(p[i], NULL);
			fill(p[i], sz[i], i + round);
		}
		for (unsigned i = 0; i < N; i++) {
			unsigned seed = round && i % 2 ? i + 1 : i;

			ASSERT_EQ(check(p[i], sz[i], seed), sz[i]);
		}
		/* Round 1 refills the odd slots freed here. */
		if (round == 0)
			for (unsigned i = 1; i < N; i += 2)
				kfree(p[i]);
	}
	for (unsigned i = 0; i < N; i++)
		kfree(p[i]);
	expect_all_returned(ctx);
}

/*
 * Random allocate/free against a shadow record: contents intact at free,
 * no overlap with any live object, exact counters at the end.
 */
KTEST(kmalloc, random_against_shadow)
{
	enum { SLOTS = 400, OPS = 40000 };
	static struct { void *p; size_t size; } sh[SLOTS];
	uint64_t allocs = 0, frees = 0;

	setup(HB_NO_BUDGET);
	rng_state = 0xfeedfacecafe;
	memset(sh, 0, sizeof(sh));
	for (unsigned op = 0; op < OPS; op++) {
		unsigned s = rng() % SLOTS;

		if (sh[s].p) {
			ASSERT_EQ(check(sh[s].p, sh[s].size, s), sh[s].size);
			kfree(sh[s].p);
			sh[s].p = NULL;
			frees++;
			continue;
		}
		switch (rng() % 8) {
		case 0:
			sh[s].size = 1 + rng() % (3 * PAGE_SIZE);
			sh[s].p = kmalloc(sh[s].size);
			break;
		case 1:
			sh[s].size = 1 + rng() % 300;
			sh[s].p = kmalloc_cache_aligned(sh[s].size);
			break;
		default:
			sh[s].size = 1 + rng() % 256;
			sh[s].p = kmalloc(sh[s].size);
			break;
		}
		ASSERT_NE(sh[s].p, NULL);
		allocs++;
		for (unsigned t = 0; t < SLOTS; t++) {
			uintptr_t a = (uintptr_t)sh[s].p;
			uintptr_t b = (uintptr_t)sh[t].p;

			if (t != s && sh[t].p && a < b + sh[t].size &&
			    b < a + sh[s].size)
				ASSERT_TRUE(!"overlapping live objects");
		}
		fill(sh[s].p, sh[s].size, s);
	}
	{
		uint64_t live_bytes = 0, sum_allocs = 0, sum_frees = 0;

		for (unsigned s = 0; s < SLOTS; s++)
			if (sh[s].p)
				live_bytes += ksize(sh[s].p);
		EXPECT_EQ(kmalloc_in_use_bytes(), live_bytes);
		for (unsigned s = 0; s < SLOTS; s++) {
			if (!sh[s].p)
				continue;
			EXPECT_EQ(check(sh[s].p, sh[s].size, s), sh[s].size);
			kfree(sh[s].p);
			frees++;
		}
		for (unsigned i = 0; i < kmalloc_stats_rows(); i++) {
			if (i == kmalloc_stats_rows() - 2)
				continue; /* internal record class */
			sum_allocs += row(i).allocs;
			sum_frees += row(i).frees;
		}
		EXPECT_EQ(sum_allocs, allocs);
		EXPECT_EQ(sum_frees, frees);
		EXPECT_EQ(allocs, frees);
	}
	kmalloc_stats_print();
	expect_all_returned(ctx);
}

/* The panic message names the pointer and the caller. */
#define SORT_OBJS 300
#define SORT_SIZE 256	/* 15 a slab: 20 slabs */
#define SORT_AFTER 150
#define SORT_NEW (-1)	/* an object from a slab made afterwards */

/*
 * Allocate SORT_OBJS objects, keep every third, free the rest in the
 * order given by shuffle_seed (0: as allocated), sort the partial lists,
 * and record where each of the next SORT_AFTER allocations lands: the
 * rank by address of its slab among the first objects' slabs, times
 * PAGE_SIZE, plus its offset in it (SORT_NEW: another slab). Ranks, not
 * addresses: the backend's pages differ between calls. Everything freed
 * at the end.
 */
static void sorted_after_kfrees(struct ktest_ctx *ctx, uint64_t shuffle_seed,
				int *reused)
{
	static void *obj[SORT_OBJS], *after[SORT_AFTER];
	static unsigned idx[SORT_OBJS];

	setup(HB_NO_BUDGET);
	for (unsigned i = 0; i < SORT_OBJS; i++) {
		obj[i] = kmalloc(SORT_SIZE);
		ASSERT_TRUE(obj[i] != NULL);
		idx[i] = i;
	}
	rng_state = shuffle_seed;
	for (unsigned i = SORT_OBJS - 1; shuffle_seed && i > 0; i--) {
		unsigned j = (unsigned)(rng() % (i + 1)), t = idx[i];

		idx[i] = idx[j];
		idx[j] = t;
	}
	for (unsigned i = 0; i < SORT_OBJS; i++)
		if (idx[i] % 3)
			kfree(obj[idx[i]]);
	kmalloc_sort_partial();
	for (unsigned i = 0; i < SORT_AFTER; i++) {
		uintptr_t base;
		int rank = 0;
		bool known = false;

		after[i] = kmalloc(SORT_SIZE);
		ASSERT_TRUE(after[i] != NULL);
		base = (uintptr_t)after[i] & ~(uintptr_t)(PAGE_SIZE - 1);
		for (unsigned k = 0; k < SORT_OBJS; k++) {
			uintptr_t b = (uintptr_t)obj[k] &
				      ~(uintptr_t)(PAGE_SIZE - 1);

			known |= b == base;
			/* obj[k] is the first object of its slab seen */
			if (b < base && (k == 0 || b != ((uintptr_t)obj[k - 1] &
					 ~(uintptr_t)(PAGE_SIZE - 1))))
				rank++;
		}
		reused[i] = known ? rank * (int)PAGE_SIZE +
					    (int)((uintptr_t)after[i] - base)
				  : SORT_NEW;
	}
	for (unsigned i = 0; i < SORT_AFTER; i++)
		kfree(after[i]);
	for (unsigned i = 0; i < SORT_OBJS; i += 3)
		kfree(obj[i]);
	expect_all_returned(ctx);
}

/* After kmalloc_sort_partial() where objects go depends on which are in
 * use, not on the order the others were freed in. */
KTEST(kmalloc, sorted_partial_lists_forget_the_free_order)
{
	static int plain[SORT_AFTER], shuffled[SORT_AFTER];

	sorted_after_kfrees(ctx, 0, plain);
	sorted_after_kfrees(ctx, 0xfeedfacecafebeefull, shuffled);
	for (unsigned i = 0; i < SORT_AFTER; i++)
		EXPECT_EQ(plain[i], shuffled[i]);
}

static bool msg_names(const void *ptr)
{
	char addr[32];

	/* The host shim formats panics with libc's printf. */
	snprintf(addr, sizeof(addr), "%p", ptr);
	return strstr(host_panic_msg, addr) && strstr(host_panic_msg, "from ");
}

KTEST(kmalloc, bad_frees_panic)
{
	void *keep, *p, *big;
	uint8_t *foreign;
	struct kmalloc_stats before;

	setup(HB_NO_BUDGET);
	kfree(NULL);
	EXPECT_EQ(row(0).frees, 0);

	keep = kmalloc(64);
	p = kmalloc(64);
	ASSERT_NE(p, NULL);
	kfree(p);
	EXPECT_TRUE(HOST_EXPECT_PANIC(kfree(p)));
	EXPECT_TRUE(strstr(host_panic_msg, "double free"));
	EXPECT_TRUE(msg_names(p));

	p = kmalloc(64);
	EXPECT_TRUE(HOST_EXPECT_PANIC(kfree((char *)p + 8)));
	EXPECT_TRUE(strstr(host_panic_msg, "inside"));
	EXPECT_TRUE(msg_names((char *)p + 8));
	EXPECT_TRUE(HOST_EXPECT_PANIC(kfree((char *)p + 1)));
	EXPECT_TRUE(strstr(host_panic_msg, "misaligned"));
	/* A pointer into the slab header. */
	EXPECT_TRUE(HOST_EXPECT_PANIC(
		kfree((void *)(ALIGN_DOWN((uintptr_t)p, PAGE_SIZE) + 16))));
	EXPECT_TRUE(strstr(host_panic_msg, "inside"));
	before = row(3);
	kfree(p); /* the allocator still works after those panics */
	EXPECT_EQ(row(3).frees, before.frees + 1);

	/* Memory kmalloc never handed out, even with a copied header. */
	foreign = aligned_alloc(PAGE_SIZE, 2 * PAGE_SIZE);
	ASSERT_NE(foreign, NULL);
	memset(foreign, 0, 2 * PAGE_SIZE);
	EXPECT_TRUE(HOST_EXPECT_PANIC(kfree(foreign + 64)));
	EXPECT_TRUE(strstr(host_panic_msg, "not from kmalloc"));
	EXPECT_TRUE(msg_names(foreign + 64));
	EXPECT_TRUE(HOST_EXPECT_PANIC(kfree(foreign)));
	EXPECT_TRUE(msg_names(foreign));
	memcpy(foreign, (void *)ALIGN_DOWN((uintptr_t)keep, PAGE_SIZE), 128);
	EXPECT_TRUE(HOST_EXPECT_PANIC(
		kfree(foreign + ((uintptr_t)keep % PAGE_SIZE))));
	EXPECT_TRUE(strstr(host_panic_msg, "not from kmalloc"));
	free(foreign);

	/* Large blocks: double free, interior pointers. */
	big = kmalloc(3 * PAGE_SIZE);
	ASSERT_NE(big, NULL);
	memset(big, 0, 3 * PAGE_SIZE);
	EXPECT_TRUE(HOST_EXPECT_PANIC(kfree((char *)big + PAGE_SIZE)));
	EXPECT_TRUE(msg_names((char *)big + PAGE_SIZE));
	EXPECT_TRUE(HOST_EXPECT_PANIC(kfree((char *)big + 64)));
	kfree(big);
	EXPECT_TRUE(HOST_EXPECT_PANIC(kfree(big)));
	EXPECT_TRUE(strstr(host_panic_msg, "no live large block"));

	/* A stale pointer into a slab already given back to the backend. */
	p = kmalloc(32);
	kfree(p);
	EXPECT_EQ(row(2).slabs, 0);
	EXPECT_TRUE(HOST_EXPECT_PANIC(kfree(p)));
	EXPECT_TRUE(strstr(host_panic_msg, "not from kmalloc"));

	kfree(keep);
	expect_all_returned(ctx);
}

KTEST(kmalloc, use_after_free_caught)
{
	uint8_t *keep, *p, *q;

	setup(HB_NO_BUDGET);
	keep = kmalloc(128);
	p = kmalloc(128);
	ASSERT_NE(p, NULL);
	kfree(p);
	for (unsigned i = 0; i < 128; i++)
		ASSERT_EQ(p[i], POISON_BYTE);
	p[77] = 0; /* the bug: a write through a dangling pointer */
	EXPECT_TRUE(HOST_EXPECT_PANIC(q = kmalloc(128)));
	EXPECT_TRUE(strstr(host_panic_msg, "written after kfree"));
	EXPECT_TRUE(strstr(host_panic_msg, "offset 72"));
	/* The object was handed out before the check panicked: free it. */
	kfree(p);
	q = kmalloc(128);
	EXPECT_EQ(q, p); /* lowest free slot is reused first */
	kfree(q);
	kfree(keep);
	expect_all_returned(ctx);
}

KTEST(kmalloc, backend_exhaustion_returns_null)
{
	enum { BUDGET = 3 };
	static void *objs[BUDGET * 62 + 1]; /* 62: per slab of kmalloc-64 */
	unsigned n = 0;
	void *p;

	setup(BUDGET);
	while (n < ARRAY_SIZE(objs) && (p = kmalloc(64)))
		objs[n++] = p;
	EXPECT_EQ(n, BUDGET * row(3).per_slab);
	EXPECT_EQ(row(3).failures, 1);
	EXPECT_EQ(hb_pages_live, BUDGET);
	/* No page left for the large-block record either. */
	EXPECT_EQ(kmalloc(2 * PAGE_SIZE), NULL);
	EXPECT_EQ(row(large_row()).failures, 1);
	EXPECT_EQ(kmalloc(8), NULL);
	EXPECT_EQ(row(0).failures, 1);
	/* Room for the record but not the block: the record is undone. */
	for (unsigned i = 0; i < row(3).per_slab; i++)
		kfree(objs[--n]); /* the newest slab, now empty */
	EXPECT_EQ(hb_pages_live, BUDGET - 1);
	EXPECT_EQ(kmalloc(PAGE_SIZE), NULL);
	EXPECT_EQ(row(large_row()).failures, 2);
	EXPECT_EQ(row(kmalloc_stats_rows() - 2).in_use, 0);
	EXPECT_EQ(hb_pages_live, BUDGET - 1);
	while (n)
		kfree(objs[--n]);
	expect_all_returned(ctx);
	/* With the budget free again, allocation works. */
	p = kmalloc(PAGE_SIZE);
	EXPECT_NE(p, NULL);
	kfree(p);
	expect_all_returned(ctx);
}

/* ---- per-CPU caches ----------------------------------------------------- */

#define FAKE_CPUS 4
#define KMALLOC_64_ROW 3

/* The test thread plays each CPU in turn: it sets its own CPU number
 * (lib/this_cpu.h), which the hook reports. */
static void setup_percpu(void)
{
	setup(HB_NO_BUDGET);
	host_set_thread_cpu(0);
	kmalloc_enable_cpu_caches(this_cpu_num, FAKE_CPUS);
}

/* Stands in for the kernel running fn as a work item on each CPU. */
static void run_on_each_fake_cpu(void (*fn)(void))
{
	unsigned saved = this_cpu_num();

	for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
		host_set_thread_cpu(cpu);
		fn();
	}
	host_set_thread_cpu(saved);
}

/* After kmalloc_drain_all(): like expect_all_returned(), except that
 * the per-CPU cache pages stay (one per CPU that used kmalloc). */
static void expect_drained(struct ktest_ctx *ctx, uint64_t cpu_pages)
{
	for (unsigned i = 0; i < kmalloc_stats_rows(); i++) {
		struct kmalloc_stats st = row(i);

		EXPECT_EQ(st.in_use, 0);
		EXPECT_EQ(st.cached, 0);
		EXPECT_EQ(st.pages, 0);
		EXPECT_EQ(st.allocs, st.frees);
	}
	EXPECT_EQ(kmalloc_in_use_bytes(), 0);
	EXPECT_EQ(kmalloc_percpu_pages(), cpu_pages);
	EXPECT_EQ(kmalloc_backend_pages(), cpu_pages);
	EXPECT_EQ(hb_pages_live, cpu_pages);
	EXPECT_EQ(hb_alloc_calls - hb_free_calls, cpu_pages);
	EXPECT_EQ(hb_errors, 0);
}

/* alloc, free, alloc: the second alloc is the first object, from the
 * cache, with no lock; in-use counts only what callers hold. */
KTEST(kmalloc, percpu_cache_hit_path)
{
	struct kmalloc_stats st;
	uint8_t *p, *q;

	setup_percpu();
	p = kmalloc(64);
	ASSERT_NE(p, NULL);
	st = row(KMALLOC_64_ROW);
	EXPECT_EQ(st.cache_refills, 1);
	EXPECT_EQ(st.cache_hits, 0);
	EXPECT_EQ(st.in_use, 1);
	EXPECT_GT(st.cached, 0); /* the rest of the refill batch */
	EXPECT_EQ(kmalloc_in_use_bytes(), 64);
	for (unsigned i = 0; i < 64; i++)
		ASSERT_EQ(p[i], POISON_BYTE); /* the mark is wiped */
	kfree(p);
	EXPECT_EQ(row(KMALLOC_64_ROW).in_use, 0);
	EXPECT_EQ(row(KMALLOC_64_ROW).cached, st.cached + 1);
	EXPECT_EQ(kmalloc_in_use_bytes(), 0);
	/* The slab stays while its objects sit in the cache. */
	EXPECT_EQ(row(KMALLOC_64_ROW).pages, 1);
	q = kmalloc(64);
	EXPECT_EQ(q, p);
	st = row(KMALLOC_64_ROW);
	EXPECT_EQ(st.cache_hits, 1);
	EXPECT_EQ(st.cache_refills, 1);
	EXPECT_EQ(st.allocs, 2);
	EXPECT_EQ(st.frees, 1);
	kfree(q);
	/* A write after kfree() to a cached object is still caught. */
	q[40] = 1;
	EXPECT_TRUE(HOST_EXPECT_PANIC(p = kmalloc(64)));
	EXPECT_TRUE(strstr(host_panic_msg, "written after kfree"));
	EXPECT_TRUE(strstr(host_panic_msg, "offset 40"));
	memset(q, POISON_BYTE, 64);
	kfree(q); /* handed out before the check panicked */
	kmalloc_drain_cpu();
	EXPECT_EQ(row(KMALLOC_64_ROW).cache_flushes, 1);
	expect_drained(ctx, 1);
}

/* Allocate on one CPU, free on others, overflow the caches (flushes),
 * then drain every CPU: every slab page goes back. */
KTEST(kmalloc, percpu_drain_returns_every_page)
{
	enum { N = 2000 };
	static void *p[N];
	static size_t n[N]; /* bytes filled with the pattern */
	uint64_t flushes = 0, refills = 0;

	setup_percpu();
	rng_state = 0xabcdef12345;
	for (unsigned i = 0; i < N; i++) {
		size_t size = rng() % 32 ? 1 + rng() % 2000
					 : 1 + rng() % (3 * PAGE_SIZE);

		host_set_thread_cpu(i % FAKE_CPUS);
		p[i] = kmalloc(size);
		ASSERT_NE(p[i], NULL);
		n[i] = MIN(size, 64);
		fill(p[i], n[i], i);
	}
	for (unsigned i = 0; i < N; i++) {
		/* mostly another CPU */
		host_set_thread_cpu((i / 7) % FAKE_CPUS);
		EXPECT_EQ(check(p[i], n[i], i), n[i]);
		kfree(p[i]);
	}
	EXPECT_EQ(kmalloc_in_use_bytes(), 0);
	EXPECT_GT(kmalloc_backend_pages(), FAKE_CPUS); /* cached slabs */
	for (unsigned i = 0; i + 2 < kmalloc_stats_rows(); i++) {
		flushes += row(i).cache_flushes;
		refills += row(i).cache_refills;
	}
	EXPECT_GT(flushes, 0);
	EXPECT_GT(refills, 0);
	kmalloc_drain_all(run_on_each_fake_cpu);
	expect_drained(ctx, FAKE_CPUS);
	/* Draining again finds nothing to do. */
	kmalloc_drain_all(run_on_each_fake_cpu);
	expect_drained(ctx, FAKE_CPUS);
}

KTEST(kmalloc, percpu_double_free_panics)
{
	void *keep, *p;

	setup_percpu();
	keep = kmalloc(128);
	p = kmalloc(128);
	ASSERT_NE(p, NULL);
	kfree(p); /* now in CPU 0's cache */
	EXPECT_TRUE(HOST_EXPECT_PANIC(kfree(p)));
	EXPECT_TRUE(strstr(host_panic_msg, "double free"));
	EXPECT_TRUE(msg_names(p));
	host_set_thread_cpu(1); /* ... also from another CPU */
	EXPECT_TRUE(HOST_EXPECT_PANIC(kfree(p)));
	EXPECT_TRUE(strstr(host_panic_msg, "double free"));
	/* Back in its slab (still alive through keep's neighbours). */
	host_set_thread_cpu(0);
	kmalloc_drain_cpu();
	EXPECT_EQ(row(4).cached, 0);
	EXPECT_TRUE(HOST_EXPECT_PANIC(kfree(p)));
	EXPECT_TRUE(strstr(host_panic_msg, "double free"));
	EXPECT_EQ(row(4).in_use, 1);
	kfree(keep);
	kmalloc_drain_cpu();
	expect_drained(ctx, 2); /* CPU 1 got its cache page on that kfree */
}

/* A CPU number past the hook's range takes the locked path. */
KTEST(kmalloc, percpu_out_of_range_cpu_is_locked)
{
	void *p;

	setup_percpu();
	host_set_thread_cpu(FAKE_CPUS);
	p = kmalloc(64);
	ASSERT_NE(p, NULL);
	EXPECT_EQ(row(KMALLOC_64_ROW).cache_refills, 0);
	EXPECT_EQ(row(KMALLOC_64_ROW).cached, 0);
	kfree(p);
	expect_drained(ctx, 0);
}
