/*
 * x86_64 4-level paging: entry bits and address decomposition
 * (SDM vol. 3A, 4.5). A 48-bit virtual address splits as
 *
 *   63      48 47    39 38    30 29    21 20    12 11          0
 *  +----------+--------+--------+--------+--------+-------------+
 *  | sign ext | PML4   | PDPT   | PD     | PT     | offset      |
 *  +----------+--------+--------+--------+--------+-------------+
 *                 L4       L3       L2       L1
 *
 * A PDPT entry with PS maps 1 GiB, a PD entry with PS maps 2 MiB; the
 * memory-type bits (PWT, PCD, PAT) are in arch/x86_64/pat_layout.h,
 * where the PAT bit's two positions (bit 7 in a 4 KiB entry, bit 12 in a
 * large one) are handled.
 */
#ifndef ARCH_X86_64_PGTABLE_H
#define ARCH_X86_64_PGTABLE_H

#include <stdint.h>

#define PTE_P (1ull << 0) /* present */
#define PTE_W (1ull << 1) /* writable */
#define PTE_U (1ull << 2) /* user accessible */
#define PTE_A (1ull << 5) /* accessed */
#define PTE_D (1ull << 6) /* dirty */
#define PTE_PS (1ull << 7) /* large page (levels 2 and 3 only) */
#define PTE_G (1ull << 8) /* global: survives CR3 reloads */
#define PTE_NX (1ull << 63) /* no execute (EFER.NXE) */

#define PTE_ADDR_MASK 0x000ffffffffff000ull /* bits 12..51 */

#define PT_ENTRIES 512
#define PT_LEVELS 4
#define PT_INDEX_BITS 9
#define PT_LEVEL_SHIFT(level) (12 + PT_INDEX_BITS * ((level)-1))
#define PT_LEVEL_SIZE(level) (1ull << PT_LEVEL_SHIFT(level))
#define PT_INDEX(va, level)                                                 \
	(((va) >> PT_LEVEL_SHIFT(level)) & (PT_ENTRIES - 1))


/* Address bits of a leaf at this level (large leaves keep bit 12 for PAT). */
static inline uint64_t pte_leaf_addr(uint64_t pte, int level)
{
	return pte & PTE_ADDR_MASK & ~(PT_LEVEL_SIZE(level) - 1);
}

static inline int pte_is_leaf(uint64_t pte, int level)
{
	return level == 1 || (pte & PTE_PS);
}

/* The first kernel-half PML4 slot: entries from here on are shared by
 * every address space. */
#define PML4_KERNEL_FIRST 256

#endif
