/*
 * ACPI at boot: find the RSDP (the copy GRUB passes in the multiboot2
 * information, else the BIOS scan), parse the tables (kernel/acpi.h),
 * print what was found, and hand the results to who needs them: the
 * reset register to arch/x86_64/power.c, the PM timer to the TSC
 * calibration, the MADT's CPUs to SMP start-up (kernel/smp.h).
 */
#ifndef KERNEL_ACPI_BOOT_H
#define KERNEL_ACPI_BOOT_H

#include "kernel/acpi.h"

/* Parse and print the tables; install the FADT reset register. Once, on
 * the boot CPU, after vm_init() (tables are mapped on demand). */
void acpi_init(void);
/* The parse result, or NULL if no usable RSDP was found (valid after
 * acpi_init()). */
const struct acpi_info *acpi_tables(void);

#endif
