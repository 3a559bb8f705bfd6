/*
 * The kernel command line, parsed once at boot into typed options.
 * The table in kernel/options.c is the single list of options; docs/
 * cmdline.md shows the same table for people.
 */
#ifndef KERNEL_OPTIONS_H
#define KERNEL_OPTIONS_H

#include <stdbool.h>
#include "kernel/experiment.h"
#include "lib/config.h"

enum exit_mode { EXIT_QEMU, EXIT_HALT, EXIT_REBOOT };

enum crash_kind {
	CRASH_NONE,
	CRASH_PAGE_FAULT,
	CRASH_INVALID_OPCODE,
	CRASH_GENERAL_PROTECTION,
	CRASH_ASSERT,
	CRASH_TRIPLE_FAULT,
	CRASH_HANG,
	CRASH_STACK_OVERFLOW,
};

#define CONSOLE_SERIAL (1u << 0)
#define CONSOLE_VGA (1u << 1)
#define CONSOLE_FB (1u << 2)
#define CONSOLE_ALL (CONSOLE_SERIAL | CONSOLE_VGA | CONSOLE_FB)

#define OPT_STRING_MAX 128
/* pcache.latency= upper bound (microseconds per page read). */
#define OPT_PCACHE_LATENCY_MAX_US 10000
/* tlb.ceiling= upper bound (pages). */
#define OPT_TLB_CEILING_MAX 4096

struct kernel_options {
	unsigned consoles; /* CONSOLE_* bits */
	enum exit_mode exit;
	char ktest[OPT_STRING_MAX]; /* "none", "all" or SUITE[,SUITE] */
	char run[OPT_STRING_MAX]; /* experiments: "default", "all", ... */
	unsigned maxcpus;
	bool nosmp;
	unsigned loglevel; /* 0 quiet .. 7 debug */
	enum crash_kind crash;
	bool poison; /* fill freed pages with a pattern */
	enum experiment_mode runmode; /* quick (default) or full */
	bool icount; /* QEMU runs with -icount: one TSC tick per instruction */
	unsigned cpuhole; /* 0, or a CPU number left unstarted (tests) */
	/* The trace_export experiment: buffer memory type, export size. */
	char trace_memtype[OPT_STRING_MAX];
	unsigned trace_export_kib;
	/* trace_export: a deliberate failure once the workload is traced. */
	enum crash_kind trace_crash;
	char cachemodel[OPT_STRING_MAX]; /* cache-model plugin profile, or "" */
	/* Its cache geometry (lib/cache_geometry.h), or "". */
	char cachemodel_caches[OPT_STRING_MAX];
	bool nopcid; /* do not use PCIDs even if the CPU has them */
	unsigned tlb_ceiling; /* pages flushed one by one at most; 0: default */
	bool shell; /* the interactive shell after the runs */
	unsigned profile; /* 1: sample every experiment (kernel/profile.h) */
	/* pagecache_splice: simulated device latency per page read (us). */
	unsigned pcache_latency_us;
	unsigned errors; /* options reported as unknown or malformed */
};

extern struct kernel_options kopt;

/* Reset kopt to the defaults, then apply line. Never fails: bad options
 * are reported by name and ignored. Returns the number of errors. */
unsigned options_parse(const char *line);
/* Print the option table (name, value, help) for the boot report. */
void options_print(void);

#endif
