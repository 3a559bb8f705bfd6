/*
 * Starting one application processor (SDM vol. 3A, 9.4: INIT-SIPI-SIPI).
 * Each AP runs boot/trampoline.asm from TRAMPOLINE_PHYS up to ap_main(),
 * which gives it its own GDT, TSS, IST stacks, per-CPU area and LAPIC,
 * programs the boot CPU's PAT, prints "cpu N online (apic id X)" and
 * calls the entry function the kernel gave ap_trampoline_setup(). An AP
 * that does not answer within AP_START_TIMEOUT_MS is reported, sent back
 * to wait-for-SIPI with an INIT, and left out.
 *
 * Which APs to start is the kernel's choice (kernel/smp.h).
 */
#ifndef ARCH_X86_64_SMP_H
#define ARCH_X86_64_SMP_H

#include <stdint.h>
#include "lib/compiler.h"

/* Low pages the trampoline owns: code + parameters, then its PML4, PDPT
 * and PD. The page allocator must not hand these out (first MiB). */
#define TRAMPOLINE_PHYS 0x8000ul /* keep in step with boot/trampoline.asm */
#define TRAMPOLINE_PAGES 4
#define AP_START_TIMEOUT_MS 2000

/* Record the boot CPU's PAT, CR0, CR4 and EFER, which every AP copies.
 * Boot CPU, once, before ap_trampoline_setup(). */
void ap_boot_state_save(void);
/* The boot IA32_PAT value every AP was given (after ap_boot_state_save). */
uint64_t ap_boot_pat(void);

/* Copy the trampoline to TRAMPOLINE_PHYS and build its page tables; each
 * AP calls entry() once it is online (entry never returns). */
void ap_trampoline_setup(__noreturn void (*entry)(void));

enum ap_start_result {
	AP_ONLINE,	/* running entry() */
	AP_NO_MEMORY,	/* no per-CPU area, tables or stack: not started */
	AP_NO_ANSWER,	/* did not come online in time: sent back to wait */
};
/* Start the AP with this APIC id and wait until it is online. One at a
 * time (the trampoline's parameter block is shared). Prints why an AP is
 * left out. */
enum ap_start_result ap_start(uint32_t apic_id);

/* Where boot/trampoline.asm lands in C, on the AP, with its per-CPU
 * area; never returns. */
struct percpu;
void ap_main(struct percpu *pc);

#endif
