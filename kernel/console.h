/*
 * Console multiplexer: every line the kernel prints goes to every
 * registered console (serial, VGA text, framebuffer), so each shows the
 * same log.
 */
#ifndef KERNEL_CONSOLE_H
#define KERNEL_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>

struct console {
	const char *name;
	void (*write)(const char *s, size_t n);
};

#define CONSOLE_MAX 4

void console_register(const struct console *c);
/* Remove c; false if it was not registered. */
bool console_unregister(const struct console *c);
unsigned console_count(void);
/* Names of the active consoles, for the boot report. */
void console_print_list(void);

#endif
