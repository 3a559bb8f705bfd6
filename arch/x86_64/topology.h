/*
 * Which logical CPUs are hyper-thread (SMT) siblings of one core, from
 * the CPUID topology leaves: leaf 0xB (x2APIC topology, Intel and recent
 * AMD) gives the number of APIC-id bits that number threads within a
 * core; AMD's leaf 0x8000001e gives threads per core. Two CPUs whose
 * APIC ids agree above those bits share a core.
 */
#ifndef ARCH_X86_64_TOPOLOGY_H
#define ARCH_X86_64_TOPOLOGY_H

#include <stdbool.h>
#include <stdint.h>

struct cpu_topology {
	bool known; /* a topology leaf answered */
	uint32_t leaf; /* which one */
	unsigned smt_shift; /* APIC-id bits of the thread number */
	unsigned threads_per_core;
};

/* Read the topology leaves of this CPU into *t (t->known false: none). */
void cpu_topology_read(struct cpu_topology *t);
/* The core an APIC id belongs to (its id with the thread bits cut). */
static inline uint32_t cpu_topology_core(const struct cpu_topology *t,
					 uint32_t apic_id)
{
	return apic_id >> t->smt_shift;
}

#endif
