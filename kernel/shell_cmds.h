/*
 * What the shell's commands do (their grammar is kernel/shell_table.c).
 */
#ifndef KERNEL_SHELL_CMDS_H
#define KERNEL_SHELL_CMDS_H

#include "kernel/shell_parse.h"

/*
 * Run the parsed command p. Problems the command finds (an unmapped
 * address, an unknown experiment, a setting out of range) are printed
 * as one "error: ..." line. Returns the number of experiment failures
 * (0 for every other command). halt and reboot do not return.
 */
int shell_dispatch(const struct shell_parsed *p, int failures);

/* Print one error line. */
void shell_error(const char *msg);

#endif
