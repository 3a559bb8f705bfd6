/*
 * fwmap: the firmware's memory map (what RAM there is, and what is
 * reserved), sanitised. Not Linux's "memmap" (its struct page array:
 * here mm/page.h).
 *
 * Firmware memory maps (multiboot2 tag type 6, which relays the BIOS e820
 * table or the UEFI memory map) may list entries unsorted, overlapping,
 * with zero length, or with base + len wrapping past 2^64. fwmap turns
 * such a list into a sorted, non-overlapping, merged map in which, where
 * entries overlap, the more restrictive type wins (anything beats
 * available). Problems are counted and reported with kprintf, never fatal:
 * a bad entry costs at most some memory, never correctness, because a
 * range the map does not list is treated as unusable.
 *
 * The kernel then carves out what it already uses (first MiB, kernel
 * image, multiboot info, modules) with fwmap_reserve() and feeds the
 * page-aligned usable ranges (fwmap_next_usable()) to the buddy allocator.
 *
 *   raw firmware map --fwmap_sanitize()--> map --fwmap_reserve()*-->
 *   map --fwmap_next_usable()--> [base, end) ranges --> buddy_add_range()
 */
#ifndef MM_FWMAP_H
#define MM_FWMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Region types. 1..5 are multiboot2's; firmware's other values count as
 * reserved. The kernel's own types, used with fwmap_reserve(), sit above
 * firmware's range. */
enum fwmap_type {
	FWMAP_AVAILABLE = 1,
	FWMAP_RESERVED = 2,
	FWMAP_ACPI_RECLAIMABLE = 3,
	FWMAP_ACPI_NVS = 4,
	FWMAP_BAD = 5,
	FWMAP_KERNEL_TYPES = 0x100,
	FWMAP_LOWMEM = FWMAP_KERNEL_TYPES, /* first MiB: BIOS, trampolines */
	FWMAP_KERNEL,			     /* kernel image */
	FWMAP_BOOTINFO,		     /* multiboot information */
	FWMAP_MODULE,			     /* boot modules */
	FWMAP_BOOTALLOC,		     /* early allocations (pages[]) */
	FWMAP_BEYOND_WIDTH,		     /* at or above 2^MAXPHYADDR */
};

/* One region: input from firmware, and output of the sanitiser. */
struct fwmap_entry {
	uint64_t base;
	uint64_t len;
	uint32_t type;
};

/* Problems found (and merges done) since fwmap_init(). */
struct fwmap_stats {
	unsigned int zero_len;	   /* zero-length entries dropped */
	unsigned int wrapped;	   /* base + len past 2^64, clipped */
	unsigned int overlaps;	   /* overlapping input pairs */
	unsigned int unsorted;	   /* entries below their predecessor */
	unsigned int unknown_type; /* firmware types treated as reserved */
	unsigned int overflow;	   /* pieces dropped: output array full */
	unsigned int merged;	   /* adjacent same-type entries merged */
};

/* A sanitised map: entries[0..n) sorted, non-overlapping, merged. */
struct fwmap {
	struct fwmap_entry *entries; /* storage owned by the caller */
	size_t n;
	size_t cap;
	bool quiet; /* count problems without printing them (fuzz tests) */
	struct fwmap_stats stats;
};

/* Start an empty map over caller-provided storage for cap entries. */
void fwmap_init(struct fwmap *map, struct fwmap_entry *storage,
		 size_t cap);

/*
 * Replace the map's contents with the sanitised form of raw[0..nraw).
 * Returns the number of problems found (0 for a clean map); merges of
 * adjacent same-type entries are not problems.
 */
unsigned int fwmap_sanitize(struct fwmap *map,
			     const struct fwmap_entry *raw, size_t nraw);

/*
 * Mark [base, base + len) as type (normally one of the kernel's types).
 * Parts already more restrictive keep their type. Returns false if the
 * map overflowed; the map then errs on the side of less usable memory.
 */
bool fwmap_reserve(struct fwmap *map, uint64_t base, uint64_t len,
		    uint32_t type);

/*
 * Iterate over usable memory: each call yields the next available range,
 * base rounded up and end rounded down to PAGE_SIZE, skipping ranges that
 * hold no whole page. Start with *iter = 0. Returns false at the end.
 */
bool fwmap_next_usable(const struct fwmap *map, size_t *iter,
			uint64_t *base, uint64_t *end);

/* Total bytes in whole usable pages. */
uint64_t fwmap_usable_bytes(const struct fwmap *map);

/* Sum of all problem counters in stats. */
unsigned int fwmap_problems(const struct fwmap *map);

const char *fwmap_type_name(uint32_t type);

/*
 * What a physical range handed over by firmware (an ACPI table address, a
 * framebuffer) is, before anything maps it:
 *   FWMAP_RANGE_OK            outside usable RAM and the kernel's own
 *                             memory: reserved, ACPI, device or unlisted
 *   FWMAP_RANGE_USABLE        overlaps usable RAM: suspicious (the
 *                             allocator may hand it out) but legal
 *   FWMAP_RANGE_EMPTY         zero length, or base + len wraps past 2^64
 *   FWMAP_RANGE_BEYOND_WIDTH  reaches 2^phys_bits or above: no CPU access
 *                             can reach it, and a page-table entry for it
 *                             would set reserved bits
 *   FWMAP_RANGE_KERNEL        overlaps the kernel image or the kernel's
 *                             boot allocations
 * The last three are to be refused. Pure: reads map only.
 */
enum fwmap_range_verdict {
	FWMAP_RANGE_OK,
	FWMAP_RANGE_USABLE,
	FWMAP_RANGE_EMPTY,
	FWMAP_RANGE_BEYOND_WIDTH,
	FWMAP_RANGE_KERNEL,
};
enum fwmap_range_verdict fwmap_check_range(const struct fwmap *map,
					   uint64_t base, uint64_t len,
					   unsigned int phys_bits);

/* True for the verdicts that must not be mapped. */
bool fwmap_range_refused(enum fwmap_range_verdict v);

/* "in usable RAM", "beyond the physical address width", ... */
const char *fwmap_range_verdict_name(enum fwmap_range_verdict v);

/* Print the map, one line per entry, via kprintf. */
void fwmap_dump(const struct fwmap *map);

#endif
