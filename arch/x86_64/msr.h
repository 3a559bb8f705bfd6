/*
 * Model-specific register numbers (SDM vol. 4) used by the kernel.
 */
#ifndef ARCH_X86_64_MSR_H
#define ARCH_X86_64_MSR_H

#define MSR_APIC_BASE 0x0000001b
#define MSR_PMC0 0x000000c1
#define MSR_MTRRCAP 0x000000fe
#define MSR_PERFEVTSEL0 0x00000186
#define MSR_MTRR_PHYSBASE0 0x00000200
#define MSR_MTRR_PHYSMASK0 0x00000201
#define MSR_MTRR_FIX64K_00000 0x00000250
#define MSR_MTRR_FIX16K_80000 0x00000258
#define MSR_MTRR_FIX16K_A0000 0x00000259
#define MSR_MTRR_FIX4K_C0000 0x00000268 /* ... through 0x26f (F8000) */
#define MSR_PAT 0x00000277
#define MSR_MTRR_DEF_TYPE 0x000002ff
#define MSR_PERF_GLOBAL_CTRL 0x0000038f
#define MSR_X2APIC_FIRST 0x00000800 /* x2APIC registers: 0x800..0x8ff */
#define MSR_EFER 0xc0000080
#define MSR_FS_BASE 0xc0000100
#define MSR_GS_BASE 0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102

#define EFER_SCE (1ul << 0)
#define EFER_LME (1ul << 8)
#define EFER_LMA (1ul << 10)
#define EFER_NXE (1ul << 11)

#endif
