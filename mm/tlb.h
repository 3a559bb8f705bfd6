/*
 * The TLB interface the memory manager uses for address spaces; the
 * architecture implements it (arch/x86_64/tlb.c).
 *
 * A space is *loaded* on the CPUs whose CR3 points at it now; only those
 * can use its translations without first passing through
 * tlb_switch_to(). With PCIDs a CPU that switches away keeps the space's
 * translations tagged in its TLB: each space carries a generation
 * (tlb_gen) that every page-table change bumps before it looks at which
 * CPUs to flush, and a CPU that returns to a space whose generation moved
 * flushes that PCID. Without PCIDs the CR3 write flushes anyway.
 *
 * Invariant: after tlb_space_changed() returned the CPUs to reach and
 * they ran tlb_flush_cpus(), no CPU can use a translation that existed
 * before the change.
 */
#ifndef MM_TLB_H
#define MM_TLB_H

#include <stdbool.h>
#include <stdint.h>

struct addr_space;

/* Per-CPU counters (tlb_stats_*). */
struct tlb_cpu_stats {
	uint64_t single;	/* invlpg of one page */
	uint64_t full;		/* full flushes */
	uint64_t ipis_sent;	/* flush IPIs this CPU sent (one per target) */
	uint64_t ipis_received; /* flush IPIs this CPU handled */
	uint64_t flushes;	/* flush requests this CPU carried out */
	uint64_t pages;		/* pages those requests named (0: full) */
	uint64_t pcid_hits;	/* switches that kept a PCID's entries */
	uint64_t pcid_flushes;	/* switches that flushed a PCID */
};

/* Kernel-half change: flush on this CPU and every other one, global
 * entries included. npages == 0: all. */
void tlb_flush_kernel_range(uint64_t va, uint64_t npages);

/* Load space as on this CPU (the kernel's own space too). */
void tlb_switch_to(struct addr_space *as);
/* The space this CPU has loaded. */
struct addr_space *tlb_current(void);
/*
 * as's page tables changed (entries cleared or weakened): bump its
 * generation, then OR the CPUs that have it loaded into cpus
 * (VM_CPU_WORDS words).
 */
void tlb_space_changed(struct addr_space *as, uint64_t *cpus);
/*
 * Flush on every CPU of cpus (this one included if set), one IPI per
 * other CPU: [va, va + npages) of space as when as is not NULL (a CPU
 * that no longer has as loaded does nothing), else everything in the
 * lower half of whatever space each CPU runs. Waits for all.
 */
void tlb_flush_cpus(const uint64_t *cpus, struct addr_space *as, uint64_t va,
		    uint64_t npages);

/*
 * True when this CPU may send shootdowns and wait for the answers: its
 * interrupts are on, or no other CPU runs. A CPU that waits for an
 * answer while another CPU, interrupts off, spins on a lock the first
 * one holds (or waits for it in turn) waits forever; work that may
 * unmap other spaces' pages (reclaim of mapped pages) checks this first.
 */
bool tlb_shootdown_may_wait(void);

/* A snapshot of CPU cpu's counters (cpu < MAX_CPUS; others read zero
 * until that CPU counts). Counters only grow until tlb_stats_reset(). */
void tlb_stats_read(unsigned cpu, struct tlb_cpu_stats *out);
/* The counters of every CPU added up. */
void tlb_stats_sum(struct tlb_cpu_stats *out);
/* Zero every CPU's counters (callers make sure no flush runs). */
void tlb_stats_reset(void);

#endif
