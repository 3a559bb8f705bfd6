/*
 * Polled 16550 UART on COM1: the console every run is logged on.
 */
#ifndef ARCH_X86_64_SERIAL_H
#define ARCH_X86_64_SERIAL_H

#include <stdbool.h>
#include <stddef.h>

/* Probe and program COM1 (115200 8N1). Returns false if no UART answers. */
bool serial_init(void);
bool serial_present(void);
/* Writes n bytes, turning "\n" into "\r\n" as terminals expect. */
void serial_write(const char *s, size_t n);
/* Returns a received byte or -1 when none is waiting. */
int serial_getc(void);

#endif
