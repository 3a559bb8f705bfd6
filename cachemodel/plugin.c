/*
 * The QEMU TCG plugin around the cache model: QEMU's callbacks in, the
 * engine's figures out as @@MODEL lines (docs/cachemodel.md).
 *
 *   qemu-system-x86_64 ... -plugin build/cachemodel/cachemodel.so,\
 *       profile=core2-2007,profiles=cachemodel/profiles.txt,out=model.jsonl
 *       [,sync=CYCLES]   (the pacing quantum; 0: no pacing)
 *
 * At translation time each instruction is classified from its bytes
 * (cachemodel/x86_insn.c): its memory callback carries the NT-store and
 * locked flags, fences and clflush get an execution callback. At run
 * time each access is translated to a physical address (the hwaddr API)
 * and given to the engine, except reads of the doorbell page
 * (cachemodel/doorbell.h), which are commands from the kernel.
 *
 * Invariants:
 *  1. The engine is entered with model_lock held, except for the fast
 *     path: under multi-threaded TCG the vCPU threads share the LLC and
 *     the other CPUs' private caches (snoops), so every engine call but
 *     cm_access_fast() is one critical section. cm_access_fast() (an
 *     access that needs only the vCPU's own state, such as an L1D hit
 *     needing no coherence action: most of them) runs without a lock,
 *     between fast_enter() and fast_leave(); a thread that needs the
 *     engine to leave the vCPUs' WC buffers and counters alone
 *     (cm_set_type(), cm_clflush_lines() flushing their WC buffers)
 *     holds model_lock and calls fast_stop() first, fast_restart()
 *     after. Without membarrier(2) every access takes the slow path.
 *  2. Per-vCPU state (doorbell arguments, pending label characters, open
 *     region, instruction count) is written only by that vCPU's
 *     callbacks; instruction counts and the engine's counters are read
 *     by other threads with atomic loads (region snapshots read every
 *     CPU's). The current label is global, under model_lock.
 *  3. Output lines are written whole under model_lock.
 *  4. With more than one vCPU, the vCPUs are paced (cachemodel/pace.h):
 *     at every translation block a vCPU publishes its modelled clock
 *     (instructions x CPI + memory cycles, plus the cycles it slept
 *     through) and waits, no lock held, while it is more than the quantum
 *     (sync=, PACE_DEFAULT_QUANTUM) ahead of the slowest runnable vCPU.
 *     An IPI sent through the xAPIC's ICR wakes halted vCPUs at the
 *     sender's clock. The engine's clock of a vCPU includes the cycles
 *     it slept through (cm_set_skip() after every tick and resume), so
 *     the bus and line hand-overs compare clocks on the paced time base.
 *     A region's elapsed time is the global modelled
 *     clock (the latest vCPU clock) at its end minus at its start; a
 *     region during which pacing was broken, or a multi-vCPU region that
 *     was not paced, says "valid":false in its line.
 *  5. Each vCPU caches the physical page of the virtual pages it used
 *     (QEMU's hwaddr lookup is a large part of the cost), like a TLB:
 *     the cache is emptied whenever that vCPU executes an instruction
 *     that changes translations (mov to CR0/CR3/CR4, invlpg, invpcid), so
 *     it never holds a translation QEMU's own TLB would not.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include "cachemodel/doorbell.h"
#include "cachemodel/model.h"
#include "cachemodel/pace.h"
#include "cachemodel/profile.h"
#include "cachemodel/qemu_plugin_api.h"
#include "cachemodel/x86_insn.h"

#define PREFIX "@@MODEL "
#define DEFAULT_PROFILES "cachemodel/profiles.txt"
#define PROFILES_MAX_BYTES (1u << 20)
#define ERR_MAX 256
#define PAT_UC 0
#define PAT_WC 1
#define PAT_WT 4
#define PAT_WP 5
#define PAT_WB 6
#define PAT_UC_MINUS 7
#define XLAT_BITS 8
#define XLAT_ENTRIES (1u << XLAT_BITS)	/* per vCPU, direct mapped */
/* Fibonacci hashing of the page number: a copy's source and destination
 * pages, a power of two apart, would share a slot if it were indexed by
 * the low bits and evict each other on every access. */
#define XLAT_HASH 0x9e3779b97f4a7c15ull
/* The local APIC's interrupt command register, low half, at the xAPIC's
 * default base (SDM vol. 3, 11.4.1 and 11.6.1): writing it sends an IPI.
 * x2APIC's ICR is an MSR, which a plugin cannot see. */
#define XAPIC_DEFAULT_BASE 0xfee00000ull
#define APIC_REG_ICR_LOW 0x300
#define GUEST_PAGE_SHIFT 12
#define GUEST_PAGE_MASK ((1ull << GUEST_PAGE_SHIFT) - 1)

/* One remembered translation (invariant 5). */
struct xlat {
	uint64_t vpage;		/* virtual page number + 1; 0 = empty */
	uint64_t ppage;		/* physical page number */
	bool io;		/* a device region, not RAM */
};

QEMU_PLUGIN_EXPORT int qemu_plugin_version = CM_QEMU_PLUGIN_VERSION;

/* Host cache line: vCPUs' states are aligned to it (no false sharing). */
#define HOST_LINE_BYTES 64

_Static_assert(DB_TYPE_MAP_BITS == CM_MAX_PHYS_BITS,
	       "the doorbell's promise is the engine's type map");

struct vcpu {
	uint32_t in_fast;		/* inside cm_access_fast() */
	uint64_t insns;			/* atomic (invariant 2) */
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
	struct xlat xlat[XLAT_ENTRIES];	/* this vCPU's only (invariant 5) */
	/* Line + 1 of the last rep-string load [0] and store [1] (0: none),
	 * this vCPU's only: see rep_string_again(). */
	uint64_t rep_line[2];
} __attribute__((aligned(HOST_LINE_BYTES)));

static pthread_mutex_t model_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cm_model *model;
static struct vcpu *vcpus;
static unsigned nvcpus;
static FILE *out;
static struct timespec started;
static uint64_t regions, hellos, type_changes, doorbell_errors;

/*
 * Doorbell errors by cause. Every malformed or refused command is
 * counted, none is silent: the summary line prints the total and the
 * causes, the first DB_ERRORS_SHOWN errors get a line of their own, and
 * tools/model/model.py fails a run with any (a figure measured around a
 * command the model did not take is not the figure it claims to be).
 */
enum db_error {
	DBE_OFFSET,		/* a read outside the page's symbols */
	DBE_WIDTH,		/* a read wider than one byte */
	DBE_LONG_NUMBER,	/* a number longer than 64 bits */
	DBE_EMPTY_NUMBER,	/* PUSH without a DIGIT since the last */
	DBE_TOO_MANY_ARGS,	/* a PUSH beyond DB_MAX_ARGS */
	DBE_UNPUSHED,		/* a command after DIGITs not pushed */
	DBE_COMMAND,		/* an unknown command */
	DBE_ARGS,		/* a command with the wrong arguments */
	DBE_TYPE_RANGE,		/* SET_TYPE the engine refused */
	DBE_NESTED,		/* BEGIN while this CPU's region is open */
	DBE_REGION,		/* END/PAUSE/RESUME not of the open region */
	DBE_LABEL,		/* a label character refused or too many */
	DBE_OPEN_AT_EXIT,	/* a region still open when QEMU exits */
	DB_NERRORS
};
static const char *const db_error_names[DB_NERRORS] = {
	[DBE_OFFSET] = "offset",
	[DBE_WIDTH] = "wide_read",
	[DBE_LONG_NUMBER] = "long_number",
	[DBE_EMPTY_NUMBER] = "empty_number",
	[DBE_TOO_MANY_ARGS] = "too_many_args",
	[DBE_UNPUSHED] = "unpushed_digits",
	[DBE_COMMAND] = "unknown_command",
	[DBE_ARGS] = "bad_arguments",
	[DBE_TYPE_RANGE] = "type_range",
	[DBE_NESTED] = "nested_begin",
	[DBE_REGION] = "no_such_region",
	[DBE_LABEL] = "label",
	[DBE_OPEN_AT_EXIT] = "open_at_exit",
};
#define DB_ERRORS_SHOWN 8
/* A DIGIT shifts the accumulator left: its top byte must still be 0. */
#define DB_ACC_TOP_SHIFT (sizeof(uint64_t) * CHAR_BIT - DB_DIGIT_BITS)
static uint64_t db_errors[DB_NERRORS];
/* The last label any CPU set: an experiment names itself on one CPU and
 * runs its repetitions on several. */
static char label[DB_LABEL_MAX];
static uint64_t quantum = PACE_DEFAULT_QUANTUM;	/* sync=; 0: unpaced */
static struct pace *pace;	/* NULL: one vCPU, or sync=0 */

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* ------------------------------------------------------------------ */
/* Output                                                               */

static void stats_now(unsigned cpu, struct cm_stats *s)
{
	cm_stats_read(model, cpu, s);
	s->insns = __atomic_load_n(&vcpus[cpu].insns, __ATOMIC_RELAXED);
}

/* cpu's busy modelled cycles: instructions x CPI + memory cycles. */
static uint64_t busy_cycles(unsigned cpu)
{
	struct cm_stats s;

	stats_now(cpu, &s);
	return cm_cycles(model, &s);
}

/* The global modelled clock: the latest vCPU clock (busy cycles plus the
 * cycles a paced vCPU slept through; invariant 4). */
static uint64_t global_clock(void)
{
	uint64_t max = 0;

	for (unsigned c = 0; c < nvcpus; c++) {
		uint64_t t = busy_cycles(c) + (pace ? pace_skip(pace, c) : 0);

		if (t > max)
			max = t;
	}
	return max;
}

/* ------------------------------------------------------------------ */
/* Fast-path exclusion (invariant 1)                                    */

/*
 * An asymmetric Dekker handshake, so that the fast path, taken on most
 * accesses, needs no atomic read-modify-write and no fence: a vCPU
 * announces itself in v->in_fast, then reads fast_stopped; fast_stop()
 * sets fast_stopped, has every running thread of QEMU execute a full
 * memory barrier (membarrier(2), private expedited: IPIs, microseconds,
 * a handful of times per boot), then waits for every in_fast to drop.
 * Either a vCPU's in_fast store was before its barrier, so fast_stop()
 * sees it and waits, or its fast_stopped load was after it, so it sees
 * the stop and takes the slow path.
 */
static uint32_t fast_stopped;	/* written under model_lock; 1 for good
				 * when the fast path is off */
static bool fast_path_on;	/* membarrier registered */

static long membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

/* True if cpu may run cm_access_fast() now; then call fast_leave(). */
static bool fast_enter(struct vcpu *v)
{
	__atomic_store_n(&v->in_fast, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&fast_stopped, __ATOMIC_ACQUIRE))
		return true;
	__atomic_store_n(&v->in_fast, 0, __ATOMIC_RELEASE);
	return false;
}

static void fast_leave(struct vcpu *v)
{
	__atomic_store_n(&v->in_fast, 0, __ATOMIC_RELEASE);
}

/* With model_lock held: returns when no vCPU is in the fast path, and
 * none enters it until fast_restart(). */
static void fast_stop(void)
{
	if (!fast_path_on)
		return;
	__atomic_store_n(&fast_stopped, 1, __ATOMIC_RELAXED);
	if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)) {
		/* Registered at install, so it cannot fail; if it did,
		 * a hang or a race would be worse than a slow run. */
		fprintf(stderr, "cachemodel plugin: membarrier failed (%s); "
			"the fast path is off from now on\n", strerror(errno));
		fast_path_on = false;	/* fast_stopped stays 1 */
	}
	for (unsigned c = 0; c < nvcpus; c++)
		while (__atomic_load_n(&vcpus[c].in_fast, __ATOMIC_ACQUIRE))
			sched_yield();
}

static void fast_restart(void)
{
	if (fast_path_on)
		__atomic_store_n(&fast_stopped, 0, __ATOMIC_RELEASE);
}

#define DIFF(f) d.f = now->f - then->f
/* extra: more ,"key":value fields for the line, or "". */
static void print_counters(const char *kind, const char *label, int64_t id,
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
	DIFF(line_queued);
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
		",\"line_queued\":%" PRIu64
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
		d.line_queued,
		cm_cycles(model, &d), extra);
}

/* ------------------------------------------------------------------ */
/* Doorbell                                                             */

/* Count one doorbell error of cause e on cpu, at doorbell offset off; the
 * first few get a line. Called with model_lock held. */
static void db_error(enum db_error e, unsigned cpu, uint64_t off)
{
	if (doorbell_errors++ < DB_ERRORS_SHOWN)
		fprintf(out, PREFIX "{\"kind\":\"doorbell_error\","
			"\"cause\":\"%s\",\"cpu\":%u,\"offset\":%" PRIu64
			",\"label\":\"%s\"}\n", db_error_names[e], cpu, off,
			label);
	db_errors[e]++;
}

static bool pat_to_cm(uint64_t pat, enum cm_memtype *t)
{
	switch (pat) {
	case PAT_UC: *t = CM_UC; return true;
	case PAT_WC: *t = CM_WC; return true;
	case PAT_WT: *t = CM_WT; return true;
	case PAT_WP: *t = CM_WP; return true;
	case PAT_WB: *t = CM_WB; return true;
	case PAT_UC_MINUS: *t = CM_UC_MINUS; return true;
	default: return false;
	}
}

/*
 * The timing fields of v's region, ending now, for its lines (invariant
 * 4): none with one vCPU (those lines stay as they were); else its
 * elapsed modelled time, the quantum it was paced with (0: unpaced), the
 * pacing breaks during it, and whether its figures are valid (paced, no
 * break). An END while paused ends at the pause.
 */
static void region_timing(const struct vcpu *v, char *buf, size_t size)
{
	uint64_t end = v->region_paused ? v->paused_clock : global_clock();
	uint64_t breaks = pace ? pace_breaks(pace) - v->region_breaks : 0;
	uint64_t q = pace && pace_on(pace) ? pace_quantum(pace) : 0;

	if (nvcpus == 1) {
		buf[0] = '\0';
		return;
	}
	snprintf(buf, size, ",\"elapsed\":%" PRIu64 ",\"paced\":%" PRIu64
		 ",\"pace_breaks\":%" PRIu64 ",\"valid\":%s",
		 end - v->region_clock, q, breaks,
		 q && !breaks ? "true" : "false");
}

/* BEGIN id [scope]: open v's region, snapshotting every CPU's counts.
 * Called with model_lock held. */
static void db_region_begin(unsigned cpu, struct vcpu *v, uint64_t off)
{
	if (v->nargs < 1 || v->nargs > 2 ||
	    (v->nargs == 2 && v->args[1] != DB_SCOPE_CPU &&
	     v->args[1] != DB_SCOPE_ALL)) {
		db_error(DBE_ARGS, cpu, off);
		return;
	}
	if (v->region_open) {
		/* The open region stays; its END still closes it. */
		db_error(DBE_NESTED, cpu, off);
		return;
	}
	v->region_open = true;
	v->region_all = v->nargs == 2 && v->args[1] == DB_SCOPE_ALL;
	v->region_paused = false;
	v->region_id = v->args[0];
	memcpy(v->region_label, label, sizeof(label));
	for (unsigned c = 0; c < nvcpus; c++)
		stats_now(c, &v->snap[c]);
	v->region_clock = global_clock();
	v->region_breaks = pace ? pace_breaks(pace) : 0;
}

/* END id iters: close v's region and print each busy CPU's counts in it.
 * Called with model_lock held. */
static void db_region_end(unsigned cpu, struct vcpu *v, uint64_t off)
{
	char extra[ERR_MAX];
	struct cm_stats now;

	if (v->nargs != 2) {
		db_error(DBE_ARGS, cpu, off);
		return;
	}
	if (!v->region_open || v->region_id != v->args[0]) {
		db_error(DBE_REGION, cpu, off);
		return;
	}
	v->region_open = false;
	regions++;
	region_timing(v, extra, sizeof(extra));
	for (unsigned c = 0; c < nvcpus; c++) {
		/* Ended while paused: the counts up to the pause. */
		if (v->region_paused)
			now = v->paused_at[c];
		else
			stats_now(c, &now);
		/* CPUs that did nothing (halted) are left out. */
		if (now.insns == v->snap[c].insns &&
		    now.loads + now.stores ==
			    v->snap[c].loads + v->snap[c].stores)
			continue;
		print_counters("region", v->region_label,
			       (int64_t)v->region_id, v->region_all,
			       v->args[1], cpu, c, &now, &v->snap[c],
			       extra);
	}
}

/* PAUSE id / RESUME id (cmd): leave the counts between the two out of
 * v's open region. Called with model_lock held. */
static void db_region_pause(unsigned cpu, struct vcpu *v, unsigned cmd,
			    uint64_t off)
{
	struct cm_stats now;

	if (v->nargs != 1) {
		db_error(DBE_ARGS, cpu, off);
		return;
	}
	if (!v->region_open || v->region_id != v->args[0] ||
	    v->region_paused != (cmd == DB_CMD_RESUME)) {
		db_error(DBE_REGION, cpu, off);
		return;
	}
	v->region_paused = cmd == DB_CMD_PAUSE;
	if (cmd == DB_CMD_PAUSE)
		v->paused_clock = global_clock();
	else
		v->region_clock += global_clock() - v->paused_clock;
	for (unsigned c = 0; c < nvcpus; c++) {
		stats_now(c, &now);
		if (cmd == DB_CMD_PAUSE)
			v->paused_at[c] = now;
		else
			cm_stats_skip(&v->snap[c], &v->paused_at[c],
				      &now);
	}
}

/* Called with model_lock held. */
static void doorbell_command(unsigned cpu, struct vcpu *v, unsigned cmd)
{
	const uint64_t off = DB_CMD_BASE + cmd;
	enum cm_memtype t;
	bool ok;

	if (v->digits) {
		/* The last number was never pushed: not the command sent. */
		db_error(DBE_UNPUSHED, cpu, off);
		goto reset;
	}
	switch (cmd) {
	case DB_CMD_HELLO:
		if (v->nargs != 1) {
			db_error(DBE_ARGS, cpu, off);
			break;
		}
		hellos++;
		fprintf(out, PREFIX "{\"kind\":\"hello\",\"profile\":\"%s\","
			"\"cpu\":%u,\"version\":%" PRIu64 ",\"supported\":%d}\n",
			cm_profile(model)->name, cpu,
			v->nargs ? v->args[0] : 0, DB_VERSION);
		break;
	case DB_CMD_SET_TYPE:
		if (v->nargs != 3 || !pat_to_cm(v->args[2], &t) ||
		    v->args[1] > (UINT64_MAX >> CM_PAGE_SHIFT)) {
			db_error(DBE_ARGS, cpu, off);
			break;
		}
		fast_stop();
		ok = cm_set_type(model, v->args[0],
				 v->args[1] << CM_PAGE_SHIFT, t);
		fast_restart();
		if (ok)
			type_changes++;
		else
			db_error(DBE_TYPE_RANGE, cpu, off);
		break;
	case DB_CMD_BEGIN:
		db_region_begin(cpu, v, off);
		break;
	case DB_CMD_END:
		db_region_end(cpu, v, off);
		break;
	case DB_CMD_PAUSE:
	case DB_CMD_RESUME:
		db_region_pause(cpu, v, cmd, off);
		break;
	case DB_CMD_CLFLUSHED:
		if (v->nargs != 2) {
			db_error(DBE_ARGS, cpu, off);
			break;
		}
		fast_stop();	/* it may flush other CPUs' WC buffers */
		cm_clflush_lines(model, cpu, v->args[0], v->args[1]);
		fast_restart();
		break;
	case DB_CMD_LABEL:
		if (v->nargs != 0) {
			db_error(DBE_ARGS, cpu, off);
			break;
		}
		memcpy(label, v->pending, v->pending_len);
		label[v->pending_len] = '\0';
		v->pending_len = 0;
		break;
	default:
		db_error(DBE_COMMAND, cpu, off);
		break;
	}
reset:
	v->nargs = 0;
	v->acc = 0;
	v->digits = false;
}

static bool label_char_ok(unsigned ch)
{
	/* Plain printable ASCII, nothing JSON would need to escape. */
	return ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\';
}

/* One read of size bytes of the doorbell page at offset off. Called with
 * model_lock. */
static void doorbell(unsigned cpu, uint64_t off, unsigned size)
{
	struct vcpu *v = &vcpus[cpu];
	unsigned byte = off & DB_BYTE_MASK;

	if (size != 1) {
		/* Which byte would be the symbol? None: refused. */
		db_error(DBE_WIDTH, cpu, off);
	} else if (off < DB_PUSH) {
		if (v->acc >> DB_ACC_TOP_SHIFT)
			db_error(DBE_LONG_NUMBER, cpu, off);
		v->acc = v->acc << DB_DIGIT_BITS | byte;
		v->digits = true;
	} else if (off == DB_PUSH) {
		if (!v->digits)
			db_error(DBE_EMPTY_NUMBER, cpu, off);
		else if (v->nargs < DB_MAX_ARGS)
			v->args[v->nargs++] = v->acc;
		else
			db_error(DBE_TOO_MANY_ARGS, cpu, off);
		v->acc = 0;
		v->digits = false;
	} else if (off >= DB_CMD_BASE && off < DB_CMD_BASE + 0x100) {
		doorbell_command(cpu, v, byte);
	} else if (off >= DB_CHAR_BASE && off < DB_CHAR_BASE + 0x100) {
		if (v->pending_len + 1 < DB_LABEL_MAX && label_char_ok(byte))
			v->pending[v->pending_len++] = (char)byte;
		else
			db_error(DBE_LABEL, cpu, off);
	} else {
		db_error(DBE_OFFSET, cpu, off);
	}
}

/* ------------------------------------------------------------------ */
/* Pacing (invariant 4; cachemodel/pace.h)                             */

/* QEMU calls these on the vCPU's own thread, as pace.h requires. */
static void on_idle(qemu_plugin_id_t id, unsigned int cpu)
{
	(void)id;
	if (cpu < nvcpus)
		pace_idle(pace, cpu);
}

static void on_resume(qemu_plugin_id_t id, unsigned int cpu)
{
	(void)id;
	if (cpu >= nvcpus)
		return;
	pace_resume(pace, cpu, busy_cycles(cpu));
	/* The engine's clock joins the paced one (cachemodel/model.h, 5). */
	cm_set_skip(model, cpu, pace_skip(pace, cpu));
}

/* ------------------------------------------------------------------ */
/* Callbacks                                                            */

/*
 * The physical address of vaddr for cpu, and whether it is a device
 * region; false if QEMU cannot say.
 */
static bool translate(unsigned cpu, qemu_plugin_meminfo_t info,
		      uint64_t vaddr, uint64_t *pa, bool *io)
{
	uint64_t vpage = vaddr >> GUEST_PAGE_SHIFT;
	struct xlat *x =
		&vcpus[cpu].xlat[(vpage * XLAT_HASH) >> (64 - XLAT_BITS)];
	struct qemu_plugin_hwaddr *hw;

	if (x->vpage != vpage + 1) {
		hw = qemu_plugin_get_hwaddr(info, vaddr);
		if (!hw)
			return false;
		x->vpage = vpage + 1;
		x->ppage = qemu_plugin_hwaddr_phys_addr(hw) >> GUEST_PAGE_SHIFT;
		x->io = qemu_plugin_hwaddr_is_io(hw);
	}
	*pa = x->ppage << GUEST_PAGE_SHIFT | (vaddr & GUEST_PAGE_MASK);
	*io = x->io;
	return true;
}

/*
 * rep movs / rep stos reach the plugin as one access per element (TCG
 * runs them as a loop); the hardware's fast strings move whole lines.
 * The model sees one access per line and direction: the first element
 * in a line stands for the rest of the line, the others are dropped.
 * Any other access ends the string (the next rep string starts afresh).
 * Returns true if this element is to be dropped.
 */
static bool rep_string_again(struct vcpu *v, unsigned insn, uint64_t pa,
			     bool store)
{
	uint64_t line = (pa >> CM_LINE_SHIFT) + 1;

	if (!(insn & X86_REP_STRING)) {
		v->rep_line[0] = v->rep_line[1] = 0;
		return false;
	}
	if (v->rep_line[store] == line)
		return true;
	v->rep_line[store] = line;
	return false;
}

static void on_mem(unsigned int cpu, qemu_plugin_meminfo_t info,
		   uint64_t vaddr, void *udata)
{
	unsigned insn = (unsigned)(uintptr_t)udata;
	bool store = qemu_plugin_mem_is_store(info);
	unsigned flags = 0, size;
	uint64_t pa;
	bool io;

	if (cpu >= nvcpus)
		return;
	if (vaddr - DB_VA < DB_SIZE) {
		if (!store) {
			pthread_mutex_lock(&model_lock);
			doorbell(cpu, vaddr - DB_VA,
				 1u << qemu_plugin_mem_size_shift(info));
			pthread_mutex_unlock(&model_lock);
		}
		return;
	}
	if (!translate(cpu, info, vaddr, &pa, &io))
		return;
	if (rep_string_again(&vcpus[cpu], insn, pa, store))
		return;
	if (store)
		flags |= CM_STORE;
	if (store && (insn & X86_NT_STORE))
		flags |= CM_NT;
	if (insn & X86_LOCKED)
		flags |= CM_LOCKED;
	if (io)
		flags |= CM_IO;
	/* An IPI: halted vCPUs wake at this clock (cachemodel/pace.h, 6). */
	if (pace && store && io && pa == XAPIC_DEFAULT_BASE + APIC_REG_ICR_LOW)
		pace_wake_sent(pace, cpu, busy_cycles(cpu));
	size = insn & X86_REP_STRING ? CM_LINE_SIZE - (pa & (CM_LINE_SIZE - 1))
				     : 1u << qemu_plugin_mem_size_shift(info);
	if (fast_enter(&vcpus[cpu])) {
		bool done = cm_access_fast(model, cpu, pa, size, flags);

		fast_leave(&vcpus[cpu]);
		if (done)
			return;
	}
	pthread_mutex_lock(&model_lock);
	cm_access(model, cpu, pa, size, flags);
	pthread_mutex_unlock(&model_lock);
}

static void on_special(unsigned int cpu, void *udata)
{
	unsigned insn = (unsigned)(uintptr_t)udata;

	if (cpu >= nvcpus)
		return;
	if (insn & X86_TLB_FLUSH) {
		/* This vCPU's own state: no lock (invariant 5). */
		memset(vcpus[cpu].xlat, 0, sizeof(vcpus[cpu].xlat));
		return;
	}
	pthread_mutex_lock(&model_lock);
	if (insn & X86_SFENCE)
		cm_fence(model, cpu, CM_SFENCE);
	if (insn & X86_MFENCE)
		cm_fence(model, cpu, CM_MFENCE);
	if (insn & X86_CLFLUSH)
		cm_clflush_unseen(model, cpu);
	pthread_mutex_unlock(&model_lock);
}

static void on_tb(unsigned int cpu, void *udata)
{
	/* Only this vCPU's thread writes its count: no read-modify-write
	 * atomic needed, just an atomic store for the readers. */
	if (cpu < nvcpus) {
		uint64_t *n = &vcpus[cpu].insns;

		__atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) +
				 (uint64_t)(uintptr_t)udata, __ATOMIC_RELAXED);
		/* The engine's clock (bus, fill and store buffers, prefetch
		 * timeliness) counts instructions too. */
		cm_instructions(model, cpu, (uint64_t)(uintptr_t)udata);
		/* The block's instructions are counted before it runs: its
		 * clock includes them when it waits (invariant 4). */
		if (pace) {
			pace_tick(pace, cpu, busy_cycles(cpu));
			cm_set_skip(model, cpu, pace_skip(pace, cpu));
		}
	}
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)n);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		unsigned kind = x86_insn_classify(qemu_plugin_insn_data(insn),
						  qemu_plugin_insn_size(insn));

		/* QEMU calls it only at the instruction's memory
		 * operations: instructions without any cost nothing at run
		 * time. (One callback per direction, QEMU_PLUGIN_MEM_R and
		 * _W, would save asking the direction, but on QEMU 7.2 that
		 * miscounted: the doorbell's loads never reached the load
		 * callback.) */
		qemu_plugin_register_vcpu_mem_cb(insn, on_mem,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW,
						 (void *)(uintptr_t)kind);
		if (kind & (X86_SFENCE | X86_MFENCE | X86_CLFLUSH |
			    X86_TLB_FLUSH))
			qemu_plugin_register_vcpu_insn_exec_cb(
				insn, on_special, QEMU_PLUGIN_CB_NO_REGS,
				(void *)(uintptr_t)kind);
	}
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
	struct cm_stats now, zero;

	(void)id;
	(void)udata;
	memset(&zero, 0, sizeof(zero));
	pthread_mutex_lock(&model_lock);
	for (unsigned c = 0; c < nvcpus; c++) {
		stats_now(c, &now);
		print_counters("total", "", -1, false, 0, c, c, &now, &zero,
			       "");
		if (vcpus[c].region_open)
			db_error(DBE_OPEN_AT_EXIT, c, DB_CMD_BASE + DB_CMD_END);
	}
	fprintf(out, PREFIX "{\"kind\":\"summary\",\"profile\":\"%s\","
		"\"cpus\":%u,\"hellos\":%" PRIu64 ",\"regions\":%" PRIu64
		",\"type_changes\":%" PRIu64 ",\"doorbell_errors\":%" PRIu64
		",\"doorbell_error_causes\":{", cm_profile(model)->name, nvcpus,
		hellos, regions, type_changes, doorbell_errors);
	for (unsigned e = 0; e < DB_NERRORS; e++)
		fprintf(out, "%s\"%s\":%" PRIu64, e ? "," : "",
			db_error_names[e], db_errors[e]);
	fprintf(out, "}"
		",\"paced\":%" PRIu64 ",\"pace_waits\":%" PRIu64
		",\"pace_stalls\":%" PRIu64 ",\"pace_breaks\":%" PRIu64
		",\"state_bytes\":%zu,\"host_seconds\":%.3f}\n",
		pace && pace_on(pace) ? pace_quantum(pace) : 0,
		pace ? pace_waits(pace) : 0, pace ? pace_stalls(pace) : 0,
		pace ? pace_breaks(pace) : 0,
		cm_state_bytes(model), seconds_since(&started));
	fclose(out);
	out = NULL;
	pthread_mutex_unlock(&model_lock);
}

/* ------------------------------------------------------------------ */
/* Installation                                                         */

static char *read_text(const char *path, char *err, size_t err_size)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f) {
		snprintf(err, err_size, "cannot open %s: %s", path,
			 strerror(errno));
		return NULL;
	}
	buf = malloc(PROFILES_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	n = fread(buf, 1, PROFILES_MAX_BYTES + 1, f);
	fclose(f);
	if (n > PROFILES_MAX_BYTES) {
		free(buf);
		snprintf(err, err_size, "%s is larger than %u bytes", path,
			 PROFILES_MAX_BYTES);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

static int fail(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "cachemodel plugin: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n");
	return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info, int argc,
					   char **argv)
{
	const char *profile = NULL, *profiles = DEFAULT_PROFILES;
	const char *out_path = NULL;
	char err[ERR_MAX], num[32];
	struct cm_profile p;
	char *text;

	clock_gettime(CLOCK_MONOTONIC, &started);
	if (info->version.cur < CM_QEMU_PLUGIN_VERSION ||
	    info->version.min > CM_QEMU_PLUGIN_VERSION) {
		snprintf(num, sizeof(num), "%d..%d", info->version.min,
			 info->version.cur);
		return fail("this QEMU offers plugin API versions %s; the "
			    "plugin is written for version 1 (QEMU 7.x)%s",
			    num, "");
	}
	if (!info->system_emulation || strcmp(info->target_name, "x86_64"))
		return fail("needs qemu-system-x86_64 (this is %s%s)",
			    info->target_name,
			    info->system_emulation ? "" : " user mode");
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "profile=", 8))
			profile = argv[i] + 8;
		else if (!strncmp(argv[i], "profiles=", 9))
			profiles = argv[i] + 9;
		else if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
		else if (!strncmp(argv[i], "sync=", 5)) {
			char *end;

			quantum = strtoull(argv[i] + 5, &end, 10);
			if (argv[i][5] < '0' || argv[i][5] > '9' || *end)
				return fail("sync=%s: expected a number of "
					    "cycles%s", argv[i] + 5, "");
		}
		else
			return fail("unknown argument '%s' (known: profile=, "
				    "profiles=, out=, sync=)%s", argv[i], "");
	}
	if (!profile || !out_path)
		return fail("profile=NAME and out=FILE are required%s%s", "",
			    "");
	text = read_text(profiles, err, sizeof(err));
	if (!text)
		return fail("%s%s", err, "");
	if (!cm_profile_parse(text, profile, &p, err, sizeof(err))) {
		free(text);
		return fail("%s: %s", profiles, err);
	}
	free(text);
	nvcpus = (unsigned)info->system.max_vcpus;
	if (nvcpus < 1 || nvcpus > CM_MAX_CPUS) {
		snprintf(num, sizeof(num), "%u", nvcpus);
		return fail("%s CPUs; the model handles 1..64%s", num, "");
	}
	model = cm_create(&p, nvcpus);
	vcpus = aligned_alloc(HOST_LINE_BYTES, nvcpus * sizeof(*vcpus));
	if (vcpus)
		memset(vcpus, 0, nvcpus * sizeof(*vcpus));
	if (nvcpus > 1 && quantum)
		pace = pace_create(nvcpus, quantum, PACE_DEFAULT_BLOCKED_NS);
	if (!model || !vcpus || (nvcpus > 1 && quantum && !pace))
		return fail("out of memory for the model%s%s", "", "");
	for (unsigned c = 0; c < nvcpus; c++) {
		vcpus[c].snap = calloc(nvcpus, sizeof(struct cm_stats));
		vcpus[c].paused_at = calloc(nvcpus, sizeof(struct cm_stats));
		if (!vcpus[c].snap || !vcpus[c].paused_at)
			return fail("out of memory%s%s", "", "");
	}
	out = fopen(out_path, "w");
	if (!out)
		return fail("cannot write %s: %s", out_path, strerror(errno));
	fprintf(out, PREFIX "{\"kind\":\"start\",\"profile\":\"%s\","
		"\"cpus\":%u,\"api\":%d,\"freq_mhz\":%u,\"cpi_x100\":%u}\n",
		p.name, nvcpus, info->version.cur, p.freq_mhz, p.cpi_x100);
	/* The fast path needs membarrier(2) (Linux 4.14). */
	fast_path_on =
		membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
	fast_stopped = !fast_path_on;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	if (pace) {
		qemu_plugin_register_vcpu_idle_cb(id, on_idle);
		qemu_plugin_register_vcpu_resume_cb(id, on_resume);
	}
	return 0;
}
