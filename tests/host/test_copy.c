/*
 * Host tests for the copy experiment's routines (workloads/copy_routines.h
 * and copy_simd.c, seed 001): every routine against memcpy semantics over
 * sizes, source and destination offsets, with guard bytes; the head/body/
 * tail split; the checksum the consumer uses as a self-check; the size
 * schedule and the bystander's working-set rule. The inline-assembly
 * loops are invisible to ASan, so the guard bytes are what catch an
 * overrun there; the C heads and tails are instrumented.
 */
// HOST_SRCS: workloads/copy_simd.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/compiler.h"
#include "lib/ktest.h"
#include "tests/host/host_shim.h"
#include "workloads/copy_routines.h"

static const size_t sizes[] = {0,   1,   7,   8,   15,   16,   63,  64,
			       65,  127, 128, 129, 255,  256,  1000, 4095,
			       4096, 4097, 8191, 12345};
static const size_t offsets[] = {0, 1, 7, 8, 15, 16, 33, 63};
#define MAX_SIZE 12345
#define MAX_OFF 63

KTEST(copy, split_examples)
{
	struct copy_split sp;

	sp = copy_split(0x1000, 200, 64, 64);
	EXPECT_EQ(sp.head, 0);
	EXPECT_EQ(sp.body, 192);
	EXPECT_EQ(sp.tail, 8);
	sp = copy_split(0x1001, 200, 64, 64);
	EXPECT_EQ(sp.head, 63);
	EXPECT_EQ(sp.body, 128);
	EXPECT_EQ(sp.tail, 9);
	/* Shorter than the way to alignment: all head. */
	sp = copy_split(0x1001, 10, 64, 64);
	EXPECT_EQ(sp.head, 10);
	EXPECT_EQ(sp.body, 0);
	EXPECT_EQ(sp.tail, 0);
	sp = copy_split(0x1003, 0, 8, 64);
	EXPECT_EQ(sp.head + sp.body + sp.tail, 0);
}

KTEST(copy, split_invariants)
{
	static const size_t aligns[] = {8, 16, 64};

	for (size_t a = 0; a < ARRAY_SIZE(aligns); a++)
		for (uintptr_t dst = 0x2000; dst < 0x2000 + 130; dst++)
			for (size_t n = 0; n < 300; n++) {
				struct copy_split sp = copy_split(
					dst, n, aligns[a], COPY_BLOCK);

				ASSERT_EQ(sp.head + sp.body + sp.tail, n);
				ASSERT_TRUE(sp.head < aligns[a]);
				ASSERT_EQ(sp.body % COPY_BLOCK, 0);
				ASSERT_TRUE(sp.tail < COPY_BLOCK);
				if (sp.body)
					ASSERT_EQ((dst + sp.head) % aligns[a],
						  0);
				/* The head stops at alignment or at n. */
				if (sp.head < n)
					ASSERT_EQ((dst + sp.head) % aligns[a],
						  0);
			}
}

KTEST(copy, routines_match_memcpy)
{
	size_t nr;
	const struct copy_routine *r = copy_routines(&nr);
	unsigned char *src = malloc(MAX_OFF + MAX_SIZE);
	unsigned char *dst = malloc(2 * COPY_GUARD + MAX_OFF + MAX_SIZE);
	unsigned cases = 0;

	ASSERT_TRUE(src && dst);
	for (size_t k = 0; k < nr; k++)
		for (size_t si = 0; si < ARRAY_SIZE(sizes); si++)
			for (size_t so = 0; so < ARRAY_SIZE(offsets); so++)
				for (size_t d = 0; d < ARRAY_SIZE(offsets);
				     d++) {
					enum copy_verdict v = copy_verify_case(
						r[k].fn, src, dst, sizes[si],
						offsets[so], offsets[d]);

					cases++;
					if (v != COPY_OK) {
						ktest_diag("%s n=%zu src+%zu "
							   "dst+%zu: verdict "
							   "%d",
							   r[k].name, sizes[si],
							   offsets[so],
							   offsets[d], v);
						EXPECT_EQ(v, COPY_OK);
						goto out;
					}
				}
	EXPECT_EQ(cases, nr * ARRAY_SIZE(sizes) * ARRAY_SIZE(offsets) *
				 ARRAY_SIZE(offsets));
out:
	free(src);
	free(dst);
}

static void broken_copy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
	if (n > 3)
		((unsigned char *)dst)[n / 2] ^= 1;
}

static void overrunning_copy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
	((unsigned char *)dst)[n] = 0; /* one byte past: into the guard */
}

/* The checker itself must catch wrong copies and overruns. */
KTEST(copy, verifier_catches_errors)
{
	unsigned char src[256], dst[2 * COPY_GUARD + 256 + 8];

	EXPECT_EQ(copy_verify_case(broken_copy, src, dst, 100, 1, 3),
		  COPY_WRONG_DATA);
	EXPECT_EQ(copy_verify_case(overrunning_copy, src, dst, 100, 0, 5),
		  COPY_GUARD_HIT);
	EXPECT_EQ(copy_verify_case(copy_unrolled64, src, dst, 100, 0, 5),
		  COPY_OK);
}

KTEST(copy, table)
{
	size_t nr;
	const struct copy_routine *r = copy_routines(&nr);
	unsigned nt = 0;

	EXPECT_EQ(nr, 5);
	for (size_t i = 0; i < nr; i++) {
		nt += r[i].nontemporal;
		for (size_t j = i + 1; j < nr; j++)
			EXPECT_FALSE(strcmp(r[i].name, r[j].name) == 0);
	}
	EXPECT_EQ(nt, 2);
}

KTEST(copy, clear_nt)
{
	unsigned char buf[600];

	for (size_t off = 0; off < 70; off += 3) {
		size_t n = 500 - off;

		memset(buf, 0xee, sizeof(buf));
		copy_clear_nt(buf + off, n);
		for (size_t i = 0; i < sizeof(buf); i++) {
			bool inside = i >= off && i < off + n;

			ASSERT_EQ(buf[i], inside ? 0 : 0xee);
		}
	}
}

KTEST(copy, checksum)
{
	uint64_t a[64], b[64];

	for (size_t i = 0; i < ARRAY_SIZE(a); i++)
		a[i] = b[i] = i * 0x9e3779b97f4a7c15ull + 1;
	EXPECT_EQ(copy_checksum(a, 64), copy_checksum(b, 64));
	/* Same words, two swapped: a plain sum would not see it. */
	b[3] = a[10];
	b[10] = a[3];
	EXPECT_NE(copy_checksum(a, 64), copy_checksum(b, 64));
	/* One word missing (a copy that stopped short). */
	b[3] = a[3];
	b[10] = a[10];
	b[63] = 0;
	EXPECT_NE(copy_checksum(a, 64), copy_checksum(b, 64));
	/* Known value: a = 1 + 2 = 3, b = 1 + 3 = 4. */
	a[0] = 1;
	a[1] = 2;
	EXPECT_EQ(copy_checksum(a, 2), 3ull ^ (4ull << 32));
}

KTEST(copy, size_schedule)
{
	uint64_t s[16];
	size_t n;

	n = copy_size_schedule(s, ARRAY_SIZE(s), 64, MiB(64), 4);
	ASSERT_EQ(n, 11);
	EXPECT_EQ(s[0], 64);
	EXPECT_EQ(s[1], 256);
	EXPECT_EQ(s[5], KiB(64));
	EXPECT_EQ(s[10], MiB(64));
	/* hi that is not a power of the factor: stop below it. */
	n = copy_size_schedule(s, ARRAY_SIZE(s), 64, MiB(48), 4);
	EXPECT_EQ(n, 10);
	EXPECT_EQ(s[n - 1], MiB(16));
	EXPECT_EQ(copy_size_schedule(s, 3, 64, MiB(64), 4), 3);
	EXPECT_EQ(copy_size_schedule(s, ARRAY_SIZE(s), 128, 64, 4), 0);
	/* No overflow near the top of the range. */
	n = copy_size_schedule(s, ARRAY_SIZE(s), 1ull << 62, UINT64_MAX, 4);
	EXPECT_EQ(n, 1);
}

KTEST(copy, bystander_bytes)
{
	EXPECT_EQ(copy_bystander_bytes(MiB(8), KiB(256), MiB(4), MiB(1)),
		  MiB(4));
	EXPECT_EQ(copy_bystander_bytes(MiB(32), KiB(256), MiB(4), MiB(1)),
		  MiB(4));
	EXPECT_EQ(copy_bystander_bytes(KiB(256), KiB(256), MiB(4), MiB(1)),
		  KiB(256));
	EXPECT_EQ(copy_bystander_bytes(MiB(3), KiB(256), MiB(4), MiB(1)),
		  KiB(1536));
	EXPECT_EQ(copy_bystander_bytes(0, KiB(256), MiB(4), MiB(1)), MiB(1));
	/* An odd LLC size (e.g. 11 ways) still gives whole lines. */
	EXPECT_EQ(copy_bystander_bytes(1441800, 0, MiB(4), 0) % COPY_BLOCK, 0);
}

KTEST(copy, interleave_gap_separates_the_two_pollutions)
{
	/* core2-2007: 4 MiB LLC, 1 MiB bystander, 16 KiB write()s. */
	uint64_t llc = MiB(4), ws = MiB(1), piece = KiB(16);
	uint64_t gap = copy_interleave_gap(llc, ws, piece);

	EXPECT_EQ(gap, MiB(2));
	EXPECT_LE(ws + gap, llc);		/* movnti: source only */
	EXPECT_GT(ws + 2 * gap, llc);		/* rep movsb: both */
	/* A 2 MiB bystander: not a whole number of pieces before rounding. */
	ws = MiB(2);
	gap = copy_interleave_gap(llc, ws, piece);
	EXPECT_EQ(gap % piece, 0);
	EXPECT_LE(ws + gap, llc);
	EXPECT_GT(ws + 2 * gap, llc);
	/* No room at all, or pieces larger than the room: one piece. */
	EXPECT_EQ(copy_interleave_gap(MiB(1), MiB(1), piece), piece);
	EXPECT_EQ(copy_interleave_gap(MiB(1), MiB(2), piece), piece);
	EXPECT_EQ(copy_interleave_gap(KiB(64), KiB(32), KiB(64)), KiB(64));
}

KTEST(copy, interleave_slice_covers_the_set_once_per_gap)
{
	uint64_t ws = MiB(1), piece = KiB(16), gap = MiB(2);
	uint64_t slice = copy_interleave_slice(ws, gap, piece);

	EXPECT_EQ(slice, KiB(8));			/* 1 MiB / 128 pieces */
	EXPECT_EQ(slice % COPY_BLOCK, 0);
	/* Uneven: rounded up to lines, so a pass takes at most the gap. */
	slice = copy_interleave_slice(MiB(2), 1376256, piece);
	EXPECT_EQ(slice % COPY_BLOCK, 0);
	EXPECT_GE(slice * (1376256 / piece), MiB(2));
	EXPECT_LT((slice - COPY_BLOCK) * (1376256 / piece), MiB(2));
	EXPECT_EQ(copy_interleave_slice(64, MiB(1), 64), COPY_BLOCK);
}
