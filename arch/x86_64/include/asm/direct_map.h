/*
 * Where x86_64 puts the direct map (all RAM at one fixed offset) and the
 * kernel image: the two constants behind mm/direct_map.h's inline
 * conversions, as Linux's __PAGE_OFFSET (asm/page_64_types.h) is behind
 * __va() and __pa(). arch/x86_64/layout.h draws the whole address layout
 * and takes these from here. Portable code includes mm/direct_map.h,
 * never this file; only kernel builds reach it.
 */
#ifndef ASM_DIRECT_MAP_H
#define ASM_DIRECT_MAP_H

/* The direct map: physical address p is at p + DIRECT_MAP_BASE. */
#define DIRECT_MAP_BASE 0xffff800000000000ul
/* The kernel image (phys + KERNEL_VMA), above every direct-map address. */
#define KERNEL_VMA 0xffffffff80000000ul

#endif
