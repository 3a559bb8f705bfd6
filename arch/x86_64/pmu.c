/*
 * Architectural PMU access (see pmu.h; SDM vol. 3B, 20.2.1-20.2.2 and
 * table 20-1 for the event encodings).
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/msr.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/pmu.h"
#include "arch/x86_64/tsc.h"
#include "lib/assert.h"
#include "lib/compiler.h"
#include "lib/counter_check.h"
#include "lib/kprintf.h"
#include "lib/string.h"

#define CPUID_LEAF_PMU 0xa
/* CPUID.0AH:EAX fields. */
#define PMU_EAX_VERSION(a) ((a) & 0xff)
#define PMU_EAX_GP_COUNTERS(a) (((a) >> 8) & 0xff)
#define PMU_EAX_GP_WIDTH(a) (((a) >> 16) & 0xff)
#define PMU_EAX_EBX_LEN(a) (((a) >> 24) & 0xff)
/* CPUID.0AH:EDX fields (version >= 2). */
#define PMU_EDX_FIXED_COUNTERS(d) ((d) & 0x1f)
#define PMU_EDX_FIXED_WIDTH(d) (((d) >> 5) & 0xff)

#define EVTSEL_USR (1ull << 16)
#define EVTSEL_OS (1ull << 17)
#define EVTSEL_EN (1ull << 22)
#define EVTSEL_UMASK_SHIFT 8

#define PMU_GLOBAL_CTRL_VERSION 2

struct arch_event {
	const char *name;
	uint8_t event, umask;
};

/* SDM vol. 3B, table 20-1 (UnHalted Core Cycles ... Branch Misses). */
static const struct arch_event arch_events[PMU_EV_COUNT] = {
	[PMU_EV_CYCLES] = {"cycles", 0x3c, 0x00},
	[PMU_EV_INSTRUCTIONS] = {"instructions", 0xc0, 0x00},
	[PMU_EV_REF_CYCLES] = {"ref-cycles", 0x3c, 0x01},
	[PMU_EV_LLC_REFERENCES] = {"llc-references", 0x2e, 0x4f},
	[PMU_EV_LLC_MISSES] = {"llc-misses", 0x2e, 0x41},
	[PMU_EV_BRANCHES] = {"branches", 0xc4, 0x00},
	[PMU_EV_BRANCH_MISSES] = {"branch-misses", 0xc5, 0x00},
};

static struct pmu_caps caps;

const struct pmu_caps *pmu_caps(void)
{
	return &caps;
}

const char *pmu_event_name(enum pmu_event e)
{
	return e < PMU_EV_COUNT ? arch_events[e].name : "?";
}

bool pmu_event_available(enum pmu_event e)
{
	return caps.present && e < PMU_EV_COUNT && (caps.events >> e) & 1;
}

/* Iterations of the self-test loop: two instructions each (dec, jnz), so
 * the few hundred around the reads are far below the tolerance. */
#define SELFTEST_LOOP 1000000ull
#define SELFTEST_INSNS_PER_ITER 2

static void known_loop(uint64_t n)
{
	__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

/* Run the loop under a session of n copies of ev; counts in *delta. */
static bool selftest_run(enum pmu_event ev, unsigned n, uint64_t *delta)
{
	enum pmu_event evs[PMU_MAX_EVENTS];
	struct pmu_session s;
	struct pmu_sample a, b;
	uint64_t flags;

	for (unsigned i = 0; i < n; i++)
		evs[i] = ev;
	if (pmu_start(&s, evs, n) != 0)
		return false;
	flags = cpu_irq_save();
	pmu_read(&s, &a);
	known_loop(SELFTEST_LOOP);
	pmu_read(&s, &b);
	cpu_irq_restore(flags);
	pmu_stop(&s);
	for (unsigned i = 0; i < n; i++)
		delta[i] = b.count[i] - a.count[i];
	return true;
}

static void selftest_fail(const char *fmt, unsigned counter,
			  const char *why)
{
	caps.selftest_failed = true;
	caps.present = false;
	ksnprintf(caps.selftest_why, sizeof(caps.selftest_why), fmt, counter,
		  why);
	caps.why_absent = caps.selftest_why;
}

static void pmu_selftest(void)
{
	uint64_t delta[PMU_MAX_EVENTS];
	unsigned n = MIN(caps.gp_counters, PMU_MAX_EVENTS);
	char why[96];

	if (pmu_event_available(PMU_EV_INSTRUCTIONS)) {
		if (!selftest_run(PMU_EV_INSTRUCTIONS, n, delta)) {
			selftest_fail("self-test: counter %u: %s", 0,
				      "could not be programmed");
			return;
		}
		for (unsigned i = 0; i < n; i++)
			if (!counter_check_instructions(
				    delta[i],
				    SELFTEST_LOOP * SELFTEST_INSNS_PER_ITER,
				    why, sizeof(why))) {
				selftest_fail("self-test: counter %u %s", i,
					      why);
				return;
			}
	}
	if (pmu_event_available(PMU_EV_CYCLES)) {
		if (!selftest_run(PMU_EV_CYCLES, 1, delta) ||
		    !counter_check_cycles(delta[0], why, sizeof(why)))
			selftest_fail("self-test: counter %u: %s", 0, why);
	}
}

void pmu_init(void)
{
	struct cpuid_regs r;
	unsigned len;

	memset(&caps, 0, sizeof(caps));
	if (cpu_info.max_leaf < CPUID_LEAF_PMU) {
		caps.why_absent = "no CPUID leaf 0xa";
		return;
	}
	r = cpuid(CPUID_LEAF_PMU, 0);
	caps.version = PMU_EAX_VERSION(r.eax);
	caps.gp_counters = PMU_EAX_GP_COUNTERS(r.eax);
	caps.gp_width = PMU_EAX_GP_WIDTH(r.eax);
	if (caps.version >= PMU_GLOBAL_CTRL_VERSION) {
		caps.fixed_counters = PMU_EDX_FIXED_COUNTERS(r.edx);
		caps.fixed_width = PMU_EDX_FIXED_WIDTH(r.edx);
	}
	len = PMU_EAX_EBX_LEN(r.eax);
	for (unsigned e = 0; e < PMU_EV_COUNT; e++)
		if (e < len && !((r.ebx >> e) & 1))
			caps.events |= 1u << e;
	if (caps.version == 0 || caps.gp_counters == 0) {
		caps.why_absent = cpu_info.hypervisor[0] ?
					  "CPUID 0xa reports version 0 (the "
					  "hypervisor exposes no PMU; AMD "
					  "counters are not supported)" :
					  "CPUID 0xa reports version 0";
		return;
	}
	caps.present = true;
	pmu_selftest();
}

int pmu_start(struct pmu_session *s, const enum pmu_event *ev, unsigned n)
{
	uint64_t enable = 0;

	memset(s, 0, sizeof(*s));
	s->cpu = percpu_ready() ? this_cpu_id() : 0;
	if (!caps.present || n > PMU_MAX_EVENTS || n > caps.gp_counters)
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (!pmu_event_available(ev[i]))
			return -1;
	s->n = n;
	for (unsigned i = 0; i < n; i++) {
		const struct arch_event *a = &arch_events[ev[i]];

		s->ev[i] = ev[i];
		wrmsr(MSR_PERFEVTSEL0 + i, 0);
		wrmsr(MSR_PMC0 + i, 0);
		wrmsr(MSR_PERFEVTSEL0 + i,
		      a->event | ((uint64_t)a->umask << EVTSEL_UMASK_SHIFT) |
			      EVTSEL_USR | EVTSEL_OS | EVTSEL_EN);
		enable |= 1ull << i;
	}
	if (caps.version >= PMU_GLOBAL_CTRL_VERSION)
		wrmsr(MSR_PERF_GLOBAL_CTRL, enable);
	s->counting = true;
	return 0;
}

static inline uint64_t rdpmc(uint32_t idx)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx));
	return ((uint64_t)hi << 32) | lo;
}

void pmu_read(const struct pmu_session *s, struct pmu_sample *out)
{
	memset(out, 0, sizeof(*out));
	out->tsc = rdtsc_ordered();
	if (!s->counting)
		return;
	kassert(!percpu_ready() || this_cpu_id() == s->cpu);
	/* rdpmc is not serialising: fence it like the TSC read. */
	__asm__ volatile("lfence" : : : "memory");
	for (unsigned i = 0; i < s->n; i++)
		out->count[i] = rdpmc(i);
	__asm__ volatile("lfence" : : : "memory");
}

void pmu_stop(struct pmu_session *s)
{
	if (!s->counting)
		return;
	if (caps.version >= PMU_GLOBAL_CTRL_VERSION)
		wrmsr(MSR_PERF_GLOBAL_CTRL, 0);
	for (unsigned i = 0; i < s->n; i++)
		wrmsr(MSR_PERFEVTSEL0 + i, 0);
	s->counting = false;
}

void pmu_print(void)
{
	if (caps.selftest_failed) {
		kprintf("pmu: CPUID 0xa advertises version %u with %u general "
			"counters, but it is UNUSABLE: %s; measurements use the "
			"TSC only, counter figures are not measured\n",
			caps.version, caps.gp_counters, caps.why_absent);
		return;
	}
	if (!caps.present) {
		kprintf("pmu: none: %s; measurements use the TSC only\n",
			caps.why_absent);
		return;
	}
	kprintf("pmu: architectural PMU version %u: %u general counters "
		"(%u bits), %u fixed (%u bits)\n", caps.version,
		caps.gp_counters, caps.gp_width, caps.fixed_counters,
		caps.fixed_width);
	kprintf("pmu: events:");
	for (unsigned e = 0; e < PMU_EV_COUNT; e++)
		kprintf(" %s%s", pmu_event_available(e) ? "+" : "-",
			arch_events[e].name);
	kprintf("\n");
	kprintf("pmu: self-test passed: %u counter(s) counted a %llu-"
		"instruction loop within %u%%%s\n",
		MIN(caps.gp_counters, PMU_MAX_EVENTS),
		SELFTEST_LOOP * SELFTEST_INSNS_PER_ITER,
		COUNTER_CHECK_TOLERANCE_PCT,
		pmu_event_available(PMU_EV_CYCLES) ? "; cycles advance" : "");
}
