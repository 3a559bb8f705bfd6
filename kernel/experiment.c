/*
 * Experiment registry: walks the "experiments" linker section.
 */
#include "arch/x86_64/model_doorbell.h"
#include "kernel/experiment.h"
#include "kernel/profile.h"
#include "kernel/smp_call.h"
#include "lib/bench_output.h"
#include "lib/cmdline.h"
#include "lib/kprintf.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "mm/page_alloc.h"

extern const struct experiment __start_experiments[];
extern const struct experiment __stop_experiments[];

/* The settings of the run in progress (none outside experiment_run_with). */
static struct {
	const char *key;
	uint64_t value;
} current[EXPERIMENT_MAX_SETTINGS];
static unsigned ncurrent;

void experiments_list(void)
{
	kprintf("experiments (run=NAME[,NAME], run=all, run=default):\n");
	for (const struct experiment *e = __start_experiments;
	     e < __stop_experiments; e++) {
		kprintf("  %-14s %-12s %s%s\n", e->name, e->seed,
			e->description, e->order ? " [default]" : "");
		for (unsigned i = 0; i < e->nparams; i++)
			kprintf("  %14s %s=%lu..%lu: %s\n", "",
				e->params[i].name,
				(unsigned long)e->params[i].min,
				(unsigned long)e->params[i].max,
				e->params[i].help);
	}
}

const struct experiment *experiment_find(const char *name)
{
	for (const struct experiment *e = __start_experiments;
	     e < __stop_experiments; e++)
		if (strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

bool experiment_param(const char *name, uint64_t *value)
{
	for (unsigned i = 0; i < ncurrent; i++) {
		if (strcmp(current[i].key, name) == 0) {
			*value = current[i].value;
			return true;
		}
	}
	return false;
}

/* kmalloc_drain_all()'s runner: fn as a work item on every online CPU. */
static void (*drain_fn)(void);

static void call_drain(void *arg)
{
	(void)arg;
	drain_fn();
}

static void run_on_every_cpu(void (*fn)(void))
{
	struct cpumask all;

	cpumask_online(&all, false);
	drain_fn = fn;
	smp_run_on(&all, call_drain, NULL);
}

/*
 * experiments_settle_memory(): under a cache model, where an experiment's
 * memory lands (which cache sets its pages and tree nodes share) is part
 * of its figures; but where the allocators put it depends on the order in
 * which the experiments before it freed theirs, and on several CPUs paced
 * concurrently the host chose that order. Drain the per-CPU object caches
 * and put the free lists in address order: the next allocations then
 * depend on what is in use, not on when it was freed (docs/cachemodel.md,
 * "Serial pacing").
 */
static bool settle_before_each;

void experiments_settle_memory(bool on)
{
	settle_before_each = on;
}

static void settle_memory(void)
{
	kmalloc_drain_all(run_on_every_cpu);
	kmalloc_sort_partial();
	page_alloc_sort_free_lists();
}

/* Run e in mode, under the sampling profiler when profile is true. */
static int run_one(const struct experiment *e, enum experiment_mode mode,
		   bool profile)
{
	unsigned long skips = bench_missing_whole_skips();
	bool profiling;
	int rc;

	kprintf("\n=== experiment %s (%s mode; seed %s) ===\n", e->name,
		mode == EXPERIMENT_FULL ? "full" : "quick", e->seed);
	kprintf("%s\n", e->description);
	if (settle_before_each)
		settle_memory();
	/* A cache model names this experiment's regions after it. */
	model_doorbell_label(e->name);
	profiling = profile && profile_start(PROFILE_HZ);
	rc = e->run(mode);
	if (profiling) {
		profile_stop();
		/* An experiment may report sections itself (restarting the
		 * profiler): this report covers what ran after the last. */
		profile_report(e->name, PROFILE_TOP_N);
	}
	/* A run that skipped itself (bench_missing(), the machine lacks
	 * what it needs) passes, but did not do its work. */
	kprintf("=== experiment %s: %s ===\n", e->name,
		rc != 0 ? "FAILED" :
		bench_missing_whole_skips() != skips ? "skipped" : "done");
	return rc != 0;
}

/* Check settings against e's declared parameters into current[]. */
static bool apply_settings(const struct experiment *e,
			   const struct experiment_setting *s, unsigned n,
			   char *err, size_t errlen)
{
	ncurrent = 0;
	if (n > EXPERIMENT_MAX_SETTINGS) {
		ksnprintf(err, errlen, "run: at most %d settings",
			  EXPERIMENT_MAX_SETTINGS);
		return false;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct experiment_param *p = NULL;
		unsigned long long v;

		for (unsigned k = 0; k < e->nparams; k++)
			if (strcmp(e->params[k].name, s[i].key) == 0)
				p = &e->params[k];
		if (!p) {
			ksnprintf(err, errlen, "run: %s has no parameter "
				  "'%.24s' (run list shows them)", e->name,
				  s[i].key);
			return false;
		}
		if (!cmdline_parse_u64(s[i].value, strlen(s[i].value), &v)) {
			ksnprintf(err, errlen, "run: %s=%.24s is not a "
				  "number", p->name, s[i].value);
			return false;
		}
		if (v < p->min || v > p->max) {
			ksnprintf(err, errlen, "run: %s=%llu is out of range "
				  "(%lu..%lu)", p->name, v,
				  (unsigned long)p->min,
				  (unsigned long)p->max);
			return false;
		}
		current[i].key = p->name;
		current[i].value = v;
	}
	ncurrent = n;
	return true;
}

int experiment_run_with(const struct experiment *e, enum experiment_mode mode,
			const struct experiment_setting *settings, unsigned n,
			bool profile, char *err, size_t errlen)
{
	int rc;

	if (!apply_settings(e, settings, n, err, errlen)) {
		ncurrent = 0;
		return -1;
	}
	for (unsigned i = 0; i < ncurrent; i++)
		kprintf("run: %s=%lu\n", current[i].key,
			(unsigned long)current[i].value);
	rc = run_one(e, mode, profile);
	ncurrent = 0;
	return rc;
}

int experiments_run(const char *sel, enum experiment_mode mode, bool profile)
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
			failed += run_one(next, mode, profile);
			last = next->order;
		}
		for (const struct experiment *e = __start_experiments;
		     all && e < __stop_experiments; e++)
			if (!e->order)
				failed += run_one(e, mode, profile);
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
		failed += run_one(found, mode, profile);
	}
	return failed;
}
