/*
 * panic(): report an unrecoverable error and stop.
 * In the kernel it prints the reason, registers and a symbolized backtrace,
 * then leaves as the exit= option says. In host builds the test shim prints
 * the message and aborts (or returns to a test that expected the panic).
 */
#ifndef LIB_PANIC_H
#define LIB_PANIC_H

#include "compiler.h"

__noreturn __printf(1, 2) void panic(const char *fmt, ...);

#endif
