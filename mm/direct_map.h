/*
 * The direct map: every frame of RAM at one fixed virtual offset, so a
 * physical address and the kernel's address for it differ by one
 * addition. The architecture says where (asm/direct_map.h, on the
 * include path of kernel builds: DIRECT_MAP_BASE, and KERNEL_VMA where
 * the kernel image begins); the conversions are inline here, as Linux's
 * __va() and __pa() are on PAGE_OFFSET, because the page allocator makes
 * one on every allocation and every free.
 */
#ifndef MM_DIRECT_MAP_H
#define MM_DIRECT_MAP_H

#include <stdbool.h>
#include <stdint.h>
#include "asm/direct_map.h"

/* Where RAM frame pa can be read and written by the kernel; RAM only
 * (device registers need phys_map() first, mm/vm.h). */
static inline void *vm_phys_to_virt(uint64_t pa)
{
	return (void *)(pa + DIRECT_MAP_BASE);
}

/* True, with *pa set, when va is a direct-map address; false (and *pa
 * untouched) for any other address. */
static inline bool vm_direct_map_phys(const void *va, uint64_t *pa)
{
	uint64_t a = (uint64_t)va;

	if (a < DIRECT_MAP_BASE || a >= KERNEL_VMA)
		return false;
	*pa = a - DIRECT_MAP_BASE;
	return true;
}

#endif
