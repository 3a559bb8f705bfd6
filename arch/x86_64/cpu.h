/*
 * Small inline accessors for x86_64 instructions: port I/O, MSRs, control
 * registers, CPUID, TSC. Everything that touches the CPU directly goes
 * through here so the rest of the kernel reads as C.
 */
#ifndef ARCH_X86_64_CPU_H
#define ARCH_X86_64_CPU_H

#include <stdint.h>

/* CR0 / CR4 bits used by the kernel (SDM vol. 3A, 2.5). */
#define CR0_PE (1ul << 0)
#define CR0_MP (1ul << 1)
#define CR0_EM (1ul << 2)
#define CR0_TS (1ul << 3)
#define CR0_NE (1ul << 5)
#define CR0_WP (1ul << 16)
#define CR0_NW (1ul << 29)
#define CR0_CD (1ul << 30)
#define CR0_PG (1ul << 31)
#define CR4_PAE (1ul << 5)
#define CR4_PGE (1ul << 7)
#define CR4_OSFXSR (1ul << 9)
#define CR4_OSXMMEXCPT (1ul << 10)
#define CR4_PCIDE (1ul << 17)

#define RFLAGS_IF (1ul << 9)

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline void outw(uint16_t port, uint16_t v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;
	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr"
			 :
			 : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))
			 : "memory");
}

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_regs r;
	__asm__ volatile("cpuid"
			 : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
			 : "a"(leaf), "c"(subleaf));
	return r;
}

#define DEFINE_READ_CR(n)                                                   \
	static inline uint64_t read_cr##n(void)                             \
	{                                                                   \
		uint64_t v;                                                 \
		__asm__ volatile("mov %%cr" #n ", %0" : "=r"(v));           \
		return v;                                                   \
	}
DEFINE_READ_CR(0)
DEFINE_READ_CR(2)
DEFINE_READ_CR(3)
DEFINE_READ_CR(4)

static inline void write_cr0(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr0" : : "r"(v) : "memory");
}

static inline void write_cr3(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr3" : : "r"(v) : "memory");
}

static inline void write_cr4(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr4" : : "r"(v) : "memory");
}

static inline uint64_t read_rflags(void)
{
	uint64_t v;
	__asm__ volatile("pushfq; popq %0" : "=r"(v));
	return v;
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline void invlpg(uintptr_t va)
{
	__asm__ volatile("invlpg (%0)" : : "r"(va) : "memory");
}

static inline void wbinvd(void)
{
	__asm__ volatile("wbinvd" : : : "memory");
}

static inline void cpu_cli(void)
{
	__asm__ volatile("cli" : : : "memory");
}

static inline void cpu_sti(void)
{
	__asm__ volatile("sti" : : : "memory");
}

static inline void cpu_hlt(void)
{
	__asm__ volatile("hlt" : : : "memory");
}

/* Enable interrupts and halt until the next one, atomically: sti's
 * one-instruction shadow means an interrupt that arrives after a check
 * made with interrupts off ends the hlt instead of being taken before
 * it. */
static inline void cpu_sti_hlt(void)
{
	__asm__ volatile("sti; hlt" : : : "memory");
}

/* Interrupts off; returns the previous RFLAGS for cpu_irq_restore(). */
static inline uint64_t cpu_irq_save(void)
{
	uint64_t flags = read_rflags();

	cpu_cli();
	return flags;
}

/* Interrupts back on if they were on when flags was saved. */
static inline void cpu_irq_restore(uint64_t flags)
{
	if (flags & RFLAGS_IF)
		cpu_sti();
}

/* Execute ud2: raises #UD (invalid opcode) on purpose. */
static inline void cpu_ud2(void)
{
	__asm__ volatile("ud2");
}

static inline void cpu_pause(void)
{
	__asm__ volatile("pause");
}

static inline uint64_t read_rbp(void)
{
	uint64_t v;
	__asm__ volatile("mov %%rbp, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_rsp(void)
{
	uint64_t v;
	__asm__ volatile("mov %%rsp, %0" : "=r"(v));
	return v;
}

#endif
