/*
 * Host tests for kernel/psf.c: PSF1 and PSF2 fonts built byte by byte
 * here (from the psf(5) layout, not from the parser's constants), glyph
 * lookup with and without a unicode table, and rejection of truncated or
 * corrupt images. Every image handed to the parser is a heap copy of
 * exactly its length, so ASan flags any read past the end.
 */
// HOST_SRCS: kernel/psf.c
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/psf.h"
#include "lib/ktest.h"

#define IMG_MAX 16384

struct img {
	uint8_t b[IMG_MAX];
	size_t len;
};

static void put8(struct img *m, unsigned v)
{
	if (m->len < IMG_MAX)
		m->b[m->len++] = (uint8_t)v;
}

static void put16(struct img *m, unsigned v)
{
	put8(m, v & 0xff);
	put8(m, v >> 8);
}

static void put32(struct img *m, uint32_t v)
{
	put16(m, v & 0xffff);
	put16(m, v >> 16);
}

static void put_utf8(struct img *m, const char *s)
{
	while (*s)
		put8(m, (uint8_t)*s++);
}

/* Glyph g is filled with the byte (g * 7 + row) & 0xff: recognisable. */
static uint8_t pattern(unsigned g, unsigned i)
{
	return (uint8_t)(g * 7 + i);
}

/* PSF1 header and glyphs; the caller appends a table if mode asks. */
static void psf1(struct img *m, unsigned mode, unsigned height)
{
	unsigned n = mode & 1 ? 512 : 256;

	m->len = 0;
	put8(m, 0x36);
	put8(m, 0x04);
	put8(m, mode);
	put8(m, height);
	for (unsigned g = 0; g < n; g++)
		for (unsigned i = 0; i < height; i++)
			put8(m, pattern(g, i));
}

static void psf2(struct img *m, uint32_t hsize, uint32_t flags, uint32_t n,
		 uint32_t bpg, uint32_t h, uint32_t w)
{
	m->len = 0;
	put8(m, 0x72);
	put8(m, 0xb5);
	put8(m, 0x4a);
	put8(m, 0x86);
	put32(m, 0); /* version */
	put32(m, hsize);
	put32(m, flags);
	put32(m, n);
	put32(m, bpg);
	put32(m, h);
	put32(m, w);
	while (m->len < hsize && m->len < IMG_MAX)
		put8(m, 0xee); /* header padding: must be skipped */
	for (uint32_t g = 0; g < n && m->len < IMG_MAX; g++)
		for (uint32_t i = 0; i < bpg; i++)
			put8(m, pattern(g, i));
}

/*
 * Parse a heap copy of exactly len bytes. The copy is kept in a global
 * (freed by the next call) because a successful font points into it.
 */
static uint8_t *copy;

static bool parse(struct psf_font *f, const struct img *m, size_t len,
		  const char **why)
{
	free(copy);
	copy = malloc(len ? len : 1);
	memcpy(copy, m->b, len);
	*why = NULL;
	return psf_parse(f, copy, len, why);
}

static unsigned glyph_of(const struct psf_font *f, const uint8_t *bits)
{
	return (unsigned)((bits - f->glyphs) / f->bytes_per_glyph);
}

KTEST(psf, psf1_without_table)
{
	struct img m;
	struct psf_font f;
	const char *why;
	const uint8_t *a;

	psf1(&m, 0, 4);
	ASSERT_TRUE(parse(&f, &m, m.len, &why));
	EXPECT_EQ(f.version, 1);
	EXPECT_EQ(f.numglyph, 256);
	EXPECT_EQ(f.height, 4);
	EXPECT_EQ(f.width, 8);
	EXPECT_EQ(f.stride, 1);
	EXPECT_EQ(f.bytes_per_glyph, 4);
	EXPECT_TRUE(f.unicode == NULL);
	EXPECT_TRUE(f.glyphs == copy + 4);
	a = psf_glyph(&f, 'A');
	EXPECT_TRUE(a == copy + 4 + 'A' * 4);
	EXPECT_EQ(a[0], pattern('A', 0));
	EXPECT_EQ(a[3], pattern('A', 3));
	/* The byte value is the index; beyond 255 there is nothing. */
	EXPECT_EQ(psf_lookup(&f, 0xe9), 0xe9);
	EXPECT_EQ(psf_lookup(&f, 300), PSF_NO_GLYPH);
	EXPECT_EQ(psf_glyph_index(&f, 300), '?');
	EXPECT_EQ(glyph_of(&f, psf_glyph(&f, 0x263a)), '?');
}

KTEST(psf, psf1_512_glyphs)
{
	struct img m;
	struct psf_font f;
	const char *why;

	psf1(&m, 1, 16);
	ASSERT_TRUE(parse(&f, &m, m.len, &why));
	EXPECT_EQ(f.numglyph, 512);
	EXPECT_EQ(f.height, 16);
	EXPECT_EQ(psf_lookup(&f, 300), 300);
	EXPECT_EQ(psf_glyph(&f, 300)[5], pattern(300, 5));
	EXPECT_EQ(psf_lookup(&f, 512), PSF_NO_GLYPH);
}

/*
 * PSF1 table: glyph 0 = 'A' and U+00C0, glyph 1 = U+263A, glyph 2 = '?',
 * glyph 3 = only the sequence A + U+0301, glyph 5 = 'A' again (the first
 * claim must win), glyph 6 = U+263A again; the others map nothing.
 */
static void psf1_with_table(struct img *m)
{
	psf1(m, 0x02 | 0x04, 8);
	for (unsigned g = 0; g < 256; g++) {
		switch (g) {
		case 0:
			put16(m, 'A');
			put16(m, 0xc0);
			break;
		case 1:
		case 6:
			put16(m, 0x263a);
			break;
		case 2:
			put16(m, '?');
			break;
		case 3:
			put16(m, 0xfffe);
			put16(m, 'A');
			put16(m, 0x301);
			break;
		case 5:
			put16(m, 'A');
			break;
		}
		put16(m, 0xffff);
	}
}

KTEST(psf, psf1_unicode_table)
{
	struct img m;
	struct psf_font f;
	const char *why;

	psf1_with_table(&m);
	ASSERT_TRUE(parse(&f, &m, m.len, &why));
	EXPECT_TRUE(f.unicode == copy + 4 + 256 * 8);
	EXPECT_EQ(psf_lookup(&f, 'A'), 0);
	EXPECT_EQ(psf_lookup(&f, 0xc0), 0);
	EXPECT_EQ(psf_lookup(&f, 0x263a), 1);
	EXPECT_EQ(psf_lookup(&f, '?'), 2);
	EXPECT_EQ(psf_lookup(&f, 0x301), PSF_NO_GLYPH);
	/* With a table the byte value means nothing: 'B' has no glyph. */
	EXPECT_EQ(psf_lookup(&f, 'B'), PSF_NO_GLYPH);
	EXPECT_EQ(psf_glyph_index(&f, 'B'), 2);
	EXPECT_EQ(psf_glyph(&f, 0x263a)[7], pattern(1, 7));
	EXPECT_EQ(glyph_of(&f, psf_glyph(&f, 0x1f600)), 2);
}

/* PSF2: 12 pixels wide (2 bytes a row), 5 high, 3 glyphs, padded header. */
KTEST(psf, psf2_without_table)
{
	struct img m;
	struct psf_font f;
	const char *why;

	psf2(&m, 40, 0, 3, 10, 5, 12);
	ASSERT_TRUE(parse(&f, &m, m.len, &why));
	EXPECT_EQ(f.version, 2);
	EXPECT_EQ(f.numglyph, 3);
	EXPECT_EQ(f.height, 5);
	EXPECT_EQ(f.width, 12);
	EXPECT_EQ(f.stride, 2);
	EXPECT_EQ(f.bytes_per_glyph, 10);
	EXPECT_TRUE(f.glyphs == copy + 40);
	EXPECT_EQ(psf_lookup(&f, 2), 2);
	EXPECT_EQ(psf_glyph(&f, 2)[9], pattern(2, 9));
	EXPECT_EQ(psf_lookup(&f, 3), PSF_NO_GLYPH);
	/* No '?' in a 3-glyph font: the fallback is glyph 0. */
	EXPECT_TRUE(psf_glyph(&f, 'x') == copy + 40);
}

/*
 * PSF2 table: glyph 0 = "A", glyph 1 = U+00E9 and U+263A, glyph 2 = "?"
 * then the sequence e + U+0301, glyph 3 = U+1F600.
 */
static void psf2_with_table(struct img *m)
{
	psf2(m, 32, 1, 4, 16, 16, 8);
	put_utf8(m, "A\xff");
	put_utf8(m, "\xc3\xa9\xe2\x98\xba\xff");
	put_utf8(m, "?\xfe" "e\xcc\x81\xff");
	put_utf8(m, "\xf0\x9f\x98\x80\xff");
}

KTEST(psf, psf2_unicode_table)
{
	struct img m;
	struct psf_font f;
	const char *why;

	psf2_with_table(&m);
	ASSERT_TRUE(parse(&f, &m, m.len, &why));
	EXPECT_EQ(psf_lookup(&f, 'A'), 0);
	EXPECT_EQ(psf_lookup(&f, 0xe9), 1);
	EXPECT_EQ(psf_lookup(&f, 0x263a), 1);
	EXPECT_EQ(psf_lookup(&f, '?'), 2);
	EXPECT_EQ(psf_lookup(&f, 'e'), PSF_NO_GLYPH);
	EXPECT_EQ(psf_lookup(&f, 0x301), PSF_NO_GLYPH);
	EXPECT_EQ(psf_lookup(&f, 0x1f600), 3);
	EXPECT_EQ(psf_glyph_index(&f, 0x1f601), 2);
	EXPECT_EQ(psf_glyph(&f, 0x1f600)[15], pattern(3, 15));
}

#define EXPECT_REJECT(img, len)                                             \
	do {                                                                \
		struct psf_font f_;                                         \
		const char *why_;                                           \
		EXPECT_FALSE(parse(&f_, img, len, &why_));                  \
		EXPECT_TRUE(why_ != NULL);                                  \
	} while (0)

KTEST(psf, rejects_corrupt_headers)
{
	struct img m;

	psf1(&m, 0, 4);
	EXPECT_REJECT(&m, 0);
	EXPECT_REJECT(&m, 3);
	m.b[1] = 0x05; /* bad magic */
	EXPECT_REJECT(&m, m.len);
	psf1(&m, 0x08, 4); /* unknown mode bit */
	EXPECT_REJECT(&m, m.len);
	psf1(&m, 0, 4);
	m.b[3] = 0; /* zero height */
	EXPECT_REJECT(&m, m.len);

	psf2(&m, 32, 0, 3, 10, 5, 12);
	EXPECT_REJECT(&m, 31); /* header cut */
	m.b[4] = 1; /* version */
	EXPECT_REJECT(&m, m.len);
	psf2(&m, 16, 0, 3, 10, 5, 12); /* header size below 32 */
	EXPECT_REJECT(&m, m.len);
	psf2(&m, 4096, 0, 3, 10, 5, 12); /* header size past the end */
	EXPECT_REJECT(&m, 100);
	psf2(&m, 32, 0, 0, 10, 5, 12); /* zero glyphs */
	EXPECT_REJECT(&m, m.len);
	psf2(&m, 32, 0, 3, 0, 5, 12); /* zero bytes per glyph */
	EXPECT_REJECT(&m, 64);
	psf2(&m, 32, 0, 3, 10, 0, 12); /* zero height */
	EXPECT_REJECT(&m, m.len);
	psf2(&m, 32, 0, 3, 10, 5, 0); /* zero width */
	EXPECT_REJECT(&m, m.len);
	psf2(&m, 32, 0, 3, 10, 5, 33); /* wider than supported */
	EXPECT_REJECT(&m, m.len);
	psf2(&m, 32, 0, 3, 9, 5, 12); /* 9 < 5 rows * 2 bytes */
	EXPECT_REJECT(&m, m.len);
	psf2(&m, 32, 0, 0xffffffffu, 1, 1, 1); /* absurd glyph count */
	EXPECT_REJECT(&m, 64);
}

KTEST(psf, rejects_glyphs_past_the_end)
{
	struct img m;

	psf1(&m, 0, 4);
	EXPECT_REJECT(&m, m.len - 1);
	psf1(&m, 1, 4); /* 512 glyphs announced, 256 present */
	EXPECT_REJECT(&m, 4 + 256 * 4);
	psf2(&m, 32, 0, 3, 10, 5, 12);
	EXPECT_REJECT(&m, m.len - 1);
	/* numglyph * bytesperglyph = 2^32: must not wrap to 0. */
	psf2(&m, 32, 0, 0x10000, 0x10000, 1, 1);
	EXPECT_REJECT(&m, 64);
	psf2(&m, 32, 0, 0x10000, 0x10001, 1, 1);
	EXPECT_REJECT(&m, 64);
}

KTEST(psf, rejects_bad_unicode_tables)
{
	struct img m;

	psf1_with_table(&m);
	EXPECT_REJECT(&m, m.len - 2); /* last separator missing */
	EXPECT_REJECT(&m, m.len - 1); /* odd byte */
	psf1(&m, 0x02, 4); /* table announced, none present */
	EXPECT_REJECT(&m, m.len);
	psf2_with_table(&m);
	EXPECT_REJECT(&m, m.len - 1);
	EXPECT_REJECT(&m, m.len - 3); /* U+1F600 cut mid-character */
	psf2(&m, 32, 1, 1, 16, 16, 8);
	put_utf8(&m, "\xc3(\xff"); /* bad continuation byte */
	EXPECT_REJECT(&m, m.len);
	psf2(&m, 32, 1, 1, 16, 16, 8);
	put_utf8(&m, "\x80\xff"); /* stray continuation byte */
	EXPECT_REJECT(&m, m.len);
}

/*
 * Every prefix and many single-byte corruptions of a valid font: the
 * parser may accept or reject, but under ASan it must never read outside
 * the image, and an accepted font must answer lookups within it.
 */
static void sweep(struct ktest_ctx *ctx, struct img *m)
{
	struct psf_font f;
	const char *why;
	static const uint8_t values[] = {0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff};
	unsigned accepted_prefixes = 0;

	for (size_t len = 0; len <= m->len; len++) {
		if (!parse(&f, m, len, &why))
			continue;
		accepted_prefixes++;
		psf_glyph(&f, 'A');
		psf_glyph(&f, 0x263a);
	}
	/* Only the whole image is valid: each prefix cuts the table. */
	EXPECT_EQ(accepted_prefixes, 1);
	for (size_t i = 0; i < m->len; i++) {
		uint8_t saved = m->b[i];

		for (size_t v = 0; v < sizeof(values); v++) {
			m->b[i] = values[v];
			if (parse(&f, m, m->len, &why)) {
				const uint8_t *g = psf_glyph(&f, 0x1f600);

				EXPECT_TRUE(psf_glyph(&f, 'A') >= copy);
				EXPECT_TRUE(g + f.bytes_per_glyph <=
					    copy + m->len);
			}
		}
		m->b[i] = saved;
	}
}

KTEST(psf, fuzz_truncation_and_corruption)
{
	struct img m;

	psf1_with_table(&m);
	sweep(ctx, &m);
	psf2_with_table(&m);
	sweep(ctx, &m);
}

/* The font the kernel embeds, if the kernel has been built. */
KTEST(psf, debian_console_font)
{
	static struct img m;
	struct psf_font f;
	const char *why;
	FILE *fp = fopen("build/font.psf", "rb");
	unsigned lit = 0;
	const uint8_t *a;

	if (!fp)
		KTEST_SKIP("build/font.psf not built");
	m.len = fread(m.b, 1, sizeof(m.b), fp);
	fclose(fp);
	ASSERT_TRUE(parse(&f, &m, m.len, &why));
	EXPECT_EQ(f.width, 8);
	EXPECT_EQ(f.height, 16);
	EXPECT_TRUE(f.unicode != NULL);
	EXPECT_NE(psf_lookup(&f, 'A'), PSF_NO_GLYPH);
	EXPECT_NE(psf_lookup(&f, '?'), PSF_NO_GLYPH);
	EXPECT_NE(psf_lookup(&f, 0xe9), PSF_NO_GLYPH); /* e acute */
	a = psf_glyph(&f, 'A');
	for (unsigned i = 0; i < f.bytes_per_glyph; i++)
		lit += (unsigned)__builtin_popcount(a[i]);
	EXPECT_GT(lit, 10);
	a = psf_glyph(&f, ' ');
	lit = 0;
	for (unsigned i = 0; i < f.bytes_per_glyph; i++)
		lit += (unsigned)__builtin_popcount(a[i]);
	EXPECT_EQ(lit, 0);
	ktest_diag("font: %u glyphs %ux%u, unicode table %zu bytes",
		   f.numglyph, f.width, f.height, f.unicode_len);
}
