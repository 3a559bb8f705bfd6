/*
 * The modelled translation cache and its purge instructions. Each CPU's
 * TC is IA64_TC_SETS sets of IA64_TC_WAYS entries; a page goes to the set
 * of its page number, replacing ways round-robin.
 */
#include "arch/ia64/tc.h"
#include "lib/assert.h"

static unsigned tc_set(uint64_t va)
{
	return (unsigned)((va >> IA64_PAGE_SHIFT) & (IA64_TC_SETS - 1));
}

static uint64_t page_base(uint64_t va, unsigned page_shift)
{
	return va & ~((1ull << page_shift) - 1);
}

void ia64_set_rr(struct ia64_machine *m, unsigned cpu, unsigned region,
		 uint32_t rid)
{
	kassert(cpu < m->cfg.ncpus && region < IA64_REGIONS);
	kassert(rid < (1u << m->cfg.rid_bits));
	m->cpus[cpu].rr_rid[region] = rid;
}

void ia64_itc(struct ia64_machine *m, unsigned cpu, uint64_t va,
	      unsigned page_shift)
{
	struct ia64_cpu *c = &m->cpus[cpu];
	uint32_t rid = c->rr_rid[ia64_region(va)];
	unsigned set = tc_set(va);
	struct ia64_tc_entry *e;

	kassert(cpu < m->cfg.ncpus);
	/* Base pages only: a page's entry lives in its own set. */
	kassert(page_shift == IA64_PAGE_SHIFT);
	if (ia64_tc_holds(m, cpu, rid, va))
		return;
	e = &c->tc[set][c->victim[set]];
	c->victim[set] = (uint8_t)((c->victim[set] + 1) % IA64_TC_WAYS);
	e->va = page_base(va, page_shift);
	e->rid = rid;
	e->page_shift = (uint8_t)page_shift;
	e->valid = true;
	c->cnt.tc_inserts++;
}

static bool entry_covers(const struct ia64_tc_entry *e, uint32_t rid,
			 uint64_t va)
{
	return e->valid && e->rid == rid &&
	       page_base(va, e->page_shift) == e->va;
}

bool ia64_tc_holds(const struct ia64_machine *m, unsigned cpu, uint32_t rid,
		   uint64_t va)
{
	const struct ia64_cpu *c = &m->cpus[cpu];
	unsigned s = tc_set(va);

	for (unsigned w = 0; w < IA64_TC_WAYS; w++)
		if (entry_covers(&c->tc[s][w], rid, va))
			return true;
	return false;
}

bool ia64_tc_lookup(const struct ia64_machine *m, unsigned cpu, uint64_t va)
{
	return ia64_tc_holds(m, cpu, m->cpus[cpu].rr_rid[ia64_region(va)], va);
}

/* Remove cpu's entries of rid overlapping [start, start + 2^shift). */
static void purge_range(struct ia64_machine *m, unsigned cpu, uint32_t rid,
			uint64_t va, unsigned page_shift)
{
	struct ia64_cpu *c = &m->cpus[cpu];
	uint64_t start = page_base(va, page_shift);
	uint64_t end = start + (1ull << page_shift);

	for (unsigned s = 0; s < IA64_TC_SETS; s++) {
		for (unsigned w = 0; w < IA64_TC_WAYS; w++) {
			struct ia64_tc_entry *e = &c->tc[s][w];
			uint64_t e_end = e->va + (1ull << e->page_shift);

			if (e->valid && e->rid == rid && e->va < end &&
			    start < e_end) {
				e->valid = false;
				c->cnt.tc_purged++;
			}
		}
	}
}

void ia64_ptc_l(struct ia64_machine *m, unsigned cpu, uint64_t va,
		unsigned page_shift)
{
	kassert(cpu < m->cfg.ncpus);
	m->cpus[cpu].cnt.ptc_l++;
	purge_range(m, cpu, m->cpus[cpu].rr_rid[ia64_region(va)], va,
		    page_shift);
}

void ia64_ptc_ga(struct ia64_machine *m, unsigned cpu, uint64_t va,
		 unsigned page_shift)
{
	uint32_t rid;

	kassert(cpu < m->cfg.ncpus);
	rid = m->cpus[cpu].rr_rid[ia64_region(va)];
	m->cpus[cpu].cnt.ptc_ga++;
	for (unsigned c = 0; c < m->cfg.ncpus; c++)
		purge_range(m, c, rid, va, page_shift);
}

void ia64_ptc_e(struct ia64_machine *m, unsigned cpu, uint64_t addr)
{
	struct ia64_cpu *c = &m->cpus[cpu];
	unsigned set = (unsigned)(((addr - m->cfg.ptce.base) >>
				   IA64_PTCE_SET_SHIFT) &
				  (IA64_TC_SETS - 1));

	c->cnt.ptc_e++;
	for (unsigned w = 0; w < IA64_TC_WAYS; w++) {
		if (c->tc[set][w].valid) {
			c->tc[set][w].valid = false;
			c->cnt.tc_purged++;
		}
	}
}

void ia64_ptce_loop(struct ia64_machine *m, unsigned cpu)
{
	const struct ia64_ptce_info *p = &m->cfg.ptce;
	uint64_t addr = p->base;

	kassert(cpu < m->cfg.ncpus);
	for (uint32_t i = 0; i < p->count[0]; i++) {
		for (uint32_t j = 0; j < p->count[1]; j++) {
			ia64_ptc_e(m, cpu, addr);
			addr += p->stride[1];
		}
		addr += p->stride[0];
	}
	/* srlz.i: the purges are visible to the next instruction fetch. */
	m->cpus[cpu].cnt.ptc_e_loops++;
}
