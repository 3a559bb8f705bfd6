/*
 * The cache-model plugin's read-out of the engine: a vCPU's counters with
 * its instruction count, the modelled clocks, and the @@MODEL line of a
 * region's or a run's counters and of its pause-waits (docs/cachemodel.md
 * has the fields).
 * The invariants are cachemodel/plugin.c's; the contracts are in
 * cachemodel/plugin_internal.h.
 */
#include <inttypes.h>
#include "cachemodel/plugin_internal.h"

void stats_now(unsigned cpu, struct cm_stats *s)
{
	cm_stats_read(model, cpu, s);
}

uint64_t busy_cycles(unsigned cpu)
{
	/* cm_cycles() of stats_now(), without copying every counter. */
	return cm_busy_cycles(model, cpu);
}

uint64_t global_clock(void)
{
	uint64_t max = 0;

	for (unsigned c = 0; c < nvcpus; c++) {
		uint64_t t = busy_cycles(c) + (pace ? pace_skip(pace, c) : 0);

		if (t > max)
			max = t;
	}
	return max;
}

void pause_wait_summary(void)
{
	static const char *const name[PACE_PW_ENDS] = {
		[PACE_PW_WRITE] = "pw_write", [PACE_PW_TIMEOUT] = "pw_timeout",
		[PACE_PW_ALONE] = "pw_alone", [PACE_PW_GAVE_UP] = "pw_gave_up",
		[PACE_PW_NONE] = "pw_none",
	};
	uint64_t all = 0;

	for (int e = 0; e < PACE_PW_ENDS; e++)
		all += pace ? pace_pw_count(pace, e) : 0;
	fprintf(out, "\"pause_waits\":%" PRIu64, all);
	for (int e = 0; e < PACE_PW_ENDS; e++)
		fprintf(out, ",\"%s\":%" PRIu64, name[e],
			pace ? pace_pw_count(pace, e) : 0);
	fprintf(out, ",\"pw_skipped_cycles\":%" PRIu64,
		pace ? pace_pw_skipped(pace) : 0);
}

#define DIFF(f) d.f = now->f - then->f
void print_counters(const char *kind, const char *label, int64_t id,
		    bool all, uint64_t iters, unsigned by, unsigned cpu,
		    const struct cm_stats *now,
		    const struct cm_stats *then, const char *extra)
{
	struct cm_stats d;

	DIFF(insns); DIFF(loads); DIFF(stores);
	DIFF(l1_hits); DIFF(l1_misses); DIFF(l2_hits); DIFF(l2_misses);
	DIFF(llc_hits); DIFF(llc_misses); DIFF(invalidations);
	DIFF(transfers); DIFF(writebacks); DIFF(uncached); DIFF(wc_bursts);
	DIFF(wc_partials); DIFF(nt_stores); DIFF(clflushes); DIFF(locked);
	DIFF(fences); DIFF(mem_cycles); DIFF(prefetches);
	DIFF(prefetch_useful); DIFF(prefetch_late); DIFF(bus_queued);
	DIFF(store_stalls); DIFF(bus_late);
	DIFF(line_queued); DIFF(causal_waits);
	for (unsigned k = 0; k < CM_WC_NCAUSES; k++)
		d.wc_partial_by[k] = now->wc_partial_by[k] -
				     then->wc_partial_by[k];
	fprintf(out, PREFIX "{\"kind\":\"%s\",\"profile\":\"%s\","
		"\"label\":\"%s\",\"id\":%" PRId64 ",\"scope\":\"%s\","
		"\"iters\":%" PRIu64
		",\"by\":%u,\"cpu\":%u,"
		"\"insns\":%" PRIu64 ",\"loads\":%" PRIu64
		",\"stores\":%" PRIu64 ",\"l1_hits\":%" PRIu64
		",\"l1_misses\":%" PRIu64 ",\"l2_hits\":%" PRIu64
		",\"l2_misses\":%" PRIu64 ",\"llc_hits\":%" PRIu64
		",\"llc_misses\":%" PRIu64 ",\"invalidations\":%" PRIu64
		",\"transfers\":%" PRIu64 ",\"writebacks\":%" PRIu64
		",\"uncached\":%" PRIu64 ",\"wc_bursts\":%" PRIu64
		",\"wc_partials\":%" PRIu64 ",\"wc_partial_fence\":%" PRIu64
		",\"wc_partial_locked\":%" PRIu64
		",\"wc_partial_uncached\":%" PRIu64
		",\"wc_partial_evict\":%" PRIu64 ",\"nt_stores\":%" PRIu64
		",\"clflushes\":%" PRIu64 ",\"locked\":%" PRIu64
		",\"fences\":%" PRIu64 ",\"mem_cycles\":%" PRIu64
		",\"prefetches\":%" PRIu64 ",\"prefetch_useful\":%" PRIu64
		",\"prefetch_late\":%" PRIu64 ",\"bus_queued\":%" PRIu64
		",\"store_stalls\":%" PRIu64 ",\"bus_late\":%" PRIu64
		",\"line_queued\":%" PRIu64 ",\"causal_waits\":%" PRIu64
		",\"cycles\":%" PRIu64 "%s}\n",
		kind, cm_profile(model)->name, label, id, all ? "all" : "cpu",
		iters, by, cpu,
		d.insns,
		d.loads, d.stores, d.l1_hits, d.l1_misses, d.l2_hits,
		d.l2_misses, d.llc_hits, d.llc_misses, d.invalidations,
		d.transfers, d.writebacks, d.uncached, d.wc_bursts,
		d.wc_partials, d.wc_partial_by[CM_WC_FENCE],
		d.wc_partial_by[CM_WC_LOCKED], d.wc_partial_by[CM_WC_UNCACHED],
		d.wc_partial_by[CM_WC_EVICT], d.nt_stores, d.clflushes, d.locked, d.fences,
		d.mem_cycles, d.prefetches, d.prefetch_useful,
		d.prefetch_late, d.bus_queued, d.store_stalls, d.bus_late,
		d.line_queued, d.causal_waits,
		cm_cycles(model, &d), extra);
}
