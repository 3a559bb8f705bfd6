/*
 * purge_load: the load under the tlb_purge experiment's reclaim (see
 * workloads/purge_load.h). The files live in the kernel's page cache
 * (mm/filemap.h): the streamer reads them with find_get_page() and
 * readahead, a job's toolchain regions map the cached pages, and reclaim
 * (the experiment's) takes the oldest cached pages out of the cache and
 * unmaps them from every space. There is no swap: a reclaimed anonymous
 * page comes back zeroed. The jobs check every word they read: a
 * toolchain word must hold the file's pattern, a heap word zero or what
 * the space wrote.
 */
#include "workloads/purge_load.h"
#include "arch/x86_64/tlb.h"
#include "lib/atomic.h"
#include "lib/string.h"
#include "mm/filemap.h"
#include "mm/tlb.h"
#include "workloads/pagefile.h"

#define PURGE_TOOL_ID_BASE 0x380	/* pagefile ids of the toolchain */
#define PURGE_FILE_ID_BASE 0x300	/* pagefile ids of the files */
#define PURGE_TURN_PAGES 12	/* heap pages a space touches per turn */
#define PURGE_TURN_TOOL_PAGES PURGE_TOOL_PAGES /* a turn runs all of it */
#define PURGE_SPACE_LIFE 6	/* turns before a space exits */
/* A page's word 0 holds this tag, the space's serial and the page. */
#define PURGE_TAG 0x7c0000000000ull
#define PURGE_SERIAL_SHIFT 16

/* ---- the files, in the kernel's page cache ------------------------ */

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

static void cache_setup(void)
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

void purge_load_free(void)
{
	for (unsigned f = 0; f < PURGE_FILES; f++)
		truncate_inode_pages(&pc.m[f]);
	for (unsigned f = 0; f < PURGE_TOOL_FILES; f++)
		truncate_inode_pages(&pc.tool_m[f]);
}

/* ---- the jobs ------------------------------------------------------ */

/* Shared by every job. */
static struct {
	const struct purge_load_ops *ops;
	bool stop;
	uint64_t round_limit;	/* purge_load_limit_rounds(); 0: none */
	uint64_t next_serial;
} pl;

/* Where toolchain file f is mapped in every job space. */
static uint64_t tool_va(unsigned f)
{
	return PURGE_TOOL_VA + (uint64_t)f * PURGE_TOOL_PAGES * PAGE_SIZE;
}

static volatile uint64_t *word0(uint64_t page)
{
	return (volatile uint64_t *)(PURGE_UVA + page * PAGE_SIZE);
}

static bool job_new_space(struct purge_job *j, unsigned k)
{
	struct addr_space *as = space_create("job");

	if (!as)
		return false;
	j->serial[k] = atomic_fetch_add_relaxed(&pl.next_serial, 1);
	if (space_add_anon(as, PURGE_UVA, PURGE_JOB_PAGES, VM_WRITE) != VM_OK) {
		space_destroy(as);
		return false;
	}
	for (unsigned f = 0; f < PURGE_TOOL_FILES; f++) {
		if (space_add_file(as, tool_va(f), PURGE_TOOL_PAGES,
				   &pc.tool_m[f], 0, 0) != VM_OK) {
			space_destroy(as);
			return false;
		}
	}
	j->sp[k] = as;
	j->slot[k] = pl.ops->space_new(as);
	j->turns[k] = 0;
	j->spaces++;
	return true;
}

/* The space exits: the CPU leaves it (a space is destroyed only when
 * loaded nowhere), then it goes, and only then is it reported gone:
 * until space_destroy() has taken its pages out of the reverse map,
 * reclaim may still unmap them, and a model must know the space then. */
static void job_end_space(struct purge_job *j, unsigned k)
{
	tlb_switch_to(&kernel_space);
	pl.ops->cpu_idle(j->cpu);
	space_destroy(j->sp[k]);
	pl.ops->space_gone(j->slot[k]);
	j->sp[k] = NULL;
}

#define PURGE_TURN_TOUCHES                                                    \
	(PURGE_TURN_PAGES + PURGE_TOOL_FILES * PURGE_TURN_TOOL_PAGES)

/* One turn of space k: switch to it (from the previous job's space),
 * touch pages; it stays loaded until the next turn's switch. */
static void job_turn(struct purge_job *j, unsigned k)
{
	uint64_t tag = PURGE_TAG | j->serial[k] << PURGE_SERIAL_SHIFT;
	uint64_t touched[PURGE_TURN_TOUCHES];
	unsigned n = 0;

	tlb_switch_to(j->sp[k]);
	for (unsigned i = 0; i < PURGE_TURN_PAGES; i++) {
		uint64_t page = (j->turns[k] * PURGE_TURN_PAGES + i) % PURGE_JOB_PAGES;
		uint64_t v = *word0(page); /* faults it in if needed */

		/* Zero (new or reclaimed) or this space's own tag. */
		if (v != 0 && v != (tag | page))
			j->bad_words++;
		*word0(page) = tag | page;
		touched[n++] = PURGE_UVA + page * PAGE_SIZE;
	}
	for (unsigned f = 0; f < PURGE_TOOL_FILES; f++) {
		for (unsigned i = 0; i < PURGE_TURN_TOOL_PAGES; i++) {
			uint64_t page = (j->turns[k] * PURGE_TURN_TOOL_PAGES + i) %
					PURGE_TOOL_PAGES;
			uint64_t va = tool_va(f) + page * PAGE_SIZE;
			unsigned w = (unsigned)((j->touches + n) %
						(PAGE_SIZE / 8));

			/* A toolchain word is the file's, whichever frame
			 * holds it. */
			if (*(volatile uint64_t *)(va + w * 8) !=
			    pagefile_word(tool_id(f), page, w))
				j->bad_words++;
			touched[n++] = va;
		}
	}
	j->touches += n;
	pl.ops->turn(j->cpu, j->slot[k], touched, n);
}

void purge_job_main(void *arg)
{
	struct purge_job *j = arg;

	while (!atomic_load_acquire(&pl.stop)) {
		uint64_t limit = atomic_load_acquire(&pl.round_limit);

		if (limit && j->rounds >= limit) {
			cpu_relax(); /* parked in its last space */
			continue;
		}
		for (unsigned k = 0; k < PURGE_JOB_SPACES; k++) {
			if (!j->sp[k] && !job_new_space(j, k))
				continue; /* no memory now: next turn */
			job_turn(j, k);
			if (++j->turns[k] == PURGE_SPACE_LIFE)
				job_end_space(j, k);
		}
		atomic_store_release(&j->rounds, j->rounds + 1);
	}
	for (unsigned k = 0; k < PURGE_JOB_SPACES; k++)
		if (j->sp[k])
			job_end_space(j, k);
}

void purge_load_init(const struct purge_load_ops *ops)
{
	pl.ops = ops;
	pl.stop = false;
	pl.round_limit = 0;
	pl.next_serial = 1;
	cache_setup();
}

void purge_load_stop(void)
{
	atomic_store_release(&pl.stop, true);
}

void purge_load_limit_rounds(uint64_t rounds)
{
	atomic_store_release(&pl.round_limit, rounds);
}
