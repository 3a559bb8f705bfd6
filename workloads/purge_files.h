/*
 * purge_files: the files of the tlb_purge experiment's load, in the
 * kernel's page cache (contents from workloads/pagefile.h). The
 * streamer's PURGE_FILES files, which it reads in turn and over and over
 * through the cache (the seed's find / | xargs cat), and the toolchain,
 * PURGE_TOOL_FILES files (the compiler and its C library) that every job
 * space of workloads/purge_jobs.h maps.
 *
 * One load at a time: the state is this file's.
 */
#ifndef WORKLOADS_PURGE_FILES_H
#define WORKLOADS_PURGE_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include "mm/filemap.h"
#include "workloads/pagefile.h"

#define PURGE_FILES 128		/* files the streamer reads in turn */
#define PURGE_FILE_PAGES 16	/* pages per file */
#define PURGE_TOOL_FILES 2	/* the compiler and its C library */
#define PURGE_TOOL_PAGES 32	/* pages per toolchain file */
#define PURGE_CACHE_SLOTS (PURGE_FILES * PURGE_FILE_PAGES)
#define PURGE_TOOL_ID_BASE 0x380	/* pagefile ids of the toolchain */

/* Sets up the files, nothing cached yet, and the streamer at the first
 * page of the first file. Call before any other function here, with
 * nothing mapping the files. */
void purge_files_init(void);
/* Drops the files' cached pages: call once nothing maps them (every job
 * stopped and its spaces destroyed). */
void purge_files_free(void);

/* The streamer reads the next page of the stream through the page cache
 * (find_get_page(), on a miss readahead, a check of the data). False
 * without memory. CPU 0 only: the stream position is not shared. */
bool purge_stream(void);

/* Toolchain file f (< PURGE_TOOL_FILES): its page cache, for a space to
 * map once purge_files_init() has run. */
struct address_space *purge_tool_mapping(unsigned f);

/* Word w of page index of toolchain file f: what a reader must find. */
static inline uint64_t purge_tool_word(unsigned f, uint64_t index, unsigned w)
{
	return pagefile_word((uint32_t)(PURGE_TOOL_ID_BASE + f), index, w);
}

/* Racy sums, for printing: pages of the streamer's files and of the
 * toolchain cached now, the files' pages read in and evicted so far. */
unsigned purge_cache_pages(void);
unsigned purge_tool_pages(void);
uint64_t purge_cache_reads(void);
uint64_t purge_cache_evicted(void);
/* Streamed pages that did not hold their file's data. */
uint64_t purge_bad_pages(void);

#endif
