/*
 * Scancode decoding for the PS/2 keyboard (see arch/x86_64/ps2_keymap.h).
 */
#include <stddef.h>
#include "arch/x86_64/ps2_keymap.h"
#include "lib/compiler.h"
#include "lib/keys.h"

#define SC_PREFIX_E0 0xe0
#define SC_PREFIX_E1 0xe1 /* Pause: a fixed sequence, dropped */
#define SC2_RELEASE 0xf0
#define SC1_RELEASE_BIT 0x80
#define SC1_CODE_MASK 0x7f
#define PAUSE_SKIP 2 /* bytes after each 0xe1 */

/* Set 1 make codes of the keys that are not characters. */
#define SC1_ESC 0x01
#define SC1_BACKSPACE 0x0e
#define SC1_TAB 0x0f
#define SC1_ENTER 0x1c
#define SC1_CTRL 0x1d
#define SC1_LSHIFT 0x2a
#define SC1_RSHIFT 0x36
#define SC1_CAPS 0x3a
#define SC1_HOME 0x47
#define SC1_UP 0x48
#define SC1_LEFT 0x4b
#define SC1_RIGHT 0x4d
#define SC1_END 0x4f
#define SC1_DOWN 0x50
#define SC1_DELETE 0x53

/* Characters of set 1 codes 0x00..0x39 without and with Shift; '\0' for
 * keys handled by name or not at all. */
static const char sc1_plain[] =
	"\0\0" "1234567890-=" "\0\0" "qwertyuiop[]" "\0\0" "asdfghjkl;'`"
	"\0" "\\zxcvbnm,./" "\0" "*" "\0" " ";
static const char sc1_shift[] =
	"\0\0" "!@#$%^&*()_+" "\0\0" "QWERTYUIOP{}" "\0\0" "ASDFGHJKL:\"~"
	"\0" "|ZXCVBNM<>?" "\0" "*" "\0" " ";

/* The controller's set 2 -> set 1 translation, for the keys we use. */
static const uint8_t sc2_to_sc1[0x80] = {
	[0x0d] = 0x0f, [0x0e] = 0x29, [0x12] = 0x2a, [0x14] = 0x1d,
	[0x15] = 0x10, [0x16] = 0x02, [0x1a] = 0x2c, [0x1b] = 0x1f,
	[0x1c] = 0x1e, [0x1d] = 0x11, [0x1e] = 0x03, [0x21] = 0x2e,
	[0x22] = 0x2d, [0x23] = 0x20, [0x24] = 0x12, [0x25] = 0x05,
	[0x26] = 0x04, [0x29] = 0x39, [0x2a] = 0x2f, [0x2b] = 0x21,
	[0x2c] = 0x14, [0x2d] = 0x13, [0x2e] = 0x06, [0x31] = 0x31,
	[0x32] = 0x30, [0x33] = 0x23, [0x34] = 0x22, [0x35] = 0x15,
	[0x36] = 0x07, [0x3a] = 0x32, [0x3b] = 0x24, [0x3c] = 0x16,
	[0x3d] = 0x08, [0x3e] = 0x09, [0x41] = 0x33, [0x42] = 0x25,
	[0x43] = 0x17, [0x44] = 0x18, [0x45] = 0x0b, [0x46] = 0x0a,
	[0x49] = 0x34, [0x4a] = 0x35, [0x4b] = 0x26, [0x4c] = 0x27,
	[0x4d] = 0x19, [0x4e] = 0x0c, [0x52] = 0x28, [0x54] = 0x1a,
	[0x55] = 0x0d, [0x58] = 0x3a, [0x59] = 0x36, [0x5a] = 0x1c,
	[0x5b] = 0x1b, [0x5d] = 0x2b, [0x66] = 0x0e, [0x69] = 0x4f,
	[0x6b] = 0x4b, [0x6c] = 0x47, [0x71] = 0x53, [0x72] = 0x50,
	[0x74] = 0x4d, [0x75] = 0x48, [0x76] = 0x01, [0x7c] = 0x37,
};


void ps2_decoder_init(struct ps2_decoder *d, bool set2)
{
	*d = (struct ps2_decoder){.set2 = set2};
}

static int ctrl_key(char c)
{
	switch (c) {
	case 'c':
		return KEY_CANCEL;
	case 'u':
		return KEY_KILL;
	case 'a':
		return KEY_HOME;
	case 'e':
		return KEY_END;
	default:
		return KEY_NONE;
	}
}

/* A set 1 make or release of code (with or without 0xe0 before it). */
static int sc1_key(struct ps2_decoder *d, uint8_t code, bool release, bool e0)
{
	bool shift;
	char c;

	switch (code) {
	case SC1_LSHIFT:
		if (!e0) /* 0xe0 0x2a: fake shift around some keys */
			d->lshift = !release;
		return KEY_NONE;
	case SC1_RSHIFT:
		if (!e0)
			d->rshift = !release;
		return KEY_NONE;
	case SC1_CTRL:
		d->ctrl = !release;
		return KEY_NONE;
	case SC1_CAPS:
		if (!release)
			d->caps = !d->caps;
		return KEY_NONE;
	default:
		break;
	}
	if (release)
		return KEY_NONE;
	switch (code) {
	case SC1_ENTER:
		return KEY_ENTER;
	case SC1_BACKSPACE:
		return KEY_BACKSPACE;
	case SC1_TAB:
		return KEY_TAB;
	case SC1_UP:
		return KEY_UP;
	case SC1_DOWN:
		return KEY_DOWN;
	case SC1_LEFT:
		return KEY_LEFT;
	case SC1_RIGHT:
		return KEY_RIGHT;
	case SC1_HOME:
		return KEY_HOME;
	case SC1_END:
		return KEY_END;
	case SC1_DELETE:
		return KEY_DELETE;
	case SC1_ESC:
		return KEY_NONE;
	default:
		break;
	}
	if (e0 || code >= sizeof(sc1_plain) - 1)
		return KEY_NONE;
	shift = d->lshift || d->rshift;
	c = sc1_plain[code];
	if (c >= 'a' && c <= 'z' && d->caps)
		shift = !shift;
	if (shift)
		c = sc1_shift[code];
	if (!c)
		return KEY_NONE;
	if (d->ctrl)
		return ctrl_key(c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c);
	return (unsigned char)c;
}

int ps2_decode(struct ps2_decoder *d, uint8_t b)
{
	bool e0, release;
	uint8_t code;

	if (d->skip) {
		d->skip--;
		return KEY_NONE;
	}
	if (b == SC_PREFIX_E0) {
		d->e0 = true;
		return KEY_NONE;
	}
	if (b == SC_PREFIX_E1) {
		d->skip = PAUSE_SKIP;
		return KEY_NONE;
	}
	if (d->set2 && b == SC2_RELEASE) {
		d->release = true;
		return KEY_NONE;
	}
	e0 = d->e0;
	d->e0 = false;
	if (d->set2) {
		release = d->release;
		d->release = false;
		if (b >= ARRAY_SIZE(sc2_to_sc1) || !sc2_to_sc1[b])
			return KEY_NONE;
		code = sc2_to_sc1[b];
	} else {
		release = b & SC1_RELEASE_BIT;
		code = b & SC1_CODE_MASK;
	}
	return sc1_key(d, code, release, e0);
}
