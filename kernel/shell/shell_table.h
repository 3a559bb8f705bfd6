/*
 * The shell's commands as a grammar: names, argument specs, help text.
 * Portable, so the host tests and the fuzz harness parse against the
 * very table the kernel uses. What each command does is in
 * kernel/shell/shell_cmds.c, indexed by enum shell_cmd_id.
 */
#ifndef KERNEL_SHELL_TABLE_H
#define KERNEL_SHELL_TABLE_H

#include <stddef.h>
#include "kernel/shell/shell_parse.h"

/* Index of each command in shell_commands[]. */
enum shell_cmd_id {
	SHELL_CMD_HELP,
	SHELL_CMD_INFO,
	SHELL_CMD_PT,
	SHELL_CMD_MEMTYPE,
	SHELL_CMD_RUN,
	SHELL_CMD_PROFILE,
	SHELL_CMD_TRACE,
	SHELL_CMD_TLB,
	SHELL_CMD_PCACHE,
	SHELL_CMD_CMDLINE,
	SHELL_CMD_REBOOT,
	SHELL_CMD_HALT,
	SHELL_CMD_COUNT,
};

/* info TOPIC: the topics, in the order of enum shell_info_topic. */
enum shell_info_topic {
	INFO_CPU,
	INFO_MEM,
	INFO_PAT,
	INFO_MTRR,
	INFO_ACPI,
	INFO_SMP,
	INFO_PMU,
	INFO_TSC,
	INFO_CACHES,
	INFO_QUIRKS,
};

/* run and profile NAME [MODE] [KEY=VALUE...]: argument positions. */
#define SHELL_RUN_ARG_NAME 0
#define SHELL_RUN_ARG_MODE 1
#define SHELL_RUN_ARG_SETTINGS 2
/* MODE's choices, in shell_table.c's order. */
enum shell_run_mode { SHELL_RUN_QUICK, SHELL_RUN_FULL };

/* trace ACTION [EVENT]: the actions, in shell_table.c's order. */
enum shell_trace_action {
	SHELL_TRACE_ON,
	SHELL_TRACE_OFF,
	SHELL_TRACE_STATS,
	SHELL_TRACE_DUMP,
};
#define SHELL_TRACE_ARG_ACTION 0
#define SHELL_TRACE_ARG_EVENT 1

extern const struct shell_command shell_commands[SHELL_CMD_COUNT];
extern const char *const shell_memtype_names[];

#endif
