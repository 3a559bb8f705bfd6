/*
 * In-kernel tests of the framebuffer console (kernel/fbcon.c): text is
 * rendered with the embedded console font into small fake framebuffers
 * of 32, 24 and 16 bits per pixel, and the pixels are checked against
 * the font's bitmaps and against colour values worked out by hand.
 * Guard bytes around each buffer and in the pitch padding must survive.
 */
#include "kernel/fbcon.h"
#include "kernel/psf.h"
#include "lib/ktest.h"
#include "lib/string.h"

#define GUARD_BYTES 64
#define GUARD_FILL 0x5a
#define FAKE_MAX_BYTES (272 * 128) /* largest pitch x height used here */
#define PAD_BYTES 16 /* pitch beyond the visible line */

/* Light grey (0xaa per channel) in each layout, worked out by hand. */
#define GREY_XRGB8888 0x00aaaaaau
#define GREY_RGB565 0xad55u /* r 0x15 << 11 | g 0x2a << 5 | b 0x15 */

static uint8_t fake_mem[GUARD_BYTES + FAKE_MAX_BYTES + GUARD_BYTES];
static uint8_t *const fake = fake_mem + GUARD_BYTES;
static struct fbcon con;
static uint16_t cells[256];
static struct boot_framebuffer fbinfo;

/* An RGB framebuffer of w x h pixels at bpp, little-endian channels. */
static void make_fb(unsigned bpp, unsigned w, unsigned h)
{
	fbinfo = (struct boot_framebuffer){0};
	fbinfo.present = true;
	fbinfo.type = MB2_FB_TYPE_RGB;
	fbinfo.width = w;
	fbinfo.height = h;
	fbinfo.bpp = (uint8_t)bpp;
	fbinfo.pitch = w * bpp / 8 + PAD_BYTES;
	if (bpp == 16) {
		fbinfo.red_pos = 11;
		fbinfo.red_size = 5;
		fbinfo.green_pos = 5;
		fbinfo.green_size = 6;
		fbinfo.blue_pos = 0;
		fbinfo.blue_size = 5;
	} else {
		fbinfo.red_pos = 16;
		fbinfo.red_size = 8;
		fbinfo.green_pos = 8;
		fbinfo.green_size = 8;
		fbinfo.blue_pos = 0;
		fbinfo.blue_size = 8;
	}
	memset(fake_mem, GUARD_FILL, sizeof(fake_mem));
}

static size_t font_len(void)
{
	return (size_t)(font_psf_end - font_psf_start);
}

static bool start(unsigned bpp, unsigned w, unsigned h)
{
	make_fb(bpp, w, h);
	if (fbinfo.pitch * h > FAKE_MAX_BYTES)
		return false;
	return fbcon_setup(&con, fake, &fbinfo, font_psf_start, font_len(),
			   cells, ARRAY_SIZE(cells));
}

static void put(const char *s)
{
	fbcon_put(&con, s, strlen(s));
}

static uint32_t pixel(unsigned x, unsigned y)
{
	const uint8_t *p = fake + y * fbinfo.pitch + x * (fbinfo.bpp / 8);

	switch (fbinfo.bpp) {
	case 32:
		return (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		       (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	case 24:
		return (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		       (uint32_t)p[2] << 16;
	default:
		return (uint32_t)p[0] | (uint32_t)p[1] << 8;
	}
}

/*
 * Number of pixels of text cell (col, row) that differ from the font's
 * glyph for cp drawn in fg on black; *lit counts the glyph's set pixels.
 */
static unsigned cell_mismatches(unsigned col, unsigned row, uint32_t cp,
				uint32_t fg, unsigned *lit)
{
	const struct psf_font *f = &con.font;
	const uint8_t *bits = psf_glyph(f, cp);
	unsigned bad = 0;

	*lit = 0;
	for (unsigned y = 0; y < f->height; y++) {
		const uint8_t *line = bits + y * f->stride;

		for (unsigned x = 0; x < f->width; x++) {
			/* Leftmost pixel in the most significant bit. */
			bool on = line[x / 8] & (0x80 >> (x % 8));
			uint32_t want = on ? fg : 0;
			unsigned px = col * f->width + x;

			*lit += on;
			if (pixel(px, row * f->height + y) != want)
				bad++;
		}
	}
	return bad;
}

#define EXPECT_CELL(col, row, cp, fg)                                       \
	do {                                                                \
		unsigned lit_;                                              \
		EXPECT_EQ(cell_mismatches(col, row, cp, fg, &lit_), 0);     \
		if ((cp) != ' ')                                            \
			EXPECT_GT(lit_, 0);                                 \
	} while (0)

static bool guards_intact(void)
{
	for (unsigned i = 0; i < GUARD_BYTES; i++)
		if (fake_mem[i] != GUARD_FILL ||
		    fake[fbinfo.pitch * fbinfo.height + i] != GUARD_FILL)
			return false;
	/* The pitch padding after each line is not the console's. */
	for (unsigned y = 0; y < fbinfo.height; y++)
		for (unsigned i = fbinfo.width * fbinfo.bpp / 8;
		     i < fbinfo.pitch; i++)
			if (fake[y * fbinfo.pitch + i] != GUARD_FILL)
				return false;
	return true;
}

/* Every pixel outside the first n cells of row 0 is black. */
static unsigned lit_outside_first_cells(unsigned n)
{
	unsigned lit = 0;

	for (unsigned y = 0; y < fbinfo.height; y++)
		for (unsigned x = 0; x < fbinfo.width; x++)
			if ((y >= con.font.height || x >= n * con.font.width) &&
			    pixel(x, y) != 0)
				lit++;
	return lit;
}

static void glyph_test(struct ktest_ctx *ctx, unsigned bpp, uint32_t grey)
{
	ASSERT_TRUE(start(bpp, 64, 32));
	EXPECT_EQ(con.cols, 8);
	EXPECT_EQ(con.rows, 2);
	EXPECT_EQ(con.fg, grey);
	put("xA");
	EXPECT_CELL(0, 0, 'x', grey);
	EXPECT_CELL(1, 0, 'A', grey);
	EXPECT_EQ(lit_outside_first_cells(2), 0);
	EXPECT_TRUE(guards_intact());
}

KTEST(fbcon, glyph_pixels_32bpp)
{
	glyph_test(ctx, 32, GREY_XRGB8888);
	/* The 'A' of Terminus has its crossbar lit somewhere mid-cell. */
	{
		unsigned grey = 0;

		for (unsigned y = 0; y < 16; y++)
			for (unsigned x = 8; x < 16; x++)
				grey += pixel(x, y) == GREY_XRGB8888;
		EXPECT_GT(grey, 10);
	}
}

KTEST(fbcon, glyph_pixels_24bpp)
{
	glyph_test(ctx, 24, GREY_XRGB8888);
}

KTEST(fbcon, glyph_pixels_16bpp)
{
	glyph_test(ctx, 16, GREY_RGB565);
}

KTEST(fbcon, newline_return_tab_wrap)
{
	ASSERT_TRUE(start(32, 128, 64)); /* 16 x 4 cells */
	put("A\nB");
	EXPECT_CELL(0, 0, 'A', GREY_XRGB8888);
	EXPECT_CELL(0, 1, 'B', GREY_XRGB8888); /* one glyph height down */
	put("\rC");
	EXPECT_CELL(0, 1, 'C', GREY_XRGB8888);
	put("\tT");
	EXPECT_CELL(8, 1, 'T', GREY_XRGB8888);
	EXPECT_CELL(1, 1, ' ', GREY_XRGB8888);
	put("\n0123456789abcdefW");
	EXPECT_CELL(15, 2, 'f', GREY_XRGB8888);
	EXPECT_CELL(0, 3, 'W', GREY_XRGB8888); /* wrapped */
	EXPECT_TRUE(guards_intact());
}

KTEST(fbcon, utf8)
{
	ASSERT_TRUE(start(32, 64, 32));
	ASSERT_NE(psf_lookup(&con.font, 0xe9), PSF_NO_GLYPH);
	put("\xc3\xa9");
	EXPECT_CELL(0, 0, 0xe9, GREY_XRGB8888);
	EXPECT_EQ(con.col, 1);
	put("\xff"); /* never valid in UTF-8 */
	EXPECT_CELL(1, 0, PSF_REPLACEMENT, GREY_XRGB8888);
	put("\xc3Z"); /* lead byte without its continuation */
	EXPECT_CELL(2, 0, PSF_REPLACEMENT, GREY_XRGB8888);
	EXPECT_CELL(3, 0, 'Z', GREY_XRGB8888);
}

/* After rows lines, row r shows line r + k and the last k rows are blank. */
static void scroll_test(struct ktest_ctx *ctx, unsigned h)
{
	char line[3] = {0, '\n', 0};
	unsigned k;

	ASSERT_TRUE(start(32, 64, h));
	k = con.scroll_lines;
	ASSERT_TRUE(k >= 1 && k < con.rows);
	for (unsigned i = 0; i < con.rows; i++) {
		line[0] = (char)('0' + i);
		put(line);
	}
	for (unsigned r = 0; r < con.rows - k; r++)
		EXPECT_CELL(0, r, '0' + r + k, GREY_XRGB8888);
	for (unsigned r = con.rows - k; r < con.rows; r++)
		EXPECT_CELL(0, r, ' ', GREY_XRGB8888);
	put("X");
	EXPECT_CELL(0, con.rows - k, 'X', GREY_XRGB8888);
	EXPECT_TRUE(guards_intact());
}

KTEST(fbcon, scroll_moves_text_up)
{
	scroll_test(ctx, 48); /* 3 rows: one line at a time */
	scroll_test(ctx, 128); /* 8 rows: two lines at a time */
}

static void flood(struct ktest_ctx *ctx, unsigned bpp)
{
	ASSERT_TRUE(start(bpp, 72, 56)); /* partial cells at the edges */
	for (unsigned i = 0; i < 40; i++)
		put("a long line that wraps several times\tx\t\ty\r\n"
		    "\xe2\x98\xba \xc3\xa9\xff\xfe\x80 tail\n\n");
	EXPECT_TRUE(guards_intact());
	/* The strip right of and below the text cells stays black. */
	for (unsigned y = 0; y < fbinfo.height; y++)
		for (unsigned x = con.cols * 8; x < fbinfo.width; x++)
			EXPECT_EQ(pixel(x, y), 0);
	for (unsigned y = con.rows * 16; y < fbinfo.height; y++)
		for (unsigned x = 0; x < fbinfo.width; x++)
			EXPECT_EQ(pixel(x, y), 0);
}

KTEST(fbcon, stays_inside_the_buffer)
{
	flood(ctx, 32);
	flood(ctx, 24);
	flood(ctx, 16);
}

KTEST(fbcon, rejects_bad_layouts)
{
	make_fb(8, 64, 32);
	EXPECT_FALSE(fbcon_setup(&con, fake, &fbinfo, font_psf_start,
				 font_len(), cells, ARRAY_SIZE(cells)));
	EXPECT_TRUE(con.error != NULL);
	make_fb(32, 64, 32);
	fbinfo.red_pos = 28; /* 28 + 8 > 32 */
	EXPECT_FALSE(fbcon_setup(&con, fake, &fbinfo, font_psf_start,
				 font_len(), cells, ARRAY_SIZE(cells)));
	make_fb(32, 64, 32);
	fbinfo.pitch = 64 * 4 - 1;
	EXPECT_FALSE(fbcon_setup(&con, fake, &fbinfo, font_psf_start,
				 font_len(), cells, ARRAY_SIZE(cells)));
	make_fb(32, 64, 32);
	fbinfo.type = MB2_FB_TYPE_EGA_TEXT;
	EXPECT_FALSE(fbcon_setup(&con, fake, &fbinfo, font_psf_start,
				 font_len(), cells, ARRAY_SIZE(cells)));
	make_fb(32, 4, 4); /* smaller than one glyph */
	EXPECT_FALSE(fbcon_setup(&con, fake, &fbinfo, font_psf_start,
				 font_len(), cells, ARRAY_SIZE(cells)));
	make_fb(32, 64, 32);
	EXPECT_FALSE(fbcon_setup(&con, fake, &fbinfo, font_psf_start,
				 font_len() - 1, cells, ARRAY_SIZE(cells)));
	EXPECT_FALSE(fbcon_setup(&con, fake, &fbinfo, font_psf_start,
				 font_len(), cells, 4)); /* 8 columns */
	/* A console that failed to set up writes nothing at all. */
	put("ignored");
	EXPECT_EQ(fake[0], GUARD_FILL);
	EXPECT_TRUE(guards_intact());
}

KTEST(fbcon, small_cell_buffer_limits_rows)
{
	/* 8 x 4 cells of screen, room for 8 x 2: the bottom stays unused. */
	make_fb(32, 64, 64);
	ASSERT_TRUE(fbcon_setup(&con, fake, &fbinfo, font_psf_start,
				font_len(), cells, 16));
	EXPECT_EQ(con.rows, 2);
	put("1\n2\n3\n4\n5\n6");
	for (unsigned y = 32; y < 64; y++)
		for (unsigned x = 0; x < 64; x++)
			EXPECT_EQ(pixel(x, y), 0);
	EXPECT_CELL(0, 1, '6', GREY_XRGB8888);
	EXPECT_TRUE(guards_intact());
}

/* The line editor's sequences: \b and ESC [ n D move left, ESC [ n C
 * right, ESC [ K erases to the end of the row; other sequences vanish. */
KTEST(fbcon, cursor_moves_and_erase)
{
	ASSERT_TRUE(start(32, 128, 64)); /* 16 x 4 cells */
	put("abcd\b\b\x1b[K");
	EXPECT_CELL(0, 0, 'a', GREY_XRGB8888);
	EXPECT_CELL(1, 0, 'b', GREY_XRGB8888);
	EXPECT_CELL(2, 0, ' ', GREY_XRGB8888);
	EXPECT_CELL(3, 0, ' ', GREY_XRGB8888);
	put("\x1b[2DX\x1b[3CY\x1b[2J");
	EXPECT_CELL(0, 0, 'X', GREY_XRGB8888);
	EXPECT_CELL(4, 0, 'Y', GREY_XRGB8888);
	EXPECT_EQ(con.col, 5);
	put("\x1b[99D");
	EXPECT_EQ(con.col, 0);
	put("\x1b[99C");
	EXPECT_EQ(con.col, 15);
	EXPECT_TRUE(guards_intact());
}

/* The cursor is the current cell inverted: glyph pixels dark, the rest
 * grey; hiding it restores the cell. */
KTEST(fbcon, cursor_is_an_inverted_cell)
{
	unsigned lit;

	ASSERT_TRUE(start(32, 128, 64));
	put("A\b");
	fbcon_set_cursor(&con, true);
	/* Inverted 'A': every pixel differs from 'A' drawn normally. */
	EXPECT_EQ(cell_mismatches(0, 0, 'A', GREY_XRGB8888, &lit),
		  con.font.width * con.font.height);
	put("\x1b[1C");
	EXPECT_CELL(0, 0, 'A', GREY_XRGB8888);
	EXPECT_EQ(pixel(con.font.width, 0), GREY_XRGB8888);
	fbcon_set_cursor(&con, false);
	EXPECT_CELL(1, 0, ' ', GREY_XRGB8888);
	EXPECT_TRUE(guards_intact());
}
