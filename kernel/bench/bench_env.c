/*
 * Hardware glue for the benchmark harness: the TSC clock, the PMU
 * counters, TCG, the cache sizes and the memory-type verdict the
 * environment header states (kernel/bench/env_report.c prints it).
 */
#include "arch/x86_64/cpu_caches.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/pmu.h"
#include "arch/x86_64/tsc.h"
#include "kernel/bench/bench_env.h"
#include "kernel/options.h"
#include "lib/kprintf.h"
#include "lib/string.h"

static enum bench_tristate memtypes = BENCH_UNKNOWN;
static bool memtypes_checked;

static uint64_t tsc_now(void)
{
	return rdtsc_ordered();
}

static struct bench_clock tsc_clock = {tsc_now, 0, "tsc"};

const struct bench_clock *bench_kernel_clock(void)
{
	tsc_clock.hz = tsc_hz();
	return &tsc_clock;
}

static const enum pmu_event counter_events[] = {
	PMU_EV_CYCLES, PMU_EV_INSTRUCTIONS, PMU_EV_LLC_REFERENCES,
	PMU_EV_LLC_MISSES};
static const char *const counter_names[] = {"cycles", "instructions",
					    "llc_references", "llc_misses"};
static struct pmu_session session;
static bool counters_failed;

/* A session that cannot start leaves every figure taken with these
 * counters unmeasured, never zero: it is remembered, said once, and
 * bench_kernel_counters_failed() tells the experiments. */
static void counters_start(void *ctx)
{
	(void)ctx;
	if (pmu_start(&session, counter_events,
		      ARRAY_SIZE(counter_events)) == 0)
		return;
	if (!counters_failed)
		kprintf("bench: pmu_start() failed (%u events, %u general "
			"counters): counter figures are not measured\n",
			(unsigned)ARRAY_SIZE(counter_events),
			pmu_caps()->gp_counters);
	counters_failed = true;
}

bool bench_kernel_counters_failed(void)
{
	return counters_failed;
}

static void counters_stop(void *ctx)
{
	(void)ctx;
}

static void counters_read(void *ctx, uint64_t *values)
{
	struct pmu_sample s;

	(void)ctx;
	pmu_read(&session, &s);
	pmu_stop(&session);
	for (unsigned i = 0; i < ARRAY_SIZE(counter_events); i++)
		values[i] = s.count[i];
}

static const struct bench_counters pmu_counters = {
	ARRAY_SIZE(counter_events), counter_names, counters_start,
	counters_stop, counters_read, NULL};

const struct bench_counters *bench_kernel_counters(void)
{
	if (!pmu_caps()->present || counters_failed ||
	    pmu_caps()->gp_counters < ARRAY_SIZE(counter_events))
		return NULL;
	for (unsigned i = 0; i < ARRAY_SIZE(counter_events); i++)
		if (!pmu_event_available(counter_events[i]))
			return NULL;
	return &pmu_counters;
}

bool bench_env_is_tcg(void)
{
	return strcmp(cpu_info.hypervisor, "TCGTCGTCGTCG") == 0;
}

void bench_env_set_memtypes(enum bench_tristate honoured)
{
	/* TCG applies no memory type at all: a UC load measured several
	 * times slower than a WB one there is the host's noise (load,
	 * descheduling), not the PAT. */
	if (honoured == BENCH_YES && bench_env_is_tcg()) {
		kprintf("bench: UC measured slower than WB under QEMU TCG, "
			"which applies no memory type: host noise; "
			"memtypes_honoured unknown\n");
		honoured = BENCH_UNKNOWN;
	}
	memtypes = honoured;
	memtypes_checked = true;
}

enum bench_tristate bench_env_memtypes(void)
{
	return memtypes;
}

bool bench_env_memtypes_checked(void)
{
	return memtypes_checked;
}

const struct cache_geometry *bench_env_model_caches(void)
{
	static struct cache_geometry geom;
	static bool parsed, valid;
	const char *why;

	if (parsed)
		return valid ? &geom : NULL;
	parsed = true;
	if (!kopt.cachemodel_caches[0])
		return NULL;
	if (!kopt.cachemodel[0]) {
		kprintf("bench: cachemodel.caches= without cachemodel=: no "
			"model runs, the geometry is ignored\n");
		return NULL;
	}
	why = cache_geometry_parse(kopt.cachemodel_caches, &geom);
	if (why) {
		kprintf("bench: cachemodel.caches=%s: %s (expected e.g. "
			"l1d:32768:8,llc:4194304:16); ignored: buffers are "
			"sized from CPUID's caches\n",
			kopt.cachemodel_caches, why);
		return NULL;
	}
	valid = true;
	return &geom;
}

/*
 * The LLC size when CPUID describes no cache at all: assumed, the LLC
 * of the core2-2007 profile (cachemodel/profiles.txt). It only sizes
 * buffers, and every line that prints it says "assumed".
 */
#define LLC_ASSUMED_BYTES MiB(4)
#define LLC_TEXT_MAX 64

uint64_t bench_env_llc_bytes(const char **source)
{
	const struct cache_geometry *g = bench_env_model_caches();
	uint64_t cpuid;

	if (g) {
		if (source)
			*source = "modelled (cachemodel.caches=)";
		return g->level[CACHE_GEOM_LLC].bytes;
	}
	cpuid = cpu_caches_llc_bytes();
	if (source)
		*source = cpuid ? "per CPUID" :
				  "assumed (CPUID describes no cache)";
	return cpuid ? cpuid : LLC_ASSUMED_BYTES;
}

const char *bench_env_llc_text(void)
{
	static char text[LLC_TEXT_MAX];
	const char *source;
	uint64_t b = bench_env_llc_bytes(&source);

	if (b % MiB(1) == 0)
		ksnprintf(text, sizeof(text), "LLC %lu MiB %s",
			  (unsigned long)(b >> 20), source);
	else
		ksnprintf(text, sizeof(text), "LLC %lu KiB %s",
			  (unsigned long)(b >> 10), source);
	return text;
}
