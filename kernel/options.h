/*
 * The kernel command line, parsed once at boot into typed options.
 * The table in kernel/options.c lists the kernel's own options (kopt);
 * an experiment declares the options it reads next to its code with
 * OPTION_UINT/OPTION_ENUM/OPTION_STRING below, into its own variables.
 * docs/cmdline.md shows both for people.
 */
#ifndef KERNEL_OPTIONS_H
#define KERNEL_OPTIONS_H

#include <stdbool.h>
#include "lib/compiler.h"
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
/* Under QEMU -icount (kopt.icount) the TSC counts nanoseconds of virtual
 * time, one per instruction at shift 0 (make ICOUNT=1): 1 GHz. */
#define ICOUNT_TSC_HZ 1000000000ull
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
	char cachemodel[OPT_STRING_MAX]; /* cache-model plugin profile, or "" */
	/* Its cache geometry (lib/cache_geometry.h), or "". */
	char cachemodel_caches[OPT_STRING_MAX];
	bool nopcid; /* do not use PCIDs even if the CPU has them */
	unsigned tlb_ceiling; /* pages flushed one by one at most; 0: default */
	bool shell; /* the interactive shell after the runs */
	unsigned profile; /* 1: sample every experiment (kernel/profile.h) */
	unsigned errors; /* options reported as unknown or malformed */
};

extern struct kernel_options kopt;

/* crash= and the options that take the same kinds: indexed by enum
 * crash_kind, NULL-terminated. */
extern const char *const crash_kind_names[];

enum opt_type { OPT_FLAG, OPT_UINT, OPT_ENUM, OPT_STRING, OPT_CONSOLES };

/*
 * One option: its name as typed, its type and where its value lives.
 * An OPT_ENUM field is an int (an enum), set to the index of the choice;
 * an OPT_STRING field holds OPT_STRING_MAX bytes. owner is the experiment
 * that reads it, or NULL for the kernel's own (defaults: see
 * options_parse()).
 */
struct option_desc {
	const char *name;
	enum opt_type type;
	void *field;
	const char *const *choices; /* OPT_ENUM: index is the value */
	unsigned min, max; /* OPT_UINT */
	const char *help;
	const char *owner;
	unsigned def; /* OPT_UINT, OPT_ENUM: the default */
	const char *def_string; /* OPT_STRING: the default */
};

/*
 * An experiment's own option, declared beside the code that reads it:
 * the descriptor lands in the "experiment_options" linker section, which
 * options_parse() walks after the kernel's table. var is the experiment's
 * static variable (unsigned; an enum for OPTION_ENUM; char[OPT_STRING_MAX]
 * for OPTION_STRING), reset to def on every parse.
 */
#define OPTION_DECLARE_(ident, ...)                                          \
	static const struct option_desc option_##ident __used               \
		__section("experiment_options") __aligned(8) = {__VA_ARGS__}
#define OPTION_UINT(ident, owner_, name_, var, def_, min_, max_, help_)    \
	OPTION_DECLARE_(ident, name_, OPT_UINT, &(var), NULL, min_, max_,  \
			help_, owner_, def_, NULL)
#define OPTION_ENUM(ident, owner_, name_, var, choices_, def_, help_)      \
	OPTION_DECLARE_(ident, name_, OPT_ENUM, &(var), choices_, 0, 0,    \
			help_, owner_, def_, NULL)
#define OPTION_STRING(ident, owner_, name_, var, def_, help_)              \
	OPTION_DECLARE_(ident, name_, OPT_STRING, &(var), NULL, 0, 0,      \
			help_, owner_, 0, def_)

/* Reset kopt and every experiment's options to their defaults, then
 * apply line. Never fails: bad options are reported by name and ignored.
 * Returns the number of errors. */
unsigned options_parse(const char *line);
/* Print the options' values for the boot report: the kernel's, then each
 * experiment option set away from its default, as name=value. */
void options_print(void);
/* Print the experiments' options (name, range or choices, help), each
 * under the experiment that reads it. */
void options_list_experiment_options(void);

#endif
