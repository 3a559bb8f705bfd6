/*
 * The set-up every host program of the page cache or the radix tree
 * shares: kmalloc on the C library's pages (host_kmalloc_backend,
 * tests/host/host_threads.h) and RCU with no kick hook, once per
 * program. Header-only: include it from the one test or bench file of a
 * program that links mm/kmalloc.c and lib/rcu.c.
 */
#ifndef TESTS_HOST_MM_H
#define TESTS_HOST_MM_H

#include <stdbool.h>

#include "lib/rcu.h"
#include "mm/kmalloc.h"
#include "tests/host/host_threads.h"

/* The first call sets kmalloc and RCU up (every CPU idle) and returns
 * true, for the caller's own once-only set-up; later calls do nothing
 * and return false. Call on the main thread, before any worker starts. */
static inline bool host_mm_init_once(void)
{
	static bool done;

	if (done)
		return false;
	done = true;
	kmalloc_init(&host_kmalloc_backend);
	rcu_init(NULL);
	return true;
}

#endif
