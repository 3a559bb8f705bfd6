/*
 * In-kernel tests of the trace channel (trace/trace.c over the page
 * allocator and real memory types): discard mode with an idle reader
 * reads back every record intact and in order, overwrite mode keeps
 * exactly the newest sub-buffers, written + lost == emitted in both;
 * writers nesting from an interrupt (a self-IPI) and from an NMI (a
 * self-NMI) between reserve and commit; the same round trip with the
 * buffer pages WB, WC, UC, UC- and WT, both page-index variants and
 * packed commit counters. Records are read on the CPU that wrote them
 * (CPU 0's buffer), after rb_flush().
 */
#include "arch/x86_64/apic.h"
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/trap.h"
#include "lib/compiler.h"
#include "lib/cycles.h"
#include "lib/ktest.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "trace/packet.h"
#include "trace/trace.h"

#define TEST_VALUE(seq) ((seq) * 0x9e3779b97f4a7c15ull)
#define NESTED_BASE 1000000ull /* nested records' sequence numbers */
#define VEC_TRACE_TEST 0xe0    /* free vector for the self-IPI test */

/* What reading one CPU's buffer found. */
struct readback {
	uint64_t records, packets, errors, last_seq, nested, last_packet;
	bool any_order;
};

/* Check one packet's records with the kernel's decoder (trace/packet.c). */
static void check_packet(struct readback *r, const uint8_t *b,
			 unsigned long subbuf_size)
{
	struct packet_reader pr;
	struct packet_record rec;
	int more;

	if (packet_open(&pr, b, subbuf_size)) {
		r->errors++;
		return;
	}
	r->last_packet = pr.h.packet_seq_num;
	while ((more = packet_next(&pr, &rec)) > 0) {
		uint64_t seq, value;

		packet_align(&rec, _Alignof(struct trace_payload_trace_test));
		if (rec.id != TRACE_ID_trace_test ||
		    !packet_field(&pr, &rec, sizeof(seq), &seq) ||
		    !packet_field(&pr, &rec, sizeof(value), &value) ||
		    value != TEST_VALUE(seq) ||
		    (!r->any_order && r->records && seq <= r->last_seq)) {
			r->errors++;
			return;
		}
		packet_record_done(&pr, &rec);
		if (seq >= NESTED_BASE)
			r->nested++;
		r->last_seq = seq;
		r->records++;
	}
	if (more < 0 || !packet_ends_clean(&pr))
		r->errors++;
}

/* Flush CPU 0's buffer and read every packet in it. */
static void read_all(struct readback *r)
{
	struct rb *rb = trace_cpu_buffer(0);
	uint8_t *pkt = kmalloc(rb->subbuf_size);
	unsigned long recs;

	rb_flush(rb);
	while (pkt && rb_read_packet(rb, pkt, &recs)) {
		uint64_t before = r->records;

		check_packet(r, pkt, rb->subbuf_size);
		if (r->records - before != recs)
			r->errors++;
		r->packets++;
	}
	kfree(pkt);
}

static int setup(enum rb_mode mode, enum memtype type, bool list, bool packed)
{
	struct trace_config cfg;

	trace_default_config(&cfg);
	cfg.mode = mode;
	cfg.memtype = type;
	cfg.subbuf_shift = 12;
	cfg.nr_subbufs_shift = 2;
	cfg.page_index = list ? RB_PAGES_LIST : RB_PAGES_ARRAY;
	cfg.commit_packed = packed;
	if (trace_setup(&cfg, 1) != 0)
		return -1;
	trace_event_enable(TRACE_ID_trace_test, true);
	return 0;
}

static void emit(uint64_t seq)
{
	trace_point(trace_test, seq, TEST_VALUE(seq));
}

KTEST(trace, discard_idle_reader_in_order)
{
	struct readback r = {0};
	const uint64_t emitted = 2000;

	ASSERT_EQ(setup(RB_DISCARD, MEMTYPE_WB, false, false), 0);
	for (uint64_t seq = 1; seq <= emitted; seq++)
		emit(seq);
	struct rb *rb = trace_cpu_buffer(0);
	read_all(&r);
	EXPECT_EQ(r.errors, 0);
	EXPECT_EQ(r.packets, 4);
	EXPECT_GT(rb->lost[RB_LOST_FULL], 0);
	EXPECT_EQ(r.records + rb_lost_total(rb), emitted);
	/* Discard keeps the oldest: records 1 .. r.records, none skipped. */
	EXPECT_EQ(r.last_seq, r.records);
	trace_teardown();
}

KTEST(trace, overwrite_keeps_newest)
{
	struct readback r = {0};
	const uint64_t emitted = 3000;

	ASSERT_EQ(setup(RB_OVERWRITE, MEMTYPE_WB, true, true), 0);
	for (uint64_t seq = 1; seq <= emitted; seq++)
		emit(seq);
	struct rb *rb = trace_cpu_buffer(0);
	rb_flush(rb);
	uint64_t newest = (rb->offset >> rb->cfg.subbuf_shift) - 1;
	read_all(&r);
	EXPECT_EQ(r.errors, 0);
	EXPECT_EQ(r.packets, 4);
	EXPECT_EQ(r.last_packet, newest);
	EXPECT_EQ(r.last_seq, emitted);
	EXPECT_EQ(r.records + rb->lost[RB_LOST_OVERWRITTEN], emitted);
	EXPECT_EQ(rb_lost_total(rb), rb->lost[RB_LOST_OVERWRITTEN]);
	trace_teardown();
}

/* Every memory type the channel accepts, both modes, both variants. */
KTEST(trace, every_memory_type)
{
	static const enum memtype types[] = {MEMTYPE_WB, MEMTYPE_WC,
					     MEMTYPE_UC, MEMTYPE_UC_MINUS,
					     MEMTYPE_WT};

	for (unsigned i = 0; i < ARRAY_SIZE(types); i++) {
		for (int mode = 0; mode < 2; mode++) {
			struct readback r = {0};
			const uint64_t emitted = 1500;
			uint64_t t0, t1;

			ASSERT_EQ(setup(mode ? RB_OVERWRITE : RB_DISCARD,
					types[i], i % 2, mode),
				  0);
			t0 = cycles_now();
			for (uint64_t seq = 1; seq <= emitted; seq++)
				emit(seq);
			t1 = cycles_now();
			struct rb *rb = trace_cpu_buffer(0);
			read_all(&r);
			EXPECT_EQ(r.errors, 0);
			EXPECT_EQ(r.packets, 4);
			EXPECT_EQ(r.records + rb_lost_total(rb), emitted);
			ktest_diag("%s %s: %llu records read, %lu lost, "
				   "%llu cycles/event (not a benchmark)",
				   memtype_name(types[i]),
				   mode ? "overwrite" : "discard",
				   (unsigned long long)r.records,
				   rb_lost_total(rb),
				   (unsigned long long)((t1 - t0) / emitted));
			trace_teardown();
		}
	}
}

KTEST(trace, bad_config_refused)
{
	struct trace_config cfg;

	trace_default_config(&cfg);
	cfg.subbuf_shift = RB_PAGE_SHIFT + 11; /* order 11 */
	EXPECT_EQ(trace_setup(&cfg, 1), -1);
	trace_default_config(&cfg);
	cfg.memtype = MEMTYPE_WP;
	EXPECT_EQ(trace_setup(&cfg, 1), -1);
	EXPECT_FALSE(trace_active());
}

/* Nesting: a handler emits between the thread's reserve and commit. */
static volatile uint64_t nested_seq;
static volatile unsigned nested_hits;

static void nested_emit(void)
{
	emit(nested_seq++);
	nested_hits++;
}

static void ipi_handler(struct trap_frame *f __unused)
{
	nested_emit();
	apic_eoi();
}

/* Reserve a record, let raise() run a nested writer, then commit. */
static void nest_once(uint64_t seq, void (*raise)(void))
{
	struct rb *rb = trace_cpu_buffer(0);
	uint64_t v[2] = {seq, TEST_VALUE(seq)};
	struct rb_ctx ctx = {.size_compact = 24, .size_extended = 32,
			     .id = TRACE_ID_trace_test};
	unsigned before = nested_hits;

	if (rb_reserve(rb, &ctx) != 0)
		return;
	raise();
	for (unsigned spin = 0; nested_hits == before && spin < 1000000;
	     spin++)
		cpu_pause();
	ctx.cursor = ctx.begin + (ctx.extended ? RB_EXTENDED_HEADER_SIZE : 8);
	rb_write(rb, &ctx, v, sizeof(v));
	rb_commit(rb, &ctx);
}

static void raise_ipi(void)
{
	apic_send_ipi(apic_id(), VEC_TRACE_TEST);
}

static void raise_nmi(void)
{
	apic_send_nmi(apic_id());
}

static void nesting(struct ktest_ctx *ctx, void (*raise)(void))
{
	struct readback r = {.any_order = true};
	const unsigned rounds = 50;
	bool irq_on = read_rflags() & RFLAGS_IF;

	ASSERT_EQ(setup(RB_DISCARD, MEMTYPE_WB, false, false), 0);
	nested_seq = NESTED_BASE;
	nested_hits = 0;
	cpu_sti();
	for (unsigned i = 1; i <= rounds; i++) {
		emit(2 * i - 1);
		nest_once(2 * i, raise);
	}
	if (!irq_on)
		cpu_cli();
	struct rb *rb = trace_cpu_buffer(0);
	read_all(&r);
	EXPECT_EQ(nested_hits, rounds);
	EXPECT_EQ(r.errors, 0);
	EXPECT_EQ(rb_lost_total(rb), 0);
	EXPECT_EQ(r.records, 3 * rounds);
	EXPECT_EQ(r.nested, rounds);
	EXPECT_EQ(rb->nesting, 0);
	trace_teardown();
}

KTEST(trace, nesting_from_interrupt)
{
	trap_register(VEC_TRACE_TEST, ipi_handler);
	nesting(ctx, raise_ipi);
}

KTEST(trace, nesting_from_nmi)
{
	apic_set_nmi_hook(nested_emit);
	nesting(ctx, raise_nmi);
	apic_set_nmi_hook(NULL);
}
