/*
 * TLB and cache flushes (SDM vol. 3A, 4.10.4 and 11.12.4).
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/tlb.h"
#include "arch/x86_64/pgtable.h"

void (*tlb_remote_flush)(uint64_t va, uint64_t npages);

void tlb_flush_local_page(uint64_t va)
{
	invlpg(va);
}

void tlb_flush_local_all(void)
{
	uint64_t cr4 = read_cr4();

	if (cr4 & CR4_PGE) {
		/* Clearing PGE flushes global entries too. */
		write_cr4(cr4 & ~CR4_PGE);
		write_cr4(cr4);
	} else {
		write_cr3(read_cr3());
	}
}

void tlb_flush_kernel_range(uint64_t va, uint64_t npages)
{
	if (npages == 0 || npages > TLB_FLUSH_ALL_THRESHOLD)
		tlb_flush_local_all();
	else
		for (uint64_t i = 0; i < npages; i++)
			tlb_flush_local_page(va + i * PT_LEVEL_SIZE(1));
	if (tlb_remote_flush)
		tlb_remote_flush(va, npages);
}

void cache_flush_range(const void *va, uint64_t len)
{
	uint64_t line = cpu_info.clflush_size ? cpu_info.clflush_size : 64;
	uint64_t p = (uint64_t)va & ~(line - 1), end = (uint64_t)va + len;

	if (!cpu_has(FEAT_CLFLUSH)) {
		wbinvd();
		return;
	}
	__asm__ volatile("mfence" : : : "memory");
	for (; p < end; p += line)
		__asm__ volatile("clflush (%0)" : : "r"(p) : "memory");
	__asm__ volatile("mfence" : : : "memory");
}
