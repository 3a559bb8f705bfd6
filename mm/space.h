/*
 * Address spaces with demand paging (the policy; page tables and CR3
 * are arch/x86_64's). A space is the kernel half (shared) plus a lower
 * half of regions; an anonymous region's pages are allocated, zeroed and
 * mapped by the page-fault handler on first touch, and recorded in the
 * reverse map (mm/rmap.h).
 *
 *   space_create -> space_add_anon ... -> tlb_switch_to(as) on a CPU ->
 *   touches fault pages in -> tlb_switch_to(&kernel_space) -> space_destroy
 *
 * A fault that is not in a region of the space the CPU has loaded is not
 * ours: space_fault() returns false and the trap code carries on
 * (trap_try() catches it, or the panic report prints it).
 */
#ifndef MM_SPACE_H
#define MM_SPACE_H

#include <stdbool.h>
#include <stdint.h>
#include "mm/vm.h"

/* Lower half ends here (exclusive): canonical user addresses. */
#define SPACE_USER_END 0x0000800000000000ull
/* Regions may not start below this (a NULL dereference still faults). */
#define SPACE_USER_MIN 0x0000000000400000ull

struct space_stats {
	uint64_t created, destroyed, faults, zero_fills, fault_nomem;
};

/* A new space (kmalloc'ed) sharing the kernel half; NULL without memory.
 * Sets the reverse map up on first use. */
struct addr_space *space_create(const char *name);
/*
 * Free every page, table and the space itself. It must not be loaded on
 * any CPU (asserted). Frames are freed after the flush (a gather).
 */
void space_destroy(struct addr_space *as);
/* Add [start, start + npages pages) as an anonymous region. Returns
 * VM_OK, VM_ERR_ALIGN, VM_ERR_INVALID (outside the lower half, overlap,
 * too many regions). */
int space_add_anon(struct addr_space *as, uint64_t start, uint64_t npages,
		   unsigned prot);
/*
 * Demand fault at va in as: allocate a zeroed frame, map it, record it.
 * Returns true if va is now mapped (also when another CPU raced us to
 * it), false if va is in no region or memory ran out.
 */
bool space_fault(struct addr_space *as, uint64_t va);
void space_stats(struct space_stats *out);

#endif
