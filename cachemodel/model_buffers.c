/*
 * The buffers between a CPU and the bus in the cache model: the store
 * buffer (stores waiting for their line's ownership) and the
 * write-combining buffers (WC and non-temporal stores, flushed as one
 * burst when full or as 8-byte chunks when not).
 */
#include "cachemodel/model_internal.h"

#define WC_FULL_MASK UINT64_MAX	/* all 64 bytes of a line written */
#define WC_CHUNK_BYTES 8
/* The mask bits of one chunk, shifted down to bit 0. */
#define WC_CHUNK_MASK ((1ull << WC_CHUNK_BYTES) - 1)

/* Ring index i + n of a ring of cap entries (i < cap, n <= cap): a
 * compare, not a division by a capacity the compiler cannot know. */
static unsigned ring_add(unsigned i, unsigned n, unsigned cap)
{
	return i + n >= cap ? i + n - cap : i + n;
}

void sb_push(struct cm_model *m, unsigned cpu, uint64_t ready)
{
	struct cpu *c = &m->cpu[cpu];
	unsigned cap = m->p.store_buffer;

	/* Stores already done leave the buffer first. */
	while (c->sb_n && c->sb[c->sb_head] <= cpu_now(m, cpu)) {
		c->sb_head = ring_add(c->sb_head, 1, cap);
		c->sb_n--;
	}
	if (c->sb_n == cap) {
		uint64_t before = cpu_now(m, cpu);

		stall_until(m, cpu, c->sb[c->sb_head]);
		stat_add(&c->st.store_stalls, cpu_now(m, cpu) - before);
		c->sb_head = ring_add(c->sb_head, 1, cap);
		c->sb_n--;
	}
	c->sb[ring_add(c->sb_head, c->sb_n, cap)] = ready;
	c->sb_n++;
	c->sb_last = max_u64(c->sb_last, ready);
}

void wc_flush(struct cm_model *m, unsigned cpu, struct wc_buffer *b,
	      enum cm_wc_cause why)
{
	struct cpu *c = &m->cpu[cpu];
	struct cm_stats *s = &c->st;
	uint64_t t;
	int k;

	if (!b->mask)
		return;
	t = cpu_now(m, cpu);
	k = fb_take(m, cpu, &t);
	if (b->mask == WC_FULL_MASK) {
		stat_add(&s->wc_bursts, 1);
		t = bus_use(m, cpu, t, m->p.wc_burst) + m->p.wc_burst;
	} else {
		for (unsigned o = 0; o < CM_LINE_SIZE; o += WC_CHUNK_BYTES)
			if ((b->mask >> o) & WC_CHUNK_MASK)
				t = bus_use(m, cpu, t, m->p.wc_chunk) +
				    m->p.wc_chunk;
		stat_add(&s->wc_partials, 1);
		stat_add(&s->wc_partial_by[why], 1);
	}
	if (k >= 0)
		c->fb[k] = t;
	b->done = t;
	c->wc_last = max_u64(c->wc_last, t);
	if (!m->p.fill_buffers)
		stall_until(m, cpu, t);
	b->mask = 0;
}

void wc_drain(struct cm_model *m, unsigned cpu, enum cm_wc_cause why)
{
	for (unsigned b = 0; b < m->p.wc_buffers; b++)
		wc_flush(m, cpu, &m->cpu[cpu].wc[b], why);
}

struct wc_buffer *wc_find(struct cm_model *m, unsigned cpu,
			  uint64_t line)
{
	for (unsigned b = 0; b < m->p.wc_buffers; b++) {
		struct wc_buffer *w = &m->cpu[cpu].wc[b];

		if (w->mask && w->line == line)
			return w;
	}
	return NULL;
}

/* Bytes [off, off + n) of a line as a mask; off + n <= 64. */
static uint64_t byte_mask(unsigned off, unsigned n)
{
	uint64_t bits = n >= CM_LINE_SIZE ? WC_FULL_MASK : (1ull << n) - 1;

	return bits << off;
}

struct wc_buffer *wc_merge(struct cm_model *m, unsigned cpu,
			   struct wc_buffer *w, unsigned off,
			   unsigned n)
{
	w->mask |= byte_mask(off, n);
	w->stamp = ++m->cpu[cpu].wc_tick;
	if (w->mask != WC_FULL_MASK)
		return w;
	wc_flush(m, cpu, w, CM_WC_EVICT);	/* full: a burst */
	return NULL;
}

struct wc_buffer *wc_store(struct cm_model *m, unsigned cpu,
			   uint64_t line, unsigned off, unsigned n)
{
	struct wc_buffer *w = wc_find(m, cpu, line);

	if (!w) {
		struct wc_buffer *all = m->cpu[cpu].wc;
		struct wc_buffer *lru = &all[0];

		for (unsigned b = 0; b < m->p.wc_buffers; b++) {
			if (!all[b].mask && (!w || all[b].done < w->done))
				w = &all[b];
			if (all[b].stamp < lru->stamp)
				lru = &all[b];
		}
		if (!w) {
			w = lru;
			wc_flush(m, cpu, w, CM_WC_EVICT);
		}
		stall_until(m, cpu, w->done);
		w->line = line;
	}
	return wc_merge(m, cpu, w, off, n);
}
