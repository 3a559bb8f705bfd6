/*
 * Per-CPU areas: the boot CPU's is static (it exists before any allocator),
 * the APs' come from the page allocator. See percpu.h for the layout.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/msr.h"
#include "arch/x86_64/percpu.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/string.h"
#include "lib/this_cpu.h"
#include "mm/page_alloc.h"

static struct percpu boot_percpu;
static struct percpu *areas[MAX_CPUS];
static unsigned ncpus;
static bool ready;

BUILD_ASSERT(__builtin_offsetof(struct percpu, self) == 0);
BUILD_ASSERT(sizeof(struct percpu) <= PAGE_SIZE);
/* lib/this_cpu.h reads the CPU number at this offset from the GS base. */
BUILD_ASSERT(__builtin_offsetof(struct percpu, cpu_id) ==
	     THIS_CPU_NUM_GS_OFFSET);
BUILD_ASSERT(sizeof(((struct percpu *)0)->cpu_id) == sizeof(unsigned));

void percpu_install(struct percpu *p)
{
	kassert(p && p->self == p);
	wrmsr(MSR_GS_BASE, (uint64_t)p);
	/* Nothing uses the swapgs pair (no user mode): keep both equal so a
	 * stray swapgs cannot lose the area. */
	wrmsr(MSR_KERNEL_GS_BASE, (uint64_t)p);
}

static void percpu_setup(struct percpu *p, unsigned cpu, uint32_t apic_id)
{
	memset(p, 0, sizeof(*p));
	p->self = p;
	p->cpu_id = cpu;
	p->apic_id = apic_id;
	spin_lock_init(&p->calls.lock, NULL);
}

void percpu_early_bsp(void)
{
	kassert(ncpus == 0);
	boot_percpu.self = &boot_percpu;
	boot_percpu.cpu_id = 0;
	percpu_install(&boot_percpu);
}

void percpu_init_bsp(uint32_t apic_id)
{
	kassert(ncpus == 0);
	percpu_setup(&boot_percpu, 0, apic_id);
	boot_percpu.tables = &boot_cpu_tables;
	boot_percpu.online = true;
	areas[0] = &boot_percpu;
	ncpus = 1;
	percpu_install(&boot_percpu);
	ready = true;
}

struct percpu *percpu_alloc(uint32_t apic_id)
{
	struct percpu *p;

	kassert(ncpus > 0);
	if (ncpus >= MAX_CPUS)
		return NULL;
	p = percpu_pages(0);
	if (!p)
		return NULL;
	percpu_setup(p, ncpus, apic_id);
	areas[ncpus] = p;
	/* Publish the count after the entry: readers walk [0, count). */
	atomic_store_release(&ncpus, ncpus + 1);
	return p;
}

struct percpu *percpu_of(unsigned cpu)
{
	return cpu < atomic_load_acquire(&ncpus) ? areas[cpu] : NULL;
}

unsigned percpu_count(void)
{
	return atomic_load_acquire(&ncpus);
}

bool percpu_ready(void)
{
	return ready;
}

/* AP memory comes from the page allocator (zeroed, direct-mapped). No
 * guard page is unmapped below AP stacks yet: see smp.c. */
void *percpu_pages(unsigned order)
{
	return page_alloc(order);
}
