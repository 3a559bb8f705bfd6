/*
 * A cache geometry given as text: the shape of the caches a timing model
 * simulates, when it differs from what CPUID reports (under QEMU with the
 * cache-model plugin, CPUID describes QEMU's CPU model, the plugin a
 * machine profile of cachemodel/profiles.txt).
 *
 * Text form (the kernel option cachemodel.caches=, docs/cmdline.md):
 *
 *   LEVEL:BYTES:WAYS[,LEVEL:BYTES:WAYS...]     LEVEL = l1d | l2 | llc
 *
 * e.g. "l1d:32768:8,llc:4194304:16". Each level at most once, llc
 * required; a level left out (or given as LEVEL:0:0) does not exist.
 * BYTES is a multiple of WAYS x 64 (64-byte lines), decimal or 0x-hex.
 * Portable, host-tested (tests/host/test_cache_geometry.c).
 */
#ifndef LIB_CACHE_GEOMETRY_H
#define LIB_CACHE_GEOMETRY_H

#include <stdint.h>

enum cache_geometry_level {
	CACHE_GEOM_L1D,
	CACHE_GEOM_L2,
	CACHE_GEOM_LLC,
	CACHE_GEOM_LEVELS,
};

struct cache_geometry_level_cfg {
	uint64_t bytes;		/* 0: the level does not exist */
	unsigned ways;
};

struct cache_geometry {
	struct cache_geometry_level_cfg level[CACHE_GEOM_LEVELS];
};

/* "l1d", "l2", "llc" (the text form's names); "?" for anything else. */
static inline const char *cache_geometry_level_name(unsigned l)
{
	static const char *const names[CACHE_GEOM_LEVELS] = {"l1d", "l2",
							     "llc"};

	return l < CACHE_GEOM_LEVELS ? names[l] : "?";
}

/*
 * Parse text into *g. Returns NULL on success, else a static message
 * naming the problem (*g is then all zero): an unknown level, a level
 * twice, a missing or malformed number, ways 0 with bytes, bytes not a
 * multiple of ways x 64, no llc.
 */
const char *cache_geometry_parse(const char *text,
				 struct cache_geometry *g);

#endif
