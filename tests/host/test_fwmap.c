/*
 * Host tests for mm/fwmap.c: overlapping, unsorted, zero-length, adjacent
 * and wrapping firmware entries, output overflow, reservations and page
 * rounding; then a fuzz test against a brute-force model of the map.
 */
// HOST_SRCS: mm/fwmap.c
#include <stdint.h>
#include <string.h>
#include "lib/ktest.h"
#include "lib/prng.h"
#include "mm/fwmap.h"
#include "mm/page.h"
#include "tests/host/host_shim.h"

#define MAP_CAP 32

#define A FWMAP_AVAILABLE
#define R FWMAP_RESERVED

/* Storage with guard entries after the capacity, to catch overruns. */
struct test_map {
	struct fwmap map;
	struct fwmap_entry e[MAP_CAP + 2];
};

#define GUARD_BASE 0x6a6a6a6a6a6a6a6aull

static void tm_init(struct test_map *t, size_t cap)
{
	memset(t->e, 0, sizeof(t->e));
	for (size_t i = cap; i < ARRAY_SIZE(t->e); i++)
		t->e[i].base = GUARD_BASE;
	fwmap_init(&t->map, t->e, cap);
}

/* Expect entry i of the map to be [base, end) of type. */
#define EXPECT_ENTRY(m, i, b, en, t)                                        \
	do {                                                                \
		ASSERT_TRUE((i) < (m)->n);                                  \
		EXPECT_EQ((m)->entries[i].base, (b));                       \
		EXPECT_EQ((m)->entries[i].base + (m)->entries[i].len, (en)); \
		EXPECT_EQ((m)->entries[i].type, (t));                       \
	} while (0)

KTEST(fwmap, reserved_inside_available)
{
	struct test_map t;
	struct fwmap_entry raw[] = {
		{ 0x0, 0x10000, A },
		{ 0x4000, 0x2000, R },
	};

	tm_init(&t, MAP_CAP);
	EXPECT_EQ(fwmap_sanitize(&t.map, raw, ARRAY_SIZE(raw)), 1);
	EXPECT_EQ(t.map.stats.overlaps, 1);
	ASSERT_EQ(t.map.n, 3);
	EXPECT_ENTRY(&t.map, 0, 0x0, 0x4000, A);
	EXPECT_ENTRY(&t.map, 1, 0x4000, 0x6000, R);
	EXPECT_ENTRY(&t.map, 2, 0x6000, 0x10000, A);
}

/* The same overlap with the reserved entry first: the result must not
 * depend on the order, and reserved must still win. */
KTEST(fwmap, available_over_reserved)
{
	struct test_map t;
	struct fwmap_entry raw[] = {
		{ 0x4000, 0x2000, R },
		{ 0x0, 0x10000, A },
	};

	tm_init(&t, MAP_CAP);
	fwmap_sanitize(&t.map, raw, ARRAY_SIZE(raw));
	EXPECT_EQ(t.map.stats.overlaps, 1);
	EXPECT_EQ(t.map.stats.unsorted, 1);
	ASSERT_EQ(t.map.n, 3);
	EXPECT_ENTRY(&t.map, 0, 0x0, 0x4000, A);
	EXPECT_ENTRY(&t.map, 1, 0x4000, 0x6000, R);
	EXPECT_ENTRY(&t.map, 2, 0x6000, 0x10000, A);
}

/* Partial overlaps on either edge and restrictiveness among non-RAM. */
KTEST(fwmap, partial_overlaps_and_ranks)
{
	struct test_map t;
	struct fwmap_entry raw[] = {
		{ 0x1000, 0x3000, A },			/* [1000,4000) */
		{ 0x3000, 0x2000, FWMAP_ACPI_RECLAIMABLE }, /* [3000,5000) */
		{ 0x0, 0x2000, FWMAP_ACPI_NVS },	/* [0,2000) */
		{ 0x4800, 0x1000, FWMAP_BAD },		/* [4800,5800) */
	};

	tm_init(&t, MAP_CAP);
	fwmap_sanitize(&t.map, raw, ARRAY_SIZE(raw));
	EXPECT_EQ(t.map.stats.overlaps, 3);
	ASSERT_EQ(t.map.n, 4);
	EXPECT_ENTRY(&t.map, 0, 0x0, 0x2000, FWMAP_ACPI_NVS);
	EXPECT_ENTRY(&t.map, 1, 0x2000, 0x3000, A);
	EXPECT_ENTRY(&t.map, 2, 0x3000, 0x4800, FWMAP_ACPI_RECLAIMABLE);
	EXPECT_ENTRY(&t.map, 3, 0x4800, 0x5800, FWMAP_BAD);
}

KTEST(fwmap, unsorted_input)
{
	struct test_map t;
	struct fwmap_entry raw[] = {
		{ 0x100000, 0x100000, A },
		{ 0x9f000, 0x1000, R },
		{ 0x0, 0x9f000, A },
	};

	tm_init(&t, MAP_CAP);
	EXPECT_EQ(fwmap_sanitize(&t.map, raw, ARRAY_SIZE(raw)), 2);
	EXPECT_EQ(t.map.stats.unsorted, 2);
	EXPECT_EQ(t.map.stats.overlaps, 0);
	ASSERT_EQ(t.map.n, 3);
	EXPECT_ENTRY(&t.map, 0, 0x0, 0x9f000, A);
	EXPECT_ENTRY(&t.map, 1, 0x9f000, 0xa0000, R);
	EXPECT_ENTRY(&t.map, 2, 0x100000, 0x200000, A);
}

KTEST(fwmap, zero_length_dropped)
{
	struct test_map t;
	struct fwmap_entry raw[] = {
		{ 0x1000, 0, R },
		{ 0x0, 0x4000, A },
		{ 0x2000, 0, FWMAP_BAD },
	};

	tm_init(&t, MAP_CAP);
	EXPECT_EQ(fwmap_sanitize(&t.map, raw, ARRAY_SIZE(raw)), 2);
	EXPECT_EQ(t.map.stats.zero_len, 2);
	/* A zero-length entry never overlaps, and never splits anything. */
	EXPECT_EQ(t.map.stats.overlaps, 0);
	ASSERT_EQ(t.map.n, 1);
	EXPECT_ENTRY(&t.map, 0, 0x0, 0x4000, A);
}

KTEST(fwmap, adjacent_merge_and_duplicates)
{
	struct test_map t;
	struct fwmap_entry raw[] = {
		{ 0x0, 0x1000, A },
		{ 0x1000, 0x1000, A },
		{ 0x2000, 0x1000, R },
		{ 0x3000, 0x1000, R },
		{ 0x4000, 0x1000, A },
		{ 0x4000, 0x1000, A }, /* exact duplicate */
	};

	tm_init(&t, MAP_CAP);
	/* Adjacency is not a problem; the duplicate is an overlap. */
	EXPECT_EQ(fwmap_sanitize(&t.map, raw, ARRAY_SIZE(raw)), 1);
	EXPECT_EQ(t.map.stats.overlaps, 1);
	EXPECT_GE(t.map.stats.merged, 2);
	ASSERT_EQ(t.map.n, 3);
	EXPECT_ENTRY(&t.map, 0, 0x0, 0x2000, A);
	EXPECT_ENTRY(&t.map, 1, 0x2000, 0x4000, R);
	EXPECT_ENTRY(&t.map, 2, 0x4000, 0x5000, A);
}

KTEST(fwmap, unknown_type_is_reserved)
{
	struct test_map t;
	struct fwmap_entry raw[] = {
		{ 0x0, 0x10000, A },
		{ 0x8000, 0x1000, 7 },	   /* e.g. persistent memory */
		{ 0xa000, 0x1000, 0 },	   /* invalid */
		{ 0xc000, 0x1000, 0x101 }, /* firmware can't use our types */
	};
	uint64_t b, e;
	size_t it = 0;

	tm_init(&t, MAP_CAP);
	fwmap_sanitize(&t.map, raw, ARRAY_SIZE(raw));
	EXPECT_EQ(t.map.stats.unknown_type, 3);
	ASSERT_EQ(t.map.n, 7);
	EXPECT_ENTRY(&t.map, 1, 0x8000, 0x9000, R);
	EXPECT_ENTRY(&t.map, 3, 0xa000, 0xb000, R);
	EXPECT_ENTRY(&t.map, 5, 0xc000, 0xd000, R);
	EXPECT_TRUE(fwmap_next_usable(&t.map, &it, &b, &e));
	EXPECT_EQ(b, 0);
	EXPECT_EQ(e, 0x8000);
}

KTEST(fwmap, huge_and_wrapping)
{
	struct test_map t;
	struct fwmap_entry raw[] = {
		/* Huge but legal: ends exactly at UINT64_MAX. */
		{ 0x100000000ull, UINT64_MAX - 0x100000000ull, R },
		/* Wraps: clipped. */
		{ 0xfffffffffffff000ull, 0x2000, A },
		/* Wraps from low memory: covers everything above. */
		{ 0x1000, UINT64_MAX, A },
	};
	uint64_t b, e;
	size_t it = 0;

	tm_init(&t, MAP_CAP);
	fwmap_sanitize(&t.map, raw, ARRAY_SIZE(raw));
	EXPECT_EQ(t.map.stats.wrapped, 2);
	EXPECT_EQ(t.map.stats.overlaps, 3);
	ASSERT_EQ(t.map.n, 2);
	EXPECT_ENTRY(&t.map, 0, 0x1000, 0x100000000ull, A);
	EXPECT_ENTRY(&t.map, 1, 0x100000000ull, UINT64_MAX, R);
	EXPECT_TRUE(fwmap_next_usable(&t.map, &it, &b, &e));
	EXPECT_EQ(b, 0x1000);
	EXPECT_EQ(e, 0x100000000ull);
	EXPECT_FALSE(fwmap_next_usable(&t.map, &it, &b, &e));
}

/* A clipped available entry at the top: no whole page, nothing usable. */
KTEST(fwmap, wrap_at_top_has_no_usable_page)
{
	struct test_map t;
	struct fwmap_entry raw[] = {
		{ 0xfffffffffffff000ull, 0x1000, A }, /* ends at 2^64 */
		{ UINT64_MAX, 1, A },		      /* ends at 2^64 */
	};
	uint64_t b, e;
	size_t it = 0;

	tm_init(&t, MAP_CAP);
	fwmap_sanitize(&t.map, raw, ARRAY_SIZE(raw));
	EXPECT_EQ(t.map.stats.wrapped, 2);
	ASSERT_EQ(t.map.n, 1);
	EXPECT_ENTRY(&t.map, 0, 0xfffffffffffff000ull, UINT64_MAX, A);
	EXPECT_FALSE(fwmap_next_usable(&t.map, &it, &b, &e));
	EXPECT_EQ(fwmap_usable_bytes(&t.map), 0);
}

KTEST(fwmap, output_overflow_disjoint)
{
	struct test_map t;
	struct fwmap_entry raw[] = {
		{ 0x0, 0x1000, A },
		{ 0x2000, 0x1000, R },
		{ 0x4000, 0x1000, A },
		{ 0x6000, 0x1000, R },
	};

	tm_init(&t, 2);
	EXPECT_EQ(fwmap_sanitize(&t.map, raw, ARRAY_SIZE(raw)), 2);
	EXPECT_EQ(t.map.stats.overflow, 2);
	ASSERT_EQ(t.map.n, 2);
	EXPECT_ENTRY(&t.map, 0, 0x0, 0x1000, A);
	EXPECT_ENTRY(&t.map, 1, 0x2000, 0x3000, R);
	EXPECT_EQ(t.e[2].base, GUARD_BASE);
	EXPECT_EQ(t.e[3].base, GUARD_BASE);
}

/* Splitting needs room; without it, RAM is lost but reserved memory must
 * never show up as usable. */
KTEST(fwmap, output_overflow_split_is_safe)
{
	for (size_t cap = 0; cap <= 3; cap++) {
		struct test_map t;
		struct fwmap_entry raw[] = {
			{ 0x0, 0x10000, A },
			{ 0x4000, 0x1000, R },
		};
		uint64_t b, e;
		size_t it = 0;

		tm_init(&t, cap);
		fwmap_sanitize(&t.map, raw, ARRAY_SIZE(raw));
		EXPECT_LE(t.map.n, cap);
		/* Needs 3 entries; with none, both inputs are dropped. */
		EXPECT_EQ(t.map.stats.overflow, cap == 0 ? 2 : 3 - cap);
		while (fwmap_next_usable(&t.map, &it, &b, &e))
			EXPECT_TRUE(e <= 0x4000 || b >= 0x5000);
		EXPECT_EQ(t.e[cap].base, GUARD_BASE);
		if (cap == 3)
			EXPECT_EQ(fwmap_usable_bytes(&t.map), 0xf000);
	}
}

KTEST(fwmap, reserve_carving)
{
	struct test_map t;
	struct fwmap_entry raw[] = {
		{ 0x0, 0x9fc00, A },
		{ 0x9fc00, 0x400, R },
		{ 0xf0000, 0x10000, R },
		{ 0x100000, 0x7f00000, A },
	};

	tm_init(&t, MAP_CAP);
	EXPECT_EQ(fwmap_sanitize(&t.map, raw, ARRAY_SIZE(raw)), 0);
	EXPECT_TRUE(fwmap_reserve(&t.map, 0, MiB(1), FWMAP_LOWMEM));
	EXPECT_TRUE(fwmap_reserve(&t.map, 0x100000, 0x80000, FWMAP_KERNEL));
	EXPECT_TRUE(fwmap_reserve(&t.map, 0x180000, 0x1000, FWMAP_BOOTINFO));
	EXPECT_TRUE(fwmap_reserve(&t.map, 0x400000, 0x2345, FWMAP_MODULE));
	EXPECT_TRUE(fwmap_reserve(&t.map, 0x500000, 0, FWMAP_MODULE));
	EXPECT_EQ(fwmap_problems(&t.map), 0);
	ASSERT_EQ(t.map.n, 9);
	/* Firmware's reserved areas keep their type under LOWMEM. */
	EXPECT_ENTRY(&t.map, 0, 0x0, 0x9fc00, FWMAP_LOWMEM);
	EXPECT_ENTRY(&t.map, 1, 0x9fc00, 0xa0000, R);
	EXPECT_ENTRY(&t.map, 2, 0xa0000, 0xf0000, FWMAP_LOWMEM);
	EXPECT_ENTRY(&t.map, 3, 0xf0000, 0x100000, R);
	EXPECT_ENTRY(&t.map, 4, 0x100000, 0x180000, FWMAP_KERNEL);
	EXPECT_ENTRY(&t.map, 5, 0x180000, 0x181000, FWMAP_BOOTINFO);
	EXPECT_ENTRY(&t.map, 6, 0x181000, 0x400000, A);
	EXPECT_ENTRY(&t.map, 7, 0x400000, 0x402345, FWMAP_MODULE);
	EXPECT_ENTRY(&t.map, 8, 0x402345, 0x8000000, A);
	/* Reserving what is already restrictive changes nothing. */
	EXPECT_TRUE(fwmap_reserve(&t.map, 0xf0000, 0x10000, FWMAP_KERNEL));
	EXPECT_ENTRY(&t.map, 3, 0xf0000, 0x100000, R);
	EXPECT_EQ(t.map.n, 9);
	/* A wrapping reservation is clipped and reported, not fatal. */
	EXPECT_TRUE(fwmap_reserve(&t.map, 0x7000000, UINT64_MAX,
				   FWMAP_RESERVED));
	EXPECT_EQ(t.map.stats.wrapped, 1);
	EXPECT_ENTRY(&t.map, 8, 0x402345, 0x7000000, A);
}

/* QEMU's map as the kernel sees it after its own reservations, with a
 * 40-bit physical width. */
static void qemu_like_map(struct test_map *t)
{
	struct fwmap_entry raw[] = {
		{ 0x0, 0x9fc00, A },
		{ 0x9fc00, 0x400, R },
		{ 0xf0000, 0x10000, R },
		{ 0x100000, 0x1fee0000, A },
		{ 0x1ffe0000, 0x20000, R },
		{ 0xfd00000000ull, 0x300000000ull, R },
	};

	tm_init(t, MAP_CAP);
	fwmap_sanitize(&t->map, raw, ARRAY_SIZE(raw));
	fwmap_reserve(&t->map, 0, MiB(1), FWMAP_LOWMEM);
	fwmap_reserve(&t->map, 0x200000, 0x235000, FWMAP_KERNEL);
	fwmap_reserve(&t->map, 0x435000, 0x400000, FWMAP_BOOTALLOC);
	fwmap_reserve(&t->map, 1ull << 40, UINT64_MAX - (1ull << 40),
		      FWMAP_BEYOND_WIDTH);
}

KTEST(fwmap, check_range_verdicts)
{
	struct test_map t;

	qemu_like_map(&t);
	/* ACPI tables in firmware-reserved memory and the BIOS area. */
	EXPECT_EQ(fwmap_check_range(&t.map, 0x1ffe1bef, 52, 40),
		  FWMAP_RANGE_OK);
	EXPECT_EQ(fwmap_check_range(&t.map, 0xf5a30, 36, 40), FWMAP_RANGE_OK);
	/* Device memory the map does not list (HPET). */
	EXPECT_EQ(fwmap_check_range(&t.map, 0xfed00000, 0x400, 40),
		  FWMAP_RANGE_OK);
	/* Usable RAM: suspicious, legal. */
	EXPECT_EQ(fwmap_check_range(&t.map, 0x1000000, 36, 40),
		  FWMAP_RANGE_USABLE);
	/* Straddling reserved and usable counts as usable. */
	EXPECT_EQ(fwmap_check_range(&t.map, 0x1ffdfff0, 0x20, 40),
		  FWMAP_RANGE_USABLE);
	/* The kernel image and its boot allocations. */
	EXPECT_EQ(fwmap_check_range(&t.map, 0x210000, 36, 40),
		  FWMAP_RANGE_KERNEL);
	EXPECT_EQ(fwmap_check_range(&t.map, 0x1ffff0, 0x20, 40),
		  FWMAP_RANGE_KERNEL);
	EXPECT_EQ(fwmap_check_range(&t.map, 0x500000, 8, 40),
		  FWMAP_RANGE_KERNEL);
	/* A garbage upper half: beyond the width, whatever the map says. */
	EXPECT_EQ(fwmap_check_range(&t.map, 0xdeadbeef1ffe1befull, 36, 40),
		  FWMAP_RANGE_BEYOND_WIDTH);
	EXPECT_EQ(fwmap_check_range(&t.map, (1ull << 40) - 8, 36, 40),
		  FWMAP_RANGE_BEYOND_WIDTH);
	EXPECT_EQ(fwmap_check_range(&t.map, (1ull << 40) - 36, 36, 40),
		  FWMAP_RANGE_OK);
	/* The map's own beyond-width entry, with a wider phys_bits. */
	EXPECT_EQ(fwmap_check_range(&t.map, 1ull << 41, 36, 52),
		  FWMAP_RANGE_BEYOND_WIDTH);
	EXPECT_EQ(fwmap_check_range(&t.map, UINT64_MAX - 4, 36, 64),
		  FWMAP_RANGE_EMPTY);
	EXPECT_EQ(fwmap_check_range(&t.map, 0x1000, 0, 40),
		  FWMAP_RANGE_EMPTY);
	EXPECT_FALSE(fwmap_range_refused(FWMAP_RANGE_USABLE));
	EXPECT_TRUE(fwmap_range_refused(FWMAP_RANGE_KERNEL));
	EXPECT_TRUE(fwmap_range_refused(FWMAP_RANGE_BEYOND_WIDTH));
}

/* The dump prints what the kernel derived as such: the range beyond the
 * physical width has no size (it used to print as a reserved range of
 * 18-digit KiB merged with firmware's last entry). */
KTEST(fwmap, dump_shows_width_limit_not_a_size)
{
	struct test_map t;
	char out[4096];

	qemu_like_map(&t);
	host_capture_start(out, sizeof(out));
	fwmap_dump(&t.map);
	host_capture_stop();
	EXPECT_TRUE(strstr(out, "[0x000000fd00000000-0x0000010000000000) "
			   "reserved         12582912 KiB") != NULL);
	EXPECT_TRUE(strstr(out, "[0x0000010000000000-2^64) beyond "
			   "MAXPHYADDR") != NULL);
	EXPECT_TRUE(strstr(out, "18014") == NULL);
}

KTEST(fwmap, page_rounding)
{
	struct test_map t;
	struct fwmap_entry raw[] = {
		{ 0x1234, 0x5678 - 0x1234, A },	 /* [0x2000, 0x5000) */
		{ 0x10001, 0xffe, A },		 /* no whole page */
		{ 0x20000, 0x1000, A },		 /* exactly one page */
		{ 0x30800, 0x1000, A },		 /* straddles: nothing */
		{ 0x100000000ull, 0x1fff, A },	 /* a page above 4 GiB */
	};
	uint64_t b, e;
	size_t it = 0;

	tm_init(&t, MAP_CAP);
	fwmap_sanitize(&t.map, raw, ARRAY_SIZE(raw));
	ASSERT_TRUE(fwmap_next_usable(&t.map, &it, &b, &e));
	EXPECT_EQ(b, 0x2000);
	EXPECT_EQ(e, 0x5000);
	ASSERT_TRUE(fwmap_next_usable(&t.map, &it, &b, &e));
	EXPECT_EQ(b, 0x20000);
	EXPECT_EQ(e, 0x21000);
	ASSERT_TRUE(fwmap_next_usable(&t.map, &it, &b, &e));
	EXPECT_EQ(b, 0x100000000ull);
	EXPECT_EQ(e, 0x100001000ull);
	EXPECT_FALSE(fwmap_next_usable(&t.map, &it, &b, &e));
	EXPECT_EQ(fwmap_usable_bytes(&t.map), 0x3000 + 0x1000 + 0x1000);
}

/*
 * Fuzz: random entries and reservations over a small address space,
 * compared granule by granule with a brute-force model that applies the
 * documented precedence. Also checks the map is sorted, disjoint and
 * merged, and that the output never exceeds its capacity.
 */
#define FUZZ_GRANULE 0x100
#define FUZZ_GRANULES 256
#define FUZZ_ROUNDS 2000
#define FUZZ_MAX_RAW 12
#define FUZZ_MAX_RESERVES 4

/* The documented precedence, lowest first (see mm/fwmap.c). */
static const uint32_t fuzz_precedence[] = {
	FWMAP_AVAILABLE, FWMAP_LOWMEM,	   FWMAP_BOOTALLOC,
	FWMAP_MODULE,	  FWMAP_BOOTINFO,	   FWMAP_KERNEL,
	FWMAP_ACPI_RECLAIMABLE, FWMAP_RESERVED, FWMAP_ACPI_NVS,
	FWMAP_BAD,
};

static unsigned int fuzz_rank(uint32_t type)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(fuzz_precedence); i++)
		if (fuzz_precedence[i] == type)
			return i + 1;
	return 0; /* "no entry" */
}

static uint64_t fuzz_state = 0x9e3779b97f4a7c15ull;

static uint64_t fuzz_rand(void)
{
	/* Fixed seed, reproducible everywhere. */
	return prng_next(&fuzz_state);
}

static void fuzz_range(uint64_t *base, uint64_t *len)
{
	*base = (fuzz_rand() % FUZZ_GRANULES) * FUZZ_GRANULE;
	*len = (fuzz_rand() % (FUZZ_GRANULES / 4)) * FUZZ_GRANULE;
	if (*base + *len > FUZZ_GRANULES * FUZZ_GRANULE)
		*len = FUZZ_GRANULES * FUZZ_GRANULE - *base;
}

static void fuzz_paint(uint32_t *model, uint64_t base, uint64_t len,
		       uint32_t type)
{
	for (uint64_t g = base / FUZZ_GRANULE; g < (base + len) / FUZZ_GRANULE;
	     g++)
		if (fuzz_rank(type) > fuzz_rank(model[g]))
			model[g] = type;
}

KTEST(fwmap, fuzz_against_model)
{
	static const uint32_t fw_types[] = { A, A, A, R, 3, 4, 5, 9 };
	unsigned int mismatches = 0;

	for (unsigned int round = 0; round < FUZZ_ROUNDS; round++) {
		struct test_map t;
		struct fwmap_entry raw[FUZZ_MAX_RAW];
		uint32_t model[FUZZ_GRANULES] = { 0 };
		size_t nraw = 1 + fuzz_rand() % FUZZ_MAX_RAW;
		size_t nres = fuzz_rand() % (FUZZ_MAX_RESERVES + 1);

		for (size_t i = 0; i < nraw; i++) {
			uint32_t ty = fw_types[fuzz_rand() %
					       ARRAY_SIZE(fw_types)];

			fuzz_range(&raw[i].base, &raw[i].len);
			raw[i].type = ty;
			fuzz_paint(model, raw[i].base, raw[i].len,
				   fuzz_rank(ty) ? ty : FWMAP_RESERVED);
		}
		tm_init(&t, MAP_CAP);
		t.map.quiet = true;
		fwmap_sanitize(&t.map, raw, nraw);
		for (size_t i = 0; i < nres; i++) {
			uint64_t b, l;
			uint32_t ty = FWMAP_LOWMEM + fuzz_rand() % 5;

			fuzz_range(&b, &l);
			fwmap_reserve(&t.map, b, l, ty);
			fuzz_paint(model, b, l, ty);
		}
		/* No overflow at this capacity, so the map must be exact. */
		ASSERT_EQ(t.map.stats.overflow, 0);
		for (size_t i = 0; i < t.map.n; i++) {
			const struct fwmap_entry *e = &t.map.entries[i];

			EXPECT_NE(e->len, 0);
			if (i + 1 < t.map.n) {
				const struct fwmap_entry *f = e + 1;

				EXPECT_LE(e->base + e->len, f->base);
				if (e->base + e->len == f->base)
					EXPECT_NE(e->type, f->type);
			}
		}
		for (unsigned int g = 0; g < FUZZ_GRANULES; g++) {
			uint64_t addr = (uint64_t)g * FUZZ_GRANULE;
			uint32_t got = 0;

			for (size_t i = 0; i < t.map.n; i++)
				if (t.e[i].base <= addr &&
				    addr < t.e[i].base + t.e[i].len)
					got = t.e[i].type;
			if (got != model[g] && mismatches++ < 5)
				EXPECT_EQ(got, model[g]);
		}
		EXPECT_EQ(t.e[MAP_CAP].base, GUARD_BASE);
	}
	EXPECT_EQ(mismatches, 0);
}
