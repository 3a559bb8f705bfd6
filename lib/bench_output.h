/*
 * Benchmark output: the environment header, a human table per experiment,
 * and one machine-readable line per figure. docs/output.md is the schema;
 * tools/results/results.py is the parser. Change them together.
 *
 *   @@ENV {"cpu_model":"...","hypervisor":"TCGTCGTCGTCG",...}
 *   @@RESULT {"experiment":"copy","variant":"movnti","metric":"copy_cost",
 *             "unit":"cycles/KiB","value":123.400,"n":7,...}
 *
 * Everything is integer: a figure's numbers are fixed-point values scaled
 * by 10^scale, printed with that many decimals. Lines go out through a
 * sink, one console_write() per line (so lines from several CPUs do not
 * interleave, and a long line is not cut at kprintf's buffer size); host
 * tests install their own sink to capture the text.
 */
#ifndef LIB_BENCH_OUTPUT_H
#define LIB_BENCH_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/cache_geometry.h"
#include "lib/compiler.h"
#include "lib/stats.h"

#define BENCH_ENV_PREFIX "@@ENV "
#define BENCH_RESULT_PREFIX "@@RESULT "
#define BENCH_MISSING_PREFIX "@@MISSING "
/*
 * Longest output line. String fields are cut (ending in "...") so that a
 * machine line always fits and stays valid JSON: the command line to
 * BENCH_CMDLINE_MAX escaped bytes, every other string to BENCH_FIELD_MAX.
 */
#define BENCH_LINE_MAX 2048
#define BENCH_FIELD_MAX 128
#define BENCH_CMDLINE_MAX 512
/* Widest string cell in a human table; longer names are cut. */
#define BENCH_CELL_MAX 40
/*
 * Noise: a figure whose repetitions spread, (max - min) / median, by more
 * than BENCH_NOISY_SPREAD_PCT percent is noisy. Its table cell says
 * BENCH_NOISY_MARK, its @@RESULT line carries "noisy":true, and no
 * verdict may rest on it. 50 % (assumed): above it the repetitions
 * disagree by more than the 1.5x margin the memory-type verdict reads
 * as "not honoured" (kernel/bench/memtype_check.h), so one busy repetition
 * could decide a comparison; a quiet host stays within a few percent
 * (docs/output.md, "Noise"). An undefined spread (median 0) is not
 * called noisy: it is printed as n/a.
 */
#define BENCH_NOISY_SPREAD_PCT 50
#define BENCH_NOISY_SPREAD_PPM (BENCH_NOISY_SPREAD_PCT * (STATS_PPM / 100))
#define BENCH_NOISY_MARK "NOISY"
/* Version of the line schema in docs/output.md ("schema" key). */
#define BENCH_SCHEMA_VERSION 1

enum bench_tristate {
	BENCH_UNKNOWN = 0,
	BENCH_NO,
	BENCH_YES,
};

enum bench_mode {
	BENCH_MODE_NORMAL = 0,
	BENCH_MODE_ICOUNT,	/* QEMU -icount: one tick per instruction */
};

/* Filled by the kernel before any experiment runs. NULL strings print "". */
struct bench_env {
	const char *cpu_model;		/* CPUID brand string */
	const char *hypervisor;		/* CPUID 0x40000000 vendor, or NULL */
	bool caches_modelled;		/* false under QEMU TCG */
	unsigned cpus_online;
	uint64_t ram_bytes;		/* usable RAM */
	uint64_t tsc_hz;
	const char *tsc_source;		/* "cpuid", "pit", "pm-timer", ... */
	bool pmu;			/* architectural PMU usable */
	enum bench_tristate memtypes_honoured;	/* from the memtype probe */
	const char *kernel_version;
	const char *git_hash;
	const char *cmdline;
	enum bench_mode mode;
	/* Profile of the cache-model QEMU plugin the command line says is
	 * running (docs/cachemodel.md), or NULL. Its figures are separate
	 * @@MODEL lines: the timings here stay unmodelled. */
	const char *cache_model;
	/* That model's cache geometry (cachemodel.caches=), or NULL when
	 * the command line did not give a valid one. */
	const struct cache_geometry *model_caches;
};

/*
 * One reported figure. The stats are in the metric's unit scaled by
 * 10^scale (e.g. scale 3 and median 1500 mean 1.500 unit). value in the
 * machine line is the median.
 */
struct bench_figure {
	const char *experiment;
	const char *variant;
	const char *metric;
	const char *unit;	/* e.g. "ns/iter", "MB/s", "cycles/KiB" */
	unsigned scale;		/* decimal digits of fixed point, <= 18 */
	struct stats st;
	unsigned cpus;		/* CPUs that ran the work, >= 1 */
	uint64_t size;		/* bytes per operation; 0 = not applicable */
	unsigned clients;	/* client count; 0 = not applicable */
	bool capped;		/* from bench_result.capped: max_iters was
				   reached before min_time_ns, so each
				   repetition is shorter than asked */
};

/* Where output lines go: one call per complete line (with its '\n'). */
typedef void (*bench_sink_fn)(const char *s, size_t n);

/* Install a sink; NULL restores the default, console_write(). */
void bench_output_set_sink(bench_sink_fn sink);

/*
 * Record the environment for the result lines that follow
 * (caches_modelled) and print the header: a human block, then @@ENV.
 */
void bench_output_env(const struct bench_env *env);

/*
 * Whether the recorded environment models caches (true until
 * bench_output_env() says otherwise).
 */
bool bench_output_caches_modelled(void);

/* Convenience initialiser: cpus 1, no size, no clients. */
void bench_figure_init(struct bench_figure *f, const char *experiment,
		       const char *variant, const char *metric,
		       const char *unit, unsigned scale,
		       const struct stats *st);

/*
 * Print a human table of n figures (columns sized to fit, numbers right-
 * aligned) under a title line, then one @@RESULT line per figure. A
 * noisy figure's spread cell ends in BENCH_NOISY_MARK, and a note under
 * the table says how many are noisy and what that means.
 */
void bench_report(const char *title, const struct bench_figure *figs,
		  size_t n);

/* The table part of bench_report() alone. */
void bench_table_print(const char *title, const struct bench_figure *figs,
		       size_t n);

/* One @@RESULT line. */
void bench_result_print(const struct bench_figure *f);

/* True if f's spread exceeds BENCH_NOISY_SPREAD_PPM (see above). */
bool bench_figure_noisy(const struct bench_figure *f);

/*
 * Figures that were not measured. A comparison with a side that did not
 * run, or ran only part of its work, has no number: the run says so
 * instead, in one human line and one machine line
 *
 *   copy: SKIPPED: needs 3 free blocks of 4096 KiB ...; this machine ...
 *   @@MISSING {"experiment":"copy","variant":"*","metric":"*",
 *              "status":"skipped","reason":"needs ...","schema":1}
 *
 * BENCH_SKIPPED: the machine lacks what the work needs (RAM, CPUs); the
 * experiment decided before starting it and the run still passes.
 * BENCH_CUT_SHORT: the work started but stopped before it was done (a
 * time cap): its figures would mislead, none are printed, and the
 * experiment fails. tools/results/results.py reads the lines,
 * tools/results/report.py lists them, tools/runner/verdicts.py fails a
 * boot that has a cut-short one.
 */
enum bench_missing_status {
	BENCH_SKIPPED = 1,
	BENCH_CUT_SHORT,
};

/*
 * Print the human line and the @@MISSING line for experiment's variant
 * and metric (NULL: all of them, "*"); fmt says what the work needs and
 * what the machine has, or how far it got.
 */
__printf(5, 6) void bench_missing(const char *experiment, const char *variant,
				  const char *metric,
				  enum bench_missing_status status,
				  const char *fmt, ...);

/*
 * How many times bench_missing() has skipped a whole experiment
 * (BENCH_SKIPPED, variant and metric NULL) since boot: the experiment
 * runner compares it before and after a run, to close a skipped
 * experiment with "skipped" rather than "done". Boot CPU only.
 */
unsigned long bench_missing_whole_skips(void);

/* The @@MISSING line alone (ksnprintf() semantics, ends in '\n'). */
int bench_format_missing_line(char *buf, size_t size, const char *experiment,
			      const char *variant, const char *metric,
			      enum bench_missing_status status,
			      const char *reason);

/* Name of a status as the machine line spells it: "skipped", ... */
const char *bench_missing_status_name(enum bench_missing_status status);

/*
 * Formatters behind the printers, with ksnprintf() semantics: write at
 * most size bytes including the NUL, return the length needed. The line
 * ends in '\n'.
 */
int bench_format_env_line(char *buf, size_t size, const struct bench_env *env);
int bench_format_result_line(char *buf, size_t size,
			     const struct bench_figure *f,
			     bool caches_modelled);

/*
 * Write s as a JSON string literal (with the quotes) into buf: '"', '\\'
 * and control characters are escaped, and so are bytes >= 0x7f (as
 * \u00XX), so the output is valid ASCII JSON whatever s holds. Returns
 * the length needed.
 */
int bench_json_string(char *buf, size_t size, const char *s);

#endif
