/*
 * Linux/ia64's flush_tlb_all(), flush_tlb_range() and both versions of
 * ia64_global_tlb_purge() on the model; see tlb.h.
 */
#include "arch/ia64/tlb.h"
#include "arch/ia64/context.h"
#include "arch/ia64/space.h"
#include "arch/ia64/tc.h"
#include "lib/assert.h"

void ia64_flush_tlb_all(struct ia64_machine *m)
{
	m->cnt.global_purges++;
	/* An IPI to every CPU; each empties its TC. */
	for (unsigned c = 0; c < m->cfg.ncpus; c++) {
		ia64_ptce_loop(m, c);
		m->cpus[c].cnt.ptc_e_loops_purge++;
	}
}

static void ptc_ga_range(struct ia64_machine *m, unsigned cpu, uint64_t start,
			 uint64_t end, unsigned nbits)
{
	/* Hardware wants ptc.ga serialised machine-wide (Linux's
	 * ptcg_lock); the model runs one request at a time. */
	do {
		ia64_ptc_ga(m, cpu, start, nbits);
		start += 1ull << nbits;
	} while (start < end);
}

void ia64_global_tlb_purge(struct ia64_machine *m, unsigned cpu, int slot,
			   uint64_t start, uint64_t end, unsigned nbits)
{
	struct ia64_cpu *c = &m->cpus[cpu];
	int active = c->active;

	m->cnt.purge_calls++;
	if (slot != active)
		m->cnt.inactive_purges++;
	if (m->cfg.policy == IA64_PURGE_OLD) {
		if (slot != active || c->kthread) {
			ia64_flush_tlb_all(m);
			return;
		}
		ptc_ga_range(m, cpu, start, end, nbits);
		return;
	}
	if (slot != active) {
		if (active == IA64_NO_MM) {
			ia64_flush_tlb_all(m);
			return;
		}
		/* Load the space's region IDs for the purge. */
		ia64_activate_context(m, cpu, slot);
		m->cnt.rid_switches++;
	}
	ptc_ga_range(m, cpu, start, end, nbits);
	if (slot != active)
		ia64_activate_context(m, cpu, active);
}

/* Smallest purge size >= the range that the CPU supports. */
static unsigned purge_bits(uint64_t size)
{
	unsigned nbits = 0;
	unsigned max_bits = 63 - (unsigned)__builtin_clzll(IA64_PURGE_SIZES_MASK);

	while (nbits < 63 && (1ull << nbits) < size)
		nbits++;
	while (nbits < max_bits && !((1ull << nbits) & IA64_PURGE_SIZES_MASK))
		nbits++;
	return nbits > max_bits ? max_bits : nbits;
}

void ia64_flush_tlb_range(struct ia64_machine *m, unsigned cpu, int slot,
			  uint64_t start, uint64_t end)
{
	struct ia64_cpu *c = &m->cpus[cpu];
	unsigned nbits = purge_bits(end - start);

	kassert(end > start);
	m->cnt.range_flushes++;
	start &= ~((1ull << nbits) - 1);
	if (slot != c->active || m->mms[slot].cpu_vm_mask != 1ull << cpu) {
		ia64_global_tlb_purge(m, cpu, slot, start, end, nbits);
		return;
	}
	m->cnt.local_range_flushes++;
	do {
		ia64_ptc_l(m, cpu, start, nbits);
		start += 1ull << nbits;
	} while (start < end);
}

bool ia64_unmap_page(struct ia64_machine *m, unsigned cpu, int slot,
		     uint64_t va)
{
	uint64_t page = va & ~(IA64_PAGE_SIZE - 1);

	if (!ia64_space_clear(m, slot, page))
		return false;
	ia64_flush_tlb_range(m, cpu, slot, page, page + IA64_PAGE_SIZE);
	if (m->cfg.check_every_purge)
		ia64_check(m);
	return true;
}
