/*
 * CPUID deterministic cache parameters (see arch/x86_64/cpu_caches.h;
 * SDM vol. 2A, CPUID leaf 04H; AMD APM vol. 3, leaf 8000_001DH has the
 * same layout).
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpu_caches.h"
#include "arch/x86_64/cpufeature.h"
#include "lib/compiler.h"
#include "lib/kprintf.h"

#define CPUID_LEAF_CACHE_INTEL 4
#define CPUID_LEAF_CACHE_AMD 0x8000001du
#define CACHE_TYPE_MASK 0x1fu
#define CACHE_TYPE_NONE 0
#define CACHE_LEVEL_SHIFT 5
#define CACHE_LEVEL_MASK 0x7u
#define CACHE_SHARING_SHIFT 14 /* EAX[25:14]: logical CPUs sharing - 1 */
#define CACHE_SHARING_MASK 0xfffu
#define CACHE_MAX_SUBLEAVES 16
/* EBX: ways, partitions and line size, each stored minus one. */
#define CACHE_WAYS_SHIFT 22
#define CACHE_PARTS_SHIFT 12
#define CACHE_PARTS_MASK 0x3ffu
#define CACHE_LINE_MASK 0xfffu

static unsigned read_leaf(uint32_t leaf, struct cpu_caches *out)
{
	out->count = 0;
	for (uint32_t sub = 0; sub < CACHE_MAX_SUBLEAVES &&
			       out->count < CPU_CACHES_MAX; sub++) {
		struct cpuid_regs r = cpuid(leaf, sub);
		unsigned type = r.eax & CACHE_TYPE_MASK;
		struct cpu_cache *c = &out->cache[out->count];
		unsigned parts;

		if (type == CACHE_TYPE_NONE)
			break;
		c->type = (enum cpu_cache_type)type;
		c->level = (r.eax >> CACHE_LEVEL_SHIFT) & CACHE_LEVEL_MASK;
		c->shared_by = ((r.eax >> CACHE_SHARING_SHIFT) &
				CACHE_SHARING_MASK) + 1;
		c->ways = (r.ebx >> CACHE_WAYS_SHIFT) + 1;
		parts = ((r.ebx >> CACHE_PARTS_SHIFT) & CACHE_PARTS_MASK) + 1;
		c->line = (r.ebx & CACHE_LINE_MASK) + 1;
		c->sets = r.ecx + 1;
		c->size = (uint64_t)c->ways * parts * c->line * c->sets;
		out->count++;
	}
	out->leaf = out->count ? leaf : 0;
	return out->count;
}

/*
 * AMD's older leaves (APM vol. 3, CPUID Fn8000_0005 and Fn8000_0006):
 * L1 data in 0x80000005 ECX, L1 instruction in EDX; L2 in 0x80000006 ECX,
 * L3 in EDX. L2/L3 associativity is a 4-bit code.
 */
#define CPUID_LEAF_L1_AMD 0x80000005u
#define CPUID_LEAF_L2L3_AMD 0x80000006u
#define L1_SIZE_KIB_SHIFT 24
#define L1_WAYS_SHIFT 16
#define BYTE_MASK 0xffu
#define L2_SIZE_KIB_SHIFT 16
#define L3_SIZE_SHIFT 18 /* in 512 KiB units */
#define L3_UNIT KiB(512)
#define L23_WAYS_SHIFT 12
#define L23_WAYS_MASK 0xfu
#define WAYS_FULLY 0xff /* fully associative: one set */

static const uint8_t l23_ways[16] = {
	0, 1, 2, 3, 4, 6, 8, 0, 16, 0, 32, 48, 64, 96, 128, WAYS_FULLY,
};

static void add_legacy(struct cpu_caches *out, unsigned level,
		       enum cpu_cache_type type, uint64_t size, unsigned ways,
		       unsigned line)
{
	struct cpu_cache *c = &out->cache[out->count];

	if (!size || !ways || !line || out->count == CPU_CACHES_MAX)
		return;
	c->level = level;
	c->type = type;
	c->size = size;
	c->line = line;
	c->ways = ways == WAYS_FULLY ? (unsigned)(size / line) : ways;
	c->sets = (unsigned)(size / ((uint64_t)c->ways * line));
	c->shared_by = 0; /* these leaves do not say */
	out->count++;
}

static unsigned read_legacy_amd(struct cpu_caches *out)
{
	struct cpuid_regs l1, l23;

	out->count = 0;
	if (cpu_info.max_ext_leaf < CPUID_LEAF_L2L3_AMD)
		return 0;
	l1 = cpuid(CPUID_LEAF_L1_AMD, 0);
	l23 = cpuid(CPUID_LEAF_L2L3_AMD, 0);
	add_legacy(out, 1, CACHE_DATA, KiB(l1.ecx >> L1_SIZE_KIB_SHIFT),
		   (l1.ecx >> L1_WAYS_SHIFT) & BYTE_MASK, l1.ecx & BYTE_MASK);
	add_legacy(out, 1, CACHE_INSTRUCTION,
		   KiB(l1.edx >> L1_SIZE_KIB_SHIFT),
		   (l1.edx >> L1_WAYS_SHIFT) & BYTE_MASK, l1.edx & BYTE_MASK);
	add_legacy(out, 2, CACHE_UNIFIED, KiB(l23.ecx >> L2_SIZE_KIB_SHIFT),
		   l23_ways[(l23.ecx >> L23_WAYS_SHIFT) & L23_WAYS_MASK],
		   l23.ecx & BYTE_MASK);
	add_legacy(out, 3, CACHE_UNIFIED,
		   (uint64_t)(l23.edx >> L3_SIZE_SHIFT) * L3_UNIT,
		   l23_ways[(l23.edx >> L23_WAYS_SHIFT) & L23_WAYS_MASK],
		   l23.edx & BYTE_MASK);
	out->leaf = out->count ? CPUID_LEAF_L2L3_AMD : 0;
	return out->count;
}

void cpu_caches_read(struct cpu_caches *out)
{
	if (cpu_info.max_leaf >= CPUID_LEAF_CACHE_INTEL &&
	    read_leaf(CPUID_LEAF_CACHE_INTEL, out))
		return;
	if (cpu_info.max_ext_leaf >= CPUID_LEAF_CACHE_AMD &&
	    read_leaf(CPUID_LEAF_CACHE_AMD, out))
		return;
	if (read_legacy_amd(out))
		return;
	out->count = 0;
	out->leaf = 0;
}

uint64_t cpu_caches_llc_bytes(void)
{
	struct cpu_caches cc;
	uint64_t best = 0;
	unsigned best_level = 0;

	cpu_caches_read(&cc);
	for (unsigned i = 0; i < cc.count; i++) {
		const struct cpu_cache *c = &cc.cache[i];

		if (c->type == CACHE_INSTRUCTION || c->level < best_level)
			continue;
		best_level = c->level;
		best = c->size;
	}
	return best;
}

static const char *type_name(enum cpu_cache_type t)
{
	switch (t) {
	case CACHE_DATA:
		return "data";
	case CACHE_INSTRUCTION:
		return "instruction";
	case CACHE_UNIFIED:
		return "unified";
	default:
		return "unknown";
	}
}

void cpu_caches_print(void)
{
	struct cpu_caches cc;

	cpu_caches_read(&cc);
	if (!cc.count) {
		kprintf("caches: not detected (CPUID leaves 4, 0x8000001d and "
			"0x80000005/6 describe none)\n");
		return;
	}
	kprintf("caches: from CPUID leaf %#x%s\n", cc.leaf,
		cpu_has(FEAT_HYPERVISOR) ?
			" (as the hypervisor reports them)" : "");
	for (unsigned i = 0; i < cc.count; i++) {
		const struct cpu_cache *c = &cc.cache[i];

		kprintf("  L%u %-11s %6lu KiB  %3u-way  %u-byte lines  "
			"%5u sets", c->level, type_name(c->type),
			(unsigned long)(c->size >> 10), c->ways, c->line,
			c->sets);
		if (c->shared_by)
			kprintf("  shared by up to %u CPUs", c->shared_by);
		kprintf("\n");
	}
}
