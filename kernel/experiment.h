/*
 * The experiment registry. Each built-in experiment declares itself with
 * EXPERIMENT(...) anywhere in the tree; the descriptor lands in the
 * "experiments" linker section. run= on the command line picks them:
 *
 *   run=default     the experiments marked default (what `make run` runs)
 *   run=all         every experiment
 *   run=list        print the registry and run nothing
 *   run=none        nothing
 *   run=a,b         the named ones, in that order
 *   runmode=full    full-size runs instead of the quick ones
 *
 * An experiment may declare named parameters (sizes, client counts,
 * repetitions) with their ranges; the shell's `run NAME KEY=VALUE...`
 * sets them for one run, checked against the declaration, and the
 * experiment reads them with experiment_param().
 */
#ifndef KERNEL_EXPERIMENT_H
#define KERNEL_EXPERIMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/compiler.h"

enum experiment_mode { EXPERIMENT_QUICK, EXPERIMENT_FULL };

struct experiment_param {
	const char *name; /* lower case, as typed: clients */
	uint64_t min, max; /* accepted values */
	const char *help; /* one line, with the default */
};

struct experiment_setting {
	const char *key, *value; /* as typed */
};

#define EXPERIMENT_MAX_SETTINGS 8
#define EXPERIMENT_ERROR_MAX 160

struct experiment {
	const char *name;
	const char *description; /* one line */
	const char *seed; /* the seed post it re-creates, or "-" */
	/* Position in run=default and run=all (lower first); 0: not in
	 * the default set (run=all still runs it, last). */
	unsigned order;
	/* Returns 0 on success (including a self-check of its result). */
	int (*run)(enum experiment_mode mode);
	const struct experiment_param *params; /* may be NULL */
	unsigned nparams;
};

#define EXPERIMENT(ident, name_, desc, seed_, order_, fn)                     \
	static const struct experiment experiment_##ident __used            \
		__section("experiments") __aligned(8) = {                   \
			name_, desc, seed_, order_, fn, NULL, 0}

/* The same with a parameter table (a static array of struct
 * experiment_param). */
#define EXPERIMENT_PARAMS(ident, name_, desc, seed_, order_, fn, params_)   \
	static const struct experiment experiment_##ident __used            \
		__section("experiments") __aligned(8) = {                   \
			name_, desc, seed_, order_, fn, params_,            \
			ARRAY_SIZE(params_)}

/*
 * Run what selection names ("default", "all", "list", "none" or a list),
 * each under the sampling profiler when profile is true (profile=1).
 * Unknown names are reported and counted as failures. Returns the number
 * of experiments that failed.
 */
int experiments_run(const char *selection, enum experiment_mode mode,
		    bool profile);
/*
 * With on, each experiment run from now on starts from settled memory:
 * every CPU's kmalloc caches drained, the free lists in address order,
 * so that where its memory lands does not follow the order in which the
 * host ran the CPUs of the experiments before it. main() turns it on
 * under a cache model (docs/cachemodel.md, "Serial pacing").
 */
void experiments_settle_memory(bool on);
/* The registry, with each experiment's parameters and their ranges. */
void experiments_list(void);
/* The experiment called name, or NULL. */
const struct experiment *experiment_find(const char *name);

/*
 * Run e once in mode with settings[0..n) applied, under the sampling
 * profiler when profile is true (kernel/profile.h; its report follows the
 * run). A setting that names
 * no declared parameter or has a bad or out-of-range value is refused
 * before anything runs: returns -1 with a one-line message in err.
 * Otherwise returns 0 if the experiment succeeded, 1 if it failed.
 */
int experiment_run_with(const struct experiment *e, enum experiment_mode mode,
			const struct experiment_setting *settings, unsigned n,
			bool profile, char *err, size_t errlen);

/*
 * For the running experiment: true and *value when the user set the
 * parameter name for this run, false when it keeps its default.
 */
bool experiment_param(const char *name, uint64_t *value);

#endif
