/*
 * The running CPU's number in one load, for the hottest paths (RCU
 * read-side sections, the page cache's per-CPU counters): no function
 * call and no pointer to follow, where a call through a function pointer
 * used to cost a profile-visible share of every lockless lookup.
 *
 * Kernel: the architecture's one-load form, arch_this_cpu_num() from
 * "asm/this_cpu.h" (x86_64: arch/x86_64/include/asm/this_cpu.h, a load
 * through the GS base, which points at this CPU's per-CPU area). The boot
 * CPU's area is installed at the top of kmain() and every AP installs its
 * own before it runs any other code, so the load is valid from the first
 * lock on.
 *
 * Host builds: a thread-local variable (tests/host/host_cpu.c defines
 * it); each thread that plays a CPU sets its number with
 * this_cpu_num_set() before it touches per-CPU state (0 until then).
 */
#ifndef LIB_THIS_CPU_H
#define LIB_THIS_CPU_H

#ifdef HOST_BUILD
extern __thread unsigned this_cpu_num_tls;

static inline unsigned this_cpu_num(void)
{
	return this_cpu_num_tls;
}

static inline void this_cpu_num_set(unsigned cpu)
{
	this_cpu_num_tls = cpu;
}
#else
#include "asm/this_cpu.h"

/* The CPU number, below MAX_CPUS. */
static inline unsigned this_cpu_num(void)
{
	return arch_this_cpu_num();
}
#endif

#endif
