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
 * A file region maps page-cache pages (mm/filemap.h): the fault finds
 * the page with find_get_page(), reading it in through the cache on a
 * miss, and keeps that reference while the page is mapped (one per
 * mapping, recorded in the reverse map). Whoever unmaps the page drops
 * the reference through a TLB gather, after the flush: space_destroy()
 * and page-cache reclaim (mm/reclaim.h), which takes the page out of
 * the cache and then unmaps it from every space. The fault checks,
 * under the reverse-map lock, that the page is still cached before it
 * maps and records it, and reclaim takes pages out of the cache under
 * that lock, so a fault never maps a page reclaim has already unmapped.
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
	uint64_t direct_reclaims; /* faults that had to unmap mapped pages */
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
/* Add a file region: pages pgoff.. of the cached file m at start,
 * npages long. Same errors as space_add_anon. m must outlive the
 * space. */
int space_add_file(struct addr_space *as, uint64_t start, uint64_t npages,
		   struct address_space *m, uint64_t pgoff, unsigned prot);
/*
 * Demand fault at va in as: anonymous, allocate a zeroed frame; file,
 * the page-cache page; map it, record it. Without a free frame it
 * reclaims mapped pages once (reclaim_mapped(): it may wait for other
 * CPUs, so the caller holds no lock and has interrupts on). Returns true
 * if va is now mapped (also when another CPU raced us to it), false if
 * va is in no region, past the file's end, or memory ran out.
 */
bool space_fault(struct addr_space *as, uint64_t va);
void space_stats(struct space_stats *out);

#endif
