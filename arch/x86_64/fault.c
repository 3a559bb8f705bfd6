/*
 * The page-fault fix-up: a not-present fault in the lower half of the
 * space this CPU has loaded goes to the demand-paging code (mm/space.h).
 * Everything else, and whatever it declines, continues to trap_try() or
 * the panic report unchanged.
 *
 * While it runs the fix-up enables interrupts if the faulting code had
 * them on, as Linux does: filling a page takes locks that a CPU sending
 * a TLB shootdown may hold while it waits for this CPU to answer.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/fault.h"
#include "arch/x86_64/trap.h"
#include "mm/space.h"
#include "mm/tlb.h"

static bool page_fault_fixup(struct trap_frame *f)
{
	uint64_t cr2 = read_cr2();
	bool handled;

	if (f->error_code & (PF_ERR_PRESENT | PF_ERR_RSVD))
		return false;
	if (cr2 >= VM_USER_END || cr2 < SPACE_USER_MIN)
		return false;
	if (f->rflags & RFLAGS_IF)
		cpu_sti();
	handled = space_fault(tlb_current(), cr2);
	cpu_cli();
	return handled;
}

void fault_init(void)
{
	trap_register_fixup(VEC_PAGE_FAULT, page_fault_fixup);
}
