/*
 * Host tests for the cache-geometry text form (lib/cache_geometry.c): the
 * forms tools/model/model.py writes for the machine profiles, levels left out,
 * and every kind of bad input, each with a message and an all-zero
 * result.
 */
// HOST_SRCS: lib/cache_geometry.c lib/cmdline.c
#include <string.h>
#include "lib/cache_geometry.h"
#include "lib/ktest.h"
#include "tests/host/host_shim.h"

KTEST(cache_geometry, profile_forms)
{
	struct cache_geometry g;

	/* core2-2007: no private L2, the shared L2 is the LLC. */
	EXPECT_TRUE(cache_geometry_parse("l1d:32768:8,llc:4194304:16", &g) ==
		    NULL);
	EXPECT_EQ(g.level[CACHE_GEOM_L1D].bytes, 32768);
	EXPECT_EQ(g.level[CACHE_GEOM_L1D].ways, 8);
	EXPECT_EQ(g.level[CACHE_GEOM_L2].bytes, 0);
	EXPECT_EQ(g.level[CACHE_GEOM_LLC].bytes, 4194304);
	EXPECT_EQ(g.level[CACHE_GEOM_LLC].ways, 16);
	/* skylake-2015, levels in any order, hex allowed, L:0:0 = absent. */
	EXPECT_TRUE(cache_geometry_parse(
			    "llc:0x800000:16,l2:262144:4,l1d:32768:8", &g) ==
		    NULL);
	EXPECT_EQ(g.level[CACHE_GEOM_L2].bytes, 262144);
	EXPECT_EQ(g.level[CACHE_GEOM_LLC].bytes, 8388608);
	EXPECT_TRUE(cache_geometry_parse("l2:0:0,llc:65536:1", &g) == NULL);
	EXPECT_EQ(g.level[CACHE_GEOM_L2].bytes, 0);
	EXPECT_EQ(g.level[CACHE_GEOM_L1D].bytes, 0);
	EXPECT_STREQ(cache_geometry_level_name(CACHE_GEOM_LLC), "llc");
}

KTEST(cache_geometry, bad_input_says_why_and_leaves_nothing)
{
	static const char *const bad[] = {
		"",			/* empty */
		"l1d:32768:8",		/* no llc */
		"l3:4194304:16",	/* unknown level */
		"llc:4194304",		/* two fields */
		"llc:4194304:16:1",	/* four fields */
		"llc:4M:16",		/* not a number */
		"llc:4194304:0",	/* bytes without ways */
		"llc:0:16",		/* ways without bytes */
		"llc:4194300:16",	/* not a multiple of ways x 64 */
		"llc:4194304:16,llc:4194304:16", /* twice */
		"llc:4194304:16,",	/* empty element */
		"llc:4194304:2000",	/* absurd ways */
	};
	struct cache_geometry g;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *why;

		memset(&g, 0xff, sizeof(g));
		why = cache_geometry_parse(bad[i], &g);
		EXPECT_TRUE(why != NULL);
		if (why)
			EXPECT_TRUE(why[0] != '\0');
		EXPECT_EQ(g.level[CACHE_GEOM_LLC].bytes, 0);
		EXPECT_EQ(g.level[CACHE_GEOM_L1D].bytes, 0);
	}
}
