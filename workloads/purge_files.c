/*
 * purge_files: the files of the tlb_purge experiment's load (see
 * workloads/purge_files.h). They live in the kernel's page cache
 * (mm/filemap.h): the streamer reads them with find_get_page() and
 * readahead, a job's toolchain regions map the cached pages, and reclaim
 * (the experiment's) takes the oldest cached pages out of the cache and
 * unmaps them from every space.
 */
#include "workloads/purge_files.h"
#include "lib/atomic.h"
#include "lib/string.h"
#include "mm/filemap.h"
#include "workloads/pagefile.h"

#define PURGE_FILE_ID_BASE 0x300	/* pagefile ids of the files */

/* The streamer's files and the toolchain, and the streamer's place. */
static struct {
	struct pagefile f[PURGE_FILES];
	struct address_space m[PURGE_FILES];
	struct pagefile tool_f[PURGE_TOOL_FILES];
	struct address_space tool_m[PURGE_TOOL_FILES];
	struct file_ra_state ra; /* the streamer's, per file in turn */
	uint64_t pos;		 /* the streamer's next page */
	uint64_t bad_pages;	 /* streamed pages with wrong data */
} pc;

static uint32_t file_id(uint64_t file)
{
	return (uint32_t)(PURGE_FILE_ID_BASE + file);
}

static uint32_t tool_id(unsigned f)
{
	return (uint32_t)(PURGE_TOOL_ID_BASE + f);
}

struct address_space *purge_tool_mapping(unsigned f)
{
	return &pc.tool_m[f];
}

unsigned purge_tool_pages(void)
{
	uint64_t n = 0;

	for (unsigned f = 0; f < PURGE_TOOL_FILES; f++)
		n += READ_ONCE(pc.tool_m[f].nrpages);
	return (unsigned)n;
}

unsigned purge_cache_pages(void)
{
	uint64_t n = 0;

	for (unsigned f = 0; f < PURGE_FILES; f++)
		n += READ_ONCE(pc.m[f].nrpages);
	return (unsigned)n;
}

uint64_t purge_cache_reads(void)
{
	uint64_t n = 0;

	for (unsigned f = 0; f < PURGE_FILES; f++)
		n += READ_ONCE(pc.f[f].reads);
	return n;
}

uint64_t purge_cache_evicted(void)
{
	uint64_t n = 0;

	for (unsigned f = 0; f < PURGE_FILES; f++)
		n += READ_ONCE(pc.m[f].reclaimed_pages);
	return n;
}

bool purge_stream(void)
{
	uint64_t file = pc.pos / PURGE_FILE_PAGES;
	uint64_t index = pc.pos % PURGE_FILE_PAGES;
	struct address_space *m = &pc.m[file];
	struct page *p;

	pc.pos = (pc.pos + 1) % PURGE_CACHE_SLOTS;
	p = find_get_page(m, index);
	if (!p) {
		if (index == 0)
			file_ra_state_init(&pc.ra); /* the next file */
		page_cache_readahead(m, &pc.ra, index);
		p = find_get_page(m, index);
		if (!p)
			return false;
	}
	if (!pagefile_page_spot_ok(file_id(file), index, page_data(p)))
		pc.bad_pages++;
	page_cache_release(p);
	return true;
}

void purge_files_init(void)
{
	memset(&pc, 0, sizeof(pc));
	file_ra_state_init(&pc.ra);
	for (unsigned f = 0; f < PURGE_FILES; f++) {
		pc.f[f] = (struct pagefile){.id = file_id(f),
					    .size_pages = PURGE_FILE_PAGES};
		address_space_init(&pc.m[f], PAGECACHE_LOCKLESS_GANG,
				   &pagefile_store, &pc.f[f], PURGE_FILE_PAGES,
				   NULL, NULL);
	}
	for (unsigned f = 0; f < PURGE_TOOL_FILES; f++) {
		pc.tool_f[f] = (struct pagefile){
			.id = tool_id(f), .size_pages = PURGE_TOOL_PAGES};
		address_space_init(&pc.tool_m[f], PAGECACHE_LOCKLESS_GANG,
				   &pagefile_store, &pc.tool_f[f],
				   PURGE_TOOL_PAGES, NULL, NULL);
	}
}

uint64_t purge_bad_pages(void)
{
	return pc.bad_pages;
}

void purge_files_free(void)
{
	for (unsigned f = 0; f < PURGE_FILES; f++)
		truncate_inode_pages(&pc.m[f]);
	for (unsigned f = 0; f < PURGE_TOOL_FILES; f++)
		truncate_inode_pages(&pc.tool_m[f]);
}
