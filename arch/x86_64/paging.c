/*
 * x86_64 page tables: the mechanics behind mm/vm.h (SDM vol. 3A, 4.5).
 *
 * Tables are pages from the page allocator, reached through the direct
 * map. Intermediate entries are always present+writable (and never NX):
 * permissions live in the leaves, so one leaf change is one permission
 * change. A large leaf that an operation covers only in part is split
 * into the next level first; the split keeps every byte's translation,
 * memory type and permissions.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/pat.h"
#include "arch/x86_64/pgtable.h"
#include "arch/x86_64/tlb.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/kprintf.h"
#include "lib/panic.h"
#include "lib/string.h"
#include "mm/page_alloc.h"
#include "mm/tlb_gather.h"
#include "mm/vm.h"

#define PTE_TABLE_FLAGS (PTE_P | PTE_W | PTE_U)

static enum page_size level_page_size(int level)
{
	return level == 3 ? PAGE_SIZE_1G : level == 2 ? PAGE_SIZE_2M :
							  PAGE_SIZE_4K;
}

static uint64_t *table_va(uint64_t entry)
{
	return phys_to_virt(entry & PTE_ADDR_MASK);
}

static uint64_t prot_bits(unsigned prot)
{
	uint64_t bits = PTE_P;

	if (prot & VM_WRITE)
		bits |= PTE_W;
	if (!(prot & VM_EXEC))
		bits |= PTE_NX;
	if (prot & VM_USER)
		bits |= PTE_U;
	if (prot & VM_GLOBAL)
		bits |= PTE_G;
	return bits;
}

#define PTE_PROT_MASK (PTE_P | PTE_W | PTE_NX | PTE_U | PTE_G)

static uint64_t *alloc_table(struct addr_space *as)
{
	uint64_t phys = page_alloc_phys(0, PAGE_OWNER_PAGETABLE);

	if (phys == PAGE_ALLOC_FAILED)
		return NULL;
	memset(phys_to_virt(phys), 0, PAGE_SIZE);
	as->table_pages++;
	return phys_to_virt(phys);
}

static uint64_t next_space_id = 1;

int vm_space_init(struct addr_space *as, const char *name)
{
	memset(as, 0, sizeof(*as));
	as->name = name;
	as->id = atomic_fetch_add_relaxed(&next_space_id, 1);
	spin_lock_init(&as->lock, NULL);
	as->root = alloc_table(as);
	if (!as->root)
		return VM_ERR_NOMEM;
	as->root_phys = virt_to_phys(as->root);
	return VM_OK;
}

void vm_kernel_half_precreate(void)
{
	for (unsigned i = PML4_KERNEL_FIRST; i < PT_ENTRIES; i++) {
		uint64_t *t;

		if (kernel_space.root[i] & PTE_P)
			continue;
		t = alloc_table(&kernel_space);
		if (!t)
			panic("vm: no memory for the kernel half's tables");
		kernel_space.root[i] = virt_to_phys(t) | PTE_TABLE_FLAGS;
	}
}

int vm_space_create(struct addr_space *as, const char *name)
{
	int err = vm_space_init(as, name);

	if (err)
		return err;
	/* The kernel half is shared: the same lower-level tables, all of
	 * them created at boot, so these entries never go stale. */
	for (unsigned i = PML4_KERNEL_FIRST; i < PT_ENTRIES; i++) {
		kassert(kernel_space.root[i] & PTE_P);
		as->root[i] = kernel_space.root[i];
	}
	return VM_OK;
}

/* Free the tables under entry e of level (a table, not a leaf). */
static void free_subtree(struct addr_space *as, uint64_t e, int level)
{
	uint64_t *t = table_va(e);

	if (level > 2)
		for (unsigned i = 0; i < PT_ENTRIES; i++)
			if ((t[i] & PTE_P) && !pte_is_leaf(t[i], level - 1))
				free_subtree(as, t[i], level - 1);
	memset(t, 0, PAGE_SIZE);
	page_free_phys(virt_to_phys(t), 0);
	as->table_pages--;
}

void vm_space_free_tables(struct addr_space *as)
{
	for (unsigned i = 0; i < PML4_KERNEL_FIRST; i++) {
		if (as->root[i] & PTE_P)
			free_subtree(as, as->root[i], PT_LEVELS);
		as->root[i] = 0;
	}
	memset(as->root, 0, PAGE_SIZE);
	page_free_phys(as->root_phys, 0);
	as->table_pages--;
	kassert(as->table_pages == 0);
	as->root = NULL;
}

/*
 * Replace the large leaf *entry at level (2 or 3) by a table of the next
 * level that maps the same range the same way.
 */
static int split_large(struct addr_space *as, uint64_t *entry, int level)
{
	uint64_t old = *entry, *t;
	uint64_t base = pte_leaf_addr(old, level);
	enum memtype type = pte_bits_to_memtype(old, level_page_size(level));
	int sub = level - 1;
	uint64_t flags = old & PTE_PROT_MASK;

	kassert(level >= 2 && (old & PTE_PS));
	t = alloc_table(as);
	if (!t)
		return VM_ERR_NOMEM;
	for (unsigned i = 0; i < PT_ENTRIES; i++) {
		t[i] = (base + i * PT_LEVEL_SIZE(sub)) | flags |
		       memtype_to_pte_bits(type, level_page_size(sub));
		if (sub > 1)
			t[i] |= PTE_PS;
	}
	*entry = virt_to_phys(t) | PTE_TABLE_FLAGS;
	/* The SDM asks for an invalidation when a page's size changes. */
	tlb_flush_kernel_range(0, 0);
	return VM_OK;
}

/*
 * Find the entry for va at target level, creating tables (and splitting
 * large leaves in the way) when create is set. Returns NULL when the path
 * is not present (create unset) or memory ran out (*err set).
 */
static uint64_t *walk_to(struct addr_space *as, uint64_t va, int target,
			 bool create, int *err)
{
	uint64_t *table = as->root;

	for (int level = PT_LEVELS; level > target; level--) {
		uint64_t *e = &table[PT_INDEX(va, level)];

		if (!(*e & PTE_P)) {
			uint64_t *t;

			if (!create)
				return NULL;
			t = alloc_table(as);
			if (!t) {
				*err = VM_ERR_NOMEM;
				return NULL;
			}
			*e = virt_to_phys(t) | PTE_TABLE_FLAGS;
		} else if (pte_is_leaf(*e, level)) {
			if (!create)
				return NULL;
			*err = split_large(as, e, level);
			if (*err)
				return NULL;
		}
		table = table_va(*e);
	}
	return &table[PT_INDEX(va, target)];
}

/* Find the leaf mapping va: its entry and level, or NULL. */
static uint64_t *find_leaf(struct addr_space *as, uint64_t va, int *level)
{
	uint64_t *table = as->root;

	for (int l = PT_LEVELS; l >= 1; l--) {
		uint64_t *e = &table[PT_INDEX(va, l)];

		if (!(*e & PTE_P))
			return NULL;
		if (pte_is_leaf(*e, l)) {
			*level = l;
			return e;
		}
		table = table_va(*e);
	}
	return NULL;
}

static bool can_use_level(int level, uint64_t va, uint64_t pa,
			  uint64_t remaining_bytes)
{
	uint64_t size = PT_LEVEL_SIZE(level);

	if (level == 3 && !cpu_has(FEAT_PDPE1GB))
		return false;
	return (va & (size - 1)) == 0 && (pa & (size - 1)) == 0 &&
	       remaining_bytes >= size;
}

int vm_map(struct addr_space *as, uint64_t va, uint64_t pa, uint64_t npages,
	   unsigned prot, enum memtype type, unsigned flags)
{
	uint64_t bytes = npages << PAGE_SHIFT, done = 0;
	int err = VM_OK, max_level = 3;

	if ((va | pa) & (PAGE_SIZE - 1))
		return VM_ERR_ALIGN;
	if (!memtype_valid(type))
		return VM_ERR_INVALID;
	spin_lock(&as->lock);
	while (done < bytes) {
		int level = 1;
		uint64_t *e;

		if (flags & VM_MAP_LARGE) {
			if (max_level >= 3 &&
			    can_use_level(3, va + done, pa + done, bytes - done))
				level = 3;
			else if (max_level >= 2 &&
				 can_use_level(2, va + done, pa + done,
					       bytes - done))
				level = 2;
		}
		e = walk_to(as, va + done, level, true, &err);
		if (!e)
			break;
		if (level > 1 && (*e & PTE_P) && !pte_is_leaf(*e, level)) {
			/* A table already sits where a large leaf would go:
			 * map this piece with smaller pages inside it. */
			max_level = level - 1;
			continue;
		}
		if ((*e & PTE_P) && !(flags & VM_MAP_REPLACE)) {
			err = VM_ERR_EXISTS;
			break;
		}
		*e = (pa + done) | prot_bits(prot) |
		     memtype_to_pte_bits(type, level_page_size(level)) |
		     (level > 1 ? PTE_PS : 0);
		done += PT_LEVEL_SIZE(level);
		max_level = 3;
	}
	spin_unlock(&as->lock);
	if (flags & VM_MAP_REPLACE) {
		struct tlb_gather g;

		tlb_gather_init(&g);
		tlb_gather_range(&g, as, va, npages);
		tlb_gather_finish(&g);
	}
	return err;
}

static bool table_empty(const uint64_t *t)
{
	for (unsigned i = 0; i < PT_ENTRIES; i++)
		if (t[i])
			return false;
	return true;
}

/*
 * After a leaf at leaf_level for va was cleared: unhook the page tables
 * on va's path that are now empty (a PT, then its PD) and hand them to
 * the gather, to be freed only after the TLB flush: until then another
 * CPU's paging-structure cache may still walk them. PDPTs are kept: in
 * the kernel half they are shared by every address space through copied
 * PML4 entries.
 */
static void prune_tables(struct addr_space *as, uint64_t va, int leaf_level,
			 struct tlb_gather *g)
{
	uint64_t *path[PT_LEVELS + 1];
	uint64_t *table = as->root;

	for (int level = PT_LEVELS; level >= 1; level--) {
		path[level] = &table[PT_INDEX(va, level)];
		if (level == leaf_level)
			break;
		if (!(*path[level] & PTE_P) || pte_is_leaf(*path[level], level))
			return;
		table = table_va(*path[level]);
	}
	/* path[l] is the entry at level l; its table holds level l. */
	for (int level = leaf_level; level <= 2; level++) {
		uint64_t *t = (uint64_t *)ALIGN_DOWN((uint64_t)path[level],
						      PAGE_SIZE);
		uint64_t *parent = path[level + 1];

		if (!table_empty(t))
			return;
		*parent = 0;
		as->table_pages--;
		tlb_gather_table(g, virt_to_phys(t));
	}
}

enum vm_op { OP_UNMAP, OP_PROTECT, OP_MEMTYPE };

/*
 * Apply op to every page of [va, va + npages): whole large leaves when the
 * range covers them, else split them first.
 */
static int vm_apply(struct addr_space *as, uint64_t va, uint64_t npages,
		    enum vm_op op, unsigned prot, enum memtype type,
		    struct tlb_gather *g, bool free_frames)
{
	uint64_t end = va + (npages << PAGE_SHIFT), p = va;
	int err = VM_OK;

	if (va & (PAGE_SIZE - 1))
		return VM_ERR_ALIGN;
	spin_lock(&as->lock);
	while (p < end) {
		int level;
		uint64_t *e = find_leaf(as, p, &level), size;

		if (!e) {
			if (op != OP_UNMAP) {
				err = VM_ERR_NOT_MAPPED;
				break;
			}
			p += PAGE_SIZE;
			continue;
		}
		size = PT_LEVEL_SIZE(level);
		if (level > 1 && ((p & (size - 1)) || end - p < size)) {
			err = split_large(as, e, level);
			if (err)
				break;
			continue; /* look again, one level down */
		}
		switch (op) {
		case OP_UNMAP: {
			uint64_t frame = pte_leaf_addr(*e, level);

			*e = 0;
			/* The change first, so a table freed below is
			 * flushed with it. */
			tlb_gather_range(g, as, p, size >> PAGE_SHIFT);
			if (free_frames) {
				kassert(level == 1);
				tlb_gather_frame(g, frame);
			}
			prune_tables(as, p, level, g);
			break;
		}
		case OP_PROTECT:
			*e = (*e & ~PTE_PROT_MASK) | prot_bits(prot);
			tlb_gather_range(g, as, p, size >> PAGE_SHIFT);
			break;
		case OP_MEMTYPE:
			*e = (*e & ~pte_memtype_mask(level_page_size(level))) |
			     memtype_to_pte_bits(type, level_page_size(level));
			tlb_gather_range(g, as, p, size >> PAGE_SHIFT);
			break;
		}
		p += size;
	}
	spin_unlock(&as->lock);
	return err;
}

/* vm_apply with its own gather: one flush, then the frees. */
static int vm_apply_now(struct addr_space *as, uint64_t va, uint64_t npages,
			enum vm_op op, unsigned prot, enum memtype type)
{
	struct tlb_gather g;
	int err;

	tlb_gather_init(&g);
	err = vm_apply(as, va, npages, op, prot, type, &g, false);
	tlb_gather_finish(&g);
	return err;
}

int vm_unmap(struct addr_space *as, uint64_t va, uint64_t npages)
{
	return vm_apply_now(as, va, npages, OP_UNMAP, 0, MEMTYPE_WB);
}

int vm_unmap_gather(struct addr_space *as, uint64_t va, uint64_t npages,
		    struct tlb_gather *g, bool free_frames)
{
	return vm_apply(as, va, npages, OP_UNMAP, 0, MEMTYPE_WB, g,
			free_frames);
}

int vm_protect(struct addr_space *as, uint64_t va, uint64_t npages,
	       unsigned prot)
{
	return vm_apply_now(as, va, npages, OP_PROTECT, prot, MEMTYPE_WB);
}

int vm_set_memtype(struct addr_space *as, uint64_t va, uint64_t npages,
		   enum memtype type)
{
	if (!memtype_valid(type))
		return VM_ERR_INVALID;
	return vm_apply_now(as, va, npages, OP_MEMTYPE, 0, type);
}

bool vm_translate(struct addr_space *as, uint64_t va,
		  struct vm_translation *out)
{
	int level;
	uint64_t *e = find_leaf(as, va, &level);

	if (!e)
		return false;
	out->pte = *e;
	out->level = level;
	out->phys = pte_leaf_addr(*e, level) + (va & (PT_LEVEL_SIZE(level) - 1));
	out->memtype = pte_bits_to_memtype(*e, level_page_size(level));
	return true;
}

const char *vm_strerror(int err)
{
	switch (err) {
	case VM_OK:
		return "ok";
	case VM_ERR_NOMEM:
		return "out of memory for page tables";
	case VM_ERR_EXISTS:
		return "already mapped";
	case VM_ERR_NOT_MAPPED:
		return "not mapped";
	case VM_ERR_ALIGN:
		return "address not page aligned";
	default:
		return "invalid argument";
	}
}

static const char *const level_names[PT_LEVELS + 1] = {
	"", "PT", "PD", "PDPT", "PML4"};

static void print_flags(uint64_t e, int level)
{
	kprintf("%s%s%s%s%s%s%s%s%s%s", e & PTE_P ? " P" : " -",
		e & PTE_W ? " W" : " R", e & PTE_U ? " U" : " S",
		e & PTE_PWT ? " PWT" : "", e & PTE_PCD ? " PCD" : "",
		e & PTE_A ? " A" : "", e & PTE_D ? " D" : "",
		(level > 1 && (e & PTE_PS)) ? " PS" : "",
		pte_is_leaf(e, level) && (e & PTE_G) ? " G" : "",
		e & PTE_NX ? " NX" : "");
	if (pte_is_leaf(e, level) &&
	    (e & pte_pat_bit(level_page_size(level))))
		kprintf(" PAT");
}

void pt_walk(struct addr_space *as, uint64_t va)
{
	uint64_t *table = as->root;

	kprintf("pt_walk %s %#lx: PML4 %lu | PDPT %lu | PD %lu | PT %lu | "
		"offset %#lx\n", as->name, (unsigned long)va,
		(unsigned long)PT_INDEX(va, 4), (unsigned long)PT_INDEX(va, 3),
		(unsigned long)PT_INDEX(va, 2), (unsigned long)PT_INDEX(va, 1),
		(unsigned long)(va & (PAGE_SIZE - 1)));
	kprintf("  CR3 -> %s at phys %#lx\n", level_names[PT_LEVELS],
		(unsigned long)as->root_phys);
	for (int level = PT_LEVELS; level >= 1; level--) {
		unsigned idx = PT_INDEX(va, level);
		uint64_t e = table[idx];

		kprintf("  L%d %-4s[%3u] = %016lx", level, level_names[level],
			idx, (unsigned long)e);
		print_flags(e, level);
		kprintf("\n");
		if (!(e & PTE_P)) {
			kprintf("  not present: an access raises #PF\n");
			return;
		}
		if (pte_is_leaf(e, level)) {
			enum page_size ps = level_page_size(level);
			enum memtype pat = pte_bits_to_memtype(e, ps);
			uint64_t phys = pte_leaf_addr(e, level) +
					(va & (PT_LEVEL_SIZE(level) - 1));
			enum memtype mtrr =
				mtrr_present ? mtrr_type_of(&mtrr_state, phys) :
					       MEMTYPE_WB;

			kprintf("  -> %s page at phys %#lx: PAT index %u "
				"(PAT=%d PCD=%d PWT=%d) = %s; MTRR %s; "
				"effective %s\n",
				level == 3 ? "1 GiB" : level == 2 ? "2 MiB" :
								     "4 KiB",
				(unsigned long)phys, pte_pat_index(e, ps),
				!!(e & pte_pat_bit(ps)), !!(e & PTE_PCD),
				!!(e & PTE_PWT), memtype_name(pat),
				mtrr_present ? memtype_name(mtrr) : "(none)",
				memtype_name(memtype_effective_at(phys, pat)));
			return;
		}
		table = table_va(e);
	}
}
