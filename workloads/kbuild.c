/*
 * kbuild-like workload (issue 5; seeds 000, 001 and 003 time `make -j N`
 * of a kernel: "real" is the elapsed time, "user"+"sys" the CPU time of
 * every process added up).
 *
 * A synthetic source tree (workloads/corpus.h) is written into ramfs
 * ("src/N.c"), as a warm page cache would hold it. Then N workers, one
 * per CPU ("-j N"), take file numbers from a shared queue (a spinlocked
 * index, make's job server in miniature) and, per file: read the source
 * from ramfs, tokenise and hash it, build its symbol table from many
 * small kmalloc() objects, emit an object and write it to "obj/N.o",
 * freeing everything. Reported per variant (j=1, j=CPUs):
 *   real_ms  first worker start .. last worker end (the seeds' real)
 *   busy_ms  time the workers spent compiling, summed over CPUs (the
 *            seeds' user+sys: there is no user mode here), and per CPU.
 *
 * Self-check: the hash of every object file, folded in file order, must
 * equal that of a reference single-threaded compile straight from the
 * generator (and, in quick mode, a recorded constant). It does not
 * depend on which CPU compiled which file, nor on timing.
 */
#include "arch/x86_64/tsc.h"
#include "kernel/bench_env.h"
#include "kernel/experiment.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/kprintf.h"
#include "lib/spinlock.h"
#include "lib/stats.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "mm/page_alloc.h"
#include "workloads/corpus.h"
#include "workloads/ramfs.h"
#include "workloads/tracepoint.h"

struct kb_size {
	struct corpus_params corpus;
	unsigned reps;
};

static const struct kb_size kb_quick = {
	{.seed = 1, .files = 48, .min_bytes = 2048, .max_bytes = 8192,
	 .vocabulary = 600},
	3,
};
static const struct kb_size kb_full = {
	{.seed = 1, .files = 400, .min_bytes = 4096, .max_bytes = 16384,
	 .vocabulary = 4000},
	5,
};

/* What the quick tree's objects must hash to (recorded from the
 * reference compile; change it only with corpus.c's generator or
 * compiler). */
#define KB_QUICK_EXPECT_HASH 0xce5d047f7ab3490full

#define KB_NAME_LEN 24
#define KB_MAX_FILES 1024u	/* ramfs inodes: sources + objects */
#define KB_NSEC_PER_MS 1000000ull
#define KB_MS_SCALE 1000ull	/* ms with 3 decimals */

struct kb_cpu {
	uint64_t t_start, t_end;	/* TSC at start and end */
	uint64_t busy;			/* TSC ticks compiling */
	unsigned files;
	struct corpus_compile_stats cs;
	bool failed;
} __aligned(CACHE_LINE_SIZE);

struct kb_run {
	const struct kb_size *size;
	struct ramfs *fs;
	struct spinlock queue_lock;
	unsigned next_file;		/* the work queue */
	struct smp_barrier barrier;
	struct cpumask mask;
	unsigned jobs;
	struct kb_cpu cpu[MAX_CPUS];
};

static struct kb_run kb_run;

static void *kb_alloc_pages(unsigned order)
{
	return page_alloc(order);
}

static void kb_free_pages(void *p, unsigned order)
{
	page_free(p, order);
}

static const struct kmalloc_backend kb_kmalloc_backend = {
	kb_alloc_pages, kb_free_pages,
};

static const struct ramfs_backend kb_ramfs_backend = {
	kb_alloc_pages, kb_free_pages, true,
};

/* kmalloc may not be initialised at boot yet: do it on first use
 * (boot CPU, before any worker runs). */
static void kb_kmalloc_ready(void)
{
	if (!kmalloc_initialized())
		kmalloc_init(&kb_kmalloc_backend);
}

static void src_name(char *buf, unsigned i)
{
	ksnprintf(buf, KB_NAME_LEN, "src/%u.c", i);
}

static void obj_name(char *buf, unsigned i)
{
	ksnprintf(buf, KB_NAME_LEN, "obj/%u.o", i);
}

/* Write the whole source tree into fs. */
static bool kb_populate(struct ramfs *fs, const struct corpus_params *p)
{
	char name[KB_NAME_LEN];

	for (unsigned i = 0; i < p->files; i++) {
		size_t n = corpus_file_size(p, i);
		char *buf = kmalloc(n);
		int h;
		bool ok;

		if (!buf)
			return false;
		corpus_generate(p, i, buf, n);
		src_name(name, i);
		h = ramfs_open(fs, name, RAMFS_O_CREAT | RAMFS_O_TRUNC);
		ok = h >= 0 && ramfs_write(fs, h, 0, buf, n) == (long)n;
		if (h >= 0)
			ramfs_close(fs, h);
		kfree(buf);
		if (!ok)
			return false;
	}
	return true;
}

/* "cc -c src/i.c -o obj/i.o": false on any error. */
static bool kb_compile_one(struct ramfs *fs, unsigned i,
			   struct corpus_compile_stats *cs)
{
	char name[KB_NAME_LEN];
	struct ramfs_stat st;
	size_t obj_len;
	char *src;
	void *obj;
	int h;
	bool ok;

	src_name(name, i);
	h = ramfs_open(fs, name, 0);
	if (h < 0)
		return false;
	if (ramfs_fstat(fs, h, &st) < 0 || !(src = kmalloc(st.size))) {
		ramfs_close(fs, h);
		return false;
	}
	ok = ramfs_read(fs, h, 0, src, st.size) == (long)st.size;
	ramfs_close(fs, h);
	obj = ok ? corpus_compile(src, st.size, &obj_len, cs) : NULL;
	kfree(src);
	if (!obj)
		return false;
	TRACEPOINT(kbuild_compiled, i, obj_len);
	obj_name(name, i);
	h = ramfs_open(fs, name, RAMFS_O_CREAT | RAMFS_O_TRUNC);
	ok = h >= 0 && ramfs_write(fs, h, 0, obj, obj_len) == (long)obj_len;
	if (h >= 0)
		ramfs_close(fs, h);
	kfree(obj);
	return ok;
}

/* One worker: take files from the queue until it is empty. */
static void kb_worker(void *arg)
{
	struct kb_run *run = arg;
	struct kb_cpu *me = &run->cpu[smp_this_cpu()];
	const struct bench_clock *clk = bench_kernel_clock();

	memset(me, 0, sizeof(*me));
	smp_barrier_wait(&run->barrier);
	me->t_start = clk->now();
	for (;;) {
		unsigned i;
		uint64_t t0;

		spin_lock(&run->queue_lock);
		i = run->next_file++;
		spin_unlock(&run->queue_lock);
		if (i >= run->size->corpus.files)
			break;
		t0 = clk->now();
		if (!kb_compile_one(run->fs, i, &me->cs))
			me->failed = true;
		me->busy += clk->now() - t0;
		me->files++;
	}
	me->t_end = clk->now();
}

/* Fold the object files in file order; false if one is missing. */
static bool kb_hash_objects(struct ramfs *fs, unsigned files, uint64_t *hash)
{
	char name[KB_NAME_LEN];
	uint64_t h = CORPUS_HASH_INIT;
	bool ok = true;

	for (unsigned i = 0; i < files && ok; i++) {
		struct ramfs_stat st;
		void *buf;
		int fd;

		obj_name(name, i);
		fd = ramfs_open(fs, name, 0);
		if (fd < 0)
			return false;
		ok = ramfs_fstat(fs, fd, &st) == 0 &&
		     (buf = kmalloc(st.size)) != NULL;
		if (ok) {
			ok = ramfs_read(fs, fd, 0, buf, st.size) ==
			     (long)st.size;
			h = corpus_hash_u64(h, i);
			h = corpus_hash64(h, buf, st.size);
			kfree(buf);
		}
		ramfs_close(fs, fd);
	}
	*hash = h;
	return ok;
}

/* "make clean": unlink every object. */
static void kb_clean(struct ramfs *fs, unsigned files)
{
	char name[KB_NAME_LEN];

	for (unsigned i = 0; i < files; i++) {
		obj_name(name, i);
		ramfs_unlink(fs, name);
	}
}

/* Reference: compile every file straight from the generator, one CPU,
 * hashing the objects as kb_hash_objects() does. */
static bool kb_reference(const struct corpus_params *p, uint64_t *hash)
{
	uint64_t h = CORPUS_HASH_INIT;

	for (unsigned i = 0; i < p->files; i++) {
		size_t n = corpus_file_size(p, i), obj_len;
		char *src = kmalloc(n);
		void *obj;

		if (!src)
			return false;
		corpus_generate(p, i, src, n);
		obj = corpus_compile(src, n, &obj_len, NULL);
		kfree(src);
		if (!obj)
			return false;
		h = corpus_hash_u64(h, i);
		h = corpus_hash64(h, obj, obj_len);
		kfree(obj);
	}
	*hash = h;
	return true;
}

/* Use the first 'jobs' online CPUs; false if there are not enough. */
static bool kb_pick_cpus(struct kb_run *run, unsigned jobs)
{
	unsigned n = 0;

	cpumask_clear(&run->mask);
	for (unsigned c = 0; c < MAX_CPUS && n < jobs; c++)
		if (smp_cpu_online(c)) {
			cpumask_set(&run->mask, c);
			n++;
		}
	run->jobs = jobs;
	return n == jobs;
}

/* One build with 'jobs' workers over run->fs; returns the objects' hash
 * in *hash, false on any error. Cleans the objects afterwards. */
static bool kb_build(struct kb_run *run, unsigned jobs, uint64_t *hash)
{
	bool ok = kb_pick_cpus(run, jobs);

	if (!ok)
		return false;
	run->next_file = 0;
	smp_barrier_init(&run->barrier, jobs);
	smp_run_on(&run->mask, kb_worker, run);
	for (unsigned c = 0; c < MAX_CPUS; c++)
		if (cpumask_test(&run->mask, c) && run->cpu[c].failed)
			ok = false;
	ok = ok && kb_hash_objects(run->fs, run->size->corpus.files, hash);
	kb_clean(run->fs, run->size->corpus.files);
	return ok;
}

static bool kb_setup(struct kb_run *run, const struct kb_size *size)
{
	memset(run, 0, sizeof(*run));
	run->size = size;
	spin_lock_init(&run->queue_lock, NULL);
	run->fs = ramfs_new(&kb_ramfs_backend, KB_MAX_FILES);
	return run->fs && kb_populate(run->fs, &size->corpus);
}

static void kb_teardown(struct kb_run *run)
{
	ramfs_destroy(run->fs);
	run->fs = NULL;
}

uint64_t kbuild_quick_checksum(unsigned jobs);
/* For tests: the quick tree built with 'jobs' workers (0: the reference
 * compile); returns the objects' hash, 0 on failure. */
uint64_t kbuild_quick_checksum(unsigned jobs)
{
	uint64_t h = 0;
	bool ok;

	kb_kmalloc_ready();
	if (jobs == 0)
		return kb_reference(&kb_quick.corpus, &h) ? h : 0;
	ok = kb_setup(&kb_run, &kb_quick) && kb_build(&kb_run, jobs, &h);
	kb_teardown(&kb_run);
	return ok ? h : 0;
}

/* ------------------------------------------------------------------ */
/* The experiment                                                      */
/* ------------------------------------------------------------------ */

#define KB_MAX_FIGS 64

static char kb_variant_names[KB_MAX_FIGS][BENCH_FIELD_MAX];

static uint64_t ticks_to_ms_scaled(uint64_t ticks)
{
	return stats_muldiv(ticks, KB_MS_SCALE * 1000, tsc_hz());
}

static void kb_fig(struct bench_figure *f, const char *variant,
		   const char *metric, uint64_t *ms, unsigned reps,
		   unsigned cpus)
{
	struct stats st;

	stats_compute(&st, ms, reps, ms);
	bench_figure_init(f, "kbuild", variant, metric, "ms",
			  BENCH_SCALE_DIGITS, &st);
	f->cpus = cpus;
}

/* Measure "make -j jobs" reps times; appends figures. 0 or 1. */
static int kb_variant(unsigned jobs, uint64_t expect,
		      struct bench_figure *figs, size_t *nfig)
{
	static uint64_t cpu_ms[MAX_CPUS][BENCH_MAX_REPS];
	uint64_t real[BENCH_MAX_REPS], busy[BENCH_MAX_REPS];
	unsigned reps = kb_run.size->reps, cpus[MAX_CPUS], n = 0;
	char *vname = kb_variant_names[*nfig];

	kassert(reps <= BENCH_MAX_REPS);
	ksnprintf(vname, BENCH_FIELD_MAX, "j=%u", jobs);
	for (unsigned r = 0; r < reps; r++) {
		uint64_t h = 0, first = UINT64_MAX, last = 0, sum = 0;
		uint64_t allocs = 0;

		if (!kb_build(&kb_run, jobs, &h) || h != expect) {
			kprintf("kbuild: %s rep %u: objects hash %#lx, "
				"reference %#lx\n", vname, r, (unsigned long)h,
				(unsigned long)expect);
			return 1;
		}
		n = 0;
		for (unsigned c = 0; c < MAX_CPUS; c++) {
			struct kb_cpu *k = &kb_run.cpu[c];

			if (!cpumask_test(&kb_run.mask, c))
				continue;
			first = MIN(first, k->t_start);
			last = MAX(last, k->t_end);
			sum += k->busy;
			allocs += k->cs.allocs;
			cpu_ms[n][r] = ticks_to_ms_scaled(k->busy);
			cpus[n++] = c;
		}
		real[r] = ticks_to_ms_scaled(last - first);
		busy[r] = ticks_to_ms_scaled(sum);
		kprintf("kbuild: %s rep %u: real %lu cycles, busy %lu cycles "
			"over %u CPUs, %lu kmalloc calls\n", vname, r,
			(unsigned long)(last - first), (unsigned long)sum,
			jobs, (unsigned long)allocs);
	}
	kb_fig(&figs[(*nfig)++], vname, "real_ms", real, reps, jobs);
	kb_fig(&figs[(*nfig)++], vname, "busy_ms", busy, reps, jobs);
	for (unsigned i = 0; jobs > 1 && i < n && *nfig < KB_MAX_FIGS; i++) {
		char *cname = kb_variant_names[*nfig];

		ksnprintf(cname, BENCH_FIELD_MAX, "j=%u/cpu%u", jobs, cpus[i]);
		kb_fig(&figs[(*nfig)++], cname, "busy_ms", cpu_ms[i], reps, 1);
	}
	return 0;
}

/* Workers in quick mode (tests and make run); full mode uses every CPU. */
#define KB_QUICK_MAX_JOBS 2

/* Shell settings: run kbuild files=N reps=N. Sources and objects
 * share the ramfs inodes. */
#define KB_MIN_FILES 2
static const struct experiment_param kb_params[] = {
	{"files", KB_MIN_FILES, KB_MAX_FILES / 2 - 1,
	 "source files (quick 48, full 400)"},
	{"reps", 1, BENCH_MAX_REPS, "repetitions (quick 3, full 5)"},
};

static int kbuild_run(enum experiment_mode mode)
{
	struct kb_size custom = mode == EXPERIMENT_FULL ? kb_full : kb_quick;
	const struct kb_size *size = &custom;
	static struct bench_figure figs[KB_MAX_FIGS];
	unsigned cpus = smp_cpus_online();
	uint64_t expect = 0, bytes = 0, t0, t1;
	size_t nfig = 0;
	int rc = 0;
	uint64_t v;

	if (experiment_param("files", &v))
		custom.corpus.files = (unsigned)v;
	if (experiment_param("reps", &v))
		custom.reps = (unsigned)v;
	bench_env_report();
	kb_kmalloc_ready();
	for (unsigned i = 0; i < size->corpus.files; i++)
		bytes += corpus_file_size(&size->corpus, i);
	kprintf("kbuild: %u source files, %lu KiB, vocabulary %u, "
		"%u repetitions, %u CPUs online; tsc %lu kHz\n",
		size->corpus.files, (unsigned long)(bytes >> 10),
		size->corpus.vocabulary, size->reps, cpus,
		(unsigned long)(tsc_hz() / 1000));
	t0 = rdtsc_ordered();
	if (!kb_reference(&size->corpus, &expect)) {
		kprintf("kbuild: the reference compile failed\n");
		return 1;
	}
	t1 = rdtsc_ordered();
	kprintf("kbuild: reference compile (one CPU, no ramfs): objects "
		"hash %#lx, %lu ms\n", (unsigned long)expect,
		(unsigned long)(ticks_to_ms_scaled(t1 - t0) / KB_MS_SCALE));
	if (mode == EXPERIMENT_QUICK && !experiment_params_given() &&
	    expect != KB_QUICK_EXPECT_HASH) {
		kprintf("kbuild: quick objects hash %#lx, expected %#llx\n",
			(unsigned long)expect, KB_QUICK_EXPECT_HASH);
		rc = 1;
	}
	if (!kb_setup(&kb_run, size)) {
		kprintf("kbuild: cannot write the source tree to ramfs\n");
		kb_teardown(&kb_run);
		return 1;
	}
	rc |= kb_variant(1, expect, figs, &nfig);
	if (mode == EXPERIMENT_QUICK && cpus > KB_QUICK_MAX_JOBS) {
		/* Every worker hammers kmalloc's class locks; with more
		 * vCPUs than host cores each lock hand-off can wait for a
		 * host time slice, and the quick run would take minutes. */
		kprintf("kbuild: quick mode caps -j at %u (runmode=full uses "
			"all %u CPUs)\n", KB_QUICK_MAX_JOBS, cpus);
		cpus = KB_QUICK_MAX_JOBS;
	}
	if (cpus > 1 && !rc)
		rc |= kb_variant(cpus, expect, figs, &nfig);
	kb_teardown(&kb_run);
	if (rc) {
		kprintf("kbuild: FAILED\n");
		return rc;
	}
	bench_report("kbuild-like (make -j N of a synthetic tree into ramfs)",
		     figs, nfig);
	return 0;
}

EXPERIMENT_PARAMS(kbuild, "kbuild",
	   "make -j N of a synthetic source tree: tokenise, symbol tables "
	   "from kmalloc, objects into ramfs; real and busy time",
	   "000,001,003", 40, kbuild_run, kb_params);
