/*
 * The reading side of the trace packet format, in portable C: a decoder
 * for one packet (a copy of one sub-buffer written by
 * trace/ring_buffer.c), shared by the kernel's trace dump
 * (trace/trace_shell.c), its in-kernel test and the host tests of the
 * ring buffer. tools/results/trace_extract.py reads the same format in Python
 * and is tested against the encoder by tests/host/test_trace_export.c.
 *
 *   +----------------------+---------------------------------+------+
 *   | rb_packet_header     | record | record | ... | record  | pad  |
 *   | (header + context)   |                                 |      |
 *   +----------------------+---------------------------------+------+
 *   0                      RB_PACKET_HEADER_SIZE    content_size / 8
 *
 *   record (at a multiple of RB_RECORD_ALIGN):
 *     compact:  u32 id (RB_COMPACT_ID_BITS) | tsc low RB_COMPACT_TS_BITS,
 *               payload at its own alignment
 *     extended: u32 RB_EXTENDED_ID, u32 id, u64 tsc, payload at byte 16
 *   payload: fields naturally aligned, the payload aligned to its
 *   largest field; the record padded to RB_RECORD_ALIGN (its tail).
 *
 * A compact timestamp is folded into the running clock (the packet's
 * timestamp_begin, then each record's): the full value is the smallest
 * one not below the clock whose low bits are the stored ones. The
 * content ends where the last record's last field ends (invariant 11 of
 * trace/ring_buffer.c); a reader stops when its position reaches it.
 *
 * The decoder trusts nothing in the copy: every header, field and
 * record is checked against the packet's content before it is read,
 * and a timestamp that goes backwards, or past the packet's end time, is
 * damage (invariant 1: timestamps increase in offset order). The caller
 * knows the payload layout; the decoder knows the framing.
 *
 * Use:
 *	struct packet_reader r;
 *	struct packet_record rec;
 *
 *	if (packet_open(&r, copy, subbuf_size)) ... damaged header
 *	while ((n = packet_next(&r, &rec)) > 0) {
 *		packet_align(&rec, payload_align);
 *		packet_field(&r, &rec, 8, &value) ...  (each field)
 *		packet_record_done(&r, &rec);
 *	}
 *	n < 0 or !packet_ends_clean(&r): damaged
 */
#ifndef TRACE_PACKET_H
#define TRACE_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace/ring_buffer.h"

/* A reader over one packet. */
struct packet_reader {
	const uint8_t *bytes;       /* the copy */
	struct rb_packet_header h;  /* its header and context */
	unsigned long end;          /* content end: content_size / 8 bytes */
	unsigned long pos;          /* where the next record starts */
	unsigned long described_end; /* just past the last field read */
	uint64_t clock;             /* the last record's timestamp */
};

/* One record, from packet_next() on. */
struct packet_record {
	uint32_t id;
	uint64_t tsc;          /* full timestamp */
	bool extended;         /* the header was the extended form */
	unsigned long at;      /* the record's offset in the packet */
	unsigned long cursor;  /* next byte to read: after the header */
};

/*
 * Start reading the packet at bytes, a copy of a sub-buffer of
 * subbuf_size bytes: check its header (magic, packet_size, a
 * content_size of whole bytes between the header and the packet's end,
 * timestamp_end not before timestamp_begin).
 *
 * Return: NULL, with r ready for packet_next(); or what is wrong with
 * the header (a static string), r then unusable.
 */
const char *packet_open(struct packet_reader *r, const void *bytes,
			unsigned long subbuf_size);

/*
 * Decode the next record's event header into rec (cursor just past the
 * header).
 *
 * Return: 1, rec filled; 0, the content ends here; -1, the packet is
 * damaged (a header past the content, a timestamp before the last one
 * or after timestamp_end): stop reading it.
 */
int packet_next(struct packet_reader *r, struct packet_record *rec);

/* Move rec's cursor up to a multiple of align (a power of two). */
static inline void packet_align(struct packet_record *rec, unsigned long align)
{
	rec->cursor = (rec->cursor + align - 1) & ~(align - 1);
}

/*
 * Read the unsigned field of size bytes (1, 2, 4 or 8) at rec's cursor,
 * first aligned to size, into *value, and move the cursor past it.
 *
 * Return: true; false, reading nothing, if the field would end past the
 * content or size is not one of those.
 */
bool packet_field(struct packet_reader *r, struct packet_record *rec,
		  unsigned size, uint64_t *value);

/*
 * Copy len bytes at rec's cursor (no alignment) to dst and move the
 * cursor past them.
 *
 * Return: true; false, copying nothing, if they would end past the
 * content.
 */
bool packet_bytes(struct packet_reader *r, struct packet_record *rec,
		  void *dst, unsigned long len);

/*
 * The record ends at rec's cursor (its last field): the next one starts
 * at the cursor rounded up to RB_RECORD_ALIGN.
 */
void packet_record_done(struct packet_reader *r,
			const struct packet_record *rec);

/*
 * After packet_next() returned 0: does the content end exactly where
 * the last record's last field does (at the header when there is
 * none)? False means content_size counts bytes no record describes.
 */
bool packet_ends_clean(const struct packet_reader *r);

#endif
