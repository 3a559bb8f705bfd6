/*
 * The copy experiment (re-creates seed 001, "cache pollution
 * aware __copy_from_user_ll()": copy with non-temporal movnti stores so
 * that a copy does not evict everything else from the cache, against the
 * objection that whoever reads the copied data then pays for the misses).
 *
 * For each routine of copy_routines.h and each size it measures three
 * phases, in TSC cycles per KiB (and LLC misses per KiB with a PMU):
 *
 *   copy       the copy itself, destination not cached beforehand
 *   consume    a consumer that reads the whole destination right after
 *              the copy (non-temporal copies leave it out of cache)
 *   bystander  another task that re-reads its cached working set right
 *              after the copy (ordinary copies have evicted part of it)
 *
 * Before every repetition: the destination is zeroed with non-temporal
 * stores (so it is not cached and a copy that did nothing cannot pass),
 * the source is read (a producer just wrote it) and the bystander's set
 * is read (it was running). The consume and bystander phases follow two
 * separate copies, because a consumer's reads would themselves evict the
 * bystander. Each copy is verified: the consumer's checksum, and after
 * the bystander an untimed one, must equal the source's.
 *
 * Under the cache-model QEMU plugin each measured phase is a model
 * region labelled "copy|VARIANT|METRIC|SIZE" (tools/model/model.py ties it to
 * the figure of those names), counted in KiB like the figures; the
 * warm-up repetition is not marked.
 *
 * A fourth figure, bystander_interleaved, is the direction for copies
 * larger than the LLC, as a kernel makes them: in write()-sized pieces
 * with the application running between them
 * (experiments/copy_interleave.c, which describes it).
 *
 * The LLC size is the cache model's when QEMU runs the cache-model
 * plugin (cachemodel.caches=), else CPUID's, else an assumed one
 * (bench_env_llc_bytes(), the kernel's one source, printed as
 * bench_env_llc_text()).
 *
 * Copies shorter than COPY_BATCH_BYTES are repeated over consecutive
 * slices of the buffers up to that many bytes (many small copy_from_user
 * calls), so a phase lasts long enough to time. Buffers are built from
 * buddy blocks of at most COPY_CHUNK_BYTES (4 MiB); copies larger than
 * that are done one chunk per call, as a page-wise copy_from_user would.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/fpu.h"
#include "experiments/copy.h"
#include "kernel/bench/bench_env.h"
#include "kernel/bench/env_report.h"
#include "kernel/experiment.h"
#include "lib/assert.h"
#include "lib/bench_output.h"
#include "lib/kprintf.h"
#include "lib/prng.h"
#include "lib/stats.h"
#include "lib/string.h"
#include "mm/buddy.h"
#include "mm/page_alloc.h"
#include "workloads/copy_routines.h"

#define COPY_FILL_SEED 0x9e3779b97f4a7c15ull
#define QUICK_MAX_BYTES MiB(4)
#define COPY_BATCH_BYTES KiB(64)
#define MIN_SIZE 64
#define FULL_SIZE_FACTOR 4
#define MAX_SIZES 16
#define QUICK_REPS 5
#define FULL_REPS BENCH_DEFAULT_REPS
/* Bystander working set: half the LLC, within these bounds. */
#define WS_MIN KiB(256)
#define WS_MAX_FULL COPY_CHUNK_BYTES
#define WS_MAX_QUICK MiB(1)
#define WS_FALLBACK MiB(1)
/* Units of the figures: per KiB, scaled by BENCH_SCALE. */
#define PER_KIB (KiB(1) * BENCH_SCALE)
#define LLC_MISSES_NAME "llc_misses"
/* The interleaved scenario (experiments/copy_interleave.c). */
#define INTERLEAVE_MAX_QUICK MiB(32)
#define PIECE_DEFAULT KiB(16)
#define PIECE_MIN KiB(4)

#define CHECK_MAX_SIZE 4097
#define CHECK_MAX_OFFSET 63
#define CHECK_ORDER 1 /* 8 KiB: the largest case plus offsets and guards */
/* Self-check before measuring: a few awkward cases per routine. */
static const size_t check_sizes[] = {0, 1, 7, 63, 64, 65, 4095,
				     CHECK_MAX_SIZE};
static const size_t check_offsets[] = {0, 1, 8, CHECK_MAX_OFFSET};

static const uint64_t quick_sizes[] = {64, KiB(4), KiB(256), MiB(4)};

static const char *const phase_metric[PH_COUNT] = {"copy", "consume",
						   "bystander"};
static const char *const phase_miss_metric[PH_COUNT] = {
	"copy_llc_misses", "consume_llc_misses", "bystander_llc_misses"};

static void region_free(struct region *r)
{
	while (r->nchunks)
		page_free(r->chunk[--r->nchunks], COPY_CHUNK_ORDER);
}

/*
 * Source and destination of up to want bytes each, a chunk for one then
 * a chunk for the other, so that on a small machine they share what
 * there is instead of the source taking it all; an odd chunk left over
 * is given back. Returns the bytes each got (0 when none).
 */
static uint64_t region_alloc_pair(struct region *a, struct region *b,
				  uint64_t want)
{
	a->nchunks = b->nchunks = 0;
	while ((uint64_t)b->nchunks * COPY_CHUNK_BYTES < want &&
	       b->nchunks < COPY_MAX_CHUNKS) {
		void *p = page_alloc(COPY_CHUNK_ORDER), *q;

		if (!p)
			break;
		a->chunk[a->nchunks++] = p;
		q = page_alloc(COPY_CHUNK_ORDER);
		if (!q)
			break;
		b->chunk[b->nchunks++] = q;
	}
	if (a->nchunks > b->nchunks)
		page_free(a->chunk[--a->nchunks], COPY_CHUNK_ORDER);
	return (uint64_t)b->nchunks * COPY_CHUNK_BYTES;
}

/* Chunk by chunk. */
uint64_t copy_region_checksum(const struct region *r, uint64_t n)
{
	uint64_t h = 0;

	for (uint64_t off = 0; off < n; off += COPY_CHUNK_BYTES) {
		uint64_t len = MIN(n - off, (uint64_t)COPY_CHUNK_BYTES);

		h = (h << 1 | h >> 63) ^
		    copy_checksum((const uint64_t *)region_at(r, off),
				  len / sizeof(uint64_t));
	}
	return h;
}

void copy_region_clear_nt(const struct region *r, uint64_t n)
{
	for (uint64_t off = 0; off < n; off += COPY_CHUNK_BYTES)
		copy_clear_nt(region_at(r, off),
			      MIN(n - off, (uint64_t)COPY_CHUNK_BYTES));
}

static void phase_begin(struct copy_ctx *c, uint64_t *t0)
{
	if (c->ctr)
		c->ctr->start(c->ctr->ctx);
	*t0 = c->clk->now();
}

static void phase_end(struct copy_ctx *c, uint64_t t0,
		      struct phase_samples *ps, unsigned rep)
{
	uint64_t vals[BENCH_MAX_COUNTERS];

	ps->ticks[rep] = c->clk->now() - t0;
	ps->misses[rep] = 0;
	if (c->ctr) {
		c->ctr->stop(c->ctr->ctx);
		c->ctr->read(c->ctr->ctx, vals);
		if (c->miss_idx >= 0)
			ps->misses[rep] = vals[c->miss_idx];
	}
}

/* Everything outside the measured phases: the state a copy meets. */
static void prepare(struct copy_ctx *c, uint64_t total)
{
	copy_region_clear_nt(&c->dst, total);
	c->sink = copy_region_checksum(&c->src, total);
	c->sink = copy_checksum(c->ws, c->ws_bytes / sizeof(uint64_t));
}

/* 'total' bytes as copies of 'unit' bytes each, slice after slice. */
static void do_copy(struct copy_ctx *c, copy_fn fn, uint64_t unit,
		    uint64_t total)
{
	for (uint64_t off = 0; off < total; off += unit)
		fn(region_at(&c->dst, off), region_at(&c->src, off), unit);
}

struct size_plan {
	uint64_t size, unit, total;
	uint64_t src_sum;
};

/*
 * One repetition of both scenarios for one routine. Returns false when a
 * copy came out wrong.
 */
static bool one_rep(struct copy_ctx *c, const struct copy_routine *rt,
		    const struct size_plan *sp, struct phase_samples *ps,
		    unsigned rep)
{
	uint64_t t0, sum, id;
	bool ok = true;

	/* Scenario 1: copy, then a consumer reads the copy. */
	prepare(c, sp->total);
	id = mark_begin(c, rt->name, phase_metric[PH_COPY], sp->size);
	phase_begin(c, &t0);
	do_copy(c, rt->fn, sp->unit, sp->total);
	phase_end(c, t0, &ps[PH_COPY], rep);
	mark_end(id, sp->total);
	id = mark_begin(c, rt->name, phase_metric[PH_CONSUME], sp->size);
	phase_begin(c, &t0);
	sum = copy_region_checksum(&c->dst, sp->total);
	phase_end(c, t0, &ps[PH_CONSUME], rep);
	mark_end(id, sp->total);
	if (sum != sp->src_sum) {
		kprintf("copy: %s of %lu bytes: destination checksum %#lx, "
			"source %#lx (consumer)\n",
			rt->name, (unsigned long)sp->size, (unsigned long)sum,
			(unsigned long)sp->src_sum);
		ok = false;
	}

	/* Scenario 2: copy, then a bystander re-reads its own data. */
	prepare(c, sp->total);
	do_copy(c, rt->fn, sp->unit, sp->total);
	id = mark_begin(c, rt->name, phase_metric[PH_BYSTANDER], sp->size);
	phase_begin(c, &t0);
	sum = copy_checksum(c->ws, c->ws_bytes / sizeof(uint64_t));
	phase_end(c, t0, &ps[PH_BYSTANDER], rep);
	mark_end(id, c->ws_bytes);
	if (sum != c->ws_sum) {
		kprintf("copy: the bystander's data changed under %s\n",
			rt->name);
		ok = false;
	}
	sum = copy_region_checksum(&c->dst, sp->total);
	if (sum != sp->src_sum) {
		kprintf("copy: %s of %lu bytes: destination checksum %#lx, "
			"source %#lx (bystander run)\n",
			rt->name, (unsigned long)sp->size, (unsigned long)sum,
			(unsigned long)sp->src_sum);
		ok = false;
	}
	return ok;
}

/* Samples (ticks or events over 'bytes') to per-KiB scaled stats. */
static void per_kib(struct stats *st, const uint64_t *samples,
		    unsigned reps, uint64_t bytes)
{
	uint64_t v[BENCH_MAX_REPS];

	for (unsigned i = 0; i < reps; i++)
		v[i] = stats_muldiv(samples[i], PER_KIB, bytes);
	stats_compute(st, v, reps, v);
}

void copy_add_figure(struct bench_figure *f, const char *variant,
		     const char *metric, const char *unit,
		     const uint64_t *samples, unsigned reps, uint64_t bytes,
		     uint64_t size)
{
	struct stats st;

	per_kib(&st, samples, reps, bytes);
	bench_figure_init(f, "copy", variant, metric, unit,
			  BENCH_SCALE_DIGITS, &st);
	f->size = size;
}

/* The run's context, one run at a time (experiments/copy.h). */
struct copy_ctx copy_ctx;
static struct bench_figure figs[FIGS_PER_SIZE];

static int measure_size(struct copy_ctx *c, uint64_t size, unsigned reps)
{
	size_t nr;
	const struct copy_routine *rt = copy_routines(&nr);
	struct phase_samples ps[PH_COUNT];
	struct size_plan sp;
	char title[COPY_TITLE_MAX];
	size_t nfig = 0;
	int rc = 0;

	kassert(nr * PH_COUNT * 2 <= FIGS_PER_SIZE);
	sp.size = size;
	sp.unit = MIN(size, (uint64_t)COPY_CHUNK_BYTES);
	sp.total = MAX(size, (uint64_t)COPY_BATCH_BYTES);
	kassert(COPY_CHUNK_BYTES % sp.unit == 0 && sp.total % sp.unit == 0);
	sp.src_sum = copy_region_checksum(&c->src, sp.total);

	for (size_t k = 0; k < nr; k++) {
		/* An unmeasured warm-up run first (code, TLB). */
		c->mark = false;
		if (!one_rep(c, &rt[k], &sp, ps, 0))
			rc = 1;
		c->mark = true;
		for (unsigned rep = 0; rep < reps && !rc; rep++)
			if (!one_rep(c, &rt[k], &sp, ps, rep))
				rc = 1;
		c->mark = false;
		if (rc)
			return rc;
		for (unsigned p = 0; p < PH_COUNT; p++) {
			uint64_t bytes = p == PH_BYSTANDER ? c->ws_bytes
							   : sp.total;

			copy_add_figure(&figs[nfig++], rt[k].name,
					phase_metric[p], UNIT_CYCLES,
					ps[p].ticks, reps, bytes, size);
			if (c->miss_idx >= 0 &&
			    !bench_kernel_counters_failed())
				copy_add_figure(&figs[nfig++],
						rt[k].name,
						phase_miss_metric[p],
						UNIT_MISSES, ps[p].misses,
						reps, bytes, size);
		}
	}
	if (size >= MiB(1))
		ksnprintf(title, sizeof(title), "copy: %lu MiB copies",
			  (unsigned long)(size >> 20));
	else if (size >= KiB(1))
		ksnprintf(title, sizeof(title), "copy: %lu KiB copies",
			  (unsigned long)(size >> 10));
	else
		ksnprintf(title, sizeof(title), "copy: %lu B copies",
			  (unsigned long)size);
	bench_report(title, figs, nfig);
	return 0;
}

/* The bystander undisturbed: its re-read cost with no copy between. */
static void measure_baseline(struct copy_ctx *c, unsigned reps)
{
	struct phase_samples ps;
	uint64_t t0, id;
	size_t nfig = 0;

	for (unsigned rep = 0; rep < reps; rep++) {
		c->sink = copy_checksum(c->ws, c->ws_bytes / sizeof(uint64_t));
		c->mark = true;
		id = mark_begin(c, "no_copy", "bystander", 0);
		c->mark = false;
		phase_begin(c, &t0);
		c->sink = copy_checksum(c->ws, c->ws_bytes / sizeof(uint64_t));
		phase_end(c, t0, &ps, rep);
		mark_end(id, c->ws_bytes);
	}
	copy_add_figure(&figs[nfig++], "no_copy", "bystander",
			UNIT_CYCLES, ps.ticks, reps, c->ws_bytes, 0);
	if (c->miss_idx >= 0 && !bench_kernel_counters_failed())
		copy_add_figure(&figs[nfig++], "no_copy",
				"bystander_llc_misses", UNIT_MISSES,
				ps.misses, reps, c->ws_bytes, 0);
	bench_report("copy: bystander baseline (no copy in between)",
		     figs, nfig);
}

/* Every routine against memcpy semantics on awkward sizes/offsets. */
static int self_check(void)
{
	size_t nr;
	const struct copy_routine *rt = copy_routines(&nr);
	unsigned char *src = page_alloc(CHECK_ORDER);
	unsigned char *dst = page_alloc(CHECK_ORDER);
	int rc = 0;

	BUILD_ASSERT(CHECK_MAX_SIZE + CHECK_MAX_OFFSET + 2 * COPY_GUARD <=
		     PAGE_SIZE << CHECK_ORDER);
	if (!src || !dst) {
		kprintf("copy: no memory for the self-check\n");
		rc = 1;
		goto out;
	}
	for (size_t k = 0; k < nr; k++)
		for (size_t i = 0; i < ARRAY_SIZE(check_sizes); i++)
			for (size_t s = 0; s < ARRAY_SIZE(check_offsets); s++)
				for (size_t d = 0;
				     d < ARRAY_SIZE(check_offsets); d++) {
					enum copy_verdict v = copy_verify_case(
						rt[k].fn, src, dst,
						check_sizes[i],
						check_offsets[s],
						check_offsets[d]);

					if (v == COPY_OK)
						continue;
					kprintf("copy: self-check: %s, %lu "
						"bytes, src+%lu dst+%lu: "
						"verdict %d\n",
						rt[k].name,
						(unsigned long)check_sizes[i],
						(unsigned long)check_offsets[s],
						(unsigned long)check_offsets[d],
						v);
					rc = 1;
				}
out:
	if (src)
		page_free(src, CHECK_ORDER);
	if (dst)
		page_free(dst, CHECK_ORDER);
	return rc;
}

static int find_miss_counter(const struct bench_counters *ctr)
{
	if (!ctr)
		return -1;
	for (unsigned i = 0; i < ctr->n; i++)
		if (strcmp(ctr->names[i], LLC_MISSES_NAME) == 0)
			return (int)i;
	return -1;
}

static void fill_source(struct copy_ctx *c, uint64_t bytes)
{
	uint64_t rng = prng_seed(COPY_FILL_SEED);

	/* Words that all differ, so misplacement shows. */
	for (uint64_t off = 0; off < bytes; off += sizeof(uint64_t))
		*(uint64_t *)region_at(&c->src, off) = prng_next(&rng);
}

/* Shell settings: run copy size=BYTES reps=N measures one size. */
static const struct experiment_param copy_params[] = {
	{"size", MIN_SIZE, FULL_MAX_BYTES,
	 "one copy size in bytes instead of the schedule"},
	{"reps", 1, BENCH_MAX_REPS, "repetitions (quick 5)"},
	{"piece", PIECE_MIN, COPY_CHUNK_BYTES,
	 "bytes per copy call of the interleaved scenario (16384)"},
};

static int copy_run(enum experiment_mode mode)
{
	struct copy_ctx *c = &copy_ctx;
	bool full = mode == EXPERIMENT_FULL;
	unsigned reps = full ? FULL_REPS : QUICK_REPS;
	uint64_t want = full ? FULL_MAX_BYTES : QUICK_MAX_BYTES;
	uint64_t sizes[MAX_SIZES], llc, got, one_size = 0, v, free_mib;
	uint64_t piece = PIECE_DEFAULT;
	uint64_t interleave_cap = full ? FULL_MAX_BYTES : INTERLEAVE_MAX_QUICK;
	struct interleave_plan ip;
	bool interleave;
	size_t nsizes;
	int rc = 0;

	if (experiment_param("reps", &v))
		reps = (unsigned)v;
	if (experiment_param("size", &v)) {
		one_size = v;
		want = MAX(want, v);
	}
	if (experiment_param("piece", &v))
		piece = v;
	llc = bench_env_llc_bytes(NULL);
	want = MAX(want, MIN(INTERLEAVE_LLC_FACTOR * llc, interleave_cap));
	/* Safety net until kernel init enables SSE itself. */
	fpu_init_cpu();
	bench_env_report();
	if (self_check())
		return 1;

	memset(c, 0, sizeof(*c));
	c->clk = bench_kernel_clock();
	c->ctr = bench_kernel_counters();
	c->miss_idx = find_miss_counter(c->ctr);
	c->ws_bytes = copy_bystander_bytes(llc, WS_MIN,
					  full ? WS_MAX_FULL : WS_MAX_QUICK,
					  WS_FALLBACK);
	free_mib = page_alloc_free_pages() >> (20 - PAGE_SHIFT);
	c->ws = page_alloc(COPY_CHUNK_ORDER);
	got = c->ws ? region_alloc_pair(&c->src, &c->dst, want) : 0;
	if (!got) {
		/* A machine too small: said, not failed. */
		bench_missing("copy", NULL, NULL, BENCH_SKIPPED,
			      "needs 3 free blocks of %lu KiB (bystander, "
			      "source, destination); this machine has %lu "
			      "MiB of RAM, %lu MiB free, not in 3 such blocks",
			      (unsigned long)(COPY_CHUNK_BYTES >> 10),
			      (unsigned long)(page_alloc_total_pages() >>
					      (20 - PAGE_SHIFT)),
			      (unsigned long)free_mib);
		goto out;
	}
	if (got < want)
		kprintf("copy: only %lu MiB per buffer available: sizes "
			"capped there (asked for %lu MiB)\n",
			(unsigned long)(got >> 20),
			(unsigned long)(want >> 20));
	if (one_size) {
		sizes[0] = MIN(one_size, got);
		nsizes = 1;
	} else if (full)
		nsizes = copy_size_schedule(sizes, MAX_SIZES, MIN_SIZE, got,
					    FULL_SIZE_FACTOR);
	else
		for (nsizes = 0; nsizes < ARRAY_SIZE(quick_sizes) &&
				 quick_sizes[nsizes] <= got;
		     nsizes++)
			sizes[nsizes] = quick_sizes[nsizes];
	fill_source(c, got);
	for (uint64_t i = 0; i < c->ws_bytes / sizeof(uint64_t); i++)
		c->ws[i] = i * 0x2545f4914f6cdd1dull;
	c->ws_sum = copy_checksum(c->ws, c->ws_bytes / sizeof(uint64_t));

	kprintf("copy: %s mode, %u repetitions, sizes %lu B .. %lu KiB, "
		"small copies batched to %lu KiB, bystander set %lu KiB "
		"(%s), clock %s\n",
		full ? "full" : "quick", reps, (unsigned long)sizes[0],
		(unsigned long)(sizes[nsizes - 1] >> 10),
		(unsigned long)(COPY_BATCH_BYTES >> 10),
		(unsigned long)(c->ws_bytes >> 10), bench_env_llc_text(),
		c->clk->name);
	interleave = copy_plan_interleave(&ip, llc, c->ws_bytes,
					  sizes[nsizes - 1], got,
					  interleave_cap, piece);
	if (!c->ctr)
		kprintf("copy: no PMU here: TSC cycles only, no LLC-miss "
			"figures\n");
	else if (c->miss_idx < 0)
		kprintf("copy: the PMU has no LLC-miss event: TSC only\n");
	if (bench_env_is_tcg())
		kprintf("copy: NOTE: QEMU TCG models no caches; these figures "
			"are emulation cost only, not a hardware finding\n");

	measure_baseline(c, reps);
	for (size_t i = 0; i < nsizes && !rc; i++)
		rc = measure_size(c, sizes[i], reps);
	if (!rc && interleave)
		rc = copy_measure_interleaved(&ip, reps, figs);
	if (rc)
		kprintf("copy: FAILED: a copy routine produced a wrong copy\n");
	else if (bench_env_is_tcg())
		kprintf("copy: all copies verified; under TCG only the "
			"instruction work differs between routines (no cache "
			"model), so consume/bystander show no cache effect\n");
	else
		kprintf("copy: all copies verified\n");
out:
	if (c->ws)
		page_free(c->ws, COPY_CHUNK_ORDER);
	region_free(&c->src);
	region_free(&c->dst);
	return rc;
}

EXPERIMENT_PARAMS(copy, "copy",
	   "copy cost by routine (rep movsb, 64-bit loop, SSE2, movnti, "
	   "movntdq) and its cache cost to a consumer and a bystander",
	   "001", 20, copy_run, copy_params);
