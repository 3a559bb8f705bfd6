/*
 * Enable x87 and SSE state on a CPU (SDM vol. 3A, 9.2 and 13.1). See
 * fpu.h for who uses it and why no state is ever saved.
 */
#include <stdint.h>
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/fpu.h"
#include "lib/panic.h"

#define CPUID_LEAF_FEATURES 1
/* CPUID.01H:EDX feature bits (SDM vol. 2A, table 3-11). */
#define CPUID_EDX_FXSR (1u << 24)
#define CPUID_EDX_SSE (1u << 25)
#define CPUID_EDX_SSE2 (1u << 26)
#define FPU_NEEDED_EDX (CPUID_EDX_FXSR | CPUID_EDX_SSE | CPUID_EDX_SSE2)

/* MXCSR after power-on: all six SIMD exceptions masked, round to nearest
 * (SDM vol. 1, 10.2.3.1). */
#define MXCSR_DEFAULT 0x1f80u

#define CR0_FPU_SET (CR0_MP | CR0_NE)
#define CR0_FPU_CLEAR (CR0_EM | CR0_TS)
#define CR4_FPU_SET (CR4_OSFXSR | CR4_OSXMMEXCPT)

bool fpu_sse_enabled(void)
{
	uint64_t cr0 = read_cr0(), cr4 = read_cr4();

	return (cr0 & CR0_FPU_CLEAR) == 0 &&
	       (cr0 & CR0_FPU_SET) == CR0_FPU_SET &&
	       (cr4 & CR4_FPU_SET) == CR4_FPU_SET;
}

void fpu_init_cpu(void)
{
	uint32_t mxcsr = MXCSR_DEFAULT;
	struct cpuid_regs r;

	if (fpu_sse_enabled())
		return;
	r = cpuid(CPUID_LEAF_FEATURES, 0);
	if ((r.edx & FPU_NEEDED_EDX) != FPU_NEEDED_EDX)
		panic("fpu: CPU lacks FXSR/SSE/SSE2 (CPUID.1:EDX %#x)",
		      r.edx);
	write_cr0((read_cr0() & ~CR0_FPU_CLEAR) | CR0_FPU_SET);
	write_cr4(read_cr4() | CR4_FPU_SET);
	/* Both are plain text to the assembler: this file itself is built
	 * with -mno-sse, and the compiler never sees an SSE type here. */
	__asm__ volatile("fninit" : : : "memory");
	__asm__ volatile("ldmxcsr %0" : : "m"(mxcsr));
}
