/*
 * The few terminal control sequences the shell's line editor sends, as
 * the screen consoles (VGA text, framebuffer) interpret them. Serial
 * terminals understand them natively (they are ECMA-48 / VT100):
 *
 *   \b        cursor one cell left (no erase)
 *   ESC [ n D cursor n cells left      ESC [ n C   cursor n cells right
 *   ESC [ K   erase from the cursor to the end of the line
 *
 * Any other ESC sequence is swallowed whole so it never shows as junk.
 * Portable: a byte-at-a-time state machine, host-tested.
 */
#ifndef LIB_TERM_ESC_H
#define LIB_TERM_ESC_H

#include <stdint.h>

#define TERM_ESC 0x1b
#define TERM_CSI '['
/* The largest count a sequence may carry; bigger ones are clamped. */
#define TERM_ESC_MAX_COUNT 9999

enum term_action {
	TERM_PRINT, /* an ordinary byte: print it */
	TERM_SWALLOW, /* part of a sequence: print nothing */
	TERM_LEFT, /* move left by count (stops at column 0) */
	TERM_RIGHT, /* move right by count (stops at the last column) */
	TERM_ERASE_EOL, /* blank from the cursor to the end of the line */
};

struct term_esc {
	uint8_t state; /* 0: text, 1: after ESC, 2: in ESC [ ... */
	unsigned count; /* the numeric parameter being read */
	uint8_t have_count;
};

/* Feed one byte. Returns what to do; *count is set for LEFT/RIGHT (at
 * least 1). A byte that starts no sequence comes back as TERM_PRINT. */
enum term_action term_esc_feed(struct term_esc *t, uint8_t byte,
			       unsigned *count);

#endif
