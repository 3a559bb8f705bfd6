/*
 * Multiboot2 information parser: walks the tags once, copying what the
 * kernel needs into boot_info so the original can be overwritten later.
 * Every length is checked against the total size; a bad tag ends the walk
 * with a message rather than a wild read.
 */
#include "kernel/multiboot2.h"
#include "lib/kprintf.h"
#include "lib/string.h"
#include "mm/fwmap.h"

struct boot_info boot_info;

struct mb2_tag_mmap {
	uint32_t type, size, entry_size, entry_version;
} __packed;

struct mb2_tag_module {
	uint32_t type, size, mod_start, mod_end;
} __packed;

struct mb2_tag_framebuffer {
	uint32_t type, size;
	uint64_t addr;
	uint32_t pitch, width, height;
	uint8_t bpp, fb_type;
	uint16_t reserved;
	/* for MB2_FB_TYPE_RGB: */
	uint8_t red_pos, red_size, green_pos, green_size, blue_pos, blue_size;
} __packed;

/* Sanity bound on the whole structure; GRUB's is a few KiB. */
#define MB2_MAX_TOTAL_SIZE (1u << 20)
#define MB2_HEADER_SIZE 8

/* Copy the tag's string into dst (cap bytes, always terminated). Returns
 * the string's length in the tag (up to its NUL or the tag's end), which
 * is >= cap when the copy was truncated. */
static size_t copy_string(char *dst, size_t cap, const struct mb2_tag *tag)
{
	const char *src = (const char *)(tag + 1);
	size_t room = tag->size - sizeof(*tag), len = 0, n;

	while (len < room && src[len])
		len++;
	n = len < cap ? len : cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return len;
}

/* The loader name GRUB 2 gives, before its version. */
#define GRUB_LOADER_PREFIX "GRUB "

/*
 * GRUB 2 hands a multiboot kernel its arguments re-quoted: a backslash
 * before every backslash, ' and " of an argument, double quotes around
 * an argument holding a space (grub-core/lib/cmdline.c; measured on
 * Debian 12's GRUB 2.06). tools/image/mkiso.sh gives GRUB one argument per
 * space-separated word, so only the backslashes are GRUB's: removing
 * them in place gives back the line as typed (docs/cmdline.md).
 */
static void undo_grub_escapes(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' &&
		    (s[1] == '\\' || s[1] == '\'' || s[1] == '"'))
			s++;
		*out++ = *s;
	}
	*out = '\0';
}

static void parse_mmap(const struct mb2_tag *tag)
{
	const struct mb2_tag_mmap *m = (const void *)tag;
	const uint8_t *p = (const uint8_t *)(m + 1);
	const uint8_t *end = (const uint8_t *)tag + tag->size;

	if (tag->size < sizeof(*m) || m->entry_size < 24) {
		kprintf("multiboot2: memory map tag malformed (entry size %u), "
			"ignored\n", tag->size < sizeof(*m) ? 0 : m->entry_size);
		return;
	}
	for (; p + m->entry_size <= end; p += m->entry_size) {
		if (boot_info.mmap_count == BOOT_MAX_MMAP) {
			boot_info.mmap_truncated = true;
			break;
		}
		memcpy(&boot_info.mmap[boot_info.mmap_count++], p,
		       sizeof(struct mb2_mmap_entry));
	}
}

static void parse_framebuffer(const struct mb2_tag *tag)
{
	const struct mb2_tag_framebuffer *f = (const void *)tag;
	struct boot_framebuffer *fb = &boot_info.fb;

	if (tag->size < offsetof(struct mb2_tag_framebuffer, red_pos)) {
		kprintf("multiboot2: framebuffer tag too short, ignored\n");
		return;
	}
	fb->present = true;
	fb->type = f->fb_type;
	fb->addr = f->addr;
	fb->pitch = f->pitch;
	fb->width = f->width;
	fb->height = f->height;
	fb->bpp = f->bpp;
	if (f->fb_type == MB2_FB_TYPE_RGB &&
	    tag->size >= sizeof(struct mb2_tag_framebuffer)) {
		fb->red_pos = f->red_pos;
		fb->red_size = f->red_size;
		fb->green_pos = f->green_pos;
		fb->green_size = f->green_size;
		fb->blue_pos = f->blue_pos;
		fb->blue_size = f->blue_size;
	}
}

static void parse_rsdp(const struct mb2_tag *tag, unsigned version)
{
	size_t n = tag->size - sizeof(*tag);

	/* The new (ACPI 2.0+) RSDP wins over the old one. */
	if (boot_info.rsdp_version >= version)
		return;
	if (n > BOOT_RSDP_MAX)
		n = BOOT_RSDP_MAX;
	memcpy(boot_info.rsdp, tag + 1, n);
	boot_info.rsdp_len = (unsigned)n;
	boot_info.rsdp_version = version;
}

bool mb2_parse(const void *mbi, uint64_t mbi_phys)
{
	const uint8_t *base = mbi;
	uint32_t total = *(const uint32_t *)mbi;
	uint32_t off = MB2_HEADER_SIZE;

	boot_info.mbi_phys = mbi_phys;
	if (total < MB2_HEADER_SIZE || total > MB2_MAX_TOTAL_SIZE) {
		kprintf("multiboot2: implausible total size %u, ignoring the "
			"boot information\n", total);
		return false;
	}
	boot_info.mbi_size = total;
	while (off + sizeof(struct mb2_tag) <= total) {
		const struct mb2_tag *tag = (const void *)(base + off);

		if (tag->type == MB2_TAG_END)
			break;
		if (tag->size < sizeof(*tag) || tag->size > total - off) {
			kprintf("multiboot2: tag %u at offset %u has bad size "
				"%u, stopping\n", tag->type, off, tag->size);
			break;
		}
		switch (tag->type) {
		case MB2_TAG_CMDLINE:
			boot_info.cmdline_len = (uint32_t)copy_string(
				boot_info.cmdline, sizeof(boot_info.cmdline),
				tag);
			if (boot_info.cmdline_len >= sizeof(boot_info.cmdline))
				kprintf("multiboot2: the command line is %u "
					"bytes, the kernel keeps %zu: the rest "
					"is ignored\n", boot_info.cmdline_len,
					sizeof(boot_info.cmdline) - 1);
			break;
		case MB2_TAG_BOOTLOADER:
			(void)copy_string(boot_info.loader, sizeof(boot_info.loader),
				    tag);
			break;
		case MB2_TAG_MODULE:
			if (tag->size >= sizeof(struct mb2_tag_module) &&
			    boot_info.module_count < BOOT_MAX_MODULES) {
				const struct mb2_tag_module *m = (const void *)tag;
				boot_info.modules[boot_info.module_count].start =
					m->mod_start;
				boot_info.modules[boot_info.module_count++].end =
					m->mod_end;
			}
			break;
		case MB2_TAG_MMAP:
			parse_mmap(tag);
			break;
		case MB2_TAG_FRAMEBUFFER:
			parse_framebuffer(tag);
			break;
		case MB2_TAG_ACPI_OLD:
			parse_rsdp(tag, 1);
			break;
		case MB2_TAG_ACPI_NEW:
			parse_rsdp(tag, 2);
			break;
		default:
			break;
		}
		off += ALIGN_UP(tag->size, MB2_TAG_ALIGN);
	}
	if (strncmp(boot_info.loader, GRUB_LOADER_PREFIX,
		    sizeof(GRUB_LOADER_PREFIX) - 1) == 0)
		undo_grub_escapes(boot_info.cmdline);
	return true;
}

const char *mb2_framebuffer_problem(const struct boot_framebuffer *fb,
				    const struct fwmap *map,
				    unsigned int phys_bits, uint64_t reach)
{
	uint64_t bytes = (uint64_t)fb->pitch * fb->height;
	enum fwmap_range_verdict v;

	if (!fb->present)
		return "no framebuffer";
	if (fb->width == 0 || fb->height == 0 || fb->pitch == 0)
		return "zero width, height or pitch";
	if (fb->type == MB2_FB_TYPE_EGA_TEXT) {
		if ((uint64_t)fb->width * EGA_TEXT_CELL_BYTES > fb->pitch)
			return "pitch shorter than a line of text cells";
		if (fb->addr < VGA_WINDOW_START || fb->addr > VGA_WINDOW_END ||
		    bytes > VGA_WINDOW_END - fb->addr)
			return "text screen outside the VGA window "
			       "0xa0000-0xbffff";
		return NULL;
	}
	if (fb->type != MB2_FB_TYPE_RGB)
		return "indexed colour is not supported";
	if (fb->bpp == 0 || fb->bpp > 32 ||
	    ((uint64_t)fb->width * fb->bpp + 7) / 8 > fb->pitch)
		return "pitch shorter than a line of pixels";
	v = fwmap_check_range(map, fb->addr, bytes, phys_bits);
	if (fwmap_range_refused(v) || v == FWMAP_RANGE_USABLE)
		return fwmap_range_verdict_name(v);
	if (fb->addr + bytes > reach)
		return "beyond the memory the kernel maps at boot";
	return NULL;
}

const char *mb2_mmap_type_name(uint32_t type)
{
	switch (type) {
	case MB2_MMAP_AVAILABLE:
		return "available";
	case MB2_MMAP_ACPI_RECLAIMABLE:
		return "ACPI reclaimable";
	case MB2_MMAP_NVS:
		return "ACPI NVS";
	case MB2_MMAP_BADRAM:
		return "bad RAM";
	default:
		return "reserved";
	}
}

void mb2_print(void)
{
	const struct boot_framebuffer *fb = &boot_info.fb;

	kprintf("boot: loader \"%s\", boot information at %#lx (%lu bytes)\n",
		boot_info.loader, (unsigned long)boot_info.mbi_phys,
		(unsigned long)boot_info.mbi_size);
	kprintf("boot: command line \"%s\"\n", boot_info.cmdline);
	kprintf("boot: firmware memory map (%u entries%s):\n",
		boot_info.mmap_count,
		boot_info.mmap_truncated ? ", truncated" : "");
	for (unsigned i = 0; i < boot_info.mmap_count; i++) {
		const struct mb2_mmap_entry *e = &boot_info.mmap[i];
		kprintf("  [0x%012llx-0x%012llx] %9llu KiB  %s\n",
			(unsigned long long)e->base,
			(unsigned long long)(e->base + e->len - 1),
			(unsigned long long)(e->len >> 10),
			mb2_mmap_type_name(e->type));
	}
	if (fb->present)
		kprintf("boot: framebuffer %ux%u, %u bpp, pitch %u, at %#llx "
			"(%s)%s%s\n", fb->width, fb->height, fb->bpp, fb->pitch,
			(unsigned long long)fb->addr,
			fb->type == MB2_FB_TYPE_EGA_TEXT ? "EGA text" :
			fb->type == MB2_FB_TYPE_RGB	 ? "RGB" :
							   "indexed",
			fb->refused ? ": refused, " : "",
			fb->refused ? fb->refused : "");
	else
		kprintf("boot: no framebuffer information\n");
	kprintf("boot: ACPI RSDP %s\n",
		boot_info.rsdp_version == 2 ? "v2 (from GRUB)" :
		boot_info.rsdp_version == 1 ? "v1 (from GRUB)" :
					      "not given by the loader");
}
