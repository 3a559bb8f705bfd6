/*
 * In-kernel tests of address spaces, demand paging, the reverse map and
 * TLB management: demand faults fill zeroed pages, faults outside a
 * region and demand faults with interrupts off still reach trap_try();
 * the kernel half is shared exactly;
 * the flush ceiling; the gather frees frames only after its flush;
 * reclaim of a page of a space loaded nowhere sends no IPI, and of an
 * active one sends one IPI per page (naive) or at most one per CPU per
 * batch (batched); a stale-translation detector under both policies
 * (one CPU reads through a mapping while another unmaps the page, frees
 * it and reuses it with new contents); file regions map page-cache
 * pages, reclaim unmaps such a page from every space and drops its
 * references only after the flush, but skips a page a reader holds;
 * the allocator's hook never unmaps (interrupts on or off), direct
 * reclaim does; PCIDs when the CPU has them.
 * The multi-CPU tests want 4 CPUs and skip with fewer than they need.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/pgtable.h"
#include "arch/x86_64/tlb.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/tsc.h"
#include "kernel/options.h"
#include "kernel/smp_call.h"
#include "lib/atomic.h"
#include "lib/ktest.h"
#include "lib/string.h"
#include "mm/filemap.h"
#include "mm/page.h"
#include "mm/page_alloc.h"
#include "mm/reclaim.h"
#include "mm/rmap.h"
#include "mm/space.h"
#include "mm/tlb.h"
#include "mm/tlb_gather.h"
#include "mm/vm.h"
#include "workloads/pagefile.h"

#define UVA 0x0000000010000000ull /* a region's start in the lower half */
#define REGION_PAGES 40
#define STALE_ROUNDS 24
#define READS_PER_STEP 64
#define WAIT_US 2000000
#define NEW_TAG 0x5354414cull /* "STAL": a frame's contents after reuse */
#define OLD_TAG 0x4f4c4421ull

static volatile uint64_t *uptr(uint64_t va)
{
	return (volatile uint64_t *)va;
}

static void switch_fn(void *arg)
{
	tlb_switch_to(arg);
}

/* Load as on cpu (from its IPI handler) and wait. */
static void load_on(unsigned cpu, struct addr_space *as)
{
	struct cpumask m;

	cpumask_clear(&m);
	cpumask_set(&m, cpu);
	smp_call(&m, switch_fn, as, true);
}

static uint64_t ipis_sent_now(void)
{
	struct tlb_cpu_stats s;

	tlb_stats_sum(&s);
	return s.ipis_sent;
}

static uint64_t received_by(unsigned cpu)
{
	struct tlb_cpu_stats s;

	tlb_stats_read(cpu, &s);
	return s.ipis_received;
}

/* A space with one anonymous region of n pages at UVA. */
static struct addr_space *new_space(uint64_t n)
{
	struct addr_space *as = space_create("test");

	if (as && space_add_anon(as, UVA, n, VM_WRITE) != VM_OK) {
		space_destroy(as);
		return NULL;
	}
	return as;
}

KTEST(space, demand_faults_fill_zeroed_pages)
{
	struct addr_space *prev = tlb_current(), *as = new_space(8);
	uint64_t used0 = rmap_used();
	struct space_stats s0, s1;
	bool zero = true;

	ASSERT_TRUE(as != NULL);
	space_stats(&s0);
	tlb_switch_to(as);
	for (unsigned i = 0; i < 8; i++) {
		volatile uint64_t *p = uptr(UVA + i * PAGE_SIZE);

		for (unsigned w = 0; w < PAGE_SIZE / 8; w += 61)
			zero &= p[w] == 0;
		p[1] = 0x1000 + i;
	}
	for (unsigned i = 0; i < 8; i++)
		EXPECT_EQ(uptr(UVA + i * PAGE_SIZE)[1], 0x1000 + i);
	tlb_switch_to(prev ? prev : &kernel_space);
	EXPECT_TRUE(zero);
	space_stats(&s1);
	EXPECT_EQ(s1.zero_fills - s0.zero_fills, 8);
	EXPECT_EQ(as->resident, 8);
	EXPECT_EQ(rmap_used() - used0, 8);
	space_destroy(as);
	EXPECT_EQ(rmap_used(), used0);
}

static void touch_outside(void *arg)
{
	(void)*uptr((uint64_t)arg);
}

KTEST(space, fault_outside_a_region_reaches_trap_try)
{
	struct addr_space *prev = tlb_current(), *as = new_space(1);
	struct trap_caught c;

	ASSERT_TRUE(as != NULL);
	tlb_switch_to(as);
	trap_try(touch_outside, (void *)(UVA + 16 * PAGE_SIZE), &c);
	tlb_switch_to(prev ? prev : &kernel_space);
	EXPECT_TRUE(c.faulted);
	EXPECT_EQ(c.vector, 14);
	EXPECT_EQ(c.cr2, UVA + 16 * PAGE_SIZE);
	space_destroy(as);
}

/* A demand fault with interrupts off is refused (it could deadlock a
 * shootdown): trap_try() catches it and nothing is mapped; the same
 * touch with interrupts on fills the page. */
KTEST(space, demand_fault_with_interrupts_off_is_refused)
{
	struct addr_space *prev = tlb_current(), *as = new_space(1);
	struct space_stats s0, s1;
	struct vm_translation tr;
	struct trap_caught c;
	uint64_t flags;

	ASSERT_TRUE(as != NULL);
	space_stats(&s0);
	tlb_switch_to(as);
	flags = cpu_irq_save();
	trap_try(touch_outside, (void *)UVA, &c);
	cpu_irq_restore(flags);
	EXPECT_TRUE(c.faulted);
	EXPECT_EQ(c.vector, 14);
	EXPECT_EQ(c.cr2, UVA);
	EXPECT_FALSE(vm_translate(as, UVA, &tr));
	trap_try(touch_outside, (void *)UVA, &c);
	EXPECT_FALSE(c.faulted);
	EXPECT_TRUE(vm_translate(as, UVA, &tr));
	tlb_switch_to(prev ? prev : &kernel_space);
	space_stats(&s1);
	EXPECT_EQ(s1.zero_fills - s0.zero_fills, 1);
	space_destroy(as);
}

KTEST(space, kernel_half_is_shared)
{
	struct addr_space *as = new_space(1);
	uint64_t frame = page_alloc_phys(0, PAGE_OWNER_TEST);
	uint64_t va = VMAP_BASE + 77 * PT_LEVEL_SIZE(3); /* new tables */

	ASSERT_TRUE(as != NULL);
	ASSERT_NE(frame, PAGE_ALLOC_FAILED);
	*(uint64_t *)phys_to_virt(frame) = 0x5ea5ed;
	/* Mapped in the kernel's space after `as` was created. */
	ASSERT_EQ(vm_map(&kernel_space, va, frame, 1, 0, MEMTYPE_WB, 0), VM_OK);
	for (unsigned i = PML4_KERNEL_FIRST; i < PT_ENTRIES; i++)
		EXPECT_EQ(as->root[i], kernel_space.root[i]);
	{
		struct vm_translation t;

		EXPECT_TRUE(vm_translate(as, va, &t));
		EXPECT_EQ(t.phys, frame);
	}
	vm_unmap(&kernel_space, va, 1);
	page_free_phys(frame, 0);
	space_destroy(as);
}

KTEST(tlb, flush_ceiling_is_one_number)
{
	struct tlb_cpu_stats a, b;
	unsigned cpu = smp_this_cpu();
	unsigned saved = tlb_flush_ceiling;

	EXPECT_EQ(TLB_FLUSH_CEILING_DEFAULT, 33);
	tlb_flush_ceiling = 33;
	tlb_stats_read(cpu, &a);
	tlb_flush_local_range(VMAP_BASE, 33, false);
	tlb_stats_read(cpu, &b);
	EXPECT_EQ(b.single - a.single, 33);
	EXPECT_EQ(b.full - a.full, 0);
	tlb_flush_local_range(VMAP_BASE, 34, false);
	tlb_stats_read(cpu, &a);
	EXPECT_EQ(a.single - b.single, 0);
	EXPECT_EQ(a.full - b.full, 1);
	tlb_flush_ceiling = 4;
	tlb_flush_local_range(VMAP_BASE, 5, false);
	tlb_stats_read(cpu, &b);
	EXPECT_EQ(b.full - a.full, 1);
	tlb_flush_ceiling = saved;
	if (kopt.tlb_ceiling)
		EXPECT_EQ(tlb_flush_ceiling, kopt.tlb_ceiling);
}

KTEST(tlb, gather_frees_only_after_flush)
{
	struct addr_space *prev = tlb_current(), *as = new_space(2);
	struct vm_translation t;
	struct tlb_gather g;
	struct page *pg;

	ASSERT_TRUE(as != NULL);
	tlb_switch_to(as);
	*uptr(UVA) = 1;
	tlb_switch_to(prev ? prev : &kernel_space);
	ASSERT_TRUE(vm_translate(as, UVA, &t));
	pg = pfn_to_page(t.phys >> PAGE_SHIFT);
	rmap_remove(t.phys >> PAGE_SHIFT, as, UVA);
	tlb_gather_init(&g);
	ASSERT_EQ(vm_unmap_gather(as, UVA, 1, &g, true), VM_OK);
	EXPECT_FALSE(vm_translate(as, UVA, &t));
	/* Unmapped, not flushed: the frame (and the emptied tables) wait. */
	EXPECT_EQ(g.nframes, 3);
	EXPECT_EQ(pg->refcount, 1);
	EXPECT_FALSE(pg->flags & PG_FREE);
	tlb_gather_finish(&g);
	EXPECT_EQ(g.flushes, 1);
	EXPECT_EQ(g.frames_freed, 3);
	EXPECT_EQ(pg->refcount, 0);
	as->resident--;
	space_destroy(as);
}

/* Fault n pages of as in from cpu (or here if cpu is ours). */
struct fill_req {
	struct addr_space *as;
	uint64_t n;
};

static void fill_fn(void *arg)
{
	struct fill_req *r = arg;
	struct addr_space *prev = tlb_current();

	tlb_switch_to(r->as);
	for (uint64_t i = 0; i < r->n; i++)
		*uptr(UVA + i * PAGE_SIZE) = OLD_TAG << 32 | i;
	tlb_switch_to(prev ? prev : &kernel_space);
}

static void fill_on(unsigned cpu, struct addr_space *as, uint64_t n)
{
	struct fill_req r = {as, n};

	if (cpu == smp_this_cpu()) {
		fill_fn(&r);
		return;
	}
	smp_work_post(cpu, fill_fn, &r);
	smp_work_wait(cpu);
}

KTEST(tlb, reclaim_of_inactive_space_sends_no_ipi)
{
	unsigned self = smp_this_cpu();
	unsigned other = self == 1 ? 2 : 1;

	if (smp_cpus_online() < 3)
		KTEST_SKIP("needs 3 CPUs");
	for (int p = 0; p < TLB_POLICY_COUNT; p++) {
		struct addr_space *as = new_space(REGION_PAGES);
		uint64_t sent0, rcv[4];
		struct reclaim_result r;
		struct vm_translation t;

		ASSERT_TRUE(as != NULL);
		/* CPU `other` ran the space and left it. */
		fill_on(other, as, REGION_PAGES);
		EXPECT_EQ(as->resident, REGION_PAGES);
		sent0 = ipis_sent_now();
		for (unsigned c = 0; c < 4 && c < smp_cpus_online(); c++)
			rcv[c] = received_by(c);
		r = reclaim_anon(REGION_PAGES, p, 0, NULL, NULL);
		EXPECT_EQ(r.pages, REGION_PAGES);
		EXPECT_EQ(ipis_sent_now() - sent0, 0);
		for (unsigned c = 0; c < 4 && c < smp_cpus_online(); c++)
			EXPECT_EQ(received_by(c) - rcv[c], 0);
		EXPECT_FALSE(vm_translate(as, UVA, &t));
		EXPECT_EQ(as->resident, 0);
		space_destroy(as);
	}
}

KTEST(tlb, reclaim_of_active_space_ipis_per_policy)
{
	unsigned self = smp_this_cpu();
	unsigned holder = self == 1 ? 2 : 1, bystander = self == 3 ? 2 : 3;

	if (smp_cpus_online() < 4)
		KTEST_SKIP("needs 4 CPUs");
	for (int p = 0; p < TLB_POLICY_COUNT; p++) {
		struct addr_space *as = new_space(REGION_PAGES);
		uint64_t sent0, got0, by0;
		struct reclaim_result r;

		ASSERT_TRUE(as != NULL);
		fill_on(holder, as, REGION_PAGES);
		load_on(holder, as); /* and stays loaded there */
		sent0 = ipis_sent_now();
		got0 = received_by(holder);
		by0 = received_by(bystander);
		r = reclaim_anon(REGION_PAGES, p, RECLAIM_BATCH_DEFAULT, NULL,
				 NULL);
		EXPECT_EQ(r.pages, REGION_PAGES);
		if (p == TLB_POLICY_NAIVE) {
			EXPECT_EQ(ipis_sent_now() - sent0, REGION_PAGES);
			EXPECT_EQ(r.batches, REGION_PAGES);
		} else {
			/* 40 pages in batches of 32: two flushes, and at
			 * most one IPI per CPU per batch. */
			EXPECT_EQ(r.batches, 2);
			EXPECT_LE(ipis_sent_now() - sent0, r.batches);
		}
		EXPECT_EQ(received_by(holder) - got0, ipis_sent_now() - sent0);
		EXPECT_EQ(received_by(bystander) - by0, 0);
		load_on(holder, &kernel_space);
		space_destroy(as);
	}
}

struct stale_reader {
	struct addr_space *as;
	uint64_t reads;
	uint64_t stale;
	bool stop;
};

static void stale_read_fn(void *arg)
{
	struct stale_reader *r = arg;
	struct addr_space *prev = tlb_current();

	tlb_switch_to(r->as);
	while (!atomic_load_acquire(&r->stop)) {
		uint64_t v = *uptr(UVA);

		if (v >> 32 == NEW_TAG)
			atomic_fetch_add_relaxed(&r->stale, 1);
		atomic_fetch_add_release(&r->reads, 1);
	}
	tlb_switch_to(prev ? prev : &kernel_space);
}

/* Wait until the reader made n more reads; false after WAIT_US. */
static bool reader_progress(struct stale_reader *r, uint64_t n)
{
	uint64_t target = atomic_load_acquire(&r->reads) + n;
	uint64_t t0 = rdtsc(), limit = tsc_us_to_cycles(WAIT_US);

	while (atomic_load_acquire(&r->reads) < target)
		if (rdtsc() - t0 > limit)
			return false;
	return true;
}

/* Reuse a frame at once with new contents; hold it while the reader
 * reads, then free it. */
static void reuse_frame(struct stale_reader *r, bool *ok)
{
	uint64_t f = page_alloc_phys(0, PAGE_OWNER_TEST);
	uint64_t *p;

	if (f == PAGE_ALLOC_FAILED) {
		*ok = false;
		return;
	}
	p = phys_to_virt(f);
	for (unsigned w = 0; w < PAGE_SIZE / 8; w++)
		p[w] = NEW_TAG << 32 | w;
	*ok &= reader_progress(r, READS_PER_STEP);
	memset(p, 0, PAGE_SIZE);
	page_free_phys(f, 0);
}

/*
 * Rounds of: map the page (old contents), let the reader read it,
 * reclaim it with policy (or, for the control, free it before the flush),
 * reuse the frame with new contents. Returns the reader's stale reads.
 */
static uint64_t stale_rounds(struct ktest_ctx *ctx, unsigned reader_cpu,
			     int policy, bool control)
{
	struct stale_reader r = {new_space(1), 0, 0, false};
	bool ok = true;

	if (!r.as) {
		ktest_fail(ctx, __FILE__, __LINE__, "no memory for a space");
		return 0;
	}
	if (!space_fault(r.as, UVA) ||
	    !smp_work_post(reader_cpu, stale_read_fn, &r)) {
		ktest_fail(ctx, __FILE__, __LINE__, "could not start");
		space_destroy(r.as);
		return 0;
	}
	for (unsigned i = 0; i < STALE_ROUNDS && ok; i++) {
		struct vm_translation t;

		if (!vm_translate(r.as, UVA, &t) && !space_fault(r.as, UVA)) {
			ok = false;
			break;
		}
		if (vm_translate(r.as, UVA, &t))
			*(uint64_t *)phys_to_virt(t.phys) = OLD_TAG << 32 | i;
		ok &= reader_progress(&r, READS_PER_STEP);
		if (!control) {
			reclaim_anon(1, policy, 1, NULL, NULL);
		} else {
			/* Wrong on purpose: free before the flush. */
			struct tlb_gather g;
			struct rmap_item *it;

			tlb_gather_init(&g);
			rmap_lock();
			it = rmap_oldest_anon_locked();
			if (it) {
				rmap_drop_locked(it);
				vm_unmap_gather(r.as, UVA, 1, &g, false);
				r.as->resident--;
				page_free_phys(t.phys & ~(PAGE_SIZE - 1), 0);
			}
			rmap_unlock();
			reuse_frame(&r, &ok);
			tlb_gather_finish(&g);
			continue;
		}
		reuse_frame(&r, &ok);
	}
	atomic_store_release(&r.stop, true);
	smp_work_wait(reader_cpu);
	EXPECT_TRUE(ok);
	ktest_diag("%s: %llu reads, %llu stale", control ?
		   "control (frame freed before the flush)" :
		   tlb_policy_name(policy),
		   (unsigned long long)r.reads, (unsigned long long)r.stale);
	space_destroy(r.as);
	return r.stale;
}

KTEST(tlb, stale_translation_detector)
{
	unsigned reader = smp_this_cpu() == 1 ? 2 : 1;

	if (smp_cpus_online() < 2)
		KTEST_SKIP("needs 2 CPUs");
	EXPECT_EQ(stale_rounds(ctx, reader, TLB_POLICY_NAIVE, false), 0);
	EXPECT_EQ(stale_rounds(ctx, reader, TLB_POLICY_BATCHED, false), 0);
	/* The detector's own check: reported, not asserted (whether the
	 * reader still holds the translation at that moment is timing). */
	stale_rounds(ctx, reader, TLB_POLICY_NAIVE, true);
}

KTEST(tlb, pcid_generation)
{
	struct addr_space *prev = tlb_current();
	struct addr_space *a, *b;
	struct tlb_cpu_stats s0, s1;
	unsigned cpu = smp_this_cpu();

	if (kopt.nopcid)
		EXPECT_FALSE(tlb_pcid_active());
	if (!tlb_pcid_active())
		KTEST_SKIP(kopt.nopcid ? "nopcid given" :
					 "this CPU has no PCID");
	a = new_space(1);
	b = new_space(1);
	ASSERT_TRUE(a && b);
	tlb_switch_to(a);
	*uptr(UVA) = 7;
	tlb_switch_to(b);
	tlb_stats_read(cpu, &s0);
	tlb_switch_to(a); /* nothing changed: entries kept */
	tlb_stats_read(cpu, &s1);
	EXPECT_EQ(s1.pcid_hits - s0.pcid_hits, 1);
	EXPECT_EQ(*uptr(UVA), 7);
	tlb_switch_to(b);
	/* a changes while away: the return must flush its PCID. */
	reclaim_anon(1, TLB_POLICY_BATCHED, 1, NULL, NULL);
	tlb_stats_read(cpu, &s0);
	tlb_switch_to(a);
	tlb_stats_read(cpu, &s1);
	EXPECT_EQ(s1.pcid_flushes - s0.pcid_flushes, 1);
	EXPECT_EQ(*uptr(UVA), 0); /* a fresh zero page */
	tlb_switch_to(prev ? prev : &kernel_space);
	space_destroy(a);
	space_destroy(b);
}

/* A small file in the page cache (workloads/pagefile.h: its words are a
 * known function of file and page). */
#define TFILE_PAGES 4
#define TFILE_VA 0x0000000020000000ull
#define TFILE_ID 0x3a

struct tfile {
	struct pagefile f;
	struct address_space m;
	struct page *victim; /* what tfile_evict takes out */
};

static void tfile_init(struct tfile *t)
{
	memset(t, 0, sizeof(*t));
	t->f = (struct pagefile){.id = TFILE_ID, .size_pages = TFILE_PAGES};
	address_space_init(&t->m, PAGECACHE_LOCKLESS_GANG, &pagefile_store,
			   &t->f, TFILE_PAGES, NULL, NULL);
}

/* reclaim_file()'s victim: t->victim, out of the cache, with a
 * reference for reclaim; then nothing. */
static struct page *tfile_evict(void *arg)
{
	struct tfile *t = arg;
	struct page *p = t->victim;

	if (!p)
		return NULL;
	t->victim = NULL;
	get_page(p);
	if (!remove_from_page_cache(p)) {
		page_cache_release(p);
		return NULL;
	}
	return p;
}

struct file_read {
	struct addr_space *as;
	uint64_t index;
	bool ok;
};

static void file_read_fn(void *arg)
{
	struct file_read *r = arg;
	struct addr_space *prev = tlb_current();
	volatile uint64_t *p = uptr(TFILE_VA + r->index * PAGE_SIZE);

	tlb_switch_to(r->as);
	r->ok = true;
	for (unsigned w = 0; w < PAGE_SIZE / 8; w += 37)
		r->ok &= p[w] == pagefile_word(TFILE_ID, r->index, w);
	tlb_switch_to(prev ? prev : &kernel_space);
}

/* The page-cache page a space maps at TFILE_VA, or NULL. */
static struct page *mapped_page(struct addr_space *as)
{
	struct vm_translation tr;

	if (!vm_translate(as, TFILE_VA, &tr))
		return NULL;
	return pfn_to_page(tr.phys >> PAGE_SHIFT);
}

KTEST(space, file_mapping_reads_page_cache)
{
	struct tfile t;
	struct addr_space *a = space_create("file-a"), *b = space_create("file-b");
	unsigned other = smp_this_cpu() == 1 ? 2 : 1;
	struct file_read ra = {a, 0, false}, rb = {b, 0, false};
	struct reclaim_result r;
	struct page *pg, *cached;
	uint64_t sent0;
	struct vm_translation tr;
	bool two = smp_cpus_online() >= 3;

	ASSERT_TRUE(a && b);
	tfile_init(&t);
	ASSERT_EQ(space_add_file(a, TFILE_VA, TFILE_PAGES, &t.m, 0, 0), VM_OK);
	ASSERT_EQ(space_add_file(b, TFILE_VA, TFILE_PAGES, &t.m, 0, 0), VM_OK);
	file_read_fn(&ra);
	file_read_fn(&rb);
	EXPECT_TRUE(ra.ok);
	EXPECT_TRUE(rb.ok);
	/* Both map the page the cache holds: find_get_page() finds it. */
	pg = mapped_page(a);
	ASSERT_TRUE(pg != NULL);
	EXPECT_TRUE(mapped_page(b) == pg);
	cached = find_get_page(&t.m, 0);
	EXPECT_TRUE(cached == pg);
	EXPECT_EQ(t.f.reads, 1);
	/* References: the cache's, one per mapping, ours. */
	EXPECT_EQ(page_count(pg), 4);
	EXPECT_EQ(rmap_count(page_to_pfn(pg)), 2);
	if (two)
		load_on(other, a); /* a stays loaded on another CPU */
	sent0 = ipis_sent_now();
	t.victim = pg;
	r = reclaim_file(1, TLB_POLICY_NAIVE, 0, tfile_evict, &t, NULL, NULL);
	EXPECT_EQ(r.pages, 1);
	EXPECT_EQ(r.batches, 2); /* naive: one flush per mapping */
	EXPECT_EQ(ipis_sent_now() - sent0, two ? 1 : 0);
	/* Unmapped from both spaces, out of the cache, and every
	 * reference but ours dropped. */
	EXPECT_EQ(rmap_count(page_to_pfn(pg)), 0);
	EXPECT_FALSE(vm_translate(a, TFILE_VA, &tr));
	EXPECT_FALSE(vm_translate(b, TFILE_VA, &tr));
	EXPECT_TRUE(find_get_page(&t.m, 0) == NULL);
	EXPECT_EQ(page_count(pg), 1);
	page_cache_release(cached);
	if (two)
		load_on(other, &kernel_space);
	/* Read again: read in anew through the cache, same data. */
	file_read_fn(&rb);
	EXPECT_TRUE(rb.ok);
	EXPECT_EQ(t.f.reads, 2);
	space_destroy(a);
	space_destroy(b);
	/* The file's pages outlive the spaces; nobody maps them now. */
	EXPECT_EQ(truncate_inode_pages(&t.m), 1);
}

/* The allocator's hook with interrupts on, then off: it never unmaps a
 * mapped page nor sends an IPI (it may run where waiting for one would
 * deadlock); direct reclaim, which may wait, unmaps it. */
KTEST(space, allocator_hook_never_unmaps_direct_reclaim_does)
{
	struct tfile t;
	struct addr_space *a = space_create("file-hook");
	struct file_read rd = {a, 0, false};
	struct vm_translation tr;
	unsigned other = smp_this_cpu() == 1 ? 2 : 1;
	bool two = smp_cpus_online() >= 3;
	uint64_t sent0, flags;
	struct page *pg;

	ASSERT_TRUE(a != NULL);
	tfile_init(&t);
	ASSERT_EQ(space_add_file(a, TFILE_VA, TFILE_PAGES, &t.m, 0, 0), VM_OK);
	file_read_fn(&rd);
	EXPECT_TRUE(rd.ok);
	pg = mapped_page(a);
	ASSERT_TRUE(pg != NULL);
	if (two)
		load_on(other, a); /* an unmap would need an IPI */
	sent0 = ipis_sent_now();
	reclaim_page_cache(pagecache_lru_pages());
	flags = cpu_irq_save();
	EXPECT_FALSE(tlb_shootdown_may_wait() && smp_cpus_online() > 1);
	reclaim_page_cache(pagecache_lru_pages());
	cpu_irq_restore(flags);
	EXPECT_TRUE(tlb_shootdown_may_wait());
	EXPECT_TRUE(vm_translate(a, TFILE_VA, &tr));
	EXPECT_EQ(rmap_count(page_to_pfn(pg)), 1);
	EXPECT_EQ(ipis_sent_now() - sent0, 0);
	/* Direct reclaim: every cached page, the mapped one included. */
	reclaim_mapped(pagecache_lru_pages());
	EXPECT_FALSE(vm_translate(a, TFILE_VA, &tr));
	EXPECT_EQ(rmap_count(page_to_pfn(pg)), 0);
	EXPECT_TRUE(find_get_page(&t.m, 0) == NULL);
	EXPECT_EQ(ipis_sent_now() - sent0, two ? 1 : 0);
	if (two)
		load_on(other, &kernel_space);
	space_destroy(a);
	EXPECT_EQ(truncate_inode_pages(&t.m), 0);
}

/* Linux's reference freeze: a page a reader holds is not reclaimed,
 * mapped or not; the same page once released is. */
KTEST(space, reclaim_skips_a_page_a_reader_holds)
{
	struct tfile t;
	struct addr_space *a = space_create("file-held");
	struct file_read rd = {a, 0, false};
	struct vm_translation tr;
	struct page *held, *mapped, *got;

	ASSERT_TRUE(a != NULL);
	tfile_init(&t);
	ASSERT_EQ(space_add_file(a, TFILE_VA, TFILE_PAGES, &t.m, 0, 0), VM_OK);
	file_read_fn(&rd); /* page 0: mapped by a */
	EXPECT_TRUE(rd.ok);
	mapped = mapped_page(a);
	ASSERT_TRUE(mapped != NULL);
	ASSERT_EQ(__do_page_cache_readahead(&t.m, 1, 1), 1);
	held = find_get_page(&t.m, 1); /* page 1: a reader holds it */
	ASSERT_TRUE(held != NULL);
	get_page(mapped); /* and a reader holds the mapped one too */
	reclaim_file(pagecache_lru_pages(), TLB_POLICY_BATCHED, 0, NULL, NULL,
		     NULL, NULL);
	/* Both still cached, the mapped one still mapped. */
	got = find_get_page(&t.m, 1);
	EXPECT_TRUE(got == held);
	if (got)
		page_cache_release(got);
	got = find_get_page(&t.m, 0);
	EXPECT_TRUE(got == mapped);
	if (got)
		page_cache_release(got);
	EXPECT_TRUE(vm_translate(a, TFILE_VA, &tr));
	EXPECT_EQ(page_count(held), 2); /* the cache's and the reader's */
	/* The readers let go: now both go, the mapped one unmapped. */
	page_cache_release(held);
	page_cache_release(mapped);
	reclaim_file(pagecache_lru_pages(), TLB_POLICY_BATCHED, 0, NULL, NULL,
		     NULL, NULL);
	EXPECT_TRUE(find_get_page(&t.m, 0) == NULL);
	EXPECT_TRUE(find_get_page(&t.m, 1) == NULL);
	EXPECT_FALSE(vm_translate(a, TFILE_VA, &tr));
	space_destroy(a);
	EXPECT_EQ(truncate_inode_pages(&t.m), 0);
}

/* Victims of the batched test, first then second; before taking the
 * second, checks the first. */
struct ref_check {
	struct tfile *t;
	struct addr_space *as;
	struct page *first, *second;
	uint32_t count_before; /* the first's count before reclaim */
	bool unmapped, refs_kept;
};

static struct page *evict_and_check(void *arg)
{
	struct ref_check *c = arg;
	struct vm_translation tr;

	if (c->t->victim)
		return tfile_evict(c->t); /* the first */
	if (!c->second)
		return NULL;
	/* The first page is unmapped but its flush has not come yet: the
	 * mapping's reference is gone (not the last), the cache's, which
	 * reclaim now holds, must still be. */
	c->unmapped = !vm_translate(c->as, TFILE_VA, &tr);
	c->refs_kept = page_count(c->first) == c->count_before - 1;
	c->t->victim = c->second;
	c->second = NULL;
	return tfile_evict(c->t);
}

KTEST(space, file_page_reference_dropped_after_flush)
{
	struct tfile t;
	struct addr_space *a = space_create("file-ref");
	struct file_read rd = {a, 0, false};
	struct ref_check c = {&t, a, NULL, NULL, 0, false, false};
	struct reclaim_result r;

	ASSERT_TRUE(a != NULL);
	tfile_init(&t);
	ASSERT_EQ(space_add_file(a, TFILE_VA, TFILE_PAGES, &t.m, 0, 0), VM_OK);
	file_read_fn(&rd);
	EXPECT_TRUE(rd.ok);
	c.first = mapped_page(a);
	ASSERT_TRUE(c.first != NULL);
	ASSERT_EQ(__do_page_cache_readahead(&t.m, 1, 1), 1);
	c.second = find_get_page(&t.m, 1);
	ASSERT_TRUE(c.second != NULL);
	page_cache_release(c.second); /* the cache keeps it */
	get_page(c.first); /* ours: the frame must stay to be looked at */
	c.count_before = page_count(c.first); /* cache + mapping + ours */
	EXPECT_EQ(c.count_before, 3);
	t.victim = c.first;
	/* One batch of two pages: a single flush at the end. */
	r = reclaim_file(2, TLB_POLICY_BATCHED, 4, evict_and_check, &c, NULL,
			 NULL);
	EXPECT_EQ(r.pages, 2);
	EXPECT_EQ(r.batches, 1);
	EXPECT_TRUE(c.unmapped);
	EXPECT_TRUE(c.refs_kept);
	EXPECT_EQ(page_count(c.first), 1); /* only ours after the flush */
	page_cache_release(c.first);
	space_destroy(a);
	EXPECT_EQ(truncate_inode_pages(&t.m), 0);
}
