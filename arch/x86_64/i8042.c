/*
 * Polled i8042 keyboard controller (see arch/x86_64/i8042.h). Interrupts
 * stay off (the 8259s are masked): the shell polls the status port.
 *
 * Probe: a status port that reads 0xff is a floating bus (no
 * controller); otherwise the controller must answer "read configuration
 * byte" within a bounded wait. The configuration's translation bit says
 * whether the keyboard's set 2 reaches us as set 1.
 */
#include <stdint.h>
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/i8042.h"
#include "arch/x86_64/ps2_keymap.h"
#include "lib/keys.h"

#define I8042_DATA 0x60
#define I8042_STATUS 0x64 /* read */
#define I8042_COMMAND 0x64 /* write */

#define STATUS_OUTPUT_FULL 0x01
#define STATUS_INPUT_FULL 0x02
#define STATUS_AUX_DATA 0x20 /* the byte is from the mouse port */
#define STATUS_FLOATING 0xff

#define CMD_READ_CONFIG 0x20
#define CMD_ENABLE_KBD 0xae
#define CONFIG_TRANSLATE 0x40

/* Bounded waits: a controller that stops answering must not hang us. */
#define WAIT_LIMIT 200000
#define FLUSH_LIMIT 64

static bool present;
static struct ps2_decoder decoder;
static const char *result = "not probed";

static bool wait_input_empty(void)
{
	for (int i = 0; i < WAIT_LIMIT; i++)
		if (!(inb(I8042_STATUS) & STATUS_INPUT_FULL))
			return true;
	return false;
}

static bool wait_output_full(void)
{
	for (int i = 0; i < WAIT_LIMIT; i++)
		if (inb(I8042_STATUS) & STATUS_OUTPUT_FULL)
			return true;
	return false;
}

bool i8042_init(void)
{
	uint8_t config;

	present = false;
	if (inb(I8042_STATUS) == STATUS_FLOATING) {
		result = "no controller (status port reads 0xff)";
		return false;
	}
	for (int i = 0; i < FLUSH_LIMIT &&
			(inb(I8042_STATUS) & STATUS_OUTPUT_FULL); i++)
		(void)inb(I8042_DATA);
	if (!wait_input_empty()) {
		result = "no controller (input buffer never empties)";
		return false;
	}
	outb(I8042_COMMAND, CMD_READ_CONFIG);
	if (!wait_output_full()) {
		result = "no controller (no answer to read-configuration)";
		return false;
	}
	config = inb(I8042_DATA);
	if (!wait_input_empty()) {
		result = "no controller (input buffer never empties)";
		return false;
	}
	outb(I8042_COMMAND, CMD_ENABLE_KBD);
	ps2_decoder_init(&decoder, !(config & CONFIG_TRANSLATE));
	result = config & CONFIG_TRANSLATE ?
			 "scancode set 1 (controller translates)" :
			 "scancode set 2 (no translation)";
	present = true;
	return true;
}

const char *i8042_probe_result(void)
{
	return result;
}

int i8042_getkey(void)
{
	uint8_t status, byte;

	if (!present)
		return KEY_NONE;
	status = inb(I8042_STATUS);
	if (!(status & STATUS_OUTPUT_FULL))
		return KEY_NONE;
	byte = inb(I8042_DATA);
	if (status & STATUS_AUX_DATA)
		return KEY_NONE;
	return ps2_decode(&decoder, byte);
}
