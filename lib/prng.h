/*
 * The one pseudo-random generator of the tree: xorshift64* (Marsaglia's
 * xorshift with shifts 12/25/27, output multiplied by a 64-bit odd
 * constant). Deterministic, so a workload's bytes, a checksum or a failing
 * test's sequence are the same on every run and on the host. Not for
 * anything that must be unpredictable.
 *
 * The state is one uint64_t owned by the caller, never 0 (0 is the one
 * fixed point): start it with prng_seed().
 */
#ifndef LIB_PRNG_H
#define LIB_PRNG_H

#include <stdint.h>

#define PRNG_MUL 0x2545f4914f6cdd1dull
/* What a zero seed becomes (any non-zero constant would do). */
#define PRNG_ZERO_FIX 0x853c49e6748fea9bull

/* A valid state from any seed: seed itself, or PRNG_ZERO_FIX for 0. */
static inline uint64_t prng_seed(uint64_t seed)
{
	return seed ? seed : PRNG_ZERO_FIX;
}

/* Advance *state (non-zero, stays non-zero) and return the next value. */
static inline uint64_t prng_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * PRNG_MUL;
}

/*
 * Fill order[0..n) with a random cyclic permutation of 0..n-1, drawn
 * from *state (Sattolo's algorithm: each slot swaps with a strictly
 * earlier one, never itself, so the permutation is one cycle and
 * i -> order[i] visits all n before it returns). Pointer chases use it:
 * no prefetcher can guess the next line, and no load is left out.
 */
static inline void prng_cycle(uint64_t *state, uint32_t *order, uint64_t n)
{
	if (n == 0)
		return;
	for (uint64_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	for (uint64_t i = n - 1; i > 0; i--) {
		uint64_t j = prng_next(state) % i;
		uint32_t t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
}

#endif
