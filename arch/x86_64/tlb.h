/*
 * TLB maintenance on x86_64 (SDM vol. 3A, 4.10): local flushes, the
 * shootdown of kernel ranges to every CPU, and the per-space machinery
 * of mm/tlb.h (which CPUs have a space loaded, PCIDs with a generation
 * count, shootdowns to those CPUs only).
 *
 * Remote CPUs are reached through tlb_remote_call, which the SMP code
 * installs once other CPUs run (an IPI that runs a function there).
 */
#ifndef ARCH_X86_64_TLB_H
#define ARCH_X86_64_TLB_H

#include <stdbool.h>
#include <stdint.h>
#include "mm/tlb.h"

/*
 * Ranges up to this many pages are flushed page by page (invlpg), larger
 * ones with a full flush: Linux's tlb_single_page_flush_ceiling. The
 * boot option tlb.ceiling= changes tlb_flush_ceiling.
 */
#define TLB_FLUSH_CEILING_DEFAULT 33
extern unsigned tlb_flush_ceiling;

/* PCIDs 1..TLB_PCID_SLOTS tag user spaces; PCID 0 is the kernel's. */
#define TLB_PCID_SLOTS 6

/* invlpg: va's translation on this CPU (current PCID and global). */
void tlb_flush_local_page(uint64_t va);
/* Every translation on this CPU, global ones included (CR4.PGE toggle). */
void tlb_flush_local_all(void);
/* [va, va + npages) on this CPU: invlpg up to the ceiling, else a full
 * flush (global entries included when global). npages == 0: all. */
void tlb_flush_local_range(uint64_t va, uint64_t npages, bool global);

/* Enable PCIDs on this CPU when it has them and nopcid is not given;
 * every CPU calls it once, with the kernel's tables loaded. */
void tlb_init_cpu(bool allow_pcid);
/* True once PCIDs are in use (the boot CPU enabled them). */
bool tlb_pcid_active(void);

/* Installed by the SMP code: run fn(arg) on the CPUs of cpus (words of
 * 64 CPUs, VM_CPU_WORDS of them), the caller included if set, and wait.
 * Returns the number of CPUs it ran on. NULL while only one CPU runs. */
extern unsigned (*tlb_remote_call)(const uint64_t *cpus, void (*fn)(void *),
				   void *arg);

#endif
