/*
 * The tlb_purge experiment (seed 003): how much TLB-flush work reclaim
 * costs when it unmaps pages of address spaces that are not running.
 *
 * Load, on N CPUs:
 *   CPU 0 (the caller) streams: it reads the pages of TP_FILES files, in
 *     turn and over and over, into the page cache (the seed's find / |
 *     xargs cat), with its own small space loaded; when free memory falls
 *     below the run's budget it reclaims: RECLAIM_BATCH_DEFAULT of the
 *     oldest cached file pages (unmapping them from every space that maps
 *     them) and as many anonymous pages of the jobs (oldest first).
 *   CPUs 1..N-1 run compile-shaped jobs (the seed's make -j50): each
 *     runs TP_JOB_SPACES spaces in turn, switching from one straight to
 *     the next, so (like a CPU of a make -j50 box, which always has more
 *     jobs than CPUs) it always has one job's space loaded and the others
 *     wait. Every space maps the toolchain, TP_TOOL_FILES files (the
 *     compiler and its C library) shared by every job, and has an
 *     anonymous heap; its turn executes toolchain pages and faults in and
 *     writes part of its heap; a space exits after TP_SPACE_LIFE turns
 *     and a new one takes its place.
 * The files live in the kernel's page cache (mm/filemap.h, contents from
 * workloads/pagefile.h): cat reads them with find_get_page() and
 * readahead, a job's toolchain regions map the cached pages, and reclaim
 * takes the oldest cached pages out of the cache and unmaps them from
 * every space (mm/reclaim.h). There is no swap: a reclaimed anonymous
 * page comes back zeroed. The jobs check every word they read: a
 * toolchain word must hold the file's pattern, a heap word zero or what
 * the space wrote.
 *
 * What a reclaimed page costs in shootdowns (the reason for this shape):
 * a shootdown goes only to the CPUs that have one of the page's spaces
 * loaded. A cat page is mapped by nobody: no IPI under either policy. A
 * job's heap page belongs to one space, loaded somewhere only while it
 * is that space's turn. A toolchain page is mapped by every live job
 * space, so each job CPU has one of them loaded: naive sends one IPI per
 * job CPU for it (one per loaded mapping), batched one per job CPU per
 * batch. The batched policy's gain per page is thus at most the batch
 * size (RECLAIM_BATCH_DEFAULT, Linux's 32); full mode also runs batched
 * variants with larger batches (tp_sweep) and prints the gain of each.
 *
 * Two x86_64 policies in one boot (mm/reclaim.h): naive (a shootdown per
 * mapping) and batched (one flush per batch). They take turns, one
 * reclaim pass each, so both meet the same pages (run_variants()). Every
 * second of TSC time a line in the seed's style:
 *   tlb: shootdown IPIs 11612 (naive) 9 (batched)
 *   PTC.E: 1161198 (old) 0 (new)
 * The second line is the ia64 model (arch/ia64/): the same stream of
 * events (spaces created, loaded, faulting, exiting; every reclaimed
 * page a purge request from CPU 0) is fed to two modelled machines, one
 * per version of ia64_global_tlb_purge(). Reclaim alternates between a
 * kernel thread (kswapd: lazy TLB, CPU 0's last space stays active) and
 * direct reclaim in the streaming task; those are model inputs. PTC.E
 * counts flush_tlb_all() calls (global purges), as the seed did.
 */
#include "arch/ia64/machine.h"
#include "arch/ia64/space.h"
#include "arch/ia64/tc.h"
#include "arch/ia64/tlb.h"
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/model_doorbell.h"
#include "arch/x86_64/tlb.h"
#include "arch/x86_64/tsc.h"
#include "kernel/bench/env_report.h"
#include "kernel/bench/bench_smp.h"
#include "kernel/experiment.h"
#include "kernel/options.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/bench.h"
#include "lib/bench_output.h"
#include "lib/kprintf.h"
#include "lib/spinlock.h"
#include "lib/stats.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "mm/filemap.h"
#include "mm/page_alloc.h"
#include "mm/reclaim.h"
#include "mm/rmap.h"
#include "mm/space.h"
#include "mm/tlb.h"
#include "workloads/pagefile.h"

#define TP_UVA 0x0000000040000000ull /* every job heap starts here */
#define TP_TOOL_VA 0x0000000080000000ull /* and the toolchain here */
#define TP_FILES 128		     /* files the streamer reads in turn */
#define TP_FILE_PAGES 16	     /* pages per file */
#define TP_TOOL_FILES 2	     /* the compiler and its C library */
#define TP_TOOL_PAGES 32	     /* pages per toolchain file */
#define TP_TOOL_ID_BASE 0x380	     /* pagefile ids of the toolchain */
#define TP_CACHE_SLOTS (TP_FILES * TP_FILE_PAGES)
BUILD_ASSERT(TP_CACHE_SLOTS > 1536);
#define TP_FILE_ID_BASE 0x300	     /* pagefile ids of the files */
#define TP_JOB_SPACES 4		     /* spaces per job CPU */
#define TP_JOB_PAGES 48		     /* anonymous heap pages per space */
#define TP_TURN_PAGES 12	     /* heap pages a space touches per turn */
#define TP_TURN_TOOL_PAGES TP_TOOL_PAGES /* a turn runs all of it */
#define TP_SPACE_LIFE 6		     /* turns before a space exits */
#define TP_WARM_ROUNDS 2	     /* job rounds before measuring */
#define TP_MAX_JOB_CPUS (IA64_MAX_CPUS - 1)
#define TP_RID_BITS 24		     /* Montecito's region-ID width */
#define TP_MS 1000ull
#define TP_FIG_SCALE 3
#define TP_MAX_FIGS 80
/* The model region of the measured run (tools/model.py's keyed label:
 * both ia64 versions' figures, from one stream of events). */
#define TP_MODEL_LABEL                                                        \
	"tlb_purge|old+new|global_purges+ptc_e+ptc_ga+purge_calls|0"
/* A page's word 0 holds this tag, the space's serial and the page. */
#define TP_TAG 0x7c0000000000ull
#define TP_SERIAL_SHIFT 16

struct tp_size {
	uint64_t phase_pages;	/* pages each variant reclaims (at least) */
	uint64_t run_ms;	/* TSC time cap of the warm-up, and of reclaim */
	uint64_t budget_pages;	/* memory the load may take */
};

/* Quick: bounded so that naive's IPIs (milliseconds each under TCG)
 * keep the experiments boot short; the time cap only matters on a host
 * too loaded to give the vCPUs time (the closing line says so). The
 * budget stays below what the files alone take in the page cache
 * (TP_CACHE_SLOTS pages), so pressure always comes; full mode's is
 * several times its largest batch. */
static const struct tp_size tp_quick = {256, 30000, 512};
static const struct tp_size tp_full = {4096, 240000, 1536};

struct tp_job {
	unsigned cpu;
	struct addr_space *sp[TP_JOB_SPACES];
	int slot[TP_JOB_SPACES];
	uint64_t serial[TP_JOB_SPACES];
	unsigned turns[TP_JOB_SPACES];
	uint64_t spaces, touches, bad_words;
	uint64_t rounds; /* turns of all its spaces */
};

/* Shared state of one run. */
static struct {
	bool stop;
	struct spinlock model_lock;
	struct ia64_machine *m[2]; /* old, new */
	uint64_t *maps[4];
	struct addr_space *slot_space[IA64_MAX_MMS];
	uint64_t next_serial;
	uint64_t model_skipped; /* unmaps outside the jobs' spaces (cat's) */
	uint64_t model_late;	/* unmaps of pages not reported yet */
	/* Of the unmaps reclaim made (observer calls), those of a space
	 * loaded on another CPU then: what a naive flush sends an IPI for. */
	uint64_t unmaps, unmaps_loaded;
	bool kswapd_turn;
	struct tp_job jobs[TP_MAX_JOB_CPUS];
	unsigned njobs;
} tp;

/* ---- the ia64 model, fed under one lock ---------------------------- */

/* The model's page for a job address: heap in region 1, toolchain in
 * region 2, page for page. */
static uint64_t model_va(uint64_t va)
{
	if (va >= TP_TOOL_VA)
		return ia64_user_va(2, (unsigned)((va - TP_TOOL_VA) / PAGE_SIZE));
	return ia64_user_va(1, (unsigned)((va - TP_UVA) / PAGE_SIZE));
}

static bool job_address(uint64_t va)
{
	return (va >= TP_UVA && va < TP_UVA + TP_JOB_PAGES * PAGE_SIZE) ||
	       (va >= TP_TOOL_VA &&
		va < TP_TOOL_VA + TP_TOOL_FILES * TP_TOOL_PAGES * PAGE_SIZE);
}

/* Where toolchain file f is mapped in every job space. */
static uint64_t tool_va(unsigned f)
{
	return TP_TOOL_VA + (uint64_t)f * TP_TOOL_PAGES * PAGE_SIZE;
}

static int model_create(struct addr_space *as)
{
	int slot = -1;

	spin_lock(&tp.model_lock);
	for (int s = 0; s < IA64_MAX_MMS && slot < 0; s++)
		if (!tp.slot_space[s])
			slot = s;
	kassert(slot >= 0);
	tp.slot_space[slot] = as;
	for (int p = 0; p < 2; p++)
		ia64_space_create(tp.m[p], slot);
	spin_unlock(&tp.model_lock);
	return slot;
}

static void model_exit(int slot)
{
	spin_lock(&tp.model_lock);
	for (int p = 0; p < 2; p++)
		ia64_space_exit(tp.m[p], slot);
	tp.slot_space[slot] = NULL;
	spin_unlock(&tp.model_lock);
}

static void model_switch(unsigned cpu, int slot)
{
	spin_lock(&tp.model_lock);
	for (int p = 0; p < 2; p++)
		ia64_switch_to(tp.m[p], cpu, slot);
	spin_unlock(&tp.model_lock);
}

/* Whether as is loaded on a CPU other than this one now. */
static bool loaded_elsewhere(const struct addr_space *as)
{
	unsigned self = smp_this_cpu();

	for (unsigned w = 0; w < VM_CPU_WORDS; w++) {
		uint64_t m = atomic_load_relaxed(&as->loaded[w]);

		if (w == self / 64)
			m &= ~(1ull << (self % 64));
		if (m)
			return true;
	}
	return false;
}

/* Reclaim observer (reverse-map lock held): a purge request from CPU 0
 * for each page of a job's space. */
static void model_purge(struct addr_space *as, uint64_t va, void *arg)
{
	int slot = -1;

	(void)arg;
	spin_lock(&tp.model_lock);
	tp.unmaps++;
	tp.unmaps_loaded += loaded_elsewhere(as);
	for (int s = 0; s < IA64_MAX_MMS && slot < 0; s++)
		if (tp.slot_space[s] == as)
			slot = s;
	if (slot >= 0 && job_address(va)) {
		for (int p = 0; p < 2; p++) {
			/* A job reports its turn's pages at the turn's end;
			 * a page reclaimed before that is mapped first. */
			if (!ia64_space_mapped(tp.m[p], slot, model_va(va))) {
				ia64_space_map(tp.m[p], slot, model_va(va));
				tp.model_late += p == 0;
			}
			ia64_unmap_page(tp.m[p], 0, slot, model_va(va));
		}
	} else {
		tp.model_skipped++;
	}
	spin_unlock(&tp.model_lock);
}

/* ---- the files, in the kernel's page cache ------------------------ */

static struct {
	struct pagefile f[TP_FILES];
	struct address_space m[TP_FILES];
	struct pagefile tool_f[TP_TOOL_FILES];
	struct address_space tool_m[TP_TOOL_FILES];
	struct file_ra_state ra; /* the streamer's, per file in turn */
	uint64_t pos;		 /* the streamer's next page */
	uint64_t bad_pages;	 /* streamed pages with wrong data */
} tpc;

static uint32_t file_id(uint64_t file)
{
	return (uint32_t)(TP_FILE_ID_BASE + file);
}

static uint32_t tool_id(unsigned f)
{
	return (uint32_t)(TP_TOOL_ID_BASE + f);
}

/* Toolchain pages cached now (racy, for printing). */
static unsigned tool_pages(void)
{
	uint64_t n = 0;

	for (unsigned f = 0; f < TP_TOOL_FILES; f++)
		n += READ_ONCE(tpc.tool_m[f].nrpages);
	return (unsigned)n;
}

/* Pages of the files cached now (a racy sum, for printing). */
static unsigned cache_pages(void)
{
	uint64_t n = 0;

	for (unsigned f = 0; f < TP_FILES; f++)
		n += READ_ONCE(tpc.m[f].nrpages);
	return (unsigned)n;
}

/* Pages read in from the files, and reclaimed from the cache. */
static uint64_t cache_reads(void)
{
	uint64_t n = 0;

	for (unsigned f = 0; f < TP_FILES; f++)
		n += READ_ONCE(tpc.f[f].reads);
	return n;
}

static uint64_t cache_evicted(void)
{
	uint64_t n = 0;

	for (unsigned f = 0; f < TP_FILES; f++)
		n += READ_ONCE(tpc.m[f].reclaimed_pages);
	return n;
}

/*
 * cat reads the next page of the stream through the page cache:
 * find_get_page(), on a miss readahead, a check of the data, release.
 * False without memory.
 */
static bool cache_stream(void)
{
	uint64_t file = tpc.pos / TP_FILE_PAGES, index = tpc.pos % TP_FILE_PAGES;
	struct address_space *m = &tpc.m[file];
	struct page *p;

	tpc.pos = (tpc.pos + 1) % TP_CACHE_SLOTS;
	p = find_get_page(m, index);
	if (!p) {
		if (index == 0)
			file_ra_state_init(&tpc.ra); /* the next file */
		page_cache_readahead(m, &tpc.ra, index);
		p = find_get_page(m, index);
		if (!p)
			return false;
	}
	if (!pagefile_page_spot_ok(file_id(file), index, page_data(p)))
		tpc.bad_pages++;
	page_cache_release(p);
	return true;
}

static void cache_setup(void)
{
	memset(&tpc, 0, sizeof(tpc));
	file_ra_state_init(&tpc.ra);
	for (unsigned f = 0; f < TP_FILES; f++) {
		tpc.f[f] = (struct pagefile){.id = file_id(f),
					     .size_pages = TP_FILE_PAGES};
		address_space_init(&tpc.m[f], PAGECACHE_LOCKLESS_GANG,
				   &pagefile_store, &tpc.f[f], TP_FILE_PAGES,
				   NULL, NULL);
	}
	for (unsigned f = 0; f < TP_TOOL_FILES; f++) {
		tpc.tool_f[f] = (struct pagefile){.id = tool_id(f),
						  .size_pages = TP_TOOL_PAGES};
		address_space_init(&tpc.tool_m[f], PAGECACHE_LOCKLESS_GANG,
				   &pagefile_store, &tpc.tool_f[f],
				   TP_TOOL_PAGES, NULL, NULL);
	}
}

/* Drop the files' cached pages (nothing maps them any more). */
static void cache_free_all(void)
{
	for (unsigned f = 0; f < TP_FILES; f++)
		truncate_inode_pages(&tpc.m[f]);
	for (unsigned f = 0; f < TP_TOOL_FILES; f++)
		truncate_inode_pages(&tpc.tool_m[f]);
}

/* ---- the jobs ------------------------------------------------------ */

static volatile uint64_t *word0(uint64_t page)
{
	return (volatile uint64_t *)(TP_UVA + page * PAGE_SIZE);
}

static bool job_new_space(struct tp_job *j, unsigned k)
{
	struct addr_space *as = space_create("job");

	if (!as)
		return false;
	j->serial[k] = atomic_fetch_add_relaxed(&tp.next_serial, 1);
	if (space_add_anon(as, TP_UVA, TP_JOB_PAGES, VM_WRITE) != VM_OK) {
		space_destroy(as);
		return false;
	}
	for (unsigned f = 0; f < TP_TOOL_FILES; f++) {
		if (space_add_file(as, tool_va(f), TP_TOOL_PAGES,
				   &tpc.tool_m[f], 0, 0) != VM_OK) {
			space_destroy(as);
			return false;
		}
	}
	j->sp[k] = as;
	j->slot[k] = model_create(as);
	j->turns[k] = 0;
	j->spaces++;
	return true;
}

/* The space exits: the CPU leaves it (a space is destroyed only when
 * loaded nowhere), then it goes, and only then leaves the model: until
 * space_destroy() has taken its pages out of the reverse map, reclaim
 * may still unmap them, and the model must know the space then. */
static void job_end_space(struct tp_job *j, unsigned k)
{
	tlb_switch_to(&kernel_space);
	model_switch(j->cpu, IA64_KTHREAD);
	space_destroy(j->sp[k]);
	model_exit(j->slot[k]);
	j->sp[k] = NULL;
}

/* A turn's events for the model, handed over under one lock; the CPU
 * stays in the space until its next switch, as the real one does. */
static void model_turn(unsigned cpu, int slot, const uint64_t *va,
		       unsigned n)
{
	spin_lock(&tp.model_lock);
	for (int p = 0; p < 2; p++) {
		ia64_switch_to(tp.m[p], cpu, slot);
		for (unsigned i = 0; i < n; i++) {
			ia64_space_map(tp.m[p], slot, model_va(va[i]));
			ia64_touch(tp.m[p], cpu, model_va(va[i]));
		}
	}
	spin_unlock(&tp.model_lock);
}

#define TP_TURN_TOUCHES (TP_TURN_PAGES + TP_TOOL_FILES * TP_TURN_TOOL_PAGES)

/* One turn of space k: switch to it (from the previous job's space),
 * touch pages; it stays loaded until the next turn's switch. */
static void job_turn(struct tp_job *j, unsigned k)
{
	uint64_t tag = TP_TAG | j->serial[k] << TP_SERIAL_SHIFT;
	uint64_t touched[TP_TURN_TOUCHES];
	unsigned n = 0;

	tlb_switch_to(j->sp[k]);
	for (unsigned i = 0; i < TP_TURN_PAGES; i++) {
		uint64_t page = (j->turns[k] * TP_TURN_PAGES + i) % TP_JOB_PAGES;
		uint64_t v = *word0(page); /* faults it in if needed */

		/* Zero (new or reclaimed) or this space's own tag. */
		if (v != 0 && v != (tag | page))
			j->bad_words++;
		*word0(page) = tag | page;
		touched[n++] = TP_UVA + page * PAGE_SIZE;
	}
	for (unsigned f = 0; f < TP_TOOL_FILES; f++) {
		for (unsigned i = 0; i < TP_TURN_TOOL_PAGES; i++) {
			uint64_t page = (j->turns[k] * TP_TURN_TOOL_PAGES + i) %
					TP_TOOL_PAGES;
			uint64_t va = tool_va(f) + page * PAGE_SIZE;
			unsigned w = (unsigned)((j->touches + n) %
						(PAGE_SIZE / 8));

			/* A toolchain word is the file's, whichever frame
			 * holds it. */
			if (*(volatile uint64_t *)(va + w * 8) !=
			    pagefile_word(tool_id(f), page, w))
				j->bad_words++;
			touched[n++] = va;
		}
	}
	j->touches += n;
	model_turn(j->cpu, j->slot[k], touched, n);
}

static void job_main(void *arg)
{
	struct tp_job *j = arg;

	while (!atomic_load_acquire(&tp.stop)) {
		for (unsigned k = 0; k < TP_JOB_SPACES; k++) {
			if (!j->sp[k] && !job_new_space(j, k))
				continue; /* no memory now: next turn */
			job_turn(j, k);
			if (++j->turns[k] == TP_SPACE_LIFE)
				job_end_space(j, k);
		}
		atomic_store_release(&j->rounds, j->rounds + 1);
	}
	for (unsigned k = 0; k < TP_JOB_SPACES; k++)
		if (j->sp[k])
			job_end_space(j, k);
}

/* ---- the streamer and reclaim (CPU 0) ------------------------------ */

/*
 * Batch sizes of the extra batched variants (sweep=1, full mode's
 * default): Linux's batch times 2 to 16, to show how the gain per page
 * follows the batch size.
 */
static const unsigned tp_sweep[] = {64, 128, 256};
#define TP_MAX_VARIANTS (TLB_POLICY_COUNT + ARRAY_SIZE(tp_sweep))

struct tp_variant {
	enum tlb_policy policy;
	unsigned batch;		     /* pages per flush (batched) */
	char name[BENCH_FIELD_MAX];  /* naive, batched, batched_b64, ... */
	uint64_t pages, file_pages, batches, reclaims;
	uint64_t mapped_pages, mappings, mappings_loaded;
	struct tlb_cpu_stats cpu[MAX_CPUS]; /* over its passes */
	uint64_t ipis;	 /* sent, all CPUs, during its passes */
	uint64_t cycles; /* TSC time of its passes */
};

static uint64_t sum_sent(void)
{
	struct tlb_cpu_stats s;

	tlb_stats_sum(&s);
	return s.ipis_sent;
}

/* The ia64 model's global purges so far, in the seed's style. */
static void model_line(void)
{
	spin_lock(&tp.model_lock);
	kprintf("PTC.E: %lu (old) %lu (new)\n",
		(unsigned long)tp.m[0]->cnt.global_purges,
		(unsigned long)tp.m[1]->cnt.global_purges);
	spin_unlock(&tp.model_lock);
}

/* The seed's lines: the naive and the (first) batched variant's IPIs
 * so far, and the ia64 model's global purges. */
static void per_second(const struct tp_variant *ph)
{
	kprintf("tlb: shootdown IPIs %lu (naive) %lu (batched)\n",
		(unsigned long)ph[0].ipis, (unsigned long)ph[1].ipis);
	model_line();
}

static bool jobs_warm(void)
{
	for (unsigned i = 0; i < tp.njobs; i++)
		if (atomic_load_acquire(&tp.jobs[i].rounds) < TP_WARM_ROUNDS)
			return false;
	return true;
}

/* Stream until the load has taken its budget and every job has run
 * its spaces a few times: reclaim then starts under pressure, with
 * the jobs' pages in place. */
static void warm_up(const struct tp_size *size, uint64_t low_free)
{
	uint64_t t0 = rdtsc();
	uint64_t end = t0 + stats_muldiv(size->run_ms, tsc_hz(), TP_MS);

	while (rdtsc() < end) {
		bool full = page_alloc_free_pages() < low_free ||
			    cache_pages() == TP_CACHE_SLOTS;

		if (full && jobs_warm())
			break;
		if (!full && !cache_stream())
			break;
	}
	kprintf("tlb_purge: warm-up: %lu ms, the page cache holds %u pages of the files\n",
		(unsigned long)stats_muldiv(rdtsc() - t0, TP_MS, tsc_hz()),
		cache_pages());
}

/* A variant has reclaimed its pages. */
static bool variant_done(const struct tp_variant *ph, const struct tp_size *size)
{
	return ph->pages >= size->phase_pages;
}

/* The closing line: the seed's, when both variants did their pages;
 * else no comparison, and how far each got. */
static void closing_line(const struct tp_variant *ph,
			 const struct tp_size *size)
{
	if (variant_done(&ph[0], size) && variant_done(&ph[1], size))
		kprintf("tlb: shootdown IPIs %lu (naive) %lu (batched)\n",
			(unsigned long)ph[0].ipis, (unsigned long)ph[1].ipis);
	else
		kprintf("tlb: shootdown IPIs: no comparison, the run was cut "
			"short (naive %lu of %lu pages, batched %lu of %lu)\n",
			(unsigned long)ph[0].pages,
			(unsigned long)size->phase_pages,
			(unsigned long)ph[1].pages,
			(unsigned long)size->phase_pages);
	model_line();
}

static void add_stats(struct tlb_cpu_stats *acc, const struct tlb_cpu_stats *a,
		      const struct tlb_cpu_stats *b)
{
	acc->single += b->single - a->single;
	acc->full += b->full - a->full;
	acc->ipis_sent += b->ipis_sent - a->ipis_sent;
	acc->ipis_received += b->ipis_received - a->ipis_received;
	acc->flushes += b->flushes - a->flushes;
	acc->pages += b->pages - a->pages;
	acc->pcid_hits += b->pcid_hits - a->pcid_hits;
	acc->pcid_flushes += b->pcid_flushes - a->pcid_flushes;
}

/*
 * One reclaim pass of variant ph: a list of cached file pages and one of
 * anonymous pages, `pass` pages each (fewer when a list runs dry), with
 * its policy and batch; what the pass cost is added to ph.
 */
static void reclaim_pass(struct tp_variant *ph, int my_slot)
{
	static struct tlb_cpu_stats s0[MAX_CPUS];
	unsigned cpus = smp_cpus_online();
	uint64_t t0 = rdtsc(), ipis0 = sum_sent(), loaded0 = tp.unmaps_loaded;
	/* Pages per list and pass: Linux's isolation size, or the batch
	 * when it is larger, so that a pass is one batch. */
	uint64_t pass = ph->policy == TLB_POLICY_BATCHED &&
				ph->batch > RECLAIM_BATCH_DEFAULT ?
			ph->batch :
			RECLAIM_BATCH_DEFAULT;
	struct reclaim_result f, a;

	for (unsigned c = 0; c < cpus; c++)
		tlb_stats_read(c, &s0[c]);
	/* kswapd and direct reclaim take turns (model). */
	tp.kswapd_turn = !tp.kswapd_turn;
	model_switch(0, tp.kswapd_turn ? IA64_KTHREAD : my_slot);
	f = reclaim_file(pass, ph->policy, ph->batch, NULL, NULL, model_purge,
			 NULL);
	a = reclaim_anon(pass, ph->policy, ph->batch, model_purge, NULL);
	ph->mapped_pages += f.mapped_pages + a.mapped_pages;
	ph->mappings += f.mappings + a.mappings;
	ph->file_pages += f.pages;
	ph->pages += f.pages + a.pages;
	ph->batches += f.batches + a.batches;
	ph->reclaims++;
	ph->ipis += sum_sent() - ipis0;
	ph->mappings_loaded += tp.unmaps_loaded - loaded0;
	for (unsigned c = 0; c < cpus; c++) {
		struct tlb_cpu_stats s1;

		tlb_stats_read(c, &s1);
		add_stats(&ph->cpu[c], &s0[c], &s1);
	}
	ph->cycles += rdtsc() - t0;
}

/* The variant with the fewest pages reclaimed so far (the first such),
 * among those not done; there is one while any is not done. */
static struct tp_variant *behind(struct tp_variant *ph, unsigned nph,
				 const struct tp_size *size)
{
	struct tp_variant *v = NULL;

	for (unsigned p = 0; p < nph; p++)
		if (!variant_done(&ph[p], size) && (!v || ph[p].pages < v->pages))
			v = &ph[p];
	kassert(v);
	return v;
}

/*
 * Stream, and under pressure reclaim, one pass at a time, the variants
 * taking turns: the pass goes to the variant furthest behind in pages,
 * so each meets the same mix of pages on the LRU (cat's, the
 * toolchain's, the heaps') over the same stretch of the run, as
 * sequential phases would not, and a time cap leaves them all about as
 * far. Until every variant has its pages, or the time cap. Returns
 * the number of variants the cap left short of their pages.
 */
static unsigned run_variants(struct tp_variant *ph, unsigned nph,
			     const struct tp_size *size, int my_slot,
			     uint64_t low_free)
{
	uint64_t t0 = rdtsc(), next = t0 + tsc_hz();
	uint64_t end = t0 + stats_muldiv(size->run_ms, tsc_hz(), TP_MS);
	unsigned left = nph;

	while (left && rdtsc() < end) {
		if (!cache_stream() || page_alloc_free_pages() < low_free) {
			struct tp_variant *v = behind(ph, nph, size);

			reclaim_pass(v, my_slot);
			left -= variant_done(v, size);
		}
		if (rdtsc() >= next) {
			/* One line per second; a pass longer than that
			 * gets one line, not one per second it took. */
			per_second(ph);
			next = rdtsc() + tsc_hz();
		}
	}
	kprintf("tlb_purge: reclaim ran %lu ms%s; the page cache holds %u "
		"pages of cat's files and %u of the toolchain (%lu of cat's "
		"read in, %lu evicted so far)\n",
		(unsigned long)stats_muldiv(rdtsc() - t0, TP_MS, tsc_hz()),
		left ? ", stopped by the time cap (a loaded host)" : "",
		cache_pages(), tool_pages(), (unsigned long)cache_reads(),
		(unsigned long)cache_evicted());
	for (unsigned p = 0; p < nph; p++)
		kprintf("tlb_purge: %s: %lu pages reclaimed (%lu file, %lu "
			"anonymous) in %lu passes (%lu ms), %lu flushes, %lu "
			"IPIs; %lu of the pages were mapped, by %lu mappings, "
			"%lu of them in a space loaded on another CPU at the "
			"unmap\n", ph[p].name, (unsigned long)ph[p].pages,
			(unsigned long)ph[p].file_pages,
			(unsigned long)(ph[p].pages - ph[p].file_pages),
			(unsigned long)ph[p].reclaims,
			(unsigned long)stats_muldiv(ph[p].cycles, TP_MS,
						    tsc_hz()),
			(unsigned long)ph[p].batches,
			(unsigned long)ph[p].ipis,
			(unsigned long)ph[p].mapped_pages,
			(unsigned long)ph[p].mappings,
			(unsigned long)ph[p].mappings_loaded);
	return left;
}

/* ---- results ------------------------------------------------------- */

static char tp_names[TP_MAX_FIGS][BENCH_FIELD_MAX];

static void fig(struct bench_figure *f, size_t *n, const char *variant,
		const char *metric, const char *unit, uint64_t scaled,
		unsigned cpus)
{
	struct stats st;
	uint64_t v = scaled, scratch = scaled;

	kassert(*n < TP_MAX_FIGS);
	stats_compute(&st, &v, 1, &scratch);
	bench_figure_init(&f[*n], "tlb_purge", variant, metric, unit,
			  TP_FIG_SCALE, &st);
	f[*n].cpus = cpus;
	(*n)++;
}

static uint64_t x1000(uint64_t v)
{
	return v * 1000;
}

static uint64_t model_sum(const struct ia64_machine *m, size_t off)
{
	uint64_t t = 0;

	for (unsigned c = 0; c < m->cfg.ncpus; c++)
		t += *(const uint64_t *)((const char *)&m->cpus[c].cnt + off);
	return t;
}
#define MODEL_SUM(m, field)                                                 \
	model_sum(m, __builtin_offsetof(struct ia64_cpu_counters, field))

/* The most IPIs one CPU received per flush batch in variant ph (x1000). */
static uint64_t worst_per_cpu_per_batch(const struct tp_variant *ph)
{
	uint64_t worst = 0;

	for (unsigned c = 0; c < smp_cpus_online() && ph->batches; c++) {
		uint64_t got = ph->cpu[c].ipis_received;
		uint64_t v = stats_muldiv(got, 1000, ph->batches);

		worst = v > worst ? v : worst;
	}
	return worst;
}

static void x86_table(const struct tp_variant *ph, unsigned nph,
		      unsigned cpus)
{
	kprintf("\ntlb_purge: x86_64 reclaim, per policy and CPU\n");
	kprintf("policy        cpu  IPIs-sent  IPIs-recv  single  full   "
		"pages/flush\n");
	for (unsigned p = 0; p < nph; p++) {
		for (unsigned c = 0; c < cpus; c++) {
			const struct tlb_cpu_stats *b = &ph[p].cpu[c];
			uint64_t fl = b->flushes;

			kprintf("%-13s %3u %10lu %10lu %7lu %5lu %8lu.%03lu\n",
				ph[p].name, c,
				(unsigned long)b->ipis_sent,
				(unsigned long)b->ipis_received,
				(unsigned long)b->single,
				(unsigned long)b->full,
				(unsigned long)(fl ? b->pages / fl : 0),
				(unsigned long)(fl ? (b->pages * 1000 / fl) % 1000 : 0));
		}
	}
}

/* IPIs per 1000 reclaimed pages of a variant (3 decimals: x1000). */
static uint64_t per_kpage(const struct tp_variant *ph)
{
	return ph->pages ? stats_muldiv(ph->ipis, 1000000, ph->pages) : 0;
}

/* The batched variants by batch size, then the gain per page of each
 * against the naive variant (those lines vary with timing: a quick run
 * may need no IPI at all). */
static void batch_table(const struct tp_variant *ph, unsigned nph,
			const struct tp_size *size)
{
	uint64_t naive = per_kpage(&ph[0]);

	kprintf("\ntlb_purge: IPIs per reclaimed page by batch size (naive: "
		"%lu IPIs for %lu pages; a batch saves at most its size)\n",
		(unsigned long)ph[0].ipis, (unsigned long)ph[0].pages);
	kprintf("variant        batch    pages  flushes     IPIs  "
		"IPIs/1000pages\n");
	for (unsigned p = 1; p < nph; p++) {
		uint64_t k = per_kpage(&ph[p]);

		kprintf("%-13s %6u %8lu %8lu %8lu %11lu.%03lu\n", ph[p].name,
			ph[p].batch, (unsigned long)ph[p].pages,
			(unsigned long)ph[p].batches,
			(unsigned long)ph[p].ipis, (unsigned long)(k / 1000),
			(unsigned long)(k % 1000));
	}
	for (unsigned p = 1; p < nph; p++) {
		uint64_t k = per_kpage(&ph[p]);

		if (!variant_done(&ph[0], size) || !variant_done(&ph[p], size))
			kprintf("tlb_purge: no ratio naive / %s: the run was "
				"cut short\n", ph[p].name);
		else if (!ph[0].pages || !ph[p].pages || !naive)
			kprintf("tlb_purge: no ratio (a variant reclaimed "
				"nothing, or naive needed no IPI)\n");
		else if (k)
			kprintf("tlb_purge: IPIs per reclaimed page, naive / "
				"%s = %lu.%03lu\n", ph[p].name,
				(unsigned long)(naive / k),
				(unsigned long)(naive * 1000 / k % 1000));
		else
			kprintf("tlb_purge: IPIs per reclaimed page, naive / "
				"%s: %s sent none (naive %lu.%03lu per 1000 "
				"pages)\n", ph[p].name, ph[p].name,
				(unsigned long)(naive / 1000),
				(unsigned long)(naive % 1000));
	}
}

/*
 * The tables and figures. A variant the time cap left short of its pages
 * has no figures (its IPIs would read as a policy's cost): a
 * BENCH_CUT_SHORT line instead, and the result is 1 (failed).
 */
static int report(const struct tp_variant *ph, unsigned nph, unsigned cpus,
		  const struct tp_size *size)
{
	static struct bench_figure f[TP_MAX_FIGS];
	size_t n = 0;
	int rc = 0;

	x86_table(ph, nph, cpus);
	for (unsigned p = 0; p < nph; p++) {
		const char *v = ph[p].name;

		if (!variant_done(&ph[p], size)) {
			bench_missing("tlb_purge", v, NULL, BENCH_CUT_SHORT,
				      "the %lu ms time cap stopped reclaim "
				      "after %lu of its %lu pages (%lu "
				      "passes)", (unsigned long)size->run_ms,
				      (unsigned long)ph[p].pages,
				      (unsigned long)size->phase_pages,
				      (unsigned long)ph[p].reclaims);
			rc = 1;
			continue;
		}

		fig(f, &n, v, "shootdown_ipis", "IPIs", x1000(ph[p].ipis), cpus);
		fig(f, &n, v, "reclaimed_pages", "pages", x1000(ph[p].pages), cpus);
		fig(f, &n, v, "flush_batches", "flushes", x1000(ph[p].batches), cpus);
		/* IPIs per 1000 reclaimed pages, 3 decimals. */
		fig(f, &n, v, "ipis_per_kpage", "IPIs/1000 pages",
		    per_kpage(&ph[p]), cpus);
		fig(f, &n, v, "ipis_per_cpu_per_batch", "IPIs", worst_per_cpu_per_batch(&ph[p]), cpus);
		/* Per-CPU figures for the two main variants only. */
		for (unsigned c = 1; p < TLB_POLICY_COUNT && c < cpus &&
				     n + 4 < TP_MAX_FIGS; c++) {
			char *name = tp_names[n];

			ksnprintf(name, BENCH_FIELD_MAX, "%s@cpu%u", v, c);
			fig(f, &n, name, "ipis_received", "IPIs",
			    x1000(ph[p].cpu[c].ipis_received), 1);
		}
	}
	for (int p = 0; p < 2; p++) {
		const struct ia64_machine *m = tp.m[p];
		const char *v = p == 0 ? "old" : "new";

		fig(f, &n, v, "global_purges", "purges (ia64 model)",
		    x1000(m->cnt.global_purges), m->cfg.ncpus);
		fig(f, &n, v, "ptc_e", "ptc.e loops (ia64 model)",
		    x1000(MODEL_SUM(m, ptc_e_loops_purge)), m->cfg.ncpus);
		fig(f, &n, v, "ptc_ga", "ptc.ga (ia64 model)",
		    x1000(MODEL_SUM(m, ptc_ga)), m->cfg.ncpus);
		fig(f, &n, v, "purge_calls", "calls (ia64 model)",
		    x1000(m->cnt.purge_calls), m->cfg.ncpus);
	}
	bench_report("tlb_purge (seed 003): reclaim's TLB work, x86_64 "
		     "policies measured, ia64 purges modelled", f, n);
	batch_table(ph, nph, size);
	kprintf("tlb_purge: ia64 model (%u CPUs, %u-bit region IDs): purge "
		"calls old %lu new %lu; global purges old %lu new %lu; ptc.e "
		"loops for purges old %lu new %lu, for wrap-arounds old %lu "
		"new %lu; ptc.ga old %lu new %lu; region-ID switches new %lu; "
		"unmaps not modelled (not a job's) %lu, reported late %lu\n",
		tp.m[0]->cfg.ncpus, TP_RID_BITS,
		(unsigned long)tp.m[0]->cnt.purge_calls,
		(unsigned long)tp.m[1]->cnt.purge_calls,
		(unsigned long)tp.m[0]->cnt.global_purges,
		(unsigned long)tp.m[1]->cnt.global_purges,
		(unsigned long)MODEL_SUM(tp.m[0], ptc_e_loops_purge),
		(unsigned long)MODEL_SUM(tp.m[1], ptc_e_loops_purge),
		(unsigned long)MODEL_SUM(tp.m[0], ptc_e_loops_wrap),
		(unsigned long)MODEL_SUM(tp.m[1], ptc_e_loops_wrap),
		(unsigned long)MODEL_SUM(tp.m[0], ptc_ga),
		(unsigned long)MODEL_SUM(tp.m[1], ptc_ga),
		(unsigned long)tp.m[1]->cnt.rid_switches,
		(unsigned long)tp.model_skipped, (unsigned long)tp.model_late);
	return rc;
}

/* ---- set-up and the run -------------------------------------------- */

static bool model_setup(unsigned ncpus)
{
	for (int p = 0; p < 2; p++) {
		struct ia64_config cfg = {
			.ncpus = ncpus, .rid_bits = TP_RID_BITS,
			.policy = p == 0 ? IA64_PURGE_OLD : IA64_PURGE_NEW,
			.check_every_purge = true,
		};

		tp.m[p] = kzalloc(sizeof(*tp.m[p]));
		tp.maps[2 * p] = kzalloc(IA64_CTX_WORDS(TP_RID_BITS) * 8);
		tp.maps[2 * p + 1] = kzalloc(IA64_CTX_WORDS(TP_RID_BITS) * 8);
		if (!tp.m[p] || !tp.maps[2 * p] || !tp.maps[2 * p + 1])
			return false;
		if (!ia64_machine_init(tp.m[p], &cfg, tp.maps[2 * p],
				       tp.maps[2 * p + 1])) {
			kprintf("tlb_purge: %s\n", tp.m[p]->fault);
			return false;
		}
	}
	return true;
}

static void model_teardown(void)
{
	for (int i = 0; i < 4; i++)
		kfree(tp.maps[i]);
	kfree(tp.m[0]);
	kfree(tp.m[1]);
}

/*
 * Quick mode's CPUs: no more than the host runs at once (measured,
 * kernel/bench/bench_smp.h), at least 2. A naive shootdown to a vCPU that the
 * host has descheduled waits for that vCPU's time slice: 15 job CPUs on
 * a 2-core host made one reclaim pass last most of a minute. The other
 * CPUs stay idle in the kernel's space, so no shootdown goes to them.
 * Full mode uses every CPU, and so does a run under a cache model: it
 * paces the vCPUs by modelled time (docs/cachemodel.md), so a shootdown
 * waits for the target's modelled clock, not for a host time slice.
 */
static unsigned tp_quick_cpus(unsigned cpus)
{
	struct cpumask all;
	unsigned tenths, use;

	if (kopt.cachemodel[0])
		return cpus;
	cpumask_online(&all, false);
	tenths = bench_parallel_tenths(&all);
	use = MAX(2u, MIN(cpus, (tenths + 9) / 10));
	if (use < cpus)
		kprintf("tlb_purge: the host runs these %u CPUs like %u.%u at "
			"once (measured over %u ms): quick mode uses CPUs "
			"0..%u (runmode=full uses all)\n", smp_cpus_online(),
			tenths / 10, tenths % 10, BENCH_PARALLEL_WINDOW_MS,
			use - 1);
	return use;
}

static int tlb_purge_run(enum experiment_mode mode)
{
	const struct tp_size *size = mode == EXPERIMENT_FULL ? &tp_full :
								&tp_quick;
	static struct tp_variant ph[TP_MAX_VARIANTS];
	unsigned cpus = smp_cpus_online(), self = smp_this_cpu(), nph, cut;
	struct addr_space *me = NULL;
	uint64_t low_free, bad = 0, v, direct0, region, pages = 0;
	unsigned batch = RECLAIM_BATCH_DEFAULT;
	bool sweep = mode == EXPERIMENT_FULL;
	struct space_stats ss;
	int rc = 0, my_slot;

	bench_env_report();
	if (cpus > IA64_MAX_CPUS)
		cpus = IA64_MAX_CPUS;
	if (self != 0 || cpus < 2) {
		bench_missing("tlb_purge", NULL, NULL, BENCH_SKIPPED,
			      "needs CPU 0 and another CPU; this machine has "
			      "%u CPU%s online (run on CPU %u)", cpus,
			      cpus == 1 ? "" : "s", self);
		return 0;
	}
	if (mode == EXPERIMENT_QUICK)
		cpus = tp_quick_cpus(cpus);
	if (experiment_param("batch", &v))
		batch = (unsigned)v;
	if (experiment_param("sweep", &v))
		sweep = v != 0;
	memset(&tp, 0, sizeof(tp));
	memset(ph, 0, sizeof(ph));
	spin_lock_init(&tp.model_lock, NULL);
	tp.next_serial = 1;
	ph[0].policy = TLB_POLICY_NAIVE;
	ph[0].batch = RECLAIM_BATCH_DEFAULT;
	ph[1].policy = TLB_POLICY_BATCHED;
	ph[1].batch = batch;
	nph = TLB_POLICY_COUNT;
	for (unsigned i = 0; sweep && i < ARRAY_SIZE(tp_sweep); i++) {
		if (tp_sweep[i] == batch)
			continue;
		ph[nph].policy = TLB_POLICY_BATCHED;
		ph[nph].batch = tp_sweep[i];
		nph++;
	}
	for (unsigned p = 0; p < nph; p++) {
		if (p < TLB_POLICY_COUNT && ph[p].batch == RECLAIM_BATCH_DEFAULT)
			ksnprintf(ph[p].name, sizeof(ph[p].name), "%s",
				  tlb_policy_name(ph[p].policy));
		else
			ksnprintf(ph[p].name, sizeof(ph[p].name), "%s_b%u",
				  tlb_policy_name(ph[p].policy), ph[p].batch);
	}
	cache_setup();
	me = space_create("cat");
	if (!me || !model_setup(cpus) ||
	    space_add_anon(me, TP_UVA, 1, VM_WRITE) != VM_OK) {
		kprintf("tlb_purge: not enough memory to set up\n");
		rc = 1;
		goto out;
	}
	low_free = page_alloc_free_pages() > size->budget_pages ?
			   page_alloc_free_pages() - size->budget_pages :
			   0;
	kprintf("tlb_purge: %u CPUs: CPU 0 streams %u files of %u pages "
		"into the page cache and reclaims, %u run jobs of %u spaces "
		"x (%u anonymous + %u x %u toolchain pages shared by every "
		"space); budget %lu pages; %lu reclaimed pages per variant (at "
		"most %lu ms); batch %u pages (naive: passes of %u)%s; PCIDs "
		"%s, flush ceiling %u\n", cpus, TP_FILES, TP_FILE_PAGES,
		cpus - 1, TP_JOB_SPACES, TP_JOB_PAGES, TP_TOOL_FILES,
		TP_TOOL_PAGES, (unsigned long)size->budget_pages,
		(unsigned long)size->phase_pages,
		(unsigned long)size->run_ms, batch, RECLAIM_BATCH_DEFAULT,
		nph > TLB_POLICY_COUNT ? "; also batches of 64, 128, 256" : "",
		tlb_pcid_active() ? "on" : "off", tlb_flush_ceiling);
	tlb_switch_to(me);
	my_slot = model_create(me);
	model_switch(0, my_slot);
	*(volatile uint64_t *)TP_UVA = 1; /* cat's own buffer */
	tp.njobs = cpus - 1;
	for (unsigned i = 0; i < tp.njobs; i++) {
		tp.jobs[i].cpu = i + 1;
		if (!smp_work_post(i + 1, job_main, &tp.jobs[i])) {
			kprintf("tlb_purge: CPU %u is busy\n", i + 1);
			tp.njobs = i;
			break;
		}
	}
	space_stats(&ss);
	direct0 = ss.direct_reclaims;
	warm_up(size, low_free);
	/* A cache model counts the measured run, every CPU, per reclaimed
	 * page; the ia64 figures of both versions share that one region. */
	model_doorbell_label(TP_MODEL_LABEL);
	region = bench_region_begin_all();
	cut = run_variants(ph, nph, size, my_slot, low_free);
	for (unsigned p = 0; p < nph; p++)
		pages += ph[p].pages;
	bench_region_end(region, pages);
	model_doorbell_label("tlb_purge");
	atomic_store_release(&tp.stop, true);
	for (unsigned i = 0; i < tp.njobs; i++) {
		smp_work_wait(i + 1);
		bad += tp.jobs[i].bad_words;
		kprintf("tlb_purge: cpu %u: %lu spaces, %lu page touches\n",
			i + 1, (unsigned long)tp.jobs[i].spaces,
			(unsigned long)tp.jobs[i].touches);
	}
	closing_line(ph, size);
	tlb_switch_to(&kernel_space);
	model_switch(0, IA64_KTHREAD);
	model_exit(my_slot);
	rc |= report(ph, nph, cpus, size);
	if (cut)
		kprintf("tlb_purge: FAILED: %u of %u variants cut short by the "
			"time cap: no comparison\n", cut, nph);
	space_stats(&ss);
	/* Their IPIs would count in a variant's: none expected, the budget
	 * keeps free memory far above the allocator's watermark. */
	kprintf("tlb_purge: page faults that reclaimed mapped pages "
		"themselves: %lu\n",
		(unsigned long)(ss.direct_reclaims - direct0));
	if (bad) {
		kprintf("tlb_purge: FAILED: %lu words read back neither zero "
			"nor what their space wrote\n", (unsigned long)bad);
		rc = 1;
	}
	if (tpc.bad_pages) {
		kprintf("tlb_purge: FAILED: %lu streamed pages did not hold "
			"their file's data\n", (unsigned long)tpc.bad_pages);
		rc = 1;
	}
	for (int p = 0; p < 2; p++) {
		if (tp.m[p]->fault[0]) {
			kprintf("tlb_purge: FAILED: ia64 model (%s): %s\n",
				p ? "new" : "old", tp.m[p]->fault);
			rc = 1;
		}
	}
	for (unsigned p = 1; p < nph; p++) {
		if (worst_per_cpu_per_batch(&ph[p]) > 1000) {
			kprintf("tlb_purge: FAILED: a CPU got more than one IPI "
				"per batch in variant %s\n", ph[p].name);
			rc = 1;
		}
	}
out:
	cache_free_all();
	if (me)
		space_destroy(me);
	model_teardown();
	return rc;
}

static const struct experiment_param tp_params[] = {
	{"batch", 1, RECLAIM_BATCH_MAX,
	 "pages per flush of the batched variant (32: Linux's SWAP_CLUSTER_MAX)"},
	{"sweep", 0, 1,
	 "1: also batched variants of 64, 128 and 256 pages (full mode's "
	 "default), 0: not (quick's)"},
};

EXPERIMENT_PARAMS(tlb_purge, "tlb_purge",
		  "reclaim unmapping pages of spaces that are not running: "
		  "x86_64 shootdown IPIs naive vs batched, ia64 global purges "
		  "old vs new (modelled)",
		  "003", 45, tlb_purge_run, tp_params);
