/*
 * The model engine's accesses: set-associative LRU caches, MESI between
 * the CPUs' private caches, a shared LLC, write-combining buffers and
 * memory types per page, reached through here. The picture and the
 * invariants are in cachemodel/model.h; the parts this file dispatches to
 * are listed in cachemodel/model_internal.h.
 *
 * An access is dispatched by its memory type (cm_access()); the accesses
 * that need only their CPU's own state take the lock-free fast path
 * (cm_access_fast()); fences, clflush, the instruction count and the
 * slept-through cycles are here too.
 */
#include "cachemodel/model_internal.h"

/*
 * One uncached transaction (UC, UC- or device; a WC load; a WT or WP
 * store), strongly ordered: after cpu's buffered and write-combined
 * writes, then one 8-byte transaction on the bus; cpu waits for a load's
 * data or for the bus to take a store (uc_load, uc_store cycles after
 * the transaction starts).
 */
static void uncached(struct cm_model *m, unsigned cpu, bool store)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t t = max_u64(cpu_now(m, cpu), max_u64(c->wc_last, c->sb_last));

	stat_add(&c->st.uncached, 1);
	t = bus_use(m, cpu, t, m->p.wc_chunk);
	stall_until(m, cpu, t + (store ? m->p.uc_store : m->p.uc_load));
}

/*
 * A WB store that will own its line at ready. With a store buffer the
 * store retires at once ("store buffers improve performance by allowing
 * the processor to continue executing instructions without having to
 * wait until a write to memory and/or cache is complete", Intel's
 * Optimization Reference Manual): a store whose line is not there yet
 * waits in the buffer for its ownership; one that hits L1D is written
 * from the buffer's head, which this model takes as immediate (it never
 * holds an entry, so a fence does not wait for it). Without a store
 * buffer the CPU waits for ownership or for the L1D write.
 */
static void wb_store_done(struct cm_model *m, unsigned cpu, uint64_t now,
			  uint64_t ready)
{
	if (!m->p.store_buffer) {
		stall_until(m, cpu, ready);
		return;
	}
	if (ready > now + m->cpu[cpu].l1.latency)
		sb_push(m, cpu, ready);
}

/* A locked RMW's start: after cpu's WC buffers drained, it waits for
 * them and its store buffer and pays the locked cost. */
static void locked_start(struct cm_model *m, unsigned cpu)
{
	struct cpu *c = &m->cpu[cpu];

	stall_until(m, cpu, max_u64(c->wc_last, c->sb_last));
	stat_add(&c->st.locked, 1);
	/* locked includes the RMW's own two L1D hits. */
	if (m->p.locked > 2 * c->l1.latency)
		stat_add(&c->st.mem_cycles, m->p.locked - 2 * c->l1.latency);
}

/* One access within one line. */
static void access_line(struct cm_model *m, unsigned cpu, uint64_t pa,
			unsigned n, unsigned flags)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t line = pa >> CM_LINE_SHIFT;
	unsigned off = pa & (CM_LINE_SIZE - 1);
	enum cm_memtype t = flags & CM_IO ? CM_UC : cm_type_of(m, pa);
	bool store = flags & CM_STORE;
	struct wc_buffer *w;
	uint64_t now;

	if (flags & CM_LOCKED) {
		/* A locked RMW drains the WC buffers and the store buffer
		 * (at its load, unless cm_locked_start() did), and owns the
		 * line. */
		if (!(flags & CM_LOCK_STARTED)) {
			wc_drain(m, cpu, CM_WC_LOCKED);
			if (!store)
				locked_start(m, cpu);
		}
		if (t == CM_WB) {
			now = cpu_now(m, cpu);
			stall_until(m, cpu, write_back_access(m, cpu, line, now));
			return;
		}
	}
	if (store && (flags & CM_NT) && t != CM_UC && t != CM_UC_MINUS) {
		/* Non-temporal: a WC store that also evicts the line. */
		stat_add(&c->st.nt_stores, 1);
		evict_everywhere(m, cpu, line);
		w = wc_store(m, cpu, line, off, n);
		if (w)
			w->evicted_at = __atomic_load_n(&m->fills,
							__ATOMIC_RELAXED);
		return;
	}
	now = cpu_now(m, cpu);
	switch (t) {
	case CM_WB:
		if (store)
			wb_store_done(m, cpu, now,
				      write_back_access(m, cpu, line, now));
		else
			stall_until(m, cpu, write_back_read(m, cpu, pa, n, now));
		return;
	case CM_WT:
	case CM_WP:
		if (!store) {
			stall_until(m, cpu, write_back_read(m, cpu, pa, n, now));
			return;
		}
		/* The write goes to memory. WT keeps (clean) copies up to
		 * date in this CPU; WP invalidates every copy. */
		if (t == CM_WP || priv_state(c, line) == ST_I)
			evict_everywhere(m, cpu, line);
		else
			invalidate_others(m, cpu, line, NULL);
		uncached(m, cpu, true);
		return;
	case CM_WC:
		if (store) {
			wc_store(m, cpu, line, off, n);
			return;
		}
		/* No store forwarding from a WC buffer: flush it first. */
		w = wc_find(m, cpu, line);
		if (w)
			wc_flush(m, cpu, w, CM_WC_UNCACHED);
		uncached(m, cpu, false);
		return;
	case CM_UC:
	case CM_UC_MINUS:
	default:
		/* Strongly ordered: earlier WC stores go out first. */
		wc_drain(m, cpu, CM_WC_UNCACHED);
		uncached(m, cpu, store);
		return;
	}
}

void cm_access(struct cm_model *m, unsigned cpu, uint64_t pa, unsigned size,
	       unsigned flags)
{
	struct cm_stats *s = &m->cpu[cpu].st;

	if (flags & CM_STORE)
		stat_add(&s->stores, 1);
	else
		stat_add(&s->loads, 1);
	while (size > 0) {
		unsigned off = pa & (CM_LINE_SIZE - 1);
		unsigned n = CM_LINE_SIZE - off;

		if (n > size)
			n = size;
		access_line(m, cpu, pa, n, flags);
		pa += n;
		size -= n;
	}
}

/* The type of pa's page for cm_access_fast(), remembered per CPU:
 * consecutive accesses often fall on one page, so it is looked up again
 * only for another page or after a type change. */
static enum cm_memtype fast_page_type(struct cm_model *m, struct cpu *c,
				      uint64_t pa)
{
	uint64_t page = pa >> CM_PAGE_SHIFT;
	uint64_t gen = __atomic_load_n(&m->types_gen, __ATOMIC_ACQUIRE);

	if (c->last_page != page + 1 || c->last_types_gen != gen) {
		c->last_type = cm_type_of(m, pa);
		c->last_page = page + 1;
		c->last_types_gen = gen;
	}
	return c->last_type;
}

/* A WB access of size bytes at pa (line) that hits cpu's L1D in a
 * state needing no coherence action: a load in any valid state, a store
 * in M. */
static bool fast_l1_hit(struct cm_model *m, unsigned cpu, uint64_t pa,
			uint64_t line, unsigned size, bool store)
{
	struct cpu *c = &m->cpu[cpu];
	struct way_hint *h;
	enum line_state st;
	long i;

	/* The way a line was found in is tried before the set. Only this
	 * CPU puts lines into its L1D, so if the way still names the line
	 * it holds it; whether validly is the state's to say (snoops change
	 * it). */
	h = &c->hint[fib_hash(line, WAY_HINT_BITS)];
	i = (long)h->i;
	if (h->line != line || c->l1.line[i] != line ||
	    state_get(&c->l1, (size_t)i) == ST_I) {
		i = level_find(&c->l1, line);
		if (i < 0)
			return false;
		h->line = line;
		h->i = (size_t)i;
	}
	st = state_get(&c->l1, (size_t)i);
	/* E -> M is left to cm_access(), which changes L1D and L2 together. */
	if (store && st != ST_M)
		return false;
	stat_add(store ? &c->st.stores : &c->st.loads, 1);
	stat_add(&c->st.l1_hits, 1);
	/* Written when an L1D hit's data is there, as write_back_access()
	 * has it. */
	if (store)
		write_time_note(m, cpu, line, cpu_now(m, cpu) + c->l1.latency);
	/* A load waits for its data unless it is independent of the
	 * previous load (write_back_read()); a store retires into the store
	 * buffer without waiting for the L1D write (wb_store_done()). */
	if (store ? !m->p.store_buffer : !load_independent(m, c, line, pa))
		stat_add(&c->st.mem_cycles, c->l1.latency);
	if (!store)
		c->last_end = pa + size;
	level_touch(&c->l1, i);
	return true;
}

/* A non-temporal store to a WB line that cpu's open WC buffer took from
 * an earlier one, with no fill anywhere since that one evicted the line:
 * the eviction cm_access() would do finds nothing, so it is the merge. */
static bool fast_nt_merge(struct cm_model *m, unsigned cpu, uint64_t line,
			  unsigned off, unsigned n)
{
	struct cpu *c = &m->cpu[cpu];
	struct wc_buffer *w = wc_find(m, cpu, line);

	if (!w || w->evicted_at != __atomic_load_n(&m->fills, __ATOMIC_RELAXED))
		return false;
	stat_add(&c->st.stores, 1);
	stat_add(&c->st.nt_stores, 1);
	wc_merge(m, cpu, w, off, n);
	return true;
}

/*
 * The accesses cm_access() handles with cpu's own state only, so they
 * need no lock: a plain (not locked) access within one line that is
 *  - WB and hits cpu's L1D in a state that needs no coherence action
 *    (fast_l1_hit()), or a non-temporal store that merges into a WC
 *    buffer (fast_nt_merge());
 *  - to a WC page: no cache ever holds its lines (model.h, invariant 6),
 *    so a store only goes into cpu's WC buffers and a load is uncached
 *    after flushing its line's buffer;
 *  - to a UC or UC- page or a device: cpu's WC buffers drain and the
 *    access is uncached.
 * Each is counted exactly as cm_access() counts it; besides cpu's own
 * state, only cpu's bus timeline is touched (atomically, bus_use()).
 * Anything else (a miss, E -> M, WT, WP, a first non-temporal store,
 * locked, crossing a line) is left alone.
 */
bool cm_access_fast(struct cm_model *m, unsigned cpu, uint64_t pa,
		    unsigned size, unsigned flags)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t line = pa >> CM_LINE_SHIFT;
	unsigned off = pa & (CM_LINE_SIZE - 1);
	bool store = flags & CM_STORE;
	struct wc_buffer *w;

	if ((flags & CM_LOCKED) || size == 0 || off + size > CM_LINE_SIZE)
		return false;
	switch (flags & CM_IO ? CM_UC : fast_page_type(m, c, pa)) {
	case CM_WB:
		if (store && (flags & CM_NT))
			return fast_nt_merge(m, cpu, line, off, size);
		return fast_l1_hit(m, cpu, pa, line, size, store);
	case CM_WC:
		if (store) {
			stat_add(&c->st.stores, 1);
			if (flags & CM_NT)
				stat_add(&c->st.nt_stores, 1);
			wc_store(m, cpu, line, off, size);
			return true;
		}
		stat_add(&c->st.loads, 1);
		w = wc_find(m, cpu, line);
		if (w)
			wc_flush(m, cpu, w, CM_WC_UNCACHED);
		uncached(m, cpu, false);
		return true;
	case CM_UC:
	case CM_UC_MINUS:
		stat_add(store ? &c->st.stores : &c->st.loads, 1);
		wc_drain(m, cpu, CM_WC_UNCACHED);
		uncached(m, cpu, store);
		return true;
	default:
		return false;
	}
}

bool cm_line_private(const struct cm_model *m, unsigned cpu, uint64_t pa)
{
	const struct level *l1 = &m->cpu[cpu].l1;
	long i = level_find(l1, pa >> CM_LINE_SHIFT);
	enum line_state st;

	if (i < 0)
		return false;
	st = state_get(l1, (size_t)i);
	return st == ST_M || st == ST_E;
}

void cm_locked_start(struct cm_model *m, unsigned cpu)
{
	wc_drain(m, cpu, CM_WC_LOCKED);
	locked_start(m, cpu);
}

void cm_fence(struct cm_model *m, unsigned cpu, enum cm_fence_kind kind)
{
	struct cpu *c = &m->cpu[cpu];
	uint32_t cost = kind == CM_SFENCE && m->p.sfence ? m->p.sfence
							 : m->p.fence;

	stat_add(&c->st.fences, 1);
	wc_drain(m, cpu, CM_WC_FENCE);
	stall_until(m, cpu, kind == CM_MFENCE ? max_u64(c->wc_last, c->sb_last)
					      : c->wc_last);
	stat_add(&c->st.mem_cycles, cost);
}

void cm_clflush(struct cm_model *m, unsigned cpu, uint64_t pa)
{
	uint64_t line = pa >> CM_LINE_SHIFT;
	struct cm_stats *s = &m->cpu[cpu].st;
	uint64_t before = s->writebacks;
	struct wc_buffer *w = wc_find(m, cpu, line);

	if (w)
		wc_flush(m, cpu, w, CM_WC_EVICT);
	stat_add(&s->clflushes, 1);
	evict_everywhere(m, cpu, line);
	stat_add(&s->mem_cycles, m->p.clflush);
	if (s->writebacks != before)
		stat_add(&s->mem_cycles, m->p.mem_latency);
}

void cm_clflush_unseen(struct cm_model *m, unsigned cpu)
{
	stat_add(&m->cpu[cpu].st.clflushes, 1);
	stat_add(&m->cpu[cpu].st.mem_cycles, m->p.clflush);
}

/* Lines all caches of the model hold at most. */
static uint64_t cached_lines_max(const struct cm_model *m)
{
	uint64_t n = 0;

	for (unsigned d = 0; d < m->nllc; d++)
		n += (uint64_t)m->llc[d].lv.sets * m->llc[d].lv.ways;
	for (unsigned c = 0; c < m->ncpus; c++)
		n += (uint64_t)m->cpu[c].l1.sets * m->cpu[c].l1.ways +
		     (uint64_t)m->cpu[c].l2.sets * m->cpu[c].l2.ways;
	return n;
}

void cm_clflush_lines(struct cm_model *m, unsigned cpu, uint64_t pa,
		      uint64_t len)
{
	struct cm_stats *s = &m->cpu[cpu].st;
	uint64_t first = pa >> CM_LINE_SHIFT, last, before = s->writebacks;

	if (len == 0)
		return;
	last = pa + len - 1 < pa ? UINT64_MAX >> CM_LINE_SHIFT
				 : (pa + len - 1) >> CM_LINE_SHIFT;
	if (last - first < cached_lines_max(m)) {
		for (uint64_t line = first; line <= last; line++) {
			struct wc_buffer *w = wc_find(m, cpu, line);

			if (w)
				wc_flush(m, cpu, w, CM_WC_EVICT);
			evict_everywhere(m, cpu, line);
		}
	} else {
		evict_range(m, cpu, first, last);
	}
	stat_add(&s->mem_cycles, (s->writebacks - before) * m->p.mem_latency);
}

void cm_instructions(struct cm_model *m, unsigned cpu, uint64_t n)
{
	stat_add(&m->cpu[cpu].st.insns, n);
}

void cm_set_causality(struct cm_model *m, uint64_t window)
{
	m->causal_window = window;
}

void cm_set_skip(struct cm_model *m, unsigned cpu, uint64_t skip)
{
	struct cpu *c = &m->cpu[cpu];

	if (skip > __atomic_load_n(&c->skip, __ATOMIC_RELAXED))
		__atomic_store_n(&c->skip, skip, __ATOMIC_RELAXED);
}

void cm_rebase_clock(struct cm_model *m, unsigned cpu)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t oi = __atomic_load_n(&c->origin_insns, __ATOMIC_RELAXED);

	/* The whole cycles of the instructions so far move into the
	 * origin; the fraction CPI leaves is dropped (it never counted). */
	__atomic_store_n(&c->origin_cycles,
			 __atomic_load_n(&c->origin_cycles, __ATOMIC_RELAXED) +
				 (c->st.insns - oi) * m->p.cpi_x100 / 100,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&c->origin_insns, c->st.insns, __ATOMIC_RELAXED);
}

uint64_t cm_clock_window(void)
{
	return (uint64_t)BUS_SLOTS * BUS_SLOT_CYCLES;
}

void cm_restart_clock(struct cm_model *m, unsigned cpu, uint64_t margin)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t window = cm_clock_window();
	uint64_t now = cpu_now(m, cpu) + margin;
	uint64_t start = (now + window - 1) / window * window;

	__atomic_store_n(&c->origin_insns, c->st.insns, __ATOMIC_RELAXED);
	__atomic_store_n(&c->origin_cycles,
			 start - c->st.mem_cycles -
				 __atomic_load_n(&c->skip, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
}
