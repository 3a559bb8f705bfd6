/*
 * PC Screen Font (PSF) parser: the bitmap fonts of the Linux console
 * (kbd's psf(5) format, versions 1 and 2). Portable: it reads a font
 * image already in memory, checks every size against the image's length
 * and never reads outside it, so a corrupt font is rejected, not trusted.
 *
 *   PSF1: magic 36 04 | mode | charsize | glyphs (256 or 512 of 8 x
 *         charsize bits) | optional unicode table of 16-bit code points
 *   PSF2: magic 72 b5 4a 86 | version | headersize | flags | numglyph |
 *         bytesperglyph | height | width | glyphs | optional UTF-8 table
 *
 * A glyph is height rows of ceil(width / 8) bytes, most significant bit
 * leftmost.
 */
#ifndef KERNEL_PSF_H
#define KERNEL_PSF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits of what we accept: larger is either corrupt or of no use here. */
#define PSF_MAX_WIDTH 32
#define PSF_MAX_HEIGHT 64
#define PSF_MAX_GLYPHS 65536u

/* Code points below this are looked up once at parse time, not per call. */
#define PSF_FAST_MAP_SIZE 256
#define PSF_NO_GLYPH 0xffffffffu

/* The code point shown for characters the font has no glyph for. */
#define PSF_REPLACEMENT '?'

struct psf_font {
	unsigned version; /* 1 or 2 */
	uint32_t numglyph;
	uint32_t bytes_per_glyph;
	uint32_t height, width; /* pixels */
	uint32_t stride; /* bytes per glyph row */
	const uint8_t *glyphs; /* numglyph * bytes_per_glyph bytes */
	const uint8_t *unicode; /* NULL when the font has no table */
	size_t unicode_len;
	uint32_t fallback; /* glyph index of PSF_REPLACEMENT (or 0) */
	/* Glyph index of each code point < PSF_FAST_MAP_SIZE, or
	 * PSF_NO_GLYPH. */
	uint32_t fast[PSF_FAST_MAP_SIZE];
};

/*
 * Parse the font image buf[0..len). On success fill *font (which then
 * points into buf: keep buf alive) and return true; on failure return
 * false and set *why (if why is not NULL) to a static reason.
 */
bool psf_parse(struct psf_font *font, const void *buf, size_t len,
	       const char **why);

/*
 * Glyph index of codepoint: through the unicode table when the font has
 * one, else the code point itself if it is below numglyph. Returns
 * PSF_NO_GLYPH when the font has no glyph for it.
 */
uint32_t psf_lookup(const struct psf_font *font, uint32_t codepoint);

/* Glyph index to show for codepoint: psf_lookup() or the fallback. */
uint32_t psf_glyph_index(const struct psf_font *font, uint32_t codepoint);

/* The bitmap of glyph index (index < numglyph). */
const uint8_t *psf_glyph_bits(const struct psf_font *font, uint32_t index);

/* The bitmap to show for codepoint (never NULL). */
const uint8_t *psf_glyph(const struct psf_font *font, uint32_t codepoint);

#endif
