/*
 * The shell's read-eval loop (see kernel/shell.h). Both input devices
 * are polled in turn; whichever the person uses works, and the echo goes
 * to every console, so serial and screen show the same session.
 */
#include <stddef.h>
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/i8042.h"
#include "arch/x86_64/serial.h"
#include "kernel/console.h"
#include "kernel/fbcon.h"
#include "kernel/line_edit.h"
#include "kernel/shell.h"
#include "kernel/shell_cmds.h"
#include "kernel/shell_table.h"
#include "kernel/version.h"
#include "lib/keys.h"
#include "lib/kprintf.h"

static struct line_edit editor;
static struct term_input serial_keys;

static void echo(const char *s, size_t n)
{
	console_write(s, n);
}

/* Wait for the next key from either device. */
static int next_key(void)
{
	for (;;) {
		int c = serial_getc();
		int key;

		if (c >= 0) {
			key = term_input_feed(&serial_keys, (uint8_t)c);
			if (key != KEY_NONE)
				return key;
			continue;
		}
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
