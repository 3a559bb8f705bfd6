/*
 * libFuzzer harness for the PC Screen Font parser (kernel/psf.c): the
 * input is a font image (PSF1 or PSF2). The parser gets a heap copy of
 * exactly the input's length, so ASan flags any read past the image. A
 * font it accepts is then used as the console would: every code point
 * of the fast map and a spread of others above it are looked up, and
 * each glyph bitmap handed out is read in full.
 */
// HOST_SRCS: kernel/psf.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/psf.h"
#include "lib/assert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Code points beyond the fast map: Latin-1 to the top of Unicode. */
#define PROBE_STEP 0x10001u	/* 17 probes */
#define PROBE_END 0x110000u

static volatile uint8_t sink;

static void read_glyph(const struct psf_font *f, const uint8_t *bits)
{
	uint8_t acc = 0;

	kassert(bits);
	for (uint32_t i = 0; i < f->bytes_per_glyph; i++)
		acc ^= bits[i];
	sink = acc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct psf_font f;
	const char *why = NULL;
	uint8_t *img = malloc(size ? size : 1);

	if (!img)
		return 0;
	memcpy(img, data, size);
	if (psf_parse(&f, img, size, &why)) {
		kassert(f.numglyph > 0 && f.width > 0 && f.height > 0);
		kassert(f.width <= PSF_MAX_WIDTH && f.height <= PSF_MAX_HEIGHT);
		kassert(f.stride * f.height <= f.bytes_per_glyph);
		for (uint32_t cp = 0; cp < PSF_FAST_MAP_SIZE; cp++) {
			uint32_t g = psf_lookup(&f, cp);

			kassert(g == PSF_NO_GLYPH || g < f.numglyph);
			read_glyph(&f, psf_glyph(&f, cp));
		}
		for (uint32_t cp = PSF_FAST_MAP_SIZE; cp < PROBE_END;
		     cp += PROBE_STEP) {
			uint32_t g = psf_lookup(&f, cp);

			kassert(g == PSF_NO_GLYPH || g < f.numglyph);
			read_glyph(&f, psf_glyph(&f, cp));
		}
	} else {
		kassert(why != NULL);
	}
	free(img);
	return 0;
}
