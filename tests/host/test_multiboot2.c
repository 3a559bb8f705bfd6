/*
 * Host tests for kernel/multiboot2.c: the framebuffer check that stands
 * between the loader's framebuffer tag and the screen consoles (EGA text
 * geometry inside the VGA window; an RGB buffer neither in usable RAM nor
 * over the kernel, inside the physical width, pitch x height consistent),
 * the command line longer than the kernel's buffer, GRUB's backslashes
 * taken out of the command line (and only GRUB's), and a total size that
 * is only recorded once it is plausible.
 */
// HOST_SRCS: kernel/multiboot2.c mm/fwmap.c
#include <stdint.h>
#include <string.h>
#include "kernel/multiboot2.h"
#include "lib/ktest.h"
#include "mm/fwmap.h"
#include "tests/host/host_shim.h"

#define PHYS_BITS 40
#define REACH (4ull << 30) /* the boot direct map */
#define KERNEL_BASE 0x200000ull
#define KERNEL_LEN 0x235000ull
#define RAM_END 0x1ffe0000ull
#define LFB 0xfd000000ull /* QEMU's stdvga BAR: not in the map */

static struct fwmap_entry storage[16];
static struct fwmap map;

static void qemu_map(void)
{
	const struct fwmap_entry raw[] = {
		{ 0x0, 0x9fc00, FWMAP_AVAILABLE },
		{ 0x9fc00, 0x400, FWMAP_RESERVED },
		{ 0xf0000, 0x10000, FWMAP_RESERVED },
		{ 0x100000, RAM_END - 0x100000, FWMAP_AVAILABLE },
		{ RAM_END, 0x20000, FWMAP_RESERVED },
	};

	fwmap_init(&map, storage, 16);
	fwmap_sanitize(&map, raw, sizeof(raw) / sizeof(raw[0]));
	fwmap_reserve(&map, KERNEL_BASE, KERNEL_LEN, FWMAP_KERNEL);
}

static struct boot_framebuffer ega(uint32_t w, uint32_t h, uint32_t pitch)
{
	return (struct boot_framebuffer){ .present = true,
					  .type = MB2_FB_TYPE_EGA_TEXT,
					  .addr = 0xb8000, .width = w,
					  .height = h, .pitch = pitch,
					  .bpp = 16 };
}

static struct boot_framebuffer rgb(uint64_t addr, uint32_t w, uint32_t h,
				   uint32_t pitch)
{
	return (struct boot_framebuffer){ .present = true,
					  .type = MB2_FB_TYPE_RGB,
					  .addr = addr, .width = w,
					  .height = h, .pitch = pitch,
					  .bpp = 32 };
}

static const char *problem(struct boot_framebuffer fb)
{
	return mb2_framebuffer_problem(&fb, &map, PHYS_BITS, REACH);
}

KTEST(mb2_fb, ega_text_geometry)
{
	struct boot_framebuffer fb;

	qemu_map();
	EXPECT_TRUE(problem(ega(80, 25, 160)) == NULL);
	EXPECT_TRUE(problem(ega(80, 50, 160)) == NULL);
	/* Zero height, and 1024x768 cells (1.5 MiB past 0xb8000). */
	EXPECT_TRUE(problem(ega(80, 0, 160)) != NULL);
	EXPECT_TRUE(problem(ega(1024, 768, 2048)) != NULL);
	/* A pitch that does not hold a line of cells. */
	EXPECT_TRUE(problem(ega(80, 25, 100)) != NULL);
	/* A text screen the loader put in RAM. */
	fb = ega(80, 25, 160);
	fb.addr = 0x100000;
	EXPECT_TRUE(problem(fb) != NULL);
	fb.addr = 0xbff00;
	EXPECT_TRUE(problem(fb) != NULL);
}

KTEST(mb2_fb, rgb_address_and_size)
{
	qemu_map();
	EXPECT_TRUE(problem(rgb(LFB, 1024, 768, 4096)) == NULL);
	/* In usable RAM: remapping it WC and drawing would corrupt RAM. */
	EXPECT_STREQ(problem(rgb(0x1000000, 1024, 768, 4096)),
		     "in usable RAM");
	/* Over the kernel image. */
	EXPECT_STREQ(problem(rgb(KERNEL_BASE, 640, 480, 2560)),
		     "overlapping the kernel");
	/* A garbage upper half. */
	EXPECT_STREQ(problem(rgb(0xdead0000fd000000ull, 1024, 768, 4096)),
		     "beyond the CPU's physical address width");
	/* Inside the width but beyond the boot direct map. */
	EXPECT_TRUE(problem(rgb(0x8000000000ull, 1024, 768, 4096)) != NULL);
	/* pitch x height inconsistent with width: pitch too short. */
	EXPECT_TRUE(problem(rgb(LFB, 1024, 768, 1024)) != NULL);
	EXPECT_TRUE(problem(rgb(LFB, 0, 768, 4096)) != NULL);
	/* A huge pitch x height runs out of the physical width. */
	EXPECT_TRUE(problem(rgb(LFB, 1024, 0xffffffffu, 0xffffffffu)) !=
		    NULL);
}

/* A multiboot2 block: header, one command-line tag of len chars, end. */
static uint8_t mbi[4096] __attribute__((aligned(8)));

static void build_mbi(size_t len)
{
	uint32_t tag_size = (uint32_t)(8 + len + 1);
	uint32_t off = 8 + ((tag_size + 7) & ~7u);
	uint32_t total = off + 8;

	memset(mbi, 0, sizeof(mbi));
	memcpy(mbi, &total, 4);
	memcpy(mbi + 8, &(uint32_t){ MB2_TAG_CMDLINE }, 4);
	memcpy(mbi + 12, &tag_size, 4);
	memset(mbi + 16, 'x', len);
	memcpy(mbi + 16, "maxcpus=1 ", 10);
}

KTEST(mb2, long_command_line_is_reported)
{
	char out[512];

	build_mbi(BOOT_CMDLINE_MAX + 100);
	memset(&boot_info, 0, sizeof(boot_info));
	host_capture_start(out, sizeof(out));
	ASSERT_TRUE(mb2_parse(mbi, 0x10000));
	host_capture_stop();
	EXPECT_EQ(boot_info.cmdline_len, BOOT_CMDLINE_MAX + 100);
	EXPECT_EQ(strlen(boot_info.cmdline), BOOT_CMDLINE_MAX - 1);
	EXPECT_TRUE(strstr(out, "command line is 1124 bytes") != NULL);

	build_mbi(40);
	memset(&boot_info, 0, sizeof(boot_info));
	host_capture_start(out, sizeof(out));
	ASSERT_TRUE(mb2_parse(mbi, 0x10000));
	host_capture_stop();
	EXPECT_EQ(boot_info.cmdline_len, 40);
	EXPECT_EQ(out[0], '\0');
}

/* A block with a command-line tag holding cmdline and a loader-name tag
 * holding loader, as GRUB lays them out. */
static void build_mbi_loader(const char *cmdline, const char *loader)
{
	uint32_t off = 8;
	const char *strs[] = { cmdline, loader };
	const uint32_t types[] = { MB2_TAG_CMDLINE, MB2_TAG_BOOTLOADER };

	memset(mbi, 0, sizeof(mbi));
	for (unsigned i = 0; i < 2; i++) {
		uint32_t size = (uint32_t)(8 + strlen(strs[i]) + 1);

		memcpy(mbi + off, &types[i], 4);
		memcpy(mbi + off + 4, &size, 4);
		memcpy(mbi + off + 8, strs[i], strlen(strs[i]) + 1);
		off += (size + 7) & ~7u;
	}
	off += 8; /* the end tag: type 0, size 8 */
	memcpy(mbi + off - 4, &(uint32_t){ 8 }, 4);
	memcpy(mbi, &off, 4);
}

KTEST(mb2, grub_escapes_removed)
{
	/* The line Debian 12's GRUB 2.06 passes for the grub.cfg words
	 * 'run=none' 'note="a;b|c"' 'x=\y' 'it'\''s' (measured); it leaves
	 * a \x41 alone, and a lone backslash at the end of a cut line
	 * stays. */
	build_mbi_loader("run=none note=\\\"a;b|c\\\" x=\\\\y it\\'s \\x41 end\\",
			 "GRUB 2.06-13+deb12u2");
	memset(&boot_info, 0, sizeof(boot_info));
	ASSERT_TRUE(mb2_parse(mbi, 0x10000));
	EXPECT_STREQ(boot_info.cmdline,
		     "run=none note=\"a;b|c\" x=\\y it's \\x41 end\\");
	/* Another loader's line is taken as it comes. */
	build_mbi_loader("note=\\\"a\\\"", "limine");
	memset(&boot_info, 0, sizeof(boot_info));
	ASSERT_TRUE(mb2_parse(mbi, 0x10000));
	EXPECT_STREQ(boot_info.cmdline, "note=\\\"a\\\"");
}

KTEST(mb2, implausible_size_not_recorded)
{
	uint32_t huge = 0x7fffffff;

	build_mbi(10);
	memcpy(mbi, &huge, 4);
	memset(&boot_info, 0, sizeof(boot_info));
	EXPECT_FALSE(mb2_parse(mbi, 0x10000));
	/* page_alloc reserves [mbi_phys, +mbi_size): 2 GiB would be lost. */
	EXPECT_EQ(boot_info.mbi_size, 0);
}
