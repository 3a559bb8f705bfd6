/*
 * Build-time limits of the kernel, shared by every layer. Only facts that
 * several layers size their tables by belong here.
 */
#ifndef LIB_CONFIG_H
#define LIB_CONFIG_H

/* CPU numbers run from 0 to MAX_CPUS - 1 (per-CPU areas, CPU masks,
 * per-CPU caches and results). A multiple of 64 (struct cpumask words). */
#define MAX_CPUS 256

/* The base page: 4 KiB, the unit of the page allocator and of a PTE. */
#define PAGE_SHIFT 12
#define PAGE_SIZE (1ull << PAGE_SHIFT)

#endif
