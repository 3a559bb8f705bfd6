/*
 * The doorbell interpreter of the cache-model plugin: the kernel's reads
 * of the doorbell page (cachemodel/doorbell.h) are digits, pushes, label
 * characters and commands; this file turns them into type changes,
 * regions (begin, end, pause, resume), labels and hellos, and counts every
 * malformed or refused one. The invariants are cachemodel/plugin.c's
 * (2 and 3 here); the contracts are in cachemodel/plugin_internal.h.
 */
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include "cachemodel/plugin_internal.h"

/* PAT memory types (SDM vol. 3, 11.12.2), as SET_TYPE names them. */
#define PAT_UC 0
#define PAT_WC 1
#define PAT_WT 4
#define PAT_WP 5
#define PAT_WB 6
#define PAT_UC_MINUS 7

_Static_assert(DB_TYPE_MAP_BITS == CM_MAX_PHYS_BITS,
	       "the doorbell's promise is the engine's type map");

static uint64_t regions, hellos, type_changes, doorbell_errors;
/* DB_CMD_ALIGN: clocks moved; not moved (another CPU was not halted). */
static uint64_t aligned, unaligned;
/* How far past its clock a lone CPU's clock starts over at the hello
 * (cm_restart_clock()): past everything in flight, a memory access and
 * the bus's longest queue being hundreds of cycles. */
#define HELLO_CLOCK_MARGIN (1ull << 16)

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
 * elapsed modelled time, the quantum it was paced with (the coarser of
 * those at its begin and end: DB_CMD_QUANTUM; 0: unpaced), the
 * pacing breaks during it, whether it was paced serially at its begin
 * and end (DB_CMD_SERIAL), and whether its figures are valid (paced, no
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
	if (q && v->region_quantum > q)
		q = v->region_quantum;
	snprintf(buf, size, ",\"elapsed\":%" PRIu64 ",\"paced\":%" PRIu64
		 ",\"pace_breaks\":%" PRIu64 ",\"serial\":%s,\"valid\":%s",
		 end - v->region_clock, q, breaks,
		 q && v->region_serial && pace_serial(pace) ? "true" : "false",
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
	v->region_quantum = pace ? pace_quantum(pace) : 0;
	v->region_serial = pace && pace_serial(pace);
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

/*
 * The commands about pacing (cachemodel/pace.h): the quantum, serial
 * pacing, whose IPI wakes whom, an aligned start. Nothing on an unpaced
 * run but the checks. Called with model_lock held.
 */
static void db_pacing(unsigned cpu, struct vcpu *v, unsigned cmd,
		      uint64_t off)
{
	switch (cmd) {
	case DB_CMD_QUANTUM:
		if (v->nargs != 1) {
			db_error(DBE_ARGS, cpu, off);
			break;
		}
		if (pace)
			pace_set_quantum(pace, v->args[0]);
		break;
	case DB_CMD_CPU:
		if (v->nargs != 1 || v->args[0] > UINT32_MAX) {
			db_error(DBE_ARGS, cpu, off);
			break;
		}
		v->apic_id = (uint32_t)v->args[0];
		v->apic_known = true;
		break;
	case DB_CMD_WAKE:
		if (v->nargs != 1) {
			db_error(DBE_ARGS, cpu, off);
			break;
		}
		/* Under model_lock: every CPU's apic_id is stable here. */
		v->wake_target = -1;
		for (unsigned c = 0; c < nvcpus; c++)
			if (vcpus[c].apic_known &&
			    vcpus[c].apic_id == v->args[0])
				v->wake_target = (int)c;
		/* Now, before the ICR write: QEMU may run the woken CPU
		 * before the plugin hears of the write (its callback comes
		 * after the store), and it must find its wake's clock. */
		if (pace && v->wake_target >= 0)
			pace_wake_sent(pace, cpu, busy_cycles(cpu),
				       v->wake_target);
		break;
	case DB_CMD_SERIAL:
		if (v->nargs != 1 || v->args[0] > 1) {
			db_error(DBE_ARGS, cpu, off);
			break;
		}
		/* serial=1 on the plugin's line holds for the whole run;
		 * order=1 keeps it concurrent (ordering is the other way to
		 * take order from the host, and the one asked for). */
		if (pace && !serial_turns && !pace_ordering(pace))
			pace_set_serial(pace, v->args[0] == 1);
		break;
	case DB_CMD_ALIGN:
		if (v->nargs != 0) {
			db_error(DBE_ARGS, cpu, off);
			break;
		}
		if (pace)
			cm_rebase_clock(model, cpu);
		if (pace && pace_align(pace, cpu, busy_cycles(cpu),
				       cm_clock_window(), HELLO_CLOCK_MARGIN)) {
			aligned++;
			cm_set_skip(model, cpu, pace_skip(pace, cpu));
		} else if (pace) {
			unaligned++;
		}
		break;
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
		/* One CPU: what came before the kernel (how long the boot
		 * took, the host's to decide under -icount) stops showing
		 * in its clock. Several are paced on one time base. */
		if (nvcpus == 1)
			cm_restart_clock(model, cpu, HELLO_CLOCK_MARGIN);
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
	case DB_CMD_QUANTUM:
	case DB_CMD_CPU:
	case DB_CMD_WAKE:
	case DB_CMD_SERIAL:
	case DB_CMD_ALIGN:
		db_pacing(cpu, v, cmd, off);
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

void doorbell(unsigned cpu, uint64_t off, unsigned size)
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

void doorbell_exit(unsigned cpu)
{
	if (vcpus[cpu].region_open)
		db_error(DBE_OPEN_AT_EXIT, cpu, DB_CMD_BASE + DB_CMD_END);
}

void doorbell_summary(void)
{
	fprintf(out, "\"hellos\":%" PRIu64 ",\"regions\":%" PRIu64
		",\"type_changes\":%" PRIu64 ",\"doorbell_errors\":%" PRIu64
		",\"doorbell_error_causes\":{", hellos, regions, type_changes,
		doorbell_errors);
	for (unsigned e = 0; e < DB_NERRORS; e++)
		fprintf(out, "%s\"%s\":%" PRIu64, e ? "," : "",
			db_error_names[e], db_errors[e]);
	fprintf(out, "},\"aligned\":%" PRIu64 ",\"unaligned\":%" PRIu64,
		aligned, unaligned);
}
