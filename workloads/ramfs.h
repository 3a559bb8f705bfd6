/*
 * ramfs: a small in-memory file store for the workloads (tbench-like and
 * kbuild-like). One flat namespace of names up to RAMFS_NAME_MAX
 * bytes ("c3/f7" is just a name), files made of whole pages.
 *
 *   struct ramfs ─ inode table [max_files] ─ hash chains of names
 *   inode ─ index page: RAMFS_FILE_MAX_PAGES pointers ─ data pages
 *
 * Files are page-granular on purpose: the page cache (docs/README.md,
 * "What comes next") will later sit under this interface and hand out
 * the same pages.
 * Unwritten parts of a file (holes) read as zeros and own no page.
 *
 * Portable: pages come from a struct ramfs_backend (page_alloc in the
 * kernel, aligned_alloc in host tests). Locking: one spinlock for the
 * namespace and the inode table, one per inode for its data; a file's
 * handle (the value ramfs_open() returns) pins the inode, so an unlinked
 * file lives on until its last close, as in POSIX.
 */
#ifndef WORKLOADS_RAMFS_H
#define WORKLOADS_RAMFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/config.h"
#include "lib/spinlock.h"

/* The backend's unit: the base page. */
#define RAMFS_PAGE_SIZE PAGE_SIZE
#define RAMFS_NAME_MAX 47 /* bytes, without the NUL */
/* One index page of pointers per file: 512 pages, 2 MiB. */
#define RAMFS_FILE_MAX_PAGES (RAMFS_PAGE_SIZE / sizeof(void *))
#define RAMFS_FILE_MAX_SIZE ((uint64_t)RAMFS_FILE_MAX_PAGES * RAMFS_PAGE_SIZE)

/* Errors, returned negated. */
enum ramfs_error {
	RAMFS_ENOENT = 2,
	RAMFS_EBADF = 9,
	RAMFS_ENOMEM = 12,
	RAMFS_EEXIST = 17,
	RAMFS_EINVAL = 22,
	RAMFS_EFBIG = 27,
	RAMFS_ENOSPC = 28,
	RAMFS_ENAMETOOLONG = 36,
};

/* ramfs_open() flags. */
#define RAMFS_O_CREAT 0x1u /* create if missing */
#define RAMFS_O_EXCL 0x2u  /* with CREAT: fail if it exists */
#define RAMFS_O_TRUNC 0x4u /* truncate to 0 */

/*
 * Where pages come from: 2^order contiguous page-aligned pages, or NULL.
 * pages_zeroed: alloc_pages returns zeroed memory (saves a memset).
 */
struct ramfs_backend {
	void *(*alloc_pages)(unsigned order);
	void (*free_pages)(void *p, unsigned order);
	bool pages_zeroed;
};

/* Counters; updated with relaxed atomics, read as a snapshot. */
struct ramfs_counters {
	uint64_t creates, opens, closes, unlinks, lookups, stats;
	uint64_t reads, writes, truncates;
	uint64_t bytes_read, bytes_written;
	uint64_t pages_allocated, pages_freed;
};

struct ramfs_stat {
	uint64_t size;
	uint64_t pages; /* data pages held (holes hold none) */
	uint32_t ino;
	uint32_t nopen; /* open handles */
};

struct ramfs;

/* A new empty store with room for max_files inodes; NULL without memory. */
struct ramfs *ramfs_new(const struct ramfs_backend *b, unsigned max_files);
/* Free every file (open or not) and the store itself. */
void ramfs_destroy(struct ramfs *fs);

/* Open name; returns a handle >= 0 or a negated enum ramfs_error. */
int ramfs_open(struct ramfs *fs, const char *name, unsigned flags);
/* Release a handle; the inode goes when unlinked and no longer open. */
int ramfs_close(struct ramfs *fs, int h);
/*
 * Copy up to len bytes at off into buf; returns the bytes read (short at
 * end of file, 0 beyond it) or a negated error.
 */
long ramfs_read(struct ramfs *fs, int h, uint64_t off, void *buf,
		size_t len);
/* Copy len bytes from buf to off, growing the file; returns len or error. */
long ramfs_write(struct ramfs *fs, int h, uint64_t off, const void *buf,
		 size_t len);

/* A copy routine with memcpy's contract for non-overlapping buffers
 * (workloads/copy_routines.h's copy_fn has this type). */
typedef void (*ramfs_copy_fn)(void *dst, const void *src, size_t n);

/*
 * ramfs_write() whose copy into the file's pages (the write path's
 * copy_from_user) is made by copy instead of memcpy: seed 001 compares
 * an ordinary copy there with a non-temporal one. Same contract.
 */
long ramfs_write_with(struct ramfs *fs, int h, uint64_t off,
		      const void *buf, size_t len, ramfs_copy_fn copy);
/* Set the size; pages wholly beyond it go back to the backend. */
int ramfs_truncate(struct ramfs *fs, int h, uint64_t size);
int ramfs_fstat(struct ramfs *fs, int h, struct ramfs_stat *st);
/* By name, no handle needed. */
int ramfs_stat(struct ramfs *fs, const char *name, struct ramfs_stat *st);
int ramfs_unlink(struct ramfs *fs, const char *name);

/* Files that have a name; backend pages held (data, index pages). */
unsigned ramfs_file_count(struct ramfs *fs);
uint64_t ramfs_pages_held(struct ramfs *fs);
void ramfs_get_counters(struct ramfs *fs, struct ramfs_counters *out);
const char *ramfs_strerror(int err);

#endif
