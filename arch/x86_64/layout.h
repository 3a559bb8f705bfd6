/*
 * The kernel's virtual address layout (see docs/boot.md, docs/mm.md):
 *
 *   0x0000000000000000  identity map of 0-4 GiB (boot only; dropped by mm)
 *   0xffff800000000000  DIRECT_MAP_BASE: all RAM, phys + DIRECT_MAP_BASE
 *   0xffffc90000000000  VMAP_BASE: run-time mappings (1 TiB)
 *   0xffffffff80000000  KERNEL_VMA: the kernel image (phys + KERNEL_VMA)
 */
#ifndef ARCH_X86_64_LAYOUT_H
#define ARCH_X86_64_LAYOUT_H

#include <stdint.h>
#include "asm/direct_map.h"
#include "lib/config.h"
#include "mm/direct_map.h"

/* Mappings made at run time (second views of RAM, test mappings). */
#define VMAP_BASE 0xffffc90000000000ul
#define VMAP_SIZE (1ul << 40)
/* Covered by the boot page tables until mm/ builds the real ones. */
#define EARLY_DIRECT_MAP_SIZE (4ul << 30)

/*
 * The direct-map address of phys. Once vm_init() has run, only RAM, ACPI
 * data and the first MiB are mapped there: device registers (LAPIC,
 * IOAPIC, HPET) must be mapped first with phys_map(pa, len, MEMTYPE_UC)
 * from mm/vm.h, which returns this same address.
 */
static inline void *phys_to_virt(uint64_t phys)
{
	return vm_phys_to_virt(phys);
}

static inline uint64_t virt_to_phys(const void *v)
{
	uint64_t a = (uint64_t)v;

	return a >= KERNEL_VMA ? a - KERNEL_VMA : a - DIRECT_MAP_BASE;
}

/* Linker-script symbols (linker.ld). */
extern char __kernel_phys_start[], __kernel_phys_end[];
extern char __text_start[], __text_end[], __rodata_start[], __rodata_end[];
extern char __data_start[], __data_end[], __bss_start[], __bss_end[];
extern char __kernel_end[];

#endif
