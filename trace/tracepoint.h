/*
 * Trace points: the list of events, their typed payloads, one enable
 * switch each, and the trace_point() macro that emits one. Kept tiny and
 * free of dependencies (standard headers only) so that every layer, mm/
 * and lib/ included, can place trace points; the buffer code behind it is
 * trace/trace.h and trace/ring_buffer.h.
 *
 *   trace_point(page_alloc, pfn, order);
 *
 * costs one byte load and a not-taken branch while the event is off. On,
 * it builds the payload struct from the arguments (in field order) and
 * calls TRACE_EMIT: out of line by default; files that include
 * trace/trace.h first get the inline fast path.
 *
 * An event is declared once, in TRACE_EVENTS below, as
 *   EV(name, F(type, field) F(type, field) ...)
 * which generates its id (TRACE_ID_name), its payload struct (struct
 * trace_payload_name, natural alignment) and its CTF metadata
 * (trace/ctf.c expands the same list). Types: uint8_t .. uint64_t.
 * Event ids below RB_EXTENDED_ID (31) fit the compact header.
 *
 * A record carries the payload's fields only, TRACE_PAYLOAD_SIZE(name)
 * bytes: up to the end of the last field, as the CTF description lays
 * them out (natural alignment, no tail padding). The struct's own tail
 * padding (page_alloc: a u64 then a u32, 16 bytes, 12 described) is not
 * copied, so a record never holds bytes its description does not cover
 * except the padding up to the next record's alignment, which the ring
 * buffer accounts for (trace/ring_buffer.c, invariant 11).
 */
#ifndef TRACE_TRACEPOINT_H
#define TRACE_TRACEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRACE_EVENTS(EV, F)                                                 \
	EV(trace_test, F(uint64_t, seq) F(uint64_t, value))                 \
	EV(page_alloc, F(uint64_t, pfn) F(uint32_t, order))                 \
	EV(page_free, F(uint64_t, pfn) F(uint32_t, order))                  \
	EV(kmalloc, F(uint64_t, ptr) F(uint64_t, size))                     \
	EV(kfree, F(uint64_t, ptr))                                         \
	EV(ramfs_op, F(uint32_t, op) F(uint32_t, inode) F(uint64_t, len))   \
	EV(ramfs_page, F(uint32_t, handle) F(uint64_t, index)               \
			       F(uint64_t, page))                           \
	EV(net_send, F(uint64_t, ring) F(uint64_t, len))                    \
	EV(net_receive, F(uint64_t, ring) F(uint64_t, len))                 \
	EV(net_enqueue, F(uint64_t, ring) F(uint32_t, bytes))               \
	EV(net_dequeue, F(uint64_t, ring) F(uint32_t, bytes))               \
	EV(net_wakeup, F(uint64_t, ring) F(uint32_t, spins))                \
	EV(ramfs_lookup, F(uint32_t, hash) F(uint32_t, inode))              \
	EV(tbench_client_think, F(uint32_t, client) F(uint32_t, step))      \
	EV(tbench_request_parsed, F(uint32_t, op) F(uint32_t, len))         \
	EV(tbench_syscall_entry, F(uint32_t, op) F(uint32_t, slot))         \
	EV(tbench_syscall_exit, F(uint32_t, op) F(uint64_t, ret))           \
	EV(tbench_request_sent, F(uint32_t, op) F(uint32_t, len))           \
	EV(tbench_request_handled, F(uint32_t, op) F(uint32_t, status))     \
	EV(tbench_reply_received, F(uint32_t, status) F(uint32_t, len))     \
	EV(kbuild_step, F(uint32_t, file) F(uint32_t, step))                \
	EV(smp_call, F(uint32_t, target) F(uint64_t, fn))                   \
	EV(tlb_shootdown, F(uint64_t, cpus_low64) F(uint64_t, fn))

/* ramfs_op's op field. */
enum trace_ramfs_op {
	TRACE_RAMFS_OPEN,
	TRACE_RAMFS_CLOSE,
	TRACE_RAMFS_READ,
	TRACE_RAMFS_WRITE,
	TRACE_RAMFS_UNLINK,
};

/*
 * The request path's events beyond the ones above: ramfs_lookup's inode
 * is 0xffffffff when the name is not there; net_enqueue / net_dequeue
 * are one copy into / out of a loopback ring, net_wakeup a receiver that
 * found data after spins empty polls; tbench_syscall_entry / _exit
 * bracket the server's file operation (exit: its result, a negative
 * error as two's complement).
 */

/* kbuild_step's step field. */
enum trace_kbuild_step {
	TRACE_KBUILD_READ,    /* open and read the source */
	TRACE_KBUILD_COMPILE, /* compile it */
	TRACE_KBUILD_WRITE,   /* write the object */
};

/* Event ids, in list order. */
#define TRACE_ID_ENUM_(name, fields) TRACE_ID_##name,
#define TRACE_IGNORE_FIELD_(type, field)
enum trace_event_id {
	TRACE_EVENTS(TRACE_ID_ENUM_, TRACE_IGNORE_FIELD_)
	TRACE_EVENT_NR
};

/*
 * Payload structs: struct trace_payload_NAME { type field; ... }, and
 * beside each a twin closed by an empty marker whose offset is the end
 * of the last field (only measured: a payload struct with a flexible
 * member would keep the compiler from holding it in registers).
 */
#define TRACE_STRUCT_FIELD_(type, field) type field;
#define TRACE_STRUCT_(name, fields)                                         \
	struct trace_payload_##name {                                       \
		fields                                                      \
	};                                                                  \
	struct trace_payload_end_##name {                                   \
		fields char trace_end_[];                                   \
	};
TRACE_EVENTS(TRACE_STRUCT_, TRACE_STRUCT_FIELD_)

/* Bytes of event name's payload a record carries (see the top). */
#define TRACE_PAYLOAD_SIZE(name)                                            \
	offsetof(struct trace_payload_end_##name, trace_end_)

/*
 * The enable switches, one byte per event (0 off, 1 on), written only by
 * trace_event_enable(). Weak, like the emit function below, so that a
 * host test that builds mm/ without trace/ still links: its trace points
 * stay off and never call into the missing buffer code.
 */
__attribute__((weak)) volatile uint8_t trace_event_on[TRACE_EVENT_NR];

/*
 * Out-of-line emit (trace/trace.c): payload p of size bytes (its
 * described size, TRACE_PAYLOAD_SIZE), aligned to align.
 */
__attribute__((weak)) void trace_emit_outofline(uint32_t id, const void *p,
						uint32_t size,
						uint32_t align);

#ifndef TRACE_EMIT
#define TRACE_EMIT trace_emit_outofline
#endif

#define trace_point(name, ...)                                              \
	do {                                                                \
		if (__builtin_expect(trace_event_on[TRACE_ID_##name], 0)) { \
			struct trace_payload_##name trace_p_ = {__VA_ARGS__}; \
			TRACE_EMIT(TRACE_ID_##name, &trace_p_,              \
				   TRACE_PAYLOAD_SIZE(name),                \
				   _Alignof(trace_p_));                     \
		}                                                           \
	} while (0)

#endif
