/*
 * Architectural performance monitoring (SDM vol. 3B, chapter 20.2; CPUID
 * leaf 0xA). pmu_init() reads what the CPU offers: the PMU version, the
 * number and width of general-purpose and fixed counters, and which of
 * the seven architectural events exist. The benchmark harness programs
 * up to PMU_MAX_EVENTS of them on the current CPU with pmu_start(), reads
 * them with pmu_read() (rdpmc between lfences) and stops with pmu_stop().
 *
 * With no PMU (QEMU's TCG, AMD CPUs: no leaf 0xA) every session still
 * works and reads the TSC alone; pmu_event_available() says false.
 */
#ifndef ARCH_X86_64_PMU_H
#define ARCH_X86_64_PMU_H

#include <stdbool.h>
#include <stdint.h>

/* In CPUID.0AH:EBX bit order (a set bit there means "not available"). */
enum pmu_event {
	PMU_EV_CYCLES,
	PMU_EV_INSTRUCTIONS,
	PMU_EV_REF_CYCLES,
	PMU_EV_LLC_REFERENCES,
	PMU_EV_LLC_MISSES,
	PMU_EV_BRANCHES,
	PMU_EV_BRANCH_MISSES,
	PMU_EV_COUNT
};

#define PMU_MAX_EVENTS 4

struct pmu_caps {
	bool present;		/* version >= 1 and at least one counter */
	unsigned version;
	unsigned gp_counters, gp_width;
	unsigned fixed_counters, fixed_width;
	uint32_t events;	/* bit e set: enum pmu_event e available */
	const char *why_absent; /* when !present */
	bool selftest_failed;	/* CPUID advertised it, it did not count */
	char selftest_why[128];	/* then: which counter, what it said */
};

/* A set of events being counted on one CPU. */
struct pmu_session {
	unsigned n;
	enum pmu_event ev[PMU_MAX_EVENTS];
	bool counting;		/* false: TSC-only fallback */
	unsigned cpu;		/* rdpmc reads the CPU it runs on */
};

struct pmu_sample {
	uint64_t tsc;
	uint64_t count[PMU_MAX_EVENTS]; /* 0 for unavailable events */
};

/*
 * Read CPUID 0xA (boot CPU; all CPUs are assumed identical), then
 * self-test what it advertises: each general counter the harness may use
 * (up to PMU_MAX_EVENTS) counts retired instructions over a loop of known
 * length and must land within a few per cent of it
 * (lib/counter_check.h), and the cycles event must advance. A PMU that
 * fails is marked absent (caps.present false, caps.selftest_failed, the
 * reason in caps.selftest_why): no figure is ever read from it.
 */
void pmu_init(void);
const struct pmu_caps *pmu_caps(void);
bool pmu_event_available(enum pmu_event e);
const char *pmu_event_name(enum pmu_event e);

/*
 * Program ev[0..n) on general-purpose counters 0..n-1 of this CPU (kernel
 * and user mode) from zero and enable them. Returns 0, or -1 when the PMU
 * is absent, n exceeds the counters, or an event is unavailable; then *s
 * is a TSC-only session and pmu_read() still fills sample->tsc.
 */
int pmu_start(struct pmu_session *s, const enum pmu_event *ev, unsigned n);
/* Serialised read of the TSC and every counter of s. */
void pmu_read(const struct pmu_session *s, struct pmu_sample *out);
/* Disable s's counters. */
void pmu_stop(struct pmu_session *s);

void pmu_print(void);

#endif
