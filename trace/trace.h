/*
 * The kernel's trace channel: one ring buffer (trace/ring_buffer.h) per
 * CPU, its pages from the page allocator retyped to the channel's memory
 * type, its offsets and commit counters in write-back kmalloc memory, and
 * the emit fast path behind trace_point() (trace/tracepoint.h).
 *
 * Include this header before trace/tracepoint.h (or instead of it) to
 * compile trace points with the inline fast path; trace_set_outofline()
 * still sends them through the out-of-line function at run time (the
 * seed-004 comparison in one boot).
 */
#ifndef TRACE_TRACE_H
#define TRACE_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/percpu.h"
#include "lib/compiler.h"
#include "lib/config.h"
#include "mm/memtype.h"
#include "trace/ring_buffer.h"

#define TRACE_EMIT trace_emit_inline
#include "trace/tracepoint.h"

/* What trace_setup() builds. */
struct trace_config {
	enum memtype memtype;        /* of the buffer pages (not metadata) */
	enum rb_mode mode;
	enum rb_page_index page_index;
	bool commit_packed;          /* all CPUs' counters in one array */
	unsigned subbuf_shift;       /* log2 bytes, 12 .. 22 (order <= 10) */
	unsigned nr_subbufs_shift;   /* log2 count, 1 .. 8 */
};

/* The default: WB, flight recorder, 8 x 16 KiB per CPU, array, aligned. */
void trace_default_config(struct trace_config *cfg);

/*
 * Allocate and start the channel for CPUs 0 .. ncpus - 1 (every event
 * still off). Returns 0, -1 if a channel exists or cfg is invalid (with
 * a message), -2 if memory ran out or a memory type could not be set
 * (everything allocated so far is given back).
 */
int trace_setup(const struct trace_config *cfg, unsigned ncpus);
/* Turn every event off, give the memory back (pages retyped to WB). */
void trace_teardown(void);
/* True between a successful trace_setup() and trace_teardown(). */
bool trace_active(void);
/* The channel's configuration (valid while trace_active()). */
const struct trace_config *trace_current_config(void);
/* Number of CPUs the channel has buffers for (0 when inactive). */
unsigned trace_nr_cpus(void);

/* Enable or disable one event, or all of them. */
void trace_event_enable(enum trace_event_id id, bool on);
void trace_enable_all(bool on);
/* Event names, by id ("page_alloc"); NULL past the end. */
const char *trace_event_name(unsigned id);

/* Route inline trace points through the out-of-line function. */
void trace_set_outofline(bool on);

/* CPU cpu's buffer (NULL when inactive or out of range). */
struct rb *trace_cpu_buffer(unsigned cpu);

/* The run-time switch, read by the fast path. */
extern bool trace_outofline;

/*
 * This CPU's buffer, NULL when no channel is active: one %gs-relative
 * load of the per-CPU area's trace_buffer field (trace_setup() sets it).
 */
static inline struct rb *trace_this_cpu_buffer(void)
{
	return this_cpu_read_ptr(trace_buffer);
}

/* The general path: any record, any case (trace/trace.c). */
void trace_emit_slow(uint32_t id, const void *p, uint32_t size,
		     uint32_t align);

/* The fast path's clock: the TSC, as cfg.clock (cycles_now()) reads it. */
static inline uint64_t trace_clock_inline(void)
{
	return rdtsc();
}

/*
 * Call fn(id, payload, size, align) on a copy of the payload made right
 * there: the trace point's payload struct then never has its address
 * taken on the fast path, so it stays in registers instead of being
 * stored to the stack for a call that rarely happens.
 */
#define TRACE_CALL_WITH_COPY(fn, id, p, size, align)                         \
	do {                                                                \
		uint64_t trace_copy_[RB_FAST_MAX_PAYLOAD / sizeof(uint64_t)]; \
		if ((size) <= sizeof(trace_copy_)) {                        \
			__builtin_memcpy(trace_copy_, (p), (size));         \
			fn((id), trace_copy_, (size), (align));             \
		} else {                                                    \
			fn((id), (p), (size), (align));                     \
		}                                                           \
	} while (0)

/*
 * The emit fast path: this CPU's buffer (one %gs load), then
 * rb_emit_fast(); whatever it declines (outside the write window: a
 * sub-buffer switch, a page to cross, a window to publish; the extended
 * header; a CAS lost to a nested writer) goes out of line to
 * trace_emit_slow(). A lost record is counted by the buffer; nothing
 * else to do.
 */
static inline __attribute__((always_inline)) void
trace_emit_body(uint32_t id, const void *p, uint32_t size, uint32_t align)
{
	struct rb *rb = trace_this_cpu_buffer();
	uint32_t at = ALIGN_UP((uint32_t)RB_COMPACT_HEADER_SIZE, align);

	if (unlikely(!rb))
		return;
	if (unlikely(!rb_emit_fast(rb, id, p, at, size,
				   ALIGN_UP(at + size, RB_RECORD_ALIGN),
				   trace_clock_inline)))
		TRACE_CALL_WITH_COPY(trace_emit_slow, id, p, size, align);
}

static inline __attribute__((always_inline)) void
trace_emit_inline(uint32_t id, const void *p, uint32_t size, uint32_t align)
{
	if (unlikely(trace_outofline)) {
		TRACE_CALL_WITH_COPY(trace_emit_outofline, id, p, size, align);
		return;
	}
	trace_emit_body(id, p, size, align);
}

#endif
