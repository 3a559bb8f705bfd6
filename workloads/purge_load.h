/*
 * purge_load: the load under the tlb_purge experiment's reclaim. Files in
 * the kernel's page cache (contents from workloads/pagefile.h), a
 * streamer that reads them in turn through the cache (the seed's find / |
 * xargs cat), and compile-shaped jobs (the seed's make -j50): a job CPU
 * runs PURGE_JOB_SPACES spaces in turn, each mapping the toolchain (files
 * shared by every job) and an anonymous heap; a space exits after a few
 * turns and a new one takes its place. The jobs check every word they
 * read. What a job does to its spaces is reported through struct
 * purge_load_ops, so an experiment can feed it to a model.
 *
 * One load at a time: the state is this file's.
 */
#ifndef WORKLOADS_PURGE_LOAD_H
#define WORKLOADS_PURGE_LOAD_H

#include <stdbool.h>
#include <stdint.h>
#include "mm/space.h"

#define PURGE_UVA 0x0000000040000000ull /* every job heap starts here */
#define PURGE_TOOL_VA 0x0000000080000000ull /* and the toolchain here */
#define PURGE_FILES 128		/* files the streamer reads in turn */
#define PURGE_FILE_PAGES 16	/* pages per file */
#define PURGE_TOOL_FILES 2	/* the compiler and its C library */
#define PURGE_TOOL_PAGES 32	/* pages per toolchain file */
#define PURGE_CACHE_SLOTS (PURGE_FILES * PURGE_FILE_PAGES)
#define PURGE_JOB_SPACES 4	/* spaces per job CPU */
#define PURGE_JOB_PAGES 48	/* anonymous heap pages per space */

/* A job's events, called on the job's CPU. */
struct purge_load_ops {
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

struct purge_job {
	unsigned cpu;		/* set by the caller before purge_job_main() */
	struct addr_space *sp[PURGE_JOB_SPACES];
	int slot[PURGE_JOB_SPACES];
	uint64_t serial[PURGE_JOB_SPACES];
	unsigned turns[PURGE_JOB_SPACES];
	uint64_t spaces, touches, bad_words;
	uint64_t rounds; /* turns of all its spaces (release-stored) */
};

/* Sets up the files (nothing cached yet) and the jobs' shared state;
 * ops (static, non-NULL hooks) receives the jobs' events. Call before
 * any other function here, with no job running. */
void purge_load_init(const struct purge_load_ops *ops);
/* Drops the files' cached pages: call once nothing maps them (every job
 * stopped and its spaces destroyed). */
void purge_load_free(void);

/* The streamer reads the next page of the stream through the page cache
 * (find_get_page(), on a miss readahead, a check of the data). False
 * without memory. CPU 0 only: the stream position is not shared. */
bool purge_stream(void);

/* Racy sums, for printing: pages of the streamer's files and of the
 * toolchain cached now, the files' pages read in and evicted so far. */
unsigned purge_cache_pages(void);
unsigned purge_tool_pages(void);
uint64_t purge_cache_reads(void);
uint64_t purge_cache_evicted(void);
/* Streamed pages that did not hold their file's data. */
uint64_t purge_bad_pages(void);

/* A job CPU's loop (an smp_work function, arg a struct purge_job, zeroed
 * but for cpu): turns of its spaces until purge_load_stop(), then
 * destroys them. Its counters are read once the work has ended. */
void purge_job_main(void *arg);
/* Asks every job to stop after its current round. */
void purge_load_stop(void);
/*
 * Rounds each job may have completed before it waits (0, the default
 * after purge_load_init(): no limit): a job with that many rounds done
 * spins in its last space until the limit grows or purge_load_stop(),
 * so a caller that raises the limit and waits for the jobs' rounds
 * fixes the work they do between two of its own steps.
 */
void purge_load_limit_rounds(uint64_t rounds);

#endif
