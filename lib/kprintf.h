/*
 * Formatted output: kvsnprintf() is pure and portable; kprintf() formats
 * into a buffer and hands it to console_write(), which the kernel
 * (kernel/console.c) or the host shim provides.
 *
 * Conversions: %d %i %u %x %X %o %p %s %c %% with the l, ll, z, h, hh
 * length modifiers, a field width (or *), a precision for %s (or .*),
 * and the flags '-' and '0'.
 */
#ifndef LIB_KPRINTF_H
#define LIB_KPRINTF_H

#include <stdarg.h>
#include <stddef.h>
#include "compiler.h"

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
__printf(3, 4) int ksnprintf(char *buf, size_t size, const char *fmt, ...);
__printf(1, 2) int kprintf(const char *fmt, ...);
int kvprintf(const char *fmt, va_list ap);

/* Provided by the environment: write n bytes to every console. */
void console_write(const char *s, size_t n);

#endif
