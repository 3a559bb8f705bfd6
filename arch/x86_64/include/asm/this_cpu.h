/*
 * x86_64's "which CPU am I" in one load: the GS base points at this
 * CPU's per-CPU area (arch/x86_64/percpu.h lays it out and asserts the
 * offset), whose 32-bit word at offset THIS_CPU_NUM_GS_OFFSET holds the
 * CPU's number. The instruction behind lib/this_cpu.h's this_cpu_num(),
 * which documents the contract; portable code includes lib/this_cpu.h,
 * never this file, and only kernel builds reach it.
 */
#ifndef ASM_THIS_CPU_H
#define ASM_THIS_CPU_H

/* Byte offset of the CPU number in the area the GS base points at. */
#define THIS_CPU_NUM_GS_OFFSET 8

/* The CPU number, below MAX_CPUS. */
static inline unsigned arch_this_cpu_num(void)
{
	unsigned cpu;

	__asm__("movl %%gs:%c1, %0" : "=r"(cpu) : "i"(THIS_CPU_NUM_GS_OFFSET));
	return cpu;
}

#endif
