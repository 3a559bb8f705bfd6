/*
 * The monotonic clock of host test and bench programs, in nanoseconds.
 * Header-only and free of kernel headers, so any host build can use it
 * (tests/host/host_threads.h passes it on to the threaded programs).
 */
#ifndef TESTS_HOST_CLOCK_H
#define TESTS_HOST_CLOCK_H

#include <stdint.h>
#include <time.h>

#define HOST_NSEC_PER_SEC 1000000000ull

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t host_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * HOST_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

#endif
