/*
 * The CPU's caches as CPUID describes them: deterministic cache
 * parameters, leaf 4 (Intel) or leaf 0x8000001d (AMD). Under QEMU these
 * are what the CPU model claims, not caches TCG simulates.
 */
#ifndef ARCH_X86_64_CPU_CACHES_H
#define ARCH_X86_64_CPU_CACHES_H

#include <stdint.h>

#define CPU_CACHES_MAX 8

enum cpu_cache_type { CACHE_DATA = 1, CACHE_INSTRUCTION = 2, CACHE_UNIFIED = 3 };

struct cpu_cache {
	unsigned level;
	enum cpu_cache_type type;
	uint64_t size; /* bytes */
	unsigned ways, line, sets;
	unsigned shared_by; /* logical CPUs sharing it (CPUID's maximum); 0: not said */
};

struct cpu_caches {
	uint32_t leaf; /* the CPUID leaf read, 0 when none answered */
	unsigned count;
	struct cpu_cache cache[CPU_CACHES_MAX];
};

/* Read the cache leaves into *out (out->count 0: not detected). */
void cpu_caches_read(struct cpu_caches *out);
/* Size of the last-level data or unified cache, 0 when unknown. */
uint64_t cpu_caches_llc_bytes(void);
/* One line per cache, or why there is none. */
void cpu_caches_print(void);

#endif
