/*
 * Host implementation of lib/cycles.h for test programs: the TSC via
 * the compiler's rdtsc builtin on x86_64 (no inline assembly), else
 * CLOCK_MONOTONIC in nanoseconds.
 */
#include <stdint.h>
#include <time.h>
#include "lib/cycles.h"

#define NSEC_PER_SEC 1000000000ull

uint64_t cycles_now(void)
{
#ifdef __x86_64__
	return __builtin_ia32_rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
#endif
}
