/*
 * Helpers shared by the host tests of trace/ring_buffer.c: a buffer over
 * malloc'd pages, a test record whose size and contents follow from its
 * sequence number (so a reader can check every byte), and a check of
 * each packet through the kernel's decoder (trace/packet.c).
 */
#ifndef TESTS_HOST_RB_TEST_UTIL_H
#define TESTS_HOST_RB_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/cycles.h"
#include "trace/packet.h"
#include "trace/ring_buffer.h"

/* A test buffer: the ring buffer and the memory it was given. */
struct rbt {
	struct rb rb;
	void **pages;
	void *meta;
	unsigned long *commit;
	unsigned long nr_pages;
};

static inline int rbt_init(struct rbt *t, const struct rb_config *cfg,
			   unsigned long commit_stride)
{
	unsigned long n = 1ul << cfg->nr_subbufs_shift;

	t->nr_pages = rb_nr_pages(cfg);
	t->pages = calloc(t->nr_pages, sizeof(void *));
	for (unsigned long i = 0; i < t->nr_pages; i++) {
		t->pages[i] = aligned_alloc(RB_PAGE_SIZE, RB_PAGE_SIZE);
		memset(t->pages[i], 0xee, RB_PAGE_SIZE);
	}
	t->meta = aligned_alloc(64, (rb_meta_size(cfg) + 63) & ~63ul);
	t->commit = aligned_alloc(64, (n * commit_stride * sizeof(long) + 63) &
					      ~63ul);
	return rb_init(&t->rb, cfg, t->pages, t->meta, t->commit,
		       commit_stride);
}

static inline void rbt_free(struct rbt *t)
{
	for (unsigned long i = 0; i < t->nr_pages; i++)
		free(t->pages[i]);
	free(t->pages);
	free(t->meta);
	free(t->commit);
}

/* Test record payload: seq, tsc, then fill bytes derived from seq. */
#define RBT_ID 3
#define RBT_FIXED 16
#define RBT_FILL_MAX 256 /* the largest fill a test record may carry */
static inline unsigned rbt_fill_len(uint64_t seq, unsigned max_fill)
{
	return max_fill ? (unsigned)((seq * 2654435761u) % (max_fill + 1)) : 0;
}
static inline uint8_t rbt_fill_byte(uint64_t seq, unsigned i)
{
	return (uint8_t)(seq * 31 + i * 7 + 1);
}
static inline uint32_t rbt_size(unsigned hdr, unsigned fill)
{
	/* header padded to 8, then u64 seq, u64 tsc, fill, padded to 8 */
	return (uint32_t)((8 + RBT_FIXED + fill + 7) & ~7u) +
	       (hdr > 8 ? 8 : 0);
}
/* Padding after the fill (the record's tail), the same in both forms. */
static inline uint32_t rbt_tail(unsigned fill)
{
	return rbt_size(RB_COMPACT_HEADER_SIZE, fill) - (8 + RBT_FIXED + fill);
}

/* Emit one test record with event id; returns true if it was written. */
static inline bool rbt_emit_id(struct rb *rb, uint64_t seq,
			       unsigned max_fill, uint32_t id)
{
	unsigned fill = rbt_fill_len(seq, max_fill);
	struct rb_ctx ctx = {
		.size_compact = rbt_size(RB_COMPACT_HEADER_SIZE, fill),
		.size_extended = rbt_size(RB_EXTENDED_HEADER_SIZE, fill),
		.tail_compact = rbt_tail(fill),
		.tail_extended = rbt_tail(fill),
		.id = id,
	};
	uint8_t buf[RBT_FIXED + RBT_FILL_MAX];

	if (rb_reserve(rb, &ctx))
		return false;
	ctx.cursor = ctx.begin + (ctx.extended ? RB_EXTENDED_HEADER_SIZE : 8);
	memcpy(buf, &seq, 8);
	memcpy(buf + 8, &ctx.tsc, 8);
	for (unsigned i = 0; i < fill; i++)
		buf[RBT_FIXED + i] = rbt_fill_byte(seq, i);
	rb_write(rb, &ctx, buf, RBT_FIXED + fill);
	rb_commit(rb, &ctx);
	return true;
}

static inline bool rbt_emit(struct rb *rb, uint64_t seq, unsigned max_fill)
{
	return rbt_emit_id(rb, seq, max_fill, RBT_ID);
}

/*
 * rb_emit_fast()'s clock for the test records: reads the same clock as
 * cfg.clock and keeps the reading in the payload being written (seq,
 * then tsc, then fill), which rb_emit_fast() copies only after calling
 * it.
 */
static __thread uint64_t rbt_fast_payload[RB_FAST_MAX_PAYLOAD /
					  sizeof(uint64_t)];
static inline uint64_t rbt_fast_now(void)
{
	rbt_fast_payload[1] = cycles_now();
	return rbt_fast_payload[1];
}

/*
 * Emit one test record through rb_emit_fast() when its payload is one
 * the fast path takes (a multiple of 4 bytes, at most
 * RB_FAST_MAX_PAYLOAD: fill 0, 4, 8, 12 or 16), falling back to the
 * general path when the fast path declines or the payload is another
 * size. Returns true if written.
 */
static inline bool rbt_emit_fast(struct rb *rb, uint64_t seq,
				 unsigned max_fill)
{
	unsigned fill = rbt_fill_len(seq, max_fill);

	if ((RBT_FIXED + fill) % sizeof(uint32_t) == 0 &&
	    RBT_FIXED + fill <= RB_FAST_MAX_PAYLOAD) {
		uint8_t *f = (uint8_t *)rbt_fast_payload + RBT_FIXED;

		rbt_fast_payload[0] = seq;
		for (unsigned i = 0; i < fill; i++)
			f[i] = rbt_fill_byte(seq, i);
		if (rb_emit_fast(rb, RBT_ID, rbt_fast_payload, 8,
				 RBT_FIXED + fill,
				 rbt_size(RB_COMPACT_HEADER_SIZE, fill),
				 rbt_fast_now))
			return true;
	}
	return rbt_emit_id(rb, seq, max_fill, RBT_ID);
}

/* What parsing packets found. */
struct rbt_parse {
	uint64_t records;     /* records decoded */
	uint64_t last_seq;    /* sequence number of the last one */
	bool have_seq;
	uint64_t errors;      /* torn, misordered or misdecoded records */
	uint64_t last_packet; /* packet_seq_num of the last packet */
	uint64_t extended;    /* records with the extended header */
	bool any_order;       /* nesting tests: do not check seq order */
};

/*
 * Decode one packet (a copy of a sub-buffer) from a buffer of test
 * records with trace/packet.c, the decoder the kernel uses, checking
 * header, sizes, contents, sequence order and that the decoded
 * timestamp equals the one the writer stored. Returns records.
 */
static inline uint64_t rbt_parse_packet(struct rbt_parse *p, const void *pkt,
					unsigned long subbuf_size,
					unsigned max_fill, uint32_t cpu)
{
	struct packet_reader r;
	struct packet_record rec;
	uint64_t n = 0;
	int more;

	if (packet_open(&r, pkt, subbuf_size) || r.h.cpu_id != cpu) {
		p->errors++;
		return 0;
	}
	p->last_packet = r.h.packet_seq_num;
	while ((more = packet_next(&r, &rec)) > 0) {
		uint64_t seq, tsc;
		uint8_t fill_bytes[RBT_FILL_MAX];
		unsigned fill;

		p->extended += rec.extended;
		packet_align(&rec, sizeof(uint64_t));
		if (rec.id < RBT_ID || !packet_field(&r, &rec, 8, &seq) ||
		    !packet_field(&r, &rec, 8, &tsc) || tsc != rec.tsc ||
		    (!p->any_order && p->have_seq && seq <= p->last_seq)) {
			p->errors++;
			return n;
		}
		fill = rbt_fill_len(seq, max_fill);
		if (fill > sizeof(fill_bytes) ||
		    !packet_bytes(&r, &rec, fill_bytes, fill)) {
			p->errors++;
			return n;
		}
		for (unsigned i = 0; i < fill; i++)
			if (fill_bytes[i] != rbt_fill_byte(seq, i)) {
				p->errors++;
				return n;
			}
		packet_record_done(&r, &rec);
		p->last_seq = seq;
		p->have_seq = true;
		n++;
	}
	/* The content ends exactly at the last record's last byte. */
	if (more < 0 || !packet_ends_clean(&r))
		p->errors++;
	p->records += n;
	return n;
}

#endif
