/*
 * Spaces and CPUs of the ia64 model; see space.h.
 */
#include "arch/ia64/space.h"
#include "arch/ia64/context.h"
#include "arch/ia64/tc.h"
#include "lib/assert.h"
#include "lib/string.h"

static bool page_index(uint64_t va, unsigned *region, unsigned *page)
{
	uint64_t off = va & IA64_REGION_OFFSET_MASK;

	*region = ia64_region(va);
	*page = (unsigned)(off >> IA64_PAGE_SHIFT);
	return *region < IA64_USER_REGIONS &&
	       (off >> IA64_PAGE_SHIFT) < IA64_MM_PAGES;
}

void ia64_space_create(struct ia64_machine *m, int slot)
{
	struct ia64_mm *mm;

	kassert(slot >= 0 && slot < IA64_MAX_MMS);
	mm = &m->mms[slot];
	kassert(!mm->live);
	memset(mm, 0, sizeof(*mm));
	mm->live = true;
}

void ia64_space_exit(struct ia64_machine *m, int slot)
{
	struct ia64_mm *mm;

	kassert(slot >= 0 && slot < IA64_MAX_MMS);
	mm = &m->mms[slot];
	kassert(mm->live);
	ia64_retire_context(m, slot);
	memset(mm->mapped, 0, sizeof(mm->mapped));
	mm->live = false;
	for (unsigned c = 0; c < m->cfg.ncpus; c++) {
		if (m->cpus[c].active == slot) {
			kassert(m->cpus[c].kthread);
			m->cpus[c].active = IA64_NO_MM;
		}
	}
}

bool ia64_space_map(struct ia64_machine *m, int slot, uint64_t va)
{
	unsigned r, p;

	kassert(slot >= 0 && slot < IA64_MAX_MMS && m->mms[slot].live);
	if (!page_index(va, &r, &p))
		return false;
	m->mms[slot].mapped[r][p / 64] |= 1ull << (p % 64);
	return true;
}

bool ia64_space_mapped(const struct ia64_machine *m, int slot, uint64_t va)
{
	unsigned r, p;

	if (!page_index(va, &r, &p))
		return false;
	return (m->mms[slot].mapped[r][p / 64] >> (p % 64)) & 1;
}

bool ia64_space_clear(struct ia64_machine *m, int slot, uint64_t va)
{
	unsigned r, p;

	kassert(slot >= 0 && slot < IA64_MAX_MMS && m->mms[slot].live);
	if (!ia64_space_mapped(m, slot, va))
		return false;
	page_index(va, &r, &p);
	m->mms[slot].mapped[r][p / 64] &= ~(1ull << (p % 64));
	return true;
}

void ia64_switch_to(struct ia64_machine *m, unsigned cpu, int slot)
{
	struct ia64_cpu *c;

	kassert(cpu < m->cfg.ncpus);
	c = &m->cpus[cpu];
	if (slot == IA64_KTHREAD) {
		c->kthread = true; /* enter_lazy_tlb: active stays */
		return;
	}
	kassert(slot >= 0 && slot < IA64_MAX_MMS && m->mms[slot].live);
	c->kthread = false;
	c->active = slot;
	ia64_activate_context(m, cpu, slot);
}

bool ia64_touch(struct ia64_machine *m, unsigned cpu, uint64_t va)
{
	struct ia64_cpu *c;

	kassert(cpu < m->cfg.ncpus);
	c = &m->cpus[cpu];
	if (c->kthread || c->active == IA64_NO_MM ||
	    !ia64_space_mapped(m, c->active, va))
		return false;
	ia64_itc(m, cpu, va, IA64_PAGE_SHIFT);
	return true;
}

static bool fail(struct ia64_machine *m, const char *what, unsigned cpu,
		 uint32_t rid, uint64_t va)
{
	static const char hex[] = "0123456789abcdef";
	char *p = m->fault;
	const char *s;

	if (m->fault[0])
		return false;
	/* "what cpu N rid 0x... va 0x...", without printf (portable). */
	for (s = what; *s; s++)
		*p++ = *s;
	for (s = " cpu "; *s; s++)
		*p++ = *s;
	*p++ = (char)('0' + cpu / 10);
	*p++ = (char)('0' + cpu % 10);
	for (s = " rid 0x"; *s; s++)
		*p++ = *s;
	for (int i = 20; i >= 0; i -= 4)
		*p++ = hex[(rid >> i) & 0xf];
	for (s = " va 0x"; *s; s++)
		*p++ = *s;
	for (int i = 60; i >= 0; i -= 4)
		*p++ = hex[(va >> i) & 0xf];
	*p = '\0';
	kassert(p < m->fault + sizeof(m->fault));
	return false;
}

/* Live contexts -> slots, for one check: open addressing. */
#define OWNER_TABLE 128
BUILD_ASSERT(OWNER_TABLE >= 2 * IA64_MAX_MMS);

struct owner_table {
	uint32_t ctx[OWNER_TABLE]; /* 0: empty */
	int slot[OWNER_TABLE];
};

static void owners_build(const struct ia64_machine *m, struct owner_table *t)
{
	memset(t->ctx, 0, sizeof(t->ctx));
	for (int s = 0; s < IA64_MAX_MMS; s++) {
		uint32_t ctx = m->mms[s].context, h = ctx % OWNER_TABLE;

		if (!m->mms[s].live || ctx == IA64_KERNEL_CONTEXT)
			continue;
		while (t->ctx[h])
			h = (h + 1) % OWNER_TABLE;
		t->ctx[h] = ctx;
		t->slot[h] = s;
	}
}

/* The live space owning context ctx, or IA64_NO_MM. */
static int owner_of(const struct owner_table *t, uint32_t ctx)
{
	for (uint32_t h = ctx % OWNER_TABLE; t->ctx[h]; h = (h + 1) % OWNER_TABLE)
		if (t->ctx[h] == ctx)
			return t->slot[h];
	return IA64_NO_MM;
}

static bool rid_loaded(const struct ia64_cpu *c, uint32_t rid)
{
	if (c->kthread || c->active == IA64_NO_MM)
		return false;
	for (unsigned r = 0; r < IA64_USER_REGIONS; r++)
		if (c->rr_rid[r] == rid)
			return true;
	return false;
}

bool ia64_check(struct ia64_machine *m)
{
	struct owner_table owners;
	int n_ctx[IA64_MAX_MMS] = {0};

	owners_build(m, &owners);
	for (int s = 0; s < IA64_MAX_MMS; s++) {
		const struct ia64_mm *mm = &m->mms[s];
		uint32_t ctx = mm->context;

		if (!mm->live || ctx == 0)
			continue;
		if (ctx >= m->max_ctx || !((m->bitmap[ctx / 64] >> (ctx % 64)) & 1))
			return fail(m, "context not allocated", 0, ctx, 0);
		if ((m->flushmap[ctx / 64] >> (ctx % 64)) & 1)
			return fail(m, "live context retired", 0, ctx, 0);
		for (int o = 0; o < s; o++)
			n_ctx[s] += m->mms[o].live && m->mms[o].context == ctx;
		if (n_ctx[s])
			return fail(m, "context shared", 0, ctx, 0);
	}
	for (unsigned cpu = 0; cpu < m->cfg.ncpus; cpu++) {
		const struct ia64_cpu *c = &m->cpus[cpu];

		for (unsigned set = 0; set < IA64_TC_SETS; set++) {
			for (unsigned w = 0; w < IA64_TC_WAYS; w++) {
				const struct ia64_tc_entry *e = &c->tc[set][w];
				int owner;

				if (!e->valid)
					continue;
				owner = owner_of(&owners,
						 e->rid >> IA64_RID_REGION_BITS);
				if (owner == IA64_NO_MM)
					continue;
				if (c->need_tlb_flush && !rid_loaded(c, e->rid))
					continue;
				if (ia64_region(e->va) !=
				    (e->rid & ((1u << IA64_RID_REGION_BITS) - 1)))
					return fail(m, "region mismatch", cpu,
						    e->rid, e->va);
				if (!ia64_space_mapped(m, owner, e->va))
					return fail(m, "stale translation", cpu,
						    e->rid, e->va);
			}
		}
	}
	return true;
}
