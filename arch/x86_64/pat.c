/*
 * PAT programming (SDM vol. 3A, 11.12) and MTRR read-out (11.11).
 *
 * The PAT may only be changed with caching disabled and the caches and
 * TLBs flushed before and after, on every CPU, so that no line is cached
 * under a type the new PAT no longer allows (11.12.4).
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/msr.h"
#include "arch/x86_64/pat.h"
#include "arch/x86_64/tlb.h"
#include "lib/kprintf.h"

struct mtrr_state mtrr_state;
bool mtrr_present;

uint64_t pat_read(void)
{
	return rdmsr(MSR_PAT);
}

bool pat_program(void)
{
	uint64_t want = pat_layout_msr_value(), got;
	uint64_t rflags = read_rflags(), cr0 = read_cr0();
	char why[64];

	if (!cpu_has(FEAT_PAT)) {
		kprintf("pat: this CPU has no PAT; every page is WB/WT/UC- "
			"through PWT/PCD only\n");
		return false;
	}
	cpu_cli();
	write_cr0((cr0 | CR0_CD) & ~CR0_NW);
	wbinvd();
	tlb_flush_local_all();
	wrmsr(MSR_PAT, want);
	wbinvd();
	tlb_flush_local_all();
	write_cr0(cr0);
	if (rflags & RFLAGS_IF)
		cpu_sti();

	got = pat_read();
	if (pat_check_layout(got, why, sizeof(why)) >= 0) {
		kprintf("pat: read back %#lx, wanted %#lx: %s\n",
			(unsigned long)got, (unsigned long)want, why);
		return false;
	}
	return true;
}

void mtrr_read(void)
{
	uint64_t cap, def;
	unsigned n;

	if (!cpu_has(FEAT_MTRR)) {
		mtrr_present = false;
		mtrr_state_init(&mtrr_state, 0, 0, cpu_info.phys_addr_bits);
		return;
	}
	mtrr_present = true;
	cap = rdmsr(MSR_MTRRCAP);
	def = rdmsr(MSR_MTRR_DEF_TYPE);
	mtrr_state_init(&mtrr_state, cap, def, cpu_info.phys_addr_bits);
	if (mtrr_state.fixed_supported)
		for (unsigned i = 0; i < MTRR_NUM_FIXED_MSRS; i++)
			mtrr_state.fixed[i] = rdmsr(mtrr_fixed_msr[i]);
	n = mtrr_state.vcnt;
	for (unsigned i = 0; i < n && i < MTRR_MAX_VAR_RANGES; i++) {
		mtrr_state.var[i].base = rdmsr(MTRR_PHYSBASE_MSR(i));
		mtrr_state.var[i].mask = rdmsr(MTRR_PHYSMASK_MSR(i));
	}
}

enum memtype memtype_effective_at(uint64_t phys, enum memtype pat)
{
	enum memtype mtrr = mtrr_present ? mtrr_type_of(&mtrr_state, phys) :
					   MEMTYPE_WB;
	unsigned notes;

	if (mtrr == MEMTYPE_UNDEFINED)
		return MEMTYPE_UNDEFINED;
	return mtrr_pat_combine(mtrr, pat, &notes);
}

void pat_print(void)
{
	enum memtype pat[PAT_NUM_ENTRIES];
	uint64_t v = pat_read();

	pat_decode(v, pat);
	kprintf("pat: IA32_PAT = %#lx:", (unsigned long)v);
	for (unsigned i = 0; i < PAT_NUM_ENTRIES; i++)
		kprintf(" PAT%u=%s", i, memtype_name(pat[i]));
	kprintf("\n");
}
