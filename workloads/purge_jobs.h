/*
 * purge_jobs: the compile-shaped jobs of the tlb_purge experiment's load
 * (the seed's make -j50). A job CPU runs PURGE_JOB_SPACES spaces in turn,
 * each mapping the toolchain (workloads/purge_files.h, shared by every
 * job) and an anonymous heap; a space exits after a few turns and a new
 * one takes its place. The jobs check every word they read. What a job
 * does to its spaces is reported through struct purge_jobs_ops, so an
 * experiment can feed it to a model. The caller drives the jobs as a
 * group: started on CPUs 1..n, held to a number of rounds (lockstep),
 * stopped.
 *
 * One load at a time: the state is this file's.
 */
#ifndef WORKLOADS_PURGE_JOBS_H
#define WORKLOADS_PURGE_JOBS_H

#include <stdbool.h>
#include <stdint.h>
#include "mm/space.h"

#define PURGE_UVA 0x0000000040000000ull /* every job heap starts here */
#define PURGE_TOOL_VA 0x0000000080000000ull /* and the toolchain here */
#define PURGE_JOB_SPACES 4	/* spaces per job CPU */
#define PURGE_JOB_PAGES 48	/* anonymous heap pages per space */
#define PURGE_MAX_JOBS 15	/* job CPUs at most (CPUs 1..15) */

/* A job's events, called on the job's CPU. */
struct purge_jobs_ops {
	/* A new space (heap and toolchain mapped): returns its slot. */
	int (*space_new)(struct addr_space *as);
	/* The CPU left its space for the kernel's (before a space exits). */
	void (*cpu_idle)(unsigned cpu);
	/* The space of slot is destroyed (its pages out of the reverse map). */
	void (*space_gone)(int slot);
	/* A turn: the CPU switched to slot's space and touched n pages at
	 * the addresses va[]; it stays in that space until its next switch. */
	void (*turn)(unsigned cpu, int slot, const uint64_t *va, unsigned n);
};

/* One job: what it did, read once the jobs have stopped (rounds, with
 * an acquire load, also while they run). */
struct purge_job {
	unsigned cpu;
	struct addr_space *sp[PURGE_JOB_SPACES];
	int slot[PURGE_JOB_SPACES];
	uint64_t serial[PURGE_JOB_SPACES];
	unsigned turns[PURGE_JOB_SPACES];
	uint64_t spaces, touches, bad_words;
	uint64_t rounds; /* turns of all its spaces (release-stored) */
};

/* Forgets any previous run: no job, no round limit; ops (static,
 * non-NULL hooks) receives the jobs' events. Call before any other
 * function here, after purge_files_init(), with no job running. */
void purge_jobs_init(const struct purge_jobs_ops *ops);
/*
 * Rounds each job may have completed before it waits (0, the default
 * after purge_jobs_init(): no limit): a job with that many rounds done
 * spins in its last space until the limit grows or purge_jobs_stop().
 * Call from one CPU (the caller's).
 */
void purge_jobs_limit_rounds(uint64_t rounds);
/* Starts a job on each of CPUs 1..n (n <= PURGE_MAX_JOBS), in order, up
 * to the first CPU that is busy: returns how many started. */
unsigned purge_jobs_start(unsigned n);
/* Whether every started job has done at least rounds rounds. */
bool purge_jobs_done_rounds(uint64_t rounds);
/* Lets every job run n more rounds than the limit so far (n = 0: none,
 * wait for those allowed) and waits until each has, or until the TSC
 * passes end_tsc. False when end_tsc came first. */
bool purge_jobs_advance(uint64_t n, uint64_t end_tsc);
/* Stops the jobs after their current round and waits until each has
 * ended (its spaces destroyed); returns the words they read back wrong.
 * Call once, after purge_jobs_start(). */
uint64_t purge_jobs_stop(void);
/* How many jobs started, and job i (< that) of them. */
unsigned purge_jobs_count(void);
const struct purge_job *purge_job_get(unsigned i);

#endif
