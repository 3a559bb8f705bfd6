/*
 * Polled i8042 PS/2 keyboard controller: the keyboard of the shell on the
 * screen. Under BIOS, firmware USB legacy emulation makes most USB
 * keyboards look like one; UEFI-only machines often have no controller
 * at all (then the shell is on serial only).
 */
#ifndef ARCH_X86_64_I8042_H
#define ARCH_X86_64_I8042_H

#include <stdbool.h>

/*
 * Probe the controller (no reset, no self-test: the firmware's set-up is
 * kept) and enable the keyboard port. Returns false when no controller
 * answers; i8042_probe_result() says what was found either way.
 */
bool i8042_init(void);
/* One line: "scancode set 1 (translated)" or why there is no keyboard. */
const char *i8042_probe_result(void);
/* The next key (lib/keys.h) or KEY_NONE; never waits. */
int i8042_getkey(void);

#endif
