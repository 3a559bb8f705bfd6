/*
 * The shell's trace command (kernel/shell/shell_table.c has its grammar): turn
 * the flight recorder on and off, per event; count the records lost, by
 * cause; decode and print the newest records of every CPU. It lives in
 * trace/ because the shell (kernel/) sits below the trace buffers; the
 * shell finds it through SHELL_HANDLER.
 *
 * The dump reads whole sub-buffers with rb_read_packet() and decodes
 * their records with trace/packet.c (the packet format is drawn in
 * trace/packet.h). Payload fields are unsigned integers in declaration
 * order at their natural alignment (trace_point() builds them as plain
 * structs), so one table of field names and sizes, expanded from
 * TRACE_EVENTS, is enough to print them.
 *
 * Invariants:
 *  1. The dump runs with every event off and the owners writing no more
 *     (the shell runs between experiments), so rb_flush() from this CPU
 *     is allowed and the reader is alone.
 *  2. A damaged packet (a header the decoder refuses, a record whose
 *     header or fields do not fit the content, an unknown event id) ends
 *     the decoding of that packet with a message, never a read past the
 *     copy.
 */
#include <stdint.h>
#include "arch/x86_64/percpu.h"
#include "kernel/shell/shell_cmds.h"
#include "kernel/shell/shell_table.h"
#include "lib/compiler.h"
#include "lib/kprintf.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "trace/packet.h"
#include "trace/ring_buffer.h"
#include "trace/trace.h"

/* Records printed per CPU by trace dump (the newest ones). */
#define DUMP_NEWEST 8
/* The most fields an event declares (ramfs_page, ramfs_op: three). */
#define EVENT_MAX_FIELDS 3

/* An event's payload: field count and alignment (its struct's). */
struct event_layout {
	unsigned nfields;
	unsigned payload_align;
};

/* TRACE_EVENTS expanded three times: the layouts, the field names and
 * the field sizes (a field macro cannot be swapped within one pass). */
#define LAYOUT_FIELD_ONE_(type, field) +1
#define LAYOUT_FIELD_NAME_(type, field) #field,
#define LAYOUT_FIELD_SIZE_(type, field) sizeof(type),
#define LAYOUT_EV_(name, fields)                                            \
	[TRACE_ID_##name] = {0 fields,                                      \
			     _Alignof(struct trace_payload_##name)},
static const struct event_layout layouts[TRACE_EVENT_NR] = {
	TRACE_EVENTS(LAYOUT_EV_, LAYOUT_FIELD_ONE_)};
#define LAYOUT_LIST_(name, fields) {fields},
static const char *const field_names[TRACE_EVENT_NR][EVENT_MAX_FIELDS] = {
	TRACE_EVENTS(LAYOUT_LIST_, LAYOUT_FIELD_NAME_)};
static const unsigned field_sizes[TRACE_EVENT_NR][EVENT_MAX_FIELDS] = {
	TRACE_EVENTS(LAYOUT_LIST_, LAYOUT_FIELD_SIZE_)};

static const char *const lost_cause_names[RB_LOST_NR] = {
	[RB_LOST_FULL] = "full",
	[RB_LOST_TOO_BIG] = "too-big",
	[RB_LOST_NESTING] = "nesting",
	[RB_LOST_OVERWRITTEN] = "overwritten",
};

/* One decoded record, kept while the newest DUMP_NEWEST are collected. */
struct dumped {
	uint32_t id;
	uint64_t tsc;
	uint64_t value[EVENT_MAX_FIELDS];
};


static int event_by_name(const char *name)
{
	for (unsigned id = 0; id < TRACE_EVENT_NR; id++)
		if (strcmp(trace_event_name(id), name) == 0)
			return (int)id;
	return -1;
}

static void trace_on(const struct shell_value *event)
{
	struct trace_config cfg;
	int id = -1, rc;

	if (event->present) {
		id = event_by_name(event->word);
		if (id < 0) {
			kprintf("error: trace: no event '%.24s' (trace stats "
				"lists them)\n", event->word);
			return;
		}
	}
	if (!trace_active()) {
		trace_default_config(&cfg);
		rc = trace_setup(&cfg, percpu_count());
		if (rc != 0) {
			shell_error(rc == -1 ?
				"trace: cannot build the channel (see above)" :
				"trace: cannot build the channel: no memory, or "
				"its memory type could not be set");
			return;
		}
		cfg = *trace_current_config();
		kprintf("trace: channel built: %u CPUs, %u x %u KiB per CPU, "
			"%s, %s\n", trace_nr_cpus(), 1u << cfg.nr_subbufs_shift,
			(1u << cfg.subbuf_shift) / 1024,
			memtype_name(cfg.memtype),
			cfg.mode == RB_OVERWRITE ? "flight recorder (overwrite)" :
						   "discard");
	}
	if (id < 0) {
		trace_enable_all(true);
		kprintf("trace: every event on\n");
	} else {
		trace_event_enable((enum trace_event_id)id, true);
		kprintf("trace: %s on\n", trace_event_name((unsigned)id));
	}
}

static void trace_off(const struct shell_value *event)
{
	int id;

	if (!event->present) {
		if (trace_active()) {
			trace_teardown();
			kprintf("trace: every event off, channel freed\n");
		} else {
			kprintf("trace: already off\n");
		}
		return;
	}
	id = event_by_name(event->word);
	if (id < 0) {
		kprintf("error: trace: no event '%.24s' (trace stats lists "
			"them)\n", event->word);
		return;
	}
	trace_event_enable((enum trace_event_id)id, false);
	kprintf("trace: %s off\n", trace_event_name((unsigned)id));
}

static void trace_stats(void)
{
	unsigned on = 0;

	kprintf("trace: channel %s", trace_active() ? "active" : "off");
	if (trace_active())
		kprintf(", %u CPUs", trace_nr_cpus());
	kprintf("\ntrace: events:");
	for (unsigned id = 0; id < TRACE_EVENT_NR; id++) {
		kprintf(" %s%s", trace_event_name(id),
			trace_event_on[id] ? "*" : "");
		on += trace_event_on[id] != 0;
	}
	kprintf("\ntrace: %u of %u events on (marked *)\n", on,
		(unsigned)TRACE_EVENT_NR);
	for (unsigned cpu = 0; cpu < trace_nr_cpus(); cpu++) {
		struct rb *rb = trace_cpu_buffer(cpu);

		kprintf("trace: cpu %u lost", cpu);
		for (unsigned c = 0; c < RB_LOST_NR; c++)
			kprintf(" %s %lu", lost_cause_names[c],
				READ_ONCE(rb->lost[c]));
		kprintf(" (total %lu)\n", rb_lost_total(rb));
	}
}

/*
 * Decode packet pkt (a copy of a sub-buffer of subbuf_size bytes) with
 * trace/packet.c into the ring keep[], *n counting every record seen.
 * Returns false if the packet is damaged (invariant 2).
 */
static bool decode_packet(const uint8_t *pkt, unsigned long subbuf_size,
			  struct dumped *keep, unsigned long *n)
{
	struct packet_reader r;
	struct packet_record rec;
	int more;

	if (packet_open(&r, pkt, subbuf_size))
		return false;
	while ((more = packet_next(&r, &rec)) > 0) {
		struct dumped *d = &keep[*n % DUMP_NEWEST];
		const struct event_layout *l;

		if (rec.id >= TRACE_EVENT_NR)
			return false;
		l = &layouts[rec.id];
		d->id = rec.id;
		d->tsc = rec.tsc;
		packet_align(&rec, l->payload_align);
		for (unsigned f = 0; f < l->nfields; f++)
			if (!packet_field(&r, &rec, field_sizes[rec.id][f],
					  &d->value[f]))
				return false;
		packet_record_done(&r, &rec);
		++*n;
	}
	return more == 0;
}

static void dump_cpu(unsigned cpu, uint8_t *pkt, struct dumped *keep)
{
	struct rb *rb = trace_cpu_buffer(cpu);
	unsigned long n = 0, packets = 0, records, first;
	bool ok = true;

	rb_flush(rb);
	while (rb_read_packet(rb, pkt, &records)) {
		packets++;
		if (!decode_packet(pkt, rb->subbuf_size, keep, &n))
			ok = false;
	}
	kprintf("trace: cpu %u: %lu records in %lu sub-buffers%s\n", cpu, n,
		packets, ok ? "" : " (a malformed record ended a packet)");
	first = n > DUMP_NEWEST ? n - DUMP_NEWEST : 0;
	for (unsigned long i = first; i < n; i++) {
		const struct dumped *d = &keep[i % DUMP_NEWEST];
		const struct event_layout *l = &layouts[d->id];

		kprintf("trace:   #%lu tsc %lu %s", i, (unsigned long)d->tsc,
			trace_event_name(d->id));
		/* Addresses and frame numbers are 64-bit: hex; the
		 * smaller fields are counts and codes: decimal. */
		for (unsigned f = 0; f < l->nfields; f++)
			kprintf(field_sizes[d->id][f] == sizeof(uint64_t) ?
					" %s=%#lx" : " %s=%lu",
				field_names[d->id][f],
				(unsigned long)d->value[f]);
		kprintf("\n");
	}
}

static void trace_dump(void)
{
	struct dumped keep[DUMP_NEWEST];
	unsigned long subbuf;
	uint8_t *pkt;

	if (!trace_active()) {
		shell_error("trace: the channel is off (trace on builds it)");
		return;
	}
	trace_enable_all(false);
	kprintf("trace: every event off for the dump (trace on resumes)\n");
	subbuf = trace_cpu_buffer(0)->subbuf_size;
	pkt = kmalloc(subbuf);
	if (!pkt) {
		shell_error("trace: no memory for a sub-buffer copy");
		return;
	}
	for (unsigned cpu = 0; cpu < trace_nr_cpus(); cpu++)
		dump_cpu(cpu, pkt, keep);
	kfree(pkt);
}

static void shell_trace(const struct shell_parsed *p)
{
	const struct shell_value *event = &p->arg[SHELL_TRACE_ARG_EVENT];

	switch ((enum shell_trace_action)p->arg[SHELL_TRACE_ARG_ACTION].choice) {
	case SHELL_TRACE_ON:
		trace_on(event);
		return;
	case SHELL_TRACE_OFF:
		trace_off(event);
		return;
	case SHELL_TRACE_STATS:
	case SHELL_TRACE_DUMP:
		break;
	}
	if (event->present) {
		kprintf("error: trace: %s takes no event\n",
			p->arg[SHELL_TRACE_ARG_ACTION].word);
		return;
	}
	if (p->arg[SHELL_TRACE_ARG_ACTION].choice == SHELL_TRACE_STATS)
		trace_stats();
	else
		trace_dump();
}

SHELL_HANDLER(trace, SHELL_CMD_TRACE, shell_trace);
