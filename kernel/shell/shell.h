/*
 * The interactive shell: a prompt on every console, keys from the serial
 * line and the PS/2 keyboard, the line editor, the command table
 * (kernel/shell/shell_table.c) and its commands (kernel/shell/shell_cmds.c).
 * Started by `shell` on the command line (the GRUB entry "interactive").
 */
#ifndef KERNEL_SHELL_H
#define KERNEL_SHELL_H

#define SHELL_PROMPT "kernel> "

/*
 * Read and run commands until `halt`, which ends the boot through
 * kernel_exit() with the status the shell has collected (1 if any
 * experiment run from the shell failed). Never returns.
 */
__attribute__((noreturn)) void shell_run(int failures_so_far);

#endif
