/*
 * Address spaces and CPUs of the ia64 model: create and exit a space,
 * map and clear its pages, schedule a space or a kernel thread on a CPU,
 * and touch a page from a CPU (which caches its translation).
 *
 * A space's pages are addressed as region r (0..4), page index
 * 0..IA64_MM_PAGES-1: va = r << 61 | index << IA64_PAGE_SHIFT.
 */
#ifndef ARCH_IA64_SPACE_H
#define ARCH_IA64_SPACE_H

#include "arch/ia64/machine.h"

static inline uint64_t ia64_user_va(unsigned region, unsigned page)
{
	return (uint64_t)region << IA64_REGION_SHIFT |
	       (uint64_t)page << IA64_PAGE_SHIFT;
}

/* A new space in slot (which must be free): no context yet. */
void ia64_space_create(struct ia64_machine *m, int slot);
/*
 * The space exits: its pages go, its context is retired (no purge, as
 * Linux's exit_mmap), CPUs that still have it as their active space
 * (lazily, for a kernel thread) drop it.
 */
void ia64_space_exit(struct ia64_machine *m, int slot);
/* Map page va in slot (a page-table change: no TLB effect). Returns
 * false for an address outside the modelled window. */
bool ia64_space_map(struct ia64_machine *m, int slot, uint64_t va);
/* Clear page va's mapping; false if it was not mapped. No purge. */
bool ia64_space_clear(struct ia64_machine *m, int slot, uint64_t va);
bool ia64_space_mapped(const struct ia64_machine *m, int slot, uint64_t va);
/*
 * Schedule space slot on cpu (switch_mm: activate_context), or with
 * IA64_KTHREAD a kernel thread, which keeps the previous active space
 * (lazy TLB).
 */
void ia64_switch_to(struct ia64_machine *m, unsigned cpu, int slot);
/*
 * The user task on cpu reads va: its translation is cached if mapped.
 * Returns false (a page fault) if the page is not mapped, or if a kernel
 * thread runs there.
 */
bool ia64_touch(struct ia64_machine *m, unsigned cpu, uint64_t va);

/*
 * Check the invariants of machine.h. Returns true if they hold; else
 * records the first violation in m->fault (kept until re-initialised).
 */
bool ia64_check(struct ia64_machine *m);

#endif
