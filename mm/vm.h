/*
 * Address spaces and mappings. Every function takes the address space as
 * a parameter: the kernel's own space is just the first one. More spaces
 * (vm_space_create) share the kernel half exactly: every kernel
 * top-level entry is created at boot, so later kernel mappings change
 * only tables below it, which all spaces share. Their lower halves hold
 * demand-paged regions (mm/space.h).
 *
 *   vm_map        map physical pages at a virtual address
 *   vm_unmap      remove mappings (splitting large pages when needed;
 *                 page tables left empty are freed, PDPTs excepted)
 *   vm_protect    change permissions of mapped pages
 *   vm_set_memtype change the memory type (WB, WC, UC-, UC, WP, WT)
 *   vm_translate  look a virtual address up, as the MMU would
 *   pt_walk       print that lookup level by level, for teaching
 *
 * All return 0 or a negative VM_ERR_*; ranges are in 4 KiB pages.
 */
#ifndef MM_VM_H
#define MM_VM_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/config.h"
#include "lib/spinlock.h"
#include "mm/memtype.h"

/* Permissions (prot). Reading is implied by any mapping. */
#define VM_WRITE (1u << 0)
#define VM_EXEC (1u << 1)
#define VM_USER (1u << 2)
#define VM_GLOBAL (1u << 3)

/* vm_map flags */
#define VM_MAP_LARGE (1u << 0) /* use 2 MiB / 1 GiB pages where aligned */
#define VM_MAP_REPLACE (1u << 1) /* overwrite existing mappings */

#define VM_OK 0
#define VM_ERR_NOMEM (-1)
#define VM_ERR_EXISTS (-2)
#define VM_ERR_NOT_MAPPED (-3)
#define VM_ERR_ALIGN (-4)
#define VM_ERR_INVALID (-5)

/* The lower half ends here (exclusive): addresses below it belong to a
 * space's own regions, addresses above to the shared kernel half. */
#define VM_USER_END 0x0000800000000000ull

/* Words of a CPU bit mask in a space (64 CPUs each). */
#define VM_CPU_WORDS (MAX_CPUS / 64)
#define VM_MAX_REGIONS 8

enum vm_region_kind { VM_REGION_ANON, VM_REGION_FILE };

struct address_space;

/* A lower-half range filled on first touch (mm/space.h). */
struct vm_region {
	uint64_t start, end; /* page aligned, end exclusive */
	enum vm_region_kind kind;
	unsigned prot;
	struct address_space *mapping; /* VM_REGION_FILE: its page cache */
	uint64_t pgoff;		       /* file page mapped at start */
};

struct addr_space {
	const char *name;
	uint64_t *root; /* the top-level table, through the direct map */
	uint64_t root_phys;
	uint64_t table_pages; /* page-table pages owned by this space */
	struct spinlock lock;
	/* TLB bookkeeping (mm/tlb.h): a never-reused id, the generation
	 * every change bumps, the CPUs that have the space loaded now. */
	uint64_t id;
	uint64_t tlb_gen;
	uint64_t loaded[VM_CPU_WORDS];
	/* Demand paging (mm/space.h), under lock. */
	struct vm_region regions[VM_MAX_REGIONS];
	unsigned nregions;
	uint64_t resident; /* frames mapped by faults */
	uint64_t faults;
};

extern struct addr_space kernel_space;

struct vm_translation {
	uint64_t phys; /* physical address of va itself */
	uint64_t pte; /* the leaf entry */
	int level; /* 1: 4 KiB, 2: 2 MiB, 3: 1 GiB */
	enum memtype memtype; /* the PAT type the entry selects */
};

struct tlb_gather;

/*
 * The machine's address layout, as portable mm/ code needs it at boot;
 * the architecture implements these (arch/x86_64/kernel_map.c). The
 * direct map's conversions are inline, in mm/direct_map.h.
 *
 * vm_early_map_end: physical addresses below it are reachable through
 *   the boot page tables' direct map, before vm_init() builds the real one.
 * vm_kernel_image_phys: the kernel image's physical range [*start, *end).
 */
uint64_t vm_early_map_end(void);
void vm_kernel_image_phys(uint64_t *start, uint64_t *end);

int vm_space_init(struct addr_space *as, const char *name);
/* Create a table under every kernel top-level entry of kernel_space
 * (boot, before any other space exists). Panics without memory. */
void vm_kernel_half_precreate(void);
/* A new space sharing the kernel half of kernel_space. */
int vm_space_create(struct addr_space *as, const char *name);
/* Free a space's lower-half page tables (mappings must be gone) and its
 * root. It must not be loaded on any CPU. */
void vm_space_free_tables(struct addr_space *as);

int vm_map(struct addr_space *as, uint64_t va, uint64_t pa, uint64_t npages,
	   unsigned prot, enum memtype type, unsigned flags);
int vm_unmap(struct addr_space *as, uint64_t va, uint64_t npages);
/*
 * vm_unmap into a gather (mm/tlb_gather.h): the flush and the freeing of
 * emptied page tables wait for tlb_gather_finish(g). With free_frames,
 * the 4 KiB frames that were mapped are freed after the flush too.
 */
int vm_unmap_gather(struct addr_space *as, uint64_t va, uint64_t npages,
		    struct tlb_gather *g, bool free_frames);
int vm_protect(struct addr_space *as, uint64_t va, uint64_t npages,
	       unsigned prot);
int vm_set_memtype(struct addr_space *as, uint64_t va, uint64_t npages,
		   enum memtype type);
bool vm_translate(struct addr_space *as, uint64_t va,
		  struct vm_translation *out);
void pt_walk(struct addr_space *as, uint64_t va);
const char *vm_strerror(int err);

/* Build the kernel's tables (direct map, W^X image, guard page, and the
 * linear framebuffer at [fb_phys, fb_phys+fb_bytes) write-combining when
 * fb_bytes is not 0), switch to them and drop the boot tables. */
void vm_init(uint64_t fb_phys, uint64_t fb_bytes);
bool vm_ready(void);

/*
 * Make [pa, pa+len) reachable through the direct map with memory type
 * type (MMIO: UC for registers, WC for a framebuffer), mapping what is
 * missing and retyping what is there. Returns phys_to_virt(pa) or NULL.
 */
void *phys_map(uint64_t pa, uint64_t len, enum memtype type);

/*
 * Change the memory type of RAM pages through their direct-map alias,
 * with the TLB and cache flushes the SDM requires (11.12.4), like Linux's
 * set_memory_wc(). Must be set back to WB before the pages are freed:
 * page_free() checks.
 */
int set_memory_type(void *direct_va, uint64_t npages, enum memtype type);

/*
 * Map RAM frames [pa, pa + npages) a second time at va with memory type
 * type, first giving their direct-map alias the same type so the two
 * views never disagree (the SDM leaves conflicting aliases undefined).
 * vm_unmap_ram() removes the view and sets the alias back to WB.
 */
int vm_map_ram(struct addr_space *as, uint64_t va, uint64_t pa,
	       uint64_t npages, unsigned prot, enum memtype type);
int vm_unmap_ram(struct addr_space *as, uint64_t va, uint64_t pa,
		 uint64_t npages);

#endif
