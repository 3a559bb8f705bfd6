/*
 * PC Screen Font parser (format: kbd's psf(5); the Linux console's
 * lib/fonts and kbd's psffontop.c read the same layout). Every offset is
 * checked against the image length before it is read; the unicode table
 * is walked once at parse time, which both validates it and fills the
 * fast map of the first PSF_FAST_MAP_SIZE code points.
 */
#include "kernel/psf.h"
#include "lib/assert.h"
#include "lib/compiler.h"

#define PSF1_MAGIC0 0x36
#define PSF1_MAGIC1 0x04
#define PSF1_HEADER_SIZE 4
#define PSF1_MODE512 0x01 /* 512 glyphs instead of 256 */
#define PSF1_MODEHASTAB 0x02 /* a unicode table follows the glyphs */
#define PSF1_MODESEQ 0x04 /* the table may hold sequences */
#define PSF1_MODE_KNOWN (PSF1_MODE512 | PSF1_MODEHASTAB | PSF1_MODESEQ)
#define PSF1_GLYPHS 256
#define PSF1_GLYPHS_512 512
#define PSF1_WIDTH 8
#define PSF1_SEPARATOR 0xffff /* ends one glyph's entry */
#define PSF1_STARTSEQ 0xfffe /* the rest of the entry are sequences */
#define PSF1_UNIT 2 /* bytes per table value */

#define PSF2_MAGIC 0x864ab572u /* 72 b5 4a 86, read little-endian */
#define PSF2_HEADER_SIZE 32
#define PSF2_VERSION 0
#define PSF2_HAS_UNICODE_TABLE 0x01
#define PSF2_SEPARATOR 0xff
#define PSF2_STARTSEQ 0xfe

/* PSF2 header fields, as byte offsets (the header is little-endian). */
#define PSF2_OFF_MAGIC 0
#define PSF2_OFF_VERSION 4
#define PSF2_OFF_HEADERSIZE 8
#define PSF2_OFF_FLAGS 12
#define PSF2_OFF_NUMGLYPH 16
#define PSF2_OFF_BYTESPERGLYPH 20
#define PSF2_OFF_HEIGHT 24
#define PSF2_OFF_WIDTH 28

#define BITS_PER_BYTE 8

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static bool fail(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	return false;
}

/*
 * Decode one UTF-8 character at p[0..avail) into *cp. Returns its length
 * in bytes, or 0 if it is malformed or runs past avail.
 */
static size_t utf8_decode(const uint8_t *p, size_t avail, uint32_t *cp)
{
	size_t n;
	uint32_t c = p[0];

	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		c &= 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		c &= 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		c &= 0x07;
	} else {
		return 0;
	}
	if (n > avail)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	*cp = c;
	return n;
}

/* What a walk of the unicode table looks for, and what it found. */
struct walk {
	uint32_t want; /* code point searched, or PSF_NO_GLYPH */
	uint32_t result; /* its glyph, or PSF_NO_GLYPH */
	uint32_t *fast; /* fast map to fill, or NULL */
};

/* Record codepoint -> glyph; returns true when the walk can stop. */
static bool walk_found(struct walk *w, uint32_t cp, uint32_t glyph)
{
	/* The first glyph that claims a code point wins. */
	if (w->fast && cp < PSF_FAST_MAP_SIZE && w->fast[cp] == PSF_NO_GLYPH)
		w->fast[cp] = glyph;
	if (cp == w->want) {
		w->result = glyph;
		return !w->fast;
	}
	return false;
}

/*
 * Walk the unicode table: one entry per glyph, each a list of single
 * code points, then optionally sequences (ignored: we map one code point
 * to one glyph), then a separator. Each single code point goes to
 * walk_found(); the walk stops early when that returns true. Returns
 * false (with *why) if the table is malformed or ends before numglyph
 * entries.
 */
static bool walk_table(const struct psf_font *f, struct walk *w,
		       const char **why)
{
	const uint8_t *t = f->unicode;
	size_t len = f->unicode_len, off = 0;

	for (uint32_t g = 0; g < f->numglyph; g++) {
		bool seq = false;

		for (;;) {
			uint32_t cp;

			if (f->version == 1) {
				if (len - off < PSF1_UNIT)
					return fail(why,
						    "unicode table truncated");
				cp = get_le16(t + off);
				off += PSF1_UNIT;
				if (cp == PSF1_SEPARATOR)
					break;
				if (cp == PSF1_STARTSEQ) {
					seq = true;
					continue;
				}
			} else {
				size_t n;

				if (off >= len)
					return fail(why,
						    "unicode table truncated");
				if (t[off] == PSF2_SEPARATOR) {
					off++;
					break;
				}
				if (t[off] == PSF2_STARTSEQ) {
					off++;
					seq = true;
					continue;
				}
				n = utf8_decode(t + off, len - off, &cp);
				if (!n)
					return fail(why, "bad UTF-8 in unicode "
							 "table");
				off += n;
			}
			if (!seq && walk_found(w, cp, g))
				return true;
		}
	}
	return true;
}

static bool parse_psf1(struct psf_font *f, const uint8_t *b, size_t len,
		       const char **why)
{
	uint8_t mode = b[2];
	size_t glyph_bytes;

	if (mode & ~PSF1_MODE_KNOWN)
		return fail(why, "unknown PSF1 mode bits");
	f->version = 1;
	f->numglyph = mode & PSF1_MODE512 ? PSF1_GLYPHS_512 : PSF1_GLYPHS;
	f->height = b[3];
	f->width = PSF1_WIDTH;
	f->stride = 1;
	f->bytes_per_glyph = f->height;
	if (f->height == 0)
		return fail(why, "zero glyph height");
	if (f->height > PSF_MAX_HEIGHT)
		return fail(why, "glyph larger than supported");
	glyph_bytes = (size_t)f->numglyph * f->bytes_per_glyph;
	if (glyph_bytes > len - PSF1_HEADER_SIZE)
		return fail(why, "glyphs run past the end");
	f->glyphs = b + PSF1_HEADER_SIZE;
	if (mode & PSF1_MODEHASTAB) {
		f->unicode = f->glyphs + glyph_bytes;
		f->unicode_len = len - PSF1_HEADER_SIZE - glyph_bytes;
	}
	return true;
}

static bool parse_psf2(struct psf_font *f, const uint8_t *b, size_t len,
		       const char **why)
{
	uint32_t hsize, flags;
	uint64_t glyph_bytes;

	if (len < PSF2_HEADER_SIZE)
		return fail(why, "too short for a PSF2 header");
	if (get_le32(b + PSF2_OFF_VERSION) != PSF2_VERSION)
		return fail(why, "unknown PSF2 version");
	hsize = get_le32(b + PSF2_OFF_HEADERSIZE);
	flags = get_le32(b + PSF2_OFF_FLAGS);
	f->version = 2;
	f->numglyph = get_le32(b + PSF2_OFF_NUMGLYPH);
	f->bytes_per_glyph = get_le32(b + PSF2_OFF_BYTESPERGLYPH);
	f->height = get_le32(b + PSF2_OFF_HEIGHT);
	f->width = get_le32(b + PSF2_OFF_WIDTH);
	if (hsize < PSF2_HEADER_SIZE)
		return fail(why, "PSF2 header size too small");
	if (hsize > len)
		return fail(why, "PSF2 header size past the end");
	if (!f->numglyph || !f->bytes_per_glyph || !f->height || !f->width)
		return fail(why, "zero glyph count or size");
	if (f->numglyph > PSF_MAX_GLYPHS)
		return fail(why, "too many glyphs");
	if (f->width > PSF_MAX_WIDTH || f->height > PSF_MAX_HEIGHT)
		return fail(why, "glyph larger than supported");
	f->stride = (f->width + BITS_PER_BYTE - 1) / BITS_PER_BYTE;
	if (f->bytes_per_glyph < f->height * f->stride)
		return fail(why, "bytes per glyph smaller than the bitmap");
	/* 64-bit product: both factors were read from the file. */
	glyph_bytes = (uint64_t)f->numglyph * f->bytes_per_glyph;
	if (glyph_bytes > len - hsize)
		return fail(why, "glyphs run past the end");
	f->glyphs = b + hsize;
	if (flags & PSF2_HAS_UNICODE_TABLE) {
		f->unicode = f->glyphs + glyph_bytes;
		f->unicode_len = len - hsize - (size_t)glyph_bytes;
	}
	return true;
}

bool psf_parse(struct psf_font *font, const void *buf, size_t len,
	       const char **why)
{
	const uint8_t *b = buf;
	struct psf_font f = {0};
	struct walk w = {PSF_NO_GLYPH, PSF_NO_GLYPH, NULL};
	bool ok;

	if (!b || len < PSF1_HEADER_SIZE)
		return fail(why, "too short for a font header");
	if (b[0] == PSF1_MAGIC0 && b[1] == PSF1_MAGIC1)
		ok = parse_psf1(&f, b, len, why);
	else if (get_le32(b + PSF2_OFF_MAGIC) == PSF2_MAGIC)
		ok = parse_psf2(&f, b, len, why);
	else
		return fail(why, "bad magic");
	if (!ok)
		return false;

	for (uint32_t cp = 0; cp < PSF_FAST_MAP_SIZE; cp++)
		f.fast[cp] = f.unicode || cp >= f.numglyph ? PSF_NO_GLYPH : cp;
	if (f.unicode) {
		w.fast = f.fast;
		if (!walk_table(&f, &w, why))
			return false;
	}
	f.fallback = f.fast[PSF_REPLACEMENT];
	if (f.fallback == PSF_NO_GLYPH)
		f.fallback = 0;
	*font = f;
	return true;
}

uint32_t psf_lookup(const struct psf_font *font, uint32_t codepoint)
{
	struct walk w = {codepoint, PSF_NO_GLYPH, NULL};

	if (codepoint < PSF_FAST_MAP_SIZE)
		return font->fast[codepoint];
	if (!font->unicode)
		return codepoint < font->numglyph ? codepoint : PSF_NO_GLYPH;
	/* Validated by psf_parse(): the walk cannot fail here. */
	kassert(walk_table(font, &w, NULL));
	return w.result;
}

uint32_t psf_glyph_index(const struct psf_font *font, uint32_t codepoint)
{
	uint32_t g = psf_lookup(font, codepoint);

	return g == PSF_NO_GLYPH ? font->fallback : g;
}

const uint8_t *psf_glyph_bits(const struct psf_font *font, uint32_t index)
{
	if (index >= font->numglyph)
		index = font->fallback;
	return font->glyphs + (size_t)index * font->bytes_per_glyph;
}

const uint8_t *psf_glyph(const struct psf_font *font, uint32_t codepoint)
{
	return psf_glyph_bits(font, psf_glyph_index(font, codepoint));
}
