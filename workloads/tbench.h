/*
 * The tbench-like client/server engine (seeds 000 and 004, where LTTng's
 * tracing overhead is quoted as tbench MB/s with tracing off and on).
 *
 * tbench is dbench's network half: each client sends the file-system
 * requests of a fixed load script over a TCP socket to a server process,
 * which performs them and sends the results back. Here:
 *
 *   client CPU                 loopback (loopback.h)            server CPU
 *   script step -> request  --[req ring: header+payload]-->  ramfs op
 *   hash reply  <- reply    <--[rep ring: header+payload]--  result
 *
 * Requests are dbench's kinds (open/create, read, write, stat, close,
 * unlink) on a few files per client, with payload sizes from a fixed
 * table. Pairs are (client, server) on two different CPUs; with one CPU
 * the client and the server run alternately on it (one request, then its
 * handling, then the reply), which measures the same work without
 * overlap ("alternating").
 *
 * Determinism: a fixed set of logical clients, each with its own script
 * (a pure function of its number) and its own files, is spread over the
 * pairs; the checksum (payload bytes and a hash of every reply) is
 * folded per client in client order, so it depends neither on the CPU
 * count nor on timing.
 *
 * The experiment (experiments/tbench.c) times runs of this engine; the
 * KTAP suite "workloads" checks its checksums against the recorded ones
 * of workloads/reference.h.
 */
#ifndef WORKLOADS_TBENCH_H
#define WORKLOADS_TBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/smp_call.h"
#include "lib/config.h"
#include "workloads/loopback.h"
#include "workloads/ramfs.h"
#include "workloads/reference.h"

#define TBENCH_MAX_PAYLOAD 65536u
#define TBENCH_SLOTS 4			/* files per client */
/* Ring bytes per direction: a socket-buffer-sized ring for pairs (large
 * payloads stream through in pieces); alternating needs a whole message
 * to fit, since nobody drains the ring while the client sends. */
#define TBENCH_RING_PAIRED 16384u
#define TBENCH_RING_ALT 131072u

struct tbench_size {
	unsigned clients;
	unsigned steps;		/* script steps per client */
	unsigned reps;		/* repetitions the experiment times */
};

/* The experiment's two sizes; the tests run the quick one. */
extern const struct tbench_size tbench_quick, tbench_full;

/* What the quick script must produce: workloads/reference.h. */

/* A run's checksum: replies hashed per client, folded in client order. */
struct tbench_check {
	uint64_t hash, bytes, ops;
};

/* Per logical client: folded in client order into the run's checksum. */
struct tbench_client_result {
	uint64_t hash, bytes, ops;
};

/* One client/server connection and what its client measured. */
struct tbench_pair {
	struct loopback lb;
	void *ring_mem;
	size_t ring_size;
	bool alternate;		/* server runs inline on the client's CPU */
	unsigned index, npairs;
	unsigned client_cpu, server_cpu;
	uint8_t *cbuf, *sbuf;	/* client's and server's payload buffers */
	int fd[TBENCH_SLOTS];	/* server side: slot -> ramfs handle */
	struct ramfs *fs;
	const struct tbench_size *size;
	/* Results of the last run (TSC ticks of the client side). */
	uint64_t ops, bytes, ticks;
	bool failed;
};

struct tbench_run {
	struct tbench_pair pair[MAX_CPUS / 2];
	unsigned npairs;
	unsigned role_pair[MAX_CPUS];	/* pair index of each CPU */
	bool role_server[MAX_CPUS];
	struct cpumask mask;
	struct smp_barrier barrier;
	const struct tbench_size *size;
	struct tbench_client_result *res;	/* one per logical client */
	struct ramfs *fs;
};

/*
 * Set up run for npairs pairs (0: alternating on this CPU). Takes the
 * first 2*npairs online CPUs: pair p is (client cpus[2p], server
 * cpus[2p+1]). Returns false without memory or CPUs; call
 * tbench_run_teardown() either way.
 */
bool tbench_run_setup(struct tbench_run *run, unsigned npairs,
		      const struct tbench_size *size);
void tbench_run_teardown(struct tbench_run *run);
/* One repetition; fills *chk and each pair's ops/bytes/ticks. Returns
 * false if the store is not empty afterwards (a script or ramfs bug). */
bool tbench_run_once(struct tbench_run *run, struct tbench_check *chk);
/* Set up, run once and tear down with npairs pairs (0: alternating);
 * false on any failure. Uses one static run: not reentrant. */
bool tbench_checksum(const struct tbench_size *size, unsigned npairs,
		     struct tbench_check *chk);

#endif
