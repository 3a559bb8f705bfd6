/*
 * Context (region-ID) allocation with wrap-around and delayed flush; see
 * context.h. The bitmaps have one bit per context number.
 */
#include "arch/ia64/context.h"
#include "arch/ia64/tc.h"
#include "lib/assert.h"

#define BIT_WORD(n) ((n) / 64)
#define BIT_MASK(n) (1ull << ((n) % 64))

static bool test_bit(const uint64_t *map, uint32_t n)
{
	return (map[BIT_WORD(n)] & BIT_MASK(n)) != 0;
}

/* First n >= from below max with the bit equal to want; max if none. */
static uint32_t find_next(const uint64_t *map, uint32_t max, uint32_t from,
			  bool want)
{
	uint32_t n = from;

	while (n < max) {
		uint64_t w = want ? map[BIT_WORD(n)] : ~map[BIT_WORD(n)];

		w &= ~0ull << (n % 64);
		if (w) {
			n = (n & ~63u) + (uint32_t)__builtin_ctzll(w);
			return n < max ? n : max;
		}
		n = (n & ~63u) + 64;
	}
	return max;
}

static void delayed_tlb_flush(struct ia64_machine *m, unsigned cpu)
{
	struct ia64_cpu *c = &m->cpus[cpu];

	if (!c->need_tlb_flush)
		return;
	ia64_ptce_loop(m, cpu);
	c->cnt.ptc_e_loops_wrap++;
	c->need_tlb_flush = false;
}

static void wrap_mmu_context(struct ia64_machine *m, unsigned cpu)
{
	uint32_t words = (m->max_ctx + 63) / 64;

	for (uint32_t i = 0; i < words; i++) {
		kassert((m->flushmap[i] & ~m->bitmap[i]) == 0);
		m->bitmap[i] ^= m->flushmap[i];
		m->flushmap[i] = 0;
	}
	m->next = find_next(m->bitmap, m->max_ctx, IA64_FIRST_CONTEXT, false);
	m->limit = find_next(m->bitmap, m->max_ctx, m->next, true);
	m->cnt.wraps++;
	for (unsigned i = 0; i < m->cfg.ncpus; i++)
		if (i != cpu)
			m->cpus[i].need_tlb_flush = true;
	ia64_ptce_loop(m, cpu);
	m->cpus[cpu].cnt.ptc_e_loops_wrap++;
	m->cpus[cpu].need_tlb_flush = false;
}

uint32_t ia64_get_mmu_context(struct ia64_machine *m, unsigned cpu, int slot)
{
	struct ia64_mm *mm;

	kassert(slot >= 0 && slot < IA64_MAX_MMS && cpu < m->cfg.ncpus);
	mm = &m->mms[slot];
	kassert(mm->live);
	if (mm->context == 0) {
		mm->cpu_vm_mask = 0;
		if (m->next >= m->limit) {
			m->next = find_next(m->bitmap, m->max_ctx, m->next,
					    false);
			m->limit = find_next(m->bitmap, m->max_ctx, m->next,
					     true);
			if (m->next >= m->max_ctx) {
				wrap_mmu_context(m, cpu);
				kassert(m->next < m->max_ctx);
			}
		}
		mm->context = m->next++;
		kassert(!test_bit(m->bitmap, mm->context));
		m->bitmap[BIT_WORD(mm->context)] |= BIT_MASK(mm->context);
		m->cnt.contexts++;
	}
	delayed_tlb_flush(m, cpu);
	return mm->context;
}

void ia64_activate_context(struct ia64_machine *m, unsigned cpu, int slot)
{
	uint32_t ctx = ia64_get_mmu_context(m, cpu, slot);

	m->mms[slot].cpu_vm_mask |= 1ull << cpu;
	for (unsigned r = 0; r < IA64_USER_REGIONS; r++)
		ia64_set_rr(m, cpu, r, ia64_rid(ctx, r));
}

void ia64_retire_context(struct ia64_machine *m, int slot)
{
	struct ia64_mm *mm = &m->mms[slot];

	if (mm->context) {
		kassert(test_bit(m->bitmap, mm->context));
		m->flushmap[BIT_WORD(mm->context)] |= BIT_MASK(mm->context);
	}
	mm->context = 0;
}
