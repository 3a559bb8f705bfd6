/*
 * The kernel's page allocator: turns the firmware memory map into a buddy
 * allocator with one struct page per frame.
 *
 * Boot order matters. Until the kernel's own page tables exist, only the
 * first 4 GiB are reachable (the boot tables' direct map, which ends at
 * vm_early_map_end()), so:
 *   page_alloc_init()        sanitise the map, reserve what is in use,
 *                            place the struct page array below 4 GiB, and
 *                            hand out frames below 4 GiB only;
 *   page_alloc_enable_high() after the switch to the kernel's tables,
 *                            add the frames above 4 GiB.
 *
 * The machine's address layout comes through two mm/ headers: the
 * direct map's conversions inline from mm/direct_map.h (on the
 * architecture's constants), what the boot tables reach and where the
 * kernel image lies from mm/vm.h, which the architecture implements.
 * This file includes no arch/ header.
 */
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/kprintf.h"
#include "lib/panic.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "mm/buddy.h"
#include "mm/direct_map.h"
#include "mm/filemap.h"
#include "mm/fwmap.h"
#include "mm/page_alloc.h"
#include "mm/vm.h"
#include "trace/tracepoint.h"

#define LOW_MEMORY_END (1ull << 20) /* BIOS data, trampolines */
#define FWMAP_CAPACITY 256
/* Freed frames are filled with this when the "poison" option is on. */
#define PAGE_POISON_BYTE 0x6b
/* Physical addresses the CPU cannot generate are never usable. */
#define PHYS_ADDR_BITS_MAX 52

static struct fwmap_entry map_storage[FWMAP_CAPACITY];
static struct fwmap mm_map;
static struct buddy buddy;
static struct lock_stats page_lock_stats = LOCK_STATS_INIT("page_alloc");
static struct spinlock page_lock = SPINLOCK_INIT(&page_lock_stats);
static uint64_t boot_free_pages;
static bool high_enabled;
static uint64_t phys_limit = 1ull << PHYS_ADDR_BITS_MAX;
static page_reclaim_fn reclaim_hook;
static uint64_t reclaim_watermark;

static void poison_frames(uint64_t pfn, unsigned order)
{
	/* Frames above the boot direct map are poisoned only once the
	 * kernel's page tables reach them. */
	if (!high_enabled && PFN_PHYS(pfn + (1ull << order)) > vm_early_map_end())
		return;
	memset(vm_phys_to_virt(PFN_PHYS(pfn)), PAGE_POISON_BYTE,
	       PAGE_SIZE << order);
}

void page_alloc_set_phys_limit(unsigned phys_bits)
{
	if (phys_bits >= 32 && phys_bits <= PHYS_ADDR_BITS_MAX)
		phys_limit = 1ull << phys_bits;
}

uint64_t page_alloc_phys_limit(void)
{
	return phys_limit;
}

static void add_ranges(uint64_t lo, uint64_t hi)
{
	size_t iter = 0;
	uint64_t base, end;

	while (fwmap_next_usable(&mm_map, &iter, &base, &end)) {
		if (base < lo)
			base = lo;
		if (end > hi)
			end = hi;
		if (base < end)
			buddy_add_range(&buddy, PHYS_PFN(base), PHYS_PFN(end));
	}
}

void page_alloc_init(const struct page_alloc_boot *boot)
{
	size_t iter = 0;
	uint64_t base, end, max_end = 0, array_bytes, array_phys = 0;
	uint64_t image_start, image_end;
	unsigned problems;

	fwmap_init(&mm_map, map_storage, FWMAP_CAPACITY);
	problems = fwmap_sanitize(&mm_map, boot->firmware_map,
				   boot->firmware_entries);
	if (problems)
		kprintf("mm: the firmware memory map had %u problem(s), "
			"corrected as reported above\n", problems);

	fwmap_reserve(&mm_map, 0, LOW_MEMORY_END, FWMAP_LOWMEM);
	vm_kernel_image_phys(&image_start, &image_end);
	fwmap_reserve(&mm_map, image_start, image_end - image_start,
		       FWMAP_KERNEL);
	for (size_t i = 0; i < boot->in_use_entries; i++)
		fwmap_reserve(&mm_map, boot->in_use[i].base,
			       boot->in_use[i].len, boot->in_use[i].type);
	fwmap_reserve(&mm_map, phys_limit, UINT64_MAX - phys_limit,
		       FWMAP_BEYOND_WIDTH);

	while (fwmap_next_usable(&mm_map, &iter, &base, &end))
		if (end > max_end)
			max_end = end;
	if (max_end == 0)
		panic("mm: the memory map has no usable RAM at all");

	/* One struct page per frame from 0 to the last usable frame, placed
	 * in the first usable range below 4 GiB that holds it. */
	array_bytes = ALIGN_UP(PHYS_PFN(max_end) * sizeof(struct page),
			       PAGE_SIZE);
	iter = 0;
	while (fwmap_next_usable(&mm_map, &iter, &base, &end)) {
		if (end > vm_early_map_end())
			end = vm_early_map_end();
		if (base < end && end - base >= array_bytes) {
			array_phys = base;
			break;
		}
	}
	if (!array_phys)
		panic("mm: no room below 4 GiB for the %lu KiB page array",
		      (unsigned long)(array_bytes >> 10));
	fwmap_reserve(&mm_map, array_phys, array_bytes, FWMAP_BOOTALLOC);

	buddy_init(&buddy, vm_phys_to_virt(array_phys), 0, PHYS_PFN(max_end));
	if (boot->poison)
		buddy_set_poison(&buddy, poison_frames);
	add_ranges(0, vm_early_map_end());
	boot_free_pages = buddy.stats.free_pages;
	kprintf("mm: %lu frames described (%lu KiB of struct page at %#lx), "
		"%lu MiB free below 4 GiB\n",
		(unsigned long)PHYS_PFN(max_end),
		(unsigned long)(array_bytes >> 10), (unsigned long)array_phys,
		(unsigned long)(boot_free_pages >> (20 - PAGE_SHIFT)));
}

void page_alloc_enable_high(void)
{
	spin_lock(&page_lock);
	high_enabled = true;
	add_ranges(vm_early_map_end(), UINT64_MAX);
	boot_free_pages = buddy.stats.free_pages;
	spin_unlock(&page_lock);
}

const struct fwmap *page_alloc_fwmap(void)
{
	return &mm_map;
}

void page_alloc_set_reclaim(page_reclaim_fn fn, uint64_t low_watermark)
{
	atomic_store_relaxed(&reclaim_watermark, fn ? low_watermark : 0);
	atomic_store_release(&reclaim_hook, fn);
}

uint64_t page_alloc_phys(unsigned order, unsigned owner)
{
	page_reclaim_fn reclaim = atomic_load_acquire(&reclaim_hook);
	uint64_t pfn;

	/* Below the watermark: ask the hook for the missing pages first
	 * (outside page_lock: reclaim frees pages). */
	if (reclaim && READ_ONCE(buddy.stats.free_pages) <
			       atomic_load_relaxed(&reclaim_watermark))
		reclaim(atomic_load_relaxed(&reclaim_watermark) -
			READ_ONCE(buddy.stats.free_pages) + (1ull << order));
	spin_lock(&page_lock);
	pfn = buddy_alloc(&buddy, order, owner);
	spin_unlock(&page_lock);
	return pfn == BUDDY_NO_PFN ? PAGE_ALLOC_FAILED : PFN_PHYS(pfn);
}

/*
 * A frame whose direct-map alias is not WB would hand its next owner a
 * surprise memory type: set_memory_type() must be undone before freeing.
 */
static void check_freed_memtype(uint64_t phys, unsigned order, void *caller)
{
	struct vm_translation t;

	if (!vm_ready())
		return;
	for (uint64_t p = phys; p < phys + (PAGE_SIZE << order);
	     p += PAGE_SIZE)
		if (vm_translate(&kernel_space, (uint64_t)vm_phys_to_virt(p), &t) &&
		    t.memtype != MEMTYPE_WB)
			panic("page_free: frame %#lx is still mapped %s in the "
			      "direct map (caller %p); set it back to WB first",
			      (unsigned long)p, memtype_name(t.memtype),
			      caller);
}

void page_free_phys(uint64_t phys, unsigned order)
{
	struct page *p;

	if (phys & (PAGE_SIZE - 1))
		panic("page_free_phys: unaligned address %#lx from %p",
		      (unsigned long)phys, __builtin_return_address(0));
	check_freed_memtype(phys, order, __builtin_return_address(0));
	p = pfn_to_page(PHYS_PFN(phys));
	/* Somebody else holds a reference (a speculative page cache lookup):
	 * the last put_page() frees the block. A zero count is left to
	 * buddy_free(), which reports the double free. */
	if (p && page_count(p) != 0 && !put_page_testzero(p))
		return;
	spin_lock(&page_lock);
	buddy_free(&buddy, PHYS_PFN(phys), order);
	spin_unlock(&page_lock);
}

void *page_alloc(unsigned order)
{
	uint64_t phys = page_alloc_phys(order, PAGE_OWNER_KERNEL);
	void *va;

	if (phys == PAGE_ALLOC_FAILED)
		return NULL;
	va = vm_phys_to_virt(phys);
	memset(va, 0, PAGE_SIZE << order);
	trace_point(page_alloc, phys >> PAGE_SHIFT, order);
	return va;
}

void page_free(void *va, unsigned order)
{
	uint64_t phys;

	if (!vm_direct_map_phys(va, &phys))
		panic("page_free: %p is not a direct-map address (caller %p)",
		      va, __builtin_return_address(0));
	trace_point(page_free, phys >> PAGE_SHIFT, order);
	page_free_phys(phys, order);
}

uint64_t page_alloc_free_pages(void)
{
	return buddy.stats.free_pages;
}

void page_alloc_sort_free_lists(void)
{
	spin_lock(&page_lock);
	buddy_sort_free_lists(&buddy);
	spin_unlock(&page_lock);
}

uint64_t page_alloc_total_pages(void)
{
	return buddy.stats.managed_pages;
}

uint64_t page_alloc_boot_free_pages(void)
{
	return boot_free_pages;
}

struct page *pfn_to_page(uint64_t pfn)
{
	return buddy_pfn_to_page(&buddy, pfn);
}

uint64_t page_to_pfn(const struct page *p)
{
	return buddy.first_pfn + (uint64_t)(p - buddy.pages);
}

void *page_address(const struct page *p)
{
	return vm_phys_to_virt(PFN_PHYS(page_to_pfn(p)));
}

struct page *virt_to_page(const void *va)
{
	uint64_t phys;

	if (!vm_direct_map_phys(va, &phys))
		return NULL;
	return pfn_to_page(PHYS_PFN(phys));
}

struct page *alloc_page_frame(unsigned owner)
{
	uint64_t phys = page_alloc_phys(0, owner);

	return phys == PAGE_ALLOC_FAILED ? NULL : pfn_to_page(PHYS_PFN(phys));
}

static struct page *pagecache_frame_alloc(void)
{
	return alloc_page_frame(PAGE_OWNER_PAGECACHE);
}

static void *pagecache_frame_address(struct page *p)
{
	return page_address(p);
}

const struct page_frame_ops page_alloc_frames = {
	.alloc = pagecache_frame_alloc,
	.free = free_page_frame,
	.address = pagecache_frame_address,
};

void free_page_frame(struct page *p)
{
	kassert(page_count(p) == 0);
	check_freed_memtype(PFN_PHYS(page_to_pfn(p)), p->order,
			    __builtin_return_address(0));
	spin_lock(&page_lock);
	buddy_free(&buddy, page_to_pfn(p), p->order);
	spin_unlock(&page_lock);
}

unsigned page_alloc_check(void)
{
	unsigned bad;

	spin_lock(&page_lock);
	bad = buddy_check(&buddy);
	spin_unlock(&page_lock);
	return bad;
}

void page_alloc_print(void)
{
	kprintf("mm: sanitised memory map:\n");
	fwmap_dump(&mm_map);
	kprintf("mm: %lu MiB managed, %lu MiB free\n",
		(unsigned long)(buddy.stats.managed_pages >> (20 - PAGE_SHIFT)),
		(unsigned long)(buddy.stats.free_pages >> (20 - PAGE_SHIFT)));
	buddy_dump(&buddy);
}
