/*
 * Host benchmark of the page cache variants (not a test: built without
 * sanitizers, at -O2, by `make host-bench`): 1..N threads, one per CPU,
 * each reading a cached file in 16-page chunks the splice way
 * (find_get_pages_contig(), then drop the references), for a fixed time.
 * Three layouts, each variant in each:
 *
 *   <variant>           one file, client i starts i/N of the way in
 *                       (staggered: independent readers drift apart)
 *   <variant>_lockstep  one file, every client starts at page 0 at the
 *                       same instant, so they touch the same pages' counts
 *                       at the same moments (an artifact of the start)
 *   <variant>_perfile   one file per client: nothing shared but code
 *
 * plus "control", a loop of arithmetic that shares nothing: its N/1
 * ratio is the scaling the machine gave this run (the ceiling for the
 * others; on a shared machine it falls below N); and "refs only", the
 * reference each returned page carries taken and dropped with no lookup
 * at all, on the pages of one file all threads share (staggered) or on
 * each thread's own file: what sharing the pages' counts alone costs. For each point it prints
 * pages per second of wall time, and the same figure counting each
 * thread's own CPU time (CLOCK_THREAD_CPUTIME_ID) with "overlap", the
 * threads' CPU time over the wall time: near N when the threads really
 * ran side by side; and "conc", the pages per thousand TSC cycles summed
 * over the threads, each thread's median over the batches (1024 pages;
 * all repetitions pooled) during which it was never descheduled (its CPU
 * time covers at least 9/10 of the batch's wall time) and every other
 * thread finished a batch too, so on another CPU: the rate while
 * the threads really ran at the same time, so contention counts in full
 * however the machine's load interleaved them (with one thread, every
 * batch counts). Then the N/1 ratios, and the cycles per page of a
 * 16-page gang lookup against 16 single lookups on one thread, with the
 * floor both pay (one reference taken and dropped per page).
 *
 *   build/host/bench_pagecache [max_threads] [ms_per_point] [reps] [only]
 *
 * With only, just the variants whose name (with its layout suffix) is
 * exactly only run, besides the control; the others are left out.
 *
 * Each point is the median of reps runs. Host threads are scheduled by
 * the host's kernel: on a machine shared with other work the wall-clock
 * figures are those of the CPUs it got; the CPU-time ones are not.
 */
// HOST_SRCS: mm/filemap.c mm/radix_tree.c mm/kmalloc.c mm/kmalloc_large.c mm/kmalloc_stats.c lib/rcu.c lib/spinlock.c lib/rwlock.c tests/host/host_cycles.c tests/host/host_cpu.c
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/cycles.h"
#include "lib/rcu.h"
#include "mm/filemap.h"
#include "mm/kmalloc.h"
#include "tests/host/host_mm.h"
#include "tests/host/host_thread_group.h"
#include "tests/host/host_threads.h"

#define FILE_PAGES 1024 /* 4 MiB, all cached */
#define CHUNK_PAGES 16
#define BATCH_CHUNKS 64 /* chunks between clock reads: a batch */
#define BATCH_PAGES (BATCH_CHUNKS * CHUNK_PAGES)
#define MAX_THREADS 16
#define MAX_REPS 15
#define DEFAULT_THREADS 4
#define DEFAULT_MS 300
#define DEFAULT_REPS 3
#define COST_ROUNDS 20000
#define COST_BLOCKS 15 /* the cost is the fastest block: preemption-free */
#define CONTROL_STEPS 16384 /* a batch about as long as a splice batch */
#define MAX_BATCHES (1u << 18) /* per thread and run: batch timings kept */
#define MIN_CONC_BATCHES 64    /* fewer concurrent batches: no figure */
#define KCYCLES 1000.0
#define RAN_NUM 9 /* a batch ran undisturbed: CPU time >= 9/10 of wall */
#define RAN_DEN 10
#define NSEC_PER_MSEC 1000000ull
#define LCG_MUL 6364136223846793005ull
#define LCG_ADD 1442695040888963407ull

enum layout { SAME_STAGGERED, SAME_LOCKSTEP, PER_FILE, LAYOUTS };
static const char *const layout_suffix[LAYOUTS] = {"", "_lockstep",
						   "_perfile"};

/* Files: [variant][0] is the shared one, [variant][1 + i] client i's. */
#define FILES_PER_VARIANT (1 + MAX_THREADS)
static struct address_space (*files)[FILES_PER_VARIANT];
static unsigned nfiles; /* per variant: 1 + max_threads */

/* Frames: one cached copy of each file. */
static struct page *descs;
static uint8_t (*data)[PAGE_SIZE];
static unsigned next_frame, nr_frames;

static struct page *frame_alloc(void)
{
	struct page *p;

	if (next_frame == nr_frames)
		return NULL;
	p = &descs[next_frame++];
	set_page_count(p, 1);
	return p;
}

static void frame_free(struct page *p __attribute__((unused)))
{
	/* Pages stay cached for the whole run: nothing is freed early. */
}

static void *frame_address(struct page *p)
{
	return data[p - descs];
}

static const struct page_frame_ops frames = {
	.alloc = frame_alloc, .free = frame_free, .address = frame_address,
};

static bool store_read(void *file __attribute__((unused)), uint64_t index,
		       void *buf)
{
	memset(buf, (int)(index & 0xff), PAGE_SIZE);
	return true;
}

static const struct backing_store store = {.read_page = store_read};

static pthread_barrier_t start;

/* What a worker does: v >= 0 of run_once() is WORK_SPLICE. */
enum work { WORK_SPLICE, WORK_CONTROL, WORK_REFS };
#define RUN_CONTROL (-1)
#define RUN_REFS (-2)

struct worker {
	unsigned cpu, nthreads;
	enum work work;
	struct page **refpages; /* WORK_REFS: the file's pages */
	struct address_space *m;
	uint64_t pos, run_ns;
	uint64_t pages, ns, cpu_ns; /* results */
	uint32_t *conc_cycles;      /* cycles of each concurrent batch */
	uint64_t nconc;
	/* Batches done so far: the others read it once per batch of theirs. */
	uint64_t progress __attribute__((aligned(64)));
} __attribute__((aligned(64)));

static struct worker workers[MAX_THREADS];
BUILD_ASSERT(MAX_THREADS <= HOST_THREAD_GROUP_MAX);

/* Sum of the other workers' progress counters, and whether every one of
 * them moved since *seen (updated). */
static bool others_moved(const struct worker *w, uint64_t *seen)
{
	bool all = true;

	for (unsigned i = 0; i < w->nthreads; i++) {
		uint64_t p;

		if (&workers[i] == w)
			continue;
		p = atomic_load_relaxed(&workers[i].progress);
		if (p == seen[i])
			all = false;
		seen[i] = p;
	}
	return all;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * HOST_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* What the clients do between clock reads. */
static uint64_t splice_chunks(struct worker *w, uint64_t *pos)
{
	struct page *pages[CHUNK_PAGES];
	uint64_t done = 0;

	for (int k = 0; k < BATCH_CHUNKS; k++) {
		unsigned n = find_get_pages_contig(w->m, *pos, CHUNK_PAGES,
						   pages);

		for (unsigned i = 0; i < n; i++)
			page_cache_release(pages[i]);
		done += n;
		*pos = (*pos + CHUNK_PAGES) % FILE_PAGES;
	}
	return done;
}

/* References only: take and drop one on each page of 64 chunks. */
static uint64_t refs_chunks(struct worker *w, uint64_t *pos)
{
	for (int k = 0; k < BATCH_CHUNKS; k++) {
		struct page **p = w->refpages + *pos;

		for (unsigned i = 0; i < CHUNK_PAGES; i++)
			if (!get_page_unless_zero(p[i]))
				abort(); /* cached pages are never free */
		for (unsigned i = 0; i < CHUNK_PAGES; i++)
			page_cache_release(p[i]);
		*pos = (*pos + CHUNK_PAGES) % FILE_PAGES;
	}
	return BATCH_PAGES;
}

/* The control: private arithmetic, counted in the same units. */
static uint64_t control_steps(uint64_t *x)
{
	for (int k = 0; k < CONTROL_STEPS; k++)
		*x = *x * LCG_MUL + LCG_ADD;
	return BATCH_PAGES;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t pos = w->pos, x = w->cpu, t0, c0, pages = 0;
	uint64_t seen[MAX_THREADS] = {0};

	host_set_thread_cpu(w->cpu);
	rcu_idle_exit();
	pthread_barrier_wait(&start);
	t0 = host_now_ns();
	c0 = thread_cpu_ns();
	others_moved(w, seen);
	while (host_now_ns() - t0 < w->run_ns) {
		uint64_t n0 = host_now_ns(), cpu0 = thread_cpu_ns();
		uint64_t b0 = cycles_now(), done;
		bool ran, moved;

		if (w->work == WORK_CONTROL) {
			done = control_steps(&x);
		} else if (w->work == WORK_REFS) {
			done = refs_chunks(w, &pos);
		} else {
			done = splice_chunks(w, &pos);
			rcu_quiescent_state();
		}
		pages += done;
		atomic_store_relaxed(&w->progress, w->progress + 1);
		/* This thread ran the whole batch, and every other thread
		 * finished one meanwhile: they ran side by side. */
		moved = others_moved(w, seen);
		ran = (thread_cpu_ns() - cpu0) * RAN_DEN >=
		      (host_now_ns() - n0) * RAN_NUM;
		if (moved && ran && done == BATCH_PAGES &&
		    w->nconc < MAX_BATCHES)
			w->conc_cycles[w->nconc++] =
				(uint32_t)MIN(cycles_now() - b0, UINT32_MAX);
	}
	w->cpu_ns = thread_cpu_ns() - c0;
	w->ns = host_now_ns() - t0;
	w->pages = pages;
	__asm__ volatile("" : : "r"(x)); /* the control's work is not dead */
	rcu_idle_enter();
	return NULL;
}

struct point {
	double wall_rate; /* pages per second of wall time, all threads */
	double cpu_rate;  /* sum of each thread's pages per CPU second */
	double overlap;   /* threads' CPU time / wall time */
	double conc_rate; /* pages per kcycle while all ran; 0: too few */
};

/* Concurrent batch timings of each thread, pooled over repetitions. */
static uint32_t *conc[MAX_THREADS];
static uint64_t nconc[MAX_THREADS];

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The pages of each file of the lockless_gang variant, in order. */
static struct page **file_pages;

/* One run of n threads: v is a variant, RUN_CONTROL or RUN_REFS. */
static struct point run_once(int v, enum layout l, unsigned n, uint64_t run_ns)
{
	struct worker *w = workers;
	uint64_t pages = 0, ns = 0, cpu_ns = 0;
	struct point p = {0};
	struct host_thread_group g;

	pthread_barrier_init(&start, NULL, n);
	for (unsigned i = 0; i < n; i++) {
		if (!conc[i] && !(conc[i] = malloc(MAX_BATCHES *
						   sizeof(uint32_t)))) {
			fprintf(stderr, "bench_pagecache: out of memory\n");
			exit(1);
		}
		w[i] = (struct worker){.cpu = i + 1, .nthreads = n,
				       .run_ns = run_ns,
				       .work = v == RUN_CONTROL ? WORK_CONTROL :
					       v == RUN_REFS ? WORK_REFS :
							       WORK_SPLICE,
				       .conc_cycles = conc[i],
				       .nconc = nconc[i]};
		if (v >= 0)
			w[i].m = &files[v][l == PER_FILE ? 1 + i : 0];
		if (v >= 0 || v == RUN_REFS)
			w[i].pos = l == SAME_STAGGERED ?
					   (uint64_t)i * FILE_PAGES / n : 0;
		if (v == RUN_REFS)
			w[i].refpages = file_pages +
					(size_t)(l == PER_FILE ? 1 + i : 0) *
						FILE_PAGES;
	}
	host_thread_group_start(&g, n, worker_main, w, sizeof(w[0]));
	host_thread_group_join(&g);
	for (unsigned i = 0; i < n; i++) {
		pages += w[i].pages;
		ns = w[i].ns > ns ? w[i].ns : ns;
		cpu_ns += w[i].cpu_ns;
		if (w[i].cpu_ns)
			p.cpu_rate += (double)w[i].pages * HOST_NSEC_PER_SEC /
				      (double)w[i].cpu_ns;
		nconc[i] = w[i].nconc;
	}
	pthread_barrier_destroy(&start);
	p.wall_rate = (double)pages * HOST_NSEC_PER_SEC / (double)ns;
	p.overlap = (double)cpu_ns / (double)ns;
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of reps runs, field by field. */
static struct point run_point(int v, enum layout l, unsigned n,
			      uint64_t run_ns, unsigned reps)
{
	double wall[MAX_REPS], cpu[MAX_REPS], ov[MAX_REPS], conc_rate = 0;

	memset(nconc, 0, sizeof(nconc));
	for (unsigned r = 0; r < reps; r++) {
		struct point p = run_once(v, l, n, run_ns);

		wall[r] = p.wall_rate;
		cpu[r] = p.cpu_rate;
		ov[r] = p.overlap;
	}
	qsort(wall, reps, sizeof(double), cmp_double);
	qsort(cpu, reps, sizeof(double), cmp_double);
	qsort(ov, reps, sizeof(double), cmp_double);
	for (unsigned i = 0; i < n; i++) {
		if (nconc[i] < MIN_CONC_BATCHES) {
			conc_rate = 0; /* too few batches ran side by side */
			break;
		}
		qsort(conc[i], nconc[i], sizeof(uint32_t), cmp_u32);
		conc_rate += BATCH_PAGES * KCYCLES / conc[i][nconc[i] / 2];
	}
	return (struct point){wall[reps / 2], cpu[reps / 2], ov[reps / 2],
			      conc_rate};
}

static void print_point(const char *name, unsigned n, struct point p)
{
	printf("%-26s %7u %14.0f %12.1f %14.0f %8.2f %9.1f\n", name, n,
	       p.wall_rate, p.wall_rate * PAGE_SIZE / (1 << 20), p.cpu_rate,
	       p.overlap, p.conc_rate);
}

/* Cycles per page of the fastest of COST_BLOCKS blocks of body. */
typedef void (*cost_body)(struct address_space *m, uint64_t pos,
			  struct page **pages);

static void gang16(struct address_space *m, uint64_t pos, struct page **pages)
{
	unsigned n = find_get_pages_contig(m, pos, CHUNK_PAGES, pages);

	for (unsigned i = 0; i < n; i++)
		page_cache_release(pages[i]);
}

static void single16(struct address_space *m, uint64_t pos,
		     struct page **pages __attribute__((unused)))
{
	for (unsigned i = 0; i < CHUNK_PAGES; i++) {
		struct page *p = find_get_page(m, pos + i);

		if (p)
			page_cache_release(p);
	}
}

/* The floor: the reference each returned page carries, taken and
 * dropped, on pages already found. */
static void refs16(struct address_space *m __attribute__((unused)),
		   uint64_t pos, struct page **pages)
{
	struct page **p = pages + pos;

	for (unsigned i = 0; i < CHUNK_PAGES; i++)
		if (!get_page_unless_zero(p[i]))
			abort();
	for (unsigned i = 0; i < CHUNK_PAGES; i++)
		page_cache_release(p[i]);
}

static double cost(cost_body body, struct address_space *m,
		   struct page **pages)
{
	double best = 0;

	for (unsigned b = 0; b < COST_BLOCKS; b++) {
		uint64_t t0 = cycles_now();

		for (unsigned r = 0; r < COST_ROUNDS; r++)
			body(m, (uint64_t)r * CHUNK_PAGES % FILE_PAGES, pages);
		double c = (double)(cycles_now() - t0) /
			   (COST_ROUNDS * CHUNK_PAGES);
		if (b == 0 || c < best)
			best = c;
	}
	return best;
}

int main(int argc, char **argv)
{
	unsigned maxt = argc > 1 ? (unsigned)atoi(argv[1]) : DEFAULT_THREADS;
	uint64_t ms = argc > 2 ? (uint64_t)atoi(argv[2]) : DEFAULT_MS;
	unsigned reps = argc > 3 ? (unsigned)atoi(argv[3]) : DEFAULT_REPS;
	const char *only = argc > 4 ? argv[4] : NULL;
	static struct point pt[PAGECACHE_VARIANTS][LAYOUTS][MAX_THREADS + 1];
	static struct point ctl[MAX_THREADS + 1];
	static struct point refs[2][MAX_THREADS + 1]; /* shared, own */
	static const char *const refs_name[2] = {"refs only, one file",
						 "refs only, per file"};
	static struct page *all[FILE_PAGES + CHUNK_PAGES];
	static struct page *pages[CHUNK_PAGES];
	char name[64];

	if (maxt < 1 || maxt > MAX_THREADS || ms < 1 || reps < 1 ||
	    reps > MAX_REPS) {
		fprintf(stderr, "usage: %s [threads 1..%d] [ms per point] "
			"[reps 1..%d]\n", argv[0], MAX_THREADS, MAX_REPS);
		return 2;
	}
	host_mm_init_once();
	rcu_idle_exit();
	nfiles = 1 + maxt;
	nr_frames = PAGECACHE_VARIANTS * nfiles * FILE_PAGES;
	files = calloc(PAGECACHE_VARIANTS, sizeof(*files));
	descs = calloc(nr_frames, sizeof(*descs));
	data = aligned_alloc(PAGE_SIZE, (size_t)nr_frames * PAGE_SIZE);
	if (!files || !descs || !data) {
		fprintf(stderr, "bench_pagecache: out of memory\n");
		return 1;
	}
	pagecache_init(&frames);
	/* Every file cached in full before any point runs. */
	for (unsigned v = 0; v < PAGECACHE_VARIANTS; v++)
		for (unsigned f = 0; f < nfiles; f++) {
			address_space_init(&files[v][f], v, &store, NULL,
					   FILE_PAGES, NULL, NULL);
			if (__do_page_cache_readahead(&files[v][f], 0,
						      FILE_PAGES) != FILE_PAGES) {
				fprintf(stderr, "bench_pagecache: could not "
					"fill the cache\n");
				return 1;
			}
		}
	/* The lockless_gang files' pages, for the references-only rows. */
	file_pages = calloc((size_t)nfiles * FILE_PAGES, sizeof(*file_pages));
	if (!file_pages) {
		fprintf(stderr, "bench_pagecache: out of memory\n");
		return 1;
	}
	for (unsigned f = 0; f < nfiles; f++)
		for (unsigned i = 0; i < FILE_PAGES; i++) {
			struct page *p = find_get_page(
				&files[PAGECACHE_LOCKLESS_GANG][f], i);

			if (!p) {
				fprintf(stderr, "bench_pagecache: page %u of "
					"file %u is not cached\n", i, f);
				return 1;
			}
			page_cache_release(p); /* the cache keeps it */
			file_pages[(size_t)f * FILE_PAGES + i] = p;
		}
	printf("page cache lookups, %u-page chunks of cached %u-page files, "
	       "%lu ms per point, median of %u\n", CHUNK_PAGES, FILE_PAGES,
	       (unsigned long)ms, reps);
	printf("%-26s %7s %14s %12s %14s %8s %9s\n", "variant", "threads",
	       "pages/s", "MiB/s", "pages/cpu-s", "overlap", "conc");
	for (unsigned n = 1; n <= maxt; n++) {
		ctl[n] = run_point(RUN_CONTROL, 0, n, ms * NSEC_PER_MSEC, reps);
		print_point("control (no sharing)", n, ctl[n]);
	}
	for (unsigned r = 0; r < 2; r++)
		for (unsigned n = 1; n <= maxt; n++) {
			refs[r][n] = run_point(RUN_REFS,
					       r ? PER_FILE : SAME_STAGGERED, n,
					       ms * NSEC_PER_MSEC, reps);
			print_point(refs_name[r], n, refs[r][n]);
		}
	for (unsigned l = 0; l < LAYOUTS; l++)
		for (unsigned v = 0; v < PAGECACHE_VARIANTS; v++)
			for (unsigned n = 1; n <= maxt; n++) {
				snprintf(name, sizeof(name), "%s%s",
					 pagecache_variant_name(v),
					 layout_suffix[l]);
				if (only && strcmp(only, name))
					continue;
				pt[v][l][n] = run_point((int)v, l, n,
							ms * NSEC_PER_MSEC,
							reps);
				print_point(name, n, pt[v][l][n]);
			}
	if (maxt >= 2) {
		printf("\n2 threads / 1 thread      wall  cpu-time    conc  "
		       "(overlap at 2)\n");
		printf("%-26s %5.2f %8.2f %7.2f  (%.2f)\n",
		       "control (no sharing)",
		       ctl[2].wall_rate / ctl[1].wall_rate,
		       ctl[2].cpu_rate / ctl[1].cpu_rate,
		       ctl[2].conc_rate / ctl[1].conc_rate, ctl[2].overlap);
		for (unsigned r = 0; r < 2; r++)
			printf("%-26s %5.2f %8.2f %7.2f  (%.2f)\n",
			       refs_name[r],
			       refs[r][2].wall_rate / refs[r][1].wall_rate,
			       refs[r][2].cpu_rate / refs[r][1].cpu_rate,
			       refs[r][2].conc_rate / refs[r][1].conc_rate,
			       refs[r][2].overlap);
		for (unsigned l = 0; l < LAYOUTS; l++)
			for (unsigned v = 0; v < PAGECACHE_VARIANTS; v++) {
				struct point *p = pt[v][l];

				snprintf(name, sizeof(name), "%s%s",
					 pagecache_variant_name(v),
					 layout_suffix[l]);
				if (only && strcmp(only, name))
					continue;
				printf("%-26s %5.2f %8.2f %7.2f  (%.2f)%s\n",
				       name, p[2].wall_rate / p[1].wall_rate,
				       p[2].cpu_rate / p[1].cpu_rate,
				       p[2].conc_rate / p[1].conc_rate,
				       p[2].overlap,
				       v == PAGECACHE_LOCKLESS_GANG ?
					       "  target >= 1.8" : "");
			}
	}

	/* Gang of 16 vs 16 single lookups, one thread, lockless_gang. */
	{
		struct address_space *m = &files[PAGECACHE_LOCKLESS_GANG][0];
		double g, s, r;

		for (unsigned i = 0; i < FILE_PAGES + CHUNK_PAGES; i++)
			all[i] = find_get_page(m, i % FILE_PAGES);
		g = cost(gang16, m, pages);
		s = cost(single16, m, pages);
		r = cost(refs16, m, all);
		for (unsigned i = 0; i < FILE_PAGES + CHUNK_PAGES; i++)
			page_cache_release(all[i]);
		printf("\nlookup cost, one thread, fastest of %u blocks: gang "
		       "of 16 %.1f cycles/page, 16 single lookups %.1f "
		       "cycles/page, ratio %.2f (target >= 3)\n", COST_BLOCKS,
		       g, s, s / g);
		printf("  the floor both pay, one reference taken and dropped "
		       "per page (two locked operations): %.1f cycles/page; "
		       "above it: gang %.1f, single %.1f\n", r, g - r, s - r);
		printf("  best ratio any gang can reach over these single "
		       "lookups (a gang costing only the floor): %.2f\n",
		       s / r);
	}
	return 0;
}
