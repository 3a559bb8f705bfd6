/*
 * The shell's read-eval loop (see kernel/shell/shell.h). Both input devices
 * are polled in turn; whichever the person uses works, and the echo goes
 * to every console, so serial and screen show the same session.
 */
#include <stddef.h>
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/i8042.h"
#include "arch/x86_64/serial.h"
#include "arch/x86_64/tsc.h"
#include "kernel/console.h"
#include "kernel/fbcon.h"
#include "kernel/shell/line_edit.h"
#include "kernel/shell/shell.h"
#include "kernel/shell/shell_cmds.h"
#include "kernel/shell/shell_table.h"
#include "kernel/version.h"
#include "lib/keys.h"
#include "lib/kprintf.h"

static struct line_edit editor;
static struct term_input serial_keys;

static void echo(const char *s, size_t n)
{
	console_write(s, n);
}

#define MS_PER_S 1000

/* Wait for the next key from either device. A sequence left open on the
 * serial line for TERM_INPUT_IDLE_MS was a lone Esc (line_edit.h). */
static int next_key(void)
{
	uint64_t last_byte = 0;

	for (;;) {
		int c = serial_getc();
		int key;

		if (c >= 0) {
			last_byte = rdtsc_ordered();
			key = term_input_feed(&serial_keys, (uint8_t)c);
			if (key != KEY_NONE)
				return key;
			continue;
		}
		if (term_input_pending(&serial_keys) &&
		    rdtsc_ordered() - last_byte >
			    tsc_hz() * TERM_INPUT_IDLE_MS / MS_PER_S)
			term_input_idle(&serial_keys);
		key = i8042_getkey();
		if (key != KEY_NONE)
			return key;
		cpu_pause();
	}
}

void shell_run(int failures)
{
	static char line[LINE_EDIT_MAX + 1];
	struct shell_parsed parsed;
	char err[SHELL_ERROR_MAX];

	kprintf("\nkernel %s (%s): interactive shell\n", kernel_version,
		kernel_git_hash);
	i8042_init();
	kprintf("shell: keyboard: %s\n", i8042_probe_result());
	kprintf("shell: serial: %s\n", serial_present() ?
		"COM1, 115200 8N1" : "none (no UART answered)");
	kprintf("shell: type help for the commands, halt to end\n");
	line_edit_init(&editor, echo);
	for (;;) {
		fbcon_show_cursor(true);
		line_edit_start(&editor, SHELL_PROMPT);
		while (!line_edit_key(&editor, next_key()))
			;
		fbcon_show_cursor(false);
		if (editor.dropped) {
			/* A cut line is not what was typed: never run it. */
			kprintf("error: the line was longer than %u characters "
				"(%u more dropped); not run (Up recalls the "
				"first %u)\n", LINE_EDIT_MAX, editor.dropped,
				LINE_EDIT_MAX);
			continue;
		}
		/* The editor's buffer stays intact for its history. */
		for (size_t i = 0; i <= editor.len; i++)
			line[i] = editor.buf[i];
		switch (shell_parse(line, shell_commands, SHELL_CMD_COUNT,
				    &parsed, err, sizeof(err))) {
		case SHELL_EMPTY:
			break;
		case SHELL_ERROR:
			shell_error(err);
			break;
		case SHELL_OK:
			failures += shell_dispatch(&parsed, failures);
			break;
		}
	}
}
