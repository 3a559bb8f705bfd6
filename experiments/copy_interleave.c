/*
 * The copy experiment's interleaved scenario: its fourth figure,
 * bystander_interleaved (experiments/copy.c measures the other three and
 * runs this one last; experiments/copy.h is what the two files share).
 *
 * The figure is the direction for copies
 * larger than the LLC, as a kernel makes them: a large copy_from_user
 * comes in write()-sized pieces (piece=, 16 KiB by default), and between
 * pieces the application runs over its working set. Here the bystander
 * reads the next slice of its set after every piece, cyclically, so that
 * 'gap' bytes are copied between two touches of one of its lines
 * (copy_interleave_gap(): an LRU cache then keeps the set beside a
 * non-temporal copy's source but not beside an ordinary copy's source
 * and destination). The figure is the bystander's slices only, timed one
 * by one and summed (the model region is paused during the pieces); the
 * total copied is the figure's size, the largest size measured or
 * INTERLEAVE_LLC_FACTOR times the LLC, whichever is larger (within the
 * buffers; not run when they do not exceed the LLC). One monolithic copy
 * larger than the LLC shows no difference on an LRU cache: its source
 * alone sweeps the cache (docs/experiments-copy.md).
 */
#include "arch/x86_64/model_doorbell.h"
#include "experiments/copy.h"
#include "kernel/bench/bench_env.h"
#include "lib/assert.h"
#include "lib/bench_output.h"
#include "lib/kprintf.h"
#include "workloads/copy_routines.h"

#define INTERLEAVE_METRIC "bystander_interleaved"
#define INTERLEAVE_MISS_METRIC "bystander_interleaved_llc_misses"

/* A piece size as printed: in KiB when whole KiB, else in bytes. */
static unsigned long piece_count(uint64_t piece)
{
	return (unsigned long)(piece % KiB(1) ? piece : piece >> 10);
}

static const char *piece_unit(uint64_t piece)
{
	return piece % KiB(1) ? "B" : "KiB";
}

/* One call's worth, split where it crosses a buffer chunk. */
static void copy_piece(struct copy_ctx *c, copy_fn fn, uint64_t off,
		       uint64_t len)
{
	while (len) {
		uint64_t to_chunk_end =
			COPY_CHUNK_BYTES - off % COPY_CHUNK_BYTES;
		uint64_t n = MIN(len, to_chunk_end);

		fn(region_at(&c->dst, off), region_at(&c->src, off), n);
		off += n;
		len -= n;
	}
}

/* Read the next slice of the bystander's set (cyclic, from *pos). */
static uint64_t bystander_slice(struct copy_ctx *c, uint64_t *pos,
				uint64_t slice)
{
	uint64_t sum = 0;

	while (slice) {
		uint64_t n = MIN(slice, c->ws_bytes - *pos);

		sum += copy_checksum(c->ws + *pos / sizeof(uint64_t),
				     n / sizeof(uint64_t));
		*pos = (*pos + n) % c->ws_bytes;
		slice -= n;
	}
	return sum;
}

/*
 * One repetition: the whole copy in pieces, a timed bystander slice
 * after each. Returns false when the copy came out wrong.
 */
static bool interleave_rep(struct copy_ctx *c, const struct copy_routine *rt,
			   const struct interleave_plan *ip, uint64_t src_sum,
			   struct phase_samples *ps, unsigned rep)
{
	uint64_t vals[BENCH_MAX_COUNTERS], pos = 0, read = 0, id, t0, sum;

	/* The destination is not cached; the bystander was just running. */
	copy_region_clear_nt(&c->dst, ip->total);
	c->sink = copy_checksum(c->ws, c->ws_bytes / sizeof(uint64_t));
	ps->ticks[rep] = 0;
	ps->misses[rep] = 0;
	id = mark_begin(c, rt->name, INTERLEAVE_METRIC, ip->total);
	if (id)
		model_doorbell_pause(id);
	for (uint64_t off = 0; off < ip->total; off += ip->piece) {
		copy_piece(c, rt->fn, off, ip->piece);
		if (id)
			model_doorbell_resume(id);
		if (c->ctr)
			c->ctr->start(c->ctr->ctx);
		t0 = c->clk->now();
		c->sink = bystander_slice(c, &pos, ip->slice);
		ps->ticks[rep] += c->clk->now() - t0;
		if (c->ctr) {
			c->ctr->stop(c->ctr->ctx);
			c->ctr->read(c->ctr->ctx, vals);
			if (c->miss_idx >= 0)
				ps->misses[rep] += vals[c->miss_idx];
		}
		if (id)
			model_doorbell_pause(id);
		read += ip->slice;
	}
	if (id)
		model_doorbell_resume(id);
	mark_end(id, read);
	sum = copy_region_checksum(&c->dst, ip->total);
	if (sum != src_sum) {
		kprintf("copy: %s in %lu-byte pieces: destination checksum "
			"%#lx, source %#lx (interleaved)\n",
			rt->name, (unsigned long)ip->piece, (unsigned long)sum,
			(unsigned long)src_sum);
		return false;
	}
	return true;
}

int copy_measure_interleaved(const struct interleave_plan *ip, unsigned reps,
			     struct bench_figure *figs)
{
	struct copy_ctx *c = &copy_ctx;
	size_t nr, nfig = 0;
	const struct copy_routine *rt = copy_routines(&nr);
	struct phase_samples ps;
	uint64_t src_sum = copy_region_checksum(&c->src, ip->total);
	uint64_t bytes = ip->total / ip->piece * ip->slice;
	char title[COPY_TITLE_MAX];

	kassert(nr * 2 <= FIGS_PER_SIZE);
	for (size_t k = 0; k < nr; k++) {
		c->mark = false;
		if (!interleave_rep(c, &rt[k], ip, src_sum, &ps, 0))
			return 1;
		c->mark = true;
		for (unsigned rep = 0; rep < reps; rep++)
			if (!interleave_rep(c, &rt[k], ip, src_sum, &ps,
					    rep)) {
				c->mark = false;
				return 1;
			}
		c->mark = false;
		copy_add_figure(&figs[nfig++], rt[k].name,
				INTERLEAVE_METRIC, UNIT_CYCLES, ps.ticks, reps,
				bytes, ip->total);
		if (c->miss_idx >= 0 && !bench_kernel_counters_failed())
			copy_add_figure(&figs[nfig++], rt[k].name,
					INTERLEAVE_MISS_METRIC, UNIT_MISSES,
					ps.misses, reps, bytes, ip->total);
	}
	ksnprintf(title, sizeof(title),
		  "copy: %lu MiB in %lu %s pieces, bystander between pieces",
		  (unsigned long)(ip->total >> 20), piece_count(ip->piece),
		  piece_unit(ip->piece));
	bench_report(title, figs, nfig);
	return 0;
}

bool copy_plan_interleave(struct interleave_plan *ip, uint64_t llc,
			  uint64_t ws, uint64_t largest, uint64_t got,
			  uint64_t cap, uint64_t piece)
{
	uint64_t total = MAX(largest, INTERLEAVE_LLC_FACTOR * llc);

	total = MIN(MIN(total, got), cap);
	/* Whole pieces, and whole words for the checksums. */
	total -= total % (piece * sizeof(uint64_t));
	if (!llc || total <= llc) {
		kprintf("copy: interleaved scenario not run: it needs a copy "
			"larger than the LLC (%lu KiB%s), the buffers allow "
			"%lu KiB\n", (unsigned long)(llc >> 10),
			llc ? "" : ", unknown", (unsigned long)(total >> 10));
		return false;
	}
	ip->total = total;
	ip->piece = piece;
	ip->gap = copy_interleave_gap(llc, ws, piece);
	ip->slice = copy_interleave_slice(ws, ip->gap, piece);
	kprintf("copy: interleaved: %lu KiB copied in %lu %s pieces, the "
		"bystander reads %lu B after each: %lu KiB copied between two "
		"touches of one of its lines (LRU keeps the set beside %lu "
		"KiB of source, loses it beside %lu KiB of source and "
		"destination)\n",
		(unsigned long)(total >> 10), piece_count(piece),
		piece_unit(piece), (unsigned long)ip->slice,
		(unsigned long)(ip->gap >> 10), (unsigned long)(ip->gap >> 10),
		(unsigned long)(2 * ip->gap >> 10));
	return true;
}
