/*
 * Screen consoles' interpreter for the line editor's control sequences
 * (see lib/term_esc.h for the list).
 */
#include "lib/term_esc.h"

enum { ST_TEXT, ST_ESC, ST_CSI };

/* A CSI sequence ends with a byte in 0x40..0x7e (ECMA-48 5.4). */
#define CSI_FINAL_FIRST 0x40
#define CSI_FINAL_LAST 0x7e

enum term_action term_esc_feed(struct term_esc *t, uint8_t b, unsigned *count)
{
	switch (t->state) {
	case ST_TEXT:
		if (b == TERM_ESC) {
			t->state = ST_ESC;
			return TERM_SWALLOW;
		}
		if (b == '\b') {
			*count = 1;
			return TERM_LEFT;
		}
		return TERM_PRINT;
	case ST_ESC:
		if (b == TERM_CSI) {
			t->state = ST_CSI;
			t->count = 0;
			t->have_count = 0;
			return TERM_SWALLOW;
		}
		/* A two-byte sequence (ESC 7, ESC c, ...): ignored. */
		t->state = ST_TEXT;
		return TERM_SWALLOW;
	default:
		if (b >= '0' && b <= '9') {
			t->count = t->count * 10 + (b - '0');
			if (t->count > TERM_ESC_MAX_COUNT)
				t->count = TERM_ESC_MAX_COUNT;
			t->have_count = 1;
			return TERM_SWALLOW;
		}
		if (b < CSI_FINAL_FIRST || b > CSI_FINAL_LAST)
			return TERM_SWALLOW; /* ';', '?', intermediates */
		t->state = ST_TEXT;
		*count = t->have_count && t->count ? t->count : 1;
		if (b == 'D')
			return TERM_LEFT;
		if (b == 'C')
			return TERM_RIGHT;
		if (b == 'K' && (!t->have_count || t->count == 0))
			return TERM_ERASE_EOL;
		return TERM_SWALLOW;
	}
}
