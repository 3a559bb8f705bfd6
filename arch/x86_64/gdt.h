/*
 * Global descriptor table and task-state segment, one set per CPU.
 * Long mode ignores segment bases and limits; the GDT is here for the code
 * and data selectors and for the TSS, whose interrupt stack table (IST)
 * gives double fault, NMI and machine check known-good stacks even when the
 * current stack is the problem (a kernel stack overflow into its guard page).
 */
#ifndef ARCH_X86_64_GDT_H
#define ARCH_X86_64_GDT_H

#include <stdint.h>
#include "lib/compiler.h"

#define GDT_KERNEL_CS 0x08
#define GDT_KERNEL_DS 0x10
#define GDT_TSS 0x18 /* a 16-byte descriptor: two slots */
#define GDT_ENTRIES 5

/* IST slots (1-based in the IDT gate, as the CPU counts them). */
#define IST_DOUBLE_FAULT 1
#define IST_NMI 2
#define IST_MACHINE_CHECK 3
#define IST_COUNT 3
#define IST_STACK_SIZE 8192

struct tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __packed;

struct cpu_tables {
	uint64_t gdt[GDT_ENTRIES] __aligned(16);
	struct tss tss __aligned(16);
	uint8_t ist_stacks[IST_COUNT][IST_STACK_SIZE] __aligned(16);
};

/* Fill t, load its GDT and TSS on this CPU and reload the selectors. */
void gdt_init_cpu(struct cpu_tables *t);

extern struct cpu_tables boot_cpu_tables;

#endif
