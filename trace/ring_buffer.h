/*
 * Per-CPU lockless trace ring buffer (the design and its invariants are
 * at the top of trace/ring_buffer.c; docs/trace.md teaches it).
 *
 * One struct rb per CPU and channel. Writers are the owning CPU and
 * whatever interrupts or NMIs nest on it; one reader, on any CPU, takes
 * whole sub-buffers ("packets"). A record is written in three steps:
 *
 *	struct rb_ctx ctx = { .size_compact = ..., .size_extended = ... };
 *	if (rb_reserve(rb, &ctx) == 0) {
 *		rb_write(rb, &ctx, bytes, len);   (as often as needed)
 *		rb_commit(rb, &ctx);
 *	}
 *
 * Portable C: the kernel and the host tests build the same file.
 */
#ifndef TRACE_RING_BUFFER_H
#define TRACE_RING_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/atomic.h"
#include "lib/compiler.h"

/* Records start at multiples of this (the CTF event header's alignment). */
#define RB_RECORD_ALIGN 8
/*
 * The low bits of rb->offset, below RB_RECORD_ALIGN: how many bytes at
 * the end of the last record reserved are padding its CTF description
 * does not cover (its "tail"). A packet's content ends before them
 * (ring_buffer.c, invariant 11); record positions mask them off.
 */
#define RB_OFFSET_TAIL_MASK ((unsigned long)RB_RECORD_ALIGN - 1)
/*
 * Deepest nesting of general-path writers on one CPU (thread, IRQ, NMI,
 * one spare); rb_emit_fast() keeps no count (see there).
 */
#define RB_MAX_NESTING 4
/*
 * Largest payload rb_emit_fast() takes (it holds it in registers); its
 * size must also be a multiple of 4 (every trace payload struct is).
 */
#define RB_FAST_MAX_PAYLOAD 32
/* Size of one buffer page: sub-buffers are arrays of these. */
#define RB_PAGE_SHIFT 12
#define RB_PAGE_SIZE (1ul << RB_PAGE_SHIFT)

/* Compact event header: id in the low 5 bits, timestamp's low 27 bits. */
#define RB_COMPACT_ID_BITS 5
#define RB_COMPACT_TS_BITS 27
#define RB_EXTENDED_ID ((1u << RB_COMPACT_ID_BITS) - 1) /* escape value */
#define RB_COMPACT_HEADER_SIZE 4
#define RB_EXTENDED_HEADER_SIZE 16 /* escape word, u32 id, u64 timestamp */

/* CTF packet magic (CTF 1.8, section 5). */
#define RB_PACKET_MAGIC 0xc1fc1fc1u
#define RB_UUID_SIZE 16

/*
 * The first bytes of every sub-buffer: CTF packet header then packet
 * context, in the order and alignment trace/ctf.c declares in TSDL.
 */
struct rb_packet_header {
	uint32_t magic;
	uint8_t uuid[RB_UUID_SIZE];
	uint32_t stream_id;
	/* packet context */
	uint64_t timestamp_begin;
	uint64_t timestamp_end;
	uint64_t content_size;     /* bits, header included, up to the last
				    * record's last described byte */
	uint64_t packet_size;      /* bits: the sub-buffer size */
	uint64_t packet_seq_num;   /* free-running sub-buffer number */
	uint64_t events_discarded; /* running count of lost records */
	uint32_t cpu_id;
	uint32_t pad;
};
#define RB_PACKET_HEADER_SIZE ((unsigned long)sizeof(struct rb_packet_header))

enum rb_mode {
	RB_DISCARD,   /* a record that does not fit is dropped and counted */
	RB_OVERWRITE, /* flight recorder: the oldest sub-buffer is reused */
};

/* Why a record was lost; counted exactly, one counter per cause. */
enum rb_lost_cause {
	RB_LOST_FULL,        /* discard mode full, or a sub-buffer still open */
	RB_LOST_TOO_BIG,     /* larger than a sub-buffer minus its header */
	RB_LOST_NESTING,     /* more than RB_MAX_NESTING writers on the CPU */
	RB_LOST_OVERWRITTEN, /* overwrite mode: its sub-buffer was reused */
	RB_LOST_NR,
};

/* How the writer finds a sub-buffer's pages (the LTTng 0.110 change). */
enum rb_page_index {
	RB_PAGES_ARRAY, /* one array of page addresses: one load */
	RB_PAGES_LIST,  /* a linked list per sub-buffer: one load per page */
};

struct rb_config {
	unsigned subbuf_shift;  /* log2(sub-buffer bytes), >= RB_PAGE_SHIFT */
	unsigned nr_subbufs_shift; /* log2(number of sub-buffers), >= 1 */
	enum rb_mode mode;
	enum rb_page_index page_index;
	bool wc_fence;          /* wmb_wc() before each commit (WC buffers) */
	uint32_t cpu;           /* written into every packet context */
	uint32_t stream_id;
	uint8_t uuid[RB_UUID_SIZE];
	uint64_t (*clock)(void); /* monotonic on this CPU */
};

/* A page of a sub-buffer, as the list variant walks them. */
struct rb_page {
	void *addr;
	struct rb_page *next;
};

/*
 * A write window: what the fast path needs to write into one page of one
 * sub-buffer during one lap, cached by the slow path of the writer that
 * first reserves there (rb_window_publish()). rb->win points at the
 * newest one published. Every field is a function of (slot, page, lap)
 * alone: whoever writes a window for that triple writes the same values.
 * end is written 0 first and last with its value, so a window whose end
 * is non-zero holds every field of the lap that end names.
 */
struct rb_window {
	unsigned long end;        /* a record [o, o + size) fits if o + size
				   * <= end; 0 (never published): none fits */
	uintptr_t base;           /* record at offset o: base + o */
	unsigned long *commit;    /* the slot's commit counter */
	unsigned long commit_end; /* (lap + 1) * subbuf_size: delivered */
	unsigned long *records;   /* records[phys] */
};

/*
 * The writer side and the reader side each start on their own cache
 * line; the pointers after them are written once by rb_init().
 */
struct rb {
	/* Writers (owning CPU only). */
	unsigned long offset __aligned(CACHE_LINE_SIZE); /* free-running;
				   * low bits: the last record's tail */
	uint64_t last_tsc;
	const struct rb_window *win; /* newest published window */
	unsigned long nesting;  /* general path only (rb_reserve()) */
	unsigned long lost[RB_LOST_NR];
	/* Reader. */
	unsigned long consumed __aligned(CACHE_LINE_SIZE); /* free-running */
	unsigned long reader_spare; /* physical sub-buffer the reader owns */
	/* Read-only after rb_init(). */
	struct rb_config cfg __aligned(CACHE_LINE_SIZE);
	unsigned long subbuf_size, subbuf_mask, buf_size, slot_mask;
	unsigned buf_shift;
	unsigned long pages_per_subbuf;
	unsigned long *commit; /* commit[slot * commit_stride] */
	unsigned long commit_stride;
	uint64_t *wsb;            /* per slot: physical id, NOREF, lap tag */
	unsigned long *records;   /* per physical sub-buffer: records held */
	void **page_addr;         /* array variant: [phys * pps + page] */
	struct rb_page **subbuf_pages; /* list variant: first page per phys */
	struct rb_window *windows; /* [slot * pps + page] */
};

/* What one write in progress needs between reserve, write and commit. */
struct rb_ctx {
	/* In: total record sizes (multiples of RB_RECORD_ALIGN). */
	uint32_t size_compact, size_extended;
	/*
	 * In: bytes at the end of each form that the record's description
	 * does not cover (padding to RB_RECORD_ALIGN), < RB_RECORD_ALIGN.
	 */
	uint32_t tail_compact, tail_extended;
	uint32_t id; /* event id; >= RB_EXTENDED_ID forces the extended form */
	/* Out, from rb_reserve(). */
	bool extended;
	uint32_t size;
	uint64_t tsc;
	unsigned long begin;  /* offset of the record */
	unsigned long cursor; /* where rb_write() writes next */
	unsigned long phys;   /* physical sub-buffer written */
};

/*
 * A slot's word in rb->wsb: which physical sub-buffer the slot holds, a
 * NOREF bit (set: no writer uses it, the reader may swap it out), and the
 * lap (offset / buffer size, truncated to 32 bits) it holds or is filling.
 */
#define RB_WSB_ID_MASK 0xffffull
#define RB_WSB_NOREF (1ull << 16)
#define RB_WSB_LAP_SHIFT 32
#define RB_WSB(id, noref, lap)                                              \
	((uint64_t)(id) | ((noref) ? RB_WSB_NOREF : 0) |                    \
	 ((uint64_t)(uint32_t)(lap) << RB_WSB_LAP_SHIFT))
#define RB_WSB_LAP(w) ((uint32_t)((w) >> RB_WSB_LAP_SHIFT))

/* Bytes of metadata rb_init() needs for cfg (see rb_init()). */
size_t rb_meta_size(const struct rb_config *cfg);
/* Number of RB_PAGE_SIZE pages the buffer needs (one spare sub-buffer). */
unsigned long rb_nr_pages(const struct rb_config *cfg);

/*
 * Set rb up over caller-provided memory: pages[rb_nr_pages(cfg)] page
 * addresses (any memory type), meta (rb_meta_size(cfg) bytes, 8-aligned,
 * WB), and the commit counters commit[slot * commit_stride] (WB, one
 * per sub-buffer, zeroed here). Returns 0, or -1 if cfg is invalid (sizes
 * out of range, no clock), leaving rb unusable.
 */
int rb_init(struct rb *rb, const struct rb_config *cfg, void *const *pages,
	    void *meta, unsigned long *commit, unsigned long commit_stride);

/* Slow paths of the inline functions below (trace/ring_buffer.c). */
int rb_reserve_slow(struct rb *rb, struct rb_ctx *ctx);
uint64_t rb_claim(struct rb *rb, unsigned long slot, uint32_t lap);
void rb_deliver(struct rb *rb, unsigned long slot, unsigned long phys,
		uint32_t lap);
void rb_write_slow(struct rb *rb, struct rb_ctx *ctx, const void *src,
		   size_t len);
void *rb_page_address_list(const struct rb *rb, unsigned long phys,
			   unsigned long page);
void rb_window_publish(struct rb *rb, unsigned long begin, unsigned long phys);
void rb_deliver_window(struct rb *rb, const struct rb_window *w,
		       unsigned long o);

/* Address of page page of physical sub-buffer phys (array: one load). */
static inline void *rb_page_address(const struct rb *rb, unsigned long phys,
				    unsigned long page)
{
	if (likely(rb->cfg.page_index == RB_PAGES_ARRAY))
		return rb->page_addr[phys * rb->pages_per_subbuf + page];
	return rb_page_address_list(rb, phys, page);
}

/* Count one lost record (owning CPU only). */
static inline void rb_lost_add(struct rb *rb, enum rb_lost_cause cause)
{
	(void)local_fetch_add(&rb->lost[cause], 1ul);
}

/*
 * The reserve arithmetic, in one place for every writer path
 * (rb_emit_fast(), rb_reserve(), rb_reserve_slow()):
 *
 *   rb_needs_extended()  which header a record takes
 *   rb_record_begin()    where the record at write offset o starts
 *   rb_open_end()        how far a record may reach in o's sub-buffer
 *   rb_try_reserve()     the fit test and the offset CAS
 */

/*
 * Does a record of event id stamped tsc need the extended header? Yes
 * when the id does not fit the compact header's id bits, or tsc is too
 * far from the stream's last timestamp last for its low
 * RB_COMPACT_TS_BITS bits to be folded back into the running clock.
 */
static inline __attribute__((always_inline)) bool
rb_needs_extended(uint32_t id, uint64_t tsc, uint64_t last)
{
	return id >= RB_EXTENDED_ID ||
	       ((tsc - last) >> RB_COMPACT_TS_BITS) != 0;
}

/* Where a record reserved at write offset o starts (tail bits off). */
static inline __attribute__((always_inline)) unsigned long
rb_record_begin(unsigned long o)
{
	return o & ~RB_OFFSET_TAIL_MASK;
}

/*
 * The furthest a record reserved at write offset o may end (begin +
 * size <= end) in the sub-buffer open at o: one byte short of its end
 * (invariant 2). 0 when o is at a sub-buffer boundary: none is open,
 * nothing fits, the writer must switch. o's tail bits do not matter:
 * they are below the sub-buffer mask, and a boundary carries none.
 */
static inline unsigned long rb_open_end(const struct rb *rb, unsigned long o)
{
	return (o & rb->subbuf_mask) ? (o | rb->subbuf_mask) : 0;
}

/* What rb_try_reserve() did. */
enum rb_try {
	RB_TRY_RESERVED, /* the offset moved past the record */
	RB_TRY_NO_ROOM,  /* the record would end past end: nothing done */
	RB_TRY_RACED,    /* a nested writer moved the offset: nothing done */
};

/*
 * Reserve [begin, begin + size) of the offset space, for a writer that
 * read the write offset o (and then the clock, tsc): if the record ends
 * at or before end, one local CAS moves the offset from o to begin +
 * size, with tail (the record's last bytes its description does not
 * cover, < RB_RECORD_ALIGN) in its low bits (invariants 1 and 11), and
 * tsc becomes the stream's last timestamp. begin is rb_record_begin(o),
 * or where a record goes after a new sub-buffer's header (the switch).
 * Owning CPU only.
 *
 * Return: RB_TRY_RESERVED, the record is the caller's to write and
 * commit; RB_TRY_NO_ROOM or RB_TRY_RACED, nothing changed.
 */
static inline __attribute__((always_inline)) enum rb_try
rb_try_reserve(struct rb *rb, unsigned long o, unsigned long begin,
	       unsigned long size, unsigned long tail, unsigned long end,
	       uint64_t tsc)
{
	if (unlikely(begin + size > end))
		return RB_TRY_NO_ROOM;
	if (unlikely(!local_try_cmpxchg(&rb->offset, o, (begin + size) | tail)))
		return RB_TRY_RACED;
	WRITE_ONCE(rb->last_tsc, tsc);
	return RB_TRY_RESERVED;
}

/*
 * Read the write offset, then the clock, and choose ctx's header form
 * for them: sets ctx->extended, ctx->size and ctx->tsc, stores the
 * chosen form's tail in *tail and returns the offset read (the general
 * path's first step, before rb_try_reserve()).
 */
static inline unsigned long rb_reserve_read(struct rb *rb, struct rb_ctx *ctx,
					    unsigned long *tail)
{
	unsigned long o = READ_ONCE(rb->offset);
	uint64_t last = READ_ONCE(rb->last_tsc);

	ctx->tsc = rb->cfg.clock();
	ctx->extended = rb_needs_extended(ctx->id, ctx->tsc, last);
	ctx->size = ctx->extended ? ctx->size_extended : ctx->size_compact;
	*tail = ctx->extended ? ctx->tail_extended : ctx->tail_compact;
	return o;
}

/* Leave the writer nesting count (paired with a successful reserve). */
static inline void rb_nest_exit(struct rb *rb)
{
	barrier();
	WRITE_ONCE(rb->nesting, READ_ONCE(rb->nesting) - 1);
}

/*
 * After a successful offset CAS: make sure the slot is claimed for this
 * lap (once per sub-buffer and lap; the first writer there does it) and
 * write the event header. Returns 0.
 */
static inline int rb_reserved(struct rb *rb, struct rb_ctx *ctx)
{
	unsigned long slot = (ctx->begin >> rb->cfg.subbuf_shift) &
			     rb->slot_mask;
	uint32_t lap = (uint32_t)(ctx->begin >> rb->buf_shift);
	uint64_t w = atomic_load_relaxed(&rb->wsb[slot]);
	uint32_t *hdr;

	if (unlikely(RB_WSB_LAP(w) != lap))
		w = rb_claim(rb, slot, lap);
	ctx->phys = w & RB_WSB_ID_MASK;
	ctx->cursor = ctx->begin;
	/* Keep rb_emit_fast()'s window at the page being written. */
	if (unlikely(READ_ONCE(READ_ONCE(rb->win)->end) <= ctx->begin))
		rb_window_publish(rb, ctx->begin, ctx->phys);
	/* Records are 8-aligned: their first 8 bytes share one page. */
	hdr = (uint32_t *)((char *)rb_page_address(
				   rb, ctx->phys,
				   (ctx->begin & rb->subbuf_mask) >>
					   RB_PAGE_SHIFT) +
			   (ctx->begin & (RB_PAGE_SIZE - 1)));
	if (likely(!ctx->extended)) {
		hdr[0] = ctx->id | (uint32_t)(ctx->tsc << RB_COMPACT_ID_BITS);
		ctx->cursor += RB_COMPACT_HEADER_SIZE;
	} else {
		hdr[0] = RB_EXTENDED_ID;
		hdr[1] = ctx->id;
		ctx->cursor += 2 * sizeof(uint32_t);
		rb_write_slow(rb, ctx, &ctx->tsc, sizeof(ctx->tsc));
	}
	return 0;
}

/*
 * Reserve room for one record of ctx->size_compact bytes (or
 * ctx->size_extended when the extended header is needed). Returns 0 with
 * ctx filled and the event header written, or -1 when the record is lost
 * (counted by cause in rb->lost[]; nothing to commit). Owning CPU only.
 */
static inline int rb_reserve(struct rb *rb, struct rb_ctx *ctx)
{
	unsigned long o, tail, nesting = READ_ONCE(rb->nesting);
	enum rb_try r;

	if (unlikely(nesting >= RB_MAX_NESTING)) {
		rb_lost_add(rb, RB_LOST_NESTING);
		return -1;
	}
	WRITE_ONCE(rb->nesting, nesting + 1);
	barrier();
	do {
		o = rb_reserve_read(rb, ctx, &tail);
		r = rb_try_reserve(rb, o, rb_record_begin(o), ctx->size, tail,
				   rb_open_end(rb, o), ctx->tsc);
		if (unlikely(r == RB_TRY_NO_ROOM))
			return rb_reserve_slow(rb, ctx);
	} while (r != RB_TRY_RESERVED);
	ctx->begin = rb_record_begin(o);
	return rb_reserved(rb, ctx);
}

/*
 * Where len bytes at ctx->cursor can be written directly, or NULL when
 * they cross a page boundary (then use rb_write()).
 */
static inline void *rb_write_ptr(struct rb *rb, struct rb_ctx *ctx,
				 size_t len)
{
	unsigned long in_page = ctx->cursor & (RB_PAGE_SIZE - 1);

	if (unlikely(in_page + len > RB_PAGE_SIZE))
		return NULL;
	return (char *)rb_page_address(rb, ctx->phys,
				       (ctx->cursor & rb->subbuf_mask) >>
					       RB_PAGE_SHIFT) +
	       in_page;
}

/* Copy len bytes to the record at ctx->cursor and advance it. */
static inline void rb_write(struct rb *rb, struct rb_ctx *ctx,
			    const void *src, size_t len)
{
	rb_write_slow(rb, ctx, src, len);
}

/*
 * Publish the record: count it, then add its size to its slot's commit
 * counter; the commit that completes the sub-buffer delivers it. The
 * record's stores are ordered before the commit by TSO, except for
 * stores to WC memory, which need wmb_wc() first (see ring_buffer.c).
 */
static inline void rb_commit(struct rb *rb, struct rb_ctx *ctx)
{
	unsigned long slot = (ctx->begin >> rb->cfg.subbuf_shift) &
			     rb->slot_mask;
	unsigned long lap = ctx->begin >> rb->buf_shift;
	unsigned long old;

	(void)local_fetch_add(&rb->records[ctx->phys], 1ul);
	if (rb->cfg.wc_fence)
		wmb_wc();
	old = local_fetch_add(&rb->commit[slot * rb->commit_stride],
			      (unsigned long)ctx->size);
	if (unlikely(old + ctx->size == (lap + 1) << rb->cfg.subbuf_shift))
		rb_deliver(rb, slot, ctx->phys, (uint32_t)lap);
	rb_nest_exit(rb);
}

/*
 * The whole write of one small compact-header record, for the kernel's
 * emit path (trace/trace.h), through the write window rb->win: load the
 * offset and the window, compare the record's end with the window's,
 * one local CAS on the offset, the header as one store, the payload as
 * fixed-size stores (len is a compile-time constant where this is
 * inlined), one local add on the records count and one on the commit
 * counter. No nesting count: a writer nesting here (interrupt, NMI)
 * moves the offset, so the CAS fails and this returns false; a nested
 * writer that finds the window stale takes the general path. src holds
 * len payload bytes (a multiple of 4, at most RB_FAST_MAX_PAYLOAD; read
 * before the CAS), at is the payload's offset in the record (header plus
 * padding, 4 or 8), size the record size (multiple of RB_RECORD_ALIGN:
 * its last size - at - len bytes are padding, the record's tail), now
 * the clock (the same as cfg.clock), read after the offset.
 *
 * Returns true when the record is written and committed (and its
 * sub-buffer delivered if this commit completed it); false, having
 * changed nothing, when the common case does not apply (a payload of
 * another size; the record not inside the window: sub-buffer to open or
 * switch, page to cross, window not yet published; timestamp delta or id
 * too large for the compact header; the CAS lost to a nested writer): the
 * caller then takes the general path (rb_reserve(), rb_write(),
 * rb_commit()), which handles and counts them and publishes the next
 * window.
 */
static inline __attribute__((always_inline)) bool
rb_emit_fast(struct rb *rb, uint32_t id, const void *src, uint32_t at,
	     uint32_t len, uint32_t size, uint64_t (*now)(void))
{
	unsigned long o = READ_ONCE(rb->offset);
	unsigned long begin = rb_record_begin(o);
	const struct rb_window *w = READ_ONCE(rb->win);
	uint64_t tsc = now();
	const char *s = src;
	uint64_t p0 = 0, p1 = 0, p2 = 0, p3 = 0;
	uint32_t tail = 0;
	unsigned long old;
	char *rec;

	/*
	 * The payload is read before the CAS, one scalar per word: with a
	 * constant len the words then stay in registers (or are forwarded
	 * from the caller's stores) instead of being reloaded after the CAS
	 * (its "memory" clobber). Whole words, then a 4-byte tail.
	 */
	if (len > RB_FAST_MAX_PAYLOAD || len % sizeof(uint32_t))
		return false;
	if (len >= 8)
		__builtin_memcpy(&p0, s, 8);
	if (len >= 16)
		__builtin_memcpy(&p1, s + 8, 8);
	if (len >= 24)
		__builtin_memcpy(&p2, s + 16, 8);
	if (len >= 32)
		__builtin_memcpy(&p3, s + 24, 8);
	if (len % 8)
		__builtin_memcpy(&tail, s + (len & ~7u), 4);
	/*
	 * The window is read after the offset: if a nested writer changed
	 * either in between, it moved the offset and the CAS fails. After
	 * a successful CAS the window's lap cannot end (this record is not
	 * committed yet), so its fields stay valid until the commit below.
	 */
	if (unlikely(rb_needs_extended(id, tsc, READ_ONCE(rb->last_tsc)) ||
		     rb_try_reserve(rb, o, begin, size, size - at - len,
				    READ_ONCE(w->end), tsc) != RB_TRY_RESERVED))
		return false;
	rec = (char *)(w->base + begin);
	if (at == sizeof(uint64_t)) {
		uint64_t hdr = id | (uint32_t)(tsc << RB_COMPACT_ID_BITS);

		__builtin_memcpy(rec, &hdr, sizeof(hdr));
	} else {
		uint32_t hdr = id | (uint32_t)(tsc << RB_COMPACT_ID_BITS);

		__builtin_memcpy(rec, &hdr, sizeof(hdr));
	}
	rec += at;
	if (len >= 8)
		__builtin_memcpy(rec, &p0, 8);
	if (len >= 16)
		__builtin_memcpy(rec + 8, &p1, 8);
	if (len >= 24)
		__builtin_memcpy(rec + 16, &p2, 8);
	if (len >= 32)
		__builtin_memcpy(rec + 24, &p3, 8);
	if (len % 8)
		__builtin_memcpy(rec + (len & ~7u), &tail, 4);
	local_add(w->records, 1ul);
	if (rb->cfg.wc_fence)
		wmb_wc();
	old = local_fetch_add(w->commit, (unsigned long)size);
	if (unlikely(old + size == w->commit_end))
		rb_deliver_window(rb, w, begin);
	return true;
}

/*
 * Close the open sub-buffer (pad it) so the reader can take it. On the
 * owning CPU, or on any CPU once the owner writes no more.
 */
void rb_flush(struct rb *rb);

/*
 * Reader: take the oldest delivered sub-buffer, copy it to dst
 * (rb->subbuf_size bytes) and store how many records it holds in
 * *records. Returns true if a packet was copied, false if none is ready.
 * In overwrite mode sub-buffers overwritten before the reader came are
 * skipped (the writer counted their records lost). One reader at a time.
 */
bool rb_read_packet(struct rb *rb, void *dst, unsigned long *records);

/* Total records lost, all causes (a snapshot). */
unsigned long rb_lost_total(const struct rb *rb);

/*
 * Records emitted since rb_init(), when no reader has taken any and no
 * writer is active: those held in sub-buffers plus those lost.
 */
unsigned long rb_records_emitted(const struct rb *rb);

#endif
