/*
 * The kernel's address space on x86_64: what vm_init() maps, and the
 * layout facts portable mm/ code asks for through mm/vm.h. Changing a
 * memory type later is arch/x86_64/set_memory.c. See docs/mm.md for the
 * layout:
 *
 *   0xffff800000000000  direct map: RAM, ACPI data and small firmware
 *                       ranges, WB, RW, NX, global; MMIO on request
 *   0xffffffff80200000+ kernel image: text RX, rodata R NX, data+bss RW NX
 *                       (the page under the boot stack left unmapped)
 *
 * Nothing is mapped in the lower half: a NULL dereference faults.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/pat.h"
#include "arch/x86_64/pgtable.h"
#include "arch/x86_64/tlb.h"
#include "lib/assert.h"
#include "lib/kprintf.h"
#include "lib/panic.h"
#include "mm/cachemodel.h"
#include "mm/fwmap.h"
#include "mm/page_alloc.h"
#include "mm/vm.h"

/* Firmware "reserved" ranges up to this size below 4 GiB are mapped: on
 * SeaBIOS the ACPI tables live in one. Larger ones are PCI windows. */
#define FIRMWARE_RANGE_MAX (64ull << 20)
#define FOUR_GIB (4ull << 30)

struct addr_space kernel_space;
static bool ready;

extern char boot_stack_guard[];

bool vm_ready(void)
{
	return ready;
}

uint64_t vm_early_map_end(void)
{
	return EARLY_DIRECT_MAP_SIZE;
}

void vm_kernel_image_phys(uint64_t *start, uint64_t *end)
{
	*start = (uint64_t)__kernel_phys_start;
	*end = (uint64_t)__kernel_phys_end;
}

static bool direct_map_wanted(const struct fwmap_entry *e)
{
	switch (e->type) {
	case FWMAP_BAD:
	case FWMAP_BEYOND_WIDTH:
		return false;
	case FWMAP_RESERVED:
		return e->base < FOUR_GIB && e->len <= FIRMWARE_RANGE_MAX;
	default:
		return true; /* RAM of any use, ACPI tables and NVS */
	}
}

static void map_or_die(uint64_t va, uint64_t pa, uint64_t npages,
		       unsigned prot, enum memtype type, unsigned flags,
		       const char *what)
{
	int err = vm_map(&kernel_space, va, pa, npages, prot, type, flags);

	if (err)
		panic("vm_init: mapping %s [%#lx, +%lu pages) failed: %s", what,
		      (unsigned long)va, (unsigned long)npages,
		      vm_strerror(err));
}

static void map_direct(void)
{
	const struct fwmap *m = page_alloc_fwmap();
	uint64_t mapped = 0;

	/* The first MiB whatever the map says: BIOS data, VGA text, the
	 * ACPI RSDP search areas. */
	map_or_die(DIRECT_MAP_BASE, 0, (1ull << 20) >> PAGE_SHIFT,
		   VM_WRITE | VM_GLOBAL, MEMTYPE_WB, VM_MAP_REPLACE,
		   "low memory");
	for (size_t i = 0; i < m->n; i++) {
		const struct fwmap_entry *e = &m->entries[i];
		uint64_t base = ALIGN_DOWN(e->base, PAGE_SIZE);
		uint64_t end = ALIGN_UP(e->base + e->len, PAGE_SIZE);

		if (!direct_map_wanted(e) || end <= (1ull << 20))
			continue;
		if (base < (1ull << 20))
			base = 1ull << 20;
		map_or_die(DIRECT_MAP_BASE + base, base,
			   (end - base) >> PAGE_SHIFT, VM_WRITE | VM_GLOBAL,
			   MEMTYPE_WB, VM_MAP_LARGE | VM_MAP_REPLACE,
			   "direct map");
		mapped += end - base;
	}
	kprintf("vm: direct map at %#lx covers %lu MiB\n",
		(unsigned long)DIRECT_MAP_BASE,
		(unsigned long)(mapped >> 20) + 1);
}

static void map_image_part(const char *start, const char *end, unsigned prot,
			   const char *what)
{
	uint64_t va = ALIGN_DOWN((uint64_t)start, PAGE_SIZE);
	uint64_t n = (ALIGN_UP((uint64_t)end, PAGE_SIZE) - va) >> PAGE_SHIFT;

	if (n)
		map_or_die(va, va - KERNEL_VMA, n, prot | VM_GLOBAL,
			   MEMTYPE_WB, 0, what);
}

static void map_kernel_image(void)
{
	uint64_t guard = (uint64_t)boot_stack_guard;

	map_image_part(__text_start, __text_end, VM_EXEC, "kernel text");
	map_image_part(__rodata_start, __rodata_end, 0, "kernel rodata");
	/* data and bss, minus the boot stack's guard page */
	map_image_part(__data_start, (const char *)guard, VM_WRITE,
		       "kernel data");
	map_image_part((const char *)guard + PAGE_SIZE, __kernel_end,
		       VM_WRITE, "kernel bss");
}

static void map_framebuffer(uint64_t phys, uint64_t bytes)
{
	uint64_t start = ALIGN_DOWN(phys, PAGE_SIZE);
	uint64_t len = ALIGN_UP(phys + bytes, PAGE_SIZE) - start;

	if (!bytes)
		return;
	/* Write-combining: pixel stores are merged into bursts, the
	 * memory type trace buffers are mapped with in seed 000. */
	map_or_die(DIRECT_MAP_BASE + start, start, len >> PAGE_SHIFT,
		   VM_WRITE | VM_GLOBAL, MEMTYPE_WC,
		   VM_MAP_LARGE | VM_MAP_REPLACE, "framebuffer");
	cachemodel_set_type(start, len >> PAGE_SHIFT, MEMTYPE_WC);
}

void vm_init(uint64_t fb_phys, uint64_t fb_bytes)
{
	int err = vm_space_init(&kernel_space, "kernel");

	if (err)
		panic("vm_init: no page for the kernel's PML4: %s",
		      vm_strerror(err));
	/* Every kernel top-level entry now, so that spaces created later
	 * share the kernel half exactly. */
	vm_kernel_half_precreate();
	map_direct();
	map_kernel_image();
	map_framebuffer(fb_phys, fb_bytes);

	if (!pat_program())
		kprintf("vm: PAT not programmed as wanted; memory types other "
			"than WB, WT, UC-, UC are not available\n");
	write_cr3(kernel_space.root_phys);
	tlb_flush_local_all();
	ready = true;
	page_alloc_enable_high();
	kprintf("vm: kernel page tables at %#lx (%lu table pages); boot "
		"identity map dropped\n", (unsigned long)kernel_space.root_phys,
		(unsigned long)kernel_space.table_pages);
}
