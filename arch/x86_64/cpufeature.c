/*
 * CPUID feature table and the boot report's CPU block (SDM vol. 2A,
 * CPUID). Under QEMU's TCG the hypervisor leaf reads "TCGTCGTCGTCG"; under
 * KVM "KVMKVMKVM"; on bare metal the hypervisor bit is clear.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpufeature.h"
#include "lib/kprintf.h"
#include "lib/string.h"

enum cpuid_reg { REG_EAX, REG_EBX, REG_ECX, REG_EDX };

#define CPUID_LEAF_VENDOR 0x0
#define CPUID_LEAF_FEATURES 0x1
#define CPUID_LEAF_EXT_FEATURES 0x7
#define CPUID_LEAF_HYPERVISOR 0x40000000
#define CPUID_LEAF_EXT_MAX 0x80000000
#define CPUID_LEAF_EXT_INFO 0x80000001
#define CPUID_LEAF_BRAND_FIRST 0x80000002
#define CPUID_LEAF_BRAND_LAST 0x80000004
#define CPUID_LEAF_POWER 0x80000007
#define CPUID_LEAF_ADDR_SIZES 0x80000008

struct feature_desc {
	const char *name;
	uint32_t leaf, subleaf;
	enum cpuid_reg reg;
	unsigned bit;
};

static const struct feature_desc features[FEAT_COUNT] = {
	[FEAT_SSE2] = {"sse2", CPUID_LEAF_FEATURES, 0, REG_EDX, 26},
	[FEAT_PAE] = {"pae", CPUID_LEAF_FEATURES, 0, REG_EDX, 6},
	[FEAT_PGE] = {"pge", CPUID_LEAF_FEATURES, 0, REG_EDX, 13},
	[FEAT_PAT] = {"pat", CPUID_LEAF_FEATURES, 0, REG_EDX, 16},
	[FEAT_MTRR] = {"mtrr", CPUID_LEAF_FEATURES, 0, REG_EDX, 12},
	[FEAT_APIC] = {"apic", CPUID_LEAF_FEATURES, 0, REG_EDX, 9},
	[FEAT_X2APIC] = {"x2apic", CPUID_LEAF_FEATURES, 0, REG_ECX, 21},
	[FEAT_TSC] = {"tsc", CPUID_LEAF_FEATURES, 0, REG_EDX, 4},
	[FEAT_TSC_DEADLINE] = {"tsc-deadline", CPUID_LEAF_FEATURES, 0,
			       REG_ECX, 24},
	[FEAT_INVARIANT_TSC] = {"invariant-tsc", CPUID_LEAF_POWER, 0, REG_EDX,
				8},
	[FEAT_PCID] = {"pcid", CPUID_LEAF_FEATURES, 0, REG_ECX, 17},
	[FEAT_INVPCID] = {"invpcid", CPUID_LEAF_EXT_FEATURES, 0, REG_EBX, 10},
	[FEAT_PDPE1GB] = {"1g-pages", CPUID_LEAF_EXT_INFO, 0, REG_EDX, 26},
	[FEAT_NX] = {"nx", CPUID_LEAF_EXT_INFO, 0, REG_EDX, 20},
	[FEAT_LM] = {"long-mode", CPUID_LEAF_EXT_INFO, 0, REG_EDX, 29},
	[FEAT_CLFLUSH] = {"clflush", CPUID_LEAF_FEATURES, 0, REG_EDX, 19},
	[FEAT_CLFLUSHOPT] = {"clflushopt", CPUID_LEAF_EXT_FEATURES, 0,
			     REG_EBX, 23},
	[FEAT_RDTSCP] = {"rdtscp", CPUID_LEAF_EXT_INFO, 0, REG_EDX, 27},
	[FEAT_HYPERVISOR] = {"hypervisor", CPUID_LEAF_FEATURES, 0, REG_ECX,
			     31},
	[FEAT_PDCM] = {"pdcm", CPUID_LEAF_FEATURES, 0, REG_ECX, 15},
	[FEAT_FXSR] = {"fxsr", CPUID_LEAF_FEATURES, 0, REG_EDX, 24},
};

struct cpu_info cpu_info;
static bool feature_present[FEAT_COUNT];

static uint32_t reg_of(struct cpuid_regs r, enum cpuid_reg reg)
{
	switch (reg) {
	case REG_EAX:
		return r.eax;
	case REG_EBX:
		return r.ebx;
	case REG_ECX:
		return r.ecx;
	default:
		return r.edx;
	}
}

static bool leaf_exists(uint32_t leaf)
{
	if (leaf >= CPUID_LEAF_EXT_MAX)
		return leaf <= cpu_info.max_ext_leaf;
	return leaf <= cpu_info.max_leaf;
}

static void copy_regs(char *dst, uint32_t a, uint32_t b, uint32_t c)
{
	memcpy(dst, &a, 4);
	memcpy(dst + 4, &b, 4);
	memcpy(dst + 8, &c, 4);
	dst[12] = '\0';
}

void cpu_identify(void)
{
	struct cpuid_regs r = cpuid(CPUID_LEAF_VENDOR, 0);
	uint32_t sig;

	cpu_info.max_leaf = r.eax;
	copy_regs(cpu_info.vendor, r.ebx, r.edx, r.ecx);
	cpu_info.max_ext_leaf = cpuid(CPUID_LEAF_EXT_MAX, 0).eax;

	r = cpuid(CPUID_LEAF_FEATURES, 0);
	sig = r.eax;
	cpu_info.stepping = sig & 0xf;
	cpu_info.model = (sig >> 4) & 0xf;
	cpu_info.family = (sig >> 8) & 0xf;
	/* Extended family/model apply as the SDM describes for CPUID.1. */
	if (cpu_info.family == 0xf)
		cpu_info.family += (sig >> 20) & 0xff;
	if (cpu_info.family == 0x6 || cpu_info.family >= 0xf)
		cpu_info.model |= ((sig >> 16) & 0xf) << 4;
	cpu_info.clflush_size = ((r.ebx >> 8) & 0xff) * 8;

	for (unsigned f = 0; f < FEAT_COUNT; f++) {
		const struct feature_desc *d = &features[f];

		if (!leaf_exists(d->leaf))
			continue;
		feature_present[f] =
			(reg_of(cpuid(d->leaf, d->subleaf), d->reg) >> d->bit) &
			1;
	}

	if (cpu_info.max_ext_leaf >= CPUID_LEAF_BRAND_LAST) {
		for (uint32_t l = CPUID_LEAF_BRAND_FIRST;
		     l <= CPUID_LEAF_BRAND_LAST; l++) {
			r = cpuid(l, 0);
			uint32_t w[4] = {r.eax, r.ebx, r.ecx, r.edx};
			memcpy(&cpu_info.brand[(l - CPUID_LEAF_BRAND_FIRST) * 16],
			       w, 16);
		}
		cpu_info.brand[48] = '\0';
	}
	if (cpu_info.max_ext_leaf >= CPUID_LEAF_ADDR_SIZES) {
		r = cpuid(CPUID_LEAF_ADDR_SIZES, 0);
		cpu_info.phys_addr_bits = r.eax & 0xff;
		cpu_info.virt_addr_bits = (r.eax >> 8) & 0xff;
	} else {
		cpu_info.phys_addr_bits = 36;
		cpu_info.virt_addr_bits = 48;
	}
	if (feature_present[FEAT_HYPERVISOR]) {
		r = cpuid(CPUID_LEAF_HYPERVISOR, 0);
		copy_regs(cpu_info.hypervisor, r.ebx, r.ecx, r.edx);
	}
}

bool cpu_has(enum cpu_feature f)
{
	return f < FEAT_COUNT && feature_present[f];
}

const char *cpu_feature_name(enum cpu_feature f)
{
	return f < FEAT_COUNT ? features[f].name : "?";
}

void cpu_print_report(void)
{
	const char *brand = cpu_info.brand;

	while (*brand == ' ')
		brand++;
	kprintf("cpu: %s family %#x model %#x stepping %u\n", cpu_info.vendor,
		cpu_info.family, cpu_info.model, cpu_info.stepping);
	kprintf("cpu: \"%s\"\n", *brand ? brand : "(no brand string)");
	kprintf("cpu: %u-bit physical, %u-bit virtual addresses, clflush "
		"line %u bytes\n", cpu_info.phys_addr_bits,
		cpu_info.virt_addr_bits, cpu_info.clflush_size);
	if (cpu_info.hypervisor[0])
		kprintf("cpu: hypervisor \"%s\"%s\n", cpu_info.hypervisor,
			strcmp(cpu_info.hypervisor, "TCGTCGTCGTCG") == 0 ?
				" (QEMU TCG: caches and memory types are "
				"not modelled)" :
				"");
	else
		kprintf("cpu: no hypervisor (bare metal)\n");
	kprintf("cpu: features:");
	for (unsigned f = 0; f < FEAT_COUNT; f++)
		kprintf(" %s%s", feature_present[f] ? "+" : "-",
			features[f].name);
	kprintf("\n");
}
