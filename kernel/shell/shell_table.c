/*
 * The shell's command table (see kernel/shell/shell_table.h).
 */
#include <stdint.h>
#include "kernel/shell/shell_table.h"
#include "lib/compiler.h"

static const char *const info_topics[] = {
	"cpu", "mem", "pat", "mtrr", "acpi", "smp", "pmu", "tsc", "caches",
	"quirks", NULL,
};

/* Lower-case memory-type names, as the user types them. */
const char *const shell_memtype_names[] = {
	"wb", "wt", "wc", "uc-", "uc", "wp", NULL,
};

static const char *const run_modes[] = {
	[SHELL_RUN_QUICK] = "quick", [SHELL_RUN_FULL] = "full", NULL,
};

static const struct shell_arg_spec help_args[] = {
	{"COMMAND", ARG_WORD, true, NULL, 0, 0},
};
static const struct shell_arg_spec info_args[] = {
	{"TOPIC", ARG_CHOICE, false, info_topics, 0, 0},
};
static const struct shell_arg_spec pt_args[] = {
	{"ADDRESS", ARG_ADDRESS, false, NULL, 0, UINT64_MAX},
};
static const struct shell_arg_spec memtype_args[] = {
	{"TYPE", ARG_CHOICE, false, shell_memtype_names, 0, 0},
};
static const struct shell_arg_spec run_args[] = {
	[SHELL_RUN_ARG_NAME] = {"NAME", ARG_WORD, false, NULL, 0, 0},
	[SHELL_RUN_ARG_MODE] = {"MODE", ARG_CHOICE, true, run_modes, 0, 0},
	[SHELL_RUN_ARG_SETTINGS] = {"KEY=VALUE", ARG_SETTINGS, true, NULL, 0,
				    0},
};

static const char *const trace_actions[] = {
	[SHELL_TRACE_ON] = "on", [SHELL_TRACE_OFF] = "off",
	[SHELL_TRACE_STATS] = "stats", [SHELL_TRACE_DUMP] = "dump", NULL,
};
static const struct shell_arg_spec trace_args[] = {
	[SHELL_TRACE_ARG_ACTION] = {"ACTION", ARG_CHOICE, false,
				    trace_actions, 0, 0},
	[SHELL_TRACE_ARG_EVENT] = {"EVENT", ARG_WORD, true, NULL, 0, 0},
};
static const char *const stats_only[] = {"stats", NULL};
static const struct shell_arg_spec stats_args[] = {
	{"WHAT", ARG_CHOICE, false, stats_only, 0, 0},
};

#define ARGS(a) a, ARRAY_SIZE(a)
#define NO_ARGS NULL, 0

const struct shell_command shell_commands[SHELL_CMD_COUNT] = {
	[SHELL_CMD_HELP] = {"help", "help [COMMAND]",
			    "list the commands, or explain one",
			    NULL, ARGS(help_args)},
	[SHELL_CMD_INFO] = {"info", "info TOPIC",
			    "print a part of the boot report",
			    "  TOPIC: cpu (identification, features), mem "
			    "(memory map, allocator),\n"
			    "  pat (IA32_PAT), mtrr (MTRRs), acpi (tables), "
			    "smp (CPUs), pmu (counters),\n"
			    "  tsc (frequency, invariance, sync), caches "
			    "(CPUID cache leaves),\n"
			    "  quirks (what makes this machine's figures less "
			    "trustworthy)",
			    ARGS(info_args)},
	[SHELL_CMD_PT] = {"pt", "pt ADDRESS",
			  "walk the page tables for a virtual address",
			  "  ADDRESS: a number (0x-hex or decimal) or a kernel "
			  "symbol (pt kmain).\n"
			  "  Prints each level's entry (PML4, PDPT, PD, PT), "
			  "the physical address and\n"
			  "  the memory type. Refuses non-canonical and "
			  "unmapped addresses.",
			  ARGS(pt_args)},
	[SHELL_CMD_MEMTYPE] = {"memtype", "memtype TYPE",
			       "map a buffer with a memory type, walk it, "
			       "time a read sweep",
			       "  TYPE: wb wt wc uc- uc wp, in any case. Maps "
			       "64 KiB with that type, prints\n"
			       "  the walk of its first page and the cycles "
			       "per 64-byte line of a read sweep\n"
			       "  over it.",
			       ARGS(memtype_args)},
	[SHELL_CMD_RUN] = {"run", "run list | run NAME [quick|full] "
			   "[KEY=VALUE...]",
			   "list the experiments, or run one",
			   "  run list shows each experiment with the "
			   "settings it accepts and\n"
			   "  their ranges; settings not given keep their "
			   "defaults.",
			   ARGS(run_args)},
	[SHELL_CMD_PROFILE] = {"profile", "profile NAME [quick|full] "
			       "[KEY=VALUE...]",
			       "run an experiment under the sampling profiler",
			       "  Like run, with every CPU's LAPIC timer "
			       "sampling the instruction pointer;\n"
			       "  the top functions follow the run "
			       "(kernel/profile.h).",
			       ARGS(run_args)},
	[SHELL_CMD_TRACE] = {"trace", "trace on|off [EVENT] | trace stats|dump",
			     "the flight recorder: switch events, count "
			     "losses, show records",
			     "  on: build the channel if needed (WB, 8 x 16 "
			     "KiB per CPU, overwrite) and\n"
			     "  enable EVENT, or every event. off EVENT: "
			     "disable one; off: disable all\n"
			     "  and free the channel (experiments that trace "
			     "build their own).\n"
			     "  stats: the enabled events and, per CPU, "
			     "records lost by cause.\n"
			     "  dump: stop the events, print the newest "
			     "records of every CPU; the\n"
			     "  records read are consumed. docs/trace.md.",
			     ARGS(trace_args)},
	[SHELL_CMD_TLB] = {"tlb", "tlb stats",
			   "per-CPU TLB flush counters since boot",
			   "  invlpg of single pages, full flushes, flush IPIs "
			   "sent and received,\n"
			   "  flush requests and the pages they named, PCID "
			   "reuse. docs/tlb.md.",
			   ARGS(stats_args)},
	[SHELL_CMD_PCACHE] = {"pcache", "pcache stats",
			      "page-cache counters since boot",
			      "  lookups, hits, misses, pages read by "
			      "readahead, pages reclaimed, pages\n"
			      "  cached now, RCU grace periods completed. "
			      "docs/pagecache.md.",
			      ARGS(stats_args)},
	[SHELL_CMD_CMDLINE] = {"cmdline", "cmdline",
			       "the kernel command line and the options "
			       "it set", NULL, NO_ARGS},
	[SHELL_CMD_REBOOT] = {"reboot", "reboot", "reset the machine", NULL,
			      NO_ARGS},
	[SHELL_CMD_HALT] = {"halt", "halt",
			    "end the boot as exit= says (QEMU exits, a PC "
			    "halts)",
			    NULL, NO_ARGS},
};
