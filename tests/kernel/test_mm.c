/*
 * In-kernel tests of the memory core: the page allocator on the
 * real memory map, the live page tables (W^X, guard page, memory-type
 * encodings at every page size, splits, aliases) and the PAT.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/pat.h"
#include "arch/x86_64/pgtable.h"
#include "arch/x86_64/trap.h"
#include "kernel/smp.h"
#include "kernel/smp_call.h"
#include "lib/ktest.h"
#include "lib/prng.h"
#include "lib/string.h"
#include "mm/buddy.h"
#include "mm/fwmap.h"
#include "mm/page_alloc.h"
#include "mm/vm.h"

extern char boot_stack_guard[];

/* Test mappings go here, one 1 GiB-aligned slot per test. */
#define TEST_VA(slot) (VMAP_BASE + (uint64_t)(slot) * PT_LEVEL_SIZE(3))

/*
 * Allocate blocks of decreasing order until nothing is left, chaining
 * them through their first word; then free them all. The free count must
 * come back exactly: nothing leaked, nothing freed twice.
 */
KTEST(page_alloc, exhaust_then_free_everything)
{
	uint64_t before = page_alloc_free_pages(), got = 0, blocks = 0;
	uint64_t *head = NULL;

	for (int order = BUDDY_MAX_ORDER; order >= 0; order--) {
		uint64_t phys;

		while ((phys = page_alloc_phys(order, PAGE_OWNER_TEST)) !=
		       PAGE_ALLOC_FAILED) {
			uint64_t *blk = phys_to_virt(phys);

			blk[0] = (uint64_t)head;
			blk[1] = (uint64_t)order;
			head = blk;
			got += 1ull << order;
			blocks++;
		}
	}
	EXPECT_EQ(page_alloc_free_pages(), 0);
	EXPECT_EQ(got, before);
	/* Exhaustion returns "failed", it does not hang or panic. */
	EXPECT_EQ(page_alloc_phys(0, PAGE_OWNER_TEST), PAGE_ALLOC_FAILED);
	EXPECT_TRUE(page_alloc(0) == NULL);
	while (head) {
		uint64_t *next = (uint64_t *)head[0];

		page_free(head, (unsigned)head[1]);
		head = next;
	}
	EXPECT_EQ(page_alloc_free_pages(), before);
	EXPECT_EQ(page_alloc_check(), 0);
	ktest_diag("%lu pages in %lu blocks", (unsigned long)got,
		   (unsigned long)blocks);
}

#define SHADOW_SLOTS 256
#define RANDOM_STEPS 4000

/* Random allocations and frees checked against a shadow record: blocks
 * never overlap, are aligned, and keep the pattern written into them. */
KTEST(page_alloc, random_against_shadow)
{
	struct {
		uint64_t phys;
		unsigned order;
	} slot[SHADOW_SLOTS];
	uint64_t seed = 0x9e3779b97f4a7c15ull, before = page_alloc_free_pages();
	unsigned overlaps = 0, misaligned = 0, corrupted = 0;

	memset(slot, 0, sizeof(slot));
	for (int step = 0; step < RANDOM_STEPS; step++) {
		unsigned i = prng_next(&seed) % SHADOW_SLOTS;

		if (slot[i].phys) {
			uint64_t *p = phys_to_virt(slot[i].phys);
			if (p[0] != slot[i].phys ||
			    p[(PAGE_SIZE << slot[i].order) / 8 - 1] != ~slot[i].phys)
				corrupted++;
			page_free_phys(slot[i].phys, slot[i].order);
			slot[i].phys = 0;
			continue;
		}
		slot[i].order = prng_next(&seed) % 5;
		slot[i].phys = page_alloc_phys(slot[i].order, PAGE_OWNER_TEST);
		if (slot[i].phys == PAGE_ALLOC_FAILED) {
			slot[i].phys = 0;
			continue;
		}
		if (slot[i].phys & ((PAGE_SIZE << slot[i].order) - 1))
			misaligned++;
		for (unsigned j = 0; j < SHADOW_SLOTS; j++) {
			uint64_t a = slot[i].phys, b = slot[j].phys;
			uint64_t alen = PAGE_SIZE << slot[i].order;
			uint64_t blen = PAGE_SIZE << slot[j].order;

			if (j != i && b && a < b + blen && b < a + alen)
				overlaps++;
		}
		uint64_t *p = phys_to_virt(slot[i].phys);
		p[0] = slot[i].phys;
		p[(PAGE_SIZE << slot[i].order) / 8 - 1] = ~slot[i].phys;
	}
	for (unsigned i = 0; i < SHADOW_SLOTS; i++)
		if (slot[i].phys)
			page_free_phys(slot[i].phys, slot[i].order);
	EXPECT_EQ(overlaps, 0);
	EXPECT_EQ(misaligned, 0);
	EXPECT_EQ(corrupted, 0);
	EXPECT_EQ(page_alloc_free_pages(), before);
}

static void touch_read(void *va)
{
	(void)*(volatile uint64_t *)va;
}

static void touch_write(void *va)
{
	*(volatile uint64_t *)va = 0x5a5a5a5a;
}

KTEST(vm, map_read_unmap_fault)
{
	uint64_t phys = page_alloc_phys(0, PAGE_OWNER_TEST);
	uint64_t va = TEST_VA(1);
	struct trap_caught c;
	struct vm_translation t;

	ASSERT_NE(phys, PAGE_ALLOC_FAILED);
	*(volatile uint64_t *)phys_to_virt(phys) = 0x1234abcdull;
	ASSERT_EQ(vm_map(&kernel_space, va, phys, 1, VM_WRITE, MEMTYPE_WB, 0),
		  VM_OK);
	EXPECT_EQ(*(volatile uint64_t *)va, 0x1234abcdull);
	*(volatile uint64_t *)va = 0x77;
	EXPECT_EQ(*(volatile uint64_t *)phys_to_virt(phys), 0x77);
	EXPECT_TRUE(vm_translate(&kernel_space, va + 8, &t));
	EXPECT_EQ(t.phys, phys + 8);
	EXPECT_EQ(vm_map(&kernel_space, va, phys, 1, 0, MEMTYPE_WB, 0),
		  VM_ERR_EXISTS);

	ASSERT_EQ(vm_unmap(&kernel_space, va, 1), VM_OK);
	EXPECT_FALSE(vm_translate(&kernel_space, va, &t));
	trap_try(touch_read, (void *)va, &c);
	EXPECT_TRUE(c.faulted);
	EXPECT_EQ(c.vector, VEC_PAGE_FAULT);
	EXPECT_EQ(c.cr2, va);
	page_free_phys(phys, 0);
}

/* Unmapping frees the page tables it leaves empty: the space's table
 * count and the free-page count come back to where they were. */
KTEST(vm, unmap_frees_empty_tables)
{
	uint64_t phys = page_alloc_phys(0, PAGE_OWNER_TEST);
	/* Two pages in one PD (one 1 GiB slot), in different PTs. */
	uint64_t va = TEST_VA(40) + 3 * PT_LEVEL_SIZE(2) + 5 * PAGE_SIZE;
	uint64_t nb = TEST_VA(40) + PT_LEVEL_SIZE(3) - PAGE_SIZE;
	uint64_t tables, free_before;
	struct vm_translation t;

	ASSERT_NE(phys, PAGE_ALLOC_FAILED);
	ASSERT_EQ(vm_map(&kernel_space, nb, phys, 1, 0, MEMTYPE_WB, 0), VM_OK);
	tables = kernel_space.table_pages;
	free_before = page_alloc_free_pages();
	ASSERT_EQ(vm_map(&kernel_space, va, phys, 1, 0, MEMTYPE_WB, 0), VM_OK);
	EXPECT_EQ(kernel_space.table_pages, tables + 1); /* a new PT */
	ASSERT_EQ(vm_unmap(&kernel_space, va, 1), VM_OK);
	EXPECT_FALSE(vm_translate(&kernel_space, va, &t));
	EXPECT_EQ(kernel_space.table_pages, tables); /* the PT is gone */
	EXPECT_EQ(page_alloc_free_pages(), free_before);
	/* The neighbour keeps the PD alive; unmapping it frees its PT and
	 * then the PD (the PDPT above stays: it may be shared). */
	EXPECT_TRUE(vm_translate(&kernel_space, nb, &t));
	ASSERT_EQ(vm_unmap(&kernel_space, nb, 1), VM_OK);
	EXPECT_EQ(kernel_space.table_pages, tables - 2);
	page_free_phys(phys, 0);
}

KTEST(vm, protect_read_only_faults_on_write)
{
	uint64_t phys = page_alloc_phys(0, PAGE_OWNER_TEST);
	uint64_t va = TEST_VA(2);
	struct trap_caught c;

	ASSERT_NE(phys, PAGE_ALLOC_FAILED);
	ASSERT_EQ(vm_map(&kernel_space, va, phys, 1, VM_WRITE, MEMTYPE_WB, 0),
		  VM_OK);
	trap_try(touch_write, (void *)va, &c);
	EXPECT_FALSE(c.faulted);
	ASSERT_EQ(vm_protect(&kernel_space, va, 1, 0), VM_OK);
	trap_try(touch_write, (void *)va, &c);
	EXPECT_TRUE(c.faulted);
	EXPECT_EQ(c.error_code & (PF_ERR_PRESENT | PF_ERR_WRITE),
		  PF_ERR_PRESENT | PF_ERR_WRITE);
	trap_try(touch_read, (void *)va, &c);
	EXPECT_FALSE(c.faulted);
	vm_unmap(&kernel_space, va, 1);
	page_free_phys(phys, 0);
}

/* Every memory type at every page size, written through vm_map and read
 * back from the live entry, with the PAT bit at 7 or 12. */
KTEST(vm, memtype_encoding_all_sizes)
{
	static const enum memtype types[] = {MEMTYPE_WB, MEMTYPE_WT,
					     MEMTYPE_WC, MEMTYPE_UC_MINUS,
					     MEMTYPE_UC, MEMTYPE_WP};
	/* Nothing is accessed through these mappings, so any physical
	 * address will do: use a 1 GiB-aligned one inside RAM's range. */
	for (int level = 1; level <= 3; level++) {
		uint64_t size = PT_LEVEL_SIZE(level);

		if (level == 3 && !cpu_has(FEAT_PDPE1GB)) {
			ktest_diag("no 1 GiB pages on this CPU: level 3 skipped");
			continue;
		}
		for (unsigned i = 0; i < ARRAY_SIZE(types); i++) {
			/* A fresh slot per size and type: each mapping is
			 * checked on its own. */
			uint64_t va = TEST_VA(8 + 8 * level + i);
			struct vm_translation t;

			ASSERT_EQ(vm_map(&kernel_space, va, 0,
					 size >> PAGE_SHIFT, 0, types[i],
					 VM_MAP_LARGE),
				  VM_OK);
			ASSERT_TRUE(vm_translate(&kernel_space, va, &t));
			EXPECT_EQ(t.level, level);
			EXPECT_EQ(t.memtype, types[i]);
			EXPECT_EQ(t.pte & pte_memtype_mask(level == 1 ?
						PAGE_SIZE_4K : level == 2 ?
						PAGE_SIZE_2M : PAGE_SIZE_1G),
				  memtype_to_pte_bits(types[i],
					level == 1 ? PAGE_SIZE_4K :
					level == 2 ? PAGE_SIZE_2M :
						     PAGE_SIZE_1G));
			if (types[i] == MEMTYPE_WP || types[i] == MEMTYPE_WT)
				/* PAT indices 5 and 7 need the PAT bit. */
				EXPECT_NE(t.pte & (level == 1 ? PTE_PAT_4K :
								  PTE_PAT_LARGE),
					  0);
			ASSERT_EQ(vm_unmap(&kernel_space, va, size >> PAGE_SHIFT),
				  VM_OK);
		}
	}
}

/* Changing one 4 KiB page inside a large page splits it and leaves the
 * neighbours as they were. */
KTEST(vm, split_keeps_neighbours)
{
	uint64_t va = TEST_VA(20), size = PT_LEVEL_SIZE(2);
	struct vm_translation t;

	ASSERT_EQ(vm_map(&kernel_space, va, size, size >> PAGE_SHIFT, 0,
			 MEMTYPE_WB, VM_MAP_LARGE),
		  VM_OK);
	ASSERT_TRUE(vm_translate(&kernel_space, va, &t));
	EXPECT_EQ(t.level, 2);
	ASSERT_EQ(vm_set_memtype(&kernel_space, va + 5 * PAGE_SIZE, 1,
				 MEMTYPE_UC),
		  VM_OK);
	ASSERT_TRUE(vm_translate(&kernel_space, va + 5 * PAGE_SIZE, &t));
	EXPECT_EQ(t.level, 1);
	EXPECT_EQ(t.memtype, MEMTYPE_UC);
	EXPECT_EQ(t.phys, size + 5 * PAGE_SIZE);
	ASSERT_TRUE(vm_translate(&kernel_space, va + 4 * PAGE_SIZE + 12, &t));
	EXPECT_EQ(t.memtype, MEMTYPE_WB);
	EXPECT_EQ(t.phys, size + 4 * PAGE_SIZE + 12);
	ASSERT_TRUE(vm_translate(&kernel_space, va + size - 8, &t));
	EXPECT_EQ(t.phys, 2 * size - 8);
	EXPECT_EQ(vm_unmap(&kernel_space, va, size >> PAGE_SHIFT), VM_OK);
}

/* A second view of RAM with another type retypes the direct-map alias,
 * and unmapping it restores WB. */
KTEST(vm, alias_follows_memtype)
{
	uint64_t phys = page_alloc_phys(2, PAGE_OWNER_TEST);
	uint64_t va = TEST_VA(21);
	struct vm_translation t;

	ASSERT_NE(phys, PAGE_ALLOC_FAILED);
	ASSERT_EQ(vm_map_ram(&kernel_space, va, phys, 4, VM_WRITE, MEMTYPE_WC),
		  VM_OK);
	for (int i = 0; i < 4; i++) {
		ASSERT_TRUE(vm_translate(&kernel_space,
					 (uint64_t)phys_to_virt(phys) +
						 i * PAGE_SIZE,
					 &t));
		EXPECT_EQ(t.memtype, MEMTYPE_WC);
		ASSERT_TRUE(vm_translate(&kernel_space, va + i * PAGE_SIZE, &t));
		EXPECT_EQ(t.memtype, MEMTYPE_WC);
	}
	*(volatile uint32_t *)va = 0xfeedu;
	__asm__ volatile("sfence" : : : "memory");
	EXPECT_EQ(*(volatile uint32_t *)phys_to_virt(phys), 0xfeedu);
	ASSERT_EQ(vm_unmap_ram(&kernel_space, va, phys, 4), VM_OK);
	ASSERT_TRUE(vm_translate(&kernel_space, (uint64_t)phys_to_virt(phys),
				 &t));
	EXPECT_EQ(t.memtype, MEMTYPE_WB);
	page_free_phys(phys, 2);
}

KTEST(vm, kernel_image_is_w_xor_x)
{
	extern char __text_start[], __rodata_start[], __data_start[];
	struct vm_translation t;

	ASSERT_TRUE(vm_translate(&kernel_space, (uint64_t)__text_start, &t));
	EXPECT_EQ(t.pte & (PTE_W | PTE_NX), 0);
	ASSERT_TRUE(vm_translate(&kernel_space, (uint64_t)__rodata_start, &t));
	EXPECT_EQ(t.pte & (PTE_W | PTE_NX), PTE_NX);
	ASSERT_TRUE(vm_translate(&kernel_space, (uint64_t)__data_start, &t));
	EXPECT_EQ(t.pte & (PTE_W | PTE_NX), PTE_W | PTE_NX);
	{
		/* A frame of our own: any other one of the direct map may be
		 * a stack's unmapped guard page. */
		uint64_t phys = page_alloc_phys(0, PAGE_OWNER_TEST);

		ASSERT_NE(phys, PAGE_ALLOC_FAILED);
		EXPECT_TRUE(vm_translate(&kernel_space,
					 (uint64_t)phys_to_virt(phys), &t));
		EXPECT_EQ(t.pte & (PTE_W | PTE_NX), PTE_W | PTE_NX);
		page_free_phys(phys, 0);
	}
	/* Nothing in the lower half: the boot identity map is gone. */
	EXPECT_FALSE(vm_translate(&kernel_space, 0x200000, &t));
	EXPECT_FALSE(vm_translate(&kernel_space, 0, &t));
}

KTEST(vm, stack_guard_page_unmapped)
{
	struct vm_translation t;
	struct trap_caught c;

	EXPECT_FALSE(vm_translate(&kernel_space, (uint64_t)boot_stack_guard, &t));
	EXPECT_TRUE(vm_translate(&kernel_space,
				 (uint64_t)boot_stack_guard + PAGE_SIZE, &t));
	trap_try(touch_read, boot_stack_guard + 64, &c);
	EXPECT_TRUE(c.faulted);
	EXPECT_EQ(c.vector, VEC_PAGE_FAULT);
}

KTEST(vm, direct_map_uses_large_pages)
{
	const struct fwmap *m = page_alloc_fwmap();
	struct vm_translation t;
	size_t iter = 0;
	uint64_t base, end, big = PT_LEVEL_SIZE(2);
	bool found = false;

	/* The first usable range holding a whole aligned 2 MiB block must
	 * be mapped by a large page (levels 2 or 3). */
	while (fwmap_next_usable(m, &iter, &base, &end)) {
		uint64_t b = ALIGN_UP(base, big);

		if (b + big > end)
			continue;
		ASSERT_TRUE(vm_translate(&kernel_space, DIRECT_MAP_BASE + b, &t));
		EXPECT_GE(t.level, 2);
		EXPECT_EQ(t.phys, b);
		found = true;
		break;
	}
	EXPECT_TRUE(found);
}

KTEST(pat, boot_cpu_layout_read_back)
{
	char why[64];

	if (!cpu_has(FEAT_PAT))
		KTEST_SKIP("no PAT on this CPU");
	EXPECT_EQ(pat_read(), pat_layout_msr_value());
	EXPECT_EQ(pat_check_layout(pat_read(), why, sizeof(why)), -1);
}

struct remote_read {
	uint64_t va;
	uint64_t value;
};

static void read_remote(void *arg)
{
	struct remote_read *r = arg;

	r->value = *(volatile uint64_t *)r->va;
}

/*
 * Another CPU caches a translation, we point the page elsewhere: after
 * the shootdown it must read the new frame. (QEMU keeps a software TLB
 * per vCPU, so a missing shootdown shows here too.)
 */
KTEST(vm, shootdown_reaches_other_cpus)
{
	uint64_t a = page_alloc_phys(0, PAGE_OWNER_TEST);
	uint64_t b = page_alloc_phys(0, PAGE_OWNER_TEST);
	uint64_t before = smp_tlb_shootdowns();
	struct remote_read r = {TEST_VA(30), 0};
	struct cpumask other;
	unsigned target = smp_this_cpu() == 0 ? 1 : 0;

	if (smp_cpus_online() < 2 || !smp_cpu_online(target)) {
		page_free_phys(a, 0);
		page_free_phys(b, 0);
		KTEST_SKIP("needs a second CPU");
	}
	ASSERT_NE(a, PAGE_ALLOC_FAILED);
	ASSERT_NE(b, PAGE_ALLOC_FAILED);
	*(uint64_t *)phys_to_virt(a) = 0xaaaa;
	*(uint64_t *)phys_to_virt(b) = 0xbbbb;
	cpumask_clear(&other);
	cpumask_set(&other, target);

	ASSERT_EQ(vm_map(&kernel_space, r.va, a, 1, 0, MEMTYPE_WB, 0), VM_OK);
	smp_call(&other, read_remote, &r, true);
	EXPECT_EQ(r.value, 0xaaaa);
	ASSERT_EQ(vm_map(&kernel_space, r.va, b, 1, 0, MEMTYPE_WB,
			 VM_MAP_REPLACE),
		  VM_OK);
	smp_call(&other, read_remote, &r, true);
	EXPECT_EQ(r.value, 0xbbbb);
	EXPECT_GT(smp_tlb_shootdowns(), before);
	vm_unmap(&kernel_space, r.va, 1);
	page_free_phys(a, 0);
	page_free_phys(b, 0);
}
