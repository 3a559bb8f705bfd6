/*
 * The boot's pointer-chase latency sweep (see cache_sweep.h).
 *
 *   buffer: up to SWEEP_MAX_CHUNKS chunks of 2 MiB from the page
 *   allocator (nothing needs to be contiguous: the chase follows
 *   pointers). For a working set of N lines = P pages x 64 lines:
 *
 *     position k -> line line_order[k % 64] of page page_order[k / 64]
 *     slot(k) holds the address of slot(k + 1), slot(N - 1) of slot(0)
 *
 *   so one pass visits every line once (one cycle), a page's 64 lines in
 *   a row in shuffled order, the pages in shuffled order.
 *
 * Invariants:
 *   1. Every working set is a power of two between SWEEP_MIN_BYTES and
 *      the memory obtained, so P is a whole number of pages.
 *   2. A size is timed only after one full unmeasured pass (warm).
 *   3. The buffer is given back before cache_sweep_run() returns.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/tsc.h"
#include "kernel/bench/bench_env.h"
#include "kernel/bench/cache_sweep.h"
#include "kernel/options.h"
#include "lib/assert.h"
#include "lib/bench.h"
#include "lib/compiler.h"
#include "lib/kprintf.h"
#include "lib/prng.h"
#include "mm/page.h"
#include "mm/page_alloc.h"

#define SWEEP_MIN_BYTES KiB(4)
#define SWEEP_LLC_MULTIPLE 4		/* sweep up to 4x the LLC ... */
#define SWEEP_MAX_BYTES MiB(64)		/* ... but no further */
/* Under TCG the guest has no cache: the sweep sees the host's caches
 * through the emulator whatever LLC the CPU model claims, so it stops
 * here (a 64 MiB sweep costs every boot two seconds more, for nothing). */
#define SWEEP_TCG_MAX_BYTES MiB(16)
#define SWEEP_CHUNK_ORDER 9		/* 2 MiB */
#define SWEEP_CHUNK_BYTES (PAGE_SIZE << SWEEP_CHUNK_ORDER)
#define SWEEP_MAX_CHUNKS (SWEEP_MAX_BYTES / SWEEP_CHUNK_BYTES)
#define SWEEP_MAX_PAGES (SWEEP_MAX_BYTES / PAGE_SIZE)
#define LINES_PER_PAGE (PAGE_SIZE / CACHE_LINE_SIZE)
#define WORDS_PER_LINE (CACHE_LINE_SIZE / sizeof(uint64_t))
/* Timed loads per size, after one full warm pass: enough to average over
 * many lines, few enough that the sweep stays a fraction of a second
 * under TCG (where a load that misses the host's caches costs ~100 ns). */
#define SWEEP_TIMED_LOADS 16384ull
#define SWEEP_RUNS 2			/* best of */
#define SWEEP_SEED 0x9e3779b97f4a7c15ull
/* Take at most this share of free memory (1/n). */
#define SWEEP_FREE_SHARE 4

static struct cache_point points[CACHE_SWEEP_MAX_POINTS];
static size_t npoints;
static struct cache_knees knees;
static enum bench_tristate verdict = BENCH_UNKNOWN;
static uint64_t sweep_cycles;
static bool ran;

static uint64_t *chunks[SWEEP_MAX_CHUNKS];
static uint32_t page_order[SWEEP_MAX_PAGES];
static uint32_t line_order[LINES_PER_PAGE];

enum bench_tristate cache_sweep_verdict(void)
{
	return verdict;
}

const char *cache_sweep_verdict_name(void)
{
	return verdict == BENCH_YES ? "yes" :
	       verdict == BENCH_NO  ? "no" :
				      "unknown";
}

/* A random permutation of 0..n-1 (Fisher-Yates). */
static void shuffle(uint32_t *a, size_t n, uint64_t *rng)
{
	for (size_t i = 0; i < n; i++)
		a[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = prng_next(rng) % (i + 1);
		uint32_t t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

/* Address of chase position k in a set of 'pages' pages. */
static uint64_t *slot(uint64_t k)
{
	uint64_t page = page_order[k / LINES_PER_PAGE];
	uint64_t off = page * PAGE_SIZE +
		       line_order[k % LINES_PER_PAGE] * CACHE_LINE_SIZE;

	return chunks[off / SWEEP_CHUNK_BYTES] +
	       (off % SWEEP_CHUNK_BYTES) / sizeof(uint64_t);
}

static uint64_t *build(uint64_t bytes, uint64_t *rng)
{
	uint64_t lines = bytes / CACHE_LINE_SIZE;
	uint64_t *first, *prev;

	shuffle(page_order, bytes / PAGE_SIZE, rng);
	first = prev = slot(0);
	for (uint64_t k = 1; k < lines; k++) {
		uint64_t *s = slot(k);

		*prev = (uint64_t)s;
		prev = s;
	}
	*prev = (uint64_t)first;
	return first;
}

static uint64_t *chase(uint64_t *p, uint64_t loads)
{
	for (uint64_t i = 0; i < loads; i++)
		p = (uint64_t *)*(volatile uint64_t *)p;
	return p;
}

/* TSC cycles per load x BENCH_SCALE for one working set. */
static uint64_t measure(uint64_t bytes, uint64_t *rng)
{
	uint64_t lines = bytes / CACHE_LINE_SIZE;
	uint64_t loads = SWEEP_TIMED_LOADS, best = UINT64_MAX;
	uint64_t *p = build(bytes, rng);

	p = chase(p, lines); /* invariant 2 */
	for (int run = 0; run < SWEEP_RUNS; run++) {
		uint64_t t0 = rdtsc_ordered(), t;

		p = chase(p, loads);
		t = rdtsc_ordered() - t0;
		best = MIN(best, t);
	}
	kassert(p != NULL);
	return best * BENCH_SCALE / loads;
}

void cache_sweep_run(void)
{
	uint64_t rng = prng_seed(SWEEP_SEED), want, got = 0;
	uint64_t t0 = rdtsc();
	unsigned nchunks = 0;

	if (ran)
		return;
	ran = true;
	want = bench_env_llc_bytes(NULL) * SWEEP_LLC_MULTIPLE;
	want = MIN(want, (uint64_t)(bench_env_is_tcg() ? SWEEP_TCG_MAX_BYTES :
							 SWEEP_MAX_BYTES));
	while (got < want && nchunks < SWEEP_MAX_CHUNKS &&
	       (page_alloc_free_pages() << PAGE_SHIFT) / SWEEP_FREE_SHARE >=
		       SWEEP_CHUNK_BYTES) {
		chunks[nchunks] = page_alloc(SWEEP_CHUNK_ORDER);
		if (!chunks[nchunks])
			break;
		nchunks++;
		got += SWEEP_CHUNK_BYTES;
	}
	shuffle(line_order, LINES_PER_PAGE, &rng);
	npoints = 0;
	for (uint64_t b = SWEEP_MIN_BYTES;
	     b <= got && npoints < CACHE_SWEEP_MAX_POINTS; b *= 2) {
		points[npoints].bytes = b;
		points[npoints++].latency = measure(b, &rng);
	}
	for (unsigned i = 0; i < nchunks; i++) /* invariant 3 */
		page_free(chunks[i], SWEEP_CHUNK_ORDER);
	verdict = cache_knees_find(points, npoints, &knees);
	sweep_cycles = rdtsc() - t0;
}

bool cache_sweep_caches_modelled(void)
{
	/* Under TCG a knee is the host's cache seen through the emulator:
	 * the guest CPU has no cache of its own to model. */
	return verdict == BENCH_YES && !bench_env_is_tcg();
}

static void print_bytes(uint64_t b)
{
	if (b >= MiB(1))
		kprintf("%3lu MiB", (unsigned long)(b >> 20));
	else
		kprintf("%3lu KiB", (unsigned long)(b >> 10));
}

void cache_sweep_print(void)
{
	uint64_t hz = tsc_hz();

	if (!ran)
		return;
	kprintf("caches: dependent-load latency by working set (random "
		"order; %s", bench_env_llc_text());
	if (bench_env_is_tcg())
		kprintf("; TCG: up to %lu MiB, the host's caches",
			(unsigned long)(SWEEP_TCG_MAX_BYTES >> 20));
	kprintf("):\n");
	for (size_t i = 0; i < npoints; i++) {
		uint64_t c = points[i].latency;
		uint64_t ns = hz ? c * 1000000000ull / hz : 0; /* scaled */

		kprintf("caches:   ");
		print_bytes(points[i].bytes);
		kprintf("  %4lu.%03lu cycles  %4lu.%03lu ns per load\n",
			(unsigned long)(c / BENCH_SCALE),
			(unsigned long)(c % BENCH_SCALE),
			(unsigned long)(ns / BENCH_SCALE),
			(unsigned long)(ns % BENCH_SCALE));
	}
	kprintf("caches: largest/smallest latency %u.%ux;",
		knees.overall_x10 / 10, knees.overall_x10 % 10);
	if (!knees.n)
		kprintf(" no knee");
	for (unsigned i = 0; i < knees.n; i++) {
		kprintf(" knee after ");
		print_bytes(knees.after_bytes[i]);
		kprintf(" (x%u.%u)", knees.ratio_x10[i] / 10,
			knees.ratio_x10[i] % 10);
	}
	kprintf("\ncaches: latency depends on the working set: %s "
		"(measured in %lu ms: >= %u.%ux with a knee is yes, <= %u.%ux "
		"is no)\n", cache_sweep_verdict_name(),
		(unsigned long)(tsc_cycles_to_ns(sweep_cycles) / 1000000),
		CACHE_MODELLED_RATIO_X10 / 10, CACHE_MODELLED_RATIO_X10 % 10,
		CACHE_FLAT_RATIO_X10 / 10, CACHE_FLAT_RATIO_X10 % 10);
	if (bench_env_is_tcg())
		kprintf("caches: modelled: no. This is QEMU TCG, which models "
			"no guest caches: each guest load is an emulated "
			"access served by the host's memory, so %s\n",
			verdict == BENCH_YES ?
				"the knees above are the HOST's caches (and "
				"its TLB) seen through the emulator, scaled "
				"by emulation: real, but no guest CPU's "
				"hierarchy." :
				"the flat line is the emulator's cost per "
				"access.");
	if (bench_env_is_tcg() && kopt.cachemodel[0])
		kprintf("caches: modelled (profile %s) by the cache-model "
			"QEMU plugin, outside the guest's timings: the sweep "
			"above is TCG's, the model's figures are its @@MODEL "
			"lines\n", kopt.cachemodel);
	else if (!bench_env_is_tcg())
		kprintf("caches: modelled: %s\n",
			cache_sweep_caches_modelled() ? "yes" :
			verdict == BENCH_NO	      ? "no" :
							"unknown (said as no)");
}
