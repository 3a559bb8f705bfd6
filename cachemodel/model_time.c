/*
 * Time in the cache model (cachemodel/model.h, invariant 5): a CPU's
 * stalls, the bus as a timeline of its occupancy, fill buffers, reads
 * and write-backs of memory, and the hand-over of a contended line
 * between CPUs. Every time is a CPU clock (cpu_now()).
 */
#include "cachemodel/model_internal.h"

void stall_until(struct cm_model *m, unsigned cpu, uint64_t t)
{
	uint64_t now = cpu_now(m, cpu);

	if (t > now)
		stat_add(&m->cpu[cpu].st.mem_cycles, t - now);
}

uint64_t bus_use(struct cm_model *m, unsigned cpu, uint64_t t,
		 uint32_t occ)
{
	struct bus *b = &m->bus[cpu / m->bus_cpus];
	uint64_t first = t / BUS_SLOT_CYCLES, start = UINT64_MAX;
	uint64_t left = occ;

	for (uint64_t e = first; left > 0; e++) {
		uint64_t *slot = &b->slot[e % BUS_SLOTS];
		uint64_t w = __atomic_load_n(slot, __ATOMIC_RELAXED);
		uint64_t used, take;

		do {
			if (w >> BUS_USED_BITS > e) {
				/* Older than the window (struct bus). */
				stat_add(&m->cpu[cpu].st.bus_late, 1);
				return start == UINT64_MAX ? t : start;
			}
			used = w >> BUS_USED_BITS == e ? w & BUS_USED_MASK : 0;
			if (e == first)
				used = max_u64(used, t % BUS_SLOT_CYCLES);
			if (start == UINT64_MAX &&
			    e * BUS_SLOT_CYCLES + used - t > m->bus_queue_max) {
				stat_add(&m->cpu[cpu].st.bus_queued,
					 m->bus_queue_max);
				return t + m->bus_queue_max;
			}
			if (used >= BUS_SLOT_CYCLES)
				break;		/* full: the next slot */
			take = BUS_SLOT_CYCLES - used;
			if (take > left)
				take = left;
		} while (!__atomic_compare_exchange_n(
			slot, &w, e << BUS_USED_BITS | (used + take), true,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED));
		if (used >= BUS_SLOT_CYCLES)
			continue;
		if (start == UINT64_MAX)
			start = e * BUS_SLOT_CYCLES + used;
		left -= take;
	}
	if (start == UINT64_MAX)
		return t;	/* occ 0: nothing to book */
	if (start > t)
		stat_add(&m->cpu[cpu].st.bus_queued, start - t);
	return start;
}

int fb_take(struct cm_model *m, unsigned cpu, uint64_t *t)
{
	struct cpu *c = &m->cpu[cpu];
	int k = 0;

	if (!m->p.fill_buffers)
		return -1;
	for (unsigned i = 1; i < m->p.fill_buffers; i++)
		if (c->fb[i] < c->fb[k])
			k = (int)i;
	*t = max_u64(*t, c->fb[k]);
	return k;
}

uint64_t mem_read(struct cm_model *m, unsigned cpu, uint64_t t,
		  uint64_t *granted)
{
	int k = fb_take(m, cpu, &t);
	uint64_t done = bus_use(m, cpu, t, m->p.wc_burst) + m->p.mem_latency;

	if (k >= 0)
		m->cpu[cpu].fb[k] = done;
	if (granted)
		*granted = t;
	return done;
}

uint64_t cache_fill(struct cm_model *m, unsigned cpu, uint64_t t,
		    uint32_t lat, uint64_t pf, uint64_t *granted)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t done;
	int k;

	if (!granted)
		return max_u64(t + lat, pf);
	k = fb_take(m, cpu, &t);
	/* Lines reach L1D one after another, l1_fill cycles apart; with a
	 * fixed latency, spacing the requests spaces their arrivals. */
	if (m->p.l1_fill) {
		t = max_u64(t, c->fill_free);
		c->fill_free = t + m->p.l1_fill;
	}
	done = max_u64(t + lat, pf);
	if (k >= 0)
		c->fb[k] = done;
	*granted = t;
	return done;
}

void mem_write_back(struct cm_model *m, unsigned cpu)
{
	uint64_t t;
	int k;

	if (cpu == NO_CPU)
		return;
	stat_add(&m->cpu[cpu].st.writebacks, 1);
	t = cpu_now(m, cpu);
	k = fb_take(m, cpu, &t);
	t = bus_use(m, cpu, t, m->p.wc_burst) + m->p.wc_burst;
	if (k >= 0)
		m->cpu[cpu].fb[k] = t;
}

uint64_t hand_over(struct cm_model *m, unsigned cpu, uint64_t line,
		   uint64_t t, uint64_t written)
{
	struct line_clock *lc =
		&m->line_clock[fib_hash(line, LINE_CLOCK_BITS)];
	uint64_t cap = (uint64_t)(m->ncpus - 1) * m->p.remote_latency;
	uint64_t start = t, causal;

	if (lc->line == line && lc->free > t)
		start = lc->free - t > cap ? t + cap : lc->free;
	if (start > t)
		stat_add(&m->cpu[cpu].st.line_queued, start - t);
	causal = written > t + m->causal_window ? t + m->causal_window
						: written;
	if (causal > start) {
		stat_add(&m->cpu[cpu].st.causal_waits, causal - start);
		start = causal;
	}
	lc->line = line;
	lc->free = start + m->p.remote_latency;
	stat_add(&m->cpu[cpu].st.transfers, 1);
	return lc->free;
}
