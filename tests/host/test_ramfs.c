/*
 * Host tests for workloads/ramfs.c under ASan/UBSan: round trips across
 * page boundaries (ramfs_write(), and ramfs_write_with() calling the copy
 * given once per page), holes, truncation, unlink-while-open, name and inode
 * limits, and that every backend page comes back (the backend counts).
 */
// HOST_SRCS: workloads/ramfs.c lib/spinlock.c tests/host/host_cycles.c lib/string.c
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/ktest.h"
#include "workloads/ramfs.h"

static long live_pages; /* backend pages handed out and not returned */

static void *h_alloc(unsigned order)
{
	size_t bytes = (size_t)RAMFS_PAGE_SIZE << order;
	void *p = aligned_alloc(RAMFS_PAGE_SIZE, bytes);

	if (p) {
		memset(p, 0xa5, bytes); /* ramfs must zero what it needs */
		live_pages += 1l << order;
	}
	return p;
}

static void h_free(void *p, unsigned order)
{
	live_pages -= 1l << order;
	free(p);
}

static const struct ramfs_backend backend = {h_alloc, h_free, false};

#define BIG (5 * RAMFS_PAGE_SIZE + 123)
static uint8_t src[BIG], dst[BIG];

static void fill(void)
{
	for (size_t i = 0; i < BIG; i++)
		src[i] = (uint8_t)(i * 13 + (i >> 9));
}

/* A write copy that counts its calls and bytes, then copies. */
static unsigned copy_calls;
static size_t copy_bytes;

static void counting_copy(void *d, const void *s, size_t n)
{
	copy_calls++;
	copy_bytes += n;
	memcpy(d, s, n);
}

KTEST(ramfs, round_trip_unaligned)
{
	struct ramfs *fs = ramfs_new(&backend, 16);
	int h;

	ASSERT_TRUE(fs != NULL);
	fill();
	h = ramfs_open(fs, "x", RAMFS_O_CREAT);
	ASSERT_TRUE(h >= 0);
	EXPECT_EQ(ramfs_write(fs, h, 4095, src, BIG), BIG);
	memset(dst, 0, sizeof(dst));
	EXPECT_EQ(ramfs_read(fs, h, 4095, dst, BIG), BIG);
	EXPECT_EQ(memcmp(src, dst, BIG), 0);
	/* Short read at the end, nothing beyond. */
	EXPECT_EQ(ramfs_read(fs, h, 4095 + BIG - 10, dst, 100), 10);
	EXPECT_EQ(ramfs_read(fs, h, 4095 + BIG, dst, 100), 0);
	/* The hole before 4095 reads as zeros despite the 0xa5 backend. */
	EXPECT_EQ(ramfs_read(fs, h, 0, dst, 4095), 4095);
	EXPECT_EQ(dst[0], 0);
	EXPECT_EQ(dst[4094], 0);
	ramfs_close(fs, h);
	/* The same write through ramfs_write_with(): one call of the copy
	 * given per page touched (the end of page 0, five whole pages, part
	 * of a seventh), none from ramfs_write(). */
	h = ramfs_open(fs, "y", RAMFS_O_CREAT);
	ASSERT_TRUE(h >= 0);
	copy_calls = 0;
	copy_bytes = 0;
	EXPECT_EQ(ramfs_write_with(fs, h, 4095, src, BIG, counting_copy),
		  BIG);
	EXPECT_EQ(copy_calls, 7);
	EXPECT_EQ(copy_bytes, BIG);
	memset(dst, 0, sizeof(dst));
	EXPECT_EQ(ramfs_read(fs, h, 4095, dst, BIG), BIG);
	EXPECT_EQ(memcmp(src, dst, BIG), 0);
	EXPECT_EQ(ramfs_write(fs, h, 0, src, 100), 100);
	EXPECT_EQ(copy_calls, 7);
	ramfs_close(fs, h);
	ramfs_destroy(fs);
	EXPECT_EQ(live_pages, 0);
}

KTEST(ramfs, holes_own_no_pages)
{
	struct ramfs *fs = ramfs_new(&backend, 16);
	struct ramfs_stat st;
	long base = live_pages;
	int h;

	ASSERT_TRUE(fs != NULL);
	base = live_pages;
	h = ramfs_open(fs, "sparse", RAMFS_O_CREAT);
	EXPECT_EQ(ramfs_write(fs, h, 100 * RAMFS_PAGE_SIZE, "z", 1), 1);
	EXPECT_EQ(ramfs_fstat(fs, h, &st), 0);
	EXPECT_EQ(st.size, 100 * RAMFS_PAGE_SIZE + 1);
	EXPECT_EQ(st.pages, 1);
	EXPECT_EQ(live_pages - base, 2); /* data page + index page */
	EXPECT_EQ(ramfs_write(fs, h, RAMFS_FILE_MAX_SIZE, "z", 1),
		  -RAMFS_EFBIG);
	ramfs_close(fs, h);
	ramfs_destroy(fs);
	EXPECT_EQ(live_pages, 0);
}

KTEST(ramfs, truncate_zeroes_the_tail)
{
	struct ramfs *fs = ramfs_new(&backend, 16);
	int h;

	ASSERT_TRUE(fs != NULL);
	fill();
	h = ramfs_open(fs, "t", RAMFS_O_CREAT);
	EXPECT_EQ(ramfs_write(fs, h, 0, src, BIG), BIG);
	EXPECT_EQ(ramfs_pages_held(fs), 7);
	EXPECT_EQ(ramfs_truncate(fs, h, 100), 0);
	EXPECT_EQ(ramfs_pages_held(fs), 2);
	EXPECT_EQ(ramfs_truncate(fs, h, 200), 0);
	EXPECT_EQ(ramfs_read(fs, h, 0, dst, 300), 200);
	EXPECT_EQ(memcmp(dst, src, 100), 0);
	EXPECT_EQ(dst[100], 0);
	EXPECT_EQ(dst[199], 0);
	ramfs_close(fs, h);
	/* O_TRUNC empties it. */
	h = ramfs_open(fs, "t", RAMFS_O_TRUNC);
	EXPECT_EQ(ramfs_read(fs, h, 0, dst, 10), 0);
	EXPECT_EQ(ramfs_pages_held(fs), 0);
	ramfs_close(fs, h);
	ramfs_destroy(fs);
	EXPECT_EQ(live_pages, 0);
}

KTEST(ramfs, names_and_limits)
{
	struct ramfs *fs = ramfs_new(&backend, 4);
	char longname[RAMFS_NAME_MAX + 2];
	int h[4];

	ASSERT_TRUE(fs != NULL);
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	EXPECT_EQ(ramfs_open(fs, longname, RAMFS_O_CREAT),
		  -RAMFS_ENAMETOOLONG);
	EXPECT_EQ(ramfs_open(fs, "", RAMFS_O_CREAT), -RAMFS_EINVAL);
	EXPECT_EQ(ramfs_open(fs, "missing", 0), -RAMFS_ENOENT);
	for (int i = 0; i < 4; i++) {
		char n[16];

		snprintf(n, sizeof(n), "f%d", i);
		h[i] = ramfs_open(fs, n, RAMFS_O_CREAT | RAMFS_O_EXCL);
		EXPECT_GE(h[i], 0);
	}
	EXPECT_EQ(ramfs_open(fs, "f4", RAMFS_O_CREAT), -RAMFS_ENOSPC);
	EXPECT_EQ(ramfs_file_count(fs), 4);
	/* Same name again: same inode, no new one. */
	EXPECT_EQ(ramfs_open(fs, "f2", RAMFS_O_CREAT), h[2]);
	EXPECT_EQ(ramfs_close(fs, h[2]), 0);
	/* Unlink while open: gone by name, alive by handle. */
	EXPECT_EQ(ramfs_write(fs, h[1], 0, "abc", 3), 3);
	EXPECT_EQ(ramfs_unlink(fs, "f1"), 0);
	EXPECT_EQ(ramfs_open(fs, "f1", 0), -RAMFS_ENOENT);
	EXPECT_EQ(ramfs_read(fs, h[1], 0, dst, 3), 3);
	EXPECT_EQ(memcmp(dst, "abc", 3), 0);
	/* Its inode is not free until closed. */
	EXPECT_EQ(ramfs_open(fs, "g", RAMFS_O_CREAT), -RAMFS_ENOSPC);
	EXPECT_EQ(ramfs_close(fs, h[1]), 0);
	EXPECT_EQ(ramfs_read(fs, h[1], 0, dst, 3), -RAMFS_EBADF);
	EXPECT_GE(ramfs_open(fs, "g", RAMFS_O_CREAT), 0);
	ramfs_destroy(fs);
	EXPECT_EQ(live_pages, 0);
}

KTEST(ramfs, counters)
{
	struct ramfs *fs = ramfs_new(&backend, 8);
	struct ramfs_counters c;
	int h;

	ASSERT_TRUE(fs != NULL);
	h = ramfs_open(fs, "c", RAMFS_O_CREAT);
	ramfs_write(fs, h, 0, src, 5000);
	ramfs_read(fs, h, 0, dst, 6000);
	ramfs_close(fs, h);
	ramfs_unlink(fs, "c");
	ramfs_get_counters(fs, &c);
	EXPECT_EQ(c.creates, 1);
	EXPECT_EQ(c.opens, 1);
	EXPECT_EQ(c.closes, 1);
	EXPECT_EQ(c.unlinks, 1);
	EXPECT_EQ(c.bytes_written, 5000);
	EXPECT_EQ(c.bytes_read, 5000);
	EXPECT_EQ(c.pages_allocated, 3);
	EXPECT_EQ(c.pages_freed, 3);
	ramfs_destroy(fs);
	EXPECT_EQ(live_pages, 0);
}
