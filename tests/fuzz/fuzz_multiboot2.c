/*
 * libFuzzer harness for the multiboot2 information parser
 * (kernel/multiboot2.c): the input is the boot information block as GRUB
 * leaves it in memory (total size, reserved, then 8-byte aligned tags).
 *
 * The parser trusts the block's first word for its size, as the kernel
 * must (GRUB maps nothing else). The harness hands it a heap copy of
 * exactly the block's length (the word, clamped to the input's length),
 * so ASan flags any read past what the block says it holds. After a parse
 * the copy's bounds are checked (counts within their arrays, strings
 * terminated inside their buffers) and the report printer runs (it
 * formats every field that was copied).
 */
// HOST_SRCS: kernel/multiboot2.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/multiboot2.h"
#include "lib/assert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MB2_FIXED_PART 8	/* total_size, reserved */

static bool terminated(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

static void check_copy(void)
{
	kassert(boot_info.mmap_count <= BOOT_MAX_MMAP);
	kassert(boot_info.module_count <= BOOT_MAX_MODULES);
	kassert(boot_info.rsdp_len <= BOOT_RSDP_MAX);
	kassert(boot_info.rsdp_version <= 2);
	kassert(terminated(boot_info.cmdline, sizeof(boot_info.cmdline)));
	kassert(terminated(boot_info.loader, sizeof(boot_info.loader)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t total;
	size_t len;
	uint8_t *mbi;

	if (size < MB2_FIXED_PART)
		return 0;
	memcpy(&total, data, sizeof(total));
	if (total > size) {	/* the block cannot be larger than the input */
		total = (uint32_t)size;
		len = size;
	} else {		/* nor can the buffer: the tail is not ours */
		len = total < sizeof(total) ? sizeof(total) : total;
	}
	mbi = malloc(len);
	if (!mbi)
		return 0;
	memcpy(mbi, data, len);
	memcpy(mbi, &total, sizeof(total));
	memset(&boot_info, 0, sizeof(boot_info));
	if (mb2_parse(mbi, 0x10000)) {
		check_copy();
		mb2_print();
	}
	free(mbi);
	return 0;
}
