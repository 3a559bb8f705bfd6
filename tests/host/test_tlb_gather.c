/*
 * Host tests for the TLB gather (mm/tlb_gather.c) against a recording
 * stand-in of the flush interface (mm/tlb.h), of page_free_phys() and of
 * page_cache_release() (the page-cache references a gather drops):
 * every event gets a sequence number, so "freed only after the flush"
 * is checked as an order, not assumed. Also: one space's ranges are
 * flushed as their union, several spaces or a freed table as a full
 * flush, kernel-half changes on every CPU, an overfull frame array
 * flushes early and loses nothing.
 */
// HOST_SRCS: mm/tlb_gather.c
#include <stdint.h>
#include <string.h>
#include "lib/ktest.h"
#include "mm/filemap.h"
#include "mm/page_alloc.h"
#include "mm/tlb.h"
#include "mm/tlb_gather.h"
#include "tests/host/host_shim.h"

#define MAX_EVENTS 512
#define USER_VA 0x0000000010000000ull
#define KERNEL_VA 0xffffc90000000000ull

enum ev_kind { EV_FREE, EV_FLUSH_USER, EV_FLUSH_KERNEL, EV_RELEASE };

struct event {
	enum ev_kind kind;
	uint64_t a, b;		/* frame, or va and npages */
	struct addr_space *as;	/* EV_FLUSH_USER */
	uint64_t cpus0;		/* EV_FLUSH_USER: first mask word */
};

static struct event ev[MAX_EVENTS];
static unsigned nev;

struct addr_space kernel_space;

static void record(struct event e)
{
	if (nev < MAX_EVENTS)
		ev[nev++] = e;
}

void page_free_phys(uint64_t phys, unsigned order)
{
	(void)order;
	record((struct event){EV_FREE, phys, 0, NULL, 0});
}

void page_cache_release(struct page *page)
{
	record((struct event){EV_RELEASE, (uint64_t)(uintptr_t)page, 0, NULL,
			      0});
}

void tlb_flush_kernel_range(uint64_t va, uint64_t npages)
{
	record((struct event){EV_FLUSH_KERNEL, va, npages, NULL, 0});
}

void tlb_space_changed(struct addr_space *as, uint64_t *cpus)
{
	as->tlb_gen++;
	for (unsigned w = 0; w < VM_CPU_WORDS; w++)
		cpus[w] |= as->loaded[w];
}

void tlb_flush_cpus(const uint64_t *cpus, struct addr_space *as, uint64_t va,
		    uint64_t npages)
{
	record((struct event){EV_FLUSH_USER, va, npages, as, cpus[0]});
}

static void reset(void)
{
	nev = 0;
}

/* Index of the first event of kind, or -1. */
static int first(enum ev_kind k)
{
	for (unsigned i = 0; i < nev; i++)
		if (ev[i].kind == k)
			return (int)i;
	return -1;
}

static unsigned count(enum ev_kind k)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nev; i++)
		n += ev[i].kind == k;
	return n;
}

KTEST(tlb_gather, frees_only_after_the_flush)
{
	struct addr_space as = {0};
	struct tlb_gather g;

	reset();
	as.loaded[0] = 0x6; /* CPUs 1 and 2 */
	tlb_gather_init(&g);
	tlb_gather_range(&g, &as, USER_VA, 1);
	tlb_gather_frame(&g, 0x1000);
	tlb_gather_frame(&g, 0x2000);
	EXPECT_EQ(nev, 0); /* nothing flushed, nothing freed yet */
	EXPECT_EQ(as.tlb_gen, 1);
	tlb_gather_finish(&g);
	ASSERT_EQ(nev, 3);
	EXPECT_EQ(ev[0].kind, EV_FLUSH_USER);
	EXPECT_EQ(ev[0].cpus0, 0x6);
	EXPECT_EQ(ev[1].kind, EV_FREE);
	EXPECT_EQ(ev[2].kind, EV_FREE);
	EXPECT_EQ(g.flushes, 1);
	EXPECT_EQ(g.frames_freed, 2);
}

KTEST(tlb_gather, drops_page_references_only_after_the_flush)
{
	struct addr_space as = {0};
	struct page pages[2];
	struct tlb_gather g;

	reset();
	as.loaded[0] = 0x2;
	tlb_gather_init(&g);
	tlb_gather_range(&g, &as, USER_VA, 2);
	tlb_gather_page(&g, &pages[0]);
	tlb_gather_page(&g, &pages[1]);
	EXPECT_EQ(nev, 0);
	tlb_gather_finish(&g);
	ASSERT_EQ(nev, 3);
	EXPECT_EQ(ev[0].kind, EV_FLUSH_USER);
	EXPECT_EQ(ev[1].kind, EV_RELEASE);
	EXPECT_EQ(ev[1].a, (uint64_t)(uintptr_t)&pages[0]);
	EXPECT_EQ(ev[2].kind, EV_RELEASE);
	EXPECT_EQ(g.refs_dropped, 2);
}

KTEST(tlb_gather, one_space_flushes_the_union)
{
	struct addr_space as = {0};
	struct tlb_gather g;

	reset();
	tlb_gather_init(&g);
	tlb_gather_range(&g, &as, USER_VA + 5 * PAGE_SIZE, 2);
	tlb_gather_range(&g, &as, USER_VA, 1);
	tlb_gather_finish(&g);
	ASSERT_EQ(nev, 1);
	EXPECT_EQ(ev[0].as, &as);
	EXPECT_EQ(ev[0].a, USER_VA);
	EXPECT_EQ(ev[0].b, 7);
}

KTEST(tlb_gather, several_spaces_or_a_table_flush_everything)
{
	struct addr_space a = {0}, b = {0};
	struct tlb_gather g;

	reset();
	a.loaded[0] = 0x2;
	b.loaded[0] = 0x8;
	tlb_gather_init(&g);
	tlb_gather_range(&g, &a, USER_VA, 1);
	tlb_gather_range(&g, &b, USER_VA, 1);
	tlb_gather_finish(&g);
	ASSERT_EQ(nev, 1);
	EXPECT_TRUE(ev[0].as == NULL);
	EXPECT_EQ(ev[0].b, 0);
	EXPECT_EQ(ev[0].cpus0, 0xa); /* one IPI per CPU of either */

	reset();
	tlb_gather_range(&g, &a, USER_VA, 1);
	tlb_gather_table(&g, 0x3000);
	tlb_gather_finish(&g);
	ASSERT_EQ(nev, 2);
	EXPECT_EQ(ev[0].kind, EV_FLUSH_USER);
	EXPECT_EQ(ev[0].b, 0);
	EXPECT_EQ(ev[1].kind, EV_FREE);
}

KTEST(tlb_gather, kernel_half_goes_to_every_cpu)
{
	struct addr_space as = {0};
	struct tlb_gather g;

	reset();
	tlb_gather_init(&g);
	tlb_gather_range(&g, &kernel_space, KERNEL_VA, 3);
	tlb_gather_finish(&g);
	ASSERT_EQ(nev, 1);
	EXPECT_EQ(ev[0].kind, EV_FLUSH_KERNEL);
	EXPECT_EQ(ev[0].b, 3);
	EXPECT_EQ(kernel_space.tlb_gen, 0);

	/* Kernel and user changes together: both flushes, both full. */
	reset();
	tlb_gather_range(&g, &kernel_space, KERNEL_VA, 1);
	tlb_gather_range(&g, &as, USER_VA, 1);
	tlb_gather_finish(&g);
	EXPECT_EQ(count(EV_FLUSH_KERNEL), 1);
	EXPECT_EQ(count(EV_FLUSH_USER), 1);
}

KTEST(tlb_gather, full_array_flushes_early_and_loses_nothing)
{
	struct addr_space as = {0};
	struct tlb_gather g;
	unsigned frees_before_flush = 0;
	int flush;

	reset();
	tlb_gather_init(&g);
	tlb_gather_range(&g, &as, USER_VA, 1);
	for (unsigned i = 0; i < TLB_GATHER_FRAMES + 5; i++)
		tlb_gather_frame(&g, (i + 1) * PAGE_SIZE);
	/* The 65th frame forced a flush of the first 64, then their frees. */
	flush = first(EV_FLUSH_USER);
	ASSERT_TRUE(flush >= 0);
	for (int i = 0; i < flush; i++)
		frees_before_flush += ev[i].kind == EV_FREE;
	EXPECT_EQ(frees_before_flush, 0);
	EXPECT_EQ(count(EV_FREE), TLB_GATHER_FRAMES);
	tlb_gather_finish(&g);
	EXPECT_EQ(count(EV_FREE), TLB_GATHER_FRAMES + 5);
	EXPECT_EQ(g.frames_freed, TLB_GATHER_FRAMES + 5);
	/* The early flush covered the change; the last range stayed
	 * pending after it (a table unhooked next must be covered), so
	 * the finish flushes once more. */
	EXPECT_EQ(count(EV_FLUSH_USER), 2);
}

/* An unmap that fills the array with its data frames and then unhooks a
 * page table: the table is still gathered under a pending change (no
 * assertion), flushed, and freed only after that flush. */
KTEST(tlb_gather, table_after_an_early_flush_is_still_flushed_first)
{
	struct addr_space as = {0};
	struct tlb_gather g;
	int table_free = -1, last_flush = -1;

	reset();
	as.loaded[0] = 0x4;
	tlb_gather_init(&g);
	for (unsigned i = 0; i < TLB_GATHER_FRAMES + 1; i++) {
		tlb_gather_range(&g, &as, USER_VA + i * PAGE_SIZE, 1);
		tlb_gather_frame(&g, (i + 1) * PAGE_SIZE);
	}
	EXPECT_EQ(count(EV_FLUSH_USER), 1); /* the early one */
	EXPECT_TRUE(g.pending);
	tlb_gather_table(&g, 0x7000000);
	tlb_gather_finish(&g);
	for (unsigned i = 0; i < nev; i++) {
		if (ev[i].kind == EV_FREE && ev[i].a == 0x7000000)
			table_free = (int)i;
		if (ev[i].kind == EV_FLUSH_USER && table_free < 0)
			last_flush = (int)i;
	}
	ASSERT_TRUE(table_free >= 0);
	EXPECT_TRUE(last_flush >= 0 && last_flush < table_free);
	EXPECT_EQ(count(EV_FLUSH_USER), 2);
	EXPECT_EQ(ev[last_flush].b, 0); /* a table: a full flush */
	EXPECT_EQ(ev[last_flush].cpus0, 0x4);
}

KTEST(tlb_gather, chained_pages_never_flush_early)
{
	static struct page pages[4 * TLB_GATHER_FRAMES];
	struct addr_space as = {0};
	struct tlb_gather g;
	unsigned n = 4 * TLB_GATHER_FRAMES;

	reset();
	as.loaded[0] = 0x2;
	tlb_gather_init(&g);
	for (unsigned i = 0; i < n; i++) {
		tlb_gather_range(&g, &as, USER_VA + i * PAGE_SIZE, 1);
		tlb_gather_put_page(&g, &pages[i]);
	}
	/* Four times the array's size: still nothing flushed or dropped. */
	EXPECT_EQ(nev, 0);
	tlb_gather_finish(&g);
	ASSERT_EQ(nev, n + 1);
	EXPECT_EQ(ev[0].kind, EV_FLUSH_USER);
	EXPECT_EQ(count(EV_RELEASE), n);
	EXPECT_EQ(g.refs_dropped, n);
	EXPECT_EQ(g.flushes, 1);
	for (unsigned i = 0; i < n; i++)
		EXPECT_TRUE(pages[i].lru.next == NULL); /* unchained */
}
