/*
 * purge_jobs: the compile-shaped jobs of the tlb_purge experiment's load
 * (see workloads/purge_jobs.h). There is no swap: a reclaimed anonymous
 * page comes back zeroed. The jobs check every word they read: a
 * toolchain word must hold the file's pattern, a heap word zero or what
 * the space wrote.
 */
#include "workloads/purge_jobs.h"
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/tlb.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/string.h"
#include "mm/tlb.h"
#include "workloads/purge_files.h"

#define PURGE_TURN_PAGES 12	/* heap pages a space touches per turn */
#define PURGE_TURN_TOOL_PAGES PURGE_TOOL_PAGES /* a turn runs all of it */
#define PURGE_SPACE_LIFE 6	/* turns before a space exits */
/* A page's word 0 holds this tag, the space's serial and the page. */
#define PURGE_TAG 0x7c0000000000ull
#define PURGE_SERIAL_SHIFT 16

/* Shared by every job, and the jobs themselves. */
static struct {
	const struct purge_jobs_ops *ops;
	bool stop;
	uint64_t round_limit;	/* purge_jobs_limit_rounds(); 0: none */
	uint64_t next_serial;
	struct purge_job jobs[PURGE_MAX_JOBS];
	unsigned njobs;		/* started */
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
				   purge_tool_mapping(f), 0, 0) != VM_OK) {
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
			    purge_tool_word(f, page, w))
				j->bad_words++;
			touched[n++] = va;
		}
	}
	j->touches += n;
	pl.ops->turn(j->cpu, j->slot[k], touched, n);
}

/* A job CPU's loop (an smp_work function, arg its struct purge_job):
 * turns of its spaces, round after round, until purge_jobs_stop(); then
 * it destroys them. */
static void job_main(void *arg)
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

void purge_jobs_init(const struct purge_jobs_ops *ops)
{
	memset(&pl, 0, sizeof(pl));
	pl.ops = ops;
	pl.next_serial = 1;
}

void purge_jobs_limit_rounds(uint64_t rounds)
{
	atomic_store_release(&pl.round_limit, rounds);
}

unsigned purge_jobs_start(unsigned n)
{
	kassert(n <= PURGE_MAX_JOBS);
	for (unsigned i = 0; i < n; i++) {
		pl.jobs[i].cpu = i + 1;
		if (!smp_work_post(i + 1, job_main, &pl.jobs[i]))
			break;
		pl.njobs++;
	}
	return pl.njobs;
}

bool purge_jobs_done_rounds(uint64_t rounds)
{
	for (unsigned i = 0; i < pl.njobs; i++)
		if (atomic_load_acquire(&pl.jobs[i].rounds) < rounds)
			return false;
	return true;
}

bool purge_jobs_advance(uint64_t n, uint64_t end_tsc)
{
	purge_jobs_limit_rounds(pl.round_limit + n);
	while (!purge_jobs_done_rounds(pl.round_limit))
		if (rdtsc() >= end_tsc)
			return false;
		else
			cpu_relax();
	return true;
}

uint64_t purge_jobs_stop(void)
{
	uint64_t bad = 0;

	atomic_store_release(&pl.stop, true);
	for (unsigned i = 0; i < pl.njobs; i++) {
		smp_work_wait(i + 1);
		bad += pl.jobs[i].bad_words;
	}
	return bad;
}

unsigned purge_jobs_count(void)
{
	return pl.njobs;
}

const struct purge_job *purge_job_get(unsigned i)
{
	kassert(i < pl.njobs);
	return &pl.jobs[i];
}
