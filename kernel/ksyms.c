/*
 * Symbol lookup over the embedded table: a binary search for the last
 * symbol at or below the address, limited to the kernel's text section.
 */
#include "kernel/ksyms.h"
#include "lib/kprintf.h"
#include "lib/string.h"

extern const uint64_t ksyms_count;
extern const uint64_t ksyms_addrs[];
extern const uint32_t ksyms_name_offsets[];
extern const char ksyms_names[];
extern const char __text_start[], __text_end[];
extern const char __boot_text_start[], __boot_text_end[];

/* Code lives in the kernel's text and in the low 32-bit boot code (the
 * bottom frame of every backtrace on the boot CPU). */
static bool in_code(uint64_t addr)
{
	return (addr >= (uint64_t)__text_start &&
		addr < (uint64_t)__text_end) ||
	       (addr >= (uint64_t)__boot_text_start &&
		addr < (uint64_t)__boot_text_end);
}

size_t ksym_count(void)
{
	return ksyms_count;
}

const char *ksym_lookup(uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi = ksyms_count;

	if (!in_code(addr) || ksyms_count == 0 || addr < ksyms_addrs[0])
		return NULL;
	/* Invariant: ksyms_addrs[lo] <= addr, and hi is past the answer. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ksyms_addrs[mid] <= addr)
			lo = mid;
		else
			hi = mid;
	}
	*offset = addr - ksyms_addrs[lo];
	return &ksyms_names[ksyms_name_offsets[lo]];
}

uint64_t ksym_address(const char *name)
{
	for (size_t i = 0; i < ksyms_count; i++)
		if (strcmp(&ksyms_names[ksyms_name_offsets[i]], name) == 0)
			return ksyms_addrs[i];
	return 0;
}

void ksym_format(uint64_t addr, char *buf, size_t size)
{
	uint64_t off;
	const char *name = ksym_lookup(addr, &off);

	if (name)
		ksnprintf(buf, size, "%s+0x%lx", name, (unsigned long)off);
	else
		ksnprintf(buf, size, "%#lx", (unsigned long)addr);
}
