/*
 * Panic reports and the single way out of the kernel.
 */
#ifndef KERNEL_PANIC_H
#define KERNEL_PANIC_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/x86_64/trap.h"
#include "lib/compiler.h"
#include "lib/panic.h"

/* Status every panic exits with (QEMU then exits with 2 * 3 + 1 = 7). */
#define EXIT_STATUS_PANIC 3

/*
 * Print "EXIT: STATUS=n" on every console and leave as the exit= option
 * says (QEMU debug exit, halt or reboot).
 */
__noreturn void kernel_exit(int status);

/* Installed by the SMP code: stop every other CPU (NMI) so a panic's
 * report is not interleaved with their output. NULL on one CPU. */
extern void (*panic_stop_other_cpus)(void);

/*
 * Call fn from the panic paths, after the other CPUs were stopped and
 * the report printed, before the exit status (e.g. to export a trace).
 * At most PANIC_NOTIFIERS; returns false when full. fn must not panic.
 */
#define PANIC_NOTIFIERS 4
bool panic_notifier_register(void (*fn)(void));
void panic_notifier_unregister(void (*fn)(void));

/* Print a backtrace starting at the frame pointer rbp. */
void backtrace_print(uint64_t rbp);

#endif
