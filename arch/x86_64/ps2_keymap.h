/*
 * PS/2 keyboard scancodes to keys (lib/keys.h), US layout. Portable
 * (host-tested); the port I/O is in arch/x86_64/i8042.c.
 *
 * Set 1 is what a controller with translation on delivers (a release is
 * the make code | 0x80); set 2 is the keyboard's native set (a release is
 * 0xf0 then the make code). Both may prefix 0xe0 (arrows, Home, End,
 * Delete, right Ctrl, keypad Enter). Set 2 codes are first translated to
 * set 1, as the controller would, so one table serves both.
 */
#ifndef ARCH_X86_64_PS2_KEYMAP_H
#define ARCH_X86_64_PS2_KEYMAP_H

#include <stdbool.h>
#include <stdint.h>

struct ps2_decoder {
	bool set2; /* bytes are set 2 (else set 1) */
	bool e0; /* after an 0xe0 prefix */
	bool release; /* set 2: after an 0xf0 prefix */
	uint8_t skip; /* bytes of a Pause sequence still to drop */
	bool lshift, rshift, ctrl, caps;
};

/* Start decoding set 2 (set2 true) or set 1; no modifier held. */
void ps2_decoder_init(struct ps2_decoder *d, bool set2);
/* Feed one scancode byte; returns a key or KEY_NONE (prefix, release,
 * modifier, a key with no meaning here). */
int ps2_decode(struct ps2_decoder *d, uint8_t byte);

#endif
