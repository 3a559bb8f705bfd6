/*
 * Microbenchmarks run on the cache model itself (no QEMU): for each
 * profile named on the command line, the figures that published
 * measurements of the real machines report (dependent-load latency by
 * working-set size and along a fixed stride, one core's read bandwidth
 * inside a cache level, its read, write, non-temporal and copy
 * bandwidth beyond the LLC, write-combining full-line against
 * partial-line rate, UC load and store time, fence and locked-instruction
 * cost, core-to-core cache-line ping-pongs). Every figure is modelled:
 * it says what the model predicts, not what any machine does.
 *
 *   model_validate [--short] PROFILES_FILE PROFILE...
 *
 * --short halves the working sets beyond the LLC (for make test: the
 * figures move by a few percent, see docs/cachemodel.md).
 *
 * prints, per profile, a human table and one machine-readable line per
 * figure:
 *
 *   @@RESULT {"experiment":"model-validate","profile":"core2-2007",
 *             "bench":"lat_mem","value":200.0,"unit":"cycles"}
 *
 * tools/model/model_validate.py sets these beside the published figures of
 * cachemodel/validation_data.json (docs/cachemodel.md, "Validation").
 * The programs below are the kernels of the published benchmarks, as
 * the model sees them: one modelled instruction per access, plus the
 * fences the real loops end with.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cachemodel/model.h"
#include "cachemodel/profile.h"
#include "lib/prng.h"

#define KIB 1024ull
#define MIB (1024ull * KIB)
#define PAGE_BYTES (1ull << CM_PAGE_SHIFT)
#define CHASE_SEED 0x2545f4914f6cdd1dull
/* Loads a pointer chase measures after its warm-up pass, at least. */
#define CHASE_MIN_LOADS 20000u
/* Streams: bytes per access (an SSE register), working set in LLCs. */
#define VEC_BYTES 16u
#define STREAM_LLCS 4u
#define STREAM_MIN_BYTES (32 * MIB)
#define CHASE_MEM_LLCS 8u
/* Where the streams live: source, destination (physical addresses). */
#define SRC_BASE (1ull << 30)
#define DST_BASE (2ull << 30)
#define WC_BYTES (1 * MIB)
#define UC_ACCESSES 1000u
#define FENCES 1000u
#define PINGPONG_ROUNDS 1000u
/* Timed passes over a working set inside one cache level. */
#define LEVEL_PASSES 4u
/* The strides of ScienceMark 2.0's latency walk that X-bit labs printed. */
static const unsigned sciencemark_strides[] = { 64, 256, 512 };
#define MAX_PROFILE_TEXT (1u << 20)

static const struct cm_profile *prof;
static unsigned shrink = 1;	/* --short: 2 */

static double ns_per_cycle(void)
{
	return 1000.0 / prof->freq_mhz;
}

static struct cm_model *fresh(unsigned ncpus)
{
	struct cm_model *m = cm_create(prof, ncpus);

	if (!m) {
		fprintf(stderr, "model_validate: cannot create a model\n");
		exit(1);
	}
	return m;
}

static uint64_t clock_of(struct cm_model *m, unsigned cpu)
{
	return cm_cycles(m, cm_stats(m, cpu));
}

static void result(const char *bench, double value, const char *unit,
		   const char *what)
{
	printf("  %-18s %12.2f %-8s %s\n", bench, value, unit, what);
	printf("@@RESULT {\"experiment\":\"model-validate\",\"profile\":\"%s\","
	       "\"bench\":\"%s\",\"value\":%.4f,\"unit\":\"%s\"}\n",
	       prof->name, bench, value, unit);
}


/*
 * Dependent loads over ws bytes, one per line in a random cyclic order
 * (Sattolo's algorithm), after one warm-up pass: the stall per load, in
 * cycles (load to use, as lmbench's lat_mem_rd and 7-cpu.com report it).
 */
static double chase(uint64_t ws)
{
	uint64_t n = ws / CM_LINE_SIZE, loads;
	uint32_t *next = malloc(n * sizeof(*next));
	struct cm_model *m = fresh(1);
	uint64_t before, at = 0, rnd = prng_seed(CHASE_SEED);
	double r;

	if (!next)
		exit(1);
	prng_cycle(&rnd, next, n);
	for (uint64_t i = 0; i < n; i++) {
		cm_access(m, 0, SRC_BASE + at * CM_LINE_SIZE, 8, 0);
		at = next[at];
	}
	loads = n > CHASE_MIN_LOADS ? n : CHASE_MIN_LOADS;
	before = cm_stats(m, 0)->mem_cycles;
	for (uint64_t i = 0; i < loads; i++) {
		cm_access(m, 0, SRC_BASE + at * CM_LINE_SIZE, 8, 0);
		at = next[at];
	}
	r = (double)(cm_stats(m, 0)->mem_cycles - before) / (double)loads;
	cm_destroy(m);
	free(next);
	return r;
}

/*
 * Dependent loads walking forward through ws bytes at a fixed stride
 * (bytes), wrapping, after one warm-up pass: the stall per load, in
 * cycles. The walk of ScienceMark 2.0's latency test at a given stride:
 * unlike the random chase above, the hardware prefetchers see a
 * regular pattern and may hide part of each miss.
 */
static double chase_stride(uint64_t ws, uint64_t stride)
{
	uint64_t n = ws / stride, loads;
	struct cm_model *m = fresh(1);
	uint64_t before;
	double r;

	for (uint64_t i = 0; i < n; i++)
		cm_access(m, 0, SRC_BASE + i * stride, 8, 0);
	loads = n > CHASE_MIN_LOADS ? n : CHASE_MIN_LOADS;
	before = cm_stats(m, 0)->mem_cycles;
	for (uint64_t i = 0; i < loads; i++)
		cm_access(m, 0, SRC_BASE + (i % n) * stride, 8, 0);
	r = (double)(cm_stats(m, 0)->mem_cycles - before) / (double)loads;
	cm_destroy(m);
	return r;
}

/* One pass of VEC_BYTES loads over ws bytes, one modelled instruction
 * each. */
static void read_pass(struct cm_model *m, uint64_t ws)
{
	for (uint64_t off = 0; off < ws; off += VEC_BYTES) {
		cm_instructions(m, 0, 1);
		cm_access(m, 0, SRC_BASE + off, VEC_BYTES, 0);
	}
}

/*
 * One core reads ws bytes (a working set inside one cache level): a
 * warm-up pass, then LEVEL_PASSES timed ones; returns bytes per core
 * cycle of the timed passes (the unit of Intel's "sustained bandwidth"
 * column).
 */
static double level_read_bw(uint64_t ws)
{
	struct cm_model *m = fresh(1);
	uint64_t start;
	double r;

	read_pass(m, ws);
	start = clock_of(m, 0);
	for (unsigned pass = 0; pass < LEVEL_PASSES; pass++)
		read_pass(m, ws);
	r = (double)(LEVEL_PASSES * ws) / (double)(clock_of(m, 0) - start);
	cm_destroy(m);
	return r;
}

enum stream_kind {
	STREAM_READ,
	STREAM_WRITE,
	STREAM_NT,
	STREAM_COPY,
};

/* One core streams VEC_BYTES accesses over a working set beyond the
 * LLC; returns GB/s (bytes read, written or copied per second). */
static double stream(enum stream_kind k)
{
	uint64_t ws = (uint64_t)prof->llc.size * STREAM_LLCS;
	struct cm_model *m = fresh(1);
	double secs;

	if (ws < STREAM_MIN_BYTES)
		ws = STREAM_MIN_BYTES;
	ws /= shrink;
	for (uint64_t off = 0; off < ws; off += VEC_BYTES) {
		cm_instructions(m, 0, 1);
		switch (k) {
		case STREAM_READ:
			cm_access(m, 0, SRC_BASE + off, VEC_BYTES, 0);
			break;
		case STREAM_WRITE:
			cm_access(m, 0, DST_BASE + off, VEC_BYTES, CM_STORE);
			break;
		case STREAM_NT:
			cm_access(m, 0, DST_BASE + off, VEC_BYTES,
				  CM_STORE | CM_NT);
			break;
		case STREAM_COPY:
			cm_instructions(m, 0, 1);
			cm_access(m, 0, SRC_BASE + off, VEC_BYTES, 0);
			cm_access(m, 0, DST_BASE + off, VEC_BYTES, CM_STORE);
			break;
		}
	}
	/* The written data must have left: what a timed loop's end sees. */
	cm_fence(m, 0, k == STREAM_NT ? CM_SFENCE : CM_MFENCE);
	secs = (double)clock_of(m, 0) * ns_per_cycle() * 1e-9;
	cm_destroy(m);
	return (double)ws / secs / 1e9;
}

/* Stores of n bytes at the start of every stride-th byte of a 1 MiB WC
 * buffer, then sfence; returns GB/s of data written. */
static double wc_rate(unsigned n, unsigned stride)
{
	struct cm_model *m = fresh(1);
	uint64_t bytes = 0;
	double secs;

	if (!cm_set_type(m, DST_BASE, WC_BYTES, CM_WC))
		exit(1);
	for (uint64_t off = 0; off < WC_BYTES; off += stride) {
		for (unsigned b = 0; b < n; b += 8) {
			cm_instructions(m, 0, 1);
			cm_access(m, 0, DST_BASE + off + b, 8, CM_STORE);
			bytes += 8;
		}
	}
	cm_fence(m, 0, CM_SFENCE);
	secs = (double)clock_of(m, 0) * ns_per_cycle() * 1e-9;
	cm_destroy(m);
	return (double)bytes / secs / 1e9;
}

/* ns per 8-byte UC load or store, back to back. */
static double uc_time(bool store)
{
	struct cm_model *m = fresh(1);
	double r;

	if (!cm_set_type(m, DST_BASE, PAGE_BYTES, CM_UC))
		exit(1);
	for (unsigned i = 0; i < UC_ACCESSES; i++) {
		cm_instructions(m, 0, 1);
		cm_access(m, 0, DST_BASE + (i % (PAGE_BYTES / 8)) * 8, 8,
			  store ? CM_STORE : 0);
	}
	r = (double)clock_of(m, 0) * ns_per_cycle() / UC_ACCESSES;
	cm_destroy(m);
	return r;
}

/* Cycles of one fence, or of one locked add to an L1D-resident line,
 * back to back with nothing buffered (Agner Fog's tables' setting). */
static double fence_cost(int what)
{
	struct cm_model *m = fresh(1);
	uint64_t before;
	double r;

	cm_access(m, 0, SRC_BASE, 8, CM_STORE);	/* line in M */
	cm_fence(m, 0, CM_MFENCE);
	before = clock_of(m, 0);
	for (unsigned i = 0; i < FENCES; i++) {
		if (what == 0)
			cm_fence(m, 0, CM_SFENCE);
		else if (what == 1)
			cm_fence(m, 0, CM_MFENCE);
		else {
			cm_access(m, 0, SRC_BASE, 8, CM_LOCKED);
			cm_access(m, 0, SRC_BASE, 8, CM_LOCKED | CM_STORE);
		}
	}
	r = (double)(clock_of(m, 0) - before) / FENCES;
	cm_destroy(m);
	return r;
}

/*
 * Two CPUs (0 and 1: on one die when the profile has several) take
 * turns at a locked compare-and-swap of one line, as the core-to-core
 * latency tools do; returns ns per one-way hand-over (the time of the
 * whole exchange over the number of hand-overs).
 */
static double pingpong(void)
{
	struct cm_model *m = fresh(2);
	uint64_t a, b, start;

	cm_access(m, 0, SRC_BASE, 8, CM_STORE);
	cm_access(m, 1, SRC_BASE, 8, CM_STORE);
	start = clock_of(m, 0) > clock_of(m, 1) ? clock_of(m, 0)
						: clock_of(m, 1);
	for (unsigned i = 0; i < 2 * PINGPONG_ROUNDS; i++) {
		unsigned cpu = i & 1;

		cm_instructions(m, cpu, 1);
		cm_access(m, cpu, SRC_BASE, 8, CM_LOCKED);
		cm_access(m, cpu, SRC_BASE, 8, CM_LOCKED | CM_STORE);
	}
	a = clock_of(m, 0);
	b = clock_of(m, 1);
	cm_destroy(m);
	return (double)((a > b ? a : b) - start) * ns_per_cycle() /
	       (2 * PINGPONG_ROUNDS);
}

/* cpu spins (one modelled instruction a turn, an L1D-resident flag)
 * until its clock reaches t: waiting for another CPU's write. */
static void spin_until(struct cm_model *m, unsigned cpu, uint64_t t)
{
	while (clock_of(m, cpu) < t)
		cm_instructions(m, cpu, 1);
}

/*
 * The two-line read/write ping-pong of jcurl/code.research's
 * core_latency ("-b readwrite"): each CPU writes its own flag line and
 * spins reading the other's; on seeing the other's write it writes its
 * own. The lines are 128 bytes apart (no adjacent-line sharing). A CPU
 * cannot see a write before the writer made it: it spins until the
 * writer's clock. Returns ns per state change (the tool's figure).
 */
static double pingpong_rw(void)
{
	struct cm_model *m = fresh(2);
	const uint64_t flag[2] = { SRC_BASE, SRC_BASE + 2 * CM_LINE_SIZE };
	uint64_t a, b, start;

	cm_access(m, 0, flag[0], 4, CM_STORE);
	cm_access(m, 1, flag[1], 4, CM_STORE);
	start = clock_of(m, 0) > clock_of(m, 1) ? clock_of(m, 0)
						: clock_of(m, 1);
	for (unsigned i = 0; i < 2 * PINGPONG_ROUNDS; i++) {
		unsigned cpu = i & 1, other = cpu ^ 1;

		spin_until(m, cpu, clock_of(m, other));
		cm_access(m, cpu, flag[other], 4, 0);
		cm_instructions(m, cpu, 1);
		cm_access(m, cpu, flag[cpu], 4, CM_STORE);
	}
	a = clock_of(m, 0);
	b = clock_of(m, 1);
	cm_destroy(m);
	return (double)((a > b ? a : b) - start) * ns_per_cycle() /
	       (2 * PINGPONG_ROUNDS);
}

static void run_profile(void)
{
	uint64_t llc = prof->llc.size;
	double rd, wr, nt, full, part;

	printf("# profile %s: modelled figures (no hardware measured)\n",
	       prof->name);
	result("lat_l1", chase(prof->l1d.size / 2), "cycles",
	       "dependent loads, working set half of L1D");
	if (prof->l2.size)
		result("lat_l2", chase(prof->l2.size / 2), "cycles",
		       "dependent loads, working set half of L2");
	result("lat_llc", chase(llc / 2), "cycles",
	       "dependent loads, working set half of the LLC");
	result("lat_mem", chase(llc * CHASE_MEM_LLCS / shrink) * ns_per_cycle(),
	       "ns",
	       "dependent loads, working set 8 (--short: 4) x the LLC");
	for (unsigned i = 0; i < sizeof(sciencemark_strides) /
				 sizeof(sciencemark_strides[0]); i++) {
		char name[32];

		snprintf(name, sizeof(name), "lat_llc_s%u",
			 sciencemark_strides[i]);
		result(name, chase_stride(llc / 2, sciencemark_strides[i]),
		       "cycles", "dependent loads at a fixed stride, "
		       "half of the LLC");
	}
	if (prof->l2.size)
		result("l2_read_bw", level_read_bw(prof->l2.size / 2),
		       "B/cycle", "one core, 16-byte loads, half of L2");
	result("llc_read_bw", level_read_bw(llc / 2), "B/cycle",
	       "one core, 16-byte loads, half of the LLC");
	rd = stream(STREAM_READ);
	wr = stream(STREAM_WRITE);
	nt = stream(STREAM_NT);
	result("read_bw", rd, "GB/s", "one core, 16-byte loads, beyond LLC");
	result("write_bw", wr, "GB/s", "one core, 16-byte stores");
	result("nt_write_bw", nt, "GB/s", "one core, 16-byte movntdq");
	result("nt_over_wb", nt / wr, "ratio", "non-temporal / ordinary");
	result("copy_bw", stream(STREAM_COPY), "GB/s",
	       "one core, 16-byte load + store");
	full = wc_rate(CM_LINE_SIZE, CM_LINE_SIZE);
	part = wc_rate(8, CM_LINE_SIZE);
	result("wc_full_bw", full, "GB/s", "WC, whole lines");
	result("wc_full_over_partial", full / part, "ratio",
	       "WC, whole lines / 8 bytes a line");
	result("uc_load", uc_time(false), "ns", "one 8-byte UC load");
	result("uc_store", uc_time(true), "ns", "one 8-byte UC store");
	result("sfence", fence_cost(0), "cycles", "nothing buffered");
	result("mfence", fence_cost(1), "cycles", "nothing buffered");
	result("locked_add", fence_cost(2), "cycles", "L1D-resident line");
	result("pingpong", pingpong(), "ns", "one-way hand-over, locked CAS");
	result("pingpong_rw", pingpong_rw(), "ns",
	       "state change, two-line read/write");
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = malloc(MAX_PROFILE_TEXT);
	size_t n;

	if (!f || !buf) {
		fprintf(stderr, "model_validate: cannot read %s\n", path);
		exit(1);
	}
	n = fread(buf, 1, MAX_PROFILE_TEXT - 1, f);
	if (n == MAX_PROFILE_TEXT - 1) {
		fprintf(stderr, "model_validate: %s is too large\n", path);
		exit(1);
	}
	buf[n] = '\0';
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	char *text;
	int first = 1;

	if (argc > 1 && !strcmp(argv[1], "--short")) {
		shrink = 2;
		first = 2;
	}
	if (argc < first + 2) {
		fprintf(stderr,
			"usage: %s [--short] PROFILES_FILE PROFILE...\n",
			argv[0]);
		return 2;
	}
	text = read_all(argv[first]);
	for (int i = first + 1; i < argc; i++) {
		struct cm_profile p;
		char err[256];

		if (!cm_profile_parse(text, argv[i], &p, err, sizeof(err))) {
			fprintf(stderr, "model_validate: %s\n", err);
			return 1;
		}
		prof = &p;
		run_profile();
	}
	free(text);
	return 0;
}
