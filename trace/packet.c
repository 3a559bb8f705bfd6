/*
 * A decoder for one trace packet (the format is drawn in trace/packet.h):
 * the header check, the event headers with the compact timestamp folded
 * into the running clock, bounds-checked field reads, and the check that
 * the content ends at the last record's last field. Portable C: the
 * kernel and the host tests build the same file.
 *
 * Invariant: every read is of bytes below r->end, and r->end is at most
 * the copy's size (packet_open() checks content_size against
 * subbuf_size), so a damaged copy is never read past its end.
 */
#include "trace/packet.h"
#include "lib/string.h"

/* Bits per byte in the CTF packet context's sizes. */
#define PACKET_BITS_PER_BYTE 8

const char *packet_open(struct packet_reader *r, const void *bytes,
			unsigned long subbuf_size)
{
	struct rb_packet_header *h = &r->h;

	if (subbuf_size < RB_PACKET_HEADER_SIZE)
		return "the copy is smaller than a packet header";
	memcpy(h, bytes, sizeof(*h));
	if (h->magic != RB_PACKET_MAGIC)
		return "no packet magic";
	if (h->packet_size != (uint64_t)subbuf_size * PACKET_BITS_PER_BYTE)
		return "packet_size is not the sub-buffer's";
	if (h->content_size % PACKET_BITS_PER_BYTE ||
	    h->content_size / PACKET_BITS_PER_BYTE < RB_PACKET_HEADER_SIZE ||
	    h->content_size / PACKET_BITS_PER_BYTE > subbuf_size)
		return "content_size outside the packet";
	if (h->timestamp_end < h->timestamp_begin)
		return "timestamp_end before timestamp_begin";
	r->bytes = bytes;
	r->end = (unsigned long)(h->content_size / PACKET_BITS_PER_BYTE);
	r->pos = RB_PACKET_HEADER_SIZE;
	r->described_end = RB_PACKET_HEADER_SIZE;
	r->clock = h->timestamp_begin;
	return NULL;
}

/* Does [at, at + len) lie inside the content? */
static bool packet_inside(const struct packet_reader *r, unsigned long at,
			  unsigned long len)
{
	return at <= r->end && len <= r->end - at;
}

int packet_next(struct packet_reader *r, struct packet_record *rec)
{
	const uint64_t low_mask = (1ull << RB_COMPACT_TS_BITS) - 1;
	unsigned long at = r->pos;
	uint32_t word;
	uint64_t tsc;

	if (at >= r->end)
		return 0;
	if (!packet_inside(r, at, RB_COMPACT_HEADER_SIZE))
		return -1;
	memcpy(&word, r->bytes + at, sizeof(word));
	rec->at = at;
	rec->extended = (word & RB_EXTENDED_ID) == RB_EXTENDED_ID;
	if (rec->extended) {
		if (!packet_inside(r, at, RB_EXTENDED_HEADER_SIZE))
			return -1;
		memcpy(&rec->id, r->bytes + at + sizeof(uint32_t),
		       sizeof(rec->id));
		memcpy(&tsc, r->bytes + at + 2 * sizeof(uint32_t), sizeof(tsc));
		rec->cursor = at + RB_EXTENDED_HEADER_SIZE;
	} else {
		uint64_t low = word >> RB_COMPACT_ID_BITS;

		rec->id = word & RB_EXTENDED_ID;
		tsc = (r->clock & ~low_mask) | low;
		if (low < (r->clock & low_mask)) /* the low bits wrapped */
			tsc += low_mask + 1;
		rec->cursor = at + RB_COMPACT_HEADER_SIZE;
	}
	if (tsc < r->clock || tsc > r->h.timestamp_end)
		return -1;
	rec->tsc = tsc;
	r->clock = tsc;
	return 1;
}

bool packet_field(struct packet_reader *r, struct packet_record *rec,
		  unsigned size, uint64_t *value)
{
	unsigned long at = rec->cursor;

	if (size != 1 && size != 2 && size != 4 && size != 8)
		return false;
	at = (at + size - 1) & ~(unsigned long)(size - 1);
	if (!packet_inside(r, at, size))
		return false;
	*value = 0; /* little-endian: the low bytes hold the field */
	memcpy(value, r->bytes + at, size);
	rec->cursor = at + size;
	return true;
}

bool packet_bytes(struct packet_reader *r, struct packet_record *rec,
		  void *dst, unsigned long len)
{
	if (!packet_inside(r, rec->cursor, len))
		return false;
	memcpy(dst, r->bytes + rec->cursor, len);
	rec->cursor += len;
	return true;
}

void packet_record_done(struct packet_reader *r,
			const struct packet_record *rec)
{
	r->described_end = rec->cursor;
	r->pos = (rec->cursor + RB_RECORD_ALIGN - 1) &
		 ~(unsigned long)(RB_RECORD_ALIGN - 1);
}

bool packet_ends_clean(const struct packet_reader *r)
{
	return r->pos >= r->end && r->described_end == r->end;
}
