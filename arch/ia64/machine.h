/*
 * A software model of the parts of an ia64 (Itanium) machine that TLB
 * purging touches, for comparing two versions of Linux's
 * ia64_global_tlb_purge(). Portable C: it runs in the kernel (fed by the
 * tlb_purge experiment) and on the host (tests/host/test_ia64_tlb.c).
 *
 *   virtual address:  63..61 region | 60..0 offset in the region
 *
 *   CPU 0 .. ncpus-1
 *   +-------------------------------+      +---------------------------+
 *   | rr[0..7]: region ID per region| ---> | translation cache (TC)    |
 *   | active space, kernel thread?, |      | sets x ways of            |
 *   | need_tlb_flush                |      | (region ID, page, size)   |
 *   +-------------------------------+      +---------------------------+
 *
 *   space (mm) slot 0 .. IA64_MAX_MMS-1: context number, the mask of
 *   CPUs that loaded it, and its page table (a bitmap of mapped pages).
 *
 * A space's region ID in region r is context << 3 | r, as Linux builds
 * it (reload_context()); context 0 is the kernel's. An access looks its
 * page up by (rr[region], page): a translation cached under a region ID
 * is reachable only while a region register holds that ID.
 *
 * What the model leaves out: the VHPT walker (a touch of a mapped page
 * inserts its translation directly), translation registers, protection
 * keys, the ALAT. "Kernel thread" and "lazy TLB" have no counterpart in
 * this kernel: they are inputs of the model (struct ia64_caller, and
 * ia64_switch_to(cpu, IA64_KTHREAD)).
 *
 * Invariants (ia64_check() verifies them after every purge when
 * check_every_purge is set, and the tests after every step):
 *  1. A valid TC entry whose region ID belongs to a live space, on a CPU
 *     that can still reach it (no delayed flush pending, or the ID is in
 *     one of its region registers), maps a page that space has mapped.
 *  2. A context number is owned by at most one live space, and its bit
 *     is set in the allocation bitmap.
 *  3. A retired context (flushmap bit) is not handed out again before a
 *     wrap-around has scheduled a flush of every CPU.
 */
#ifndef ARCH_IA64_MACHINE_H
#define ARCH_IA64_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#define IA64_MAX_CPUS 16
#define IA64_MAX_MMS 64
#define IA64_REGIONS 8
#define IA64_REGION_SHIFT 61
#define IA64_REGION_OFFSET_MASK ((1ull << IA64_REGION_SHIFT) - 1)
/* Regions 0-4 belong to the user space, 5-7 to the kernel (Linux). */
#define IA64_USER_REGIONS 5
/* Linux/ia64's default base page: 16 KiB. */
#define IA64_PAGE_SHIFT 14
#define IA64_PAGE_SIZE (1ull << IA64_PAGE_SHIFT)
/* Region IDs are 18 to 24 bits wide (PAL_VM_SUMMARY's rid_size). */
#define IA64_RID_BITS_MIN 18
#define IA64_RID_BITS_MAX 24
/* Three low bits of a region ID carry the region number. */
#define IA64_RID_REGION_BITS 3
#define IA64_KERNEL_CONTEXT 0
/* Linux starts handing out contexts at 1 (0 is the kernel's). */
#define IA64_FIRST_CONTEXT 1
/* Translation cache geometry of the model. */
#define IA64_TC_SETS 64
#define IA64_TC_WAYS 4
/* ptc.e's address selects one TC set: (addr - base) >> this, mod sets. */
#define IA64_PTCE_SET_SHIFT 12
/* Pages per user region a modelled space can map. */
#define IA64_MM_PAGES 256
#define IA64_MM_WORDS (IA64_MM_PAGES / 64)
/* ia64_switch_to()'s slot for "a kernel thread runs" (lazy TLB). */
#define IA64_KTHREAD (-1)
#define IA64_NO_MM (-1)

/* Words of one context bitmap for rid_bits-wide region IDs. */
#define IA64_CTX_WORDS(rid_bits)                                            \
	(((1ull << ((rid_bits) - IA64_RID_REGION_BITS)) + 63) / 64)

enum ia64_purge_policy {
	/* Before Linux 2.6.24: flush_tlb_all() unless the space is the
	 * active one and the caller a user task. */
	IA64_PURGE_OLD,
	/* 2.6.24: load the space's region IDs, ptc.ga, load them back. */
	IA64_PURGE_NEW,
};

/* What PAL_PTCE_INFO returns: the ptc.e loop's base, counts, strides. */
struct ia64_ptce_info {
	uint64_t base;
	uint32_t count[2];
	uint64_t stride[2];
};

struct ia64_tc_entry {
	uint64_t va; /* page base, region bits included */
	uint32_t rid;
	uint8_t page_shift;
	bool valid;
};

struct ia64_cpu_counters {
	uint64_t ptc_e;		  /* ptc.e instructions executed */
	uint64_t ptc_e_loops;	  /* local_flush_tlb_all() runs, any cause */
	uint64_t ptc_e_loops_purge; /* ... of them for flush_tlb_all() */
	uint64_t ptc_e_loops_wrap;  /* ... of them for a context wrap */
	uint64_t ptc_l;		  /* ptc.l issued */
	uint64_t ptc_ga;	  /* ptc.ga issued */
	uint64_t tc_inserts;
	uint64_t tc_purged;	  /* entries removed by any purge */
};

struct ia64_cpu {
	uint32_t rr_rid[IA64_REGIONS];
	struct ia64_tc_entry tc[IA64_TC_SETS][IA64_TC_WAYS];
	uint8_t victim[IA64_TC_SETS]; /* round-robin replacement */
	int active;	/* active space (mm slot), IA64_NO_MM if none */
	bool kthread;	/* a kernel thread runs (active is borrowed) */
	bool need_tlb_flush;
	struct ia64_cpu_counters cnt;
};

struct ia64_mm {
	bool live;
	uint32_t context; /* 0: none allocated (or retired) */
	uint64_t cpu_vm_mask;
	uint64_t mapped[IA64_USER_REGIONS][IA64_MM_WORDS];
};

struct ia64_counters {
	uint64_t purge_calls;	 /* ia64_global_tlb_purge() */
	uint64_t global_purges; /* ... that called flush_tlb_all() */
	uint64_t inactive_purges; /* ... for a space not active there */
	uint64_t rid_switches;	 /* new: activate_context() pairs */
	uint64_t range_flushes;	 /* flush_tlb_range() */
	uint64_t local_range_flushes; /* ... done with ptc.l */
	uint64_t wraps;		 /* context wrap-arounds */
	uint64_t contexts;	 /* contexts handed out */
};

struct ia64_config {
	unsigned ncpus;	  /* 1 .. IA64_MAX_CPUS */
	unsigned rid_bits; /* IA64_RID_BITS_MIN .. IA64_RID_BITS_MAX */
	/* Hand out contexts below this only (0: all the ID width allows);
	 * small values make wrap-around happen in tests. */
	uint32_t ctx_limit;
	enum ia64_purge_policy policy;
	struct ia64_ptce_info ptce; /* all zero: the model's default */
	bool check_every_purge;	    /* run ia64_check() after each purge */
};

struct ia64_machine {
	struct ia64_config cfg;
	struct ia64_cpu cpus[IA64_MAX_CPUS];
	struct ia64_mm mms[IA64_MAX_MMS];
	/* Context allocator, as Linux's struct ia64_ctx. */
	uint32_t next, limit, max_ctx;
	uint64_t *bitmap;   /* contexts in use or retired-not-flushed */
	uint64_t *flushmap; /* retired, reusable after the next wrap */
	struct ia64_counters cnt;
	char fault[160]; /* first invariant violation seen, "" if none */
};

/*
 * Set m up for cfg with caller-provided context bitmaps of
 * IA64_CTX_WORDS(cfg->rid_bits) words each. Returns false (m untouched
 * but fault set) on a bad configuration: CPU count, ID width, ctx_limit
 * or ptc.e geometry out of range.
 */
bool ia64_machine_init(struct ia64_machine *m, const struct ia64_config *cfg,
		       uint64_t *bitmap, uint64_t *flushmap);

/* The ptc.e geometry the model reports when the config leaves it zero. */
struct ia64_ptce_info ia64_default_ptce(void);

static inline unsigned ia64_region(uint64_t va)
{
	return (unsigned)(va >> IA64_REGION_SHIFT);
}

static inline uint32_t ia64_rid(uint32_t context, unsigned region)
{
	return context << IA64_RID_REGION_BITS | region;
}

#endif
