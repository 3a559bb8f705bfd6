/*
 * SMT topology from CPUID (see arch/x86_64/topology.h; SDM vol. 3A,
 * 9.9.1 and CPUID leaf 0BH; AMD APM vol. 3, Fn8000_001E).
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/topology.h"

#define CPUID_LEAF_TOPOLOGY 0xbu
#define TOPO_SHIFT_MASK 0x1fu /* EAX[4:0]: bits to the next level's id */
#define TOPO_COUNT_MASK 0xffffu /* EBX[15:0]: logical CPUs at this level */
#define TOPO_LEVEL_TYPE_SHIFT 8 /* ECX[15:8]: 1 = SMT */
#define TOPO_LEVEL_TYPE_MASK 0xffu
#define TOPO_LEVEL_SMT 1
#define CPUID_LEAF_AMD_TOPOLOGY 0x8000001eu
#define AMD_THREADS_SHIFT 8 /* EBX[15:8]: threads per core - 1 */
#define AMD_THREADS_MASK 0xffu

static unsigned bits_for(unsigned n)
{
	unsigned b = 0;

	while ((1u << b) < n)
		b++;
	return b;
}

void cpu_topology_read(struct cpu_topology *t)
{
	*t = (struct cpu_topology){.threads_per_core = 1};
	if (cpu_info.max_leaf >= CPUID_LEAF_TOPOLOGY) {
		struct cpuid_regs r = cpuid(CPUID_LEAF_TOPOLOGY, 0);
		unsigned type = (r.ecx >> TOPO_LEVEL_TYPE_SHIFT) &
				TOPO_LEVEL_TYPE_MASK;

		if ((r.ebx & TOPO_COUNT_MASK) && type == TOPO_LEVEL_SMT) {
			t->known = true;
			t->leaf = CPUID_LEAF_TOPOLOGY;
			t->smt_shift = r.eax & TOPO_SHIFT_MASK;
			t->threads_per_core = r.ebx & TOPO_COUNT_MASK;
			return;
		}
	}
	if (cpu_info.max_ext_leaf >= CPUID_LEAF_AMD_TOPOLOGY) {
		struct cpuid_regs r = cpuid(CPUID_LEAF_AMD_TOPOLOGY, 0);
		unsigned threads = ((r.ebx >> AMD_THREADS_SHIFT) &
				    AMD_THREADS_MASK) + 1;

		/* A zero leaf (no TOPOEXT) says nothing. */
		if (r.eax || r.ebx) {
			t->known = true;
			t->leaf = CPUID_LEAF_AMD_TOPOLOGY;
			t->threads_per_core = threads;
			t->smt_shift = bits_for(threads);
		}
	}
}
