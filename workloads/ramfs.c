/*
 * ramfs: the in-memory file store under the workloads (see ramfs.h).
 *
 * Lock order: fs->lock (namespace, inode table, open counts) before an
 * inode's lock (size, index and data pages). Reads and writes take only
 * the inode lock: the caller's open handle keeps the inode alive.
 */
#include "workloads/ramfs.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/compiler.h"
#include "lib/string.h"
#include "trace/tracepoint.h"

#define RAMFS_HASH_BUCKETS 256u
#define RAMFS_NO_INODE (-1)
#define FNV32_OFFSET 2166136261u
#define FNV32_PRIME 16777619u

BUILD_ASSERT((RAMFS_HASH_BUCKETS & (RAMFS_HASH_BUCKETS - 1)) == 0);

struct ramfs_inode {
	struct spinlock lock;	/* size, index, data pages */
	int32_t next;		/* hash chain, or free list when !used */
	uint32_t hash;
	bool used;		/* allocated (named, or open after unlink) */
	bool linked;		/* reachable by name */
	uint32_t nopen;
	uint64_t size;
	uint64_t npages;	/* data pages present */
	void **index;		/* RAMFS_FILE_MAX_PAGES slots, or NULL */
	char name[RAMFS_NAME_MAX + 1];
};

struct ramfs {
	struct spinlock lock;
	const struct ramfs_backend *b;
	unsigned order;		/* of this structure's own pages */
	unsigned max_files;
	unsigned nlinked;
	int32_t free_head;
	uint64_t pages;		/* backend pages held by files */
	struct ramfs_counters ctr;
	int32_t bucket[RAMFS_HASH_BUCKETS];
	struct ramfs_inode inode[];
};

#define COUNT(fs, field, n) atomic_fetch_add_relaxed(&(fs)->ctr.field, (n))

static uint32_t name_hash(const char *s)
{
	uint32_t h = FNV32_OFFSET;

	while (*s)
		h = (h ^ (uint8_t)*s++) * FNV32_PRIME;
	return h;
}

static unsigned order_for(size_t bytes)
{
	unsigned order = 0;

	while (((size_t)RAMFS_PAGE_SIZE << order) < bytes)
		order++;
	return order;
}

struct ramfs *ramfs_new(const struct ramfs_backend *b, unsigned max_files)
{
	size_t bytes = sizeof(struct ramfs) +
		       (size_t)max_files * sizeof(struct ramfs_inode);
	unsigned order = order_for(bytes);
	struct ramfs *fs;

	kassert(b && b->alloc_pages && b->free_pages && max_files > 0);
	fs = b->alloc_pages(order);
	if (!fs)
		return NULL;
	memset(fs, 0, bytes);
	spin_lock_init(&fs->lock, NULL);
	fs->b = b;
	fs->order = order;
	fs->max_files = max_files;
	for (unsigned i = 0; i < RAMFS_HASH_BUCKETS; i++)
		fs->bucket[i] = RAMFS_NO_INODE;
	for (unsigned i = 0; i < max_files; i++) {
		spin_lock_init(&fs->inode[i].lock, NULL);
		fs->inode[i].next = i + 1 < max_files ? (int32_t)i + 1 :
							RAMFS_NO_INODE;
	}
	fs->free_head = 0;
	return fs;
}

static void *get_page(struct ramfs *fs)
{
	void *p = fs->b->alloc_pages(0);

	if (p) {
		if (!fs->b->pages_zeroed)
			memset(p, 0, RAMFS_PAGE_SIZE);
		atomic_fetch_add_relaxed(&fs->pages, 1);
		COUNT(fs, pages_allocated, 1);
	}
	return p;
}

static void put_page(struct ramfs *fs, void *p)
{
	fs->b->free_pages(p, 0);
	atomic_fetch_sub_relaxed(&fs->pages, 1);
	COUNT(fs, pages_freed, 1);
}

/* Drop data pages from page index 'first' on; inode lock held. */
static void drop_pages_from(struct ramfs *fs, struct ramfs_inode *ino,
			    uint64_t first)
{
	if (!ino->index)
		return;
	for (uint64_t i = first; i < RAMFS_FILE_MAX_PAGES; i++) {
		if (ino->index[i]) {
			put_page(fs, ino->index[i]);
			ino->index[i] = NULL;
			ino->npages--;
		}
	}
	if (first == 0) {
		kassert(ino->npages == 0);
		put_page(fs, ino->index);
		ino->index = NULL;
	}
}

/* Give an unlinked, closed inode back; fs->lock held. */
static void inode_release(struct ramfs *fs, int32_t i)
{
	struct ramfs_inode *ino = &fs->inode[i];

	kassert(ino->used && !ino->linked && ino->nopen == 0);
	spin_lock(&ino->lock);
	drop_pages_from(fs, ino, 0);
	ino->size = 0;
	spin_unlock(&ino->lock);
	ino->used = false;
	ino->name[0] = '\0';
	ino->next = fs->free_head;
	fs->free_head = i;
}

void ramfs_destroy(struct ramfs *fs)
{
	if (!fs)
		return;
	for (unsigned i = 0; i < fs->max_files; i++) {
		struct ramfs_inode *ino = &fs->inode[i];

		if (ino->used) {
			ino->linked = false;
			ino->nopen = 0;
			inode_release(fs, (int32_t)i);
		}
	}
	kassert(fs->pages == 0);
	fs->b->free_pages(fs, fs->order);
}

/* Inode index of name, or RAMFS_NO_INODE; fs->lock held. */
static int32_t lookup_locked(struct ramfs *fs, const char *name,
			     uint32_t hash, int32_t **link)
{
	int32_t *pp = &fs->bucket[hash & (RAMFS_HASH_BUCKETS - 1)];

	for (; *pp != RAMFS_NO_INODE; pp = &fs->inode[*pp].next) {
		struct ramfs_inode *ino = &fs->inode[*pp];

		if (ino->hash == hash && strcmp(ino->name, name) == 0)
			break;
	}
	if (link)
		*link = pp;
	trace_point(ramfs_lookup, hash, (uint32_t)*pp);
	return *pp;
}

static int check_name(const char *name)
{
	size_t n = strnlen(name, RAMFS_NAME_MAX + 1);

	if (n == 0)
		return -RAMFS_EINVAL;
	if (n > RAMFS_NAME_MAX)
		return -RAMFS_ENAMETOOLONG;
	return 0;
}

int ramfs_open(struct ramfs *fs, const char *name, unsigned flags)
{
	uint32_t hash = name_hash(name);
	int32_t i;
	int err = check_name(name);

	trace_point(ramfs_op, TRACE_RAMFS_OPEN, hash, flags);
	if (err)
		return err;
	spin_lock(&fs->lock);
	COUNT(fs, lookups, 1);
	i = lookup_locked(fs, name, hash, NULL);
	if (i != RAMFS_NO_INODE && (flags & RAMFS_O_CREAT) &&
	    (flags & RAMFS_O_EXCL)) {
		spin_unlock(&fs->lock);
		return -RAMFS_EEXIST;
	}
	if (i == RAMFS_NO_INODE) {
		struct ramfs_inode *ino;
		uint32_t b = hash & (RAMFS_HASH_BUCKETS - 1);

		if (!(flags & RAMFS_O_CREAT)) {
			spin_unlock(&fs->lock);
			return -RAMFS_ENOENT;
		}
		i = fs->free_head;
		if (i == RAMFS_NO_INODE) {
			spin_unlock(&fs->lock);
			return -RAMFS_ENOSPC;
		}
		ino = &fs->inode[i];
		fs->free_head = ino->next;
		kassert(!ino->used && !ino->index && ino->npages == 0);
		ino->used = true;
		ino->linked = true;
		ino->nopen = 0;
		ino->size = 0;
		ino->hash = hash;
		strlcpy(ino->name, name, sizeof(ino->name));
		ino->next = fs->bucket[b];
		fs->bucket[b] = i;
		fs->nlinked++;
		COUNT(fs, creates, 1);
	}
	fs->inode[i].nopen++;
	spin_unlock(&fs->lock);
	COUNT(fs, opens, 1);
	if (flags & RAMFS_O_TRUNC)
		ramfs_truncate(fs, i, 0);
	return i;
}

/* The inode behind a handle, or NULL if it is not an open handle. */
static struct ramfs_inode *handle_inode(struct ramfs *fs, int h)
{
	struct ramfs_inode *ino;

	if (h < 0 || (unsigned)h >= fs->max_files)
		return NULL;
	ino = &fs->inode[h];
	if (!READ_ONCE(ino->used) || READ_ONCE(ino->nopen) == 0)
		return NULL;
	return ino;
}

int ramfs_close(struct ramfs *fs, int h)
{
	struct ramfs_inode *ino;

	trace_point(ramfs_op, TRACE_RAMFS_CLOSE, (uint32_t)h, 0);
	spin_lock(&fs->lock);
	ino = handle_inode(fs, h);
	if (!ino) {
		spin_unlock(&fs->lock);
		return -RAMFS_EBADF;
	}
	if (--ino->nopen == 0 && !ino->linked)
		inode_release(fs, h);
	spin_unlock(&fs->lock);
	COUNT(fs, closes, 1);
	return 0;
}

int ramfs_unlink(struct ramfs *fs, const char *name)
{
	uint32_t hash = name_hash(name);

	trace_point(ramfs_op, TRACE_RAMFS_UNLINK, hash, 0);	int32_t *link, i;
	int err = check_name(name);

	if (err)
		return err;
	spin_lock(&fs->lock);
	i = lookup_locked(fs, name, hash, &link);
	if (i == RAMFS_NO_INODE) {
		spin_unlock(&fs->lock);
		return -RAMFS_ENOENT;
	}
	*link = fs->inode[i].next;
	fs->inode[i].linked = false;
	fs->nlinked--;
	if (fs->inode[i].nopen == 0)
		inode_release(fs, i);
	spin_unlock(&fs->lock);
	COUNT(fs, unlinks, 1);
	return 0;
}

long ramfs_read(struct ramfs *fs, int h, uint64_t off, void *buf,
		size_t len)
{
	struct ramfs_inode *ino = handle_inode(fs, h);
	uint8_t *dst = buf;
	size_t done = 0;

	trace_point(ramfs_op, TRACE_RAMFS_READ, (uint32_t)h, len);
	if (!ino)
		return -RAMFS_EBADF;
	spin_lock(&ino->lock);
	if (off >= ino->size)
		len = 0;
	else if (len > ino->size - off)
		len = (size_t)(ino->size - off);
	while (done < len) {
		uint64_t pos = off + done;
		size_t in_page = pos % RAMFS_PAGE_SIZE;
		size_t n = MIN(len - done, RAMFS_PAGE_SIZE - in_page);
		const uint8_t *page = ino->index ?
			ino->index[pos / RAMFS_PAGE_SIZE] : NULL;

		trace_point(ramfs_page, (uint32_t)h, pos / RAMFS_PAGE_SIZE,
			    (uintptr_t)page);
		if (page)
			memcpy(dst + done, page + in_page, n);
		else
			memset(dst + done, 0, n); /* a hole */
		done += n;
	}
	spin_unlock(&ino->lock);
	COUNT(fs, reads, 1);
	COUNT(fs, bytes_read, done);
	return (long)done;
}

/* ramfs_write()'s copy, in the type of a ramfs_copy_fn. */
static inline void copy_memcpy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

/*
 * The write path, with the copy into the pages made by copy. Always
 * inlined: at each call copy is either a constant (ramfs_write(), whose
 * code is then the same as if memcpy were written here) or the caller's.
 */
static inline __attribute__((always_inline)) long
write_with(struct ramfs *fs, int h, uint64_t off, const void *buf,
	   size_t len, ramfs_copy_fn copy)
{
	struct ramfs_inode *ino = handle_inode(fs, h);
	const uint8_t *src = buf;

	size_t done = 0;
	long ret;

	trace_point(ramfs_op, TRACE_RAMFS_WRITE, (uint32_t)h, len);
	if (!ino)
		return -RAMFS_EBADF;
	if (off > RAMFS_FILE_MAX_SIZE || len > RAMFS_FILE_MAX_SIZE - off)
		return -RAMFS_EFBIG;
	spin_lock(&ino->lock);
	if (len && !ino->index) {
		ino->index = get_page(fs);
		if (!ino->index) {
			spin_unlock(&ino->lock);
			return -RAMFS_ENOMEM;
		}
	}
	while (done < len) {
		uint64_t pos = off + done;
		size_t in_page = pos % RAMFS_PAGE_SIZE;
		size_t n = MIN(len - done, RAMFS_PAGE_SIZE - in_page);
		void **slot = &ino->index[pos / RAMFS_PAGE_SIZE];

		trace_point(ramfs_page, (uint32_t)h, pos / RAMFS_PAGE_SIZE,
			    (uintptr_t)*slot);
		if (!*slot) {
			*slot = get_page(fs);
			if (!*slot)
				break;
			ino->npages++;
		}
		copy((uint8_t *)*slot + in_page, src + done, n);
		done += n;
	}
	if (done && off + done > ino->size)
		ino->size = off + done;
	ret = done == len ? (long)len : -RAMFS_ENOMEM;
	spin_unlock(&ino->lock);
	COUNT(fs, writes, 1);
	COUNT(fs, bytes_written, done);
	return ret;
}

long ramfs_write(struct ramfs *fs, int h, uint64_t off, const void *buf,
		 size_t len)
{
	return write_with(fs, h, off, buf, len, copy_memcpy);
}

long ramfs_write_with(struct ramfs *fs, int h, uint64_t off,
		      const void *buf, size_t len, ramfs_copy_fn copy)
{
	return write_with(fs, h, off, buf, len, copy);
}

int ramfs_truncate(struct ramfs *fs, int h, uint64_t size)
{
	struct ramfs_inode *ino = handle_inode(fs, h);

	if (!ino)
		return -RAMFS_EBADF;
	if (size > RAMFS_FILE_MAX_SIZE)
		return -RAMFS_EFBIG;
	spin_lock(&ino->lock);
	if (size < ino->size && ino->index) {
		uint64_t keep = (size + RAMFS_PAGE_SIZE - 1) / RAMFS_PAGE_SIZE;
		size_t tail = size % RAMFS_PAGE_SIZE;

		/* A later extension must read zeros, not the old bytes. */
		if (tail && ino->index[size / RAMFS_PAGE_SIZE])
			memset((uint8_t *)ino->index[size / RAMFS_PAGE_SIZE] +
				       tail,
			       0, RAMFS_PAGE_SIZE - tail);
		drop_pages_from(fs, ino, keep);
	}
	ino->size = size;
	spin_unlock(&ino->lock);
	COUNT(fs, truncates, 1);
	return 0;
}

static void fill_stat(struct ramfs *fs, int32_t i, struct ramfs_stat *st)
{
	struct ramfs_inode *ino = &fs->inode[i];

	spin_lock(&ino->lock);
	st->size = ino->size;
	st->pages = ino->npages;
	spin_unlock(&ino->lock);
	st->ino = (uint32_t)i;
	st->nopen = READ_ONCE(ino->nopen);
}

int ramfs_fstat(struct ramfs *fs, int h, struct ramfs_stat *st)
{
	if (!handle_inode(fs, h))
		return -RAMFS_EBADF;
	fill_stat(fs, h, st);
	COUNT(fs, stats, 1);
	return 0;
}

int ramfs_stat(struct ramfs *fs, const char *name, struct ramfs_stat *st)
{
	int32_t i;
	int err = check_name(name);

	if (err)
		return err;
	spin_lock(&fs->lock);
	COUNT(fs, lookups, 1);
	i = lookup_locked(fs, name, name_hash(name), NULL);
	if (i != RAMFS_NO_INODE)
		fill_stat(fs, i, st);
	spin_unlock(&fs->lock);
	COUNT(fs, stats, 1);
	return i == RAMFS_NO_INODE ? -RAMFS_ENOENT : 0;
}

unsigned ramfs_file_count(struct ramfs *fs)
{
	return READ_ONCE(fs->nlinked);
}

uint64_t ramfs_pages_held(struct ramfs *fs)
{
	return READ_ONCE(fs->pages);
}

void ramfs_get_counters(struct ramfs *fs, struct ramfs_counters *out)
{
	const uint64_t *src = (const uint64_t *)&fs->ctr;
	uint64_t *dst = (uint64_t *)out;

	BUILD_ASSERT(sizeof(struct ramfs_counters) % sizeof(uint64_t) == 0);
	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = atomic_load_relaxed(&src[i]);
}

const char *ramfs_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case 0: return "success";
	case RAMFS_ENOENT: return "no such file";
	case RAMFS_EBADF: return "bad handle";
	case RAMFS_ENOMEM: return "out of memory";
	case RAMFS_EEXIST: return "file exists";
	case RAMFS_EINVAL: return "invalid argument";
	case RAMFS_EFBIG: return "file too large";
	case RAMFS_ENOSPC: return "no free inode";
	case RAMFS_ENAMETOOLONG: return "name too long";
	default: return "unknown error";
	}
}
