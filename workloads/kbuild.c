/*
 * The kbuild-like engine (see kbuild.h): populate, the workers, the
 * object hash and the reference compile.
 */
#include "kernel/bench/bench_env.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/kprintf.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "workloads/corpus.h"
#include "workloads/kbuild.h"
#include "workloads/ramfs.h"
#include "workloads/ramfs_pages.h"
#include "trace/trace.h"

const struct kbuild_size kbuild_quick = {KBUILD_QUICK_CORPUS, 3};
const struct kbuild_size kbuild_full = {
	{.seed = 1, .files = 400, .min_bytes = 4096, .max_bytes = 16384,
	 .vocabulary = 4000},
	5,
};

#define KB_NAME_LEN 24

static void src_name(char *buf, unsigned i)
{
	ksnprintf(buf, KB_NAME_LEN, "src/%u.c", i);
}

static void obj_name(char *buf, unsigned i)
{
	ksnprintf(buf, KB_NAME_LEN, "obj/%u.o", i);
}

/* Create (or truncate) name in fs holding the n bytes of buf, copied
 * by copy (NULL: ramfs_write()'s own). Inlined where called, so that the
 * test of copy folds away for a constant NULL. */
static inline __attribute__((always_inline)) bool
write_whole_file(struct ramfs *fs, const char *name, const void *buf,
		 size_t n, ramfs_copy_fn copy)
{
	int h = ramfs_open(fs, name, RAMFS_O_CREAT | RAMFS_O_TRUNC);
	bool ok = h >= 0 && (copy ? ramfs_write_with(fs, h, 0, buf, n, copy) :
				    ramfs_write(fs, h, 0, buf, n)) == (long)n;

	if (h >= 0)
		ramfs_close(fs, h);
	return ok;
}

/* Write the whole source tree into fs. */
static bool kb_populate(struct ramfs *fs, const struct corpus_params *p)
{
	char name[KB_NAME_LEN];

	for (unsigned i = 0; i < p->files; i++) {
		size_t n = corpus_file_size(p, i);
		char *buf = kmalloc(n);
		bool ok;

		if (!buf)
			return false;
		corpus_generate(p, i, buf, n);
		src_name(name, i);
		ok = write_whole_file(fs, name, buf, n, NULL);
		kfree(buf);
		if (!ok)
			return false;
	}
	return true;
}

/* "cc -c src/i.c -o obj/i.o", the object written by copy (NULL:
 * ramfs_write()'s): false on any error. */
static inline __attribute__((always_inline)) bool
kb_compile_one(struct ramfs *fs, unsigned i, struct corpus_compile_stats *cs,
	       ramfs_copy_fn copy)
{
	char name[KB_NAME_LEN];
	struct ramfs_stat st;
	size_t obj_len;
	char *src;
	void *obj;
	int h;
	bool ok;

	src_name(name, i);
	trace_point(kbuild_step, i, TRACE_KBUILD_READ);
	h = ramfs_open(fs, name, 0);
	if (h < 0)
		return false;
	if (ramfs_fstat(fs, h, &st) < 0 || !(src = kmalloc(st.size))) {
		ramfs_close(fs, h);
		return false;
	}
	ok = ramfs_read(fs, h, 0, src, st.size) == (long)st.size;
	ramfs_close(fs, h);
	trace_point(kbuild_step, i, TRACE_KBUILD_COMPILE);
	obj = ok ? corpus_compile(src, st.size, &obj_len, cs) : NULL;
	kfree(src);
	if (!obj)
		return false;
	trace_point(kbuild_step, i, TRACE_KBUILD_WRITE);
	obj_name(name, i);
	ok = write_whole_file(fs, name, obj, obj_len, copy);
	kfree(obj);
	return ok;
}

/*
 * One worker: take files from the queue until it is empty, writing the
 * objects by copy. Inlined into the two workers below, so that the
 * default build's code has no test of a copy routine in it.
 */
static inline __attribute__((always_inline)) void
kb_work(struct kbuild_run *run, ramfs_copy_fn copy)
{
	struct kbuild_cpu *me = &run->cpu[smp_this_cpu()];
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
		if (!kb_compile_one(run->fs, i, &me->cs, copy))
			me->failed = true;
		me->busy += clk->now() - t0;
		me->files++;
	}
	me->t_end = clk->now();
}

/* A worker of the default build: objects written by ramfs_write(). */
static void kb_worker(void *arg)
{
	kb_work(arg, NULL);
}

/* A worker of a build with run->write_copy set. */
static void kb_worker_copy(void *arg)
{
	struct kbuild_run *run = arg;

	kb_work(run, run->write_copy);
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
bool kbuild_reference(const struct corpus_params *p, uint64_t *hash)
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
static bool kb_pick_cpus(struct kbuild_run *run, unsigned jobs)
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
bool kbuild_build(struct kbuild_run *run, unsigned jobs, uint64_t *hash)
{
	bool ok = kb_pick_cpus(run, jobs);

	if (!ok)
		return false;
	run->next_file = 0;
	smp_barrier_init(&run->barrier, jobs);
	smp_run_on(&run->mask, run->write_copy ? kb_worker_copy : kb_worker,
		   run);
	for (unsigned c = 0; c < MAX_CPUS; c++)
		if (cpumask_test(&run->mask, c) && run->cpu[c].failed)
			ok = false;
	ok = ok && kb_hash_objects(run->fs, run->size->corpus.files, hash);
	kb_clean(run->fs, run->size->corpus.files);
	return ok;
}

bool kbuild_setup(struct kbuild_run *run, const struct kbuild_size *size)
{
	memset(run, 0, sizeof(*run));
	run->size = size;
	spin_lock_init(&run->queue_lock, NULL);
	run->fs = ramfs_new(&ramfs_page_backend, KBUILD_MAX_FILES);
	return run->fs && kb_populate(run->fs, &size->corpus);
}

void kbuild_teardown(struct kbuild_run *run)
{
	ramfs_destroy(run->fs);
	run->fs = NULL;
}
