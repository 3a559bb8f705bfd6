/*
 * The kbuild-like engine (seeds 000, 001 and 003 time `make -j N` of a
 * kernel: "real" is the elapsed time, "user"+"sys" the CPU time of every
 * process added up).
 *
 * A synthetic source tree (workloads/corpus.h) is written into ramfs
 * ("src/N.c"), as a warm page cache would hold it. Then N workers, one
 * per CPU ("-j N"), take file numbers from a shared queue (a spinlocked
 * index, make's job server in miniature) and, per file: read the source
 * from ramfs, tokenise and hash it, build its symbol table from many
 * small kmalloc() objects, emit an object and write it to "obj/N.o",
 * freeing everything.
 *
 * Self-check: the hash of every object file, folded in file order, equals
 * that of a reference single-threaded compile straight from the generator
 * (kbuild_reference()). It does not depend on which CPU compiled which
 * file, nor on timing. The experiment (experiments/kbuild.c) times the
 * builds; the KTAP suite "workloads" checks the hashes.
 */
#ifndef WORKLOADS_KBUILD_H
#define WORKLOADS_KBUILD_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/smp_call.h"
#include "lib/compiler.h"
#include "lib/config.h"
#include "lib/spinlock.h"
#include "workloads/corpus.h"
#include "workloads/ramfs.h"
#include "workloads/reference.h"

/* ramfs inodes of a build: sources + objects. */
#define KBUILD_MAX_FILES 1024u

struct kbuild_size {
	struct corpus_params corpus;
	unsigned reps;		/* repetitions the experiment times */
};

/* The experiment's two trees; the tests build the quick one. */
extern const struct kbuild_size kbuild_quick, kbuild_full;

/* What the quick tree's objects must hash to: workloads/reference.h. */

/* One worker's record of the last build. */
struct kbuild_cpu {
	uint64_t t_start, t_end;	/* TSC at start and end */
	uint64_t busy;			/* TSC ticks compiling */
	unsigned files;
	struct corpus_compile_stats cs;
	bool failed;
} __aligned(CACHE_LINE_SIZE);

struct kbuild_run {
	const struct kbuild_size *size;
	struct ramfs *fs;
	struct spinlock queue_lock;
	unsigned next_file;		/* the work queue */
	struct smp_barrier barrier;
	struct cpumask mask;		/* the workers of the last build */
	unsigned jobs;
	/* The object files' write copy (copy_from_user in a kernel build):
	 * NULL for ramfs_write()'s memcpy, else a routine with memcpy's
	 * contract (workloads/copy_routines.h; one that needs the SSE state
	 * needs it on every worker's CPU). kbuild_setup() clears it. */
	ramfs_copy_fn write_copy;
	struct kbuild_cpu cpu[MAX_CPUS];
};

/* A new ramfs holding size's source tree. false without memory; call
 * kbuild_teardown() either way. */
bool kbuild_setup(struct kbuild_run *run, const struct kbuild_size *size);
void kbuild_teardown(struct kbuild_run *run);
/*
 * One build with 'jobs' workers on the first 'jobs' online CPUs: the
 * objects' hash in *hash; false on any error (too few CPUs, a failed
 * compile, a missing object). Unlinks the objects afterwards.
 */
bool kbuild_build(struct kbuild_run *run, unsigned jobs, uint64_t *hash);
/* The reference: every file compiled straight from the generator on this
 * CPU, hashed as a build hashes its objects. false without memory. */
bool kbuild_reference(const struct corpus_params *p, uint64_t *hash);

#endif
