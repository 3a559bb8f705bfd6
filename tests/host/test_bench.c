/*
 * Host tests for lib/bench.c and lib/bench_output.c: iteration growth and
 * per-iteration costs under a fake clock that advances a fixed amount per
 * iteration (so every figure is exact), counters plumbing with a fake
 * backend, the region marks around measured repetitions, the multi-CPU
 * aggregate, and the exact text of the @@ENV /
 * @@RESULT lines and of the human table.
 */
// HOST_SRCS: lib/stats.c lib/bench.c lib/bench_output.c
#include <stdint.h>
#include <string.h>
#include "lib/bench.h"
#include "lib/bench_output.h"
#include "lib/compiler.h"
#include "lib/ktest.h"
#include "tests/host/host_shim.h"

/* ---- a fake clock: time moves only when the measured function runs ------ */

#define FAKE_HZ 2000000000ull		/* 2 GHz: 1 tick = 0.5 ns */
#define FAKE_TICKS_PER_ITER 1000ull	/* 500 ns per iteration */
#define ONE_MS_NS 1000000ull

static uint64_t fake_ticks;
static uint64_t fake_reads;
static unsigned fake_calls;
static uint64_t fake_iters_seen[64];

static uint64_t fake_now(void)
{
	fake_reads++;
	return fake_ticks;
}

static const struct bench_clock fake_clock = {
	.now = fake_now,
	.hz = FAKE_HZ,
	.name = "fake",
};

static void fake_reset(void)
{
	fake_ticks = 0;
	fake_reads = 0;
	fake_calls = 0;
	memset(fake_iters_seen, 0, sizeof(fake_iters_seen));
}

/* arg: ticks per iteration. */
static void fake_work(void *arg, uint64_t iters)
{
	uint64_t per_iter = *(const uint64_t *)arg;

	if (fake_calls < ARRAY_SIZE(fake_iters_seen))
		fake_iters_seen[fake_calls] = iters;
	fake_calls++;
	fake_ticks += per_iter * iters;
}

KTEST(bench, defaults)
{
	struct bench_params p;

	bench_params_default(&p);
	EXPECT_EQ(p.reps, 7);
	EXPECT_EQ(p.warmup, 1);
	EXPECT_EQ(p.min_iters, 1);
	EXPECT_EQ(p.min_time_ns, BENCH_DEFAULT_MIN_TIME_NS);
}

KTEST(bench, calibrate_doubles_until_min_time)
{
	uint64_t per_iter = FAKE_TICKS_PER_ITER;
	struct bench_params p;
	bool capped = true;
	uint64_t iters;

	fake_reset();
	bench_params_default(&p);
	p.min_time_ns = ONE_MS_NS;	/* 2,000,000 ticks = 2000 iterations */
	iters = bench_calibrate(&fake_clock, &p, fake_work, &per_iter,
				&capped);
	EXPECT_EQ(iters, 2048);
	EXPECT_FALSE(capped);
	/* 1, 2, 4, ..., 2048: twelve runs */
	EXPECT_EQ(fake_calls, 12);
	EXPECT_EQ(fake_iters_seen[0], 1);
	EXPECT_EQ(fake_iters_seen[1], 2);
	EXPECT_EQ(fake_iters_seen[11], 2048);
}

KTEST(bench, calibrate_exact_boundary)
{
	uint64_t per_iter = FAKE_TICKS_PER_ITER;
	struct bench_params p;

	/* 1024 iterations last exactly the minimum: that is enough */
	fake_reset();
	bench_params_default(&p);
	p.min_time_ns = 512000;		/* 1,024,000 ticks */
	EXPECT_EQ(bench_calibrate(&fake_clock, &p, fake_work, &per_iter, NULL),
		  1024);
}

KTEST(bench, calibrate_caps_a_stopped_clock)
{
	uint64_t per_iter = 0;	/* the clock never moves */
	struct bench_params p;
	bool capped = false;

	fake_reset();
	bench_params_default(&p);
	p.max_iters = 100;
	EXPECT_EQ(bench_calibrate(&fake_clock, &p, fake_work, &per_iter,
				  &capped),
		  64);
	EXPECT_TRUE(capped);
	EXPECT_EQ(fake_calls, 7);	/* 1..64 */
}

KTEST(bench, run_reports_exact_per_iteration_cost)
{
	uint64_t per_iter = FAKE_TICKS_PER_ITER;
	struct bench_params p;
	struct bench_result res;

	fake_reset();
	bench_params_default(&p);
	p.min_time_ns = ONE_MS_NS;
	bench_run(&res, &fake_clock, NULL, &p, fake_work, &per_iter);

	/* 12 calibration runs + 1 warm-up + 7 measured */
	EXPECT_EQ(fake_calls, 20);
	EXPECT_EQ(res.samples.iters, 2048);
	EXPECT_EQ(res.samples.reps, 7);
	EXPECT_EQ(res.samples.ticks[0], 2048 * FAKE_TICKS_PER_ITER);
	EXPECT_EQ(res.samples.ticks[6], 2048 * FAKE_TICKS_PER_ITER);
	EXPECT_EQ(res.ticks_per_iter.n, 7);
	EXPECT_EQ(res.ticks_per_iter.median, 1000 * BENCH_SCALE);
	EXPECT_EQ(res.ticks_per_iter.min, 1000 * BENCH_SCALE);
	EXPECT_EQ(res.ticks_per_iter.max, 1000 * BENCH_SCALE);
	EXPECT_EQ(res.ticks_per_iter.spread_ppm, 0);
	/* 1000 ticks at 2 GHz = 500 ns = 500000 milli-ns */
	EXPECT_EQ(res.ns_per_iter.median, 500 * BENCH_SCALE);
	EXPECT_EQ(res.cpus, 1);
	EXPECT_FALSE(res.capped);
	EXPECT_EQ(res.samples.ncounters, 0);
}

/* Region marks: every measured repetition, outside its timed window. */
static uint64_t region_log[32];
static unsigned region_n;
static uint64_t region_reads_at_begin;

static void region_begin(uint64_t id)
{
	region_reads_at_begin = fake_reads;
	if (region_n < ARRAY_SIZE(region_log))
		region_log[region_n++] = id;
}

static void region_end(uint64_t id, uint64_t iters)
{
	if (iters != 2048)
		id = 0;
	/* Both clock reads of the repetition happened inside the region. */
	if (fake_reads != region_reads_at_begin + 2)
		id = 0;
	if (region_n < ARRAY_SIZE(region_log))
		region_log[region_n++] = id;
}

KTEST(bench, regions_mark_each_measured_repetition)
{
	static const struct bench_region_ops ops = {
		.begin = region_begin,
		.end = region_end,
	};
	uint64_t per_iter = FAKE_TICKS_PER_ITER;
	struct bench_params p;
	struct bench_result res;

	fake_reset();
	region_n = 0;
	bench_params_default(&p);
	p.min_time_ns = ONE_MS_NS;
	bench_set_region_ops(&ops);
	bench_run(&res, &fake_clock, NULL, &p, fake_work, &per_iter);
	bench_set_region_ops(NULL);
	/* 7 measured repetitions: begin(id), end(id), ids increasing. */
	ASSERT_EQ(region_n, 14);
	for (unsigned i = 0; i < 7; i++) {
		EXPECT_EQ(region_log[2 * i], region_log[2 * i + 1]);
		EXPECT_TRUE(region_log[2 * i] != 0);
		if (i)
			EXPECT_TRUE(region_log[2 * i] > region_log[2 * i - 2]);
	}
	/* Unchanged timing: the marks are outside the window. */
	EXPECT_EQ(res.samples.ticks[0], 2048 * FAKE_TICKS_PER_ITER);
}

/* A region over several CPUs: begin_all when the ops have it, else begin. */
static uint64_t all_begun;

static void region_begin_all(uint64_t id)
{
	all_begun = id;
}

static void region_end_any(uint64_t id, uint64_t iters)
{
	(void)id;
	(void)iters;
}

KTEST(bench, region_over_all_cpus_uses_begin_all)
{
	static const struct bench_region_ops with_all = {
		.begin = region_begin,
		.end = region_end_any,
		.begin_all = region_begin_all,
	};
	static const struct bench_region_ops without_all = {
		.begin = region_begin,
		.end = region_end_any,
	};
	uint64_t a, b, c;

	region_n = 0;
	all_begun = 0;
	bench_set_region_ops(&with_all);
	a = bench_region_begin_all();
	bench_region_end(a, 1);
	EXPECT_TRUE(a != 0);
	EXPECT_EQ(all_begun, a);
	EXPECT_EQ(region_n, 0);		/* begin() was not called */
	b = bench_region_begin();
	bench_region_end(b, 1);
	EXPECT_EQ(region_n, 1);
	EXPECT_EQ(region_log[0], b);
	EXPECT_TRUE(b > a);		/* one id sequence */
	bench_set_region_ops(&without_all);
	c = bench_region_begin_all();
	bench_region_end(c, 1);
	EXPECT_EQ(region_n, 2);		/* fell back to begin() */
	EXPECT_EQ(region_log[1], c);
	EXPECT_EQ(all_begun, a);
	bench_set_region_ops(NULL);
	EXPECT_EQ(bench_region_begin_all(), 0);
}

KTEST(bench, fractional_cost_keeps_milli_precision)
{
	struct bench_samples s;
	struct bench_result res;
	static const uint64_t ticks[] = {1500, 1700, 1600};

	/* 1000 iterations: 1.5, 1.7, 1.6 ticks each */
	bench_samples_init(&s, 1000, 0);
	for (unsigned r = 0; r < ARRAY_SIZE(ticks); r++)
		s.ticks[r] = ticks[r];
	s.reps = ARRAY_SIZE(ticks);
	bench_result_from_samples(&res, &s, FAKE_HZ, NULL);
	EXPECT_EQ(res.ticks_per_iter.min, 1500);
	EXPECT_EQ(res.ticks_per_iter.median, 1600);
	EXPECT_EQ(res.ticks_per_iter.max, 1700);
	EXPECT_EQ(res.ticks_per_iter.spread_ppm, 125000);	/* 0.2/1.6 */
	/* 1.6 ticks at 2 GHz = 0.8 ns */
	EXPECT_EQ(res.ns_per_iter.median, 800);
}

/* ---- a fake counters backend -------------------------------------------- */

#define FAKE_NCOUNTERS 2
#define FAKE_INSN_PER_TICK 3

struct fake_pmu {
	unsigned starts, stops, reads;
	bool running;
	uint64_t t_start, t_stop;
};

static const char *const fake_counter_names[FAKE_NCOUNTERS] = {
	"cycles", "instructions"
};

static void fake_pmu_start(void *ctx)
{
	struct fake_pmu *pmu = ctx;

	pmu->starts++;
	pmu->running = true;
	pmu->t_start = fake_ticks;
}

static void fake_pmu_stop(void *ctx)
{
	struct fake_pmu *pmu = ctx;

	pmu->stops++;
	pmu->running = false;
	pmu->t_stop = fake_ticks;
}

static void fake_pmu_read(void *ctx, uint64_t *values)
{
	struct fake_pmu *pmu = ctx;
	uint64_t elapsed = pmu->t_stop - pmu->t_start;

	pmu->reads++;
	values[0] = pmu->running ? 0 : elapsed;
	values[1] = FAKE_INSN_PER_TICK * elapsed;
}

KTEST(bench, counters_plumbing)
{
	uint64_t per_iter = FAKE_TICKS_PER_ITER;
	struct fake_pmu pmu = {0};
	struct bench_counters ctr = {
		.n = FAKE_NCOUNTERS,
		.names = fake_counter_names,
		.start = fake_pmu_start,
		.stop = fake_pmu_stop,
		.read = fake_pmu_read,
		.ctx = &pmu,
	};
	struct bench_params p;
	struct bench_result res;

	fake_reset();
	bench_params_default(&p);
	p.min_time_ns = ONE_MS_NS;
	p.reps = 5;
	bench_run(&res, &fake_clock, &ctr, &p, fake_work, &per_iter);

	/* only measured repetitions are counted */
	EXPECT_EQ(pmu.starts, 5);
	EXPECT_EQ(pmu.stops, 5);
	EXPECT_EQ(pmu.reads, 5);
	EXPECT_EQ(res.samples.ncounters, 2);
	EXPECT_EQ(res.samples.counters[0][0], 2048 * FAKE_TICKS_PER_ITER);
	EXPECT_EQ(res.samples.counters[4][1],
		  FAKE_INSN_PER_TICK * 2048 * FAKE_TICKS_PER_ITER);
	EXPECT_STREQ(res.counter_names[0], "cycles");
	EXPECT_STREQ(res.counter_names[1], "instructions");
	EXPECT_EQ(res.counter_names[2], NULL);
	EXPECT_EQ(res.counter_per_iter[0].median, 1000 * BENCH_SCALE);
	EXPECT_EQ(res.counter_per_iter[1].median, 3000 * BENCH_SCALE);
	EXPECT_EQ(res.counter_per_iter[1].n, 5);
}

KTEST(bench, sample_once_checks_counter_count)
{
	uint64_t per_iter = 1;
	struct fake_pmu pmu = {0};
	struct bench_counters ctr = {
		.n = FAKE_NCOUNTERS, .names = fake_counter_names,
		.start = fake_pmu_start, .stop = fake_pmu_stop,
		.read = fake_pmu_read, .ctx = &pmu,
	};
	struct bench_samples s;

	bench_samples_init(&s, 10, 1);	/* says one counter, backend has 2 */
	EXPECT_TRUE(HOST_EXPECT_PANIC(bench_sample_once(
		&s, &fake_clock, &ctr, fake_work, &per_iter)));
}

KTEST(bench, aggregate_over_cpus)
{
	static const uint64_t cpu0[] = {1000, 2000, 1500};
	static const uint64_t cpu1[] = {1200, 1800, 1600};
	struct bench_result percpu[2], agg;
	struct bench_samples s;
	static const char *const names[] = {"llc_misses"};

	bench_samples_init(&s, 100, 1);
	for (unsigned r = 0; r < 3; r++) {
		s.ticks[r] = cpu0[r];
		s.counters[r][0] = 10;
	}
	s.reps = 3;
	bench_result_from_samples(&percpu[0], &s, FAKE_HZ, names);
	for (unsigned r = 0; r < 3; r++) {
		s.ticks[r] = cpu1[r];
		s.counters[r][0] = 30;
	}
	bench_result_from_samples(&percpu[1], &s, FAKE_HZ, names);

	EXPECT_EQ(percpu[0].ticks_per_iter.median, 15000);
	EXPECT_EQ(percpu[1].ticks_per_iter.median, 16000);

	bench_aggregate(&agg, percpu, 2);
	EXPECT_EQ(agg.cpus, 2);
	EXPECT_EQ(agg.samples.iters, 200);
	/* wall time of repetition r = slowest CPU: 1200, 2000, 1600 */
	EXPECT_EQ(agg.samples.ticks[0], 1200);
	EXPECT_EQ(agg.samples.ticks[1], 2000);
	EXPECT_EQ(agg.samples.ticks[2], 1600);
	EXPECT_EQ(agg.ticks_per_iter.min, 6000);
	EXPECT_EQ(agg.ticks_per_iter.median, 8000);
	EXPECT_EQ(agg.ticks_per_iter.max, 10000);
	/* 40 misses per 200 iterations */
	EXPECT_EQ(agg.counter_per_iter[0].median, 200);
	EXPECT_STREQ(agg.counter_names[0], "llc_misses");
}

KTEST(bench, rate_scaled)
{
	/* 4096 bytes in 2000 ticks at 2 GHz = 4096 B / 1 us = 4.096e9 B/s */
	EXPECT_EQ(bench_rate_scaled(4096, 2000, FAKE_HZ),
		  4096000000ull * BENCH_SCALE);
	/* 1 op in 3 ticks at 1 Hz = 0.333 op/s */
	EXPECT_EQ(bench_rate_scaled(1, 3, 1), 333);
	EXPECT_EQ(bench_rate_scaled(1, 0, 1), 0);
}

/* ---- output: captured through a test sink ------------------------------- */

#define CAPTURE_MAX 16384
#define CAPTURE_LINES 64

static char captured[CAPTURE_MAX];
static size_t captured_len;
static size_t line_start[CAPTURE_LINES];
static unsigned captured_lines;

static void capture_sink(const char *s, size_t n)
{
	if (captured_lines < CAPTURE_LINES)
		line_start[captured_lines] = captured_len;
	captured_lines++;
	if (captured_len + n < CAPTURE_MAX) {
		memcpy(captured + captured_len, s, n);
		captured_len += n;
		captured[captured_len] = '\0';
	}
}

static void capture_start(void)
{
	captured_len = 0;
	captured_lines = 0;
	captured[0] = '\0';
	bench_output_set_sink(capture_sink);
}

/* Copy captured line i (without its newline) into buf. */
static const char *captured_line(unsigned i, char *buf, size_t size)
{
	size_t start, end;

	if (i >= captured_lines || i >= CAPTURE_LINES)
		return "";
	start = line_start[i];
	end = i + 1 < captured_lines ? line_start[i + 1] : captured_len;
	if (end > start && captured[end - 1] == '\n')
		end--;
	if (end - start >= size)
		end = start + size - 1;
	memcpy(buf, captured + start, end - start);
	buf[end - start] = '\0';
	return buf;
}

static void test_env(struct bench_env *env)
{
	memset(env, 0, sizeof(*env));
	env->cpu_model = "QEMU Virtual CPU \"v2\"";
	env->hypervisor = "TCGTCGTCGTCG";
	env->caches_modelled = false;
	env->cpus_online = 2;
	env->ram_bytes = 536870912;
	env->tsc_hz = 2999999000ull;
	env->tsc_source = "cpuid";
	env->pmu = false;
	env->memtypes_honoured = BENCH_UNKNOWN;
	env->kernel_version = "0.1";
	env->git_hash = "abc1234";
	env->cmdline = "run=all quick";
	env->mode = BENCH_MODE_ICOUNT;
}

KTEST(bench_output, json_escaping)
{
	char buf[128];
	int n;

	n = bench_json_string(buf, sizeof(buf), "a\"b\\c\n\t\r\x01\x7f\xff/");
	EXPECT_STREQ(buf, "\"a\\\"b\\\\c\\n\\t\\r\\u0001\\u007f\\u00ff/\"");
	EXPECT_EQ(n, (int)strlen(buf));
	bench_json_string(buf, sizeof(buf), "");
	EXPECT_STREQ(buf, "\"\"");
	/* snprintf semantics when the buffer is too small */
	n = bench_json_string(buf, 4, "abcdef");
	EXPECT_EQ(n, 8);
	EXPECT_STREQ(buf, "\"ab");
}

KTEST(bench_output, env_line_exact)
{
	struct bench_env env;
	char buf[BENCH_LINE_MAX];

	test_env(&env);
	bench_format_env_line(buf, sizeof(buf), &env);
	EXPECT_STREQ(buf,
		"@@ENV {\"cpu_model\":\"QEMU Virtual CPU \\\"v2\\\"\","
		"\"hypervisor\":\"TCGTCGTCGTCG\",\"caches_modelled\":false,"
		"\"cpus_online\":2,\"ram_bytes\":536870912,"
		"\"tsc_hz\":2999999000,\"tsc_source\":\"cpuid\","
		"\"pmu\":false,\"memtypes_honoured\":\"unknown\","
		"\"kernel_version\":\"0.1\",\"git_hash\":\"abc1234\","
		"\"cmdline\":\"run=all quick\",\"mode\":\"icount\","
		"\"schema\":1}\n");

	/* bare metal: no vendor string, caches real, types checked */
	env.hypervisor = NULL;
	env.caches_modelled = true;
	env.memtypes_honoured = BENCH_YES;
	env.mode = BENCH_MODE_NORMAL;
	env.cmdline = NULL;
	bench_format_env_line(buf, sizeof(buf), &env);
	EXPECT_TRUE(strstr(buf, "\"hypervisor\":\"none\"") != NULL);
	EXPECT_TRUE(strstr(buf, "\"caches_modelled\":true") != NULL);
	EXPECT_TRUE(strstr(buf, "\"memtypes_honoured\":\"yes\"") != NULL);
	EXPECT_TRUE(strstr(buf, "\"cmdline\":\"\"") != NULL);
	EXPECT_TRUE(strstr(buf, "\"mode\":\"normal\"") != NULL);
}

static void copy_figure(struct bench_figure *f)
{
	const uint64_t s[] = {123400, 123500, 130000, 122000, 125000, 123000,
			      124000};
	uint64_t scratch[ARRAY_SIZE(s)];
	struct stats st;

	stats_compute(&st, s, ARRAY_SIZE(s), scratch);
	bench_figure_init(f, "copy", "movnti", "copy_cost", "cycles/KiB",
			  BENCH_SCALE_DIGITS, &st);
	f->size = 4096;
}

KTEST(bench_output, result_line_exact)
{
	struct bench_figure f;
	char buf[BENCH_LINE_MAX];

	copy_figure(&f);
	/* sorted: 122000 123000 123400 123500 124000 125000 130000 */
	bench_format_result_line(buf, sizeof(buf), &f, true);
	EXPECT_STREQ(buf,
		"@@RESULT {\"experiment\":\"copy\",\"variant\":\"movnti\","
		"\"metric\":\"copy_cost\",\"unit\":\"cycles/KiB\","
		"\"value\":123.500,\"n\":7,\"min\":122.000,"
		"\"median\":123.500,\"max\":130.000,\"mean\":124.414,"
		"\"mad\":0.500,\"spread_pct\":6.48,\"cpus\":1,"
		"\"size\":4096,\"caches_modelled\":true,\"schema\":1}\n");

	f.cpus = 4;
	f.size = 0;
	f.clients = 3;
	f.st.spread_ppm = STATS_PPM_UNDEFINED;
	bench_format_result_line(buf, sizeof(buf), &f, false);
	EXPECT_TRUE(strstr(buf, "\"spread_pct\":null,\"cpus\":4,"
				"\"clients\":3,\"caches_modelled\":false,")
		    != NULL);
	EXPECT_TRUE(strstr(buf, "\"size\"") == NULL);
}

KTEST(bench_output, missing_line_exact)
{
	char buf[BENCH_LINE_MAX];

	bench_format_missing_line(buf, sizeof(buf), "tlb_purge", "batched",
				  NULL, BENCH_CUT_SHORT,
				  "time cap: 0 of 256 \"pages\"");
	EXPECT_STREQ(buf,
		"@@MISSING {\"experiment\":\"tlb_purge\","
		"\"variant\":\"batched\",\"metric\":\"*\","
		"\"status\":\"cut_short\","
		"\"reason\":\"time cap: 0 of 256 \\\"pages\\\"\","
		"\"schema\":1}\n");
	bench_format_missing_line(buf, sizeof(buf), "copy", NULL, NULL,
				  BENCH_SKIPPED, "needs RAM");
	EXPECT_TRUE(strstr(buf, "\"variant\":\"*\",\"metric\":\"*\","
				"\"status\":\"skipped\"") != NULL);
}

KTEST(bench_output, whole_skips_count_only_a_whole_experiment)
{
	unsigned long before = bench_missing_whole_skips();

	capture_start();
	bench_missing("tlb_purge", "batched", NULL, BENCH_CUT_SHORT, "cap");
	bench_missing("falseshare", "packed", "increment", BENCH_SKIPPED,
		      "one CPU");
	bench_missing("copy", NULL, NULL, BENCH_CUT_SHORT, "cap");
	EXPECT_EQ(bench_missing_whole_skips(), before);
	bench_missing("copy", NULL, NULL, BENCH_SKIPPED, "needs RAM");
	EXPECT_EQ(bench_missing_whole_skips(), before + 1);
	bench_output_set_sink(NULL);
}

KTEST(bench_output, long_strings_are_cut_validly)
{
	char name[600], buf[BENCH_LINE_MAX];
	struct bench_figure f;
	const char *p, *q;

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	name[10] = '"';		/* an escape near the start still counts */
	copy_figure(&f);
	f.variant = name;
	bench_format_result_line(buf, sizeof(buf), &f, true);
	p = strstr(buf, "\"variant\":\"");
	ASSERT_TRUE(p != NULL);
	p += strlen("\"variant\":\"");
	q = strstr(p, "...\",\"metric\"");
	ASSERT_TRUE(q != NULL);
	/* escaped contents including the "..." fill the field budget */
	EXPECT_EQ(q + 3 - p, BENCH_FIELD_MAX);
}

KTEST(bench_output, tcg_header_and_result_flag)
{
	struct bench_env env;
	struct bench_figure f;
	char line[BENCH_LINE_MAX];

	test_env(&env);
	capture_start();
	bench_output_env(&env);
	EXPECT_TRUE(strstr(captured, "does not model caches") != NULL);
	EXPECT_TRUE(strstr(captured, "Hypervisor      : TCGTCGTCGTCG\n") !=
		    NULL);
	EXPECT_TRUE(strstr(captured, "RAM             : 512 MiB\n") != NULL);
	EXPECT_TRUE(strstr(captured,
			   "TSC             : 2999.999 MHz (source: cpuid)\n")
		    != NULL);
	EXPECT_TRUE(strstr(captured, "Mode            : icount") != NULL);
	/* the @@ENV line comes last, whole, in one write */
	captured_line(captured_lines - 1, line, sizeof(line));
	EXPECT_EQ(strncmp(line, BENCH_ENV_PREFIX, strlen(BENCH_ENV_PREFIX)),
		  0);
	EXPECT_FALSE(bench_output_caches_modelled());

	copy_figure(&f);
	capture_start();
	bench_result_print(&f);
	EXPECT_EQ(captured_lines, 1);
	EXPECT_TRUE(strstr(captured, "\"caches_modelled\":false") != NULL);

	/* a platform that models caches says so, and nothing about TCG */
	env.caches_modelled = true;
	env.hypervisor = NULL;
	capture_start();
	bench_output_env(&env);
	EXPECT_TRUE(strstr(captured, "does not model caches") == NULL);
	EXPECT_TRUE(strstr(captured, "none (bare metal)") != NULL);
	EXPECT_TRUE(bench_output_caches_modelled());
	bench_output_set_sink(NULL);
}

KTEST(bench_output, cache_model_header)
{
	struct bench_env env;
	char buf[BENCH_LINE_MAX];

	test_env(&env);
	env.memtypes_honoured = BENCH_NO;
	env.cache_model = "core2-2007";
	capture_start();
	bench_output_env(&env);
	EXPECT_TRUE(strstr(captured, "Caches          : modelled (profile "
			   "core2-2007)") != NULL);
	EXPECT_TRUE(strstr(captured, "honoured: no in these timings; "
			   "honoured (by the model, profile core2-2007)\n")
		    != NULL);
	/* The TCG timings stay unmodelled, and the header says where the
	 * modelled figures are. */
	EXPECT_TRUE(strstr(captured, "Caches modelled : NO in these timings")
		    != NULL);
	EXPECT_FALSE(bench_output_caches_modelled());
	bench_output_set_sink(NULL);
	bench_format_env_line(buf, sizeof(buf), &env);
	EXPECT_TRUE(strstr(buf, "\"caches_modelled\":false") != NULL);
	EXPECT_TRUE(strstr(buf, "\"cache_model\":\"core2-2007\"") != NULL);
}

KTEST(bench_output, table_alignment)
{
	struct bench_figure f[2];
	char l[6][256];
	static const uint64_t slow[] = {2500000, 2600000, 2550000};
	uint64_t scratch[3];
	struct stats st;

	copy_figure(&f[0]);
	stats_compute(&st, slow, 3, scratch);
	bench_figure_init(&f[1], "copy", "rep_movsb_long_name", "copy_cost",
			  "cycles/KiB", BENCH_SCALE_DIGITS, &st);

	capture_start();
	bench_report("copy 4 KiB", f, 2);
	bench_output_set_sink(NULL);
	/* title, head, rule, 2 rows, 2 @@RESULT */
	ASSERT_EQ(captured_lines, 7);
	for (unsigned i = 0; i < 5; i++)
		captured_line(i, l[i], sizeof(l[i]));

	EXPECT_STREQ(l[0], "=== copy 4 KiB ===");
	EXPECT_STREQ(l[1],
		"experiment  variant              metric     unit        "
		"     min    median       max  spread  n");
	EXPECT_STREQ(l[3],
		"copy        movnti               copy_cost  cycles/KiB  "
		" 122.000   123.500   130.000   6.48%  7");
	EXPECT_STREQ(l[4],
		"copy        rep_movsb_long_name  copy_cost  cycles/KiB  "
		"2500.000  2550.000  2600.000   3.92%  3");
	/* the rule spans the header exactly */
	EXPECT_EQ(strlen(l[2]), strlen(l[1]));
	EXPECT_EQ(strspn(l[2], "-"), strlen(l[1]));
	captured_line(5, l[5], sizeof(l[5]));
	EXPECT_EQ(strncmp(l[5], BENCH_RESULT_PREFIX,
			  strlen(BENCH_RESULT_PREFIX)),
		  0);
}

KTEST(bench, window_overlap)
{
	uint64_t s2[] = { 100, 100 }, e2[] = { 200, 200 };
	uint64_t s3[] = { 100, 150, 120 }, e3[] = { 200, 250, 180 };
	uint64_t sa[] = { 100, 300 }, ea[] = { 200, 400 };
	uint64_t st[] = { 100, 200 }, et[] = { 200, 300 };
	uint64_t s1[] = { 5 }, e1[] = { 9 };

	EXPECT_EQ(bench_window_overlap(s2, e2, 2), BENCH_OVERLAP_FULL);
	/* All three run from 150 to 180, of a span 100..250: 200 per mille. */
	EXPECT_EQ(bench_window_overlap(s3, e3, 3), 200);
	/* One CPU ended before the other started: it ran alone. */
	EXPECT_EQ(bench_window_overlap(sa, ea, 2), 0);
	/* Touching windows share no time. */
	EXPECT_EQ(bench_window_overlap(st, et, 2), 0);
	EXPECT_EQ(bench_window_overlap(s1, e1, 1), BENCH_OVERLAP_FULL);
}

/* A capped figure says so in its @@RESULT line and under the table;
 * an uncapped one carries no capped field. */
KTEST(bench_output, capped_is_reported)
{
	struct bench_figure f;
	struct stats st;
	uint64_t v[3] = {1000, 1100, 1200};
	char line[512], out[2048];

	stats_compute(&st, v, 3, v);
	bench_figure_init(&f, "falseshare", "packed", "increment", "ns/op",
			  3, &st);
	EXPECT_GT(bench_format_result_line(line, sizeof(line), &f, false), 0);
	EXPECT_TRUE(strstr(line, "capped") == NULL);
	f.capped = true;
	EXPECT_GT(bench_format_result_line(line, sizeof(line), &f, false), 0);
	EXPECT_TRUE(strstr(line, "\"capped\":true") != NULL);
	host_capture_start(out, sizeof(out));
	bench_table_print("t", &f, 1);
	host_capture_stop();
	EXPECT_TRUE(strstr(out, "note: packed increment: capped") != NULL);
}

/* A figure whose spread exceeds BENCH_NOISY_SPREAD_PCT is marked in its
 * table cell, counted in a note under the table and flagged "noisy":true
 * in its @@RESULT line; one at the threshold, or with an undefined
 * spread, is not. */
KTEST(bench_output, noisy_is_marked)
{
	struct bench_figure f[2];
	struct stats st;
	/* spread (150 - 100) / 100 = 50 %: at the threshold, quiet */
	uint64_t quiet[3] = {100, 100, 150};
	/* spread (151 - 100) / 100 = 51 %: noisy */
	uint64_t noisy[3] = {100, 100, 151};
	uint64_t scratch[3];
	char line[512], out[4096];

	stats_compute(&st, quiet, 3, scratch);
	bench_figure_init(&f[0], "memtype", "WB", "latency", "cycles", 0,
			  &st);
	stats_compute(&st, noisy, 3, scratch);
	bench_figure_init(&f[1], "memtype", "UC", "latency", "cycles", 0,
			  &st);
	EXPECT_FALSE(bench_figure_noisy(&f[0]));
	EXPECT_TRUE(bench_figure_noisy(&f[1]));

	EXPECT_GT(bench_format_result_line(line, sizeof(line), &f[0], false),
		  0);
	EXPECT_TRUE(strstr(line, "noisy") == NULL);
	EXPECT_GT(bench_format_result_line(line, sizeof(line), &f[1], false),
		  0);
	EXPECT_TRUE(strstr(line, "\"spread_pct\":51.00,\"cpus\":1,"
			      "\"noisy\":true,") != NULL);

	host_capture_start(out, sizeof(out));
	bench_table_print("t", f, 2);
	host_capture_stop();
	EXPECT_TRUE(strstr(out, " 50.00%  3\n") != NULL);
	EXPECT_TRUE(strstr(out, " 51.00% " BENCH_NOISY_MARK "  3\n") != NULL);
	EXPECT_TRUE(strstr(out, "note: 1 of 2 figures " BENCH_NOISY_MARK
			      ": their repetitions spread more than 50%")
		    != NULL);

	/* median 0, samples differ: spread undefined, printed n/a */
	f[1].st.spread_ppm = STATS_PPM_UNDEFINED;
	EXPECT_FALSE(bench_figure_noisy(&f[1]));
	host_capture_start(out, sizeof(out));
	bench_table_print("t", f, 2);
	host_capture_stop();
	EXPECT_TRUE(strstr(out, BENCH_NOISY_MARK) == NULL);
}
