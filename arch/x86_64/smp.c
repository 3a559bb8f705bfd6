/*
 * AP start-up (see smp.h; SDM vol. 3A, 9.4.4 for the INIT-SIPI-SIPI
 * sequence and its delays). APs are started one at a time: the trampoline
 * page and its parameter block are shared, and sequential start-up keeps
 * the "cpu N online" lines in order.
 *
 *   BSP                                   AP
 *   fill params (stack, percpu, CR3)
 *   INIT, 10 ms, SIPI                     real mode at TRAMPOLINE_PHYS
 *   200 us, SIPI again if stage == 0      -> protected -> long mode
 *   wait for percpu->online               ap_main(): GDT/TSS, IDT, PAT,
 *     (at most AP_START_TIMEOUT_MS)       LAPIC, "cpu N online", entry()
 */
#include "arch/x86_64/apic.h"
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/fpu.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/msr.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/smp.h"
#include "arch/x86_64/pat.h"
#include "arch/x86_64/pgtable.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/tsc.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/kprintf.h"
#include "lib/string.h"
#include "mm/vm.h"

#define INIT_DELAY_US 10000
#define SIPI_DELAY_US 200
#define SIPI_VECTOR (TRAMPOLINE_PHYS >> PAGE_SHIFT)
#define STAGE_IN_C 4

/* Trampoline page tables, right after the code page. */
#define TRAMP_PML4_PHYS (TRAMPOLINE_PHYS + 1 * PAGE_SIZE)
#define TRAMP_PDPT_PHYS (TRAMPOLINE_PHYS + 2 * PAGE_SIZE)
#define TRAMP_PD_PHYS (TRAMPOLINE_PHYS + 3 * PAGE_SIZE)

/* AP memory: percpu page (order 0), cpu_tables and stack below. */
#define AP_TABLES_ORDER 3
#define AP_STACK_ORDER 3

/* Mirrors the parameter block at the end of boot/trampoline.asm. */
struct trampoline_params {
	uint64_t tramp_cr3;
	uint64_t cr4;
	uint64_t efer;
	uint64_t kernel_cr3;
	uint64_t stack_top;
	uint64_t percpu;
	uint64_t stage;
};

extern const char trampoline_start[], trampoline_end[];
extern const char trampoline_params[];

/* What every AP copies from the boot CPU. */
static uint64_t boot_pat, boot_cr0, boot_cr4, boot_efer;
/* What every AP runs once online. */
static __noreturn void (*ap_entry)(void);

BUILD_ASSERT(sizeof(struct cpu_tables) <= (PAGE_SIZE << AP_TABLES_ORDER));

uint64_t ap_boot_pat(void)
{
	return boot_pat;
}

void ap_boot_state_save(void)
{
	boot_pat = rdmsr(MSR_PAT);
	this_cpu()->pat = boot_pat;
	boot_cr0 = read_cr0();
	boot_cr4 = read_cr4();
	boot_efer = rdmsr(MSR_EFER);
}

static struct trampoline_params *params(void)
{
	return phys_to_virt(TRAMPOLINE_PHYS +
			    (uint64_t)(trampoline_params - trampoline_start));
}

/* Copy the code and build the trampoline's own page tables: identity for
 * the low 2 MiB, the kernel's upper half for the jump into it. */
void ap_trampoline_setup(__noreturn void (*entry)(void))
{
	size_t size = (size_t)(trampoline_end - trampoline_start);
	uint64_t *pml4 = phys_to_virt(TRAMP_PML4_PHYS);
	uint64_t *pdpt = phys_to_virt(TRAMP_PDPT_PHYS);
	uint64_t *pd = phys_to_virt(TRAMP_PD_PHYS);
	const uint64_t *kpml4 = phys_to_virt(read_cr3() & PTE_ADDR_MASK);
	struct trampoline_params *p;

	ap_entry = entry;
	kassert(size <= PAGE_SIZE);
	kassert(phys_map(TRAMPOLINE_PHYS, TRAMPOLINE_PAGES * PAGE_SIZE,
			 MEMTYPE_WB));
	memcpy(phys_to_virt(TRAMPOLINE_PHYS), trampoline_start, size);
	memset(pml4, 0, PAGE_SIZE);
	memset(pdpt, 0, PAGE_SIZE);
	memset(pd, 0, PAGE_SIZE);
	pd[0] = 0 | PTE_P | PTE_W | PTE_PS;
	pdpt[0] = TRAMP_PD_PHYS | PTE_P | PTE_W;
	pml4[0] = TRAMP_PDPT_PHYS | PTE_P | PTE_W;
	for (unsigned i = PML4_KERNEL_FIRST; i < PT_ENTRIES; i++)
		pml4[i] = kpml4[i];

	p = params();
	p->tramp_cr3 = TRAMP_PML4_PHYS;
	/* Only what the switch needs; ap_main() sets the rest (PCIDE may
	 * not be set outside long mode). */
	p->cr4 = boot_cr4 & (CR4_PAE | CR4_PGE);
	p->efer = (boot_efer & (EFER_NXE | EFER_SCE)) | EFER_LME;
	p->kernel_cr3 = read_cr3();
}

void ap_main(struct percpu *pc)
{
	percpu_install(pc);
	write_cr0(boot_cr0);
	write_cr4(boot_cr4);
	wrmsr(MSR_EFER, (rdmsr(MSR_EFER) & EFER_LMA) | (boot_efer & ~EFER_LMA));
	gdt_init_cpu(pc->tables);
	idt_load();
	fpu_init_cpu();
	/* The same layout as the boot CPU, programmed the SDM's way
	 * (caches off and flushed around the write). */
	if (!pat_program())
		kprintf("cpu %u: PAT differs from the boot CPU's\n", pc->cpu_id);
	pc->pat = rdmsr(MSR_PAT);
	apic_init_ap();
	atomic_store_release(&params()->stage, STAGE_IN_C);
	if (apic_id() != pc->apic_id)
		kprintf("cpu %u: MADT says apic id %u, the APIC says %u\n",
			pc->cpu_id, pc->apic_id, apic_id());
	kprintf("cpu %u online (apic id %u)\n", pc->cpu_id, pc->apic_id);
	atomic_store_release(&pc->online, true);
	ap_entry();
}

static bool wait_online(struct percpu *pc, uint64_t us)
{
	uint64_t t0 = rdtsc(), limit = tsc_us_to_cycles(us);

	while (rdtsc() - t0 < limit) {
		if (atomic_load_acquire(&pc->online))
			return true;
		cpu_pause();
	}
	return atomic_load_acquire(&pc->online);
}

enum ap_start_result ap_start(uint32_t id)
{
	struct trampoline_params *p = params();
	struct percpu *pc;
	uint8_t *stack;

	pc = percpu_alloc(id);
	if (!pc) {
		kprintf("smp: no memory or CPU number for apic id %u: left "
			"out\n", id);
		return AP_NO_MEMORY;
	}
	pc->tables = percpu_pages(AP_TABLES_ORDER);
	stack = percpu_pages(AP_STACK_ORDER);
	if (!pc->tables || !stack) {
		kprintf("smp: no memory for cpu %u (apic id %u): left out\n",
			pc->cpu_id, id);
		return AP_NO_MEMORY;
	}
	pc->stack_top = (uint64_t)stack + (PAGE_SIZE << AP_STACK_ORDER);
	/* The stack's bottom page becomes its guard: an overflow faults
	 * (onto the IST double-fault stack) instead of corrupting memory.
	 * AP stacks are never freed, so the hole is never handed out. */
	if (vm_unmap(&kernel_space, (uint64_t)stack, 1) != VM_OK)
		kprintf("smp: cpu %u: no guard page under its stack\n",
			pc->cpu_id);

	p->stack_top = pc->stack_top;
	p->percpu = (uint64_t)pc;
	atomic_store_release(&p->stage, 0);

	apic_send_init(id);
	tsc_delay_us(INIT_DELAY_US);
	apic_send_sipi(id, SIPI_VECTOR);
	tsc_delay_us(SIPI_DELAY_US);
	/* A second SIPI only if the first was lost (SDM 9.4.4.1); a
	 * running AP ignores it anyway. */
	if (atomic_load_acquire(&p->stage) == 0)
		apic_send_sipi(id, SIPI_VECTOR);
	if (wait_online(pc, AP_START_TIMEOUT_MS * 1000ull))
		return AP_ONLINE;

	kprintf("smp: cpu %u (apic id %u) did not come online within %u ms "
		"(trampoline stage %lu): left out\n", pc->cpu_id, id,
		AP_START_TIMEOUT_MS, (unsigned long)p->stage);
	/* Back to wait-for-SIPI, so it cannot wake later on a stack and
	 * parameter block that now belong to the next AP. */
	apic_send_init(id);
	tsc_delay_us(INIT_DELAY_US);
	return AP_NO_ANSWER;
}
