/*
 * What the parts of the cache-model QEMU plugin share: the per-vCPU
 * state, the plugin's globals, and the functions one part offers the
 * others. The parts: cachemodel/plugin.c (QEMU's callbacks, the fast
 * path's exclusion, installation; its comment holds the invariants this
 * header's state obeys), cachemodel/plugin_counters.c (reading and
 * printing the engine's counters), cachemodel/plugin_doorbell.c (the
 * doorbell interpreter). Private to those files.
 */
#ifndef CACHEMODEL_PLUGIN_INTERNAL_H
#define CACHEMODEL_PLUGIN_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "cachemodel/doorbell.h"
#include "cachemodel/locked.h"
#include "cachemodel/model.h"
#include "cachemodel/pace.h"
#include "cachemodel/pause_watch.h"

#define PREFIX "@@MODEL "
#define ERR_MAX 256
#define XLAT_BITS 8
#define XLAT_ENTRIES (1u << XLAT_BITS)	/* per vCPU, direct mapped */
/* Host cache line: vCPUs' states are aligned to it (no false sharing). */
#define HOST_LINE_BYTES 64

/* One remembered translation (cachemodel/plugin.c, invariant 5). */
struct xlat {
	uint64_t vpage;		/* virtual page number + 1; 0 = empty */
	uint64_t ppage;		/* physical page number */
	bool io;		/* a device region, not RAM */
};

struct vcpu {
	uint32_t in_fast;		/* inside cm_access_fast() */
	/* The translation block under way: its instructions, and how many
	 * of them are counted so far (cachemodel/plugin.c, invariant 6). */
	uint32_t block_insns, block_counted;
	uint64_t acc;
	bool digits;			/* DIGITs since the last PUSH */
	uint64_t args[DB_MAX_ARGS];
	unsigned nargs;
	char pending[DB_LABEL_MAX];	/* CHARs since the last LABEL */
	unsigned pending_len;
	bool region_open;
	bool region_all;		/* scope DB_SCOPE_ALL */
	char region_label[DB_LABEL_MAX];	/* the label at BEGIN */
	uint64_t region_id;
	struct cm_stats *snap;		/* every CPU's counters at BEGIN */
	/* PAUSE: every CPU's counters then; RESUME moves snap past them. */
	bool region_paused;
	struct cm_stats *paused_at;
	/* The global clock and the pacing breaks at BEGIN (invariant 4);
	 * RESUME moves region_clock past the pause (paused_clock then). */
	uint64_t region_clock, region_breaks, paused_clock;
	uint64_t region_quantum;	/* the pacing quantum at BEGIN */
	bool region_serial;		/* serial pacing at BEGIN */
	struct xlat xlat[XLAT_ENTRIES];	/* this vCPU's only (invariant 5) */
	/* Line + 1 of the last rep-string load [0] and store [1] (0: none),
	 * this vCPU's only: see rep_string_again(). */
	uint64_t rep_line[2];
	/* The locked read-modify-write under way (cachemodel/locked.h).
	 * This vCPU's only. */
	struct locked_rmw locked;
	/* The lines of its poll loop's last turn (cachemodel/pause_watch.h):
	 * a paced run pokes it, pause-waiting, only for writes to them. */
	struct pause_watch watch;
	/* Its local APIC's ID, as the kernel said (DB_CMD_CPU), and whether
	 * it did; written by its own thread, read by the others under
	 * model_lock. */
	uint32_t apic_id;
	bool apic_known;
	/* The vCPU its next ICR write wakes (DB_CMD_WAKE, which sends the
	 * wake to pace then), -1: not named. This vCPU's only. */
	int wake_target;
} __attribute__((aligned(HOST_LINE_BYTES)));

/* Defined in cachemodel/plugin.c, set up at installation. */
extern pthread_mutex_t model_lock;
extern struct cm_model *model;
extern struct vcpu *vcpus;	/* nvcpus of them */
extern unsigned nvcpus;
extern FILE *out;		/* the @@MODEL lines (invariant 3) */
extern struct pace *pace;	/* NULL: one vCPU, or sync=0 */
extern int serial_turns;	/* serial=1: the whole run is serial */

/* cachemodel/plugin.c: the fast path's exclusion (invariant 1). With
 * model_lock held, fast_stop() returns when no vCPU is in
 * cm_access_fast() and none enters it until fast_restart(). */
void fast_stop(void);
void fast_restart(void);

/* cachemodel/plugin_counters.c. */

/* cpu's engine counters now, its instruction count among them (read
 * atomically; any thread). */
void stats_now(unsigned cpu, struct cm_stats *s);
/* cpu's busy modelled cycles: instructions x CPI + memory cycles. */
uint64_t busy_cycles(unsigned cpu);
/* The global modelled clock: the latest vCPU clock (busy cycles plus the
 * cycles a paced vCPU slept through; invariant 4). */
uint64_t global_clock(void);
/* The pause-wait counters of the summary line to out (cachemodel/pace.h,
 * invariant 7; zeros without pacing): "pause_waits" (pauses on a paced
 * run), how they ended ("pw_write", "pw_timeout", "pw_alone",
 * "pw_gave_up", "pw_none": did not sleep) and "pw_skipped_cycles";
 * comma separated, no comma before the first nor after the last. */
void pause_wait_summary(void);
/*
 * One @@MODEL line of kind ("region", "total") to out: the counters of
 * cpu from then to now, with label, id, scope (all: every CPU), iters
 * and by (the CPU that asked); extra: more ,"key":value fields for the
 * line, or "". With model_lock held (invariant 3).
 */
void print_counters(const char *kind, const char *label, int64_t id,
		    bool all, uint64_t iters, unsigned by, unsigned cpu,
		    const struct cm_stats *now, const struct cm_stats *then,
		    const char *extra);

/* cachemodel/plugin_doorbell.c. All with model_lock held. */

/* One read of size bytes of the doorbell page at offset off by cpu. */
void doorbell(unsigned cpu, uint64_t off, unsigned size);
/* At QEMU's exit: a region cpu left open is counted as an error. */
void doorbell_exit(unsigned cpu);
/* The doorbell's fields of the summary line to out: "hellos", "regions",
 * "type_changes", "doorbell_errors" and "doorbell_error_causes", comma
 * separated, with no comma before the first nor after the last. */
void doorbell_summary(void);

#endif
