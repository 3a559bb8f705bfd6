/*
 * cycles_now() for the kernel: the TSC. Portable code (lock statistics,
 * the benchmark harness) measures in these units; the TSC frequency that
 * turns them into time is calibrated in arch/x86_64/tsc.c.
 */
#include "arch/x86_64/cpu.h"
#include "lib/cycles.h"

uint64_t cycles_now(void)
{
	return rdtsc();
}
