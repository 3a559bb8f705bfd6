/*
 * VGA text console: a log that scrolls, never a repainted screen. The
 * hardware cursor is moved through the CRT controller so a person at the
 * machine sees where output continues. The shell's line editor moves the
 * cursor and erases with the sequences of lib/term_esc.h.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/vga.h"
#include "lib/compiler.h"
#include "lib/string.h"
#include "lib/term_esc.h"

#define VGA_ATTR_NORMAL 0x07 /* light grey on black */
#define VGA_CRTC_INDEX 0x3d4
#define VGA_CRTC_DATA 0x3d5
#define VGA_CRTC_CURSOR_HIGH 0x0e
#define VGA_CRTC_CURSOR_LOW 0x0f
#define VGA_TAB_WIDTH 8

static volatile uint16_t *buf;
static unsigned cols, rows, col, row;
static struct term_esc esc;

static uint16_t cell(char c)
{
	return (uint16_t)(uint8_t)c | (VGA_ATTR_NORMAL << 8);
}

void vga_init(void *text, unsigned c, unsigned r)
{
	buf = text;
	cols = c;
	rows = r;
	col = row = 0;
	for (unsigned i = 0; i < cols * rows; i++)
		buf[i] = cell(' ');
}

static void scroll(void)
{
	for (unsigned i = 0; i < cols * (rows - 1); i++)
		buf[i] = buf[i + cols];
	for (unsigned i = cols * (rows - 1); i < cols * rows; i++)
		buf[i] = cell(' ');
	row = rows - 1;
}

static void newline(void)
{
	col = 0;
	if (++row == rows)
		scroll();
}

static void move_cursor(void)
{
	uint16_t pos = (uint16_t)(row * cols + col);

	outb(VGA_CRTC_INDEX, VGA_CRTC_CURSOR_HIGH);
	outb(VGA_CRTC_DATA, pos >> 8);
	outb(VGA_CRTC_INDEX, VGA_CRTC_CURSOR_LOW);
	outb(VGA_CRTC_DATA, pos & 0xff);
}

void vga_write(const char *s, size_t n)
{
	if (!buf)
		return;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		unsigned count = 0;

		switch (term_esc_feed(&esc, (uint8_t)c, &count)) {
		case TERM_LEFT:
			col = count > col ? 0 : col - count;
			continue;
		case TERM_RIGHT:
			col = MIN(col + count, cols - 1);
			continue;
		case TERM_ERASE_EOL:
			for (unsigned x = col; x < cols; x++)
				buf[row * cols + x] = cell(' ');
			continue;
		case TERM_SWALLOW:
			continue;
		case TERM_PRINT:
			break;
		}
		if (c == '\n') {
			newline();
		} else if (c == '\r') {
			col = 0;
		} else if (c == '\t') {
			do
				buf[row * cols + col++] = cell(' ');
			while (col % VGA_TAB_WIDTH && col < cols);
			if (col >= cols)
				newline();
		} else {
			buf[row * cols + col++] = cell(c);
			if (col == cols)
				newline();
		}
	}
	move_cursor();
}
