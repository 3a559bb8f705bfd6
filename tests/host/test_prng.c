/*
 * Host tests for lib/prng.h: a zero seed is fixed up, the generator is
 * deterministic, and prng_cycle() gives one cycle through every index
 * for every small size (the property the pointer chases rely on).
 */
// HOST_SRCS:
#include <stdint.h>
#include "lib/ktest.h"
#include "lib/prng.h"
#include "tests/host/host_shim.h"

KTEST(prng, seed_and_determinism)
{
	uint64_t a = prng_seed(0), b = prng_seed(0);

	EXPECT_EQ(a, PRNG_ZERO_FIX);
	EXPECT_EQ(prng_seed(42), 42);
	for (int i = 0; i < 100; i++) {
		uint64_t x = prng_next(&a);

		EXPECT_EQ(x, prng_next(&b));
		EXPECT_TRUE(a != 0);
	}
}

/* Following i -> order[i] from 0 comes back to 0 after exactly n steps,
 * having seen every index once: one cycle, a permutation. */
KTEST(prng, cycle_visits_every_index_once)
{
	enum { MAX_N = 300 };
	static uint32_t order[MAX_N];
	static uint8_t seen[MAX_N];

	for (uint64_t n = 1; n <= MAX_N; n++) {
		uint64_t rng = prng_seed(n), steps = 0;
		uint32_t at = 0;

		prng_cycle(&rng, order, n);
		for (uint64_t i = 0; i < n; i++)
			seen[i] = 0;
		do {
			ASSERT_TRUE(order[at] < n);
			ASSERT_TRUE(!seen[at]);
			seen[at] = 1;
			at = order[at];
			steps++;
		} while (at != 0);
		EXPECT_EQ(steps, n);
	}
}

/* Different seeds give different cycles (the shuffle uses the state). */
KTEST(prng, cycle_follows_the_seed)
{
	enum { N = 64 };
	uint32_t a[N], b[N];
	uint64_t s1 = prng_seed(1), s2 = prng_seed(2);
	int differ = 0;

	prng_cycle(&s1, a, N);
	prng_cycle(&s2, b, N);
	for (int i = 0; i < N; i++)
		differ |= a[i] != b[i];
	EXPECT_TRUE(differ);
}
