/*
 * A group of worker threads for host test and bench programs: start n
 * threads on one function, each with its own argument (the elements of an
 * array, or one shared argument), then wait for all of them.
 * Header-only and free of kernel headers: include it from the one test or
 * bench file of a program.
 *
 * Invariants:
 *  1. 0 <= g->n <= HOST_THREAD_GROUP_MAX; tid[0..n) are started threads
 *     not yet joined.
 *  2. A group is started once and joined once; after the join g->n is 0.
 */
#ifndef TESTS_HOST_THREAD_GROUP_H
#define TESTS_HOST_THREAD_GROUP_H

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most threads one group holds (the host tests run a handful). */
#define HOST_THREAD_GROUP_MAX 64u

struct host_thread_group {
	pthread_t tid[HOST_THREAD_GROUP_MAX];
	unsigned n; /* threads started and not yet joined */
};

/*
 * Starts n threads in order; thread i runs fn((char *)args + i * stride):
 * pass the size of an array's element as stride to give each thread its
 * element, 0 to give all the same args. More than HOST_THREAD_GROUP_MAX
 * threads, or a thread that cannot be created, ends the program with a
 * message on stderr (threads already started may be waiting for the
 * others at a barrier, so no error is returned to wait on them).
 * Returns nothing.
 */
static inline void host_thread_group_start(struct host_thread_group *g,
					   unsigned n, void *(*fn)(void *),
					   void *args, size_t stride)
{
	if (n > HOST_THREAD_GROUP_MAX) {
		fprintf(stderr, "host_thread_group_start: %u threads, at most "
			"%u\n", n, HOST_THREAD_GROUP_MAX);
		exit(EXIT_FAILURE);
	}
	g->n = 0;
	for (unsigned i = 0; i < n; i++) {
		int err = pthread_create(&g->tid[i], NULL, fn,
					 (char *)args + i * stride);

		if (err) {
			fprintf(stderr, "host_thread_group_start: thread %u "
				"of %u: pthread_create: %s\n", i, n,
				strerror(err));
			exit(EXIT_FAILURE);
		}
		g->n++;
	}
}

/* Waits for every thread of g, in start order; g is empty afterwards. */
static inline void host_thread_group_join(struct host_thread_group *g)
{
	for (unsigned i = 0; i < g->n; i++)
		pthread_join(g->tid[i], NULL);
	g->n = 0;
}

#endif
