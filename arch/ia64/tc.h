/*
 * The modelled ia64 instructions that change translations: region
 * register writes, translation-cache inserts and the three purges
 * (Itanium SDM vol. 2, 4.1 "Virtual addressing"; vol. 3 ptc.l, ptc.g,
 * ptc.ga, ptc.e). arch/ia64/purge.S holds the real instruction sequences
 * these stand for.
 *
 * Purges match entries by region ID: ptc.l and ptc.ga take the ID from
 * the issuing CPU's region register for the address's region, so purging
 * another space's pages needs that space's IDs loaded first.
 */
#ifndef ARCH_IA64_TC_H
#define ARCH_IA64_TC_H

#include "arch/ia64/machine.h"

/* mov rr[region] = rid on cpu. */
void ia64_set_rr(struct ia64_machine *m, unsigned cpu, unsigned region,
		 uint32_t rid);
/* itc: cache va's translation under cpu's current region ID. */
void ia64_itc(struct ia64_machine *m, unsigned cpu, uint64_t va,
	      unsigned page_shift);
/* True when cpu's TC holds a translation for va under its current ID. */
bool ia64_tc_lookup(const struct ia64_machine *m, unsigned cpu, uint64_t va);
/* True when cpu's TC holds any entry for (rid, va's page). */
bool ia64_tc_holds(const struct ia64_machine *m, unsigned cpu, uint32_t rid,
		   uint64_t va);
/* ptc.l: purge [va, va + 2^page_shift) (aligned down) on cpu only. */
void ia64_ptc_l(struct ia64_machine *m, unsigned cpu, uint64_t va,
		unsigned page_shift);
/* ptc.ga: the same purge on every CPU, with the issuer's region ID. */
void ia64_ptc_ga(struct ia64_machine *m, unsigned cpu, uint64_t va,
		 unsigned page_shift);
/* ptc.e: purge the TC set addr selects, on cpu. */
void ia64_ptc_e(struct ia64_machine *m, unsigned cpu, uint64_t addr);
/*
 * local_flush_tlb_all(): the ptc.e loop over PAL_PTCE_INFO's base,
 * counts and strides, then srlz.i. Counts one loop on cpu; the caller
 * counts its cause.
 */
void ia64_ptce_loop(struct ia64_machine *m, unsigned cpu);

#endif
