/*
 * Memory copy routines of the copy experiment (seed 001: a cache-
 * pollution-aware __copy_from_user_ll() that copies with non-temporal
 * movnti stores instead of ordinary ones).
 *
 * Every routine has memcpy's contract for non-overlapping buffers:
 * copy n bytes from src to dst, any alignment, any n (0 included).
 *
 *   rep_movsb   one "rep movsb" (the CPU's own string copy)
 *   unrolled64  64-bit general-register loads/stores, 64 bytes a turn
 *   sse2        movdqu loads, movdqa stores to a 16-byte aligned dst
 *   movnti      64-bit non-temporal stores (movnti), then sfence
 *   movntdq     128-bit non-temporal stores (movntdq), then sfence
 *
 * The first two are general-register code and live here, inline, so
 * that they are compiled with the kernel's -mno-sse flags wherever they
 * are used. The other three are in copy_simd.c, the only file built
 * with -msse2; the kernel must have run fpu_init_cpu() on the CPU first.
 * Non-temporal stores are done on whole, aligned cache lines only: the
 * unaligned head and the short tail use ordinary stores (copy_split()).
 *
 * Portable: no arch/ headers; the host tests compile all of it.
 */
#ifndef WORKLOADS_COPY_ROUTINES_H
#define WORKLOADS_COPY_ROUTINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/compiler.h"

/* Bytes moved per turn of every unrolled loop: one cache line. */
#define COPY_BLOCK CACHE_LINE_SIZE
/* Destination alignment each routine's main loop wants. */
#define COPY_ALIGN_GPR sizeof(uint64_t)
#define COPY_ALIGN_SSE 16
#define COPY_ALIGN_NT CACHE_LINE_SIZE

typedef void (*copy_fn)(void *dst, const void *src, size_t n);

struct copy_routine {
	const char *name;	/* the @@RESULT variant */
	copy_fn fn;
	bool sse;		/* needs the SSE state (fpu_init_cpu()) */
	bool nontemporal;	/* bypasses the cache for the destination */
};

/*
 * How a copy of n bytes to dst splits: 'head' bytes of ordinary stores
 * until dst + head is aligned to 'align' (or n runs out), a 'body' that
 * is a multiple of 'block' and starts aligned, and a 'tail' < block.
 * align and block are powers of two.
 */
struct copy_split {
	size_t head, body, tail;
};

static inline struct copy_split copy_split(uintptr_t dst, size_t n,
					   size_t align, size_t block)
{
	struct copy_split sp;
	size_t mis = dst & (align - 1);

	sp.head = mis ? align - mis : 0;
	if (sp.head > n)
		sp.head = n;
	sp.body = (n - sp.head) & ~(block - 1);
	sp.tail = n - sp.head - sp.body;
	return sp;
}

/* Unaligned-safe 64-bit load and store (compiled to one mov each). */
static inline uint64_t copy_load64(const void *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

static inline void copy_store64(void *p, uint64_t v)
{
	__builtin_memcpy(p, &v, sizeof(v));
}

/* Ordinary stores for heads and tails: words, then bytes. */
static inline void copy_small(unsigned char *d, const unsigned char *s,
			      size_t n)
{
	for (; n >= sizeof(uint64_t); n -= sizeof(uint64_t)) {
		copy_store64(d, copy_load64(s));
		d += sizeof(uint64_t);
		s += sizeof(uint64_t);
	}
	while (n--)
		*d++ = *s++;
}

/* Copies body bytes (a multiple of COPY_BLOCK) from s to d, d aligned as
 * the routine asked copy_blocks() for. */
typedef void (*copy_body_fn)(unsigned char *d, const unsigned char *s,
			     size_t body);

/*
 * The shape every block routine shares: ordinary stores for the head up
 * to dst aligned to 'align', body() for the whole COPY_BLOCK blocks
 * from there, ordinary stores for the tail. body() is a constant at each
 * call, so the compiler inlines it and the routine's code is the same as
 * if written out (__always_inline makes sure).
 */
static inline __attribute__((always_inline)) void
copy_blocks(void *dst, const void *src, size_t n, size_t align,
	    copy_body_fn body)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	struct copy_split sp = copy_split((uintptr_t)d, n, align, COPY_BLOCK);

	copy_small(d, s, sp.head);
	d += sp.head;
	s += sp.head;
	body(d, s, sp.body);
	copy_small(d + sp.body, s + sp.body, sp.tail);
}

static inline void copy_rep_movsb(void *dst, const void *src, size_t n)
{
	/* The ABI guarantees DF = 0, so the copy goes upwards. */
	__asm__ volatile("rep movsb"
			 : "+D"(dst), "+S"(src), "+c"(n)
			 :
			 : "memory");
}

/* All loads first, then all stores: eight independent general
 * registers per cache line. */
static inline void copy_unrolled64_body(unsigned char *d,
					const unsigned char *s, size_t body)
{
	for (size_t i = 0; i < body; i += COPY_BLOCK) {
		uint64_t w0 = copy_load64(s + i), w1 = copy_load64(s + i + 8),
			 w2 = copy_load64(s + i + 16),
			 w3 = copy_load64(s + i + 24),
			 w4 = copy_load64(s + i + 32),
			 w5 = copy_load64(s + i + 40),
			 w6 = copy_load64(s + i + 48),
			 w7 = copy_load64(s + i + 56);

		copy_store64(d + i, w0);
		copy_store64(d + i + 8, w1);
		copy_store64(d + i + 16, w2);
		copy_store64(d + i + 24, w3);
		copy_store64(d + i + 32, w4);
		copy_store64(d + i + 40, w5);
		copy_store64(d + i + 48, w6);
		copy_store64(d + i + 56, w7);
	}
}

static inline void copy_unrolled64(void *dst, const void *src, size_t n)
{
	copy_blocks(dst, src, n, COPY_ALIGN_GPR, copy_unrolled64_body);
}

/* copy_simd.c (SSE2; fpu_init_cpu() first in the kernel). */
void copy_sse2(void *dst, const void *src, size_t n);
void copy_movnti(void *dst, const void *src, size_t n);
void copy_movntdq(void *dst, const void *src, size_t n);
/* Zero n bytes with non-temporal stores (so dst ends up not cached). */
void copy_clear_nt(void *dst, size_t n);

/* Every routine, in report order; *n gets the count. */
static inline const struct copy_routine *copy_routines(size_t *n)
{
	static const struct copy_routine table[] = {
		{"rep_movsb", copy_rep_movsb, false, false},
		{"unrolled64", copy_unrolled64, false, false},
		{"sse2", copy_sse2, true, false},
		{"movnti", copy_movnti, true, true},
		{"movntdq", copy_movntdq, true, true},
	};

	*n = ARRAY_SIZE(table);
	return table;
}

/*
 * The consumer's read of a copied buffer: a Fletcher-style sum of the
 * 64-bit words (two dependent adds per word, so it costs about the same
 * whatever routine wrote the data). Position-dependent, so it also
 * serves as the check that a copy is right: misplaced words change it.
 */
static inline uint64_t copy_checksum(const uint64_t *w, size_t nwords)
{
	uint64_t a = 0, b = 0;

	for (size_t i = 0; i < nwords; i++) {
		a += w[i];
		b += a;
	}
	return a ^ (b << 32 | b >> 32);
}

/*
 * Fill out[0..cap) with lo, lo*factor, lo*factor^2, ... up to hi
 * (inclusive). Returns how many it wrote. factor >= 2.
 */
static inline size_t copy_size_schedule(uint64_t *out, size_t cap,
					uint64_t lo, uint64_t hi,
					unsigned factor)
{
	size_t n = 0;

	for (uint64_t s = lo; s && s <= hi && n < cap; s *= factor) {
		out[n++] = s;
		if (s > UINT64_MAX / factor)
			break;
	}
	return n;
}

/*
 * The bystander's working set: half the last-level cache (so it fits
 * with room to spare when nothing disturbs it), clamped to [lo, hi];
 * 'fallback' when the LLC size is unknown (0).
 */
static inline uint64_t copy_bystander_bytes(uint64_t llc, uint64_t lo,
					    uint64_t hi, uint64_t fallback)
{
	uint64_t ws = llc ? llc / 2 : fallback;

	if (ws < lo)
		ws = lo;
	if (ws > hi)
		ws = hi;
	return ALIGN_DOWN(ws, (uint64_t)COPY_BLOCK);
}

/*
 * The interleaved scenario: a large copy done in pieces of 'piece' bytes
 * (the size of one write() system call) while a bystander re-reads its
 * working set of ws bytes a slice after each piece, cyclically, so that
 * between two touches of one bystander line 'gap' bytes are copied. With
 * an LRU cache of llc bytes the line survives when ws plus what the copy
 * leaves in the cache during the gap fits: an ordinary copy leaves source
 * and destination (2 x gap), a non-temporal one the source only (gap).
 * The gap is chosen between the two, 2/3 of the room the bystander
 * leaves, (llc - ws) x 2/3, so that ws + gap fits with a sixth of that
 * room to spare and ws + 2 x gap overflows by a third of it. Rounded
 * down to whole pieces, at least one piece (also when ws >= llc).
 * piece > 0.
 */
static inline uint64_t copy_interleave_gap(uint64_t llc, uint64_t ws,
					   uint64_t piece)
{
	uint64_t gap = llc > ws ? (llc - ws) / 3 * 2 : 0;

	gap -= gap % piece;
	return gap ? gap : piece;
}

/*
 * The bystander's slice per piece: ws spread over the gap's pieces,
 * rounded up to whole cache lines (at least one line). piece <= gap.
 */
static inline uint64_t copy_interleave_slice(uint64_t ws, uint64_t gap,
					     uint64_t piece)
{
	uint64_t pieces = gap / piece, slice;

	slice = (ws + pieces - 1) / pieces;
	slice = (slice + COPY_BLOCK - 1) & ~(uint64_t)(COPY_BLOCK - 1);
	return slice ? slice : COPY_BLOCK;
}

/*
 * Self-check of one copy against memcpy semantics. Fills src[0..soff+n)
 * with a pattern and dst[0..2*COPY_GUARD+doff+n) with a different one,
 * copies n bytes from src + soff to dst + COPY_GUARD + doff, and checks
 * the copied bytes, the guard bytes on both sides and the source.
 */
#define COPY_GUARD 64
#define COPY_GUARD_BYTE(i) ((unsigned char)(0xa5 ^ (i)))
#define COPY_SRC_BYTE(i, n) ((unsigned char)((i) * 131 + (n) + 7))

enum copy_verdict {
	COPY_OK = 0,
	COPY_WRONG_DATA,	/* a destination byte differs from the source */
	COPY_GUARD_HIT,		/* a byte outside the destination changed */
	COPY_SRC_CHANGED,	/* the source was written to */
};

static inline enum copy_verdict copy_verify_case(copy_fn fn,
						 unsigned char *src,
						 unsigned char *dst, size_t n,
						 size_t soff, size_t doff)
{
	size_t dlen = 2 * COPY_GUARD + doff + n;
	unsigned char *d = dst + COPY_GUARD + doff;

	for (size_t i = 0; i < soff + n; i++)
		src[i] = COPY_SRC_BYTE(i, n);
	for (size_t i = 0; i < dlen; i++)
		dst[i] = COPY_GUARD_BYTE(i);
	fn(d, src + soff, n);
	for (size_t i = 0; i < soff + n; i++)
		if (src[i] != COPY_SRC_BYTE(i, n))
			return COPY_SRC_CHANGED;
	for (size_t i = 0; i < n; i++)
		if (d[i] != COPY_SRC_BYTE(soff + i, n))
			return COPY_WRONG_DATA;
	for (size_t i = 0; i < dlen; i++) {
		bool inside = i >= COPY_GUARD + doff &&
			      i < COPY_GUARD + doff + n;

		if (!inside && dst[i] != COPY_GUARD_BYTE(i))
			return COPY_GUARD_HIT;
	}
	return COPY_OK;
}

#endif
