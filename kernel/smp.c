/*
 * SMP start-up policy and the two cross-CPU services it installs: TLB
 * shootdowns for kernel mappings, and stopping the other CPUs on a panic
 * (see smp.h).
 */
#include "arch/x86_64/apic.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/smp.h"
#include "arch/x86_64/tlb.h"
#include "kernel/acpi_boot.h"
#include "kernel/options.h"
#include "kernel/panic.h"
#include "kernel/smp.h"
#include "kernel/smp_call.h"
#include "lib/atomic.h"
#include "lib/compiler.h"
#include "lib/config.h"
#include "lib/kprintf.h"
#include "trace/tracepoint.h"

/* xAPIC ids are 8 bits and 0xff is the broadcast id. */
#define XAPIC_MAX_APIC_ID 0xfe

static struct smp_stats stats;
static uint64_t shootdowns;

const struct smp_stats *smp_stats(void)
{
	return &stats;
}

/*
 * The TLB code's way to other CPUs (tlb_remote_call): run fn on the CPUs
 * of the word mask cpus, this one included if set, and wait for all, so
 * no CPU can still use a translation the caller has removed or retyped.
 * Which CPUs to reach is the TLB code's decision (arch/x86_64/tlb.c).
 */
static unsigned smp_tlb_call(const uint64_t *cpus, void (*fn)(void *),
			     void *arg)
{
	struct cpumask m;

	cpumask_clear(&m);
	for (unsigned cpu = 0; cpu < percpu_count(); cpu++)
		if ((cpus[cpu / 64] >> (cpu % 64)) & 1)
			cpumask_set(&m, cpu);
	if (cpumask_weight(&m) > cpumask_test(&m, smp_this_cpu())) {
		atomic_fetch_add_relaxed(&shootdowns, 1);
		trace_point(tlb_shootdown, cpus[0], (uintptr_t)fn);
	}
	return smp_call(&m, fn, arg, true);
}

/* Every AP, once online: PCIDs as the command line allows, then the
 * work loop. */
static __noreturn void ap_kernel_entry(void)
{
	tlb_init_cpu(!kopt.nopcid);
	smp_work_loop();
}

uint64_t smp_tlb_shootdowns(void)
{
	return atomic_load_relaxed(&shootdowns);
}

/* Panic: NMI every other CPU; their NMI handler sees the panic and halts. */
static void smp_stop_others(void)
{
	for (unsigned cpu = 0; cpu < percpu_count(); cpu++) {
		struct percpu *pc = percpu_of(cpu);

		if (cpu != smp_this_cpu() && atomic_load_acquire(&pc->online))
			apic_send_nmi(pc->apic_id);
	}
}

/* Start one AP and count the outcome. With cpuhole=N the AP that would
 * become CPU N only gets its number, like an AP that does not answer, so
 * the online CPU numbers have a gap the tests can exercise. */
static void start_one(uint32_t apic_id)
{
	if (kopt.cpuhole && percpu_count() == kopt.cpuhole) {
		if (percpu_alloc(apic_id))
			kprintf("smp: cpu %u (apic id %u) not started "
				"(cpuhole=%u): its number stays a gap\n",
				kopt.cpuhole, apic_id, kopt.cpuhole);
		stats.failed++;
		return;
	}
	switch (ap_start(apic_id)) {
	case AP_ONLINE:
		stats.online++;
		break;
	case AP_NO_MEMORY:
		stats.skipped++;
		break;
	case AP_NO_ANSWER:
		stats.failed++;
		break;
	}
}

void smp_init(void)
{
	const struct acpi_info *acpi = acpi_tables();
	uint32_t self = apic_id();
	unsigned limit = kopt.maxcpus ? kopt.maxcpus : 1;

	ap_boot_state_save();
	smp_call_init();

	stats.online = 1;
	if (!acpi || !acpi->madt_found) {
		kprintf("smp: no MADT: boot CPU only\n");
		stats.madt_cpus = stats.expected = 1;
		return;
	}
	for (unsigned i = 0; i < acpi->ncpus; i++)
		if (acpi->cpus[i].flags & ACPI_CPU_ENABLED)
			stats.madt_cpus++;
	stats.expected = MIN(stats.madt_cpus, limit);
	if (apic_mode() == APIC_MODE_NONE)
		return;

	ap_trampoline_setup(ap_kernel_entry);
	for (unsigned i = 0; i < acpi->ncpus; i++) {
		const struct acpi_cpu *c = &acpi->cpus[i];

		if (!(c->flags & ACPI_CPU_ENABLED) || c->apic_id == self)
			continue;
		if (stats.online >= limit) {
			stats.skipped++;
			continue;
		}
		if (apic_mode() == APIC_MODE_XAPIC &&
		    c->apic_id > XAPIC_MAX_APIC_ID) {
			kprintf("smp: apic id %u needs x2APIC, which this CPU "
				"lacks: left out\n", c->apic_id);
			stats.skipped++;
			continue;
		}
		start_one(c->apic_id);
	}
	if (stats.online > 1) {
		tlb_remote_call = smp_tlb_call;
		panic_stop_other_cpus = smp_stop_others;
	}
}

void smp_print(void)
{
	kprintf("smp: %u of %u CPUs online (MADT lists %u usable, maxcpus=%u"
		"%s), %u did not answer, %u left out; %s\n",
		stats.online, stats.expected, stats.madt_cpus, kopt.maxcpus,
		kopt.nosmp ? ", nosmp" : "", stats.failed, stats.skipped,
		apic_mode_name());
	for (unsigned cpu = 0; cpu < percpu_count(); cpu++) {
		struct percpu *pc = percpu_of(cpu);

		kprintf("smp: cpu %u apic id %u %s\n", cpu, pc->apic_id,
			atomic_load_acquire(&pc->online) ? "online" :
							   "OFFLINE");
	}
}
