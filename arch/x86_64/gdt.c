/*
 * GDT and TSS setup (SDM vol. 3A, 3.4.5 and 8.7). Each CPU gets its own
 * struct cpu_tables so each has its own IST stacks.
 */
#include "arch/x86_64/gdt.h"
#include "lib/string.h"

/* Descriptor fields (SDM vol. 3A, figure 3-8). */
#define DESC_PRESENT (1ul << 47)
#define DESC_S_CODE_DATA (1ul << 44)
#define DESC_TYPE_CODE_RX (0xaul << 40)
#define DESC_TYPE_DATA_RW (0x2ul << 40)
#define DESC_TYPE_TSS_AVAIL (0x9ul << 40)
#define DESC_LONG_MODE (1ul << 53)
#define DESC_LIMIT_MAX 0xffffful
#define DESC_GRANULARITY (1ul << 55)

struct cpu_tables boot_cpu_tables;

static uint64_t tss_low(uint64_t base, uint32_t limit)
{
	return (limit & 0xffffu) | ((base & 0xffffffu) << 16) |
	       DESC_TYPE_TSS_AVAIL | DESC_PRESENT |
	       ((uint64_t)((limit >> 16) & 0xf) << 48) |
	       (((base >> 24) & 0xff) << 56);
}

void gdt_init_cpu(struct cpu_tables *t)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __packed gdtr;
	uint64_t tss_base = (uint64_t)&t->tss;

	memset(&t->tss, 0, sizeof(t->tss));
	for (int i = 0; i < IST_COUNT; i++)
		t->tss.ist[i] = (uint64_t)&t->ist_stacks[i][IST_STACK_SIZE];
	/* No I/O permission bitmap: the base points past the TSS limit. */
	t->tss.iomap_base = sizeof(struct tss);

	t->gdt[0] = 0;
	t->gdt[GDT_KERNEL_CS / 8] = DESC_PRESENT | DESC_S_CODE_DATA |
				    DESC_TYPE_CODE_RX | DESC_LONG_MODE;
	t->gdt[GDT_KERNEL_DS / 8] = DESC_PRESENT | DESC_S_CODE_DATA |
				    DESC_TYPE_DATA_RW | DESC_LIMIT_MAX |
				    DESC_GRANULARITY;
	t->gdt[GDT_TSS / 8] = tss_low(tss_base, sizeof(struct tss) - 1);
	t->gdt[GDT_TSS / 8 + 1] = tss_base >> 32;

	gdtr.limit = sizeof(t->gdt) - 1;
	gdtr.base = (uint64_t)t->gdt;
	__asm__ volatile(
		"lgdt %0\n\t"
		"mov %1, %%ds\n\t"
		"mov %1, %%es\n\t"
		"mov %1, %%ss\n\t"
		"pushq %2\n\t"
		"leaq 1f(%%rip), %%rax\n\t"
		"pushq %%rax\n\t"
		"lretq\n"
		"1:\n\t"
		"ltr %w3"
		:
		: "m"(gdtr), "r"((uint64_t)GDT_KERNEL_DS),
		  "i"((uint64_t)GDT_KERNEL_CS), "r"((uint16_t)GDT_TSS)
		: "rax", "memory");
}
