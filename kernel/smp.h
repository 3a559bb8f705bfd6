/*
 * SMP start-up policy: which CPUs to start and what became of them. The
 * CPUs come from the ACPI MADT (kernel/acpi_boot.h); at most
 * kopt.maxcpus run (nosmp: one). Each usable AP is started by
 * arch/x86_64/smp.h (INIT-SIPI-SIPI, the trampoline) and enters the
 * cross-CPU work loop of kernel/smp_call.h. Once more than one CPU is up,
 * kernel TLB flushes become shootdowns on every online CPU and a panic
 * stops the others with an NMI.
 */
#ifndef KERNEL_SMP_H
#define KERNEL_SMP_H

#include <stdint.h>

/* Start every usable AP the MADT lists, up to kopt.maxcpus CPUs. Once,
 * on the boot CPU, after acpi_init() and apic_init_bsp(). */
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

/* The summary line and one line per CPU (online or OFFLINE). */
void smp_print(void);
/* TLB shootdowns sent since boot (all CPUs). */
uint64_t smp_tlb_shootdowns(void);

#endif
