/*
 * CPU identification and features, from one table of (leaf, subleaf,
 * register, bit) entries, in the manner of kvm-unit-tests.
 */
#ifndef ARCH_X86_64_CPUFEATURE_H
#define ARCH_X86_64_CPUFEATURE_H

#include <stdbool.h>
#include <stdint.h>

enum cpu_feature {
	FEAT_SSE2,
	FEAT_PAE,
	FEAT_PGE,
	FEAT_PAT,
	FEAT_MTRR,
	FEAT_APIC,
	FEAT_X2APIC,
	FEAT_TSC,
	FEAT_TSC_DEADLINE,
	FEAT_INVARIANT_TSC,
	FEAT_PCID,
	FEAT_INVPCID,
	FEAT_PDPE1GB,
	FEAT_NX,
	FEAT_LM,
	FEAT_CLFLUSH,
	FEAT_CLFLUSHOPT,
	FEAT_RDTSCP,
	FEAT_HYPERVISOR,
	FEAT_PDCM,
	FEAT_FXSR,
	FEAT_COUNT
};

struct cpu_info {
	char vendor[13];
	char brand[49];
	char hypervisor[13]; /* "" on bare metal */
	unsigned family, model, stepping;
	uint32_t max_leaf, max_ext_leaf;
	unsigned phys_addr_bits, virt_addr_bits;
	unsigned clflush_size;
};

extern struct cpu_info cpu_info;

void cpu_identify(void);
bool cpu_has(enum cpu_feature f);
const char *cpu_feature_name(enum cpu_feature f);
void cpu_print_report(void);

#endif
