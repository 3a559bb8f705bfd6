/*
 * The page-fault fix-up: a not-present fault in the lower half of the
 * space this CPU has loaded goes to the demand-paging code (mm/space.h).
 * Everything else, and whatever it declines, continues to trap_try() or
 * the panic report unchanged.
 *
 * While it runs the fix-up enables interrupts if the faulting code had
 * them on, as Linux does: filling a page takes locks that a CPU sending
 * a TLB shootdown may hold while it waits for this CPU to answer. For
 * the same reason a demand fault taken with interrupts off is refused
 * (with a message; trap_try() or the panic report follows): spinning on
 * the reverse-map lock with interrupts off while its holder waits for
 * this CPU's answer to a shootdown would hang both CPUs. Linux refuses
 * such faults too (faulthandler_disabled()).
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/fault.h"
#include "arch/x86_64/trap.h"
#include "lib/kprintf.h"
#include "mm/space.h"
#include "mm/tlb.h"

static bool page_fault_fixup(struct trap_frame *f)
{
	uint64_t cr2 = read_cr2();
	struct addr_space *as;
	bool handled;

	if (f->error_code & (PF_ERR_PRESENT | PF_ERR_RSVD))
		return false;
	if (cr2 >= VM_USER_END || cr2 < SPACE_USER_MIN)
		return false;
	as = tlb_current();
	if (!as || as == &kernel_space)
		return false; /* no lower half loaded: not a demand fault */
	if (!(f->rflags & RFLAGS_IF)) {
		kprintf("fault: demand fault at %#lx with interrupts off "
			"(rip %#lx): not handled, it could deadlock a TLB "
			"shootdown\n", (unsigned long)cr2,
			(unsigned long)f->rip);
		return false;
	}
	cpu_sti();
	handled = space_fault(as, cr2);
	cpu_cli();
	return handled;
}

void fault_init(void)
{
	trap_register_fixup(VEC_PAGE_FAULT, page_fault_fixup);
}
