/*
 * TLB flushes (SDM vol. 3A, 4.10.4) and the address-space side of
 * mm/tlb.h: loaded-CPU masks, PCIDs with a generation count, shootdowns
 * to the CPUs that may hold a translation.
 *
 * PCIDs (SDM 4.10.1): with CR4.PCIDE set, CR3[11:0] tags every
 * translation the CPU caches; writing CR3 with bit 63 set switches
 * without flushing. Each CPU keeps TLB_PCID_SLOTS slots of (space id,
 * generation seen); slot i uses PCID i + 1. A switch to a space finds its
 * slot (kept if the generation did not move, else flushed) or takes the
 * next slot round-robin and flushes it.
 *
 * Ordering (the reason the generation works): a switching CPU sets its
 * bit in space->loaded, then (full barrier) reads space->tlb_gen; a
 * changer bumps tlb_gen, then (full barrier) reads space->loaded. One of
 * the two sees the other: either the changer flushes that CPU or the CPU
 * flushes itself.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/pgtable.h"
#include "arch/x86_64/tlb.h"
#include "lib/config.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/string.h"
#include "mm/vm.h"

#define CR3_NOFLUSH (1ull << 63)
#define CR3_PCID_MASK 0xfffull

BUILD_ASSERT(VM_CPU_WORDS * 64 >= MAX_CPUS);
BUILD_ASSERT(TLB_PCID_SLOTS < CR3_PCID_MASK);

unsigned tlb_flush_ceiling = TLB_FLUSH_CEILING_DEFAULT;
unsigned (*tlb_remote_call)(const uint64_t *cpus, void (*fn)(void *),
			    void *arg);

struct pcid_slot {
	uint64_t space_id; /* 0: free */
	uint64_t gen;	   /* the space's tlb_gen this slot has caught up to */
};

struct tlb_cpu {
	struct addr_space *current;
	struct pcid_slot slot[TLB_PCID_SLOTS];
	unsigned cur_slot;  /* slot of current (user spaces) */
	unsigned next_victim;
	struct tlb_cpu_stats stats;
} __aligned(CACHE_LINE_SIZE);

static struct tlb_cpu tlb_cpus[MAX_CPUS];
static bool pcid_on;

static struct tlb_cpu *me(void)
{
	return &tlb_cpus[percpu_ready() ? this_cpu_id() : 0];
}

static unsigned my_id(void)
{
	return percpu_ready() ? this_cpu_id() : 0;
}

bool tlb_pcid_active(void)
{
	return pcid_on;
}

void tlb_init_cpu(bool allow_pcid)
{
	if (!allow_pcid || !cpu_has(FEAT_PCID)) {
		kassert(!pcid_on || !allow_pcid);
		return;
	}
	/* CR4.PCIDE may only be set with CR3[11:0] = 0 (SDM 4.10.1). */
	kassert((read_cr3() & CR3_PCID_MASK) == 0);
	write_cr4(read_cr4() | CR4_PCIDE);
	pcid_on = true;
}

void tlb_flush_local_page(uint64_t va)
{
	invlpg(va);
	me()->stats.single++;
}

void tlb_flush_local_all(void)
{
	uint64_t cr4 = read_cr4();

	if (cr4 & CR4_PGE) {
		/* Clearing PGE flushes global entries and every PCID. */
		write_cr4(cr4 & ~CR4_PGE);
		write_cr4(cr4);
	} else {
		write_cr3(read_cr3() & ~CR3_NOFLUSH);
	}
	me()->stats.full++;
}

/* Non-global translations of the current PCID (a CR3 reload). */
static void flush_local_user(void)
{
	write_cr3(read_cr3() & ~CR3_NOFLUSH);
	me()->stats.full++;
}

void tlb_flush_local_range(uint64_t va, uint64_t npages, bool global)
{
	struct tlb_cpu_stats *s = &me()->stats;

	s->flushes++;
	s->pages += npages;
	/* With PCIDs, invlpg reaches only the current PCID: a non-global
	 * kernel entry cached under another PCID would survive it. */
	if (global && pcid_on)
		npages = 0;
	if (npages == 0 || npages > tlb_flush_ceiling) {
		if (global)
			tlb_flush_local_all();
		else
			flush_local_user();
		return;
	}
	for (uint64_t i = 0; i < npages; i++)
		tlb_flush_local_page(va + i * PT_LEVEL_SIZE(1));
}

struct flush_req {
	struct addr_space *as; /* NULL: kernel range or "whatever runs" */
	uint64_t va, npages;
	bool kernel;
	unsigned sender;
};

static void flush_handler(void *arg)
{
	const struct flush_req *r = arg;
	struct tlb_cpu *t = me();

	if (my_id() != r->sender)
		t->stats.ipis_received++;
	if (r->kernel) {
		tlb_flush_local_range(r->va, r->npages, true);
		return;
	}
	if (r->as && t->current != r->as)
		return; /* switched away: the generation catches it */
	if (!r->as) {
		t->stats.flushes++;
		flush_local_user();
		return;
	}
	tlb_flush_local_range(r->va, r->npages, false);
}

static unsigned count_others(const uint64_t *cpus)
{
	unsigned n = 0, self = my_id();

	for (unsigned c = 0; c < percpu_count(); c++)
		if (c != self && ((cpus[c / 64] >> (c % 64)) & 1) &&
		    percpu_of(c) && atomic_load_acquire(&percpu_of(c)->online))
			n++;
	return n;
}

static void send(const uint64_t *cpus, struct flush_req *r)
{
	unsigned self = my_id();

	r->sender = self;
	if (!count_others(cpus)) {
		if ((cpus[self / 64] >> (self % 64)) & 1)
			flush_handler(r);
		return;
	}
	if (!tlb_remote_call) {
		if ((cpus[self / 64] >> (self % 64)) & 1)
			flush_handler(r);
		return;
	}
	me()->stats.ipis_sent += count_others(cpus);
	tlb_remote_call(cpus, flush_handler, r);
}

bool tlb_shootdown_may_wait(void)
{
	return (read_rflags() & RFLAGS_IF) || !tlb_remote_call;
}

void tlb_flush_kernel_range(uint64_t va, uint64_t npages)
{
	uint64_t all[VM_CPU_WORDS];
	struct flush_req r = {NULL, va, npages, true, 0};

	memset(all, 0xff, sizeof(all));
	send(all, &r);
}

void tlb_flush_cpus(const uint64_t *cpus, struct addr_space *as, uint64_t va,
		    uint64_t npages)
{
	struct flush_req r = {as, va, npages, false, 0};

	send(cpus, &r);
}

void tlb_space_changed(struct addr_space *as, uint64_t *cpus)
{
	__atomic_fetch_add(&as->tlb_gen, 1, __ATOMIC_SEQ_CST);
	smp_mb();
	for (unsigned w = 0; w < VM_CPU_WORDS; w++)
		cpus[w] |= atomic_load_relaxed(&as->loaded[w]);
}

struct addr_space *tlb_current(void)
{
	return me()->current;
}

/* The slot for as on this CPU and whether its entries may be kept. */
static unsigned pick_slot(struct tlb_cpu *t, struct addr_space *as,
			  uint64_t gen, bool *keep)
{
	for (unsigned i = 0; i < TLB_PCID_SLOTS; i++) {
		if (t->slot[i].space_id == as->id) {
			*keep = t->slot[i].gen >= gen;
			t->slot[i].gen = gen;
			return i;
		}
	}
	unsigned i = t->next_victim;

	t->next_victim = (i + 1) % TLB_PCID_SLOTS;
	t->slot[i].space_id = as->id;
	t->slot[i].gen = gen;
	*keep = false;
	return i;
}

void tlb_switch_to(struct addr_space *as)
{
	struct tlb_cpu *t = me();
	struct addr_space *prev = t->current;
	unsigned cpu = my_id();
	uint64_t flags = cpu_irq_save(), cr3, gen;
	bool keep;

	if (prev == as) {
		cpu_irq_restore(flags);
		return;
	}
	if (prev && prev != &kernel_space)
		__atomic_fetch_and(&prev->loaded[cpu / 64],
				   ~(1ull << (cpu % 64)), __ATOMIC_SEQ_CST);
	t->current = as;
	if (as == &kernel_space) {
		/* No lower half there: keep the PCIDs' entries. */
		write_cr3(as->root_phys | (pcid_on ? CR3_NOFLUSH : 0));
		cpu_irq_restore(flags);
		return;
	}
	__atomic_fetch_or(&as->loaded[cpu / 64], 1ull << (cpu % 64),
			  __ATOMIC_SEQ_CST);
	smp_mb();
	gen = __atomic_load_n(&as->tlb_gen, __ATOMIC_SEQ_CST);
	if (!pcid_on) {
		write_cr3(as->root_phys);
		cpu_irq_restore(flags);
		return;
	}
	t->cur_slot = pick_slot(t, as, gen, &keep);
	cr3 = as->root_phys | (t->cur_slot + 1);
	if (keep) {
		cr3 |= CR3_NOFLUSH;
		t->stats.pcid_hits++;
	} else {
		t->stats.pcid_flushes++;
	}
	write_cr3(cr3);
	cpu_irq_restore(flags);
}

void tlb_stats_read(unsigned cpu, struct tlb_cpu_stats *out)
{
	kassert(cpu < MAX_CPUS);
	*out = tlb_cpus[cpu].stats;
}

void tlb_stats_sum(struct tlb_cpu_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned c = 0; c < MAX_CPUS; c++) {
		const struct tlb_cpu_stats *s = &tlb_cpus[c].stats;

		out->single += s->single;
		out->full += s->full;
		out->ipis_sent += s->ipis_sent;
		out->ipis_received += s->ipis_received;
		out->flushes += s->flushes;
		out->pages += s->pages;
		out->pcid_hits += s->pcid_hits;
		out->pcid_flushes += s->pcid_flushes;
	}
}

void tlb_stats_reset(void)
{
	for (unsigned c = 0; c < MAX_CPUS; c++)
		memset(&tlb_cpus[c].stats, 0, sizeof(tlb_cpus[c].stats));
}
