/*
 * What the shell's commands do (their grammar is kernel/shell/shell_table.c).
 */
#ifndef KERNEL_SHELL_CMDS_H
#define KERNEL_SHELL_CMDS_H

#include "kernel/shell/shell_parse.h"
#include "lib/compiler.h"

/*
 * Run the parsed command p. Problems the command finds (an unmapped
 * address, an unknown experiment, a setting out of range) are printed
 * as one "error: ..." line. Returns the number of experiment failures
 * (0 for every other command). halt and reboot do not return.
 */
int shell_dispatch(const struct shell_parsed *p, int failures);

/*
 * A command whose code lives in a layer above kernel/ (trace/): that
 * layer places one of these in the "shell_handlers" section with
 * SHELL_HANDLER(); shell_dispatch() finds it there by command id. A
 * command with no handler linked in says so with an error line.
 */
struct shell_handler {
	unsigned cmd_id; /* enum shell_cmd_id */
	void (*fn)(const struct shell_parsed *p);
};

#define SHELL_HANDLER(ident, id_, fn_)                                      \
	static const struct shell_handler shell_handler_##ident __used      \
		__section("shell_handlers") __aligned(8) = {id_, fn_}

/* Print one error line. */
void shell_error(const char *msg);

#endif
