/*
 * Changing memory types on x86_64, the two ways the rest of the kernel
 * does it (mm/vm.h declares them): phys_map() for MMIO, which maps what
 * is missing from the direct map and retypes what is there, and
 * set_memory_type() for RAM, which retypes direct-map pages with the
 * cache flush the SDM requires, like Linux's set_memory_wc()
 * (arch/x86/mm/pat/set_memory.c). vm_map_ram() and vm_unmap_ram() map RAM
 * a second time and keep its direct-map alias of the same type.
 *
 * Every change is also told to a cache model (mm/cachemodel.h), which
 * times the pages by their new type.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/model_doorbell.h"
#include "arch/x86_64/tlb.h"
#include "lib/kprintf.h"
#include "mm/cachemodel.h"
#include "mm/page_alloc.h"
#include "mm/vm.h"

/*
 * Write back and invalidate the cache lines of [va, va + len) (SDM vol.
 * 3A, 11.12.4: a memory-type change must not leave lines cached under
 * the old type); without CLFLUSH, the whole cache.
 */
static void cache_flush_range(const void *va, uint64_t len)
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
	/* A cache model cannot see a clflush's address: tell it. */
	model_doorbell_clflushed(va, len);
}

void *phys_map(uint64_t pa, uint64_t len, enum memtype type)
{
	uint64_t base = ALIGN_DOWN(pa, PAGE_SIZE);
	uint64_t end;

	/* Last line of defence: callers check firmware's addresses first
	 * (fwmap_check_range()); a range the CPU cannot address would give
	 * a PTE with reserved bits set. */
	if (len == 0 || len > page_alloc_phys_limit() ||
	    pa > page_alloc_phys_limit() - len) {
		kprintf("phys_map: [%#llx +%#llx) is beyond the physical "
			"address width, refused\n", (unsigned long long)pa,
			(unsigned long long)len);
		return NULL;
	}
	end = ALIGN_UP(pa + len, PAGE_SIZE);
	for (uint64_t p = base; p < end; p += PAGE_SIZE) {
		struct vm_translation t;
		int err;

		if (vm_translate(&kernel_space, DIRECT_MAP_BASE + p, &t)) {
			if (t.memtype == type)
				continue;
			err = vm_set_memtype(&kernel_space,
					     DIRECT_MAP_BASE + p, 1, type);
		} else {
			err = vm_map(&kernel_space, DIRECT_MAP_BASE + p, p, 1,
				     VM_WRITE | VM_GLOBAL, type, 0);
		}
		if (err) {
			kprintf("phys_map: %#lx as %s failed: %s\n",
				(unsigned long)p, memtype_name(type),
				vm_strerror(err));
			return NULL;
		}
	}
	cachemodel_set_type(base, (end - base) >> PAGE_SHIFT, type);
	return phys_to_virt(pa);
}

int set_memory_type(void *direct_va, uint64_t npages, enum memtype type)
{
	uint64_t va = (uint64_t)direct_va;
	int err;

	if (va < DIRECT_MAP_BASE || va >= KERNEL_VMA || (va & (PAGE_SIZE - 1)))
		return VM_ERR_INVALID;
	err = vm_set_memtype(&kernel_space, va, npages, type);
	if (err)
		return err;
	/* Lines cached under the old type must not outlive the change. */
	cache_flush_range(direct_va, npages << PAGE_SHIFT);
	/* A cache model (QEMU plugin) follows the change too. */
	cachemodel_set_type(virt_to_phys(direct_va), npages, type);
	return VM_OK;
}

int vm_map_ram(struct addr_space *as, uint64_t va, uint64_t pa,
	       uint64_t npages, unsigned prot, enum memtype type)
{
	int err = set_memory_type(phys_to_virt(pa), npages, type);

	if (err)
		return err;
	err = vm_map(as, va, pa, npages, prot, type, 0);
	if (err)
		set_memory_type(phys_to_virt(pa), npages, MEMTYPE_WB);
	return err;
}

int vm_unmap_ram(struct addr_space *as, uint64_t va, uint64_t pa,
		 uint64_t npages)
{
	int err = vm_unmap(as, va, npages);

	if (err)
		return err;
	return set_memory_type(phys_to_virt(pa), npages, MEMTYPE_WB);
}
