/*
 * Address spaces with demand paging; see mm/space.h.
 */
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/kprintf.h"
#include "lib/string.h"
#include "mm/direct_map.h"
#include "mm/filemap.h"
#include "mm/kmalloc.h"
#include "mm/page_alloc.h"
#include "mm/reclaim.h"
#include "mm/rmap.h"
#include "mm/space.h"
#include "mm/tlb.h"
#include "mm/tlb_gather.h"

/* Reverse-map items: one per mapped page, for up to this many. */
#define SPACE_RMAP_ITEMS 32768

static struct space_stats stats;

void space_stats(struct space_stats *out)
{
	out->created = atomic_load_relaxed(&stats.created);
	out->destroyed = atomic_load_relaxed(&stats.destroyed);
	out->faults = atomic_load_relaxed(&stats.faults);
	out->zero_fills = atomic_load_relaxed(&stats.zero_fills);
	out->file_maps = atomic_load_relaxed(&stats.file_maps);
	out->fault_nomem = atomic_load_relaxed(&stats.fault_nomem);
	out->direct_reclaims = atomic_load_relaxed(&stats.direct_reclaims);
}

struct addr_space *space_create(const char *name)
{
	struct addr_space *as;

	if (!rmap_ready() && !rmap_init(SPACE_RMAP_ITEMS))
		return NULL;
	as = kzalloc(sizeof(*as));
	if (!as)
		return NULL;
	if (vm_space_create(as, name) != VM_OK) {
		kfree(as);
		return NULL;
	}
	atomic_fetch_add_relaxed(&stats.created, 1);
	return as;
}

static bool nothing_loaded(const struct addr_space *as)
{
	for (unsigned w = 0; w < VM_CPU_WORDS; w++)
		if (atomic_load_relaxed(&as->loaded[w]))
			return false;
	return true;
}

/* The page references the file mappings in [va, va + npages) hold, to
 * drop after the flush. */
static void gather_file_refs(struct addr_space *as, uint64_t va,
			     uint64_t npages, struct tlb_gather *g)
{
	for (uint64_t i = 0; i < npages; i++) {
		struct vm_translation t;

		if (vm_translate(as, va + i * PAGE_SIZE, &t))
			tlb_gather_page(g, pfn_to_page(t.phys >> PAGE_SHIFT));
	}
}

void space_destroy(struct addr_space *as)
{
	struct tlb_gather g;

	kassert(as != &kernel_space && nothing_loaded(as));
	tlb_gather_init(&g);
	/* Reclaim finds pages through the reverse map: take them out of it
	 * first, under its lock, so it cannot race the unmap below. */
	rmap_lock();
	for (unsigned i = 0; i < as->nregions; i++) {
		const struct vm_region *r = &as->regions[i];
		uint64_t n = (r->end - r->start) / PAGE_SIZE;

		if (r->kind == VM_REGION_FILE)
			gather_file_refs(as, r->start, n, &g);
		rmap_remove_space_locked(as, r->start, n);
	}
	rmap_unlock();
	for (unsigned i = 0; i < as->nregions; i++) {
		const struct vm_region *r = &as->regions[i];

		/* Anonymous frames are the space's; a file page loses the
		 * reference of this mapping (gathered above). */
		vm_unmap_gather(as, r->start, (r->end - r->start) / PAGE_SIZE,
				&g, r->kind == VM_REGION_ANON);
	}
	tlb_gather_finish(&g);
	vm_space_free_tables(as);
	atomic_fetch_add_relaxed(&stats.destroyed, 1);
	kfree(as);
}

static int add_region(struct addr_space *as, const struct vm_region *nr);

int space_add_anon(struct addr_space *as, uint64_t start, uint64_t npages,
		   unsigned prot)
{
	struct vm_region r = {start, start + npages * PAGE_SIZE, VM_REGION_ANON,
			      prot, NULL, 0};

	if (start & (PAGE_SIZE - 1))
		return VM_ERR_ALIGN;
	if (npages == 0 || npages > VM_USER_END / PAGE_SIZE)
		return VM_ERR_INVALID;
	return add_region(as, &r);
}

int space_add_file(struct addr_space *as, uint64_t start, uint64_t npages,
		   struct address_space *m, uint64_t pgoff, unsigned prot)
{
	struct vm_region r = {start, start + npages * PAGE_SIZE, VM_REGION_FILE,
			      prot, m, pgoff};

	if (start & (PAGE_SIZE - 1))
		return VM_ERR_ALIGN;
	if (!m || npages == 0 ||
	    npages > VM_USER_END / PAGE_SIZE)
		return VM_ERR_INVALID;
	return add_region(as, &r);
}

static int add_region(struct addr_space *as, const struct vm_region *nr)
{
	uint64_t start = nr->start, end = nr->end;
	int err = VM_OK;

	if (start < SPACE_USER_MIN || end > VM_USER_END || end < start)
		return VM_ERR_INVALID;
	spin_lock(&as->lock);
	if (as->nregions == VM_MAX_REGIONS)
		err = VM_ERR_INVALID;
	for (unsigned i = 0; i < as->nregions && !err; i++)
		if (start < as->regions[i].end && as->regions[i].start < end)
			err = VM_ERR_INVALID;
	if (!err)
		as->regions[as->nregions++] = *nr;
	spin_unlock(&as->lock);
	return err;
}

static const struct vm_region *region_of(struct addr_space *as, uint64_t va)
{
	for (unsigned i = 0; i < as->nregions; i++)
		if (va >= as->regions[i].start && va < as->regions[i].end)
			return &as->regions[i];
	return NULL;
}

/* No free frame even after the allocator's hook dropped the pages nobody
 * maps: unmap mapped ones (the fault holds no lock here and runs with
 * interrupts on, see arch/x86_64/fault.c), then the caller tries once
 * more. */
static void direct_reclaim(void)
{
	atomic_fetch_add_relaxed(&stats.direct_reclaims, 1);
	reclaim_mapped(RECLAIM_BATCH_DEFAULT);
}

/* The cached page at index with a reference for the caller, read in
 * through the page cache on a miss; NULL past the end or without
 * memory. No lock held: reading in allocates, and allocation may
 * reclaim. */
static struct page *file_page(struct address_space *m, uint64_t index)
{
	struct page *page = find_get_page(m, index);

	if (page || index >= m->size_pages)
		return page;
	__do_page_cache_readahead(m, index, 1);
	page = find_get_page(m, index);
	if (page)
		return page;
	direct_reclaim(); /* the read-in found no frame */
	__do_page_cache_readahead(m, index, 1);
	return find_get_page(m, index);
}

/*
 * Map the file page behind page. The reference find_get_page() took
 * becomes the mapping's (rmap.h invariant 3). Reclaim may take the page
 * out of the cache between the lookup and the rmap lock: then it may
 * already have unmapped every recorded mapping, so look again.
 */
static bool fault_file(struct addr_space *as, const struct vm_region *r,
		       uint64_t page)
{
	uint64_t index = r->pgoff + (page - r->start) / PAGE_SIZE, frame;
	struct page *pg;
	bool ok = false;
	int err;

	for (;;) {
		pg = file_page(r->mapping, index);
		if (!pg) {
			atomic_fetch_add_relaxed(&stats.fault_nomem, 1);
			return false;
		}
		rmap_lock();
		if (READ_ONCE(pg->mapping) == r->mapping && pg->index == index)
			break;
		rmap_unlock();
		page_cache_release(pg);
	}
	frame = PFN_PHYS(page_to_pfn(pg));
	err = vm_map(as, page, frame, 1, r->prot, MEMTYPE_WB, 0);
	if (err == VM_OK) {
		ok = rmap_add_locked(frame >> PAGE_SHIFT, as, page, false);
		if (!ok) {
			struct tlb_gather g;

			tlb_gather_init(&g);
			vm_unmap_gather(as, page, 1, &g, false);
			tlb_gather_page(&g, pg);
			rmap_unlock();
			tlb_gather_finish(&g);
			atomic_fetch_add_relaxed(&stats.fault_nomem, 1);
			return false;
		}
		atomic_fetch_add_relaxed(&stats.file_maps, 1);
	} else {
		ok = err == VM_ERR_EXISTS;
		page_cache_release(pg); /* not mapped by us */
	}
	rmap_unlock();
	return ok;
}

bool space_fault(struct addr_space *as, uint64_t va)
{
	const struct vm_region *r;
	uint64_t page = va & ~(PAGE_SIZE - 1), frame;
	struct vm_translation t;
	int err;

	if (!as || as == &kernel_space || va >= VM_USER_END)
		return false;
	spin_lock(&as->lock);
	r = region_of(as, page);
	spin_unlock(&as->lock);
	if (!r)
		return false;
	atomic_fetch_add_relaxed(&stats.faults, 1);
	if (vm_translate(as, page, &t))
		return true; /* another CPU mapped it first */
	if (r->kind == VM_REGION_FILE)
		return fault_file(as, r, page);
	frame = page_alloc_phys(0, PAGE_OWNER_KERNEL);
	if (frame == PAGE_ALLOC_FAILED) {
		direct_reclaim();
		frame = page_alloc_phys(0, PAGE_OWNER_KERNEL);
	}
	if (frame == PAGE_ALLOC_FAILED) {
		atomic_fetch_add_relaxed(&stats.fault_nomem, 1);
		kprintf("space %s: no memory for the page at %#lx: the fault "
			"is not handled\n", as->name, (unsigned long)page);
		return false;
	}
	memset(vm_phys_to_virt(frame), 0, PAGE_SIZE);
	/* Map, then record: reclaim must not find a frame not mapped yet. */
	err = vm_map(as, page, frame, 1, r->prot, MEMTYPE_WB, 0);
	if (err) {
		page_free_phys(frame, 0);
		return err == VM_ERR_EXISTS;
	}
	if (!rmap_add(frame >> PAGE_SHIFT, as, page, true)) {
		vm_unmap(as, page, 1);
		page_free_phys(frame, 0);
		atomic_fetch_add_relaxed(&stats.fault_nomem, 1);
		kprintf("space %s: reverse map full (%u mappings): the fault at "
			"%#lx is not handled\n", as->name, rmap_capacity(),
			(unsigned long)page);
		return false;
	}
	atomic_fetch_add_relaxed(&stats.zero_fills, 1);
	atomic_fetch_add_relaxed(&as->resident, 1);
	atomic_fetch_add_relaxed(&as->faults, 1);
	return true;
}
