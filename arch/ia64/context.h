/*
 * Region-ID (context) allocation, modelled on Linux/ia64's
 * get_mmu_context(), wrap_mmu_context() and delayed_tlb_flush().
 *
 * A space gets a context number the first time a CPU loads it; its five
 * user region IDs are context << 3 | region. Contexts are handed out
 * upwards from `next` up to `limit` (the next used one). When the number
 * space is exhausted, a wrap-around frees every retired context at once
 * (bitmap ^= flushmap) and, since those IDs may still sit in TCs, marks
 * every other CPU to flush its whole TC (ptc.e loop) before it loads any
 * context again; the wrapping CPU flushes at once. A space that exits
 * only retires its context (flushmap): no purge at exit.
 */
#ifndef ARCH_IA64_CONTEXT_H
#define ARCH_IA64_CONTEXT_H

#include "arch/ia64/machine.h"

/*
 * The context of space slot, allocating one (and wrapping) if it has
 * none; runs cpu's delayed flush first if one is pending. Never fails:
 * asserts that a wrap found a free context.
 */
uint32_t ia64_get_mmu_context(struct ia64_machine *m, unsigned cpu, int slot);
/* activate_context(): get the context, add cpu to the space's CPU mask,
 * load region registers 0-4 with its IDs. */
void ia64_activate_context(struct ia64_machine *m, unsigned cpu, int slot);
/* The exit path's flush_tlb_mm(): retire slot's context (flushmap). */
void ia64_retire_context(struct ia64_machine *m, int slot);

#endif
