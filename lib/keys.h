/*
 * Key codes shared by the input drivers (the PS/2 keyboard, the serial
 * terminal decoder) and the line editor. Printable ASCII keys are their
 * own character code (0x20..0x7e); the others are named here, above the
 * byte range so the two can never be confused.
 */
#ifndef LIB_KEYS_H
#define LIB_KEYS_H

#define KEY_NONE 0 /* no key (yet): a prefix byte, a key release */
#define KEY_PRINTABLE_FIRST 0x20
#define KEY_PRINTABLE_LAST 0x7e

enum key_code {
	KEY_ENTER = 0x100,
	KEY_BACKSPACE,
	KEY_DELETE,
	KEY_LEFT,
	KEY_RIGHT,
	KEY_UP,
	KEY_DOWN,
	KEY_HOME,
	KEY_END,
	KEY_CANCEL, /* Ctrl-C: drop the line */
	KEY_KILL, /* Ctrl-U: erase the line */
	KEY_TAB,
};

static inline int key_is_printable(int key)
{
	return key >= KEY_PRINTABLE_FIRST && key <= KEY_PRINTABLE_LAST;
}

#endif
