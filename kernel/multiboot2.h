/*
 * Multiboot2 boot information (the spec's section 3.6): the tags GRUB
 * hands the kernel, and struct boot_info, the kernel's own copy of what it
 * needs from them. The original may sit anywhere in low memory (OVMF puts
 * it at 0x4000), so it is copied before anything else touches memory.
 */
#ifndef KERNEL_MULTIBOOT2_H
#define KERNEL_MULTIBOOT2_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/compiler.h"

#define MB2_BOOTLOADER_MAGIC 0x36d76289

#define MB2_TAG_END 0
#define MB2_TAG_CMDLINE 1
#define MB2_TAG_BOOTLOADER 2
#define MB2_TAG_MODULE 3
#define MB2_TAG_MMAP 6
#define MB2_TAG_FRAMEBUFFER 8
#define MB2_TAG_ACPI_OLD 14
#define MB2_TAG_ACPI_NEW 15
#define MB2_TAG_ALIGN 8

#define MB2_MMAP_AVAILABLE 1
#define MB2_MMAP_ACPI_RECLAIMABLE 3
#define MB2_MMAP_NVS 4
#define MB2_MMAP_BADRAM 5

#define MB2_FB_TYPE_INDEXED 0
#define MB2_FB_TYPE_RGB 1
#define MB2_FB_TYPE_EGA_TEXT 2

struct mb2_tag {
	uint32_t type;
	uint32_t size;
} __packed;

struct mb2_mmap_entry {
	uint64_t base;
	uint64_t len;
	uint32_t type;
	uint32_t reserved;
} __packed;

#define BOOT_MAX_MMAP 128
#define BOOT_MAX_MODULES 8
#define BOOT_CMDLINE_MAX 1024
#define BOOT_RSDP_MAX 64

struct boot_framebuffer {
	bool present;
	const char *refused; /* NULL, or why the kernel will not draw in it */
	uint8_t type; /* MB2_FB_TYPE_* */
	uint64_t addr; /* physical */
	uint32_t pitch, width, height;
	uint8_t bpp;
	uint8_t red_pos, red_size, green_pos, green_size, blue_pos, blue_size;
};

struct boot_module {
	uint64_t start, end;
};

struct boot_info {
	uint64_t mbi_phys, mbi_size; /* where GRUB left the original */
	char cmdline[BOOT_CMDLINE_MAX];
	uint32_t cmdline_len; /* as the loader gave it; > BOOT_CMDLINE_MAX - 1
				 when cmdline holds a truncated copy */
	char loader[64];
	unsigned mmap_count;
	struct mb2_mmap_entry mmap[BOOT_MAX_MMAP];
	bool mmap_truncated;
	unsigned module_count;
	struct boot_module modules[BOOT_MAX_MODULES];
	struct boot_framebuffer fb;
	/* A copy of the RSDP GRUB found; rsdp_version 0 means none. */
	unsigned rsdp_version;
	uint8_t rsdp[BOOT_RSDP_MAX];
	unsigned rsdp_len;
};

extern struct boot_info boot_info;

/*
 * Copy and parse the boot information at mbi (a mapped pointer to the
 * original). Malformed tags are reported and parsing stops there; what was
 * read before remains. Returns false if nothing usable was found.
 */
bool mb2_parse(const void *mbi, uint64_t mbi_phys);
void mb2_print(void);

struct fwmap;

/* The legacy VGA window the EGA text mode lives in. */
#define VGA_WINDOW_START 0xa0000ull
#define VGA_WINDOW_END 0xc0000ull
#define EGA_TEXT_CELL_BYTES 2

/*
 * Whether the kernel may draw into fb. EGA text: width and height non-zero,
 * pitch at least a line of cells, the whole screen inside the VGA window
 * (so no geometry can make the console write into low memory or the
 * kernel). RGB: non-zero geometry, a pitch that holds a line, and pitch x
 * height bytes at addr that are neither usable RAM nor the kernel
 * (fwmap_check_range() over map), inside 2^phys_bits and below reach (the
 * first byte the kernel cannot map yet). Returns NULL when usable, else
 * the reason, a constant string. Indexed colour is never usable.
 */
const char *mb2_framebuffer_problem(const struct boot_framebuffer *fb,
				    const struct fwmap *map,
				    unsigned int phys_bits, uint64_t reach);
const char *mb2_mmap_type_name(uint32_t type);

#endif
