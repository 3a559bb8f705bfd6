/*
 * FPU / SSE state for the few places that use it (the copy experiment's
 * *_simd.c routines). The rest of the kernel is compiled with -mno-sse
 * and never touches x87 or XMM registers, so interrupt handlers need not
 * save them; there is no scheduler, so nothing switches this state.
 *
 * Enabling follows SDM vol. 3A, 13.1 ("Provide OS support for FXSAVE/
 * FXRSTOR and SSE extensions") and 9.2: CR0.EM clear (no x87 emulation
 * traps), CR0.MP set (WAIT/FWAIT honour TS), CR0.TS clear, CR0.NE set
 * (native x87 error reporting), CR4.OSFXSR and CR4.OSXMMEXCPT set, then
 * FNINIT and the power-on MXCSR value (every SIMD exception masked).
 */
#ifndef ARCH_X86_64_FPU_H
#define ARCH_X86_64_FPU_H

#include <stdbool.h>

/*
 * Enable x87 and SSE on the calling CPU and put both in their initial
 * state. Idempotent and cheap after the first call on a CPU; callable
 * before cpu_identify() (it reads CPUID itself). Panics if the CPU lacks
 * FXSR, SSE or SSE2, which every x86_64 CPU has.
 */
void fpu_init_cpu(void);

/* True when the calling CPU's CR0/CR4 allow SSE instructions. */
bool fpu_sse_enabled(void);

#endif
