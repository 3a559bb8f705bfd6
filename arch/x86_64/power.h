/*
 * Leaving the kernel: QEMU's isa-debug-exit, reboot, halt.
 */
#ifndef ARCH_X86_64_POWER_H
#define ARCH_X86_64_POWER_H

#include <stdint.h>
#include "lib/compiler.h"

/*
 * Write status to isa-debug-exit (port 0xf4); QEMU then exits with
 * (status << 1) | 1. Returns if there is no such device (real hardware).
 */
void arch_qemu_exit(uint32_t status);
/* The FADT's reset register, when it is an I/O port (ACPI 5.2.9). */
void arch_set_acpi_reset(uint16_t port, uint8_t value);
/* Reset through the ACPI reset register if known, then the keyboard
 * controller, then a triple fault. */
__noreturn void arch_reboot(void);
/* Load an empty IDT and raise an exception: the CPU shuts down (QEMU
 * resets or, with -no-reboot, exits). */
__noreturn void arch_triple_fault(void);
/* Interrupts off, halt forever (NMIs resume the loop). */
__noreturn void arch_halt(void);

#endif
