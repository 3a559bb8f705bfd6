/*
 * Line editing for the shell (see kernel/shell/line_edit.h).
 *
 * Invariants:
 *   1. 0 <= cur <= len <= LINE_EDIT_MAX and buf[len] == '\0'.
 *   2. buf holds printable ASCII only (the keys that insert).
 *   3. On the screen, the prompt then buf[0..len) occupy one row and the
 *      terminal's cursor stands at prompt + cur after every key.
 *   4. hist_count <= LINE_EDIT_HISTORY, hist_back <= hist_count.
 *   5. dropped > 0 only if a printable key met a full line since the line
 *      started or was last edited, and then the notice has been printed.
 */
#include "kernel/shell/line_edit.h"
#include "lib/assert.h"
#include "lib/keys.h"
#include "lib/kprintf.h"
#include "lib/string.h"
#include "lib/term_esc.h"

#define ASCII_BS 0x08
#define ASCII_DEL 0x7f
#define ASCII_CTRL_C 0x03
#define ASCII_CTRL_U 0x15
#define ASCII_CTRL_A 0x01
#define ASCII_CTRL_E 0x05
#define SEQ_MAX 16 /* the longest control sequence we send */
#define LINE_EDIT_NOTICE_MAX 80 /* the full-line notice, one row */

static void out_str(struct line_edit *le, const char *s)
{
	le->out(s, strlen(s));
}

static void cursor_left(struct line_edit *le, unsigned n)
{
	char seq[SEQ_MAX];

	if (n == 0)
		return;
	ksnprintf(seq, sizeof(seq), "\x1b[%uD", n);
	out_str(le, seq);
}

static void cursor_right(struct line_edit *le, unsigned n)
{
	char seq[SEQ_MAX];

	if (n == 0)
		return;
	ksnprintf(seq, sizeof(seq), "\x1b[%uC", n);
	out_str(le, seq);
}

/* Redraw from the cursor to the end, erase what was beyond, and put the
 * cursor back (invariant 3). */
static void redraw_tail(struct line_edit *le)
{
	le->out(le->buf + le->cur, le->len - le->cur);
	out_str(le, "\x1b[K");
	cursor_left(le, le->len - le->cur);
}

/* Replace the whole line with s (history, Ctrl-U); cursor at its end.
 * An edit: the count of dropped keys starts again (invariant 5). */
static void replace_line(struct line_edit *le, const char *s)
{
	le->dropped = 0;
	cursor_left(le, le->cur);
	strlcpy(le->buf, s, sizeof(le->buf));
	le->len = le->cur = (unsigned)strlen(le->buf);
	le->out(le->buf, le->len);
	out_str(le, "\x1b[K");
}

void line_edit_init(struct line_edit *le, void (*out)(const char *, size_t))
{
	memset(le, 0, sizeof(*le));
	le->out = out;
}

void line_edit_start(struct line_edit *le, const char *prompt)
{
	le->prompt = prompt;
	le->len = le->cur = 0;
	le->buf[0] = '\0';
	le->hist_back = 0;
	le->dropped = 0;
	out_str(le, prompt);
}

static const char *hist_line(struct line_edit *le, unsigned back)
{
	kassert(back >= 1 && back <= le->hist_count);
	return le->hist[(le->hist_next + LINE_EDIT_HISTORY - back) %
			LINE_EDIT_HISTORY];
}

static void hist_add(struct line_edit *le)
{
	if (le->len == 0)
		return;
	/* Repeating the previous line does not fill the history. */
	if (le->hist_count && strcmp(hist_line(le, 1), le->buf) == 0)
		return;
	strlcpy(le->hist[le->hist_next], le->buf, sizeof(le->hist[0]));
	le->hist_next = (le->hist_next + 1) % LINE_EDIT_HISTORY;
	if (le->hist_count < LINE_EDIT_HISTORY)
		le->hist_count++;
}

static void hist_move(struct line_edit *le, int dir)
{
	unsigned back = le->hist_back;

	if (dir > 0 && back < le->hist_count)
		back++;
	else if (dir < 0 && back > 0)
		back--;
	else
		return;
	if (le->hist_back == 0)
		strlcpy(le->draft, le->buf, sizeof(le->draft));
	le->hist_back = back;
	replace_line(le, back ? hist_line(le, back) : le->draft);
}

/* A printable key met a full line: count it; the first of a line also
 * prints the notice on its own row and draws prompt and line again
 * below it (invariants 3 and 5). */
static void refuse(struct line_edit *le)
{
	char msg[LINE_EDIT_NOTICE_MAX];

	if (le->dropped++)
		return;
	ksnprintf(msg, sizeof(msg), "\n(line full: %u characters at most; "
		  "what follows is dropped)\n", LINE_EDIT_MAX);
	out_str(le, msg);
	out_str(le, le->prompt);
	le->out(le->buf, le->len);
	cursor_left(le, le->len - le->cur);
}

static void insert(struct line_edit *le, char c)
{
	if (le->len == LINE_EDIT_MAX) {
		refuse(le);
		return;
	}
	memmove(le->buf + le->cur + 1, le->buf + le->cur, le->len - le->cur);
	le->buf[le->cur] = c;
	le->buf[++le->len] = '\0';
	if (le->cur + 1 == le->len) {
		le->out(&c, 1);
		le->cur++;
		return;
	}
	redraw_tail(le);
	cursor_right(le, 1);
	le->cur++;
}

/* Remove the character at the cursor (an edit: invariant 5). */
static void erase_at_cursor(struct line_edit *le)
{
	le->dropped = 0;
	memmove(le->buf + le->cur, le->buf + le->cur + 1, le->len - le->cur);
	le->len--;
	redraw_tail(le);
}

bool line_edit_key(struct line_edit *le, int key)
{
	if (key_is_printable(key)) {
		insert(le, (char)key);
		return false;
	}
	switch (key) {
	case KEY_ENTER:
		out_str(le, "\n");
		hist_add(le);
		return true;
	case KEY_BACKSPACE:
		if (le->cur == 0)
			break;
		cursor_left(le, 1);
		le->cur--;
		erase_at_cursor(le);
		break;
	case KEY_DELETE:
		if (le->cur < le->len)
			erase_at_cursor(le);
		break;
	case KEY_LEFT:
		if (le->cur > 0) {
			cursor_left(le, 1);
			le->cur--;
		}
		break;
	case KEY_RIGHT:
		if (le->cur < le->len) {
			cursor_right(le, 1);
			le->cur++;
		}
		break;
	case KEY_HOME:
		cursor_left(le, le->cur);
		le->cur = 0;
		break;
	case KEY_END:
		cursor_right(le, le->len - le->cur);
		le->cur = le->len;
		break;
	case KEY_UP:
		hist_move(le, 1);
		break;
	case KEY_DOWN:
		hist_move(le, -1);
		break;
	case KEY_KILL:
		replace_line(le, "");
		le->hist_back = 0;
		break;
	case KEY_CANCEL:
		out_str(le, "^C\n");
		line_edit_start(le, le->prompt);
		break;
	default:
		break; /* KEY_TAB and others: no completion */
	}
	kassert(le->cur <= le->len && le->len <= LINE_EDIT_MAX);
	return false;
}

/* ------------------------------------------------------------------ */
/* Terminal input                                                      */
/* ------------------------------------------------------------------ */

enum { IN_TEXT, IN_ESC, IN_CSI, IN_SS3 };

#define CSI_PARAM_MAX 99
#define VT_HOME 1 /* ESC [ 1 ~ */
#define VT_DELETE 3 /* ESC [ 3 ~ */
#define VT_END 4 /* ESC [ 4 ~ */
#define VT_HOME_ALT 7
#define VT_END_ALT 8

static int arrow(uint8_t b)
{
	switch (b) {
	case 'A':
		return KEY_UP;
	case 'B':
		return KEY_DOWN;
	case 'C':
		return KEY_RIGHT;
	case 'D':
		return KEY_LEFT;
	case 'H':
		return KEY_HOME;
	case 'F':
		return KEY_END;
	default:
		return KEY_NONE;
	}
}

int term_input_feed(struct term_input *t, uint8_t b)
{
	bool after_cr = t->last_cr;

	t->last_cr = 0;
	switch (t->state) {
	case IN_ESC:
		t->param = 0;
		if (b == '[' || b == 'O') {
			t->state = b == '[' ? IN_CSI : IN_SS3;
			return KEY_NONE;
		}
		/* A lone Esc: no key, and b is an ordinary byte. */
		t->state = IN_TEXT;
		break;
	case IN_SS3:
		t->state = IN_TEXT;
		return arrow(b);
	case IN_CSI:
		if (b >= '0' && b <= '9') {
			t->param = t->param * 10 + (b - '0');
			if (t->param > CSI_PARAM_MAX)
				t->param = CSI_PARAM_MAX;
			return KEY_NONE;
		}
		if (b == ';')
			return KEY_NONE;
		t->state = IN_TEXT;
		if (b == '~') {
			if (t->param == VT_DELETE)
				return KEY_DELETE;
			if (t->param == VT_HOME || t->param == VT_HOME_ALT)
				return KEY_HOME;
			if (t->param == VT_END || t->param == VT_END_ALT)
				return KEY_END;
			return KEY_NONE;
		}
		return arrow(b);
	default:
		break;
	}
	if (b == TERM_ESC) {
		t->state = IN_ESC;
		return KEY_NONE;
	}
	if (b == '\r') {
		t->last_cr = 1;
		return KEY_ENTER;
	}
	if (b == '\n')
		return after_cr ? KEY_NONE : KEY_ENTER;
	if (b == ASCII_BS || b == ASCII_DEL)
		return KEY_BACKSPACE;
	if (b == ASCII_CTRL_C)
		return KEY_CANCEL;
	if (b == ASCII_CTRL_U)
		return KEY_KILL;
	if (b == ASCII_CTRL_A)
		return KEY_HOME;
	if (b == ASCII_CTRL_E)
		return KEY_END;
	if (b == '\t')
		return KEY_TAB;
	if (key_is_printable(b))
		return b;
	return KEY_NONE;
}

bool term_input_pending(const struct term_input *t)
{
	return t->state != IN_TEXT;
}

void term_input_idle(struct term_input *t)
{
	t->state = IN_TEXT;
	t->param = 0;
}
