/*
 * The Page Attribute Table as the kernel lays it out, and the PWT/PCD/PAT
 * bits of a paging entry that select an entry of it (Intel SDM vol. 3A,
 * "Page Attribute Table"). Portable arithmetic on register and entry
 * values, host-tested (tests/host/test_memtype.c): arch/x86_64/pat.c
 * writes pat_layout_msr_value() to IA32_PAT, arch/x86_64/paging.c builds
 * entries with memtype_to_pte_bits().
 */
#ifndef ARCH_X86_64_PAT_LAYOUT_H
#define ARCH_X86_64_PAT_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "mm/memtype.h"

/* ---- Page Attribute Table ----------------------------------------------- */
/*
 * IA32_PAT (MSR_PAT in arch/x86_64/msr.h) holds eight
 * entries, one per byte; only bits 0-2 of each byte are defined, bits 3-7
 * are reserved (writing them faults):
 *
 *   63    56 55    48 47    40 39    32 31    24 23    16 15     8 7      0
 *  +--------+--------+--------+--------+--------+--------+--------+--------+
 *  |  PAT7  |  PAT6  |  PAT5  |  PAT4  |  PAT3  |  PAT2  |  PAT1  |  PAT0  |
 *  +--------+--------+--------+--------+--------+--------+--------+--------+
 */
#define PAT_NUM_ENTRIES		8
#define PAT_ENTRY_BITS		8
#define PAT_ENTRY_TYPE_MASK	0x7u
#define PAT_ENTRY_RESERVED_MASK	0xf8u

/* The layout the kernel programs; see the table in arch/x86_64/pat_layout.c. */
extern const enum memtype pat_layout[PAT_NUM_ENTRIES];

/* The IA32_PAT value that programs pat_layout. */
uint64_t pat_layout_msr_value(void);
/*
 * Decode an IA32_PAT value into out[0..7]. Entries with a reserved
 * encoding or reserved bits set decode as MEMTYPE_UNDEFINED; returns false
 * if there was any such entry.
 */
bool pat_decode(uint64_t value, enum memtype out[PAT_NUM_ENTRIES]);
/*
 * Compare a read-back IA32_PAT value with pat_layout. Returns -1 when they
 * match, else the index of the first differing entry, and (if msg is not
 * NULL) writes e.g. "PAT5 is WT, expected WP" into msg.
 */
int pat_check_layout(uint64_t value, char *msg, size_t msg_size);

/* ---- Paging-entry memory-type bits -------------------------------------- */
/*
 * The PAT index of a translation is PAT*4 + PCD*2 + PWT. PWT and PCD sit
 * at bits 3 and 4 of every level; the PAT bit is bit 7 in a 4 KiB PTE but
 * bit 12 in a 2 MiB / 1 GiB entry, where bit 7 is PS (page size).
 */
enum page_size {
	PAGE_SIZE_4K,
	PAGE_SIZE_2M,
	PAGE_SIZE_1G,
};

#define PTE_PWT		(1ull << 3)
#define PTE_PCD		(1ull << 4)
#define PTE_PAT_4K	(1ull << 7)
#define PTE_PAT_LARGE	(1ull << 12)

#define PAT_INDEX_PWT	1u	/* weight of PWT in the PAT index */
#define PAT_INDEX_PCD	2u	/* weight of PCD */
#define PAT_INDEX_PAT	4u	/* weight of the PAT bit */

/* The PAT bit of an entry mapping a page of this size. */
uint64_t pte_pat_bit(enum page_size size);
/* Every memory-type bit (PWT | PCD | PAT) of an entry of this size. */
uint64_t pte_memtype_mask(enum page_size size);
/*
 * PWT/PCD/PAT bits selecting type t through pat_layout (the lowest PAT
 * index holding t, so the PAT bit is used only when necessary). t must be
 * one of the six types.
 */
uint64_t memtype_to_pte_bits(enum memtype t, enum page_size size);
/* The PAT index selected by an entry (other bits of pte are ignored). */
unsigned int pte_pat_index(uint64_t pte, enum page_size size);
/* The memory type an entry selects under pat_layout. */
enum memtype pte_bits_to_memtype(uint64_t pte, enum page_size size);

#endif
