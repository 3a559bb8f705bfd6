/*
 * Bringing up the application processors (SDM vol. 3A, 9.4: INIT-SIPI-
 * SIPI). The CPUs come from the ACPI MADT; each AP runs boot/trampoline.asm
 * from TRAMPOLINE_PHYS up to ap_main(), which gives it its own GDT, TSS,
 * IST stacks, per-CPU area and LAPIC, programs the boot CPU's PAT, prints
 * "cpu N online (apic id X)" and enters its work loop (kernel/smp_call.h).
 * An AP that does not answer within AP_START_TIMEOUT_MS is reported, sent
 * back to wait-for-SIPI with an INIT, and left out.
 */
#ifndef ARCH_X86_64_SMP_H
#define ARCH_X86_64_SMP_H

#include <stdint.h>
#include "kernel/acpi.h"

/* Low pages the trampoline owns: code + parameters, then its PML4, PDPT
 * and PD. The page allocator must not hand these out (first MiB). */
#define TRAMPOLINE_PHYS 0x8000ul /* keep in step with boot/trampoline.asm */
#define TRAMPOLINE_PAGES 4
#define AP_START_TIMEOUT_MS 2000

/* Parse ACPI from boot_info's RSDP copy (or the BIOS scan); print it. */
void smp_acpi_init(void);
/* The parse result (valid after smp_acpi_init). */
const struct acpi_info *smp_acpi(void);

/* Start every usable AP the MADT lists, up to kopt.maxcpus CPUs. */
void smp_init(void);

/* What the MADT offered and what became of it. */
struct smp_stats {
	unsigned madt_cpus;	/* usable (enabled) CPUs in the MADT */
	unsigned expected;	/* min(madt_cpus, maxcpus) */
	unsigned online;
	unsigned failed;	/* did not answer */
	unsigned skipped;	/* maxcpus, id unusable, no memory */
};
const struct smp_stats *smp_stats(void);
/* The boot IA32_PAT value every AP was given. */
uint64_t smp_boot_pat(void);

void smp_print(void);
/* TLB shootdowns (flushes that reached another CPU) since boot. */
uint64_t smp_tlb_shootdowns(void);

#endif
