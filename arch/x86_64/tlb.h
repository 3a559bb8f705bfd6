/*
 * TLB and cache maintenance for page-table changes. The local flushes are
 * here; remote CPUs are reached through tlb_remote_flush, which the SMP
 * code installs once other CPUs run (a shootdown by IPI).
 */
#ifndef ARCH_X86_64_TLB_H
#define ARCH_X86_64_TLB_H

#include <stdint.h>

/* Above this many pages a full flush is cheaper than invlpg per page. */
#define TLB_FLUSH_ALL_THRESHOLD 32

void tlb_flush_local_page(uint64_t va);
/* Every translation on this CPU, global ones included (CR4.PGE toggle). */
void tlb_flush_local_all(void);
/* This CPU and, once SMP is up, every other one. npages == 0: all. */
void tlb_flush_kernel_range(uint64_t va, uint64_t npages);
/* Write back and invalidate the cache lines of [va, va+len). */
void cache_flush_range(const void *va, uint64_t len);

/* Installed by the SMP code: flush [va, va+npages) (0: all) on the other
 * CPUs and wait for them. NULL while only the boot CPU runs. */
extern void (*tlb_remote_flush)(uint64_t va, uint64_t npages);

#endif
