/*
 * Memory-type range registers (Intel SDM vol. 3A, "Memory Cache Control"):
 * the MTRR state as plain data, the type the MTRRs give a physical
 * address, and the table "Effective Page-Level Memory Types for Pentium
 * III and More Recent Processor Families" that combines an MTRR type with
 * a PAT type. Portable arithmetic, host-tested (tests/host/test_memtype.c):
 * arch/x86_64/pat.c reads the MSRs into a struct mtrr_state.
 */
#ifndef ARCH_X86_64_MTRR_H
#define ARCH_X86_64_MTRR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/x86_64/msr.h"
#include "mm/memtype.h"

/* ---- MTRRs -------------------------------------------------------------- */
/*
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

/* The MSRs of variable range n (numbers: arch/x86_64/msr.h). */
#define MTRR_PHYSBASE_MSR(n)	(MSR_MTRR_PHYSBASE0 + 2 * (n))
#define MTRR_PHYSMASK_MSR(n)	(MSR_MTRR_PHYSMASK0 + 2 * (n))

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
 * End (exclusive, at most limit) of the run of addresses from phys on
 * that all have phys's MTRR type: the first range boundary (a fixed
 * range's end, a variable range's base or end) where the type changes.
 * A variable range with a non-contiguous mask makes every page a
 * boundary. phys < limit <= 2^phys_addr_bits; phys 4 KiB aligned, the
 * result too (or limit).
 */
uint64_t mtrr_run_end(const struct mtrr_state *s, uint64_t phys,
		      uint64_t limit);

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
enum memtype mtrr_pat_combine(enum memtype mtrr, enum memtype pat,
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
