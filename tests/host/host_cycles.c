/*
 * Host implementation of lib/cycles.h for test programs: the TSC via
 * the compiler's rdtsc builtin on x86_64 (no inline assembly), else the
 * monotonic clock in nanoseconds (tests/host/host_clock.h).
 */
#include <stdint.h>
#include "lib/cycles.h"
#include "tests/host/host_clock.h"

uint64_t cycles_now(void)
{
#ifdef __x86_64__
	return __builtin_ia32_rdtsc();
#else
	return host_now_ns();
#endif
}
