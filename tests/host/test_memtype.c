/*
 * Host tests for mm/memtype.c (names) and the x86 arithmetic behind
 * them, arch/x86_64/pat_layout.c and arch/x86_64/mtrr.c: the PAT layout
 * and its MSR value, PTE memory-type bits at every page size, MTRR lookup
 * on synthetic states, and the MTRR x PAT table of the Intel SDM vol. 3A
 * ("Effective Page-Level Memory Types for Pentium III and More Recent
 * Processor Families") transcribed here entry by entry, independently of
 * the rules the implementation uses.
 */
// HOST_SRCS: mm/memtype.c arch/x86_64/pat_layout.c arch/x86_64/mtrr.c
#include <stdint.h>
#include <string.h>
#include "lib/compiler.h"
#include "lib/ktest.h"
#include "arch/x86_64/mtrr.h"
#include "arch/x86_64/pat_layout.h"
#include "mm/memtype.h"
#include "tests/host/host_shim.h"

/* ---- Names -------------------------------------------------------------- */

KTEST(memtype, names_and_encodings)
{
	EXPECT_EQ(MEMTYPE_UC, 0);
	EXPECT_EQ(MEMTYPE_WC, 1);
	EXPECT_EQ(MEMTYPE_WT, 4);
	EXPECT_EQ(MEMTYPE_WP, 5);
	EXPECT_EQ(MEMTYPE_WB, 6);
	EXPECT_EQ(MEMTYPE_UC_MINUS, 7);
	EXPECT_STREQ(memtype_name(MEMTYPE_WB), "WB");
	EXPECT_STREQ(memtype_name(MEMTYPE_WC), "WC");
	EXPECT_STREQ(memtype_name(MEMTYPE_UC_MINUS), "UC-");
	EXPECT_STREQ(memtype_name(MEMTYPE_UC), "UC");
	EXPECT_STREQ(memtype_name(MEMTYPE_WP), "WP");
	EXPECT_STREQ(memtype_name(MEMTYPE_WT), "WT");
	EXPECT_STREQ(memtype_name((enum memtype)2), "undefined");
	EXPECT_FALSE(memtype_valid(2));
	EXPECT_FALSE(memtype_valid(3));
	EXPECT_FALSE(memtype_valid(8));
	EXPECT_TRUE(memtype_valid(7));
	EXPECT_FALSE(mtrr_type_valid(7));
	EXPECT_TRUE(mtrr_type_valid(1));
}

KTEST(memtype, from_name)
{
	unsigned int i;

	for (i = 0; i < MEMTYPE_COUNT; i++)
		EXPECT_EQ(memtype_from_name(memtype_name(memtype_all[i])),
			  memtype_all[i]);
	EXPECT_EQ(memtype_from_name("wc"), MEMTYPE_WC);
	EXPECT_EQ(memtype_from_name("uc-"), MEMTYPE_UC_MINUS);
	EXPECT_EQ(memtype_from_name("UC_MINUS"), MEMTYPE_UC_MINUS);
	EXPECT_EQ(memtype_from_name("Wt"), MEMTYPE_WT);
	EXPECT_EQ(memtype_from_name("UC"), MEMTYPE_UC);
	EXPECT_EQ(memtype_from_name("WBX"), MEMTYPE_UNDEFINED);
	EXPECT_EQ(memtype_from_name("W"), MEMTYPE_UNDEFINED);
	EXPECT_EQ(memtype_from_name(""), MEMTYPE_UNDEFINED);
	EXPECT_EQ(memtype_from_name(NULL), MEMTYPE_UNDEFINED);
}

/* ---- PAT ---------------------------------------------------------------- */

/*
 * Hand-computed IA32_PAT value for WB, WC, UC-, UC, WB, WP, UC-, WT:
 * byte i = encoding of PATi, so reading bytes 7..0: 04 07 05 06 00 07 01 06.
 */
#define EXPECTED_PAT_MSR 0x0407050600070106ull
/* The power-on value: WB, WT, UC-, UC repeated. */
#define POWER_ON_PAT_MSR 0x0007040600070406ull

KTEST(pat, layout_msr_value)
{
	EXPECT_EQ(pat_layout_msr_value(), EXPECTED_PAT_MSR);
}

KTEST(pat, decode_layout)
{
	static const enum memtype want[PAT_NUM_ENTRIES] = {
		MEMTYPE_WB, MEMTYPE_WC, MEMTYPE_UC_MINUS, MEMTYPE_UC,
		MEMTYPE_WB, MEMTYPE_WP, MEMTYPE_UC_MINUS, MEMTYPE_WT,
	};
	enum memtype out[PAT_NUM_ENTRIES];
	unsigned int i;

	ASSERT_TRUE(pat_decode(EXPECTED_PAT_MSR, out));
	for (i = 0; i < PAT_NUM_ENTRIES; i++) {
		EXPECT_EQ(out[i], want[i]);
		EXPECT_EQ(pat_layout[i], want[i]);
	}
}

KTEST(pat, decode_bad_value)
{
	enum memtype out[PAT_NUM_ENTRIES];

	/* PAT3 holds the reserved encoding 2. */
	EXPECT_FALSE(pat_decode(0x0407050602070106ull, out));
	EXPECT_EQ(out[3], MEMTYPE_UNDEFINED);
	EXPECT_EQ(out[2], MEMTYPE_UC_MINUS);
	EXPECT_EQ(out[4], MEMTYPE_WB);
	/* PAT6 is WB with reserved bit 3 set (0x0e). */
	EXPECT_FALSE(pat_decode(0x040e050600070106ull, out));
	EXPECT_EQ(out[6], MEMTYPE_UNDEFINED);
	EXPECT_EQ(out[7], MEMTYPE_WT);
	/* Encoding 3 in PAT0. */
	EXPECT_FALSE(pat_decode(0x0407050600070103ull, out));
	EXPECT_EQ(out[0], MEMTYPE_UNDEFINED);
}

KTEST(pat, check_layout)
{
	char msg[64];

	EXPECT_EQ(pat_check_layout(EXPECTED_PAT_MSR, msg, sizeof(msg)), -1);
	EXPECT_STREQ(msg, "");
	/* Firmware left the power-on PAT: PAT1 is WT instead of WC. */
	EXPECT_EQ(pat_check_layout(POWER_ON_PAT_MSR, msg, sizeof(msg)), 1);
	EXPECT_STREQ(msg, "PAT1 is WT, expected WC");
	/* Only PAT7 wrong: WB instead of WT. */
	EXPECT_EQ(pat_check_layout(0x0607050600070106ull, msg, sizeof(msg)),
		  7);
	EXPECT_STREQ(msg, "PAT7 is WB, expected WT");
	EXPECT_EQ(pat_check_layout(0x0407050602070106ull, msg, sizeof(msg)),
		  3);
	EXPECT_STREQ(msg, "PAT3 is reserved 0x02, expected UC");
	EXPECT_EQ(pat_check_layout(0x0407050600070106ull, NULL, 0), -1);
}

/* ---- PTE bits ----------------------------------------------------------- */

static const enum page_size all_sizes[] = {
	PAGE_SIZE_4K, PAGE_SIZE_2M, PAGE_SIZE_1G,
};

KTEST(pte, bit_positions)
{
	EXPECT_EQ(PTE_PWT, 0x8);
	EXPECT_EQ(PTE_PCD, 0x10);
	EXPECT_EQ(PTE_PAT_4K, 0x80);
	EXPECT_EQ(PTE_PAT_LARGE, 0x1000);
	EXPECT_EQ(pte_memtype_mask(PAGE_SIZE_4K), 0x98);
	EXPECT_EQ(pte_memtype_mask(PAGE_SIZE_2M), 0x1018);
	EXPECT_EQ(pte_memtype_mask(PAGE_SIZE_1G), 0x1018);
}

KTEST(pte, encoding_per_type)
{
	/* Lowest PAT index holding each type: WB 0, WC 1, UC- 2, UC 3. */
	EXPECT_EQ(memtype_to_pte_bits(MEMTYPE_WB, PAGE_SIZE_4K), 0);
	EXPECT_EQ(memtype_to_pte_bits(MEMTYPE_WC, PAGE_SIZE_4K), 0x8);
	EXPECT_EQ(memtype_to_pte_bits(MEMTYPE_UC_MINUS, PAGE_SIZE_2M), 0x10);
	EXPECT_EQ(memtype_to_pte_bits(MEMTYPE_UC, PAGE_SIZE_1G), 0x18);
	/* WP is PAT5 and WT PAT7: the PAT bit moves with the page size. */
	EXPECT_EQ(memtype_to_pte_bits(MEMTYPE_WP, PAGE_SIZE_4K), 0x88);
	EXPECT_EQ(memtype_to_pte_bits(MEMTYPE_WP, PAGE_SIZE_2M), 0x1008);
	EXPECT_EQ(memtype_to_pte_bits(MEMTYPE_WP, PAGE_SIZE_1G), 0x1008);
	EXPECT_EQ(memtype_to_pte_bits(MEMTYPE_WT, PAGE_SIZE_4K), 0x98);
	EXPECT_EQ(memtype_to_pte_bits(MEMTYPE_WT, PAGE_SIZE_2M), 0x1018);
	EXPECT_EQ(memtype_to_pte_bits(MEMTYPE_WT, PAGE_SIZE_1G), 0x1018);
	/* Not a type: the kernel must refuse it. */
	EXPECT_TRUE(HOST_EXPECT_PANIC(
		memtype_to_pte_bits(MEMTYPE_UNDEFINED, PAGE_SIZE_4K)));
}

/* Bits a real entry carries besides the memory type. */
#define PTE_PRESENT	(1ull << 0)
#define PTE_WRITE	(1ull << 1)
#define PTE_PS		(1ull << 7)
#define PTE_NX		(1ull << 63)
#define SAMPLE_FRAME_1G	0x0000004080000000ull

KTEST(pte, round_trip_every_type_every_size)
{
	unsigned int i, k;

	for (k = 0; k < ARRAY_SIZE(all_sizes); k++) {
		enum page_size sz = all_sizes[k];
		uint64_t other = PTE_PRESENT | PTE_WRITE | PTE_NX |
				 SAMPLE_FRAME_1G;

		if (sz != PAGE_SIZE_4K)
			other |= PTE_PS;
		for (i = 0; i < MEMTYPE_COUNT; i++) {
			enum memtype t = memtype_all[i];
			uint64_t bits = memtype_to_pte_bits(t, sz);

			EXPECT_EQ(bits & ~pte_memtype_mask(sz), 0);
			EXPECT_EQ(pte_bits_to_memtype(bits | other, sz), t);
			EXPECT_EQ(pte_bits_to_memtype(bits, sz), t);
		}
	}
}

KTEST(pte, decode_every_index)
{
	/* Index 0..7 -> type, from the layout table in docs/memtypes.md. */
	static const enum memtype by_index[PAT_NUM_ENTRIES] = {
		MEMTYPE_WB, MEMTYPE_WC, MEMTYPE_UC_MINUS, MEMTYPE_UC,
		MEMTYPE_WB, MEMTYPE_WP, MEMTYPE_UC_MINUS, MEMTYPE_WT,
	};
	unsigned int idx;

	for (idx = 0; idx < PAT_NUM_ENTRIES; idx++) {
		uint64_t pte4k = (idx & 1 ? PTE_PWT : 0) |
				 (idx & 2 ? PTE_PCD : 0) |
				 (idx & 4 ? 0x80ull : 0);
		uint64_t pte2m = (idx & 1 ? PTE_PWT : 0) |
				 (idx & 2 ? PTE_PCD : 0) |
				 (idx & 4 ? 0x1000ull : 0) | PTE_PS;

		EXPECT_EQ(pte_pat_index(pte4k, PAGE_SIZE_4K), idx);
		EXPECT_EQ(pte_pat_index(pte2m, PAGE_SIZE_2M), idx);
		EXPECT_EQ(pte_bits_to_memtype(pte4k, PAGE_SIZE_4K),
			  by_index[idx]);
		EXPECT_EQ(pte_bits_to_memtype(pte2m, PAGE_SIZE_2M),
			  by_index[idx]);
		EXPECT_EQ(pte_bits_to_memtype(pte2m, PAGE_SIZE_1G),
			  by_index[idx]);
	}
	/* PS (bit 7) in a large entry is not the PAT bit. */
	EXPECT_EQ(pte_bits_to_memtype(PTE_PS | PTE_PWT, PAGE_SIZE_2M),
		  MEMTYPE_WC);
	/* ...but bit 7 of a 4 KiB PTE is. */
	EXPECT_EQ(pte_bits_to_memtype(0x80 | PTE_PWT, PAGE_SIZE_4K),
		  MEMTYPE_WP);
	/* And bit 12 of a 4 KiB PTE is an address bit. */
	EXPECT_EQ(pte_bits_to_memtype(0x1000 | PTE_PWT, PAGE_SIZE_4K),
		  MEMTYPE_WC);
}

/* ---- MTRR x PAT: the SDM table ------------------------------------------ */

#define N1 MEMTYPE_NOTE_FROM_MTRR_UC
#define N2 MEMTYPE_NOTE_FROM_PAT_UC
#define N3 MEMTYPE_NOTE_FORMERLY_UNDEFINED

static const struct {
	enum memtype mtrr, pat, eff;
	unsigned int notes;
} sdm_table[] = {
	/* MTRR UC */
	{ MEMTYPE_UC, MEMTYPE_UC, MEMTYPE_UC, N1 },
	{ MEMTYPE_UC, MEMTYPE_UC_MINUS, MEMTYPE_UC, N1 },
	{ MEMTYPE_UC, MEMTYPE_WC, MEMTYPE_WC, 0 },
	{ MEMTYPE_UC, MEMTYPE_WT, MEMTYPE_UC, N1 },
	{ MEMTYPE_UC, MEMTYPE_WB, MEMTYPE_UC, N1 },
	{ MEMTYPE_UC, MEMTYPE_WP, MEMTYPE_UC, N1 },
	/* MTRR WC */
	{ MEMTYPE_WC, MEMTYPE_UC, MEMTYPE_UC, N2 },
	{ MEMTYPE_WC, MEMTYPE_UC_MINUS, MEMTYPE_WC, 0 },
	{ MEMTYPE_WC, MEMTYPE_WC, MEMTYPE_WC, 0 },
	{ MEMTYPE_WC, MEMTYPE_WT, MEMTYPE_UC, N2 | N3 },
	{ MEMTYPE_WC, MEMTYPE_WB, MEMTYPE_WC, 0 },
	{ MEMTYPE_WC, MEMTYPE_WP, MEMTYPE_UC, N2 | N3 },
	/* MTRR WT */
	{ MEMTYPE_WT, MEMTYPE_UC, MEMTYPE_UC, N2 },
	{ MEMTYPE_WT, MEMTYPE_UC_MINUS, MEMTYPE_UC, N2 },
	{ MEMTYPE_WT, MEMTYPE_WC, MEMTYPE_WC, 0 },
	{ MEMTYPE_WT, MEMTYPE_WT, MEMTYPE_WT, 0 },
	{ MEMTYPE_WT, MEMTYPE_WB, MEMTYPE_WT, 0 },
	{ MEMTYPE_WT, MEMTYPE_WP, MEMTYPE_WP, N3 },
	/* MTRR WB */
	{ MEMTYPE_WB, MEMTYPE_UC, MEMTYPE_UC, N2 },
	{ MEMTYPE_WB, MEMTYPE_UC_MINUS, MEMTYPE_UC, N2 },
	{ MEMTYPE_WB, MEMTYPE_WC, MEMTYPE_WC, 0 },
	{ MEMTYPE_WB, MEMTYPE_WT, MEMTYPE_WT, 0 },
	{ MEMTYPE_WB, MEMTYPE_WB, MEMTYPE_WB, 0 },
	{ MEMTYPE_WB, MEMTYPE_WP, MEMTYPE_WP, 0 },
	/* MTRR WP */
	{ MEMTYPE_WP, MEMTYPE_UC, MEMTYPE_UC, N2 },
	{ MEMTYPE_WP, MEMTYPE_UC_MINUS, MEMTYPE_WC, N3 },
	{ MEMTYPE_WP, MEMTYPE_WC, MEMTYPE_WC, 0 },
	{ MEMTYPE_WP, MEMTYPE_WT, MEMTYPE_WT, N3 },
	{ MEMTYPE_WP, MEMTYPE_WB, MEMTYPE_WP, 0 },
	{ MEMTYPE_WP, MEMTYPE_WP, MEMTYPE_WP, 0 },
};

KTEST(mtrr_pat, sdm_table)
{
	unsigned int i;

	ASSERT_EQ(ARRAY_SIZE(sdm_table), 5 * MEMTYPE_COUNT);
	for (i = 0; i < ARRAY_SIZE(sdm_table); i++) {
		unsigned int notes = 0xdead;
		enum memtype got = mtrr_pat_combine(sdm_table[i].mtrr,
						     sdm_table[i].pat, &notes);

		if (got != sdm_table[i].eff || notes != sdm_table[i].notes)
			ktest_diag("MTRR %s x PAT %s",
				   memtype_name(sdm_table[i].mtrr),
				   memtype_name(sdm_table[i].pat));
		EXPECT_EQ(got, sdm_table[i].eff);
		EXPECT_EQ(notes, sdm_table[i].notes);
	}
}

KTEST(mtrr_pat, table_is_complete)
{
	static const enum memtype mtrr_types[] = {
		MEMTYPE_UC, MEMTYPE_WC, MEMTYPE_WT, MEMTYPE_WP, MEMTYPE_WB,
	};
	unsigned int m, p, i, found;

	/* Every (MTRR, PAT) pair appears exactly once in sdm_table. */
	for (m = 0; m < ARRAY_SIZE(mtrr_types); m++) {
		for (p = 0; p < MEMTYPE_COUNT; p++) {
			found = 0;
			for (i = 0; i < ARRAY_SIZE(sdm_table); i++)
				found += sdm_table[i].mtrr == mtrr_types[m] &&
					 sdm_table[i].pat == memtype_all[p];
			EXPECT_EQ(found, 1);
		}
	}
}

KTEST(mtrr_pat, invalid_inputs)
{
	unsigned int notes = 0xdead;

	/* UC- is not an MTRR type; an undefined MTRR result stays so. */
	EXPECT_EQ(mtrr_pat_combine(MEMTYPE_UC_MINUS, MEMTYPE_WB, &notes),
		  MEMTYPE_UNDEFINED);
	EXPECT_EQ(notes, 0);
	EXPECT_EQ(mtrr_pat_combine(MEMTYPE_UNDEFINED, MEMTYPE_WC, NULL),
		  MEMTYPE_UNDEFINED);
	EXPECT_EQ(mtrr_pat_combine(MEMTYPE_WB, (enum memtype)2, NULL),
		  MEMTYPE_UNDEFINED);
	/* notes may be NULL. */
	EXPECT_EQ(mtrr_pat_combine(MEMTYPE_WB, MEMTYPE_WT, NULL), MEMTYPE_WT);
}

/* ---- MTRR lookup -------------------------------------------------------- */

#define QEMU_VCNT	8
#define CAP_ALL		(MTRRCAP_FIX | MTRRCAP_WC | QEMU_VCNT)
#define DEF_ON(t)	(MTRR_DEF_TYPE_E | MTRR_DEF_TYPE_FE | (t))
#define BYTES8(t)	(0x0101010101010101ull * (t))

/* A valid variable range [base, base + size) of type t. */
static void set_var(struct mtrr_state *s, unsigned int n, uint64_t base,
		    uint64_t size, unsigned int t)
{
	s->var[n].base = base | t;
	s->var[n].mask = (~(size - 1) & mtrr_addr_mask(s)) |
			 MTRR_PHYSMASK_VALID;
}

KTEST(mtrr, state_init)
{
	struct mtrr_state s;

	mtrr_state_init(&s, MTRRCAP_FIX | 10, MTRR_DEF_TYPE_E | MEMTYPE_WB,
			40);
	EXPECT_EQ(s.vcnt, 10);
	EXPECT_TRUE(s.fixed_supported);
	EXPECT_FALSE(s.wc_supported);
	EXPECT_TRUE(s.enabled);
	EXPECT_FALSE(s.fixed_enabled);
	EXPECT_EQ(s.default_type, MEMTYPE_WB);
	EXPECT_EQ(mtrr_addr_mask(&s), 0xfffffff000ull);
	/* VCNT beyond what the structure holds is clamped. */
	mtrr_state_init(&s, 0xff, 0, 36);
	EXPECT_EQ(s.vcnt, MTRR_MAX_VAR_RANGES);
	EXPECT_TRUE(HOST_EXPECT_PANIC(mtrr_state_init(&s, 0, 0, 20)));
}

KTEST(mtrr, fixed_range_geometry)
{
	uint64_t start, len;

	mtrr_fixed_range(0, &start, &len);
	EXPECT_EQ(start, 0);
	EXPECT_EQ(len, 0x10000);
	mtrr_fixed_range(7, &start, &len);
	EXPECT_EQ(start, 0x70000);
	mtrr_fixed_range(8, &start, &len);
	EXPECT_EQ(start, 0x80000);
	EXPECT_EQ(len, 0x4000);
	mtrr_fixed_range(23, &start, &len);
	EXPECT_EQ(start, 0xbc000);
	mtrr_fixed_range(24, &start, &len);
	EXPECT_EQ(start, 0xc0000);
	EXPECT_EQ(len, 0x1000);
	mtrr_fixed_range(87, &start, &len);
	EXPECT_EQ(start, 0xff000);
	EXPECT_EQ(mtrr_fixed_msr[0], 0x250);
	EXPECT_EQ(mtrr_fixed_msr[1], 0x258);
	EXPECT_EQ(mtrr_fixed_msr[2], 0x259);
	EXPECT_EQ(mtrr_fixed_msr[3], 0x268);
	EXPECT_EQ(mtrr_fixed_msr[10], 0x26f);
}

KTEST(mtrr, disabled_is_uc)
{
	struct mtrr_state s;

	mtrr_state_init(&s, CAP_ALL, MTRR_DEF_TYPE_FE | MEMTYPE_WB, 36);
	s.fixed[0] = BYTES8(MEMTYPE_WB);
	set_var(&s, 0, 0, GiB(2), MEMTYPE_WB);
	EXPECT_EQ(mtrr_type_of(&s, 0), MEMTYPE_UC);
	EXPECT_EQ(mtrr_type_of(&s, 0x1000000), MEMTYPE_UC);
	EXPECT_EQ(mtrr_type_of(&s, 0x800000000ull - 1), MEMTYPE_UC);
}

/* A PC-like first MiB: RAM WB, VGA hole UC, option ROMs WP, BIOS WT. */
static void pc_fixed(struct mtrr_state *s)
{
	s->fixed[0] = BYTES8(MEMTYPE_WB);		/* 0-7ffff */
	s->fixed[1] = BYTES8(MEMTYPE_WB);		/* 80000-9ffff */
	s->fixed[2] = BYTES8(MEMTYPE_UC);		/* a0000-bffff */
	s->fixed[3] = BYTES8(MEMTYPE_WP);		/* c0000-c7fff */
	s->fixed[4] = BYTES8(MEMTYPE_WP);		/* c8000-cffff */
	s->fixed[5] = BYTES8(MEMTYPE_UC);		/* d0000-d7fff */
	s->fixed[6] = BYTES8(MEMTYPE_UC);
	s->fixed[7] = BYTES8(MEMTYPE_UC);
	s->fixed[8] = BYTES8(MEMTYPE_UC);
	s->fixed[9] = BYTES8(MEMTYPE_UC);		/* f0000-f7fff */
	/* f8000-fffff: UC but the last 4 KiB WT (byte 7). */
	s->fixed[10] = BYTES8(MEMTYPE_UC) | ((uint64_t)MEMTYPE_WT << 56);
}

KTEST(mtrr, fixed_ranges_below_1mib)
{
	struct mtrr_state s;

	mtrr_state_init(&s, CAP_ALL, DEF_ON(MEMTYPE_UC), 36);
	pc_fixed(&s);
	/* A variable range over the first MiB must not override them. */
	set_var(&s, 0, 0, GiB(1), MEMTYPE_WC);
	EXPECT_EQ(mtrr_type_of(&s, 0), MEMTYPE_WB);
	EXPECT_EQ(mtrr_type_of(&s, 0x9ffff), MEMTYPE_WB);
	EXPECT_EQ(mtrr_type_of(&s, 0xa0000), MEMTYPE_UC);
	EXPECT_EQ(mtrr_type_of(&s, 0xbffff), MEMTYPE_UC);
	EXPECT_EQ(mtrr_type_of(&s, 0xc0000), MEMTYPE_WP);
	EXPECT_EQ(mtrr_type_of(&s, 0xcffff), MEMTYPE_WP);
	EXPECT_EQ(mtrr_type_of(&s, 0xd0000), MEMTYPE_UC);
	EXPECT_EQ(mtrr_type_of(&s, 0xfefff), MEMTYPE_UC);
	EXPECT_EQ(mtrr_type_of(&s, 0xff000), MEMTYPE_WT);
	EXPECT_EQ(mtrr_type_of(&s, 0xfffff), MEMTYPE_WT);
	/* Just above 1 MiB the variable range applies. */
	EXPECT_EQ(mtrr_type_of(&s, 0x100000), MEMTYPE_WC);
	/* Fixed ranges disabled (FE clear): the variable range rules. */
	s.fixed_enabled = false;
	EXPECT_EQ(mtrr_type_of(&s, 0xa0000), MEMTYPE_WC);
	/* Fixed ranges not supported: likewise, even with FE set. */
	s.fixed_enabled = true;
	s.fixed_supported = false;
	EXPECT_EQ(mtrr_type_of(&s, 0xc0000), MEMTYPE_WC);
	/* A reserved encoding in a fixed range is reported. */
	s.fixed_supported = true;
	s.fixed[2] = BYTES8(2);
	EXPECT_EQ(mtrr_type_of(&s, 0xa0000), MEMTYPE_UNDEFINED);
}

KTEST(mtrr, variable_overlaps)
{
	struct mtrr_state s;

	mtrr_state_init(&s, CAP_ALL, DEF_ON(MEMTYPE_UC), 36);
	set_var(&s, 0, 0, GiB(2), MEMTYPE_WB);
	set_var(&s, 1, 0x70000000, MiB(256), MEMTYPE_UC);
	set_var(&s, 2, 0x40000000, MiB(256), MEMTYPE_WT);
	set_var(&s, 3, 0x100000000ull, GiB(4), MEMTYPE_WC);
	set_var(&s, 4, 0x100000000ull, GiB(1), MEMTYPE_WB);
	set_var(&s, 5, 0x20000000, MiB(512), MEMTYPE_WB);	/* same type */
	set_var(&s, 6, 0x300000000ull, GiB(1), MEMTYPE_WP);
	set_var(&s, 7, 0x300000000ull, MiB(512), MEMTYPE_WT);

	EXPECT_EQ(mtrr_type_of(&s, 0x1000000), MEMTYPE_WB);	/* one */
	EXPECT_EQ(mtrr_type_of(&s, 0x20000000), MEMTYPE_WB);	/* WB+WB */
	EXPECT_EQ(mtrr_type_of(&s, 0x70000000), MEMTYPE_UC);	/* UC wins */
	EXPECT_EQ(mtrr_type_of(&s, 0x7fffffff), MEMTYPE_UC);
	EXPECT_EQ(mtrr_type_of(&s, 0x6fffffff), MEMTYPE_WB);
	EXPECT_EQ(mtrr_type_of(&s, 0x40000000), MEMTYPE_WT);	/* WT+WB */
	EXPECT_EQ(mtrr_type_of(&s, 0x4fffffff), MEMTYPE_WT);
	EXPECT_EQ(mtrr_type_of(&s, 0x50000000), MEMTYPE_WB);
	EXPECT_EQ(mtrr_type_of(&s, 0x80000000), MEMTYPE_UC);	/* default */
	/* WC+WB and WP+WT are undefined combinations. */
	EXPECT_EQ(mtrr_type_of(&s, 0x100000000ull), MEMTYPE_UNDEFINED);
	EXPECT_EQ(mtrr_type_of(&s, 0x140000000ull), MEMTYPE_WC);
	EXPECT_EQ(mtrr_type_of(&s, 0x300000000ull), MEMTYPE_UNDEFINED);
	EXPECT_EQ(mtrr_type_of(&s, 0x320000000ull), MEMTYPE_WP);
	EXPECT_EQ(mtrr_type_of(&s, 0x340000000ull), MEMTYPE_UC);

	/* Ranges without V, or past VCNT, do not count. */
	s.var[1].mask &= ~MTRR_PHYSMASK_VALID;
	EXPECT_EQ(mtrr_type_of(&s, 0x70000000), MEMTYPE_WB);
	s.vcnt = 2;
	EXPECT_EQ(mtrr_type_of(&s, 0x40000000), MEMTYPE_WB);
	EXPECT_EQ(mtrr_type_of(&s, 0x100000000ull), MEMTYPE_UC);
}

/* Every run mtrr_run_end() gives holds one type and ends where it
 * changes; runs cover [0, limit) without gaps. Returns the run count
 * (0 after a failure). */
#define RUN_CHECK(e) KTEST_CMP(ctx, !!(e), KTEST_OP_EQ, 1, return 0)
static unsigned check_runs(const struct mtrr_state *s, uint64_t limit,
			   struct ktest_ctx *ctx)
{
	unsigned runs = 0;

	for (uint64_t p = 0; p < limit; runs++) {
		uint64_t end = mtrr_run_end(s, p, limit);
		enum memtype t = mtrr_type_of(s, p);

		RUN_CHECK(end > p && end <= limit);
		RUN_CHECK(end % 4096 == 0);
		RUN_CHECK(mtrr_type_of(s, end - 1) == t);
		RUN_CHECK(mtrr_type_of(s, ((p + end) / 2) & ~4095ull) == t);
		if (end < limit)
			RUN_CHECK(mtrr_type_of(s, end) != t);
		p = end;
	}
	return runs;
}

KTEST(mtrr, run_end_follows_type_changes)
{
	struct mtrr_state s;

	/* QEMU with SeaBIOS: fixed WB/UC/WP, 2 GiB..4 GiB UC, default WB. */
	mtrr_state_init(&s, CAP_ALL, DEF_ON(MEMTYPE_WB), 40);
	s.fixed[0] = BYTES8(MEMTYPE_WB);
	s.fixed[1] = BYTES8(MEMTYPE_WB);
	s.fixed[2] = BYTES8(MEMTYPE_UC);
	for (unsigned i = 3; i < MTRR_NUM_FIXED_MSRS; i++)
		s.fixed[i] = BYTES8(MEMTYPE_WP);
	set_var(&s, 0, GiB(2), GiB(2), MEMTYPE_UC);
	EXPECT_EQ(mtrr_run_end(&s, 0, GiB(64)), 0xa0000);
	EXPECT_EQ(mtrr_run_end(&s, 0xa0000, GiB(64)), 0xc0000);
	EXPECT_EQ(mtrr_run_end(&s, 0xc0000, GiB(64)), 0x100000);
	EXPECT_EQ(mtrr_run_end(&s, 0x100000, GiB(64)), GiB(2));
	EXPECT_EQ(mtrr_run_end(&s, GiB(2), GiB(64)), GiB(4));
	EXPECT_EQ(mtrr_run_end(&s, GiB(4), GiB(64)), GiB(64));
	EXPECT_EQ(mtrr_run_end(&s, GiB(3), GiB(3) + 8192), GiB(3) + 8192);
	EXPECT_EQ(check_runs(&s, GiB(64), ctx), 6);

	/* Overlaps: a UC hole in WB, WT over WB, default UC above. */
	mtrr_state_init(&s, CAP_ALL, DEF_ON(MEMTYPE_UC), 36);
	pc_fixed(&s);
	set_var(&s, 0, 0, GiB(2), MEMTYPE_WB);
	set_var(&s, 1, 0x70000000, MiB(256), MEMTYPE_UC);
	set_var(&s, 2, 0x40000000, MiB(256), MEMTYPE_WT);
	set_var(&s, 3, 0x20000000, MiB(512), MEMTYPE_WB);	/* same type */
	EXPECT_EQ(mtrr_run_end(&s, 0x100000, GiB(64)), 0x40000000);
	EXPECT_EQ(mtrr_run_end(&s, 0x50000000, GiB(64)), 0x70000000);
	EXPECT_EQ(mtrr_run_end(&s, 0x70000000, GiB(64)), GiB(64));
	check_runs(&s, GiB(64), ctx);

	/* Disabled: one UC run. */
	s.enabled = false;
	EXPECT_EQ(mtrr_run_end(&s, 0, GiB(64)), GiB(64));
	/* A non-contiguous mask: page by page, still exact. */
	mtrr_state_init(&s, CAP_ALL, DEF_ON(MEMTYPE_WB), 36);
	s.fixed_enabled = false;
	s.var[0].base = MEMTYPE_UC;		/* pages with bit 12 clear */
	s.var[0].mask = 0x1000ull | MTRR_PHYSMASK_VALID;
	EXPECT_EQ(mtrr_run_end(&s, 0, MiB(1)), 4096);
	EXPECT_EQ(mtrr_type_of(&s, 0x2000), MEMTYPE_UC);
	EXPECT_EQ(check_runs(&s, 64 * 4096, ctx), 64);
}

KTEST(mtrr, no_match_default_and_reserved)
{
	struct mtrr_state s;

	mtrr_state_init(&s, CAP_ALL, DEF_ON(MEMTYPE_WB), 36);
	EXPECT_EQ(mtrr_type_of(&s, 0x12345000), MEMTYPE_WB);
	set_var(&s, 0, 0xc0000000, GiB(1), MEMTYPE_UC);
	EXPECT_EQ(mtrr_type_of(&s, 0xbfffffff), MEMTYPE_WB);
	EXPECT_EQ(mtrr_type_of(&s, 0xc0000000), MEMTYPE_UC);
	/* Reserved encodings: in a variable range and as the default. */
	set_var(&s, 1, 0x0, GiB(1), 3);
	EXPECT_EQ(mtrr_type_of(&s, 0x1000000), MEMTYPE_UNDEFINED);
	s.default_type = MEMTYPE_UC_MINUS;
	EXPECT_EQ(mtrr_type_of(&s, 0x40000000), MEMTYPE_UNDEFINED);
}

KTEST(mtrr, width_above_4gib)
{
	struct mtrr_state s;
	uint64_t base, size;

	/* 40-bit machine, 1 GiB of WB at 64 GiB; default UC. */
	mtrr_state_init(&s, CAP_ALL, DEF_ON(MEMTYPE_UC), 40);
	set_var(&s, 0, 0x1000000000ull, GiB(1), MEMTYPE_WB);
	EXPECT_EQ(s.var[0].mask, 0xffc0000000ull | MTRR_PHYSMASK_VALID);
	EXPECT_EQ(mtrr_type_of(&s, 0x1000000000ull), MEMTYPE_WB);
	EXPECT_EQ(mtrr_type_of(&s, 0x103fffffffull), MEMTYPE_WB);
	EXPECT_EQ(mtrr_type_of(&s, 0x1040000000ull), MEMTYPE_UC);
	/* The same low 36 bits without bit 36: no alias. */
	EXPECT_EQ(mtrr_type_of(&s, 0x0000000000ull + 0x1000000), MEMTYPE_UC);
	EXPECT_EQ(mtrr_type_of(&s, 0x8000000000ull), MEMTYPE_UC);
	ASSERT_TRUE(mtrr_var_extent(&s, 0, &base, &size));
	EXPECT_EQ(base, 0x1000000000ull);
	EXPECT_EQ(size, GiB(1));

	/*
	 * On a 36-bit machine, mask bits at 36 and above are reserved: a
	 * mask written as if the machine had 52 bits still means 2 GiB.
	 */
	mtrr_state_init(&s, CAP_ALL, DEF_ON(MEMTYPE_UC), 36);
	s.var[0].base = 0x80000000ull | MEMTYPE_WB;
	s.var[0].mask = 0xfffff80000000ull | MTRR_PHYSMASK_VALID;
	EXPECT_EQ(mtrr_type_of(&s, 0x80000000), MEMTYPE_WB);
	EXPECT_EQ(mtrr_type_of(&s, 0xffffffff), MEMTYPE_WB);
	EXPECT_EQ(mtrr_type_of(&s, 0x100000000ull), MEMTYPE_UC);
	EXPECT_EQ(mtrr_type_of(&s, 0x880000000ull), MEMTYPE_UC);
	ASSERT_TRUE(mtrr_var_extent(&s, 0, &base, &size));
	EXPECT_EQ(base, 0x80000000ull);
	EXPECT_EQ(size, GiB(2));
	/* An address beyond MAXPHYADDR is a caller bug. */
	EXPECT_TRUE(HOST_EXPECT_PANIC(mtrr_type_of(&s, 0x1000000000ull)));
}

KTEST(mtrr, non_contiguous_mask)
{
	struct mtrr_state s;
	uint64_t base, size;

	mtrr_state_init(&s, CAP_ALL, DEF_ON(MEMTYPE_UC), 36);
	/*
	 * Bits 29 and 31..35 compared, bit 30 not: the range is
	 * [0, 512 MiB) plus its alias [1 GiB, 1.5 GiB).
	 */
	s.var[0].base = 0 | MEMTYPE_WB;
	s.var[0].mask = 0xfa0000000ull | MTRR_PHYSMASK_VALID;
	EXPECT_FALSE(mtrr_var_extent(&s, 0, &base, &size));
	EXPECT_EQ(size, 0);
	EXPECT_EQ(mtrr_type_of(&s, 0x10000000), MEMTYPE_WB);
	EXPECT_EQ(mtrr_type_of(&s, 0x50000000), MEMTYPE_WB);
	EXPECT_EQ(mtrr_type_of(&s, 0x30000000), MEMTYPE_UC);
	EXPECT_EQ(mtrr_type_of(&s, 0x90000000), MEMTYPE_UC);
}

/* ---- Dump --------------------------------------------------------------- */

#define DUMP_MAX_LINES	32

struct dump_buf {
	unsigned int n;
	char line[DUMP_MAX_LINES][128];
};

static void collect(void *arg, const char *line)
{
	struct dump_buf *d = arg;

	if (d->n < DUMP_MAX_LINES)
		strncpy(d->line[d->n], line, sizeof(d->line[0]) - 1);
	d->n++;
}

KTEST(mtrr, dump)
{
	static struct dump_buf d;
	struct mtrr_state s;
	unsigned int i = 0;

	memset(&d, 0, sizeof(d));
	mtrr_state_init(&s, CAP_ALL, DEF_ON(MEMTYPE_UC), 40);
	pc_fixed(&s);
	set_var(&s, 0, 0, GiB(2), MEMTYPE_WB);
	set_var(&s, 2, 0x1000000000ull, MiB(256), MEMTYPE_WC);
	s.var[3].base = MEMTYPE_UC;
	s.var[3].mask = 0xf00000000ull | 0x40000000 | MTRR_PHYSMASK_VALID;
	mtrr_dump(&s, collect, &d);

	ASSERT_EQ(d.n, 11);
	EXPECT_STREQ(d.line[i++],
		     "cap: variable=8 fixed=yes wc=yes maxphyaddr=40");
	EXPECT_STREQ(d.line[i++],
		     "def_type: enabled=yes fixed_enabled=yes default=UC");
	EXPECT_STREQ(d.line[i++], "fixed: 00000-9ffff WB");
	EXPECT_STREQ(d.line[i++], "fixed: a0000-bffff UC");
	EXPECT_STREQ(d.line[i++], "fixed: c0000-cffff WP");
	EXPECT_STREQ(d.line[i++], "fixed: d0000-fefff UC");
	EXPECT_STREQ(d.line[i++], "fixed: ff000-fffff WT");
	EXPECT_STREQ(d.line[i++],
		     "var0: base=0x000000000000 size=0x80000000 (2 GiB) WB");
	EXPECT_STREQ(d.line[i++],
		     "var2: base=0x001000000000 size=0x10000000 (256 MiB) WC");
	EXPECT_STREQ(d.line[i++],
		     "var3: base=0x000000000000 mask=0x000f40000000 "
		     "(non-contiguous) UC");
	EXPECT_STREQ(d.line[i++], "var: 3 of 8 enabled");
}

KTEST(mtrr, dump_disabled)
{
	static struct dump_buf d;
	struct mtrr_state s;

	memset(&d, 0, sizeof(d));
	mtrr_state_init(&s, QEMU_VCNT, MEMTYPE_WB, 36);
	mtrr_dump(&s, collect, &d);
	ASSERT_EQ(d.n, 4);
	EXPECT_STREQ(d.line[1], "def_type: enabled=no fixed_enabled=no "
				"default=WB (disabled: all memory is UC)");
	EXPECT_STREQ(d.line[2], "fixed: not supported");
	EXPECT_STREQ(d.line[3], "var: 0 of 8 enabled");
}
