/*
 * Memory types: the portable half of x86 cache control.
 *
 * Follows the Intel SDM vol. 3A, chapter "Memory Cache Control": the
 * memory-type encodings, the Page Attribute Table (PAT), the PWT/PCD/PAT
 * bits of a paging entry, the MTRRs (fixed and variable ranges) and the
 * table "Effective Page-Level Memory Types for Pentium III and More
 * Recent Processor Families" that combines an MTRR type with a PAT type.
 *
 * Nothing here touches hardware: the arch code reads IA32_PAT and the
 * MTRR MSRs into the structures below, and writes pat_layout_msr_value().
 * Seed 000 maps trace buffers WB, WC, UC or WT on request; this is the
 * arithmetic behind that request.
 */
#ifndef MM_MEMTYPE_H
#define MM_MEMTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Architectural memory-type encodings (SDM "Memory Types That Can Be
 * Encoded in MTRRs" and "Memory Types That Can Be Encoded With PAT").
 * 2 and 3 are reserved everywhere; 7 (UC-) exists only in the PAT.
 */
enum memtype {
	MEMTYPE_UC = 0,		/* uncacheable, strongly ordered */
	MEMTYPE_WC = 1,		/* write-combining: uncached, writes buffered */
	MEMTYPE_WT = 4,		/* write-through */
	MEMTYPE_WP = 5,		/* write-protected */
	MEMTYPE_WB = 6,		/* write-back */
	MEMTYPE_UC_MINUS = 7,	/* UC, but an MTRR WC may override it */
	/* Not an encoding: a reserved value or an undefined combination. */
	MEMTYPE_UNDEFINED = 0xff,
};

/* Number of distinct memory types (UC, WC, WT, WP, WB, UC-). */
#define MEMTYPE_COUNT 6
/* The six types in a fixed order, for callers that iterate over them. */
extern const enum memtype memtype_all[MEMTYPE_COUNT];

/* True for the six encodings above (not for reserved values). */
bool memtype_valid(unsigned int encoding);
/* "WB", "WC", "UC-", "UC", "WP", "WT"; "undefined" for anything else. */
const char *memtype_name(enum memtype t);
/*
 * Parse a name as printed by memtype_name() (case-insensitive; "UC_MINUS"
 * is accepted for UC-). Returns MEMTYPE_UNDEFINED when unknown.
 */
enum memtype memtype_from_name(const char *name);

/* ---------------------------------------------------------------------
 * Page Attribute Table
 * ---------------------------------------------------------------------
 * IA32_PAT (MSR 0x277, MSR_PAT in arch/x86_64/msr.h) holds eight
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

/* The layout the kernel programs; see the table in mm/memtype.c. */
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

/* ---------------------------------------------------------------------
 * Paging-entry memory-type bits
 * ---------------------------------------------------------------------
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

/* ---------------------------------------------------------------------
 * MTRRs
 * ---------------------------------------------------------------------
 * The MTRR encodings are the memory-type encodings above minus UC-.
 */
enum mtrr_type {
	MTRR_TYPE_UC = MEMTYPE_UC,
	MTRR_TYPE_WC = MEMTYPE_WC,
	MTRR_TYPE_WT = MEMTYPE_WT,
	MTRR_TYPE_WP = MEMTYPE_WP,
	MTRR_TYPE_WB = MEMTYPE_WB,
};

/* True if encoding is one an MTRR may hold. */
bool mtrr_type_valid(unsigned int encoding);

/*
 * MSR numbers belong to arch/x86_64/msr.h; only what the portable side
 * needs to describe the register file is here, under names that do not
 * clash with it: variable range n is the pair below.
 */
#define MTRR_PHYSBASE_MSR(n)	(0x200 + 2 * (n))
#define MTRR_PHYSMASK_MSR(n)	(0x201 + 2 * (n))

/* IA32_MTRRCAP */
#define MTRRCAP_VCNT_MASK	0xffull
#define MTRRCAP_FIX		(1ull << 8)
#define MTRRCAP_WC		(1ull << 10)
#define MTRRCAP_SMRR		(1ull << 11)

/* IA32_MTRR_DEF_TYPE */
#define MTRR_DEF_TYPE_MASK	0xffull
#define MTRR_DEF_TYPE_FE	(1ull << 10)	/* fixed ranges enabled */
#define MTRR_DEF_TYPE_E		(1ull << 11)	/* MTRRs enabled */

/* IA32_MTRR_PHYSBASEn / PHYSMASKn */
#define MTRR_PHYSBASE_TYPE_MASK	0xffull
#define MTRR_PHYSMASK_VALID	(1ull << 11)
#define MTRR_ADDR_SHIFT		12	/* bits 12..MAXPHYADDR-1 hold addresses */
#define MTRR_MIN_PHYS_BITS	32
#define MTRR_MAX_PHYS_BITS	52

/*
 * Fixed ranges cover the first MiB: 8 x 64 KiB from 0, 16 x 16 KiB from
 * 0x80000, 64 x 4 KiB from 0xC0000. Eleven MSRs each hold eight one-byte
 * types, lowest range in the lowest byte; range i lives in MSR i / 8,
 * byte i % 8, in the order of mtrr_fixed_msr[].
 */
#define MTRR_NUM_FIXED_MSRS	11
#define MTRR_RANGES_PER_FIXED	8
#define MTRR_NUM_FIXED_RANGES	(MTRR_NUM_FIXED_MSRS * MTRR_RANGES_PER_FIXED)
#define MTRR_FIXED_END		0x100000ull	/* fixed ranges stop at 1 MiB */

/* MSR numbers of the fixed-range registers, in the order of fixed[]. */
extern const uint32_t mtrr_fixed_msr[MTRR_NUM_FIXED_MSRS];

/*
 * Variable ranges the structure has room for. VCNT is 8 on most parts
 * (QEMU: 8); the arch code must clamp to this and say so if VCNT is larger.
 */
#define MTRR_MAX_VAR_RANGES	32

struct mtrr_var_range {
	uint64_t base;		/* raw IA32_MTRR_PHYSBASEn */
	uint64_t mask;		/* raw IA32_MTRR_PHYSMASKn */
};

/* What the arch code reads from the MTRR MSRs, as plain data. */
struct mtrr_state {
	/* IA32_MTRRCAP */
	unsigned int vcnt;		/* variable ranges implemented */
	bool fixed_supported;
	bool wc_supported;
	/* IA32_MTRR_DEF_TYPE */
	bool enabled;
	bool fixed_enabled;
	uint8_t default_type;		/* raw encoding */
	/* The fixed-range MSRs, raw, in the order of mtrr_fixed_msr[]. */
	uint64_t fixed[MTRR_NUM_FIXED_MSRS];
	/* vcnt (at most MTRR_MAX_VAR_RANGES) PHYSBASE/PHYSMASK pairs. */
	struct mtrr_var_range var[MTRR_MAX_VAR_RANGES];
	/* MAXPHYADDR (CPUID 0x80000008 EAX[7:0]); masks are this wide. */
	unsigned int phys_addr_bits;
};

/*
 * Fill the capability and default-type fields of *s from raw MTRRCAP and
 * MTRR_DEF_TYPE values and clear everything else. vcnt is clamped to
 * MTRR_MAX_VAR_RANGES. phys_addr_bits must be 32..52.
 */
void mtrr_state_init(struct mtrr_state *s, uint64_t cap, uint64_t def_type,
		     unsigned int phys_addr_bits);

/* Start and length of fixed range i (0..MTRR_NUM_FIXED_RANGES-1). */
void mtrr_fixed_range(unsigned int i, uint64_t *start, uint64_t *len);
/* Raw type byte of fixed range i. */
uint8_t mtrr_fixed_type(const struct mtrr_state *s, unsigned int i);

/* Address bits (12..phys_addr_bits-1) that PHYSBASE/PHYSMASK hold. */
uint64_t mtrr_addr_mask(const struct mtrr_state *s);
/* True if variable range n is valid (V bit set) and n < vcnt. */
bool mtrr_var_enabled(const struct mtrr_state *s, unsigned int n);
/*
 * Base and size of variable range n. Returns false if its mask is not
 * contiguous (legal but odd: the range is then a set of aliases) and
 * *size is left 0.
 */
bool mtrr_var_extent(const struct mtrr_state *s, unsigned int n,
		     uint64_t *base, uint64_t *size);

/*
 * MTRR memory type of physical address phys, by the SDM's precedence:
 * MTRRs disabled -> UC; below 1 MiB with fixed ranges enabled -> the fixed
 * range; else the variable ranges: none matches -> default type, one ->
 * its type, several -> the same type if all agree, UC if any is UC, WT if
 * they are only WT and WB, and MEMTYPE_UNDEFINED otherwise (also for a
 * reserved encoding), for the caller to warn about.
 */
enum memtype mtrr_type_of(const struct mtrr_state *s, uint64_t phys);

/*
 * Notes the SDM attaches to entries of the combination table.
 *  FROM_MTRR_UC: the UC came from the MTRRs; no snoop needed (footnote 1).
 *  FROM_PAT_UC: the UC came from the paging entry; caches are still
 *    checked because of possible aliasing, which is not recommended
 *    (footnote 2).
 *  FORMERLY_UNDEFINED: earlier SDM editions called this combination
 *    undefined; today all PAT+MTRR processors behave as listed (fn. 3).
 */
#define MEMTYPE_NOTE_FROM_MTRR_UC	(1u << 0)
#define MEMTYPE_NOTE_FROM_PAT_UC	(1u << 1)
#define MEMTYPE_NOTE_FORMERLY_UNDEFINED	(1u << 2)

/*
 * Effective memory type of a page whose MTRR type is mtrr (UC, WC, WT, WP
 * or WB) and whose PAT entry holds pat (one of the six types), with CR0.CD
 * and CR0.NW clear. *notes (if not NULL) receives MEMTYPE_NOTE_* flags.
 * Returns MEMTYPE_UNDEFINED for any other input, e.g. an MTRR type that
 * mtrr_type_of() reported as undefined.
 */
enum memtype effective_memtype(enum memtype mtrr, enum memtype pat,
			       unsigned int *notes);

/*
 * Hand each line of a readable MTRR dump (no trailing newline) to emit:
 * capabilities, default type, fixed ranges collapsed into runs of equal
 * type, each enabled variable range as base/size/type.
 */
void mtrr_dump(const struct mtrr_state *s,
	       void (*emit)(void *arg, const char *line), void *arg);
/* mtrr_dump() to the console, each line prefixed with "mtrr: ". */
void mtrr_print(const struct mtrr_state *s);

#endif
