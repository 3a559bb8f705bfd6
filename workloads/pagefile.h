/*
 * pagefile: files with deterministic contents for the page cache (an
 * implementation of mm/filemap.h's struct backing_store). Word w of page
 * i of file f is a pure function of (f, i, w), so any reader can check a
 * page it got from the cache, and every variant must return the same
 * bytes. A read may spin for a simulated device latency.
 */
#ifndef WORKLOADS_PAGEFILE_H
#define WORKLOADS_PAGEFILE_H

#include <stdbool.h>
#include <stdint.h>
#include "mm/filemap.h"

struct pagefile {
	uint32_t id;
	uint64_t size_pages;
	uint64_t latency_cycles; /* spun per page read; 0: none */
	uint64_t reads;          /* pages read from the "device" */
};

extern const struct backing_store pagefile_store;

/* Word w (0 .. PAGE_SIZE/8 - 1) of page index of file id. */
static inline uint64_t pagefile_word(uint32_t id, uint64_t index, unsigned w)
{
	uint64_t x = ((uint64_t)id << 44) ^ (index << 9) ^ w;

	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ (x >> 29);
}

/* True if data holds page index of file id, byte for byte. */
bool pagefile_page_ok(uint32_t id, uint64_t index, const void *data);
/* The same for the first, middle and last words only (cheap, for hot
 * loops: a wrong or freed page differs in all of them). */
bool pagefile_page_spot_ok(uint32_t id, uint64_t index, const void *data);

#endif
