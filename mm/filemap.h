/*
 * The page cache: file pages kept in memory, found by (file, page index)
 * through a radix tree per file (struct address_space), with the lockless
 * lookup protocol of Linux's find_get_page() and the four locking variants
 * the splice experiment compares. Function names follow Linux's, so that
 * profiles read like the 2006 ones. See docs/pagecache.md.
 *
 * Layers: this is portable mm/ code. Where file contents come from (a
 * struct backing_store) and where frames come from (a struct
 * page_frame_ops) are interfaces declared here and implemented above (the
 * kernel's page allocator, a workload's files, a host test's arrays).
 *
 * Reference counts: a page in the cache holds one reference for the cache.
 * Every page returned by a find_* function carries one more reference for
 * the caller, who drops it with page_cache_release().
 */
#ifndef MM_FILEMAP_H
#define MM_FILEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/compiler.h"
#include "lib/rwlock.h"
#include "lib/spinlock.h"
#include "mm/page.h"
#include "mm/radix_tree.h"

/* How lookups synchronise with the writers of the tree. */
enum pagecache_variant {
	/* Every lookup under the tree's read lock (an rwlock). */
	PAGECACHE_VANILLA = 0,
	/* Single lookups lockless; gang lookups under the tree's spinlock,
	 * as in the 2006 lockless patches (the curve that collapsed). */
	PAGECACHE_LOCKLESS,
	/* Single lockless lookups only: gang users loop find_get_page(). */
	PAGECACHE_LOCKLESS_NOGANG,
	/* Gang lookups lockless too: what Linux kept. */
	PAGECACHE_LOCKLESS_GANG,
	PAGECACHE_VARIANTS,
};

/* The variant's name in results ("vanilla", "lockless", ...). */
const char *pagecache_variant_name(enum pagecache_variant v);

/* Where a file's contents come from. */
struct backing_store {
	/*
	 * Copy page index of file into buf (PAGE_SIZE bytes; the tail past
	 * the end of the file is zeroed). Returns false past the end.
	 */
	bool (*read_page)(void *file, uint64_t index, void *buf);
};

/* Where page frames come from (count 1 on alloc; 0 when handed back). */
struct page_frame_ops {
	struct page *(*alloc)(void);  /* NULL when memory is exhausted */
	void (*free)(struct page *p); /* count already 0 */
	void *(*address)(struct page *p);
};

/*
 * One cached file. Cache-line aligned: a file's lock words, which every
 * lookup writes in the locked variants, never share a line with another
 * file's tree root (the per-file runs must not contend by accident).
 */
struct address_space {
	struct radix_tree_root page_tree;
	enum pagecache_variant variant;
	struct rwlock tree_rwlock; /* vanilla: lookups read, writers write */
	struct spinlock tree_lock; /* lockless variants: writers (and the
				      lockless variant's gang lookups) */
	uint64_t nrpages;	   /* pages in the tree (writers' lock) */
	uint64_t size_pages;	   /* file size */
	const struct backing_store *store;
	void *file;		   /* the store's handle */
	uint64_t readahead_pages;  /* pages read in by readahead */
	uint64_t reclaimed_pages;  /* pages reclaimed from this file */
	/* lockless: reclaim's trylocks lost in a row (lru_lock held), and
	 * the flag that sends gang lookups lockless until it wins. */
	uint32_t reclaim_busy;
	uint32_t reclaim_waiting;
} __aligned(CACHE_LINE_SIZE);

/* Readahead state of one reader of a file (Linux's file_ra_state). */
struct file_ra_state {
	uint64_t start;    /* first page of the current window */
	uint64_t size;     /* pages in it */
	uint64_t prev;     /* last page requested, or UINT64_MAX */
};

/* The kernel reclaims cached pages when fewer frames than this are free
 * (4 MiB). */
#define PAGECACHE_LOW_WATERMARK_PAGES 1024

/* lockless: reclaim failing this many trylocks of a file in a row makes
 * that file's gang lookups take no lock until reclaim gets it. */
#define RECLAIM_BUSY_LIMIT 8

#define READAHEAD_MIN_PAGES 4
#define READAHEAD_MAX_PAGES 64

/* Set the frame source; call once before any other function. */
void pagecache_init(const struct page_frame_ops *frames);

/*
 * An empty cache for a file of size_pages pages read through store.
 * rw_stats/spin_stats (may be NULL) collect the two locks' statistics.
 */
void address_space_init(struct address_space *m, enum pagecache_variant v,
			const struct backing_store *store, void *file,
			uint64_t size_pages, struct rwlock_stats *rw_stats,
			struct lock_stats *spin_stats);

/* Drop every page (no lookup may run). Returns the pages freed. */
uint64_t truncate_inode_pages(struct address_space *m);

/* The page at index with a reference for the caller, or NULL. */
struct page *find_get_page(struct address_space *m, uint64_t index);

/*
 * Up to nr pages at start, start+1, ... up to the first gap, each with a
 * reference for the caller, into pages[]. Returns the count.
 */
unsigned find_get_pages_contig(struct address_space *m, uint64_t start,
			       unsigned nr, struct page **pages);

/*
 * Insert page (count >= 1, filled, not in any cache) at index: the cache
 * takes its own reference and puts it on the LRU. Returns 0, or
 * RADIX_TREE_EEXIST / RADIX_TREE_ENOMEM (page untouched).
 */
int add_to_page_cache_lru(struct page *page, struct address_space *m,
			  uint64_t index);

/* Remove page from its cache (the caller holds a reference); drops the
 * cache's reference. Returns false if it was no longer cached. */
bool remove_from_page_cache(struct page *page);

/* Drop a reference; frees the frame when it was the last. */
void page_cache_release(struct page *page);

/* The page's data (through the frame source). */
void *page_data(struct page *page);

/*
 * Read pages [start, start + nr) that are not cached yet from the store
 * into the cache. Returns the pages read in (fewer when memory runs out).
 */
unsigned __do_page_cache_readahead(struct address_space *m, uint64_t start,
				   unsigned nr);

/*
 * On a miss at index: grow the reader's window when the access is
 * sequential (doubling, READAHEAD_MIN_PAGES..READAHEAD_MAX_PAGES), reset
 * it otherwise, and read the window in. Returns pages read in.
 */
unsigned page_cache_readahead(struct address_space *m,
			      struct file_ra_state *ra, uint64_t index);
void file_ra_state_init(struct file_ra_state *ra);

/*
 * Reclaim up to nr clean pages that only the cache references, oldest
 * first, without waiting for any lock (a busy file is skipped). Safe
 * against concurrent lockless lookups (see filemap.c). Returns the pages
 * freed. Suitable as the page allocator's reclaim hook.
 */
uint64_t shrink_page_cache(uint64_t nr);

/*
 * Take the oldest page on the LRU out of its cache, whoever references
 * it (reclaim of mapped pages: the caller unmaps it next), without
 * waiting for any lock (a busy file's page is rotated). The cache's
 * reference becomes the caller's: it drops it with page_cache_release().
 * Returns NULL when no page could be taken.
 */
struct page *pagecache_evict_oldest(void);
/*
 * The same, taking only a page for which may_evict(page) says yes (it
 * runs under the file's writer lock and the LRU lock; others rotate like
 * busy ones). Reclaim of mapped pages passes "nobody holds it but the
 * cache and its mappings", the check Linux's reference freeze makes.
 */
struct page *pagecache_evict_oldest_if(bool (*may_evict)(struct page *));

/* Pages on the LRU (all cached pages of all files). */
uint64_t pagecache_lru_pages(void);

/*
 * Cumulative statistics of every file since boot (never reset, so that
 * runs can be compared by difference). A lookup is one find_get_page()
 * or find_get_pages_contig() call; it hits when it returns a page.
 */
struct pagecache_stats {
	uint64_t lookups, hits, misses;
	uint64_t readahead_pages;   /* read in by readahead */
	uint64_t reclaimed_pages;   /* taken out by shrink_page_cache() or
				     * pagecache_evict_oldest() */
	uint64_t cached_pages;      /* on the LRU now */
	uint64_t rcu_grace_periods; /* completed, all users (lib/rcu.h) */
};

/*
 * Start counting, per CPU (the CPU number of lib/this_cpu.h). Until this
 * is called nothing is counted.
 */
void pagecache_stats_enable(void);
/* Sum the per-CPU counters into *out (a snapshot, not atomic as a whole). */
void pagecache_stats_read(struct pagecache_stats *out);

#endif
