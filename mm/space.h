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
 * A file region maps the pages a struct vm_file hands out (a page cache):
 * they are shared, recorded in the reverse map, never freed by the space.
 * The fault takes the reverse-map lock around "look the page up, map
 * it, record it", so a cache that evicts a page under the same lock
 * (space_unmap_file_page) never races a fault into mapping a frame it
 * is about to free.
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

/* Regions may not start below this (a NULL dereference still faults). */
#define SPACE_USER_MIN 0x0000000000400000ull

struct space_stats {
	uint64_t created, destroyed, faults, zero_fills, file_maps, fault_nomem;
};

struct vm_file;

struct vm_file_ops {
	/*
	 * The frame holding page index of the file, reading it in if
	 * needed; PAGE_ALLOC_FAILED without memory or past the end. Called
	 * with the reverse-map lock held: must not take it.
	 */
	uint64_t (*get_page)(const struct vm_file *f, uint64_t index);
};

struct vm_file {
	const struct vm_file_ops *ops;
	void *priv;
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
/* Add a file region: file pages pgoff.. at start, npages long. Same
 * errors as space_add_anon. */
int space_add_file(struct addr_space *as, uint64_t start, uint64_t npages,
		   const struct vm_file *file, uint64_t pgoff, unsigned prot);
/*
 * Demand fault at va in as: allocate a zeroed frame, map it, record it.
 * Returns true if va is now mapped (also when another CPU raced us to
 * it), false if va is in no region or memory ran out.
 */
bool space_fault(struct addr_space *as, uint64_t va);
void space_stats(struct space_stats *out);

#endif
