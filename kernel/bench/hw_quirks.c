/*
 * The hardware-quirks table (see kernel/bench/hw_quirks.h). Each entry says
 * how to detect the quirk and what it does to the figures; the comment
 * above each says where it was met.
 */
#include <stdbool.h>
#include <stddef.h>
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpu_caches.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/pmu.h"
#include "arch/x86_64/topology.h"
#include "kernel/acpi_boot.h"
#include "kernel/bench/bench_env.h"
#include "kernel/bench/hw_quirks.h"
#include "kernel/smp_call.h"
#include "lib/compiler.h"
#include "lib/config.h"
#include "lib/kprintf.h"

#define DETAIL_MAX 96

/* CPUID leaf 6 (thermal and power management), EAX. */
#define CPUID_LEAF_POWER 6u
#define POWER_EAX_TURBO (1u << 1)
#define POWER_EAX_HWP (1u << 7)

/* PMU self-test: a loop of known length must count at least one
 * instruction per iteration and not absurdly many. */
#define PMU_TEST_LOOPS 100000u
#define PMU_TEST_MAX_PER_LOOP 20u

enum quirk_kind {
	QUIRK_FIGURES, /* weakens measured figures */
	QUIRK_PATH, /* the kernel takes another way; figures unaffected */
};

struct hw_quirk {
	const char *name;
	enum quirk_kind kind;
	/* True when the quirk applies; may write a detail line. */
	bool (*applies)(char *detail, size_t len);
	const char *effect;
};

static struct tsc_sync_result sync;
static bool sync_known;

void hw_quirks_note_tsc_sync(const struct tsc_sync_result *r)
{
	sync_known = r != NULL;
	if (r)
		sync = *r;
}

static bool tcg(char *d, size_t n)
{
	(void)d;
	(void)n;
	return bench_env_is_tcg();
}

static bool no_invariant_tsc(char *d, size_t n)
{
	(void)d;
	(void)n;
	return !cpu_has(FEAT_INVARIANT_TSC);
}

static bool tsc_skew(char *d, size_t n)
{
	if (!sync_known || sync.proven_skew == 0)
		return false;
	ksnprintf(d, n, "cpu %u is at least %lu cycles off", sync.worst_cpu,
		  (unsigned long)sync.proven_skew);
	return true;
}

static bool smt_siblings(char *d, size_t n)
{
	struct cpu_topology t;
	unsigned shared = 0, first_a = 0, first_b = 0;

	cpu_topology_read(&t);
	if (!t.known || t.threads_per_core < 2)
		return false;
	for (unsigned a = 0; a < MAX_CPUS; a++) {
		if (!smp_cpu_online(a))
			continue;
		for (unsigned b = a + 1; b < MAX_CPUS; b++) {
			if (!smp_cpu_online(b) ||
			    cpu_topology_core(&t, percpu_of(a)->apic_id) !=
				    cpu_topology_core(&t, percpu_of(b)->apic_id))
				continue;
			if (!shared++) {
				first_a = a;
				first_b = b;
			}
		}
	}
	if (!shared)
		return false;
	ksnprintf(d, n, "%u thread(s) per core (CPUID %#x); %u online pair(s) "
		  "share a core, e.g. cpus %u and %u", t.threads_per_core,
		  t.leaf, shared, first_a, first_b);
	return true;
}

static uint32_t power_eax(void)
{
	return cpu_info.max_leaf >= CPUID_LEAF_POWER ?
		       cpuid(CPUID_LEAF_POWER, 0).eax : 0;
}

static bool turbo(char *d, size_t n)
{
	(void)d;
	(void)n;
	return power_eax() & POWER_EAX_TURBO;
}

static bool hwp(char *d, size_t n)
{
	(void)d;
	(void)n;
	return power_eax() & POWER_EAX_HWP;
}

static bool no_pmu(char *d, size_t n)
{
	const struct pmu_caps *c = pmu_caps();

	if (c->present)
		return false;
	ksnprintf(d, n, "%s", c->why_absent ? c->why_absent : "absent");
	return true;
}

static bool pmu_selftest_failed(char *d, size_t n)
{
	static const enum pmu_event ev[] = {PMU_EV_INSTRUCTIONS};
	struct pmu_session s;
	struct pmu_sample before, after;
	volatile unsigned sink = 0;
	uint64_t counted;

	if (!pmu_caps()->present ||
	    !pmu_event_available(PMU_EV_INSTRUCTIONS))
		return false;
	if (pmu_start(&s, ev, ARRAY_SIZE(ev)) != 0) {
		ksnprintf(d, n, "the instructions counter cannot be started");
		return true;
	}
	pmu_read(&s, &before);
	for (unsigned i = 0; i < PMU_TEST_LOOPS; i++)
		sink = sink + i;
	pmu_read(&s, &after);
	pmu_stop(&s);
	counted = after.count[0] - before.count[0];
	if (counted >= PMU_TEST_LOOPS &&
	    counted <= (uint64_t)PMU_TEST_LOOPS * PMU_TEST_MAX_PER_LOOP)
		return false;
	ksnprintf(d, n, "%lu instructions counted for a %u-iteration loop",
		  (unsigned long)counted, PMU_TEST_LOOPS);
	return true;
}

static bool no_caches(char *d, size_t n)
{
	struct cpu_caches cc;

	(void)d;
	(void)n;
	cpu_caches_read(&cc);
	return cc.count == 0;
}

static bool no_acpi_reset(char *d, size_t n)
{
	const struct acpi_info *a = acpi_tables();

	(void)d;
	(void)n;
	return a && !a->reset_supported;
}

static const struct hw_quirk quirks[] = {
	/* QEMU without KVM: every timing is the emulator's speed. */
	{"tcg", QUIRK_FIGURES, tcg,
	 "caches and memory types are not modelled: only ratios of "
	 "instruction work mean anything"},
	/* QEMU's -cpu max and most VMs hide the bit; old CPUs lack it. */
	{"no-invariant-tsc", QUIRK_FIGURES, no_invariant_tsc,
	 "the TSC may change rate with P-states or stop in C-states: "
	 "cycles are not time"},
	/* Multi-socket boards and some firmware leave TSCs apart. */
	{"tsc-skew", QUIRK_FIGURES, tsc_skew,
	 "timestamps taken on different CPUs do not compare"},
	/* Hyper-threading on: the kernel counts siblings as CPUs. */
	{"smt-siblings", QUIRK_FIGURES, smt_siblings,
	 "sibling threads share a core's caches and execution units: "
	 "\"2 CPUs\" may be one core"},
	/* Turbo: clocks rise when few cores are busy, fall when hot. */
	{"turbo", QUIRK_FIGURES, turbo,
	 "the core clock depends on load and temperature (disable turbo in "
	 "the firmware for steadier figures)"},
	/* Intel Speed Shift: the CPU picks its own P-state. */
	{"hwp", QUIRK_FIGURES, hwp,
	 "hardware-controlled P-states: the clock changes on its own"},
	/* Hypervisors without PMU passthrough; AMD (no leaf 0xA). */
	{"no-pmu", QUIRK_FIGURES, no_pmu,
	 "no event counts (LLC misses, instructions): TSC only"},
	/* A counter that exists but counts wrongly (seen in nested VMs). */
	{"pmu-selftest-failed", QUIRK_FIGURES, pmu_selftest_failed,
	 "event counts are not trustworthy"},
	/* CPUID models that describe no cache (some hypervisors). */
	{"no-caches", QUIRK_FIGURES, no_caches,
	 "cache sizes unknown: the copy experiment's sizes around the LLC "
	 "are guesses"},
	/* SeaBIOS's FADT (revision 1) has no reset register. */
	{"no-acpi-reset", QUIRK_PATH, no_acpi_reset,
	 "reboot uses the keyboard controller, then a triple fault"},
};

unsigned hw_quirks_report(void)
{
	unsigned figures = 0, any = 0;

	for (size_t i = 0; i < ARRAY_SIZE(quirks); i++) {
		const struct hw_quirk *q = &quirks[i];
		char detail[DETAIL_MAX] = "";

		if (!q->applies(detail, sizeof(detail)))
			continue;
		any++;
		figures += q->kind == QUIRK_FIGURES;
		kprintf("quirk: %s%s: %s%s%s\n",
			q->kind == QUIRK_FIGURES ? "WARNING " : "", q->name,
			q->effect, detail[0] ? "; " : "", detail);
	}
	kprintf("quirks: %u found, %u weaken the figures%s\n", any, figures,
		figures ? " (see docs/real-hardware.md)" : "");
	return figures;
}
