/*
 * The shell's line editor, portable (host-tested): keys in, a finished
 * line out, and the echo written through a callback as plain text plus
 * the control sequences of lib/term_esc.h (which every console obeys).
 *
 *   printable   insert at the cursor       Backspace / Delete  erase
 *   Left/Right  move the cursor            Home / End          jump
 *   Up/Down     walk the history           Ctrl-U  erase the line
 *   Ctrl-C      drop the line              Enter   accept it
 *
 * Lines hold at most LINE_EDIT_MAX characters so that prompt and line
 * fit on one 80-column screen row (the editor never wraps). A printable
 * key typed into a full line is dropped and counted in `dropped`; the
 * first one of a line prints a notice on a row of its own and redraws
 * the prompt and line below it, so the cut is never silent. The caller
 * must not run a line that Enter completed with `dropped` non-zero (a
 * pasted line would run cut short): the shell says so instead. Editing
 * the line after the notice (erasing, Ctrl-U, history) clears the count.
 *
 * The serial decoder turns what a terminal sends (VT100 arrows
 * ESC [ A..D, ESC O A..D, ESC [ 3 ~, DEL or BS, CR or LF) into keys.
 * A lone Esc is no key: the byte after it is decoded as usual unless it
 * is '[' or 'O', which continue a sequence as a terminal's keys do. The
 * two are told apart by time only: a terminal sends a key's sequence in
 * one burst, so the caller calls term_input_idle() when the line has been
 * quiet for TERM_INPUT_IDLE_MS, and a pending Esc ends there.
 */
#ifndef KERNEL_LINE_EDIT_H
#define KERNEL_LINE_EDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LINE_EDIT_MAX 70
#define LINE_EDIT_HISTORY 16

struct line_edit {
	void (*out)(const char *s, size_t n); /* the echo */
	const char *prompt;
	char buf[LINE_EDIT_MAX + 1];
	unsigned len, cur; /* characters, cursor position (0..len) */
	/* History ring: hist[(hist_next - 1) % N] is the newest line. */
	char hist[LINE_EDIT_HISTORY][LINE_EDIT_MAX + 1];
	unsigned hist_next, hist_count;
	unsigned hist_back; /* 0: editing a new line; k: k lines back */
	char draft[LINE_EDIT_MAX + 1]; /* the new line while browsing */
	unsigned dropped; /* printable keys refused by the full line */
};

/* Set up le (history empty) with its echo function. */
void line_edit_init(struct line_edit *le, void (*out)(const char *, size_t));
/* Start a new line: print prompt, empty buffer. */
void line_edit_start(struct line_edit *le, const char *prompt);
/*
 * Feed one key (lib/keys.h). Returns true when Enter completed a line:
 * le->buf holds it (NUL-terminated), non-empty lines are added to the
 * history, and le->dropped says how many printable keys the full line
 * refused (then the line is not what was typed: do not run it). Keys
 * that do not apply (Left at column 0) ring no bell and change nothing;
 * a key refused by a full line is counted, and the first one of a line
 * prints the notice described above.
 */
bool line_edit_key(struct line_edit *le, int key);

/* Decoder of a terminal's input bytes. */
struct term_input {
	uint8_t state;
	unsigned param;
	uint8_t last_cr; /* the previous byte was CR: a following LF is eaten */
};

/* Quiet time after which a pending Esc is a lone Esc (term_input_idle). */
#define TERM_INPUT_IDLE_MS 50

/* Feed one received byte; returns a key or KEY_NONE (inside a sequence). */
int term_input_feed(struct term_input *t, uint8_t byte);
/* True while a sequence is open (an Esc waits for what follows). */
bool term_input_pending(const struct term_input *t);
/* No byte came for TERM_INPUT_IDLE_MS: end an open sequence (a lone Esc
 * or a cut one gives no key), so the next byte is decoded afresh. */
void term_input_idle(struct term_input *t);

#endif
