/*
 * The hardware prefetchers of the cache model: the adjacent-line
 * prefetcher (prefetch_next) and a stream prefetcher per CPU that follows
 * misses moving through a page (prefetch_ahead), issuing into the L2 (or
 * the LLC), and the count of prefetched lines used and late.
 */
#include "cachemodel/model_internal.h"

#define LINES_PER_PAGE (1u << (CM_PAGE_SHIFT - CM_LINE_SHIFT))
/* Misses in one direction within a page before a stream is trusted. */
#define PF_TRAIN 2

static unsigned pf_slot(uint64_t line)
{
	return (unsigned)fib_hash(line, PF_RECENT_BITS);
}

uint64_t pf_consume(struct cm_model *m, unsigned cpu, uint64_t line,
		    uint64_t t)
{
	struct pf_line *p = &m->cpu[cpu].pf_recent[pf_slot(line)];

	if (p->line != line || p->used)
		return 0;
	p->used = true;
	stat_add(&m->cpu[cpu].st.prefetch_useful, 1);
	if (p->ready > t)
		stat_add(&m->cpu[cpu].st.prefetch_late, 1);
	return p->ready;
}

/*
 * A prefetched line read from memory for cpu, asked at clock t: with an
 * L2 queue (l2_queue), an entry of it, a burst on the bus and the memory
 * latency, leaving the fill buffers to demand misses (Intel's L2
 * streamer tracks its requests in the L2's "superqueue"); without one,
 * as a demand miss (mem_read()). Returns when the data is there.
 */
static uint64_t pf_mem_read(struct cm_model *m, unsigned cpu, uint64_t t)
{
	struct cpu *c = &m->cpu[cpu];
	unsigned k = 0;
	uint64_t done;

	if (!m->p.l2_queue)
		return mem_read(m, cpu, t, NULL);
	for (unsigned i = 1; i < m->p.l2_queue; i++)
		if (c->l2q[i] < c->l2q[k])
			k = i;
	t = max_u64(t, c->l2q[k]);
	done = bus_use(m, cpu, t, m->p.wc_burst) + m->p.mem_latency;
	c->l2q[k] = done;
	return done;
}

/*
 * Prefetch line for cpu at clock t into its L2, or the LLC without one:
 * WB lines only, not already held by cpu nor by any other CPU or die (a
 * prefetch never takes a line from another core), from its die's LLC or
 * else from memory (pf_mem_read()).
 */
static void pf_issue(struct cm_model *m, unsigned cpu, uint64_t line,
		     uint64_t t)
{
	struct cpu *c = &m->cpu[cpu];
	bool to_l2 = level_present(&c->l2);
	struct level *llc;
	uint64_t ready, holders;
	long i;

	if (line >= (1ull << (CM_MAX_PHYS_BITS - CM_LINE_SHIFT)))
		return;
	/* Each test below only returns, so the one that most often does
	 * goes first: a streaming CPU without an L2 finds most lines it
	 * would prefetch already in the LLC. */
	llc = llc_of(m, cpu);
	i = level_find(llc, line);
	if (i >= 0 && !to_l2)
		return;
	if (cm_type_of(m, line << CM_LINE_SHIFT) != CM_WB)
		return;
	holders = priv_holders_at(m, i);
	for (unsigned d = 0; d < m->ncpus; d++)
		if (holders >> d & 1 && priv_state(&m->cpu[d], line) != ST_I)
			return;
	if (m->nllc > 1 && llc_other_die_holds(m, cpu, line))
		return;
	if (i >= 0) {
		level_touch(llc, i);
		ready = t + llc->latency;
	} else {
		ready = pf_mem_read(m, cpu, t);
		llc_insert(m, cpu, line, false);
	}
	if (to_l2)
		l2_fill(m, cpu, line, ST_E);
	stat_add(&c->st.prefetches, 1);
	c->pf_recent[pf_slot(line)] = (struct pf_line){line, ready, false};
}

void prefetch(struct cm_model *m, unsigned cpu, uint64_t line,
	      uint64_t t)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t page = line / LINES_PER_PAGE + 1;
	struct pf_stream *s = NULL, *victim = &c->pf[0];
	int dir;

	if (m->p.prefetch_next)
		pf_issue(m, cpu, line ^ 1, t);
	if (!m->p.prefetch_ahead)
		return;
	for (unsigned k = 0; k < PF_STREAMS; k++) {
		if (c->pf[k].page == page)
			s = &c->pf[k];
		if (c->pf[k].stamp < victim->stamp)
			victim = &c->pf[k];
	}
	if (!s) {
		*victim = (struct pf_stream){page, line, line + 1, 0, 0, 0};
		victim->stamp = ++c->pf_tick;
		return;
	}
	s->stamp = ++c->pf_tick;
	if (line == s->last)
		return;
	dir = line > s->last ? 1 : -1;
	if (dir != s->dir) {
		s->dir = dir;
		s->hits = 0;
	}
	s->hits++;
	s->last = line;
	if (s->hits < PF_TRAIN)
		return;
	/* Never behind the demand stream, never beyond its page. */
	if ((dir > 0 && s->next <= line) || (dir < 0 && s->next >= line))
		s->next = line + (uint64_t)(int64_t)dir;
	while (s->next / LINES_PER_PAGE + 1 == page &&
	       (dir > 0 ? s->next - line : line - s->next) <=
		       m->p.prefetch_ahead) {
		pf_issue(m, cpu, s->next, t);
		s->next += (uint64_t)(int64_t)dir;
	}
}
