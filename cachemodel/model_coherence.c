/*
 * The cache hierarchy of the cache model: each CPU's private caches (L1D,
 * an optional L2) under MESI, the shared LLC (inclusive or not), and the
 * write-back accesses built on them: a read, a write or locked access,
 * and evicting a line everywhere. With an LLC per die (llc_cpus), a line
 * moves between dies as over a front-side bus: a modified copy is
 * taken from the die holding it, a clean one is read from memory
 * (cachemodel/model.h, invariant 4a). Each access returns when its data or
 * ownership is there; the caller stalls (cachemodel/model_access.c). With an
 * inclusive LLC, its sharer bits say which CPUs a snoop must look at
 * (priv_holders_at(); cachemodel/model.h, invariant 4).
 */
#include "cachemodel/model_internal.h"

/* The outermost private level: where a CPU's MESI state lives. */
static struct level *outer(struct cpu *c)
{
	return level_present(&c->l2) ? &c->l2 : &c->l1;
}

enum line_state priv_state(struct cpu *c, uint64_t line)
{
	struct level *o = outer(c);
	long i = level_find(o, line);

	return i < 0 ? ST_I : state_get(o, (size_t)i);
}

/* Every CPU of m, a bit each. */
static uint64_t all_cpus(const struct cm_model *m)
{
	return m->ncpus >= CM_MAX_CPUS ? ~0ull : (1ull << m->ncpus) - 1;
}

uint64_t priv_holders_at(const struct cm_model *m, long i)
{
	if (!m->llc_sharers)
		return all_cpus(m);
	return i < 0 ? 0 : m->llc_sharers[i];
}

/* The CPUs whose private caches may hold line (priv_holders_at()). */
static uint64_t priv_holders(const struct cm_model *m, uint64_t line)
{
	return m->llc_sharers ? priv_holders_at(m, level_find(&m->llc[0].lv,
							      line))
			      : all_cpus(m);
}

/* cpu has just put line, which the inclusive LLC holds, into its private
 * caches: its sharer bit (model.h, invariant 4). */
static void note_holder(struct cm_model *m, unsigned cpu, uint64_t line)
{
	long i;

	if (!m->llc_sharers)
		return;
	i = level_find(&m->llc[0].lv, line);
	if (i >= 0)
		m->llc_sharers[i] |= 1ull << cpu;
}

static void priv_set_state(struct cpu *c, uint64_t line, enum line_state st)
{
	long i = level_find(&c->l1, line);

	if (i >= 0)
		state_set(&c->l1, (size_t)i, st);
	i = level_find(&c->l2, line);
	if (i >= 0)
		state_set(&c->l2, (size_t)i, st);
}

/* Remove line from cpu's private caches; returns its state there. */
static enum line_state priv_drop(struct cpu *c, uint64_t line)
{
	enum line_state a = level_drop(&c->l1, line);
	enum line_state b = level_drop(&c->l2, line);

	return a > b ? a : b;
}

void llc_insert(struct cm_model *m, unsigned cpu, uint64_t line,
		bool dirty)
{
	uint64_t vline, holders;
	enum line_state vst;
	bool vdirty;
	size_t w = level_insert(llc_of(m, cpu), line, dirty ? ST_M : ST_S,
				&vline, &vst);

	/* The victim's sharers, then none for the new line yet. */
	holders = priv_holders_at(m, (long)w);
	if (m->llc_sharers)
		m->llc_sharers[w] = 0;
	if (vst == ST_I)
		return;
	vdirty = vst == ST_M;
	if (m->p.llc_inclusive)
		for (unsigned d = 0; d < m->ncpus; d++)
			if (holders >> d & 1 &&
			    priv_drop(&m->cpu[d], vline) == ST_M)
				vdirty = true;
	if (vdirty)
		mem_write_back(m, cpu);
}

/* A dirty line leaves the private caches: it goes to the LLC, dirty
 * (dirty false: a clean fill from memory). */
static void llc_fill(struct cm_model *m, unsigned cpu, uint64_t line,
		     bool dirty)
{
	struct level *llc = llc_of(m, cpu);
	long i = level_find(llc, line);

	if (i >= 0) {
		if (dirty)
			state_set(llc, (size_t)i, ST_M);
		level_touch(llc, i);
		return;
	}
	llc_insert(m, cpu, line, dirty);
}

/* What other_dies() found. */
#define DIE_HELD 1u		/* another die's LLC holds the line */
#define DIE_MODIFIED 2u		/* ... modified: the line comes from it */

/*
 * Invariant 4a: the line in the LLCs of dies other than cpu's. Without
 * drop (a read), a modified copy becomes clean: it crossed the bus, and
 * memory took it too. With drop (a write), every copy goes.
 */
static unsigned other_dies(struct cm_model *m, unsigned cpu, uint64_t line,
			   bool drop)
{
	unsigned mine = die_of(m, cpu), found = 0;

	for (unsigned d = 0; d < m->nllc; d++) {
		struct level *l = &m->llc[d].lv;
		enum line_state st;
		long i;

		if (d == mine)
			continue;
		if (drop) {
			st = level_drop(l, line);
		} else {
			i = level_find(l, line);
			st = i < 0 ? ST_I : state_get(l, (size_t)i);
			if (st == ST_M)
				state_set(l, (size_t)i, ST_S);
		}
		if (st != ST_I)
			found |= DIE_HELD;
		if (st == ST_M)
			found |= DIE_MODIFIED;
	}
	return found;
}

/* Does another die's LLC hold line (invariant 4a)? */
bool llc_other_die_holds(struct cm_model *m, unsigned cpu, uint64_t line)
{
	unsigned mine = die_of(m, cpu);

	for (unsigned d = 0; d < m->nllc; d++)
		if (d != mine && level_find(&m->llc[d].lv, line) >= 0)
			return true;
	return false;
}

void l2_fill(struct cm_model *m, unsigned cpu, uint64_t line,
	     enum line_state st)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t vline;
	enum line_state vst;

	level_insert(&c->l2, line, st, &vline, &vst);
	if (vst != ST_I) {
		enum line_state l1st = level_drop(&c->l1, vline);

		if (vst == ST_M || l1st == ST_M)
			llc_fill(m, cpu, vline, true);
	}
	note_holder(m, cpu, line);
}

/* Put line into cpu's private caches with state st (not present there). */
static void priv_fill(struct cm_model *m, unsigned cpu, uint64_t line,
		      enum line_state st)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t vline;
	enum line_state vst;

	if (level_present(&c->l2)) {
		l2_fill(m, cpu, line, st);
		level_insert(&c->l1, line, st, &vline, &vst);
		/* An L1 victim stays in L2, same state. */
		return;
	}
	level_insert(&c->l1, line, st, &vline, &vst);
	if (vst == ST_M)
		llc_fill(m, cpu, vline, true);
	note_holder(m, cpu, line);
}

/*
 * Look line up in cpu's private caches, refreshing LRU and filling L1
 * from L2, at clock t. Returns the state (ST_I on a private miss); on a
 * hit *ready gets when the data is there, and the hit/miss counts move;
 * on an L2 hit *granted gets when the miss had its fill buffer
 * (cache_fill(); granted NULL: a store's, which holds none). *l1_miss
 * tells whether L1D missed (the prefetchers' cue).
 */
static enum line_state priv_lookup(struct cm_model *m, unsigned cpu,
				   uint64_t line, uint64_t t,
				   uint64_t *ready, uint64_t *granted,
				   bool *l1_miss)
{
	struct cpu *c = &m->cpu[cpu];
	long i = level_find(&c->l1, line);
	uint64_t vline;
	enum line_state vst, st;

	*l1_miss = i < 0;
	if (i >= 0) {
		stat_add(&c->st.l1_hits, 1);
		*ready = t + c->l1.latency;
		/* L2 does not see L1D hits (as in hardware): its LRU order
		 * is that of L1D misses, so it may evict a line L1D uses. */
		level_touch(&c->l1, i);
		return state_get(&c->l1, (size_t)i);
	}
	stat_add(&c->st.l1_misses, 1);
	if (!level_present(&c->l2))
		return ST_I;
	i = level_find(&c->l2, line);
	if (i < 0) {
		stat_add(&c->st.l2_misses, 1);
		return ST_I;
	}
	stat_add(&c->st.l2_hits, 1);
	*ready = cache_fill(m, cpu, t, c->l2.latency,
			    pf_consume(m, cpu, line, t), granted);
	level_touch(&c->l2, i);
	st = state_get(&c->l2, (size_t)i);
	level_insert(&c->l1, line, st, &vline, &vst);
	return st;
}

/* Shared part of a private miss at t: from the LLC or from memory.
 * Returns when the data is there; *granted gets when the miss had its
 * fill buffer (NULL: a store's, as for cache_fill()). */
static uint64_t fetch_shared(struct cm_model *m, unsigned cpu, uint64_t line,
			     uint64_t t, uint64_t *granted)
{
	struct cpu *c = &m->cpu[cpu];
	struct level *llc = llc_of(m, cpu);
	long i = level_find(llc, line);

	if (i >= 0) {
		stat_add(&c->st.llc_hits, 1);
		level_touch(llc, i);
		return cache_fill(m, cpu, t, llc->latency,
				  pf_consume(m, cpu, line, t), granted);
	}
	stat_add(&c->st.llc_misses, 1);
	llc_insert(m, cpu, line, false);	/* just looked up: absent */
	return mem_read(m, cpu, t, granted);
}

/* Invariant 4a: a private miss of cpu whose line another die's LLC held
 * modified: its die's LLC misses (no die holds a line another holds
 * modified) and the line comes over the bus from that die, at t. */
static uint64_t fetch_from_die(struct cm_model *m, unsigned cpu,
			       uint64_t line, uint64_t t, uint64_t *granted)
{
	uint64_t ready;

	stat_add(&m->cpu[cpu].st.llc_misses, 1);
	llc_insert(m, cpu, line, false);
	ready = hand_over(m, cpu, line, t, 0);
	if (granted)
		*granted = ready;
	return ready;
}

/* A WB read that missed cpu's private caches, at t; returns when the
 * data is there, *granted when the miss had its fill buffer (a line
 * taken from another CPU: when it is there). */
static uint64_t read_miss(struct cm_model *m, unsigned cpu, uint64_t line,
			  uint64_t t, uint64_t *granted)
{
	bool shared = false, transferred = false;
	uint64_t ready, written = 0, holders = priv_holders(m, line);
	unsigned dies = m->nllc > 1 ? other_dies(m, cpu, line, false) : 0;

	for (unsigned d = 0; d < m->ncpus; d++) {
		bool same_die = die_of(m, d) == die_of(m, cpu);
		enum line_state st;

		if (d == cpu || !(holders >> d & 1))
			continue;
		st = priv_state(&m->cpu[d], line);
		if (st == ST_I)
			continue;
		shared = true;
		if (st == ST_M || (st == ST_E && same_die)) {
			/* The owner supplies the line and keeps a copy; from
			 * another die the bus takes it to memory too, so it
			 * is clean there (invariant 4a). */
			if (st == ST_M) {
				llc_fill(m, cpu, line, same_die);
				written = write_time_of(m, d, line);
			}
			priv_set_state(&m->cpu[d], line, ST_S);
			transferred = true;
		} else if (st == ST_E) {
			/* Clean in another die: memory supplies it. */
			priv_set_state(&m->cpu[d], line, ST_S);
		}
	}
	if (dies & DIE_HELD)
		shared = true;
	if (transferred)
		ready = *granted = hand_over(m, cpu, line, t, written);
	else if (dies & DIE_MODIFIED)
		ready = fetch_from_die(m, cpu, line, t, granted);
	else
		ready = fetch_shared(m, cpu, line, t, granted);
	priv_fill(m, cpu, line, shared ? ST_S : ST_E);
	return ready;
}

bool invalidate_others(struct cm_model *m, unsigned cpu, uint64_t line,
		       uint64_t *written)
{
	bool dirty = false;
	uint64_t holders = priv_holders(m, line);

	for (unsigned d = 0; d < m->ncpus; d++) {
		enum line_state st;

		if (d == cpu || !(holders >> d & 1))
			continue;
		st = priv_drop(&m->cpu[d], line);
		if (st == ST_I)
			continue;
		m->cpu[cpu].invalidated |= 1ull << d;
		stat_add(&m->cpu[cpu].st.invalidations, 1);
		if (st == ST_M) {
			dirty = true;
			if (written)
				*written = write_time_of(m, d, line);
		}
	}
	if (m->nllc > 1 && other_dies(m, cpu, line, true) & DIE_MODIFIED)
		dirty = true;
	return dirty;
}

uint64_t write_back_access(struct cm_model *m, unsigned cpu,
			   uint64_t line, uint64_t t)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t ready = t, written = 0;
	bool l1_miss;
	enum line_state st = priv_lookup(m, cpu, line, t, &ready, NULL,
					 &l1_miss);

	switch (st) {
	case ST_M:
		break;
	case ST_E:
		priv_set_state(c, line, ST_M);
		break;
	case ST_S:
		/* Upgrade: ask the LLC to invalidate the other copies. */
		invalidate_others(m, cpu, line, NULL);
		priv_set_state(c, line, ST_M);
		ready += llc_of(m, cpu)->latency;
		break;
	case ST_I:
		if (invalidate_others(m, cpu, line, &written))
			ready = hand_over(m, cpu, line, t, written);
		else
			ready = fetch_shared(m, cpu, line, t, NULL);
		priv_fill(m, cpu, line, ST_M);
		break;
	}
	if (l1_miss)
		prefetch(m, cpu, line, t);
	write_time_note(m, cpu, line, ready);
	return ready;
}

uint64_t write_back_read(struct cm_model *m, unsigned cpu, uint64_t pa,
			 unsigned n, uint64_t t)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t line = pa >> CM_LINE_SHIFT, ready = t, granted = t;
	bool l1_miss, independent = load_independent(m, c, line, pa);

	if (priv_lookup(m, cpu, line, t, &ready, &granted, &l1_miss) == ST_I)
		ready = read_miss(m, cpu, line, t, &granted);
	c->last_end = pa + n;
	if (l1_miss)
		prefetch(m, cpu, line, t);
	if (!independent)
		return ready;
	return l1_miss ? granted : t;
}

void evict_everywhere(struct cm_model *m, unsigned cpu, uint64_t line)
{
	bool dirty = false;
	uint64_t holders = priv_holders(m, line);

	for (unsigned d = 0; d < m->ncpus; d++) {
		enum line_state st;

		if (!(holders >> d & 1))
			continue;
		st = priv_drop(&m->cpu[d], line);

		if (st != ST_I && d != cpu && cpu < m->ncpus)
			m->cpu[cpu].invalidated |= 1ull << d;
		if (st == ST_M)
			dirty = true;
	}
	for (unsigned d = 0; d < m->nllc; d++)
		if (level_drop(&m->llc[d].lv, line) == ST_M)
			dirty = true;
	if (dirty)
		mem_write_back(m, cpu);
}

uint64_t cm_take_invalidated(struct cm_model *m, unsigned cpu)
{
	uint64_t v = m->cpu[cpu].invalidated;

	m->cpu[cpu].invalidated = 0;
	return v;
}
