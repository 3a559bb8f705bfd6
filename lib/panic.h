/*
 * panic(): report an unrecoverable error and stop.
 * In the kernel it prints the reason, registers and a symbolized backtrace,
 * then leaves as the exit= option says. In host builds the test shim prints
 * the message and aborts (or returns to a test that expected the panic).
 *
 * The interface is declared here, at the bottom, so that every layer can
 * stop the machine; kernel/panic.c implements it (and kernel/panic.h has
 * the kernel's own additions: the way out, the backtrace).
 */
#ifndef LIB_PANIC_H
#define LIB_PANIC_H

#include <stdbool.h>
#include "lib/compiler.h"

__noreturn __printf(1, 2) void panic(const char *fmt, ...);

/* An exception nobody expected (arch/x86_64/trap.h's frame): report it
 * with the full register dump and stop. */
struct trap_frame;
__noreturn void panic_trap(const struct trap_frame *f);
/* True once a panic has started (the NMI handler halts on it). */
bool panic_in_progress(void);

#endif
