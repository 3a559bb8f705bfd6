/*
 * What a host program needs to run the kernel's portable mm/ and lib/
 * code, threaded ones in particular: pages for kmalloc from the C library,
 * a "CPU number" per thread (RCU, kmalloc's per-CPU caches and per-CPU
 * counters ask for one) and the monotonic clock (tests/host/host_clock.h).
 * Starting and joining the threads is tests/host/host_thread_group.h.
 * Header-only: include it from the one test or bench file of a program.
 */
#ifndef TESTS_HOST_THREADS_H
#define TESTS_HOST_THREADS_H

#include <stdlib.h>

#include "lib/config.h"
#include "lib/this_cpu.h"
#include "mm/kmalloc.h"
#include "tests/host/host_clock.h"

/* kmalloc's page source: naturally aligned blocks of PAGE_SIZE << order. */
static inline void *host_pages_alloc(unsigned order)
{
	size_t bytes = (size_t)PAGE_SIZE << order;

	return aligned_alloc(bytes, bytes);
}

static inline void host_pages_free(void *p,
				   unsigned order __attribute__((unused)))
{
	free(p);
}

static const struct kmalloc_backend host_kmalloc_backend = {
	.alloc_pages = host_pages_alloc, .free_pages = host_pages_free,
};

/* The calling thread's CPU number (lib/this_cpu.h; the program links
 * tests/host/host_cpu.c): set by each worker thread before it touches
 * per-CPU state; 0 for the main thread. */
static inline void host_set_thread_cpu(unsigned cpu)
{
	this_cpu_num_set(cpu);
}

#endif
