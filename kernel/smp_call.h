/*
 * Cross-CPU work. There is no scheduler: each CPU runs one piece of work
 * at a time, to completion, which is all the experiments need.
 *
 *  - smp_call(): run a short function on a set of CPUs from their
 *    VEC_IPI_CALL interrupt handler (interrupts off), optionally waiting
 *    until all ran it. Senders serve their own queue while they wait, so
 *    CPUs calling each other at once cannot deadlock.
 *  - the work slot: one long-running item per CPU (a benchmark body), run
 *    by that CPU's work loop with interrupts on. smp_work_post() hands it
 *    over, smp_work_wait() waits for it, smp_run_on() does both for a set
 *    of CPUs including the caller.
 *  - struct smp_barrier lines CPUs up before a measured run.
 *
 * RCU (lib/rcu.h): each CPU's work loop reports a quiescent state between
 * work items (cpu_quiescent_hook()) and is idle while halted; barrier,
 * work and call waits and the call IPI handler report one when the CPU
 * is outside every read-side section.
 */
#ifndef KERNEL_SMP_CALL_H
#define KERNEL_SMP_CALL_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/config.h"

#define CPUMASK_WORDS (MAX_CPUS / 64)

struct cpumask {
	uint64_t bits[CPUMASK_WORDS];
};

static inline void cpumask_clear(struct cpumask *m)
{
	for (unsigned i = 0; i < CPUMASK_WORDS; i++)
		m->bits[i] = 0;
}

static inline void cpumask_set(struct cpumask *m, unsigned cpu)
{
	m->bits[cpu / 64] |= 1ull << (cpu % 64);
}

static inline bool cpumask_test(const struct cpumask *m, unsigned cpu)
{
	return cpu < MAX_CPUS && (m->bits[cpu / 64] >> (cpu % 64)) & 1;
}

/* Every online CPU; without the caller when but_self. */
void cpumask_online(struct cpumask *m, bool but_self);
unsigned cpumask_weight(const struct cpumask *m);

/* Online CPUs, and whether CPU number cpu is one. */
unsigned smp_cpus_online(void);
bool smp_cpu_online(unsigned cpu);
unsigned smp_this_cpu(void);

/*
 * Run fn(arg) on every online CPU in mask: the caller's own CPU directly,
 * the others from their IPI handler. fn must be short and must not wait
 * for other CPUs. With wait, return after every CPU ran it. Returns the
 * number of CPUs fn was sent to (offline ones are skipped).
 */
unsigned smp_call(const struct cpumask *mask, void (*fn)(void *), void *arg,
		  bool wait);

/*
 * Hand fn(arg) to CPU cpu's work loop. Returns false if the CPU is offline,
 * is the caller, or its slot is still busy.
 */
bool smp_work_post(unsigned cpu, void (*fn)(void *), void *arg);
/* Wait until CPU cpu's work slot is idle again. */
void smp_work_wait(unsigned cpu);
/* Run fn(arg) on every online CPU in mask as work items, the caller's own
 * CPU included (run last, in place), and wait for all. A CPU whose slot
 * is busy is waited for, not skipped, so every online CPU of mask runs fn
 * and callers may size barriers by the online CPUs of mask. Returns how
 * many CPUs ran fn (offline CPUs in mask are not counted). */
unsigned smp_run_on(const struct cpumask *mask, void (*fn)(void *),
		    void *arg);

/* Sense-reversing barrier for n CPUs. */
struct smp_barrier {
	uint32_t n;
	uint32_t waiting;
	uint32_t generation;
};

void smp_barrier_init(struct smp_barrier *b, unsigned n);
/* Return once n CPUs have arrived; reusable at once. */
void smp_barrier_wait(struct smp_barrier *b);

/* Register the IPI handlers (arch SMP set-up calls it once). */
void smp_call_init(void);

/* Called by every CPU's work loop between work items: RCU's quiescent
 * state (and callbacks). */
void cpu_quiescent_hook(void);

/* RCU's kick hook: interrupt cpu with a call so it reports a quiescent
 * state if it is not reading. Never waits. */
void rcu_kick_cpu(unsigned cpu);

/* The work loop an AP enters once it is up; never returns. */
__attribute__((noreturn)) void smp_work_loop(void);

/* Calls counted since boot: sent by this CPU, handled by all CPUs. */
uint64_t smp_calls_handled(void);

#endif
