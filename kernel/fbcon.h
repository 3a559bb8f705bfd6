/*
 * Text console on a linear RGB framebuffer (what GRUB hands over under
 * UEFI), drawn with a PSF bitmap font. Like the VGA text console it is a
 * log that scrolls, never a repainted screen.
 *
 * State lives in struct fbcon so tests can render into a fake
 * framebuffer; the kernel's console is the default instance behind
 * fbcon_init()/fbcon_write().
 */
#ifndef KERNEL_FBCON_H
#define KERNEL_FBCON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/multiboot2.h"
#include "kernel/psf.h"
#include "lib/term_esc.h"

/* The console font the Makefile links into the kernel (its FONT rule). */
extern const uint8_t font_psf_start[], font_psf_end[];

/* Text cells of the default instance: 4K (3840x2160) with an 8x16 font. */
#define FBCON_MAX_CELLS 65536

struct fbcon {
	uint8_t *fb; /* mapped framebuffer */
	uint32_t pitch, width, height; /* bytes per line, pixels */
	unsigned bytes_pp; /* bytes per pixel: 2, 3 or 4 */
	uint32_t fg, bg; /* pixel values of the two colours */
	struct psf_font font;
	/* Glyph index shown in each text cell, row-major: a shadow of the
	 * screen, so scrolling redraws only the cells that change and never
	 * reads the (slow, write-combined) framebuffer. */
	uint16_t *cells;
	unsigned cols, rows, col, row;
	unsigned scroll_lines; /* text lines moved up at once at the bottom */
	uint16_t blank; /* glyph index of ' ' */
	struct term_esc esc; /* control sequence being read */
	uint32_t utf8_cp; /* UTF-8 character being decoded */
	unsigned utf8_left; /* continuation bytes still expected */
	bool cursor; /* show the cursor (the shell, while reading a line) */
	bool ready;
	const char *error; /* why setup failed */
};

/*
 * Set up c on the framebuffer fb (mapped at fb_virt) with the PSF font
 * font[0..font_len), using cells[0..ncells) as the screen shadow, and
 * clear the screen. Returns false, with c->error set, if the framebuffer
 * layout or the font is unusable; c then ignores writes.
 */
bool fbcon_setup(struct fbcon *c, void *fb_virt,
		 const struct boot_framebuffer *fb, const uint8_t *font,
		 size_t font_len, uint16_t *cells, size_t ncells);

/* Write s[0..n) to c: UTF-8 text with \n, \r and \t as on vga.c, and
 * the cursor moves and erase of lib/term_esc.h. */
void fbcon_put(struct fbcon *c, const char *s, size_t n);

/* Show or hide c's cursor (an inverted cell; off after setup). */
void fbcon_set_cursor(struct fbcon *c, bool on);

/* The default instance (the kernel's "fb" console). fbcon_init() prints
 * the reason when it returns false. */
bool fbcon_init(void *fb_virt, const struct boot_framebuffer *fb,
		const uint8_t *font, size_t font_len);
void fbcon_write(const char *s, size_t n);
void fbcon_show_cursor(bool on);

#endif
