/*
 * copy: what the two files of the copy experiment share: the buffers
 * (struct region, built from buddy blocks), the run's context (struct
 * copy_ctx), one phase's samples, the model-region marks and the figures.
 * experiments/copy.c (the experiment's description) sets a run up and
 * measures the monolithic copies; experiments/copy_interleave.c the copy
 * in pieces with the bystander between them.
 *
 * One run at a time: the context (copy_ctx) is the run's.
 */
#ifndef EXPERIMENTS_COPY_H
#define EXPERIMENTS_COPY_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/x86_64/model_doorbell.h"
#include "cachemodel/doorbell.h"
#include "lib/assert.h"
#include "lib/bench.h"
#include "lib/bench_output.h"
#include "lib/compiler.h"
#include "lib/config.h"
#include "lib/kprintf.h"
#include "mm/buddy.h"

#define COPY_CHUNK_ORDER BUDDY_MAX_ORDER
#define COPY_CHUNK_BYTES (PAGE_SIZE << COPY_CHUNK_ORDER)
#define FULL_MAX_BYTES MiB(64)
#define COPY_MAX_CHUNKS (FULL_MAX_BYTES / COPY_CHUNK_BYTES)

#define UNIT_CYCLES "tsc-cycles/KiB"
#define UNIT_MISSES "llc-misses/KiB"
/* A table's title (bench_report()), the longest the interleaved one. */
#define COPY_TITLE_MAX 96
/* The interleaved copy: at least this many times the LLC. */
#define INTERLEAVE_LLC_FACTOR 4

enum phase { PH_COPY, PH_CONSUME, PH_BYSTANDER, PH_COUNT };

/* Figures per size: three phases, cycles and misses, every routine. */
#define MAX_ROUTINES 8
#define FIGS_PER_SIZE (MAX_ROUTINES * PH_COUNT * 2)

/* A buffer made of buddy blocks, addressed as one byte range. */
struct region {
	unsigned char *chunk[COPY_MAX_CHUNKS];
	unsigned nchunks;
};

struct copy_ctx {
	const struct bench_clock *clk;
	const struct bench_counters *ctr;
	int miss_idx;		/* index of llc_misses in ctr, or -1 */
	struct region src, dst;
	uint64_t *ws;		/* bystander's working set */
	uint64_t ws_bytes, ws_sum;
	volatile uint64_t sink;
	bool mark;		/* measured repetition: mark model regions */
};

/*
 * The run's context (experiments/copy.c, set up by copy_run()): one run
 * at a time. Its functions take it as a pointer, the interleaved
 * scenario reads it here.
 */
extern struct copy_ctx copy_ctx;

/* One phase's samples over the repetitions. */
struct phase_samples {
	uint64_t ticks[BENCH_MAX_REPS];
	uint64_t misses[BENCH_MAX_REPS];
};

/* The interleaved scenario's shape (experiments/copy_interleave.c). */
struct interleave_plan {
	uint64_t total;		/* bytes copied, a multiple of piece and of 8 */
	uint64_t piece;		/* bytes per copy call */
	uint64_t gap;		/* bytes copied between two touches */
	uint64_t slice;		/* bystander bytes read after each piece */
};

/* The byte at offset off of a region (off inside it). */
static inline unsigned char *region_at(const struct region *r, uint64_t off)
{
	kassert(off / COPY_CHUNK_BYTES < r->nchunks);
	return r->chunk[off / COPY_CHUNK_BYTES] + off % COPY_CHUNK_BYTES;
}

/* Open a model region for one phase (nothing when !c->mark). */
static inline uint64_t mark_begin(const struct copy_ctx *c,
				  const char *variant, const char *metric,
				  uint64_t size)
{
	char label[DB_LABEL_MAX];

	if (!c->mark)
		return 0;
	ksnprintf(label, sizeof(label), "copy|%s|%s|%lu", variant, metric,
		  (unsigned long)size);
	model_doorbell_label(label);
	return bench_region_begin();
}

/* Close it; the region counts the phase's bytes in KiB, as the figures. */
static inline void mark_end(uint64_t id, uint64_t bytes)
{
	bench_region_end(id, bytes / KiB(1));
}

/* Checksum of the first n bytes of r (n a multiple of 8). */
uint64_t copy_region_checksum(const struct region *r, uint64_t n);
/* Zero the first n bytes of r with non-temporal stores (not cached). */
void copy_region_clear_nt(const struct region *r, uint64_t n);
/*
 * Fill f with the per-KiB statistics of samples (ticks or events over
 * 'bytes', reps of them) as the figure copy/VARIANT/METRIC of the size.
 */
void copy_add_figure(struct bench_figure *f, const char *variant,
		     const char *metric, const char *unit,
		     const uint64_t *samples, unsigned reps, uint64_t bytes,
		     uint64_t size);

/*
 * Plan the interleaved scenario over buffers of 'got' bytes (at most
 * cap, pieces of 'piece' bytes, a bystander set of ws bytes); false
 * (with the reason printed) when they do not exceed the LLC.
 */
bool copy_plan_interleave(struct interleave_plan *ip, uint64_t llc,
			  uint64_t ws, uint64_t largest, uint64_t got,
			  uint64_t cap, uint64_t piece);
/*
 * Measure and report bystander_interleaved for every routine over
 * copy_ctx, reps times each after an unmeasured warm-up, its figures in
 * figs (FIGS_PER_SIZE of them). Returns 0, or 1 when a copy came out
 * wrong (said on the console).
 */
int copy_measure_interleaved(const struct interleave_plan *ip, unsigned reps,
			     struct bench_figure *figs);

#endif /* EXPERIMENTS_COPY_H */
