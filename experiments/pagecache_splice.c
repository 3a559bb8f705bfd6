/*
 * pagecache_splice (seed 002, the lockless page cache): 1..N clients, one
 * per CPU, each reading a cached file in 64 KiB chunks through the page
 * cache into a pipe-like sink of 16 buffers, as splice() to /dev/null
 * does: the pipe takes a reference on each page and the sink drops it, no
 * byte is copied. So the measured work is the page cache lookup, and the
 * question is how it scales with clients for each locking variant:
 *
 *   vanilla          every lookup under the tree's read lock (rwlock)
 *   lockless         single lookups lockless, find_get_pages_contig()
 *                    under the tree's spinlock (the 2006 patch)
 *   lockless_nogang  find_get_page() for every page
 *   lockless_gang    gang lookups lockless too (what Linux kept)
 *
 * Three layouts:
 *   <variant>           all clients read the same file (one tree, one
 *                       lock: the seed's contention), client i starting
 *                       i/N of the way in, as independent readers drift
 *                       apart;
 *   <variant>_perfile   one file per client;
 *   <variant>_lockstep  the same file, every client starting at page 0
 *                       at the same instant: they take and drop the same
 *                       pages' references at the same moments (an
 *                       artifact of a synchronised start, kept visible).
 * Each point runs for a fixed time; the figure is the aggregate MiB/s over
 * the repetitions (and one line per client). Under a cache model each
 * client instead splices a fixed number of chunks: a time limit read on
 * the host's clock would make the modelled work per repetition, and so
 * the modelled elapsed time per chunk, depend on the host's load. Lock
 * statistics and RCU grace periods completed while the clients ran
 * follow each point.
 */
#include "arch/x86_64/model_doorbell.h"
#include "cachemodel/doorbell.h"
#include "kernel/bench/bench_env.h"
#include "kernel/bench/env_report.h"
#include "kernel/experiment.h"
#include "kernel/options.h"
#include "kernel/profile.h"
#include "kernel/smp_call.h"
#include "lib/bench.h"
#include "lib/bench_output.h"
#include "lib/cycles.h"
#include "lib/kprintf.h"
#include "lib/rcu.h"
#include "lib/stats.h"
#include "lib/string.h"
#include "mm/filemap.h"
#include "mm/kmalloc.h"
#include "workloads/pagefile.h"

#define SPLICE_CHUNK_BYTES (64u << 10)
#define SPLICE_CHUNK_PAGES (SPLICE_CHUNK_BYTES / PAGE_SIZE)
#define PIPE_BUFFERS 16
#define SPLICE_FILE_PAGES_QUICK 256  /* 1 MiB per file */
#define SPLICE_FILE_PAGES_FULL 4096  /* 16 MiB per file */
#define SPLICE_RUN_US_QUICK 30000    /* per repetition */
#define SPLICE_RUN_US_FULL 300000
#define SPLICE_REPS_QUICK 3
/* Chunks per client and repetition under a cache model (16 passes over
 * the quick file, 4 over the full one). */
#define SPLICE_MODEL_CHUNKS_QUICK 256
#define SPLICE_MODEL_CHUNKS_FULL 1024
#define SPLICE_REPS_FULL 5
#define USEC_PER_SEC 1000000ull
#define MIB (1ull << 20)
#define MIBS_SCALE 3 /* MiB/s with three decimals */
#define PROFILE_SPLICE_TOP 6 /* functions in a per-point profile */
#define PCACHE_LATENCY_MAX_US 10000

/* pcache.latency=: simulated device latency per page read (us). */
static unsigned pcache_latency_us;
OPTION_UINT(pcache_latency, "pagecache_splice", "pcache.latency",
	    pcache_latency_us, 0, 0, PCACHE_LATENCY_MAX_US,
	    "simulated device latency per page read (us)");

enum splice_layout { SAME_FILE, PER_FILE, LOCKSTEP, SPLICE_LAYOUTS };
static const char *const layout_suffix[SPLICE_LAYOUTS] = {
	[SAME_FILE] = "", [PER_FILE] = "_perfile", [LOCKSTEP] = "_lockstep",
};
static const char *const layout_title[SPLICE_LAYOUTS] = {
	[SAME_FILE] = "same file", [PER_FILE] = "per file",
	[LOCKSTEP] = "lock-step",
};

/* A pipe of PIPE_BUFFERS page references (Linux's pipe_inode_info). */
struct pipe {
	struct page *bufs[PIPE_BUFFERS];
	unsigned head, tail; /* free-running; head - tail buffers in use */
};

struct client {
	struct address_space *m;
	struct file_ra_state ra;
	uint64_t pos;     /* next page to read */
	uint64_t bytes;   /* spliced in the run */
	uint64_t cycles;  /* the run's duration on this client */
	uint64_t misses;  /* chunks that needed readahead */
	unsigned ncpu;    /* cpu this client runs on */
} __aligned(CACHE_LINE_SIZE);

struct run {
	struct client clients[MAX_CPUS];
	unsigned nclients;
	uint64_t run_cycles;	/* each client's run, or 0: */
	uint64_t run_chunks;	/* this many chunks each (a cache model) */
	struct smp_barrier barrier;
	uint32_t file_pages;
};

/* The sink: drop every reference the pipe holds (splice to /dev/null). */
static __attribute__((noinline)) void splice_from_pipe(struct pipe *p)
{
	while (p->tail != p->head)
		page_cache_release(p->bufs[p->tail++ % PIPE_BUFFERS]);
}

/* Move the pages into the pipe, draining it whenever it is full. */
static __attribute__((noinline)) void splice_to_pipe(struct pipe *p,
						     struct page **pages,
						     unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (p->head - p->tail == PIPE_BUFFERS)
			splice_from_pipe(p);
		p->bufs[p->head++ % PIPE_BUFFERS] = pages[i];
	}
}

/* One 64 KiB chunk at c->pos: look up, read missing pages in, splice. */
static __attribute__((noinline)) unsigned do_splice_to(struct client *c,
						       struct pipe *p,
						       uint32_t file_pages)
{
	struct page *pages[SPLICE_CHUNK_PAGES];
	unsigned want = SPLICE_CHUNK_PAGES, n;

	if (c->pos + want > file_pages)
		want = (unsigned)(file_pages - c->pos);
	n = find_get_pages_contig(c->m, c->pos, want, pages);
	if (n == 0) {
		/* A miss: readahead only then (the seed's fix). */
		page_cache_readahead(c->m, &c->ra, c->pos);
		c->misses++;
		return 0;
	}
	splice_to_pipe(p, pages, n);
	c->pos = (c->pos + n) % file_pages;
	return n;
}

static void client_main(void *arg)
{
	struct run *r = arg;
	unsigned cpu = smp_this_cpu(), slot = MAX_CPUS;
	struct pipe pipe = {0};
	uint64_t t0, bytes = 0;

	for (unsigned i = 0; i < r->nclients; i++)
		if (r->clients[i].ncpu == cpu)
			slot = i;
	kassert(slot < MAX_CPUS);
	struct client *c = &r->clients[slot];

	smp_barrier_wait(&r->barrier);
	t0 = cycles_now();
	for (uint64_t chunk = 0; r->run_cycles ?
					 cycles_now() - t0 < r->run_cycles :
					 chunk < r->run_chunks;
	     chunk++) {
		bytes += (uint64_t)do_splice_to(c, &pipe, r->file_pages) *
			 PAGE_SIZE;
		/* One work item runs the whole client: report quiescent
		 * states here, or grace periods would wait for the end. */
		rcu_quiescent_state();
	}
	splice_from_pipe(&pipe);
	c->cycles = cycles_now() - t0;
	c->bytes = bytes;
	smp_barrier_wait(&r->barrier);
}

/* The simulated device latency of a page read (pcache.latency=), in
 * cycles; paid when the files are read in, never by a cached read. */
static uint64_t device_latency;
/* Cycles the first point's warm-up took (pages read from the device). */
static uint64_t warm_cycles, warm_pages;

static struct rwlock_stats rw_stats = RWLOCK_STATS_INIT("pcache_tree");
static struct lock_stats spin_stats = LOCK_STATS_INIT("pcache_tree");

struct point {
	struct stats agg;                /* MiB/s * 10^3 over repetitions */
	struct stats per_client[MAX_CPUS];
	struct lock_stats locks;         /* the tree lock lookups take */
	uint64_t contended, acquisitions, wait_cycles, grace_periods, misses;
};

/* Set the clients of r up for one repetition: file, readahead state,
 * starting page (layout), counters; and the start barrier. */
static void clients_init(struct run *r, struct address_space *files,
			 enum splice_layout layout)
{
	for (unsigned i = 0; i < r->nclients; i++) {
		struct client *c = &r->clients[i];

		c->m = &files[layout == PER_FILE ? i : 0];
		file_ra_state_init(&c->ra);
		c->pos = layout == LOCKSTEP ?
				 0 : (uint64_t)i * r->file_pages / r->nclients;
		c->bytes = c->cycles = c->misses = 0;
	}
	smp_barrier_init(&r->barrier, r->nclients);
}

/* Warm the cache: read the whole file in. */
static void warm(struct address_space *m)
{
	struct file_ra_state ra;

	file_ra_state_init(&ra);
	for (uint64_t i = 0; i < m->size_pages; i++)
		page_cache_readahead(m, &ra, i);
}

/*
 * Set the nfiles files of a point up for variant v, file_pages pages
 * each, and read them into the cache. The first point's warm-up is
 * timed (warm_cycles, warm_pages). Returns 0, or 1 when a file could not
 * be cached whole.
 */
static int files_warm(struct address_space *files, struct pagefile *pf,
		      unsigned nfiles, enum pagecache_variant v,
		      uint32_t file_pages)
{
	uint64_t w0 = cycles_now();
	int rc = 0;

	for (unsigned f = 0; f < nfiles; f++) {
		pf[f] = (struct pagefile){.id = f + 1, .size_pages = file_pages,
					  .latency_cycles = device_latency};
		address_space_init(&files[f], v, &pagefile_store, &pf[f],
				   file_pages, &rw_stats, &spin_stats);
		warm(&files[f]);
		if (files[f].nrpages != file_pages) {
			kprintf("pagecache_splice: could not cache the file "
				"(%lu of %u pages): memory short?\n",
				(unsigned long)files[f].nrpages, file_pages);
			rc = 1;
		}
	}
	if (!warm_pages) {
		warm_cycles = cycles_now() - w0;
		for (unsigned f = 0; f < nfiles; f++)
			warm_pages += pf[f].reads;
	}
	return rc;
}

/*
 * After a point: check that the middle page of each file is still
 * cached with the right contents, then give the files' memory back.
 * Returns 0, or 1 when a page is wrong or missing.
 */
static int files_check_drop(struct address_space *files,
			    const struct pagefile *pf, unsigned nfiles,
			    enum pagecache_variant v, uint32_t file_pages)
{
	int rc = 0;

	for (unsigned f = 0; f < nfiles; f++) {
		struct page *p = find_get_page(&files[f], file_pages / 2);

		if (!p || !pagefile_page_ok(pf[f].id, file_pages / 2,
					    page_data(p))) {
			kprintf("pagecache_splice: %s: page %u of file %u is "
				"wrong or missing after the run\n",
				pagecache_variant_name(v), file_pages / 2,
				f + 1);
			rc = 1;
		}
		if (p)
			page_cache_release(p);
		truncate_inode_pages(&files[f]);
	}
	return rc;
}

/* The statistics of the tree lock variant v's lookups take, into *pt. */
static void point_lock_stats(enum pagecache_variant v, struct point *pt)
{
	pt->locks = v == PAGECACHE_VANILLA ? rw_stats.read : spin_stats;
	if (v == PAGECACHE_VANILLA) {
		pt->acquisitions = rw_stats.read.acquisitions;
		pt->contended = rw_stats.read.contended;
		pt->wait_cycles = rw_stats.read.wait_cycles;
	} else {
		pt->acquisitions = spin_stats.acquisitions;
		pt->contended = spin_stats.contended;
		pt->wait_cycles = spin_stats.wait_cycles;
	}
}

/*
 * One point: warm the file(s), run the clients for reps repetitions,
 * check and drop the cache. With profile, the profiler (running) is
 * restarted after the warm-up and stopped after the clients, so that its
 * samples cover only the clients' runs.
 */
static int run_point(enum pagecache_variant v, enum splice_layout layout,
		     unsigned nclients, enum experiment_mode mode,
		     struct point *pt, bool profile)
{
	static struct run r;
	static struct address_space files[MAX_CPUS];
	static struct pagefile pf[MAX_CPUS];
	static uint64_t samples[SPLICE_REPS_FULL], per[MAX_CPUS][SPLICE_REPS_FULL];
	unsigned reps = mode == EXPERIMENT_FULL ? SPLICE_REPS_FULL :
						  SPLICE_REPS_QUICK;
	bool per_file = layout == PER_FILE;
	unsigned nfiles = per_file ? nclients : 1;
	struct cpumask mask;
	struct rcu_stats rs0, rs1;
	char label[DB_LABEL_MAX];
	int rc = 0;

	memset(&r, 0, sizeof(r));
	r.file_pages = mode == EXPERIMENT_FULL ? SPLICE_FILE_PAGES_FULL :
						 SPLICE_FILE_PAGES_QUICK;
	r.run_cycles = bench_kernel_clock()->hz / USEC_PER_SEC *
		       (mode == EXPERIMENT_FULL ? SPLICE_RUN_US_FULL :
						  SPLICE_RUN_US_QUICK);
	if (kopt.cachemodel[0]) {
		r.run_chunks = mode == EXPERIMENT_FULL ?
				       SPLICE_MODEL_CHUNKS_FULL :
				       SPLICE_MODEL_CHUNKS_QUICK;
		r.run_cycles = 0;
	}
	/* Where this point's pages and tree nodes land decides how they
	 * collide in the caches. The point before freed its tree nodes
	 * after a grace period (mm/radix_tree.c), at a moment set by when
	 * the other CPUs passed quiescent states, so wait for those frees
	 * before allocating: every point then starts from the same
	 * allocator state (docs/pagecache.md, "Placement"). */
	rcu_barrier();
	rc = files_warm(files, pf, nfiles, v, r.file_pages);
	cpumask_clear(&mask);
	r.nclients = 0;
	for (unsigned cpu = 0; cpu < MAX_CPUS && r.nclients < nclients; cpu++)
		if (smp_cpu_online(cpu)) {
			cpumask_set(&mask, cpu);
			r.clients[r.nclients++].ncpu = cpu;
		}
	/* A cache model's caches are cold for the clients' lines (the
	 * warm-up read the file on this CPU): one unmeasured repetition
	 * first, as the harness's warm-up runs. */
	if (kopt.cachemodel[0] && !rc) {
		clients_init(&r, files, layout);
		model_doorbell_align();
		smp_run_on(&mask, client_main, &r);
	}
	/* Count only the clients' lock traffic, not the warm-up's inserts. */
	lock_stats_reset(&rw_stats.read);
	lock_stats_reset(&rw_stats.write);
	lock_stats_reset(&spin_stats);
	rcu_stats_get(&rs0);
	if (profile) {
		profile_stop();
		profile_start(PROFILE_HZ);
	}
	/* A cache model counts each repetition, every client's CPU, per
	 * chunk read (the figure pagecache_splice_run() prints). */
	ksnprintf(label, sizeof(label), "pagecache_splice|%s%s|throughput|%u",
		  pagecache_variant_name(v), layout_suffix[layout],
		  SPLICE_CHUNK_BYTES);
	for (unsigned rep = 0; rep < reps && !rc; rep++) {
		uint64_t bytes = 0, cyc = 0, region;

		clients_init(&r, files, layout);
		model_doorbell_label(label);
		/* The warm-up's device reads wait on the TSC (host time under
		 * QEMU): a model starts each repetition's clock over. */
		model_doorbell_align();
		region = bench_region_begin_all();
		smp_run_on(&mask, client_main, &r);
		for (unsigned i = 0; i < nclients; i++) {
			struct client *c = &r.clients[i];

			bytes += c->bytes;
			cyc = MAX(cyc, c->cycles);
			per[i][rep] = stats_muldiv(c->bytes,
						   bench_kernel_clock()->hz *
							   stats_pow10(MIBS_SCALE),
						   MAX(c->cycles, 1) * MIB);
			pt->misses += c->misses;
		}
		samples[rep] = stats_muldiv(bytes, bench_kernel_clock()->hz *
						    stats_pow10(MIBS_SCALE),
					    MAX(cyc, 1) * MIB);
		bench_region_end(region, bytes / SPLICE_CHUNK_BYTES);
		model_doorbell_label("pagecache_splice");
	}
	if (profile)
		profile_stop();
	rcu_stats_get(&rs1);
	if (!rc) {
		stats_compute(&pt->agg, samples, reps, samples);
		for (unsigned i = 0; i < nclients; i++)
			stats_compute(&pt->per_client[i], per[i], reps, per[i]);
	}
	pt->grace_periods = rs1.gp_completed - rs0.gp_completed;
	point_lock_stats(v, pt);
	if (files_check_drop(files, pf, nfiles, v, r.file_pages))
		rc = 1;
	return rc;
}

#define LOOKUP_COST_ROUNDS_QUICK 2000
#define LOOKUP_COST_ROUNDS_FULL 20000
#define LOOKUP_COST_BLOCKS 3 /* the fastest block counts: fewest interruptions */

enum lookup_kind { LOOKUP_GANG, LOOKUP_SINGLE, LOOKUP_REFS, LOOKUP_KINDS };

/*
 * One block of rounds chunks of 16 pages from *pos, by kind: one gang
 * lookup, 16 find_get_page() calls, or (the floor both pay) a reference
 * taken and dropped on each of 16 pages already found (refs). Every
 * reference is dropped. Returns the pages handled.
 */
static uint64_t lookup_block(struct address_space *m, enum lookup_kind kind,
			     unsigned rounds, uint64_t *pos, uint64_t size,
			     struct page **held)
{
	struct page *pages[SPLICE_CHUNK_PAGES];
	uint64_t n = 0;

	for (unsigned r = 0; r < rounds; r++) {
		unsigned got = 0;

		if (kind == LOOKUP_GANG) {
			got = find_get_pages_contig(m, *pos, SPLICE_CHUNK_PAGES,
						    pages);
		} else if (kind == LOOKUP_SINGLE) {
			for (unsigned i = 0; i < SPLICE_CHUNK_PAGES; i++)
				if ((pages[got] = find_get_page(m, *pos + i)))
					got++;
		} else {
			for (unsigned i = 0; i < SPLICE_CHUNK_PAGES; i++)
				if (get_page_unless_zero(held[i]))
					pages[got++] = held[i];
		}
		for (unsigned i = 0; i < got; i++)
			page_cache_release(pages[i]);
		n += got;
		*pos = (*pos + SPLICE_CHUNK_PAGES) % size;
	}
	return n;
}

/*
 * Cycles per page of one gang lookup of 16 pages, of 16 single lookups
 * and of the floor both pay (the reference each returned page carries,
 * taken and dropped), on one CPU and a cached lockless_gang file: the
 * fastest of LOOKUP_COST_BLOCKS blocks each, scaled by 10^3, into
 * cost[LOOKUP_KINDS]. Returns 0, or 1 when a lookup missed a page.
 */
static int lookup_cost(enum experiment_mode mode, uint64_t *cost)
{
	static struct address_space m;
	struct pagefile f = {.id = 99, .size_pages = SPLICE_FILE_PAGES_QUICK};
	unsigned rounds = mode == EXPERIMENT_FULL ? LOOKUP_COST_ROUNDS_FULL :
						    LOOKUP_COST_ROUNDS_QUICK;
	struct page *held[SPLICE_CHUNK_PAGES];
	uint64_t pos = 0, expected = (uint64_t)rounds * SPLICE_CHUNK_PAGES;
	int rc = 0;

	address_space_init(&m, PAGECACHE_LOCKLESS_GANG, &pagefile_store, &f,
			   f.size_pages, NULL, NULL);
	warm(&m);
	if (find_get_pages_contig(&m, 0, SPLICE_CHUNK_PAGES, held) !=
	    SPLICE_CHUNK_PAGES) {
		kprintf("pagecache_splice: lookup cost: the file is not "
			"cached\n");
		truncate_inode_pages(&m);
		return 1;
	}
	for (unsigned k = 0; k < LOOKUP_KINDS; k++) {
		cost[k] = UINT64_MAX;
		for (unsigned b = 0; b < LOOKUP_COST_BLOCKS; b++) {
			uint64_t t0 = cycles_now();
			uint64_t n = lookup_block(&m, k, rounds, &pos,
						  f.size_pages, held);
			uint64_t c = stats_muldiv(cycles_now() - t0,
						  stats_pow10(3), MAX(n, 1));

			cost[k] = MIN(cost[k], c);
			if (n != expected) {
				kprintf("pagecache_splice: lookup cost: %lu "
					"pages found, expected %lu\n",
					(unsigned long)n,
					(unsigned long)expected);
				rc = 1;
			}
		}
	}
	for (unsigned i = 0; i < SPLICE_CHUNK_PAGES; i++)
		page_cache_release(held[i]);
	truncate_inode_pages(&m);
	return rc;
}

/* Print a ratio a/b (both scaled alike) with two decimals. */
static void print_ratio(const char *what, uint64_t a, uint64_t b)
{
	uint64_t r = b ? stats_muldiv(a, 100, b) : 0;

	kprintf("pagecache_splice: %s: %lu.%02lu\n", what,
		(unsigned long)(r / 100), (unsigned long)(r % 100));
}

/* The median of the figure named variant at clients, or 0. */
static uint64_t fig_median(const struct bench_figure *figs, unsigned nfig,
			   const char *variant, unsigned clients)
{
	for (unsigned i = 0; i < nfig; i++)
		if (figs[i].clients == clients &&
		    !strcmp(figs[i].variant, variant))
			return figs[i].st.median;
	return 0;
}

/* Aggregate 2 clients / 1 client of every variant in every layout. */
static void print_scaling(const struct bench_figure *figs, unsigned nfig)
{
	char name[48];

	kprintf("pagecache_splice: aggregate MiB/s, 2 clients / 1 client "
		"(target for lockless_gang >= 1.8):\n");
	kprintf("  %-16s", "variant");
	for (unsigned l = 0; l < SPLICE_LAYOUTS; l++)
		kprintf(" %10s", layout_title[l]);
	kprintf("\n");
	for (unsigned v = 0; v < PAGECACHE_VARIANTS; v++) {
		kprintf("  %-16s", pagecache_variant_name(v));
		for (unsigned l = 0; l < SPLICE_LAYOUTS; l++) {
			uint64_t one, two, r;

			ksnprintf(name, sizeof(name), "%s%s",
				  pagecache_variant_name(v), layout_suffix[l]);
			one = fig_median(figs, nfig, name, 1);
			two = fig_median(figs, nfig, name, 2);
			r = one ? stats_muldiv(two, 100, one) : 0;
			kprintf("       %lu.%02lu", (unsigned long)(r / 100),
				(unsigned long)(r % 100));
		}
		kprintf("\n");
	}
}

/*
 * Print one point measured (variant v, layout, n clients): its table
 * row, its figure (kept in *fig, named name), one figure per client and
 * the tree lock's statistics.
 */
static void print_point(enum pagecache_variant v, unsigned layout,
			unsigned n, const struct point *pt,
			struct bench_figure *fig, char *name, size_t name_size)
{
	struct lock_stats ls = {0};
	static char lname[LOCK_NAME_MAX];

	ksnprintf(name, name_size, "%s%s", pagecache_variant_name(v),
		  layout_suffix[layout]);
	kprintf("%-22s %7u %8lu.%03lu %12lu %12lu %14lu %6lu\n", name, n,
		(unsigned long)(pt->agg.median / 1000),
		(unsigned long)(pt->agg.median % 1000),
		(unsigned long)pt->acquisitions, (unsigned long)pt->contended,
		(unsigned long)pt->wait_cycles,
		(unsigned long)pt->grace_periods);
	bench_figure_init(fig, "pagecache_splice", name, "throughput",
			  "MiB/s", MIBS_SCALE, &pt->agg);
	fig->cpus = n;
	fig->clients = n;
	fig->size = SPLICE_CHUNK_BYTES;
	bench_result_print(fig);
	for (unsigned i = 0; i < n; i++) {
		struct bench_figure f;
		static char cname[MAX_CPUS][56];

		ksnprintf(cname[i], sizeof(cname[0]), "%s/client%u", name, i);
		bench_figure_init(&f, "pagecache_splice", cname[i],
				  "client_throughput", "MiB/s", MIBS_SCALE,
				  &pt->per_client[i]);
		f.clients = n;
		f.size = SPLICE_CHUNK_BYTES;
		bench_result_print(&f);
	}
	ksnprintf(lname, sizeof(lname), "pcache_tree.%s.c%u", name, n);
	ls = pt->locks;
	ls.name = lname;
	lock_stats_print_mode(&ls, v == PAGECACHE_VANILLA ? "read" : "spin");
}

/* The figures the design is judged by, printed, not asserted: scaling
 * from 1 to 2 clients, and the variants against lockless_gang. */
static void print_judged(const struct bench_figure *figs, unsigned nfig)
{
	uint64_t gang1 = 0, gang2 = 0, van2 = 0, ll2 = 0;

	for (unsigned i = 0; i < nfig; i++) {
		if (figs[i].clients == 1 &&
		    !strcmp(figs[i].variant, "lockless_gang"))
			gang1 = figs[i].st.median;
		if (figs[i].clients == 2 &&
		    !strcmp(figs[i].variant, "lockless_gang"))
			gang2 = figs[i].st.median;
		if (figs[i].clients == 2 && !strcmp(figs[i].variant, "vanilla"))
			van2 = figs[i].st.median;
		if (figs[i].clients == 2 && !strcmp(figs[i].variant, "lockless"))
			ll2 = figs[i].st.median;
	}
	if (!gang2)
		return;
	print_scaling(figs, nfig);
	print_ratio("lockless_gang aggregate, 2 clients / 1 client (same "
		    "file; target >= 1.8)", gang2, gang1);
	print_ratio("vanilla / lockless_gang at 2 clients", van2, gang2);
	print_ratio("lockless / lockless_gang at 2 clients", ll2, gang2);
}

/* Measure and report the lookup costs (lookup_cost()) as LOOKUP_KINDS
 * figures into figs. Returns 0, or 1 when a lookup missed a page. */
static int report_lookup_cost(enum experiment_mode mode,
			      struct bench_figure *figs)
{
	static const char *const kind_names[LOOKUP_KINDS] = {
		[LOOKUP_GANG] = "gang16", [LOOKUP_SINGLE] = "single16",
		[LOOKUP_REFS] = "refs16",
	};
	static struct stats st[LOOKUP_KINDS];
	uint64_t cost[LOOKUP_KINDS], scratch;

	if (lookup_cost(mode, cost))
		return 1;
	for (unsigned k = 0; k < LOOKUP_KINDS; k++) {
		stats_compute(&st[k], &cost[k], 1, &scratch);
		bench_figure_init(&figs[k], "pagecache_splice", kind_names[k],
				  "lookup_cost", "cycles/page", 3, &st[k]);
	}
	bench_report("page cache lookups, one CPU, cached file: one gang "
		     "lookup of 16 pages vs 16 find_get_page() calls vs the "
		     "reference alone (taken and dropped), fastest block",
		     figs, LOOKUP_KINDS);
	print_ratio("16 single lookups / one gang of 16, cycles per page "
		    "(target >= 3)", cost[LOOKUP_SINGLE], cost[LOOKUP_GANG]);
	print_ratio("16 single lookups / the reference alone (the best any "
		    "gang could reach)", cost[LOOKUP_SINGLE], cost[LOOKUP_REFS]);
	return 0;
}

static int pagecache_splice_run(enum experiment_mode mode)
{
	static struct bench_figure figs[SPLICE_LAYOUTS * PAGECACHE_VARIANTS * 4 +
					LOOKUP_KINDS];
	static char names[ARRAY_SIZE(figs)][48];
	static struct point pt;
	unsigned ncpu = smp_cpus_online(), max_clients = ncpu, nfig = 0;
	int rc = 0;

	bench_env_report();
	device_latency = stats_muldiv(bench_kernel_clock()->hz,
				      pcache_latency_us, USEC_PER_SEC);
	warm_cycles = warm_pages = 0;
	if (max_clients > 4)
		max_clients = 4; /* the seed's graph stops at 4 */
	kprintf("pagecache_splice: 64 KiB chunks into a %u-buffer pipe, %u "
		"clients at most, %s files\n", PIPE_BUFFERS, max_clients,
		mode == EXPERIMENT_FULL ? "16 MiB" : "1 MiB");
	kprintf("%-22s %7s %12s %12s %12s %14s %6s\n", "variant", "clients",
		"MiB/s", "lock acq", "contended", "wait cycles", "GPs");
	/* Under a model the clients run one at a time, the turn passing by
	 * modelled clock: in the lockstep layout they take the same lines
	 * within a few cycles of each other, and concurrent pacing left
	 * their order inside a quantum, and so the figure, to the host
	 * (docs/cachemodel.md, "Serial pacing"). */
	if (kopt.cachemodel[0])
		model_doorbell_serial(true);
	for (unsigned layout = 0; layout < SPLICE_LAYOUTS; layout++) {
		for (unsigned v = 0; v < PAGECACHE_VARIANTS; v++) {
			for (unsigned n = 1; n <= max_clients; n++) {
				/* With profile=1, the most clients on one
				 * file get a profile of their own, as in the
				 * seed's post. */
				bool own_profile = profile_active() &&
						   layout == 0 &&
						   n == max_clients;

				memset(&pt, 0, sizeof(pt));
				if (run_point(v, layout, n, mode, &pt,
					      own_profile)) {
					rc = 1;
					if (own_profile)
						profile_start(PROFILE_HZ);
					continue;
				}
				if (own_profile) {
					static char title[64];

					ksnprintf(title, sizeof(title),
						  "pagecache_splice %s, %u "
						  "clients, one file",
						  pagecache_variant_name(v), n);
					profile_report(title, PROFILE_SPLICE_TOP);
					profile_start(PROFILE_HZ);
				}
				print_point(v, layout, n, &pt, &figs[nfig],
					    names[nfig], sizeof(names[0]));
				nfig++;
			}
		}
	}
	if (kopt.cachemodel[0])
		model_doorbell_serial(false);
	kprintf("pagecache_splice: device latency %u us per page read "
		"(pcache.latency=): the first point read %lu pages from the "
		"device in %lu us; cached reads never wait for it\n",
		pcache_latency_us, (unsigned long)warm_pages,
		(unsigned long)stats_muldiv(warm_cycles, USEC_PER_SEC,
					    bench_kernel_clock()->hz));
	print_judged(figs, nfig);
	if (report_lookup_cost(mode, &figs[nfig]))
		rc = 1;
	if (bench_env_is_tcg())
		kprintf("pagecache_splice: NOTE: QEMU TCG runs each vCPU as a "
			"host thread and models no guest caches: lock "
			"contention and the cost of shared lines come from the "
			"host, scaled by emulation. Compare variants with each "
			"other, not with the seed's absolute MiB/s.\n");
	return rc;
}

/* Early in run=default, right after the memory-type probe: where its
 * files and tree nodes land decides its modelled figures, and an
 * experiment on several CPUs run before it (tbench, kbuild) would leave
 * the allocators in a state that follows the host's order under a model
 * (docs/cachemodel.md, "Serial pacing"). After the probe alone it starts
 * from the same state in every boot. */
#define PAGECACHE_SPLICE_ORDER 15

EXPERIMENT(pagecache_splice, "pagecache_splice",
	   "splice-style page cache reads by 1..N clients: rwlock vs "
	   "lockless radix tree, with and without gang lookup",
	   "002", PAGECACHE_SPLICE_ORDER, pagecache_splice_run);
