/*
 * A cheap, monotonic, cycle-granular clock for measuring short waits
 * (lock statistics, fast-path timings). Units are "cycles" of whatever
 * the environment counts: the TSC in the kernel (arch/x86_64, which
 * assumes an invariant TSC), rdtsc or nanoseconds in host builds
 * (tests/host/host_cycles.c). Only differences are meaningful; compare
 * figures taken on the same machine and build.
 */
#ifndef LIB_CYCLES_H
#define LIB_CYCLES_H

#include <stdint.h>

/* Current counter value; never decreases on one CPU. */
uint64_t cycles_now(void);

#endif
