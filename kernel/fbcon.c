/*
 * Framebuffer text console: glyphs of a PSF font drawn into a linear RGB
 * framebuffer of 16, 24 or 32 bits per pixel, channel layout from the
 * multiboot2 framebuffer tag (spec section 3.6.12).
 *
 * Speed matters under QEMU's TCG, where every pixel store is emulated:
 *  - the screen is shadowed by a grid of glyph indexes, so a scroll
 *    redraws only the cells whose glyph changes (blank stays blank) and
 *    never reads the framebuffer back (reads of write-combined memory
 *    are very slow on real hardware);
 *  - reaching the bottom scrolls by a quarter of the screen at once, so
 *    the redraw is paid once every few lines rather than on every line.
 */
#include "kernel/fbcon.h"
#include "lib/assert.h"
#include "lib/compiler.h"
#include "lib/kprintf.h"

#define FBCON_TAB_WIDTH 8
/* Scroll by rows / FBCON_SCROLL_DIVISOR lines (at least one). */
#define FBCON_SCROLL_DIVISOR 4

/* Light grey on black, as VGA attribute 0x07, in 8-bit intensities. */
#define FBCON_FG_LEVEL 0xaa
#define FBCON_BG_LEVEL 0x00
#define FBCON_LEVEL_MAX 0xff

#define FBCON_MAX_CHANNEL_BITS 16
#define BITS_PER_BYTE 8
#define BPP_16 16
#define BPP_24 24
#define BPP_32 32
/* Glyph rows are loaded into a 32-bit word, leftmost pixel in the MSB. */
#define GLYPH_ROW_MSB 0x80000000u

/* UTF-8 lead bytes and the payload bits they carry. */
#define UTF8_CONT_MASK 0xc0
#define UTF8_CONT 0x80
#define UTF8_CONT_BITS 6
#define UTF8_CONT_PAYLOAD 0x3f
#define UTF8_2_MASK 0xe0
#define UTF8_2 0xc0
#define UTF8_3_MASK 0xf0
#define UTF8_3 0xe0
#define UTF8_4_MASK 0xf8
#define UTF8_4 0xf0
#define UTF8_ASCII_END 0x80

static struct fbcon fbcon_default;
static uint16_t fbcon_default_cells[FBCON_MAX_CELLS];

static bool fail(struct fbcon *c, const char *reason)
{
	c->ready = false;
	c->error = reason;
	return false;
}

/* level (0..255) scaled to a size-bit channel at bit pos, rounded. */
static uint32_t channel(unsigned level, unsigned pos, unsigned size)
{
	uint32_t max = (1u << size) - 1;

	return ((level * max + FBCON_LEVEL_MAX / 2) / FBCON_LEVEL_MAX) << pos;
}

static uint32_t colour(const struct boot_framebuffer *fb, unsigned level)
{
	return channel(level, fb->red_pos, fb->red_size) |
	       channel(level, fb->green_pos, fb->green_size) |
	       channel(level, fb->blue_pos, fb->blue_size);
}

static bool channel_ok(unsigned pos, unsigned size, unsigned bpp)
{
	return size >= 1 && size <= FBCON_MAX_CHANNEL_BITS && pos + size <= bpp;
}

/* Store one pixel value; the framebuffer is little-endian. */
static inline void put_pixel(uint8_t *p, unsigned bytes_pp, uint32_t v)
{
	switch (bytes_pp) {
	case 4:
		*(uint32_t *)p = v;
		break;
	case 3:
		p[0] = (uint8_t)v;
		p[1] = (uint8_t)(v >> 8);
		p[2] = (uint8_t)(v >> 16);
		break;
	default:
		*(uint16_t *)p = (uint16_t)v;
		break;
	}
}

/*
 * Draw glyph index g into text cell (col, row). One loop per pixel size
 * keeps the per-pixel switch out of the inner loop.
 */
static void draw_cell(struct fbcon *c, unsigned col, unsigned row, unsigned g)
{
	const struct psf_font *f = &c->font;
	const uint8_t *bits = psf_glyph_bits(f, g);
	uint8_t *line = c->fb + (size_t)row * f->height * c->pitch +
			(size_t)col * f->width * c->bytes_pp;

	for (unsigned y = 0; y < f->height; y++, line += c->pitch) {
		uint32_t word = 0;

		for (unsigned i = 0; i < f->stride; i++)
			word |= (uint32_t)bits[i]
				<< (BPP_32 - BITS_PER_BYTE * (i + 1));
		bits += f->stride;
		if (c->bytes_pp == 4) {
			uint32_t *p = (uint32_t *)line;

			for (unsigned x = 0; x < f->width; x++, word <<= 1)
				p[x] = word & GLYPH_ROW_MSB ? c->fg : c->bg;
		} else {
			uint8_t *p = line;

			for (unsigned x = 0; x < f->width;
			     x++, word <<= 1, p += c->bytes_pp)
				put_pixel(p, c->bytes_pp,
					  word & GLYPH_ROW_MSB ? c->fg : c->bg);
		}
	}
}

static void set_cell(struct fbcon *c, unsigned col, unsigned row, uint16_t g)
{
	uint16_t *cell = &c->cells[row * c->cols + col];

	if (*cell != g) {
		*cell = g;
		draw_cell(c, col, row, g);
	}
}

/*
 * Move the text up by scroll_lines. Top-down in place: row r takes row
 * r + k, which has not been overwritten yet; cells that already show
 * the right glyph are not redrawn.
 */
static void scroll(struct fbcon *c)
{
	unsigned k = c->scroll_lines;

	for (unsigned r = 0; r < c->rows; r++) {
		const uint16_t *from = NULL; /* NULL: the row becomes blank */

		if (r + k < c->rows)
			from = &c->cells[(r + k) * c->cols];
		for (unsigned x = 0; x < c->cols; x++)
			set_cell(c, x, r, from ? from[x] : c->blank);
	}
	c->row = c->rows - k;
}

static void newline(struct fbcon *c)
{
	c->col = 0;
	if (++c->row == c->rows)
		scroll(c);
}

static void put_glyph(struct fbcon *c, uint16_t g)
{
	set_cell(c, c->col, c->row, g);
	if (++c->col == c->cols)
		newline(c);
}

static void put_codepoint(struct fbcon *c, uint32_t cp)
{
	switch (cp) {
	case '\n':
		newline(c);
		break;
	case '\r':
		c->col = 0;
		break;
	case '\t':
		do
			set_cell(c, c->col++, c->row, c->blank);
		while (c->col % FBCON_TAB_WIDTH && c->col < c->cols);
		if (c->col >= c->cols)
			newline(c);
		break;
	default:
		put_glyph(c, (uint16_t)psf_glyph_index(&c->font, cp));
		break;
	}
}

/*
 * Feed one byte to the UTF-8 decoder; complete characters are printed.
 * A malformed sequence prints the font's replacement glyph.
 */
static void put_byte(struct fbcon *c, uint8_t b)
{
	if (c->utf8_left) {
		if ((b & UTF8_CONT_MASK) == UTF8_CONT) {
			c->utf8_cp = c->utf8_cp << UTF8_CONT_BITS |
				     (b & UTF8_CONT_PAYLOAD);
			if (--c->utf8_left == 0)
				put_codepoint(c, c->utf8_cp);
			return;
		}
		c->utf8_left = 0;
		put_glyph(c, (uint16_t)c->font.fallback);
	}
	if (b < UTF8_ASCII_END) {
		put_codepoint(c, b);
	} else if ((b & UTF8_2_MASK) == UTF8_2) {
		c->utf8_cp = b & ~UTF8_2_MASK;
		c->utf8_left = 1;
	} else if ((b & UTF8_3_MASK) == UTF8_3) {
		c->utf8_cp = b & ~UTF8_3_MASK;
		c->utf8_left = 2;
	} else if ((b & UTF8_4_MASK) == UTF8_4) {
		c->utf8_cp = b & ~UTF8_4_MASK;
		c->utf8_left = 3;
	} else {
		put_glyph(c, (uint16_t)c->font.fallback);
	}
}

/* The cursor is the cell at (col, row) drawn in inverted colours; the
 * shadow keeps the glyph, so hiding it is drawing the cell again. */
static void cursor_draw(struct fbcon *c, bool show)
{
	uint32_t fg = c->fg;

	if (!c->cursor || c->col >= c->cols || c->row >= c->rows)
		return;
	if (show) {
		c->fg = c->bg;
		c->bg = fg;
	}
	draw_cell(c, c->col, c->row, c->cells[c->row * c->cols + c->col]);
	if (show) {
		c->bg = c->fg;
		c->fg = fg;
	}
}

static void erase_eol(struct fbcon *c)
{
	for (unsigned x = c->col; x < c->cols; x++)
		set_cell(c, x, c->row, c->blank);
}

void fbcon_put(struct fbcon *c, const char *s, size_t n)
{
	if (!c->ready)
		return;
	cursor_draw(c, false);
	for (size_t i = 0; i < n; i++) {
		unsigned count = 0;

		switch (term_esc_feed(&c->esc, (uint8_t)s[i], &count)) {
		case TERM_LEFT:
			c->col = count > c->col ? 0 : c->col - count;
			break;
		case TERM_RIGHT:
			c->col = MIN(c->col + count, c->cols - 1);
			break;
		case TERM_ERASE_EOL:
			erase_eol(c);
			break;
		case TERM_SWALLOW:
			break;
		case TERM_PRINT:
			put_byte(c, (uint8_t)s[i]);
			break;
		}
	}
	cursor_draw(c, true);
}

/* Paint every visible pixel (not the pitch padding) in the background. */
static void clear_screen(struct fbcon *c)
{
	uint8_t *line = c->fb;

	for (uint32_t y = 0; y < c->height; y++, line += c->pitch)
		for (uint32_t x = 0; x < c->width; x++)
			put_pixel(line + x * c->bytes_pp, c->bytes_pp, c->bg);
	for (unsigned i = 0; i < c->cols * c->rows; i++)
		c->cells[i] = c->blank;
}

bool fbcon_setup(struct fbcon *c, void *fb_virt,
		 const struct boot_framebuffer *fb, const uint8_t *font,
		 size_t font_len, uint16_t *cells, size_t ncells)
{
	const char *why;

	*c = (struct fbcon){0};
	if (!fb_virt || !fb || !fb->present)
		return fail(c, "no framebuffer");
	if (fb->type != MB2_FB_TYPE_RGB)
		return fail(c, "framebuffer is not RGB");
	if (fb->bpp != BPP_16 && fb->bpp != BPP_24 && fb->bpp != BPP_32)
		return fail(c, "unsupported bits per pixel");
	if (!channel_ok(fb->red_pos, fb->red_size, fb->bpp) ||
	    !channel_ok(fb->green_pos, fb->green_size, fb->bpp) ||
	    !channel_ok(fb->blue_pos, fb->blue_size, fb->bpp))
		return fail(c, "bad colour channel layout");
	c->bytes_pp = fb->bpp / BITS_PER_BYTE;
	if ((uint64_t)fb->width * c->bytes_pp > fb->pitch)
		return fail(c, "pitch shorter than a line");
	if (!psf_parse(&c->font, font, font_len, &why))
		return fail(c, why);
	/* Cells hold glyph indexes in 16 bits. */
	BUILD_ASSERT(PSF_MAX_GLYPHS <= UINT16_MAX + 1);
	c->cols = fb->width / c->font.width;
	c->rows = fb->height / c->font.height;
	if (c->cols == 0 || c->rows == 0)
		return fail(c, "framebuffer smaller than one character");
	if (!cells || ncells < c->cols)
		return fail(c, "no room for the text cells");
	/* A screen larger than the shadow uses only its top part. */
	if ((size_t)c->cols * c->rows > ncells)
		c->rows = (unsigned)(ncells / c->cols);

	c->fb = fb_virt;
	c->pitch = fb->pitch;
	c->width = fb->width;
	c->height = fb->height;
	c->fg = colour(fb, FBCON_FG_LEVEL);
	c->bg = colour(fb, FBCON_BG_LEVEL);
	c->cells = cells;
	c->blank = (uint16_t)psf_glyph_index(&c->font, ' ');
	c->scroll_lines = MAX(c->rows / FBCON_SCROLL_DIVISOR, 1u);
	kassert(c->scroll_lines <= c->rows);
	clear_screen(c);
	c->ready = true;
	return true;
}

bool fbcon_init(void *fb_virt, const struct boot_framebuffer *fb,
		const uint8_t *font, size_t font_len)
{
	if (fbcon_setup(&fbcon_default, fb_virt, fb, font, font_len,
			fbcon_default_cells, FBCON_MAX_CELLS))
		return true;
	kprintf("fbcon: framebuffer console disabled: %s\n",
		fbcon_default.error);
	return false;
}

void fbcon_set_cursor(struct fbcon *c, bool on)
{
	if (!c->ready || c->cursor == on)
		return;
	if (on) {
		c->cursor = true;
		cursor_draw(c, true);
	} else {
		cursor_draw(c, false);
		c->cursor = false;
	}
}

void fbcon_show_cursor(bool on)
{
	fbcon_set_cursor(&fbcon_default, on);
}

void fbcon_write(const char *s, size_t n)
{
	fbcon_put(&fbcon_default, s, n);
}
