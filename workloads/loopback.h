/*
 * loopback: an in-kernel stand-in for a TCP connection over lo, for the
 * tbench-like workload (seeds 000 and 004). Two bounded single-producer
 * single-consumer byte rings, one per direction:
 *
 *   client --loopback_send()--> [request ring] --loopback_recv()--> server
 *   client <--loopback_recv()-- [ reply ring ] <--loopback_send()-- server
 *
 * Sending copies the caller's bytes into the ring and receiving copies
 * them out, as a socket's copy_from_user()/copy_to_user() pair would. A
 * ring is a byte stream, not a message queue: a payload larger than the
 * free space goes through in pieces while the other side drains it.
 * With no scheduler, a blocked side waits by spinning (cpu_relax()).
 *
 * Ring protocol (indices are free-running 64-bit byte counts):
 *   producer: read tail (acquire), copy bytes in, store head (release)
 *   consumer: read head (acquire), copy bytes out, store tail (release)
 * head - tail is the fill level; 0 <= head - tail <= size always. Each
 * index is written by one side only and lives on its own cache line.
 *
 * Portable: no arch code; host tests run the two sides as pthreads.
 */
#ifndef WORKLOADS_LOOPBACK_H
#define WORKLOADS_LOOPBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/compiler.h"

struct loopback_ring {
	/* Producer's line. */
	uint64_t head __aligned(CACHE_LINE_SIZE);
	uint64_t full_spins;	/* producer waits for space */
	uint64_t bytes_in;
	/* Consumer's line. */
	uint64_t tail __aligned(CACHE_LINE_SIZE);
	uint64_t empty_spins;	/* consumer waits for data */
	uint64_t bytes_out;
	/* Read-only after init. */
	uint8_t *buf __aligned(CACHE_LINE_SIZE);
	size_t size;		/* power of two */
};

struct loopback {
	struct loopback_ring req;	/* client -> server */
	struct loopback_ring rep;	/* server -> client */
};

/* buf: size bytes, size a power of two >= 2; the ring does not own it. */
void loopback_ring_init(struct loopback_ring *r, void *buf, size_t size);

/* Copy up to len bytes in/out without waiting; returns the count moved. */
size_t loopback_ring_write_some(struct loopback_ring *r, const void *src,
				size_t len);
size_t loopback_ring_read_some(struct loopback_ring *r, void *dst, size_t len);

/* Bytes readable now / writable now (hints for the other side). */
size_t loopback_ring_used(const struct loopback_ring *r);
size_t loopback_ring_free(const struct loopback_ring *r);

/* Copy all len bytes, spinning while the ring is full / empty. */
void loopback_send(struct loopback_ring *r, const void *src, size_t len);
void loopback_recv(struct loopback_ring *r, void *dst, size_t len);

/* Both directions over two buffers of size bytes each. */
void loopback_init(struct loopback *lb, void *req_buf, void *rep_buf,
		   size_t size);

#endif
