/*
 * In-kernel tests of the copy experiment's routines (seed 001):
 * the SSE state that fpu_init_cpu() sets up, and every copy routine
 * (rep movsb, 64-bit loop, SSE2, movnti, movntdq) against memcpy
 * semantics for many (size, source offset, destination offset)
 * combinations, with guard bytes around the destination.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/fpu.h"
#include "lib/ktest.h"
#include "lib/string.h"
#include "mm/page_alloc.h"
#include "workloads/copy_routines.h"

#define FCW_AFTER_FNINIT 0x037f /* SDM vol. 1, 8.1.5: all masked */
#define MXCSR_DEFAULT 0x1f80u
#define MXCSR_FLAGS 0x3fu	/* sticky exception flags: ignored */
#define BUF_ORDER 1		/* 8 KiB: 4097 bytes + offset + guards */
#define BIG_ORDER 4		/* 64 KiB for the repeatability test */

static const size_t sizes[] = {0,   1,   7,   8,    15,   16,  63,  64,
			       65,  127, 128, 129,  1000, 4095, 4096,
			       4097};
static const size_t offsets[] = {0, 1, 7, 8, 15, 16, 33, 63};

KTEST(copy, fpu_state)
{
	uint16_t fcw;
	uint32_t mxcsr;

	fpu_init_cpu();
	fpu_init_cpu(); /* idempotent */
	EXPECT_TRUE(fpu_sse_enabled());
	EXPECT_EQ(read_cr0() & (CR0_EM | CR0_TS), 0);
	EXPECT_EQ(read_cr0() & CR0_MP, CR0_MP);
	EXPECT_EQ(read_cr4() & (CR4_OSFXSR | CR4_OSXMMEXCPT),
		  CR4_OSFXSR | CR4_OSXMMEXCPT);
	__asm__ volatile("fnstcw %0" : "=m"(fcw));
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	EXPECT_EQ(fcw, FCW_AFTER_FNINIT);
	EXPECT_EQ(mxcsr & ~MXCSR_FLAGS, MXCSR_DEFAULT);
}

KTEST(copy, routines_match_memcpy)
{
	size_t nr;
	const struct copy_routine *r = copy_routines(&nr);
	unsigned char *src = page_alloc(BUF_ORDER);
	unsigned char *dst = page_alloc(BUF_ORDER);
	unsigned cases = 0, bad = 0;

	fpu_init_cpu();
	ASSERT_TRUE(src && dst);
	for (size_t k = 0; k < nr; k++)
		for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
			for (size_t s = 0; s < ARRAY_SIZE(offsets); s++)
				for (size_t d = 0; d < ARRAY_SIZE(offsets);
				     d++) {
					enum copy_verdict v = copy_verify_case(
						r[k].fn, src, dst, sizes[i],
						offsets[s], offsets[d]);

					cases++;
					if (v == COPY_OK || bad++ > 4)
						continue;
					ktest_diag("%s: %lu bytes src+%lu "
						   "dst+%lu: verdict %d",
						   r[k].name,
						   (unsigned long)sizes[i],
						   (unsigned long)offsets[s],
						   (unsigned long)offsets[d],
						   v);
				}
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(cases, nr * ARRAY_SIZE(sizes) * ARRAY_SIZE(offsets) *
				 ARRAY_SIZE(offsets));
	page_free(src, BUF_ORDER);
	page_free(dst, BUF_ORDER);
}

/*
 * Each SSE routine twice in a row into two buffers over 64 KiB: the
 * results must be identical to each other and to the source, which
 * fails if the XMM state were not usable or were clobbered between
 * the loads and stores.
 */
KTEST(copy, sse_repeatable)
{
	size_t nr, len = PAGE_SIZE << BIG_ORDER;
	const struct copy_routine *r = copy_routines(&nr);
	uint64_t *src = page_alloc(BIG_ORDER);
	unsigned char *a = page_alloc(BIG_ORDER), *b = page_alloc(BIG_ORDER);

	fpu_init_cpu();
	ASSERT_TRUE(src && a && b);
	for (size_t i = 0; i < len / sizeof(uint64_t); i++)
		src[i] = i * 0x9e3779b97f4a7c15ull + 3;
	for (size_t k = 0; k < nr; k++) {
		if (!r[k].sse)
			continue;
		memset(a, 0, len);
		memset(b, 0xff, len);
		/* Odd length and offset: heads and tails too. */
		r[k].fn(a + 3, (unsigned char *)src + 5, len - 77);
		r[k].fn(b + 3, (unsigned char *)src + 5, len - 77);
		EXPECT_EQ(memcmp(a + 3, b + 3, len - 77), 0);
		EXPECT_EQ(memcmp(a + 3, (unsigned char *)src + 5, len - 77),
			  0);
		EXPECT_EQ(a[2], 0);
		EXPECT_EQ(b[2], 0xff);
		EXPECT_EQ(b[3 + len - 77], 0xff);
	}
	page_free(src, BIG_ORDER);
	page_free(a, BIG_ORDER);
	page_free(b, BIG_ORDER);
}

/* The checker must be able to say no: a copy one byte short. */
static void short_copy(void *dst, const void *src, size_t n)
{
	copy_rep_movsb(dst, src, n ? n - 1 : 0);
}

KTEST(copy, verifier_fails_short_copy)
{
	unsigned char *src = page_alloc(BUF_ORDER);
	unsigned char *dst = page_alloc(BUF_ORDER);

	ASSERT_TRUE(src && dst);
	EXPECT_EQ(copy_verify_case(short_copy, src, dst, 100, 1, 2),
		  COPY_WRONG_DATA);
	EXPECT_EQ(copy_verify_case(short_copy, src, dst, 0, 1, 2), COPY_OK);
	page_free(src, BUF_ORDER);
	page_free(dst, BUF_ORDER);
}

KTEST(copy, clear_nt)
{
	unsigned char *buf = page_alloc(BUF_ORDER);

	fpu_init_cpu();
	ASSERT_TRUE(buf);
	for (size_t off = 0; off < 70; off += 5) {
		size_t n = 4097 - off;

		memset(buf, 0xee, PAGE_SIZE << BUF_ORDER);
		copy_clear_nt(buf + off, n);
		for (size_t i = 0; i < (PAGE_SIZE << BUF_ORDER); i++) {
			bool inside = i >= off && i < off + n;

			ASSERT_EQ(buf[i], inside ? 0 : 0xee);
		}
	}
	page_free(buf, BUF_ORDER);
}
