/*
 * The kernel's own symbol table, embedded at build time
 * (tools/image/gensyms.sh), so a panic can name functions without a host tool.
 */
#ifndef KERNEL_KSYMS_H
#define KERNEL_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Find the function containing addr. Returns its name and sets *offset,
 * or returns NULL if addr is outside the kernel's text.
 */
const char *ksym_lookup(uint64_t addr, uint64_t *offset);
/* Address of a symbol by name, or 0. */
uint64_t ksym_address(const char *name);
/* Format addr as "symbol+0xoff" (or the bare address) into buf. */
void ksym_format(uint64_t addr, char *buf, size_t size);
size_t ksym_count(void);

#endif
