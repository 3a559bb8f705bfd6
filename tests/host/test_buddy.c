/*
 * Host tests for mm/buddy.c, fed through mm/fwmap.c the way the kernel
 * feeds it: synthetic firmware maps with holes, odd-aligned ranges, bad
 * RAM and memory above 4 GiB (and pfns above 2^32). Every allocation is
 * checked against a shadow record of the frames in use; leaks show as
 * free counts that do not return to their start values.
 */
// HOST_SRCS: mm/buddy.c mm/fwmap.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/ktest.h"
#include "lib/prng.h"
#include "mm/buddy.h"
#include "mm/fwmap.h"
#include "mm/page.h"
#include "tests/host/host_shim.h"

#define A FWMAP_AVAILABLE
#define R FWMAP_RESERVED

#define FIX_MAP_CAP 32
#define RANDOM_OPS 20000
#define RANDOM_MAX_LIVE 2048
#define RANDOM_CHECK_EVERY 1000
/* Percentage of random operations that allocate (when allocations live). */
#define RANDOM_ALLOC_PCT 55

/* A buddy allocator over one window of frames plus its shadow records. */
struct fix {
	struct buddy b;
	struct page *pages;
	uint64_t first_pfn, npages;
	uint8_t *usable; /* per frame: in a usable range of the map */
	uint8_t *used;	 /* per frame: handed out and not yet freed */
	uint64_t usable_pages;
};

/* PC-like: low memory with an EBDA, kernel at 1 MiB, holes, bad RAM. */
static const struct fwmap_entry map_pc[] = {
	{ 0x0, 0x9fc00, A },
	{ 0x9fc00, 0x400, R },
	{ 0xf0000, 0x10000, R },
	{ 0x100000, 0xf00000, A },
	{ 0x1003000, 0x7ff123, A },	/* odd end, hole before it */
	{ 0x1900000, 0x700000, A },
	{ 0x1a00800, 0x1000, FWMAP_BAD }, /* unaligned: costs 2 frames */
	{ 0x2000000, 0xffd000, A },	/* adjacent: merged with the above */
};
#define MAP_PC_FIRST_PFN 0
#define MAP_PC_NPAGES 0x3000

/* Straddling 4 GiB: a hole below it, bad RAM above it. */
static const struct fwmap_entry map_4g[] = {
	{ 0xff000000ull, 0xc00000, A },
	{ 0xffc00000ull, 0x400000, R },
	{ 0x100000000ull, 0x1000000, A },
	{ 0x100005000ull, 0x3000, FWMAP_BAD },
	{ 0x100400000ull, 0x1234, A }, /* duplicate, overlap: reported */
};
#define MAP_4G_FIRST_PFN 0xff000
#define MAP_4G_NPAGES 0x2000

/* Frame numbers beyond 32 bits (far above any real RAM), odd start. */
#define MAP_HIGH_FIRST_PFN ((1ull << 33) + 5)
#define MAP_HIGH_NPAGES 3001
static const struct fwmap_entry map_high[] = {
	{ PFN_PHYS(MAP_HIGH_FIRST_PFN), PFN_PHYS(MAP_HIGH_NPAGES), A },
};

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* Fixed seeds, reproducible on every host. */
	return prng_next(&rng_state);
}

static void fix_setup(struct fix *f, const struct fwmap_entry *raw,
		      size_t nraw, uint64_t first_pfn, uint64_t npages,
		      unsigned int max_order)
{
	struct fwmap_entry storage[FIX_MAP_CAP];
	struct fwmap map;
	uint64_t base, end;
	size_t it = 0;

	memset(f, 0, sizeof(*f));
	f->first_pfn = first_pfn;
	f->npages = npages;
	f->pages = calloc(npages, sizeof(*f->pages));
	f->usable = calloc(npages, 1);
	f->used = calloc(npages, 1);
	kassert(f->pages && f->usable && f->used);

	fwmap_init(&map, storage, ARRAY_SIZE(storage));
	map.quiet = true;
	fwmap_sanitize(&map, raw, nraw);
	buddy_init(&f->b, f->pages, first_pfn, npages);
	if (max_order < BUDDY_MAX_ORDER)
		buddy_limit_order(&f->b, max_order);
	while (fwmap_next_usable(&map, &it, &base, &end)) {
		uint64_t s = MAX(PHYS_PFN(base), first_pfn);
		uint64_t e = MIN(PHYS_PFN(end), first_pfn + npages);

		if (s >= e)
			continue;
		buddy_add_range(&f->b, s, e);
		for (uint64_t p = s; p < e; p++)
			f->usable[p - first_pfn] = 1;
		f->usable_pages += e - s;
	}
}

static void fix_teardown(struct fix *f)
{
	free(f->pages);
	free(f->usable);
	free(f->used);
}

static void snapshot(const struct fix *f, uint64_t *nr_free)
{
	for (unsigned int o = 0; o < BUDDY_NR_ORDERS; o++)
		nr_free[o] = f->b.stats.nr_free[o];
}

/*
 * Record an allocation in the shadow: the block must be aligned, inside
 * usable RAM and overlap nothing handed out. Returns false on violation.
 */
static bool shadow_take(struct ktest_ctx *ctx, struct fix *f, uint64_t pfn,
			unsigned int order)
{
	uint64_t n = 1ull << order;

	EXPECT_EQ(pfn & (n - 1), 0);
	EXPECT_GE(pfn, f->first_pfn);
	EXPECT_LE(pfn + n, f->first_pfn + f->npages);
	if (ctx->failed)
		return false;
	for (uint64_t i = pfn - f->first_pfn; i < pfn - f->first_pfn + n;
	     i++) {
		if (!f->usable[i] || f->used[i]) {
			ktest_fail(ctx, __FILE__, __LINE__,
				   "pfn %#llx order %u: frame %#llx %s",
				   (unsigned long long)pfn, order,
				   (unsigned long long)(f->first_pfn + i),
				   f->used[i] ? "already allocated"
					      : "not usable RAM");
			return false;
		}
		f->used[i] = 1;
	}
	return true;
}

static void shadow_give(struct fix *f, uint64_t pfn, unsigned int order)
{
	memset(&f->used[pfn - f->first_pfn], 0, 1ull << order);
}

/* The map's usable frames all reach the allocator, and nothing else. */
static void check_fresh(struct ktest_ctx *ctx, struct fix *f,
			uint64_t expect_pages)
{
	EXPECT_EQ(f->usable_pages, expect_pages);
	EXPECT_EQ(f->b.stats.managed_pages, expect_pages);
	EXPECT_EQ(f->b.stats.free_pages, expect_pages);
	EXPECT_EQ(buddy_check(&f->b), 0);
}

KTEST(buddy, init_from_fwmap)
{
	struct fix f;

	fix_setup(&f, map_pc, ARRAY_SIZE(map_pc), MAP_PC_FIRST_PFN,
		  MAP_PC_NPAGES, BUDDY_MAX_ORDER);
	/* 0x9f + 0xf00 + 0x7ff + (0x16fd - 2 bad) frames. */
	check_fresh(ctx, &f, 0x9f + 0xf00 + 0x7ff + 0x16fd - 2);
	EXPECT_EQ(f.b.stats.allocs, 0);
	buddy_dump(&f.b);
	fix_teardown(&f);

	fix_setup(&f, map_4g, ARRAY_SIZE(map_4g), MAP_4G_FIRST_PFN,
		  MAP_4G_NPAGES, BUDDY_MAX_ORDER);
	check_fresh(ctx, &f, 0xc00 + 0x1000 - 3);
	fix_teardown(&f);

	fix_setup(&f, map_high, ARRAY_SIZE(map_high), MAP_HIGH_FIRST_PFN,
		  MAP_HIGH_NPAGES, BUDDY_MAX_ORDER);
	check_fresh(ctx, &f, MAP_HIGH_NPAGES);
	fix_teardown(&f);
}

/* Splits and merges are counted, and a lone page comes from the smallest
 * block that fits. */
KTEST(buddy, split_and_merge_counters)
{
	struct fix f;
	struct fwmap_entry raw[] = { { PFN_PHYS(64), PFN_PHYS(8), A } };
	uint64_t pfn;

	fix_setup(&f, raw, ARRAY_SIZE(raw), 64, 8, BUDDY_MAX_ORDER);
	ASSERT_EQ(f.b.stats.nr_free[3], 1);
	pfn = buddy_alloc(&f.b, 0, PAGE_OWNER_TEST);
	EXPECT_EQ(pfn, 64);
	EXPECT_EQ(f.b.stats.splits, 3);
	EXPECT_EQ(f.b.stats.nr_free[0], 1);
	EXPECT_EQ(f.b.stats.nr_free[1], 1);
	EXPECT_EQ(f.b.stats.nr_free[2], 1);
	EXPECT_EQ(f.b.stats.nr_free[3], 0);
	EXPECT_EQ(f.b.stats.free_pages, 7);
	EXPECT_EQ(f.pages[0].owner, PAGE_OWNER_TEST);
	EXPECT_EQ(page_count(&f.pages[0]), 1);
	EXPECT_EQ(buddy_check(&f.b), 0);
	buddy_free(&f.b, pfn, 0);
	EXPECT_EQ(f.b.stats.merges, 3);
	EXPECT_EQ(f.b.stats.nr_free[3], 1);
	EXPECT_EQ(f.b.stats.free_pages, 8);
	EXPECT_EQ(f.b.stats.allocs, 1);
	EXPECT_EQ(f.b.stats.frees, 1);
	EXPECT_EQ(buddy_check(&f.b), 0);
	fix_teardown(&f);
}

struct alloc_rec {
	uint64_t pfn;
	unsigned int order;
};

/*
 * Allocate everything, largest orders first, down to single frames, until
 * the allocator says no; then free it all in a shuffled order and check
 * the free lists are exactly as before, order by order.
 */
static void exhaust_and_refill(struct ktest_ctx *ctx, struct fix *f)
{
	uint64_t before[BUDDY_NR_ORDERS], free0 = f->b.stats.free_pages;
	struct alloc_rec *recs = calloc(f->npages, sizeof(*recs));
	size_t n = 0;

	kassert(recs);
	snapshot(f, before);
	for (int o = (int)f->b.max_order; o >= 0; o--) {
		uint64_t fails = f->b.stats.failures, pfn;

		while ((pfn = buddy_alloc(&f->b, (unsigned int)o,
					  PAGE_OWNER_TEST)) != BUDDY_NO_PFN) {
			if (!shadow_take(ctx, f, pfn, (unsigned int)o))
				goto out;
			recs[n++] = (struct alloc_rec){ pfn, (unsigned int)o };
		}
		EXPECT_EQ(f->b.stats.failures, fails + 1);
		EXPECT_EQ(f->b.stats.nr_free[o], 0);
	}
	EXPECT_EQ(f->b.stats.free_pages, 0);
	EXPECT_EQ(buddy_check(&f->b), 0);
	/* Exhausted: every order fails at once, repeatedly. */
	for (unsigned int o = 0; o <= f->b.max_order; o++)
		EXPECT_EQ(buddy_alloc(&f->b, o, PAGE_OWNER_TEST), BUDDY_NO_PFN);
	for (size_t i = n; i > 1; i--) {
		size_t j = rng() % i;
		struct alloc_rec t = recs[i - 1];

		recs[i - 1] = recs[j];
		recs[j] = t;
	}
	for (size_t i = 0; i < n; i++) {
		buddy_free(&f->b, recs[i].pfn, recs[i].order);
		shadow_give(f, recs[i].pfn, recs[i].order);
	}
	EXPECT_EQ(f->b.stats.free_pages, free0);
	for (unsigned int o = 0; o < BUDDY_NR_ORDERS; o++)
		EXPECT_EQ(f->b.stats.nr_free[o], before[o]);
	EXPECT_EQ(buddy_check(&f->b), 0);
out:
	free(recs);
}

KTEST(buddy, exhaust_then_free_all)
{
	struct fix f;

	rng_state = 0x1234567887654321ull;
	fix_setup(&f, map_pc, ARRAY_SIZE(map_pc), MAP_PC_FIRST_PFN,
		  MAP_PC_NPAGES, BUDDY_MAX_ORDER);
	exhaust_and_refill(ctx, &f);
	fix_teardown(&f);

	fix_setup(&f, map_4g, ARRAY_SIZE(map_4g), MAP_4G_FIRST_PFN,
		  MAP_4G_NPAGES, BUDDY_MAX_ORDER);
	exhaust_and_refill(ctx, &f);
	fix_teardown(&f);

	fix_setup(&f, map_high, ARRAY_SIZE(map_high), MAP_HIGH_FIRST_PFN,
		  MAP_HIGH_NPAGES, BUDDY_MAX_ORDER);
	exhaust_and_refill(ctx, &f);
	fix_teardown(&f);
}

#define SORT_BLOCKS 600
#define SORT_MAX_ORDER 3
#define SORT_AFTER 400

/*
 * Allocate SORT_BLOCKS blocks, keep every third, free the rest in the
 * order given by shuffle_seed (0: as allocated), sort the free lists and
 * record the next SORT_AFTER allocations in next[].
 */
static void sorted_after_frees(struct ktest_ctx *ctx, uint64_t shuffle_seed,
			       uint64_t *next)
{
	static uint64_t pfn[SORT_BLOCKS];
	static unsigned int order[SORT_BLOCKS], idx[SORT_BLOCKS];
	struct fix f;

	fix_setup(&f, map_pc, ARRAY_SIZE(map_pc), MAP_PC_FIRST_PFN,
		  MAP_PC_NPAGES, BUDDY_MAX_ORDER);
	rng_state = 0x5eed5eed5eed5eedull;
	for (unsigned i = 0; i < SORT_BLOCKS; i++) {
		order[i] = (unsigned int)(rng() % (SORT_MAX_ORDER + 1));
		pfn[i] = buddy_alloc(&f.b, order[i], PAGE_OWNER_KERNEL);
		ASSERT_NE(pfn[i], BUDDY_NO_PFN);
		idx[i] = i;
	}
	rng_state = shuffle_seed;
	for (unsigned i = SORT_BLOCKS - 1; shuffle_seed && i > 0; i--) {
		unsigned j = (unsigned)(rng() % (i + 1)), t = idx[i];

		idx[i] = idx[j];
		idx[j] = t;
	}
	for (unsigned i = 0; i < SORT_BLOCKS; i++)
		if (idx[i] % 3)
			buddy_free(&f.b, pfn[idx[i]], order[idx[i]]);
	buddy_sort_free_lists(&f.b);
	EXPECT_EQ(buddy_check(&f.b), 0);
	for (unsigned int o = 0; o <= f.b.max_order; o++)
		for (struct page *p = f.b.free_list[o]; p && p->list.next;
		     p = p->list.next)
			EXPECT_LT(p, p->list.next);
	rng_state = 0xa11ca11ca11ca11cull;
	for (unsigned i = 0; i < SORT_AFTER; i++)
		next[i] = buddy_alloc(&f.b, (unsigned int)(rng() %
					    (SORT_MAX_ORDER + 1)),
				      PAGE_OWNER_KERNEL);
	fix_teardown(&f);
}

/* After buddy_sort_free_lists() the allocator's choices depend on what is
 * free, not on the order it was freed in. */
KTEST(buddy, sorted_lists_forget_the_free_order)
{
	static uint64_t plain[SORT_AFTER], shuffled[SORT_AFTER];

	sorted_after_frees(ctx, 0, plain);
	sorted_after_frees(ctx, 0x0123456789abcdefull, shuffled);
	for (unsigned i = 0; i < SORT_AFTER; i++)
		EXPECT_EQ(plain[i], shuffled[i]);
}

/* Exhaustion by single frames only: every usable frame comes out once. */
KTEST(buddy, exhaust_order0)
{
	struct fix f;
	uint64_t n = 0, pfn;

	fix_setup(&f, map_4g, ARRAY_SIZE(map_4g), MAP_4G_FIRST_PFN,
		  MAP_4G_NPAGES, BUDDY_MAX_ORDER);
	while ((pfn = buddy_alloc(&f.b, 0, PAGE_OWNER_TEST)) != BUDDY_NO_PFN) {
		if (!shadow_take(ctx, &f, pfn, 0))
			break;
		n++;
	}
	EXPECT_EQ(n, f.usable_pages);
	EXPECT_EQ(f.b.stats.failures, 1);
	for (uint64_t i = 0; i < f.npages; i++)
		if (f.used[i])
			buddy_free(&f.b, f.first_pfn + i, 0);
	EXPECT_EQ(f.b.stats.free_pages, f.usable_pages);
	EXPECT_EQ(buddy_check(&f.b), 0);
	fix_teardown(&f);
}

/*
 * Random allocations and frees of mixed orders against the shadow record;
 * the invariants are checked every RANDOM_CHECK_EVERY operations, and
 * freeing what is left must restore the start state exactly.
 */
static void random_ops(struct ktest_ctx *ctx, struct fix *f, uint64_t seed)
{
	uint64_t before[BUDDY_NR_ORDERS], free0 = f->b.stats.free_pages;
	struct alloc_rec live[RANDOM_MAX_LIVE];
	size_t nlive = 0;
	uint64_t live_pages = 0, ok_allocs = 0, fails = 0;
	uint64_t fails0 = f->b.stats.failures;

	rng_state = seed;
	snapshot(f, before);
	for (unsigned int op = 0; op < RANDOM_OPS; op++) {
		bool alloc = nlive == 0 || (nlive < RANDOM_MAX_LIVE &&
					    rng() % 100 < RANDOM_ALLOC_PCT);

		if (alloc) {
			/* Geometric: order 0 half the time, 1 a quarter... */
			unsigned int o = (unsigned int)__builtin_ctzll(
				rng() | (1ull << f->b.max_order));
			uint64_t pfn = buddy_alloc(&f->b, o, PAGE_OWNER_TEST);

			if (pfn == BUDDY_NO_PFN) {
				fails++;
				continue;
			}
			if (!shadow_take(ctx, f, pfn, o))
				return;
			live[nlive++] = (struct alloc_rec){ pfn, o };
			live_pages += 1ull << o;
			ok_allocs++;
		} else {
			size_t i = rng() % nlive;

			buddy_free(&f->b, live[i].pfn, live[i].order);
			shadow_give(f, live[i].pfn, live[i].order);
			live_pages -= 1ull << live[i].order;
			live[i] = live[--nlive];
		}
		ASSERT_EQ(f->b.stats.free_pages + live_pages,
			  f->b.stats.managed_pages);
		if (op % RANDOM_CHECK_EVERY == 0)
			ASSERT_EQ(buddy_check(&f->b), 0);
	}
	EXPECT_EQ(f->b.stats.failures - fails0, fails);
	EXPECT_GT(ok_allocs, RANDOM_OPS / 4);
	ktest_diag("%llu allocations, %llu failures, %zu live at the end",
		   (unsigned long long)ok_allocs, (unsigned long long)fails,
		   nlive);
	while (nlive) {
		nlive--;
		buddy_free(&f->b, live[nlive].pfn, live[nlive].order);
		shadow_give(f, live[nlive].pfn, live[nlive].order);
	}
	EXPECT_EQ(f->b.stats.free_pages, free0);
	for (unsigned int o = 0; o < BUDDY_NR_ORDERS; o++)
		EXPECT_EQ(f->b.stats.nr_free[o], before[o]);
	EXPECT_EQ(buddy_check(&f->b), 0);
}

KTEST(buddy, random_ops_shadow)
{
	struct fix f;

	fix_setup(&f, map_pc, ARRAY_SIZE(map_pc), MAP_PC_FIRST_PFN,
		  MAP_PC_NPAGES, BUDDY_MAX_ORDER);
	random_ops(ctx, &f, 0xdeadbeefcafef00dull);
	fix_teardown(&f);

	fix_setup(&f, map_4g, ARRAY_SIZE(map_4g), MAP_4G_FIRST_PFN,
		  MAP_4G_NPAGES, BUDDY_MAX_ORDER);
	random_ops(ctx, &f, 0x0123456789abcdefull);
	fix_teardown(&f);

	fix_setup(&f, map_high, ARRAY_SIZE(map_high), MAP_HIGH_FIRST_PFN,
		  MAP_HIGH_NPAGES, BUDDY_MAX_ORDER);
	random_ops(ctx, &f, 0x5555aaaa5555aaaaull);
	fix_teardown(&f);
}

/* A small maximum order: more blocks, more merges stopped at the cap, and
 * a small window so the allocator runs dry often. */
#define SMALL_MAX_ORDER 2
#define SMALL_NPAGES 203

KTEST(buddy, small_max_order_stress)
{
	struct fix f;
	struct fwmap_entry raw[] = {
		{ PFN_PHYS(3), PFN_PHYS(SMALL_NPAGES - 3), A },
		{ PFN_PHYS(50), PFN_PHYS(7), R },
	};

	fix_setup(&f, raw, ARRAY_SIZE(raw), 0, SMALL_NPAGES, SMALL_MAX_ORDER);
	EXPECT_EQ(f.b.max_order, SMALL_MAX_ORDER);
	check_fresh(ctx, &f, SMALL_NPAGES - 3 - 7);
	for (unsigned int o = SMALL_MAX_ORDER + 1; o < BUDDY_NR_ORDERS; o++)
		EXPECT_EQ(f.b.stats.nr_free[o], 0);
	EXPECT_EQ(buddy_alloc(&f.b, SMALL_MAX_ORDER + 1, PAGE_OWNER_TEST),
		  BUDDY_NO_PFN);
	random_ops(ctx, &f, 42);
	exhaust_and_refill(ctx, &f);
	fix_teardown(&f);
}

/* The "caller %p" in a bad-free panic must point into the function that
 * called buddy_free(): here, within this many bytes of the test's start. */
#define CALLER_SLACK 0x40000

static bool caller_is(const void *fn)
{
	const char *s = strstr(host_panic_msg, "caller ");
	uintptr_t addr, start = (uintptr_t)fn;

	if (!s)
		return false;
	addr = (uintptr_t)strtoull(s + strlen("caller "), NULL, 16);
	return addr > start && addr < start + CALLER_SLACK;
}

/* The message names the frame; with the "caller" check, that is the
 * report a student needs. */
static bool msg_has(const char *what)
{
	return strstr(host_panic_msg, what) != NULL;
}

KTEST(buddy, bad_frees_panic)
{
	const void *self = (const void *)ktest_fn_buddy_bad_frees_panic;
	struct fix f;
	uint64_t p0, p2, p3, inner;

	fix_setup(&f, map_pc, ARRAY_SIZE(map_pc), MAP_PC_FIRST_PFN,
		  MAP_PC_NPAGES, BUDDY_MAX_ORDER);
	p2 = buddy_alloc(&f.b, 2, PAGE_OWNER_TEST);
	p0 = buddy_alloc(&f.b, 0, PAGE_OWNER_TEST);
	p3 = buddy_alloc(&f.b, 3, PAGE_OWNER_TEST);
	ASSERT_NE(p0, BUDDY_NO_PFN);
	ASSERT_NE(p2, BUDDY_NO_PFN);
	ASSERT_NE(p3, BUDDY_NO_PFN);

	/* Unaligned for the order. */
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, p2 + 1, 2)));
	EXPECT_TRUE(msg_has("not aligned"));
	EXPECT_TRUE(caller_is(self));
	/* Wrong order, larger and smaller. */
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, p3, 2)));
	EXPECT_TRUE(msg_has("wrong order, allocated with order 3"));
	EXPECT_TRUE(caller_is(self));
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, p2, 0)));
	EXPECT_TRUE(msg_has("wrong order"));
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, p3, BUDDY_MAX_ORDER)));
	/* A frame inside an allocation is not its start. */
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, p3 + 1, 0)));
	EXPECT_TRUE(msg_has("not the start"));
	/* Outside the page array, in a hole, in bad RAM, order too big. */
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, MAP_PC_NPAGES, 0)));
	EXPECT_TRUE(msg_has("outside managed RAM"));
	EXPECT_TRUE(caller_is(self));
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, 0x1001, 0)));
	EXPECT_TRUE(msg_has("outside managed RAM"));
	EXPECT_TRUE(msg_has("0x1001 (phys 0x1001000)"));
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, 0x1a00, 0)));
	EXPECT_TRUE(msg_has("outside managed RAM"));
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, p0,
						 BUDDY_MAX_ORDER + 1)));
	EXPECT_TRUE(msg_has("order above"));
	/* Double free: straight away, and after the block merged away. */
	buddy_free(&f.b, p0, 0);
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, p0, 0)));
	EXPECT_TRUE(msg_has("double free"));
	EXPECT_TRUE(caller_is(self));
	buddy_free(&f.b, p2, 2);
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, p2, 2)));
	EXPECT_TRUE(msg_has("double free"));
	/* A never-allocated free frame in the middle of a big free block. */
	ASSERT_TRUE(f.b.free_list[BUDDY_MAX_ORDER] != NULL);
	inner = f.first_pfn + (uint64_t)(f.b.free_list[BUDDY_MAX_ORDER] -
					 f.pages) + 1;
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, inner, 0)));
	EXPECT_TRUE(msg_has("double free"));

	/* None of this disturbed the allocator. */
	EXPECT_EQ(f.b.stats.frees, 2);
	EXPECT_EQ(buddy_check(&f.b), 0);
	buddy_free(&f.b, p3, 3);
	EXPECT_EQ(f.b.stats.free_pages, f.usable_pages);
	fix_teardown(&f);
}

/* A double free is caught even when the frame has become the tail of a
 * larger free block by merging. */
KTEST(buddy, double_free_after_merge)
{
	struct fix f;
	struct fwmap_entry raw[] = { { PFN_PHYS(64), PFN_PHYS(8), A } };
	uint64_t a, b;

	fix_setup(&f, raw, ARRAY_SIZE(raw), 64, 8, BUDDY_MAX_ORDER);
	a = buddy_alloc(&f.b, 0, PAGE_OWNER_TEST);
	b = buddy_alloc(&f.b, 0, PAGE_OWNER_TEST);
	EXPECT_EQ(a, 64);
	EXPECT_EQ(b, 65);
	buddy_free(&f.b, b, 0);
	buddy_free(&f.b, a, 0);
	ASSERT_EQ(f.b.stats.nr_free[3], 1);
	EXPECT_EQ(f.pages[1].flags, 0); /* 65 is now a tail */
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, b, 0)));
	EXPECT_TRUE(msg_has("double free"));
	EXPECT_TRUE(msg_has("pfn 0x41 (phys 0x41000)"));
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, a, 0)));
	EXPECT_TRUE(msg_has("double free"));
	EXPECT_EQ(buddy_check(&f.b), 0);
	fix_teardown(&f);
}

static struct {
	unsigned int calls;
	uint64_t pfn;
	unsigned int order;
} poisoned;

static void record_poison(uint64_t pfn, unsigned int order)
{
	poisoned.calls++;
	poisoned.pfn = pfn;
	poisoned.order = order;
}

KTEST(buddy, poison_hook)
{
	struct fix f;
	uint64_t a, c;

	memset(&poisoned, 0, sizeof(poisoned));
	fix_setup(&f, map_4g, ARRAY_SIZE(map_4g), MAP_4G_FIRST_PFN,
		  MAP_4G_NPAGES, BUDDY_MAX_ORDER);
	/* Off by default; adding RAM never poisons. */
	a = buddy_alloc(&f.b, 1, PAGE_OWNER_TEST);
	buddy_free(&f.b, a, 1);
	EXPECT_EQ(poisoned.calls, 0);

	buddy_set_poison(&f.b, record_poison);
	a = buddy_alloc(&f.b, 3, PAGE_OWNER_TEST);
	c = buddy_alloc(&f.b, 0, PAGE_OWNER_TEST);
	ASSERT_NE(a, BUDDY_NO_PFN);
	ASSERT_NE(c, BUDDY_NO_PFN);
	EXPECT_EQ(poisoned.calls, 0);
	buddy_free(&f.b, a, 3);
	EXPECT_EQ(poisoned.calls, 1);
	EXPECT_EQ(poisoned.pfn, a);
	EXPECT_EQ(poisoned.order, 3);
	/* The block as freed, not as merged. */
	buddy_free(&f.b, c, 0);
	EXPECT_EQ(poisoned.calls, 2);
	EXPECT_EQ(poisoned.pfn, c);
	EXPECT_EQ(poisoned.order, 0);
	/* A bad free is refused before anything is poisoned. */
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(&f.b, c, 0)));
	EXPECT_EQ(poisoned.calls, 2);

	buddy_set_poison(&f.b, NULL);
	a = buddy_alloc(&f.b, 0, PAGE_OWNER_TEST);
	buddy_free(&f.b, a, 0);
	EXPECT_EQ(poisoned.calls, 2);
	fix_teardown(&f);
}

/* buddy_check() must fail on a broken state, or its passes mean nothing. */
KTEST(buddy, check_detects_corruption)
{
	struct fix f;
	uint64_t pfn;
	struct page *p, saved;

	fix_setup(&f, map_4g, ARRAY_SIZE(map_4g), MAP_4G_FIRST_PFN,
		  MAP_4G_NPAGES, BUDDY_MAX_ORDER);
	ASSERT_EQ(buddy_check(&f.b), 0);

	f.b.stats.nr_free[0]++;
	EXPECT_GT(buddy_check(&f.b), 0);
	f.b.stats.nr_free[0]--;
	f.b.stats.free_pages += 1;
	EXPECT_GT(buddy_check(&f.b), 0);
	f.b.stats.free_pages -= 1;
	ASSERT_EQ(buddy_check(&f.b), 0);

	/* An allocated block marked free but on no list. */
	pfn = buddy_alloc(&f.b, 1, PAGE_OWNER_TEST);
	p = buddy_pfn_to_page(&f.b, pfn);
	ASSERT_TRUE(p != NULL);
	saved = *p;
	p->flags = PG_FREE;
	EXPECT_GT(buddy_check(&f.b), 0);
	*p = saved;
	EXPECT_EQ(buddy_check(&f.b), 0);

	/* Two free order-0 buddies left unmerged. */
	buddy_free(&f.b, pfn, 1);
	pfn = buddy_alloc(&f.b, 1, PAGE_OWNER_TEST);
	p = buddy_pfn_to_page(&f.b, pfn);
	*p = (struct page){ .flags = PG_FREE, .owner = PAGE_OWNER_BUDDY };
	p[1] = *p;
	p[0].list.next = &p[1];
	p[1].list.prev = &p[0];
	p[1].list.next = f.b.free_list[0];
	if (f.b.free_list[0])
		f.b.free_list[0]->list.prev = &p[1];
	f.b.free_list[0] = &p[0];
	f.b.stats.nr_free[0] += 2;
	f.b.stats.free_pages += 2;
	EXPECT_GT(buddy_check(&f.b), 0);
	EXPECT_EQ(buddy_pfn_to_page(&f.b, MAP_4G_FIRST_PFN - 1), NULL);
	fix_teardown(&f);
}

KTEST(buddy, add_range_misuse_panics)
{
	struct fix f;

	fix_setup(&f, map_high, ARRAY_SIZE(map_high), MAP_HIGH_FIRST_PFN,
		  MAP_HIGH_NPAGES, BUDDY_MAX_ORDER);
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_add_range(
		&f.b, MAP_HIGH_FIRST_PFN + 10, MAP_HIGH_FIRST_PFN + 11)));
	EXPECT_TRUE(msg_has("already managed"));
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_add_range(
		&f.b, MAP_HIGH_FIRST_PFN - 1, MAP_HIGH_FIRST_PFN)));
	EXPECT_TRUE(msg_has("outside the page array"));
	EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_add_range(
		&f.b, MAP_HIGH_FIRST_PFN,
		MAP_HIGH_FIRST_PFN + MAP_HIGH_NPAGES + 1)));
	EXPECT_EQ(buddy_check(&f.b), 0);
	fix_teardown(&f);
}
