/*
 * The SSE2 copy routines of the copy experiment (seed 001): ordinary
 * 128-bit stores, and the non-temporal movnti / movntdq stores that the
 * seed's cache-pollution-aware __copy_from_user_ll() used. This is the
 * only kernel file built with -msse2 (see the Makefile's *_simd.c rule);
 * the kernel must have enabled the SSE state (fpu_init_cpu()) on the CPU
 * that calls in. The main loops are inline assembly so that the
 * instructions measured are exactly the ones named, whatever the
 * compiler would have chosen.
 *
 * Non-temporal stores go through write-combining buffers and are weakly
 * ordered (SDM vol. 1, 10.4.6.2; vol. 3A, 11.3.1): each routine ends
 * with sfence so that the copy is visible, in order, to whatever runs
 * next, like an ordinary memcpy. movntdq needs a 16-byte aligned
 * destination (#GP otherwise); both are used on whole cache lines only,
 * so a line is written in one go and never half-cached.
 */
#include "workloads/copy_routines.h"

static inline void sfence(void)
{
	__asm__ volatile("sfence" : : : "memory");
}

static void sse2_body(unsigned char *d, const unsigned char *s, size_t body)
{
	for (size_t i = 0; i < body; i += COPY_BLOCK)
		__asm__ volatile("movdqu   (%[s]), %%xmm0\n\t"
				 "movdqu 16(%[s]), %%xmm1\n\t"
				 "movdqu 32(%[s]), %%xmm2\n\t"
				 "movdqu 48(%[s]), %%xmm3\n\t"
				 "movdqa %%xmm0,   (%[d])\n\t"
				 "movdqa %%xmm1, 16(%[d])\n\t"
				 "movdqa %%xmm2, 32(%[d])\n\t"
				 "movdqa %%xmm3, 48(%[d])"
				 :
				 : [s] "r"(s + i), [d] "r"(d + i)
				 : "xmm0", "xmm1", "xmm2", "xmm3", "memory");
}

void copy_sse2(void *dst, const void *src, size_t n)
{
	copy_blocks(dst, src, n, COPY_ALIGN_SSE, sse2_body);
}

/* The non-temporal bodies end with sfence, before the tail's ordinary
 * stores. */
static void movntdq_body(unsigned char *d, const unsigned char *s,
			 size_t body)
{
	for (size_t i = 0; i < body; i += COPY_BLOCK)
		__asm__ volatile("movdqu    (%[s]), %%xmm0\n\t"
				 "movdqu  16(%[s]), %%xmm1\n\t"
				 "movdqu  32(%[s]), %%xmm2\n\t"
				 "movdqu  48(%[s]), %%xmm3\n\t"
				 "movntdq %%xmm0,   (%[d])\n\t"
				 "movntdq %%xmm1, 16(%[d])\n\t"
				 "movntdq %%xmm2, 32(%[d])\n\t"
				 "movntdq %%xmm3, 48(%[d])"
				 :
				 : [s] "r"(s + i), [d] "r"(d + i)
				 : "xmm0", "xmm1", "xmm2", "xmm3", "memory");
	sfence();
}

void copy_movntdq(void *dst, const void *src, size_t n)
{
	copy_blocks(dst, src, n, COPY_ALIGN_NT, movntdq_body);
}

static void movnti_body(unsigned char *d, const unsigned char *s, size_t body)
{
	for (size_t i = 0; i < body; i += COPY_BLOCK) {
		uint64_t t0, t1, t2, t3;

		/* Two halves of four words: four scratch registers keep
		 * the asm within what the register allocator can give. */
		__asm__ volatile("movq    (%[s]), %[t0]\n\t"
				 "movq   8(%[s]), %[t1]\n\t"
				 "movq  16(%[s]), %[t2]\n\t"
				 "movq  24(%[s]), %[t3]\n\t"
				 "movnti %[t0],   (%[d])\n\t"
				 "movnti %[t1],  8(%[d])\n\t"
				 "movnti %[t2], 16(%[d])\n\t"
				 "movnti %[t3], 24(%[d])\n\t"
				 "movq  32(%[s]), %[t0]\n\t"
				 "movq  40(%[s]), %[t1]\n\t"
				 "movq  48(%[s]), %[t2]\n\t"
				 "movq  56(%[s]), %[t3]\n\t"
				 "movnti %[t0], 32(%[d])\n\t"
				 "movnti %[t1], 40(%[d])\n\t"
				 "movnti %[t2], 48(%[d])\n\t"
				 "movnti %[t3], 56(%[d])"
				 : [t0] "=&r"(t0), [t1] "=&r"(t1),
				   [t2] "=&r"(t2), [t3] "=&r"(t3)
				 : [s] "r"(s + i), [d] "r"(d + i)
				 : "memory");
	}
	sfence();
}

void copy_movnti(void *dst, const void *src, size_t n)
{
	copy_blocks(dst, src, n, COPY_ALIGN_NT, movnti_body);
}

void copy_clear_nt(void *dst, size_t n)
{
	unsigned char *d = dst;
	struct copy_split sp =
		copy_split((uintptr_t)d, n, COPY_ALIGN_NT, COPY_BLOCK);
	uint64_t zero = 0;

	for (size_t i = 0; i < sp.head; i++)
		d[i] = 0;
	d += sp.head;
	for (size_t i = 0; i < sp.body; i += sizeof(uint64_t))
		__asm__ volatile("movnti %[z], (%[d])"
				 :
				 : [z] "r"(zero), [d] "r"(d + i)
				 : "memory");
	sfence();
	for (size_t i = 0; i < sp.tail; i++)
		d[sp.body + i] = 0;
}
