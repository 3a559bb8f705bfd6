/*
 * Linux/ia64's TLB flush routines on the model: flush_tlb_all(),
 * flush_tlb_range() and the two versions of ia64_global_tlb_purge()
 * (m->cfg.policy picks one), reached by the reclaim path's unmap of one
 * page (try_to_unmap -> ptep_clear_flush -> flush_tlb_page).
 *
 *   old: space not active on the calling CPU, or the caller is a kernel
 *        thread  -> flush_tlb_all(): every CPU runs the ptc.e loop
 *   new: space not active -> activate_context(space); ptc.ga the range;
 *        activate_context(active) again. flush_tlb_all() only when the
 *        caller has no active space at all.
 */
#ifndef ARCH_IA64_TLB_H
#define ARCH_IA64_TLB_H

#include "arch/ia64/machine.h"

/* Linux's fallback purge-size mask (bit n: 2^n bytes can be purged). */
#define IA64_PURGE_SIZES_MASK 0x115557000ull

/* flush_tlb_all(): the ptc.e loop on every CPU; one global purge. */
void ia64_flush_tlb_all(struct ia64_machine *m);
/* ia64_global_tlb_purge(), version m->cfg.policy, issued from cpu. */
void ia64_global_tlb_purge(struct ia64_machine *m, unsigned cpu, int slot,
			   uint64_t start, uint64_t end, unsigned nbits);
/* flush_tlb_range(): ptc.l when only cpu has the space loaded and it is
 * active there, else the global purge. */
void ia64_flush_tlb_range(struct ia64_machine *m, unsigned cpu, int slot,
			  uint64_t start, uint64_t end);
/*
 * Reclaim running on cpu unmaps page va of space slot: clear the
 * mapping, then flush_tlb_page(). Runs ia64_check() afterwards when
 * cfg.check_every_purge is set. Returns false if the page was not mapped.
 */
bool ia64_unmap_page(struct ia64_machine *m, unsigned cpu, int slot,
		     uint64_t va);

#endif
