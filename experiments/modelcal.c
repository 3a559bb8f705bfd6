/*
 * The modelcal experiment: calibration of the cache model
 * (docs/cachemodel.md). Under QEMU with the cache-model plugin, each
 * variant's measured repetitions become model regions labelled
 * "modelcal/VARIANT", and `python3 -m tools.model.model check-calibration`
 * compares the modelled figures with what the profile's numbers predict:
 *
 *   chase-l1    a cyclic chase, one load per 64-byte line, in 16 KiB:
 *               fits every L1D, so every load costs the L1D latency
 *   chase-llc   the same in 2 MiB: larger than L1D and any private L2,
 *               smaller than the LLC: every load is an LLC hit
 *   chase-mem   the same in 16 MiB (four 4 MiB blocks): larger than the
 *               LLC; with LRU a cyclic walk misses every time: memory
 *   chase-uc    the chase-l1 buffer mapped UC: every load goes to memory
 *               uncached (the UC / WB ratio of the profile)
 *   wc-write    whole 64-byte lines stored to a 4 KiB WC buffer: one
 *               write-combining burst per line, 16 per KiB
 *
 * The walks go column by column: the same line of every page, then the
 * next line, even lines before odd ones. No two consecutive loads share
 * a page, so the model's stream prefetcher never trains, and the line an
 * adjacent-line prefetch brings is walked half a buffer later, when a
 * buffer larger than the LLC has evicted it: every load costs what the
 * profile says (the memtype experiment's random chase is the one to
 * compare with hardware). Without the plugin the TCG timings below are
 * emulation speed and say nothing about caches.
 */
#include "arch/x86_64/layout.h"
#include "arch/x86_64/model_doorbell.h"
#include "kernel/bench/bench_env.h"
#include "kernel/bench/env_report.h"
#include "kernel/experiment.h"
#include "kernel/options.h"
#include "lib/bench.h"
#include "lib/bench_output.h"
#include "lib/kprintf.h"
#include "lib/stats.h"
#include "lib/string.h"
#include "mm/buddy.h"
#include "mm/page_alloc.h"
#include "mm/vm.h"

#define LINE_BYTES 64
#define WORDS_PER_LINE (LINE_BYTES / sizeof(uint64_t))
#define LINES_PER_PAGE (PAGE_SIZE / LINE_BYTES)
#define KIB(n) ((uint64_t)(n) << 10)
#define MIB(n) ((uint64_t)(n) << 20)
#define BLOCK_ORDER BUDDY_MAX_ORDER	/* 4 MiB blocks */
#define BLOCK_BYTES (PAGE_SIZE << BLOCK_ORDER)
#define MAX_BLOCKS 4
#define L1_BYTES KIB(16)
#define LLC_BYTES MIB(2)
#define MEM_BYTES MIB(16)
#define WC_BYTES KIB(4)
#define REPS 3
#define MIN_TIME_NS 200000ull	/* 0.2 ms per repetition: the model, not
					 * the timing, is what counts here */
/* Loads (or line stores) a repetition under a cache model: a count the
 * host's speed does not choose, since the guest's clock is the host's and
 * a region's fixed cost (about 200 modelled cycles) divides by it; two
 * boots of run=all came out 6.0 and 6.8 cycles a chase-l1 load with
 * 16384 and 256. */
#define MC_MODEL_ITERS 16384
#define NFIGS 5
#define MC_SKIPPED 2	/* a variant's buffer did not fit: no figure */
#define LABEL_MAX 48	/* the doorbell keeps 47 characters */

BUILD_ASSERT(MEM_BYTES <= MAX_BLOCKS * BLOCK_BYTES);

/* A buffer of up to MAX_BLOCKS physically separate blocks. */
struct calbuf {
	uint64_t *block[MAX_BLOCKS];
	unsigned order;		/* of each block */
	unsigned nblocks;
	uint64_t bytes;
	uint64_t *cursor;	/* chase position, carried between runs */
	uint64_t line;		/* wc-write position, in lines */
	uint64_t sink;
};

static void calbuf_free(struct calbuf *b)
{
	for (unsigned i = 0; i < b->nblocks; i++)
		page_free(b->block[i], b->order);
	b->nblocks = 0;
}

/* Allocate bytes (a power of two pages, or whole 4 MiB blocks); when
 * there is not enough, say that variant's figure is skipped, and why. */
static bool calbuf_alloc(struct calbuf *b, uint64_t bytes,
			 const char *variant, const char *metric)
{
	uint64_t per = bytes < BLOCK_BYTES ? bytes : BLOCK_BYTES;

	memset(b, 0, sizeof(*b));
	b->order = 0;
	while ((PAGE_SIZE << b->order) < per)
		b->order++;
	b->bytes = bytes;
	for (uint64_t done = 0; done < bytes; done += per) {
		b->block[b->nblocks] = page_alloc(b->order);
		if (!b->block[b->nblocks]) {
			calbuf_free(b);
			bench_missing("modelcal", variant, metric,
				      BENCH_SKIPPED, "needs %lu KiB in blocks "
				      "of %lu KiB; this machine has %lu MiB of "
				      "RAM, %lu MiB free",
				      (unsigned long)(bytes >> 10),
				      (unsigned long)(per >> 10),
				      (unsigned long)(page_alloc_total_pages() >>
						      (20 - PAGE_SHIFT)),
				      (unsigned long)(page_alloc_free_pages() >>
						      (20 - PAGE_SHIFT)));
			return false;
		}
		b->nblocks++;
	}
	return true;
}

static uint64_t *line_addr(const struct calbuf *b, uint64_t line)
{
	uint64_t per = (PAGE_SIZE << b->order) / LINE_BYTES;

	return b->block[line / per] + (line % per) * WORDS_PER_LINE;
}

/* The i-th line of the walk over n lines (n a multiple of a page's):
 * column by column, even columns first (see the top of this file). */
static uint64_t walk_line(uint64_t i, uint64_t n)
{
	uint64_t pages = n / LINES_PER_PAGE, col = i / pages;
	uint64_t half = LINES_PER_PAGE / 2;

	return (i % pages) * LINES_PER_PAGE +
	       (col < half ? 2 * col : 2 * (col - half) + 1);
}

/* Each line of the walk points at the next one; the last at the first. */
static void chase_build(struct calbuf *b)
{
	uint64_t n = b->bytes / LINE_BYTES;

	for (uint64_t i = 0; i < n; i++)
		*line_addr(b, walk_line(i, n)) =
			(uint64_t)line_addr(b, walk_line((i + 1) % n, n));
	b->cursor = line_addr(b, walk_line(0, n));
}

static void chase_run(void *arg, uint64_t iters)
{
	struct calbuf *b = arg;
	uint64_t *p = b->cursor;

	while (iters--)
		p = (uint64_t *)*(volatile uint64_t *)p;
	b->cursor = p;
}

/* One iteration: one whole line, eight 8-byte stores. */
static void wc_write_run(void *arg, uint64_t iters)
{
	struct calbuf *b = arg;
	uint64_t n = b->bytes / LINE_BYTES;

	while (iters--) {
		volatile uint64_t *w = line_addr(b, b->line);

		for (unsigned i = 0; i < WORDS_PER_LINE; i++)
			w[i] = iters;
		b->line = (b->line + 1) % n;
	}
}

static void params(struct bench_params *p)
{
	bench_params_default(p);
	p->reps = REPS;
	p->min_time_ns = MIN_TIME_NS;
	if (kopt.cachemodel[0])
		p->min_iters = p->max_iters = MC_MODEL_ITERS;
}

/* A chase over bytes of type t; its latency figure goes to *f. */
static int chase_variant(const char *variant, uint64_t bytes, enum memtype t,
			 struct bench_figure *f)
{
	char label[LABEL_MAX];
	struct bench_result r;
	struct bench_params p;
	struct calbuf b;
	int rc = 0;

	if (!calbuf_alloc(&b, bytes, variant, "latency"))
		return MC_SKIPPED;
	chase_build(&b);
	if (t != MEMTYPE_WB &&
	    set_memory_type(b.block[0], bytes >> PAGE_SHIFT, t)) {
		kprintf("modelcal: cannot map the %s buffer %s\n", variant,
			memtype_name(t));
		calbuf_free(&b);
		return 1;
	}
	ksnprintf(label, sizeof(label), "modelcal/%s", variant);
	model_doorbell_label(label);
	/* One full walk first: the measured ones find the steady state. */
	chase_run(&b, bytes / LINE_BYTES);
	params(&p);
	bench_run(&r, bench_kernel_clock(), NULL, &p, chase_run, &b);
	bench_figure_init(f, "modelcal", variant, "latency", "tsc-cycles/load",
			  BENCH_SCALE_DIGITS, &r.ticks_per_iter);
	f->size = bytes;
	if (t != MEMTYPE_WB &&
	    set_memory_type(b.block[0], bytes >> PAGE_SHIFT, MEMTYPE_WB))
		rc = 1;	/* cannot free it then: keep it */
	else
		calbuf_free(&b);
	return rc;
}

static int wc_variant(struct bench_figure *f)
{
	struct bench_result r;
	struct bench_params p;
	struct calbuf b;
	uint64_t mbps[BENCH_MAX_REPS];
	struct stats st;
	int rc = 0;

	if (!calbuf_alloc(&b, WC_BYTES, "wc-write", "write"))
		return MC_SKIPPED;
	if (set_memory_type(b.block[0], WC_BYTES >> PAGE_SHIFT, MEMTYPE_WC)) {
		kprintf("modelcal: cannot map the wc-write buffer WC\n");
		calbuf_free(&b);
		return 1;
	}
	model_doorbell_label("modelcal/wc-write");
	params(&p);
	bench_run(&r, bench_kernel_clock(), NULL, &p, wc_write_run, &b);
	for (unsigned i = 0; i < r.samples.reps; i++)
		mbps[i] = bench_rate_scaled(LINE_BYTES * r.samples.iters,
					    r.samples.ticks[i], r.hz) /
			  1000000ull;
	stats_compute(&st, mbps, r.samples.reps, mbps);
	bench_figure_init(f, "modelcal", "wc-write", "write", "MB/s",
			  BENCH_SCALE_DIGITS, &st);
	f->size = WC_BYTES;
	if (set_memory_type(b.block[0], WC_BYTES >> PAGE_SHIFT, MEMTYPE_WB))
		rc = 1;
	else
		calbuf_free(&b);
	return rc;
}

/* A variant's result: 0 (its figure made), 1 (failed) or MC_SKIPPED. */
static void collect(int got, size_t *n, int *rc)
{
	if (got == 0)
		(*n)++;
	else if (got != MC_SKIPPED)
		*rc = 1;
}

static int modelcal_run(enum experiment_mode mode)
{
	struct bench_figure figs[NFIGS];
	size_t n = 0;
	int rc = 0;

	(void)mode;	/* the sizes follow the caches, not the mode */
	bench_env_report();
	collect(chase_variant("chase-l1", L1_BYTES, MEMTYPE_WB, &figs[n]),
		&n, &rc);
	collect(chase_variant("chase-llc", LLC_BYTES, MEMTYPE_WB, &figs[n]),
		&n, &rc);
	collect(chase_variant("chase-mem", MEM_BYTES, MEMTYPE_WB, &figs[n]),
		&n, &rc);
	collect(chase_variant("chase-uc", L1_BYTES, MEMTYPE_UC, &figs[n]),
		&n, &rc);
	collect(wc_variant(&figs[n]), &n, &rc);
	if (rc)
		return rc;
	bench_report("cache-model calibration (TCG timings)", figs, n);
	kprintf("modelcal: the timings above are %s; the cache model's "
		"figures for the same repetitions are in its own file "
		"(regions labelled modelcal/...; python3 -m "
		"tools.model.model check-calibration compares them with the "
		"profile).\n",
		bench_env_is_tcg() ? "QEMU TCG's emulation speed"
				   : "this machine's");
	return 0;
}

EXPERIMENT(modelcal, "modelcal",
	   "cache-model calibration: chases in L1, LLC, memory and UC, WC "
	   "bursts per KiB",
	   "-", 0, modelcal_run);
