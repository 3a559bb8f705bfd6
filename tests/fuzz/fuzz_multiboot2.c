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
// HOST_SRCS: kernel/multiboot2.c mm/fwmap.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/multiboot2.h"
#include "lib/assert.h"
#include "mm/fwmap.h"
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

/*
 * The framebuffer check over a fixed QEMU-like map (RAM up to 512 MiB,
 * kernel at 2 MiB, 40-bit addresses): whatever the tag says, a screen it
 * accepts lies inside the VGA window (text) or outside RAM and inside
 * the boot direct map (RGB).
 */
#define FB_PHYS_BITS 40
#define FB_REACH (4ull << 30)
static void check_fb(const struct boot_framebuffer *fb)
{
	static struct fwmap_entry storage[8];
	static struct fwmap map;
	static const struct fwmap_entry raw[] = {
		{ 0x0, 0x9fc00, FWMAP_AVAILABLE },
		{ 0x100000, 0x1fee0000, FWMAP_AVAILABLE },
	};
	uint64_t bytes = (uint64_t)fb->pitch * fb->height;

	if (!map.cap) {
		fwmap_init(&map, storage, 8);
		map.quiet = true;
		fwmap_sanitize(&map, raw, 2);
		fwmap_reserve(&map, 0x200000, 0x200000, FWMAP_KERNEL);
	}
	if (mb2_framebuffer_problem(fb, &map, FB_PHYS_BITS, FB_REACH))
		return;
	kassert(fb->width && fb->height && fb->pitch);
	if (fb->type == MB2_FB_TYPE_EGA_TEXT) {
		kassert(fb->addr >= VGA_WINDOW_START &&
			fb->addr + bytes <= VGA_WINDOW_END);
		kassert((uint64_t)fb->width * fb->height *
				EGA_TEXT_CELL_BYTES <= bytes);
	} else {
		kassert(fb->type == MB2_FB_TYPE_RGB);
		kassert(fwmap_check_range(&map, fb->addr, bytes,
					  FB_PHYS_BITS) == FWMAP_RANGE_OK);
		kassert(fb->addr + bytes <= FB_REACH);
	}
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
		check_fb(&boot_info.fb);
		mb2_print();
	}
	free(mbi);
	return 0;
}
