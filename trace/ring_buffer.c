/*
 * Per-CPU lockless trace ring buffer, after LTTng's lib/ringbuffer: a
 * free-running write offset claimed with a CPU-local compare-and-swap,
 * per-sub-buffer commit counters, delivery when a sub-buffer's commit
 * count catches up, and a reader that swaps a spare sub-buffer in
 * (overwrite mode) or reads in place (discard mode).
 *
 *   offset (free-running, bytes)   lap = offset / buf_size
 *        |                         slot = (offset / subbuf_size) % nr_subbufs
 *        v
 *   slot:  0            1            2            3      reader's spare
 *   wsb: [P0|lap 5]  [P4|lap 5]   [P2|lap 4]   [P3|lap 4]    P1
 *         commit      writing      delivered    delivered  (being read)
 *         = 6*sb      < 6*sb       = 5*sb       = 5*sb
 *
 *   a sub-buffer (physical P, RB_PAGE_SIZE pages found through page_addr[]
 *   or a linked list):
 *   +----------------+--------+--------+-----+--------+---------+
 *   | packet header  | record | record | ... | record | padding |
 *   | + context (80) |        |        |     |        |         |
 *   +----------------+--------+--------+-----+--------+---------+
 *   record: compact header (u32: id:5 | tsc:27) or extended (u32 31,
 *   u32 id, u64 tsc), then the payload; 8-byte aligned.
 *
 * The writer state (offset, last_tsc, nesting, lost[], commit counters,
 * records[], the write windows and rb->win) is written only by the
 * owning CPU, with CPU-local operations or plain stores (no LOCK prefix),
 * which interrupts and NMIs nesting on that CPU cannot split. The slot
 * words wsb[] are shared with the reader and changed only by locked
 * compare-and-swap, once per sub-buffer and lap.
 *
 * 1. A record occupies [begin, begin + size) of the offset space, where
 *    begin came from a successful local_cmpxchg(offset, begin, begin +
 *    size): ranges never overlap, so each byte has one writer per lap.
 *    The timestamp is read after the offset inside the CAS loop, so a
 *    record nested in between makes the CAS fail: timestamps increase
 *    in offset order within a stream.
 * 2. No record ends exactly at or crosses a sub-buffer end: the writer
 *    that would do so pads the sub-buffer instead (the "switch"), writes
 *    its end-of-packet context and commits the padding, and its record
 *    goes after the next sub-buffer's header. So every sub-buffer is
 *    closed exactly once, by the CAS that moved the offset past it.
 * 3. commit[slot] counts the bytes committed into the slot over all laps
 *    (header, records, padding). Lap L of a slot is complete exactly when
 *    commit[slot] == (L + 1) * subbuf_size; the commit that makes it so
 *    (local_fetch_add returns the old value) delivers it, once.
 * 4. A writer enters a slot for lap L only if commit[slot] == L *
 *    subbuf_size (lap L-1 complete) and, in discard mode, only if the
 *    reader has consumed lap L-1 (offset - consumed < buf_size). Else the
 *    record is lost (RB_LOST_FULL). So no lap is written over before it
 *    is complete.
 * 5. The first writer of lap L in a slot claims it: CAS wsb[slot] from
 *    its old word (lap tag != L) to {same physical, NOREF clear, lap L}.
 *    If the old word's physical sub-buffer still holds records
 *    (records[P] != 0) they were never taken by the reader: they are
 *    counted RB_LOST_OVERWRITTEN, exactly once, by this claim.
 * 6. Delivery sets NOREF on {P, lap L} with a CAS; it fails (and
 *    delivers nothing) if lap L+1 has already claimed the slot, whose
 *    claim counted lap L's records lost (5).
 * 7. Overwrite-mode reader: it takes lap L of a slot only by CAS of
 *    wsb[slot] from {P, NOREF, L} to {its spare S, NOREF, L}. The claim
 *    of lap L+1 and this swap compete on one word: either the reader wins
 *    (P's records are delivered, the writer then claims S, which holds
 *    none), or the writer wins (P's records are counted lost, the swap
 *    fails). No record is both delivered and counted lost.
 * 8. Discard-mode reader: lap L of a slot is readable when commit[slot]
 *    == (L + 1) * subbuf_size; it reads in place, clears records[P], then
 *    advances consumed with a release store (4 keeps writers out until
 *    then).
 * 9. Every record reserved is committed by the same writer before it
 *    returns (interrupts nest, they do not migrate). So after rb_flush()
 *    on a quiet buffer: records read + lost (all causes) == reserves
 *    attempted, exactly.
 10. Write windows (rb_emit_fast()): windows[slot * pps + page] caches,
    for one lap, the page's base, the slot's commit counter and its
    completion value, and records[phys]. Its fields are functions of
    (slot, page, lap) only (phys is fixed once the lap's claim is made,
    and the reader cannot swap a lap out before it is complete), so any
    writers that publish it write the same values; rb_window_publish()
    stores end = 0 first and the real end last, so a window with a
    non-zero end holds one lap's fields throughout. It is published
    after the claim, by the general path, for a record it reserved in
    that page, so a window never covers offsets beyond the write offset:
    o + size <= end then means [o, o + size) lies in that page of that
    lap. A fast write reads the offset, then rb->win, then CASes the
    offset: a nested writer in between moves the offset, so the CAS
    fails; after the CAS the lap cannot complete before this record's
    commit, so the window stays valid. The fast commit delivers like
    any other (3); rb->nesting counts general-path writers only.
 * 11. A packet's content_size is where a CTF reader stops decoding: it
 *    reads event after event while its position, just past the last
 *    field decoded, is below content_size, and calls the packet damaged
 *    once it passes it (babeltrace2 does exactly this). Records are
 *    RB_RECORD_ALIGN-aligned, so many end with padding their description
 *    does not cover (a u64 then a u32 leave 4 bytes). A content_size
 *    that counted that padding would make the reader decode it as one
 *    more event. So each reservation stores its record's tail (size
 *    minus described bytes, < RB_RECORD_ALIGN) in the low bits of the
 *    offset, in the same CAS that reserves the record, and rb_close()
 *    ends the content at the offset minus the tail. Positions mask those
 *    bits off; whether off + size reaches a multiple of RB_RECORD_ALIGN
 *    does not change with them; an offset at a sub-buffer boundary
 *    carries none (the switch stores boundary + header + record + tail,
 *    rb_flush() the boundary itself).
 *
 * Ordering, writer: records are stored before their commit (compiler
 * barrier in the local operations, TSO on the CPU) and, for
 * write-combining pages, an SFENCE (wmb_wc()) because WC stores may pass
 * later WB stores: a reader on another CPU could otherwise see the
 * commit, then stale bytes.
 * Ordering, reader (the other half of the same argument): the reader
 * learns a sub-buffer is complete from an acquire load of its commit
 * counter (discard mode) or a locked CAS on its slot word (overwrite
 * mode), then copies it. On WB and UC pages x86 keeps those loads in
 * order. WC pages are weakly ordered and may be read speculatively, so a
 * load from the copy could be satisfied before the commit load and
 * return what the page held before the writer's SFENCE drained: the copy
 * starts with rmb_wc() (LFENCE), which holds every later load until the
 * commit load is done. Writer SFENCE, commit store; reader commit load,
 * LFENCE, copy: each side orders its own half.
 */
#include "trace/ring_buffer.h"
#include "lib/assert.h"
#include "lib/string.h"

/* Largest buffer the slot words can name (16-bit physical ids). */
#define RB_MAX_SUBBUFS_SHIFT 15
#define RB_MAX_SUBBUF_SHIFT 24 /* 16 MiB sub-buffers */
#define RB_LAP_NEVER ((uint32_t)~0u) /* tag of a slot never written */

unsigned long rb_nr_pages(const struct rb_config *cfg)
{
	return ((1ul << cfg->nr_subbufs_shift) + 1)
	       << (cfg->subbuf_shift - RB_PAGE_SHIFT);
}

size_t rb_meta_size(const struct rb_config *cfg)
{
	unsigned long n = 1ul << cfg->nr_subbufs_shift;
	unsigned long pages = rb_nr_pages(cfg);

	unsigned long windows = n << (cfg->subbuf_shift - RB_PAGE_SHIFT);

	return n * sizeof(uint64_t) + (n + 1) * sizeof(unsigned long) +
	       pages * sizeof(void *) + pages * sizeof(struct rb_page) +
	       (n + 1) * sizeof(struct rb_page *) +
	       windows * sizeof(struct rb_window);
}

int rb_init(struct rb *rb, const struct rb_config *cfg, void *const *pages,
	    void *meta, unsigned long *commit, unsigned long commit_stride)
{
	unsigned long n, pps, nr_pages, i;
	char *m = meta;

	memset(rb, 0, sizeof(*rb));
	if (cfg->subbuf_shift < RB_PAGE_SHIFT ||
	    cfg->subbuf_shift > RB_MAX_SUBBUF_SHIFT ||
	    cfg->nr_subbufs_shift < 1 ||
	    cfg->nr_subbufs_shift > RB_MAX_SUBBUFS_SHIFT || !cfg->clock ||
	    commit_stride == 0)
		return -1;
	rb->cfg = *cfg;
	n = 1ul << cfg->nr_subbufs_shift;
	pps = 1ul << (cfg->subbuf_shift - RB_PAGE_SHIFT);
	nr_pages = rb_nr_pages(cfg);
	rb->subbuf_size = 1ul << cfg->subbuf_shift;
	rb->subbuf_mask = rb->subbuf_size - 1;
	rb->buf_shift = cfg->subbuf_shift + cfg->nr_subbufs_shift;
	rb->buf_size = 1ul << rb->buf_shift;
	rb->slot_mask = n - 1;
	rb->pages_per_subbuf = pps;
	rb->commit = commit;
	rb->commit_stride = commit_stride;
	rb->wsb = (uint64_t *)m;
	m += n * sizeof(uint64_t);
	rb->records = (unsigned long *)m;
	m += (n + 1) * sizeof(unsigned long);
	rb->page_addr = (void **)m;
	m += nr_pages * sizeof(void *);
	struct rb_page *descs = (struct rb_page *)m;
	m += nr_pages * sizeof(struct rb_page);
	rb->subbuf_pages = (struct rb_page **)m;
	m += (n + 1) * sizeof(struct rb_page *);
	rb->windows = (struct rb_window *)m;

	for (i = 0; i < n; i++) {
		rb->wsb[i] = RB_WSB(i, true, RB_LAP_NEVER);
		commit[i * commit_stride] = 0;
	}
	for (i = 0; i <= n; i++) {
		rb->records[i] = 0;
		rb->subbuf_pages[i] = &descs[i * pps];
	}
	for (i = 0; i < nr_pages; i++) {
		rb->page_addr[i] = pages[i];
		descs[i].addr = pages[i];
		descs[i].next = (i + 1) % pps ? &descs[i + 1] : NULL;
	}
	for (i = 0; i < n * pps; i++)
		memset(&rb->windows[i], 0, sizeof(rb->windows[i]));
	rb->win = &rb->windows[0]; /* end 0: no record fits */
	rb->reader_spare = n; /* physical sub-buffers 0..n-1 start in slots */
	rb->last_tsc = cfg->clock();
	return 0;
}

void *rb_page_address_list(const struct rb *rb, unsigned long phys,
			   unsigned long page)
{
	struct rb_page *p = rb->subbuf_pages[phys];
	while (page--)
		p = p->next;
	return p->addr;
}

void rb_write_slow(struct rb *rb, struct rb_ctx *ctx, const void *src,
		   size_t len)
{
	const char *s = src;

	while (len) {
		unsigned long in_page = ctx->cursor & (RB_PAGE_SIZE - 1);
		size_t chunk = MIN(len, (size_t)(RB_PAGE_SIZE - in_page));
		char *dst = (char *)rb_page_address(
				    rb, ctx->phys,
				    (ctx->cursor & rb->subbuf_mask) >>
					    RB_PAGE_SHIFT) +
			    in_page;

		memcpy(dst, s, chunk);
		s += chunk;
		len -= chunk;
		ctx->cursor += chunk;
	}
}

unsigned long rb_lost_total(const struct rb *rb)
{
	unsigned long sum = 0;

	for (int i = 0; i < RB_LOST_NR; i++)
		sum += READ_ONCE(rb->lost[i]);
	return sum;
}

unsigned long rb_records_emitted(const struct rb *rb)
{
	unsigned long sum = rb_lost_total(rb);

	for (unsigned long i = 0; i <= rb->slot_mask + 1; i++)
		sum += READ_ONCE(rb->records[i]);
	return sum;
}

uint64_t rb_claim(struct rb *rb, unsigned long slot, uint32_t lap)
{
	uint64_t w = atomic_load_acquire(&rb->wsb[slot]);

	for (;;) {
		unsigned long id = w & RB_WSB_ID_MASK;
		uint64_t mine = RB_WSB(id, false, lap);
		unsigned long held;

		if (RB_WSB_LAP(w) == lap)
			return w; /* a nested writer claimed it first */
		/*
		 * The old lap's records, read before the claim: between here
		 * and the CAS only a claim (which makes the CAS fail) can
		 * change them. After the CAS, writers nesting here commit
		 * records of the new lap into records[id]: subtract, do not
		 * zero.
		 */
		held = READ_ONCE(rb->records[id]);
		if (atomic_cmpxchg(&rb->wsb[slot], w, mine) == w) {
			if (held) { /* invariant 5 */
				(void)local_fetch_add(&rb->records[id], -held);
				(void)local_fetch_add(
					&rb->lost[RB_LOST_OVERWRITTEN], held);
			}
			return mine;
		}
		/* The reader swapped its spare in, or a nested claim won. */
		w = atomic_load_acquire(&rb->wsb[slot]);
	}
}

void rb_window_publish(struct rb *rb, unsigned long begin, unsigned long phys)
{
	unsigned long slot = (begin >> rb->cfg.subbuf_shift) & rb->slot_mask;
	unsigned long page = (begin & rb->subbuf_mask) >> RB_PAGE_SHIFT;
	unsigned long lap = begin >> rb->buf_shift;
	unsigned long first = begin & ~(RB_PAGE_SIZE - 1);
	unsigned long subbuf_end = (begin | rb->subbuf_mask) + 1;
	unsigned long end = first + RB_PAGE_SIZE;
	struct rb_window *w = &rb->windows[slot * rb->pages_per_subbuf + page];

	/* Invariant 2: no record ends at the sub-buffer's end. */
	if (end == subbuf_end)
		end--;
	if (READ_ONCE(w->end) != end) {
		/*
		 * A writer nesting in here sees end 0 (covers nothing) or
		 * rewrites the whole window itself with the same values.
		 */
		WRITE_ONCE(w->end, 0ul);
		barrier();
		WRITE_ONCE(w->base,
			   (uintptr_t)rb_page_address(rb, phys, page) - first);
		WRITE_ONCE(w->commit, &rb->commit[slot * rb->commit_stride]);
		WRITE_ONCE(w->commit_end, (lap + 1) << rb->cfg.subbuf_shift);
		WRITE_ONCE(w->records, &rb->records[phys]);
		barrier();
		WRITE_ONCE(w->end, end);
	}
	barrier();
	WRITE_ONCE(rb->win, (const struct rb_window *)w);
}

void rb_deliver_window(struct rb *rb, const struct rb_window *w,
		       unsigned long o)
{
	rb_deliver(rb, (o >> rb->cfg.subbuf_shift) & rb->slot_mask,
		   (unsigned long)(w->records - rb->records),
		   (uint32_t)(o >> rb->buf_shift));
}

void rb_deliver(struct rb *rb, unsigned long slot, unsigned long phys,
		uint32_t lap)
{
	/* Fails only when lap + 1 already claimed the slot (invariant 6). */
	(void)atomic_cmpxchg(&rb->wsb[slot], RB_WSB(phys, false, lap),
			     RB_WSB(phys, true, lap));
}

/* The packet header of the sub-buffer at offset start (its first page). */
static struct rb_packet_header *rb_header(struct rb *rb, unsigned long phys)
{
	return rb_page_address(rb, phys, 0);
}

/* Commit bytes of [start ...) that are not a record (header, padding). */
static void rb_commit_bytes(struct rb *rb, unsigned long at,
			    unsigned long phys, unsigned long bytes)
{
	unsigned long slot = (at >> rb->cfg.subbuf_shift) & rb->slot_mask;
	unsigned long lap = at >> rb->buf_shift;
	unsigned long old;

	if (rb->cfg.wc_fence)
		wmb_wc();
	old = local_fetch_add(&rb->commit[slot * rb->commit_stride], bytes);
	if (old + bytes == (lap + 1) << rb->cfg.subbuf_shift)
		rb_deliver(rb, slot, phys, (uint32_t)lap);
}

/*
 * End the packet whose write offset is end (not a sub-buffer boundary;
 * its low bits the last record's tail): fill in its context and commit
 * the padding.
 */
static void rb_close(struct rb *rb, unsigned long end, uint64_t tsc)
{
	unsigned long slot = (end >> rb->cfg.subbuf_shift) & rb->slot_mask;
	unsigned long phys = atomic_load_relaxed(&rb->wsb[slot]) &
			     RB_WSB_ID_MASK;
	struct rb_packet_header *h = rb_header(rb, phys);
	unsigned long used = end & rb->subbuf_mask & ~RB_OFFSET_TAIL_MASK;

	h->timestamp_end = tsc;
	/* Invariant 11: the content stops before the last record's tail. */
	h->content_size = (uint64_t)(used - (end & RB_OFFSET_TAIL_MASK)) * 8;
	h->events_discarded = rb_lost_total(rb);
	rb_commit_bytes(rb, end, phys, rb->subbuf_size - used);
}

/* Start the packet at sub-buffer boundary start: claim, header, commit. */
static void rb_open(struct rb *rb, unsigned long start, uint64_t tsc)
{
	unsigned long slot = (start >> rb->cfg.subbuf_shift) & rb->slot_mask;
	uint64_t w = rb_claim(rb, slot, (uint32_t)(start >> rb->buf_shift));
	unsigned long phys = w & RB_WSB_ID_MASK;
	struct rb_packet_header *h = rb_header(rb, phys);

	h->magic = RB_PACKET_MAGIC;
	memcpy(h->uuid, rb->cfg.uuid, RB_UUID_SIZE);
	h->stream_id = rb->cfg.stream_id;
	h->timestamp_begin = tsc;
	h->timestamp_end = tsc;
	h->content_size = 0;
	h->packet_size = (uint64_t)rb->subbuf_size * 8;
	h->packet_seq_num = start >> rb->cfg.subbuf_shift;
	h->events_discarded = 0;
	h->cpu_id = rb->cfg.cpu;
	h->pad = 0;
	rb_commit_bytes(rb, start, phys, RB_PACKET_HEADER_SIZE);
}

/* May a writer start lap (start / buf_size) in start's slot? (inv. 4) */
static bool rb_may_enter(struct rb *rb, unsigned long start)
{
	unsigned long slot = (start >> rb->cfg.subbuf_shift) & rb->slot_mask;
	unsigned long lap = start >> rb->buf_shift;

	if (READ_ONCE(rb->commit[slot * rb->commit_stride]) !=
	    lap << rb->cfg.subbuf_shift)
		return false;
	if (rb->cfg.mode == RB_DISCARD &&
	    start - atomic_load_acquire(&rb->consumed) >= rb->buf_size)
		return false;
	return true;
}

int rb_reserve_slow(struct rb *rb, struct rb_ctx *ctx)
{
	unsigned long o, off, tail, start, begin;
	enum rb_try r;

	for (;;) {
		o = rb_reserve_read(rb, ctx, &tail);
		begin = rb_record_begin(o);
		r = rb_try_reserve(rb, o, begin, ctx->size, tail,
				   rb_open_end(rb, o), ctx->tsc);
		if (r == RB_TRY_RACED)
			continue;
		if (r == RB_TRY_RESERVED) /* a nested writer switched for us */
			break;
		if (RB_PACKET_HEADER_SIZE + ctx->size >= rb->subbuf_size) {
			rb_lost_add(rb, RB_LOST_TOO_BIG);
			rb_nest_exit(rb);
			return -1;
		}
		off = o & rb->subbuf_mask;
		start = off ? o - off + rb->subbuf_size : o;
		if (!rb_may_enter(rb, start)) {
			rb_lost_add(rb, RB_LOST_FULL);
			rb_nest_exit(rb);
			return -1;
		}
		/*
		 * The switch: the record goes after the next header (the
		 * too-big test above leaves it room there).
		 */
		begin = start + RB_PACKET_HEADER_SIZE;
		if (rb_try_reserve(rb, o, begin, ctx->size, tail,
				   rb_open_end(rb, begin), ctx->tsc) !=
		    RB_TRY_RESERVED)
			continue;
		if (off)
			rb_close(rb, o, ctx->tsc);
		rb_open(rb, start, ctx->tsc);
		break;
	}
	ctx->begin = begin;
	return rb_reserved(rb, ctx);
}

void rb_flush(struct rb *rb)
{
	for (;;) {
		unsigned long o = READ_ONCE(rb->offset);
		unsigned long off = o & rb->subbuf_mask;
		uint64_t tsc = rb->cfg.clock();

		if (off == 0)
			return; /* nothing open */
		if (local_cmpxchg(&rb->offset, o, o - off + rb->subbuf_size) !=
		    o)
			continue;
		rb_close(rb, o, tsc);
		return;
	}
}

/*
 * Copy the sub-buffer phys to dst, page by page, after the load that
 * found it complete (see "Ordering, reader" at the top).
 */
static void rb_copy_out(struct rb *rb, unsigned long phys, void *dst)
{
	rmb_wc();
	for (unsigned long i = 0; i < rb->pages_per_subbuf; i++)
		memcpy((char *)dst + i * RB_PAGE_SIZE,
		       rb_page_address(rb, phys, i), RB_PAGE_SIZE);
}

static bool rb_read_discard(struct rb *rb, void *dst, unsigned long *records)
{
	unsigned long c = rb->consumed;
	unsigned long slot = (c >> rb->cfg.subbuf_shift) & rb->slot_mask;
	unsigned long lap = c >> rb->buf_shift;
	unsigned long phys;

	if (atomic_load_acquire(&rb->commit[slot * rb->commit_stride]) !=
	    (lap + 1) << rb->cfg.subbuf_shift)
		return false;
	phys = atomic_load_relaxed(&rb->wsb[slot]) & RB_WSB_ID_MASK;
	rb_copy_out(rb, phys, dst);
	*records = atomic_load_relaxed(&rb->records[phys]);
	atomic_store_relaxed(&rb->records[phys], 0ul);
	atomic_store_release(&rb->consumed, c + rb->subbuf_size);
	return true;
}

static bool rb_read_overwrite(struct rb *rb, void *dst,
			      unsigned long *records)
{
	for (;;) {
		unsigned long c = rb->consumed;
		unsigned long slot = (c >> rb->cfg.subbuf_shift) & rb->slot_mask;
		uint32_t lap = (uint32_t)(c >> rb->buf_shift);
		uint64_t w = atomic_load_acquire(&rb->wsb[slot]);
		int32_t ahead = (int32_t)(RB_WSB_LAP(w) - lap);

		if (ahead > 0 && RB_WSB_LAP(w) != RB_LAP_NEVER) {
			/*
			 * Overwritten: its records were counted lost by the
			 * claim. Jump to the oldest lap that may still be
			 * intact: the slot after the writer's.
			 */
			unsigned long o = atomic_load_relaxed(&rb->offset);
			unsigned long oldest = o & ~rb->subbuf_mask;

			if (o & rb->subbuf_mask) /* that slot is open */
				oldest += rb->subbuf_size;
			oldest -= rb->buf_size;

			if (o > rb->buf_size && (long)(oldest - c) > 0)
				rb->consumed = oldest;
			else
				rb->consumed = c + rb->subbuf_size;
			continue;
		}
		if (ahead != 0 || !(w & RB_WSB_NOREF))
			return false; /* not written yet, or being written */
		uint64_t mine = RB_WSB(rb->reader_spare, true, lap);
		if (atomic_cmpxchg(&rb->wsb[slot], w, mine) != w)
			continue; /* the writer claimed it: look again */
		unsigned long phys = w & RB_WSB_ID_MASK;
		rb->reader_spare = phys;
		rb_copy_out(rb, phys, dst);
		*records = atomic_load_relaxed(&rb->records[phys]);
		atomic_store_relaxed(&rb->records[phys], 0ul);
		rb->consumed = c + rb->subbuf_size;
		return true;
	}
}

bool rb_read_packet(struct rb *rb, void *dst, unsigned long *records)
{
	if (rb->cfg.mode == RB_DISCARD)
		return rb_read_discard(rb, dst, records);
	return rb_read_overwrite(rb, dst, records);
}
