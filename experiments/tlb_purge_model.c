/*
 * tlb_purge_model: the tlb_purge experiment's glue to the ia64 purge
 * model (see experiments/tlb_purge_model.h). A job's heap page is the
 * model's page in region 1, a toolchain page in region 2, page for page.
 * The old and the new machine get every event in the same order, under
 * one lock.
 */
#include "experiments/tlb_purge_model.h"
#include "arch/ia64/space.h"
#include "arch/ia64/tc.h"
#include "arch/ia64/tlb.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/kprintf.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "mm/vm.h"
#include "workloads/purge_files.h"
#include "workloads/purge_jobs.h"

static struct {
	struct spinlock lock;
	struct ia64_machine *m[2]; /* old, new */
	uint64_t *maps[4];
	struct addr_space *slot_space[IA64_MAX_MMS];
	uint64_t skipped; /* unmaps outside the jobs' spaces (cat's) */
	uint64_t late;	  /* unmaps of pages not reported yet */
	/* Of the unmaps reclaim made (observer calls), those of a space
	 * loaded on another CPU then: what a naive flush sends an IPI for. */
	uint64_t unmaps, unmaps_loaded;
} tp;

void tp_model_init(void)
{
	memset(&tp, 0, sizeof(tp));
	spin_lock_init(&tp.lock, NULL);
}

bool tp_model_setup(unsigned ncpus)
{
	for (int p = 0; p < 2; p++) {
		struct ia64_config cfg = {
			.ncpus = ncpus, .rid_bits = TP_RID_BITS,
			.policy = p == 0 ? IA64_PURGE_OLD : IA64_PURGE_NEW,
			.check_every_purge = true,
		};

		tp.m[p] = kzalloc(sizeof(*tp.m[p]));
		tp.maps[2 * p] = kzalloc(IA64_CTX_WORDS(TP_RID_BITS) * 8);
		tp.maps[2 * p + 1] = kzalloc(IA64_CTX_WORDS(TP_RID_BITS) * 8);
		if (!tp.m[p] || !tp.maps[2 * p] || !tp.maps[2 * p + 1])
			return false;
		if (!ia64_machine_init(tp.m[p], &cfg, tp.maps[2 * p],
				       tp.maps[2 * p + 1])) {
			kprintf("tlb_purge: %s\n", tp.m[p]->fault);
			return false;
		}
	}
	return true;
}

void tp_model_teardown(void)
{
	for (int i = 0; i < 4; i++)
		kfree(tp.maps[i]);
	kfree(tp.m[0]);
	kfree(tp.m[1]);
	memset(tp.maps, 0, sizeof(tp.maps));
	memset(tp.m, 0, sizeof(tp.m));
}

/* The model's page for a job address: heap in region 1, toolchain in
 * region 2, page for page. */
static uint64_t model_va(uint64_t va)
{
	if (va >= PURGE_TOOL_VA)
		return ia64_user_va(2, (unsigned)((va - PURGE_TOOL_VA) / PAGE_SIZE));
	return ia64_user_va(1, (unsigned)((va - PURGE_UVA) / PAGE_SIZE));
}

static bool job_address(uint64_t va)
{
	return (va >= PURGE_UVA && va < PURGE_UVA + PURGE_JOB_PAGES * PAGE_SIZE) ||
	       (va >= PURGE_TOOL_VA &&
		va < PURGE_TOOL_VA + PURGE_TOOL_FILES * PURGE_TOOL_PAGES * PAGE_SIZE);
}

int tp_model_create(struct addr_space *as)
{
	int slot = -1;

	spin_lock(&tp.lock);
	for (int s = 0; s < IA64_MAX_MMS && slot < 0; s++)
		if (!tp.slot_space[s])
			slot = s;
	kassert(slot >= 0);
	tp.slot_space[slot] = as;
	for (int p = 0; p < 2; p++)
		ia64_space_create(tp.m[p], slot);
	spin_unlock(&tp.lock);
	return slot;
}

void tp_model_exit(int slot)
{
	spin_lock(&tp.lock);
	for (int p = 0; p < 2; p++)
		ia64_space_exit(tp.m[p], slot);
	tp.slot_space[slot] = NULL;
	spin_unlock(&tp.lock);
}

void tp_model_switch(unsigned cpu, int slot)
{
	spin_lock(&tp.lock);
	for (int p = 0; p < 2; p++)
		ia64_switch_to(tp.m[p], cpu, slot);
	spin_unlock(&tp.lock);
}

/* Whether as is loaded on a CPU other than this one now. */
static bool loaded_elsewhere(const struct addr_space *as)
{
	unsigned self = smp_this_cpu();

	for (unsigned w = 0; w < VM_CPU_WORDS; w++) {
		uint64_t m = atomic_load_relaxed(&as->loaded[w]);

		if (w == self / 64)
			m &= ~(1ull << (self % 64));
		if (m)
			return true;
	}
	return false;
}

/* Reclaim observer (reverse-map lock held): a purge request from CPU 0
 * for each page of a job's space. */
void tp_model_purge(struct addr_space *as, uint64_t va, void *arg)
{
	int slot = -1;

	(void)arg;
	spin_lock(&tp.lock);
	tp.unmaps++;
	tp.unmaps_loaded += loaded_elsewhere(as);
	for (int s = 0; s < IA64_MAX_MMS && slot < 0; s++)
		if (tp.slot_space[s] == as)
			slot = s;
	if (slot >= 0 && job_address(va)) {
		for (int p = 0; p < 2; p++) {
			/* A job reports its turn's pages at the turn's end;
			 * a page reclaimed before that is mapped first. */
			if (!ia64_space_mapped(tp.m[p], slot, model_va(va))) {
				ia64_space_map(tp.m[p], slot, model_va(va));
				tp.late += p == 0;
			}
			ia64_unmap_page(tp.m[p], 0, slot, model_va(va));
		}
	} else {
		tp.skipped++;
	}
	spin_unlock(&tp.lock);
}

/* A turn's events for the model, handed over under one lock; the CPU
 * stays in the space until its next switch, as the real one does. */
void tp_model_turn(unsigned cpu, int slot, const uint64_t *va, unsigned n)
{
	spin_lock(&tp.lock);
	for (int p = 0; p < 2; p++) {
		ia64_switch_to(tp.m[p], cpu, slot);
		for (unsigned i = 0; i < n; i++) {
			ia64_space_map(tp.m[p], slot, model_va(va[i]));
			ia64_touch(tp.m[p], cpu, model_va(va[i]));
		}
	}
	spin_unlock(&tp.lock);
}

/* The ia64 model's global purges so far, in the seed's style. */
void tp_model_line(void)
{
	spin_lock(&tp.lock);
	kprintf("PTC.E: %lu (old) %lu (new)\n",
		(unsigned long)tp.m[0]->cnt.global_purges,
		(unsigned long)tp.m[1]->cnt.global_purges);
	spin_unlock(&tp.lock);
}

void tp_model_idle(unsigned cpu)
{
	tp_model_switch(cpu, IA64_KTHREAD);
}

const struct ia64_machine *tp_model_machine(int p)
{
	return tp.m[p];
}

uint64_t tp_model_unmaps_loaded(void)
{
	return tp.unmaps_loaded;
}

uint64_t tp_model_skipped(void)
{
	return tp.skipped;
}

uint64_t tp_model_late(void)
{
	return tp.late;
}
