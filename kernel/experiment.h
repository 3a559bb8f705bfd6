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
 */
#ifndef KERNEL_EXPERIMENT_H
#define KERNEL_EXPERIMENT_H

#include <stdbool.h>
#include "lib/compiler.h"

enum experiment_mode { EXPERIMENT_QUICK, EXPERIMENT_FULL };

struct experiment {
	const char *name;
	const char *description; /* one line */
	const char *seed; /* the seed post it re-creates, or "-" */
	/* Position in run=default and run=all (lower first); 0: not in
	 * the default set (run=all still runs it, last). */
	unsigned order;
	/* Returns 0 on success (including a self-check of its result). */
	int (*run)(enum experiment_mode mode);
};

#define EXPERIMENT(ident, name_, desc, seed_, order_, fn)                     \
	static const struct experiment experiment_##ident __used            \
		__section("experiments") __aligned(8) = {                   \
			name_, desc, seed_, order_, fn}

/*
 * Run what selection names ("default", "all", "list", "none" or a list).
 * Unknown names are reported and counted as failures. Returns the number
 * of experiments that failed.
 */
int experiments_run(const char *selection, enum experiment_mode mode);
void experiments_list(void);

#endif
