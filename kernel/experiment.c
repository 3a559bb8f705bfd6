/*
 * Experiment registry: walks the "experiments" linker section.
 */
#include "kernel/experiment.h"
#include "kernel/options.h"
#include "kernel/profile.h"
#include "lib/cmdline.h"
#include "lib/kprintf.h"
#include "lib/string.h"

extern const struct experiment __start_experiments[];
extern const struct experiment __stop_experiments[];

void experiments_list(void)
{
	kprintf("experiments (run=NAME[,NAME], run=all, run=default):\n");
	for (const struct experiment *e = __start_experiments;
	     e < __stop_experiments; e++)
		kprintf("  %-14s %-12s %s%s\n", e->name, e->seed,
			e->description, e->order ? " [default]" : "");
}

static int run_one(const struct experiment *e, enum experiment_mode mode)
{
	bool profiling;
	int rc;

	kprintf("\n=== experiment %s (%s mode; seed %s) ===\n", e->name,
		mode == EXPERIMENT_FULL ? "full" : "quick", e->seed);
	kprintf("%s\n", e->description);
	profiling = kopt.profile && profile_start(PROFILE_HZ);
	rc = e->run(mode);
	if (profiling) {
		profile_stop();
		/* An experiment may report sections itself (restarting the
		 * profiler): this report covers what ran after the last. */
		profile_report(e->name, PROFILE_TOP_N);
	}
	kprintf("=== experiment %s: %s ===\n", e->name,
		rc == 0 ? "done" : "FAILED");
	return rc != 0;
}

int experiments_run(const char *sel, enum experiment_mode mode)
{
	int failed = 0;
	const char *p = sel, *end = sel + strlen(sel), *name;
	size_t len;

	if (strcmp(sel, "none") == 0)
		return 0;
	if (strcmp(sel, "list") == 0) {
		experiments_list();
		return 0;
	}
	if (strcmp(sel, "all") == 0 || strcmp(sel, "default") == 0) {
		bool all = sel[0] == 'a';
		unsigned last = 0;

		/* Ascending order: the memory-type probe first, since the
		 * environment header reports its verdict. */
		for (;;) {
			const struct experiment *next = NULL;

			for (const struct experiment *e = __start_experiments;
			     e < __stop_experiments; e++)
				if (e->order > last &&
				    (!next || e->order < next->order))
					next = e;
			if (!next)
				break;
			failed += run_one(next, mode);
			last = next->order;
		}
		for (const struct experiment *e = __start_experiments;
		     all && e < __stop_experiments; e++)
			if (!e->order)
				failed += run_one(e, mode);
		return failed;
	}
	while ((name = cmdline_list_next(&p, end, &len))) {
		const struct experiment *found = NULL;

		if (len == 0)
			continue;
		for (const struct experiment *e = __start_experiments;
		     e < __stop_experiments; e++)
			if (cmdline_eq(name, len, e->name))
				found = e;
		if (!found) {
			kprintf("run: no experiment named '%.*s' (run=list "
				"shows them)\n", (int)len, name);
			failed++;
			continue;
		}
		failed += run_one(found, mode);
	}
	return failed;
}
