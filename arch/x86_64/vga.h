/*
 * VGA text-mode console (80x25 at 0xb8000), used when GRUB leaves the
 * screen in text mode (BIOS boots).
 */
#ifndef ARCH_X86_64_VGA_H
#define ARCH_X86_64_VGA_H

#include <stddef.h>
#include <stdint.h>

/* text: the mapped address of the text buffer. */
void vga_init(void *text, unsigned cols, unsigned rows);
void vga_write(const char *s, size_t n);

#endif
