/*
 * The WB-versus-UC chase and its verdict (see memtype_check.h).
 */
#include "kernel/bench/bench_env.h"
#include "kernel/bench/memtype_check.h"
#include "lib/assert.h"
#include "lib/bench.h"
#include "lib/kprintf.h"
#include "lib/prng.h"
#include "mm/page.h"
#include "mm/page_alloc.h"
#include "mm/vm.h"

#define CHASE_SEED 0x2545f4914f6cdd1dull
#define WORDS_PER_SLOT (MEMCHASE_SLOT_BYTES / sizeof(uint64_t))
#define MAX_SLOTS (MEMCHASE_MAX_BYTES / MEMCHASE_SLOT_BYTES)

#define QUICK_ORDER 2 /* 16 KiB */
#define QUICK_LOADS 4096
#define QUICK_RUNS 9 /* best of: a host stall of one run or a few leaves it */

void memchase_build(struct memchase *c)
{
	size_t slots = c->bytes / MEMCHASE_SLOT_BYTES;
	uint64_t rng = prng_seed(CHASE_SEED);
	/* 64 KiB: far too big for a 16 KiB kernel stack (the guard page
	 * caught exactly that). */
	static uint32_t order[MAX_SLOTS];

	kassert(slots >= 2 && slots <= MAX_SLOTS);
	/* One cycle: from any slot the chase visits every other. */
	prng_cycle(&rng, order, slots);
	for (size_t i = 0; i < slots; i++)
		c->words[order[i] * WORDS_PER_SLOT] =
			(uint64_t)&c->words[order[(i + 1) % slots] *
					    WORDS_PER_SLOT];
	c->cursor = &c->words[order[0] * WORDS_PER_SLOT];
}

void memchase_run(void *arg, uint64_t iters)
{
	struct memchase *c = arg;
	uint64_t *p = c->cursor;

	for (uint64_t i = 0; i < iters; i++)
		p = (uint64_t *)*(volatile uint64_t *)p;
	c->cursor = p;
}

bool memchase_is_one_cycle(const struct memchase *c)
{
	size_t slots = c->bytes / MEMCHASE_SLOT_BYTES;
	uint64_t *start = c->cursor, *p = start;

	for (size_t i = 0; i < slots; i++) {
		p = (uint64_t *)*p;
		if (p == start)
			return i + 1 == slots;
	}
	return false;
}

int memchase_retype(struct memchase *c, enum memtype t)
{
	int err = set_memory_type(c->words, c->bytes >> PAGE_SHIFT, t);

	if (err)
		kprintf("memtype: cannot map the buffer %s: %s\n",
			memtype_name(t), vm_strerror(err));
	return err;
}

enum bench_tristate memtype_verdict_from(uint64_t wb_latency,
					 uint64_t uc_latency)
{
	if (wb_latency == 0 || uc_latency == 0)
		return BENCH_UNKNOWN;
	if (uc_latency >= MEMTYPE_HONOURED_RATIO * wb_latency)
		return BENCH_YES;
	if (uc_latency * 10 < MEMTYPE_IGNORED_RATIO_X10 * wb_latency)
		return BENCH_NO;
	return BENCH_UNKNOWN;
}

/* Best chase latency (TSC cycles per load, scaled) with type t; 0 if the
 * buffer could not be retyped. */
static uint64_t quick_latency(struct memchase *c, enum memtype t)
{
	const struct bench_clock *clk = bench_kernel_clock();
	uint64_t best = UINT64_MAX;

	if (memchase_retype(c, t))
		return 0;
	for (int run = 0; run < QUICK_RUNS; run++) {
		uint64_t t0 = clk->now();

		memchase_run(c, QUICK_LOADS);
		t0 = clk->now() - t0;
		if (t0 < best)
			best = t0;
	}
	return best * BENCH_SCALE / QUICK_LOADS;
}

enum bench_tristate memtype_check_quick(void)
{
	struct memchase c = {0};
	uint64_t wb, uc;

	c.words = page_alloc(QUICK_ORDER);
	if (!c.words)
		return BENCH_UNKNOWN;
	c.bytes = PAGE_SIZE << QUICK_ORDER;
	memchase_build(&c);
	wb = quick_latency(&c, MEMTYPE_WB);
	uc = quick_latency(&c, MEMTYPE_UC);
	/* page_free() insists on WB frames. */
	if (memchase_retype(&c, MEMTYPE_WB))
		return BENCH_UNKNOWN;
	page_free(c.words, QUICK_ORDER);
	return memtype_verdict_from(wb, uc);
}
