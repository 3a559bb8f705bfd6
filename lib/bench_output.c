/*
 * Benchmark output (see lib/bench_output.h and docs/output.md): the
 * environment header, human tables and @@ENV / @@RESULT lines.
 */
#include <stdarg.h>
#include "lib/bench_output.h"
#include "lib/assert.h"
#include "lib/kprintf.h"
#include "lib/string.h"

#define ELLIPSIS "..."
#define ELLIPSIS_LEN 3
/* Longest escape of one byte: \u00XX. */
#define JSON_ESCAPE_MAX 6
#define ASCII_CONTROL_END 0x20
#define ASCII_DEL 0x7f
/* Enough for a uint64 with 18 decimals and a point. */
#define NUM_BUF 48
/* The spread is printed in percent with two decimals: ppm has 4 digits. */
#define PPM_PER_PCT_DIGITS 4
#define SPREAD_DECIMALS 2
#define KHZ 1000ull
#define KHZ_TO_MHZ_DIGITS 3
#define TABLE_GAP 2

static bench_sink_fn out_sink;
static bool env_caches_modelled = true;

void bench_output_set_sink(bench_sink_fn sink)
{
	out_sink = sink;
}

bool bench_output_caches_modelled(void)
{
	return env_caches_modelled;
}

static void emit(const char *s, size_t n)
{
	if (out_sink)
		out_sink(s, n);
	else
		console_write(s, n);
}

/* ---- a bounded string builder with ksnprintf() length semantics --------- */

struct sbuf {
	char *buf;
	size_t size;
	size_t len;	/* bytes needed so far, may exceed size */
};

static void sb_init(struct sbuf *sb, char *buf, size_t size)
{
	sb->buf = buf;
	sb->size = size;
	sb->len = 0;
	if (size)
		buf[0] = '\0';
}

static void sb_putc(struct sbuf *sb, char c)
{
	if (sb->len + 1 < sb->size)
		sb->buf[sb->len] = c;
	sb->len++;
}

static void sb_puts(struct sbuf *sb, const char *s)
{
	while (*s)
		sb_putc(sb, *s++);
}

__printf(2, 3) static void sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	char *dst = sb->len < sb->size ? sb->buf + sb->len : NULL;
	size_t room = sb->len < sb->size ? sb->size - sb->len : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(dst, room, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

/* NUL-terminate and return the length needed (as ksnprintf does). */
static int sb_finish(struct sbuf *sb)
{
	if (sb->size)
		sb->buf[sb->len < sb->size ? sb->len : sb->size - 1] = '\0';
	return (int)sb->len;
}

static void sb_fixed(struct sbuf *sb, uint64_t v, unsigned scale,
		     unsigned decimals)
{
	char num[NUM_BUF];

	stats_fmt_fixed(num, sizeof(num), v, scale, decimals);
	sb_puts(sb, num);
}

/* ---- JSON --------------------------------------------------------------- */

/* Escape one byte into esc (no NUL); returns its length. */
static size_t json_escape_byte(char *esc, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";

	switch (c) {
	case '"':
	case '\\':
		esc[0] = '\\';
		esc[1] = (char)c;
		return 2;
	case '\n':
		esc[0] = '\\';
		esc[1] = 'n';
		return 2;
	case '\r':
		esc[0] = '\\';
		esc[1] = 'r';
		return 2;
	case '\t':
		esc[0] = '\\';
		esc[1] = 't';
		return 2;
	}
	if (c < ASCII_CONTROL_END || c >= ASCII_DEL) {
		esc[0] = '\\';
		esc[1] = 'u';
		esc[2] = '0';
		esc[3] = '0';
		esc[4] = hex[c >> 4];
		esc[5] = hex[c & 0xf];
		return JSON_ESCAPE_MAX;
	}
	esc[0] = (char)c;
	return 1;
}

static size_t json_escaped_len(const char *s)
{
	char esc[JSON_ESCAPE_MAX];
	size_t n = 0;

	for (; *s; s++)
		n += json_escape_byte(esc, (unsigned char)*s);
	return n;
}

/*
 * Append s as a JSON string literal whose escaped contents take at most
 * max bytes; a longer s is cut at a character boundary and ends in
 * "...". NULL is written as "".
 */
static void sb_json_str(struct sbuf *sb, const char *s, size_t max)
{
	char esc[JSON_ESCAPE_MAX];
	size_t used = 0, budget;
	bool cut;

	kassert(max > ELLIPSIS_LEN);
	if (!s)
		s = "";
	cut = json_escaped_len(s) > max;
	budget = cut ? max - ELLIPSIS_LEN : max;

	sb_putc(sb, '"');
	for (; *s; s++) {
		size_t n = json_escape_byte(esc, (unsigned char)*s);

		if (used + n > budget)
			break;
		for (size_t i = 0; i < n; i++)
			sb_putc(sb, esc[i]);
		used += n;
	}
	if (cut)
		sb_puts(sb, ELLIPSIS);
	sb_putc(sb, '"');
}

int bench_json_string(char *buf, size_t size, const char *s)
{
	struct sbuf sb;

	sb_init(&sb, buf, size);
	sb_json_str(&sb, s, SIZE_MAX);
	return sb_finish(&sb);
}

/* ,"key": prefix of every member but the first */
static void sb_key(struct sbuf *sb, const char *key, bool first)
{
	if (!first)
		sb_putc(sb, ',');
	sb_putc(sb, '"');
	sb_puts(sb, key);
	sb_puts(sb, "\":");
}

static void sb_kv_str(struct sbuf *sb, const char *key, const char *v,
		      size_t max)
{
	sb_key(sb, key, false);
	sb_json_str(sb, v, max);
}

static void sb_kv_u64(struct sbuf *sb, const char *key, uint64_t v)
{
	sb_key(sb, key, false);
	sb_printf(sb, "%llu", (unsigned long long)v);
}

static void sb_kv_bool(struct sbuf *sb, const char *key, bool v)
{
	sb_key(sb, key, false);
	sb_puts(sb, v ? "true" : "false");
}

static void sb_kv_fixed(struct sbuf *sb, const char *key, uint64_t v,
			unsigned scale)
{
	sb_key(sb, key, false);
	sb_fixed(sb, v, scale, scale);
}

static const char *tristate_name(enum bench_tristate t)
{
	switch (t) {
	case BENCH_YES:
		return "yes";
	case BENCH_NO:
		return "no";
	default:
		return "unknown";
	}
}

static const char *mode_name(enum bench_mode m)
{
	return m == BENCH_MODE_ICOUNT ? "icount" : "normal";
}

/* Bare metal has no hypervisor vendor string; say so in one word. */
static const char *hypervisor_name(const struct bench_env *env)
{
	return env->hypervisor && env->hypervisor[0] ? env->hypervisor
						      : "none";
}

int bench_format_env_line(char *buf, size_t size, const struct bench_env *env)
{
	struct sbuf sb;

	sb_init(&sb, buf, size);
	sb_puts(&sb, BENCH_ENV_PREFIX "{");
	sb_key(&sb, "cpu_model", true);
	sb_json_str(&sb, env->cpu_model, BENCH_FIELD_MAX);
	sb_kv_str(&sb, "hypervisor", hypervisor_name(env), BENCH_FIELD_MAX);
	sb_kv_bool(&sb, "caches_modelled", env->caches_modelled);
	sb_kv_u64(&sb, "cpus_online", env->cpus_online);
	sb_kv_u64(&sb, "ram_bytes", env->ram_bytes);
	sb_kv_u64(&sb, "tsc_hz", env->tsc_hz);
	sb_kv_str(&sb, "tsc_source", env->tsc_source, BENCH_FIELD_MAX);
	sb_kv_bool(&sb, "pmu", env->pmu);
	sb_kv_str(&sb, "memtypes_honoured",
		  tristate_name(env->memtypes_honoured), BENCH_FIELD_MAX);
	sb_kv_str(&sb, "kernel_version", env->kernel_version,
		  BENCH_FIELD_MAX);
	sb_kv_str(&sb, "git_hash", env->git_hash, BENCH_FIELD_MAX);
	sb_kv_str(&sb, "cmdline", env->cmdline, BENCH_CMDLINE_MAX);
	sb_kv_str(&sb, "mode", mode_name(env->mode), BENCH_FIELD_MAX);
	if (env->cache_model)
		sb_kv_str(&sb, "cache_model", env->cache_model,
			  BENCH_FIELD_MAX);
	sb_kv_u64(&sb, "schema", BENCH_SCHEMA_VERSION);
	sb_puts(&sb, "}\n");
	return sb_finish(&sb);
}

int bench_format_result_line(char *buf, size_t size,
			     const struct bench_figure *f,
			     bool caches_modelled)
{
	const struct stats *st = &f->st;
	struct sbuf sb;

	sb_init(&sb, buf, size);
	sb_puts(&sb, BENCH_RESULT_PREFIX "{");
	sb_key(&sb, "experiment", true);
	sb_json_str(&sb, f->experiment, BENCH_FIELD_MAX);
	sb_kv_str(&sb, "variant", f->variant, BENCH_FIELD_MAX);
	sb_kv_str(&sb, "metric", f->metric, BENCH_FIELD_MAX);
	sb_kv_str(&sb, "unit", f->unit, BENCH_FIELD_MAX);
	sb_kv_fixed(&sb, "value", st->median, f->scale);
	sb_kv_u64(&sb, "n", st->n);
	sb_kv_fixed(&sb, "min", st->min, f->scale);
	sb_kv_fixed(&sb, "median", st->median, f->scale);
	sb_kv_fixed(&sb, "max", st->max, f->scale);
	sb_kv_fixed(&sb, "mean", st->mean, f->scale);
	sb_kv_fixed(&sb, "mad", st->mad, f->scale);
	sb_key(&sb, "spread_pct", false);
	if (st->spread_ppm == STATS_PPM_UNDEFINED)
		sb_puts(&sb, "null");
	else
		sb_fixed(&sb, st->spread_ppm, PPM_PER_PCT_DIGITS,
			 SPREAD_DECIMALS);
	sb_kv_u64(&sb, "cpus", f->cpus);
	if (f->size)
		sb_kv_u64(&sb, "size", f->size);
	if (f->clients)
		sb_kv_u64(&sb, "clients", f->clients);
	if (f->capped)
		sb_kv_bool(&sb, "capped", true);
	if (bench_figure_noisy(f))
		sb_kv_bool(&sb, "noisy", true);
	sb_kv_bool(&sb, "caches_modelled", caches_modelled);
	sb_kv_u64(&sb, "schema", BENCH_SCHEMA_VERSION);
	sb_puts(&sb, "}\n");
	return sb_finish(&sb);
}

bool bench_figure_noisy(const struct bench_figure *f)
{
	return f->st.spread_ppm != STATS_PPM_UNDEFINED &&
	       f->st.spread_ppm > BENCH_NOISY_SPREAD_PPM;
}

const char *bench_missing_status_name(enum bench_missing_status status)
{
	return status == BENCH_CUT_SHORT ? "cut_short" : "skipped";
}

int bench_format_missing_line(char *buf, size_t size, const char *experiment,
			      const char *variant, const char *metric,
			      enum bench_missing_status status,
			      const char *reason)
{
	struct sbuf sb;

	sb_init(&sb, buf, size);
	sb_puts(&sb, BENCH_MISSING_PREFIX "{");
	sb_key(&sb, "experiment", true);
	sb_json_str(&sb, experiment, BENCH_FIELD_MAX);
	sb_kv_str(&sb, "variant", variant ? variant : "*", BENCH_FIELD_MAX);
	sb_kv_str(&sb, "metric", metric ? metric : "*", BENCH_FIELD_MAX);
	sb_kv_str(&sb, "status", bench_missing_status_name(status),
		  BENCH_FIELD_MAX);
	sb_kv_str(&sb, "reason", reason, BENCH_CMDLINE_MAX);
	sb_kv_u64(&sb, "schema", BENCH_SCHEMA_VERSION);
	sb_puts(&sb, "}\n");
	return sb_finish(&sb);
}

/* Send a formatted line; a cut line still ends in a newline. */
static void emit_line(char *buf, size_t size, int len)
{
	size_t n = (size_t)len;

	if (n >= size) {
		n = size - 1;
		buf[n - 1] = '\n';
	}
	emit(buf, n);
}

__printf(1, 2) static void emit_printf(const char *fmt, ...)
{
	char line[BENCH_LINE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	emit_line(line, sizeof(line), n);
}

static unsigned long whole_skips;

unsigned long bench_missing_whole_skips(void)
{
	return whole_skips;
}

void bench_missing(const char *experiment, const char *variant,
		   const char *metric, enum bench_missing_status status,
		   const char *fmt, ...)
{
	char reason[BENCH_CMDLINE_MAX], line[BENCH_LINE_MAX];
	va_list ap;
	int n;

	if (status == BENCH_SKIPPED && !variant && !metric)
		whole_skips++;
	va_start(ap, fmt);
	kvsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	emit_printf("%s%s%s%s%s: %s: %s\n", experiment, variant ? " " : "",
		    variant ? variant : "", metric ? " " : "",
		    metric ? metric : "",
		    status == BENCH_CUT_SHORT ? "CUT SHORT, no figures" :
						"SKIPPED",
		    reason);
	n = bench_format_missing_line(line, sizeof(line), experiment,
				      variant, metric, status, reason);
	emit_line(line, sizeof(line), n);
}

/* ---- environment header ------------------------------------------------- */

/* The modelled geometry, level by level, or why the kernel has none. */
static void print_model_caches(const struct bench_env *env)
{
	const struct cache_geometry *g = env->model_caches;
	char line[BENCH_LINE_MAX];
	size_t n = 0;

	if (!g) {
		emit_printf("Modelled caches : not given (cachemodel.caches=): "
			    "buffers are sized from CPUID's caches, which "
			    "are QEMU's, not the profile's\n");
		return;
	}
	for (unsigned l = 0; l < CACHE_GEOM_LEVELS && n < sizeof(line); l++) {
		if (!g->level[l].bytes)
			continue;
		n += (size_t)ksnprintf(line + n, sizeof(line) - n,
				       "%s%s %llu KiB %u-way", n ? ", " : "",
				       cache_geometry_level_name(l),
				       (unsigned long long)(g->level[l].bytes /
							    KiB(1)),
				       g->level[l].ways);
	}
	emit_printf("Modelled caches : %s (the profile's; CPUID's describe "
		    "QEMU's CPU model)\n", line);
}

void bench_output_env(const struct bench_env *env)
{
	char line[BENCH_LINE_MAX];
	char mhz[NUM_BUF];
	int n;

	env_caches_modelled = env->caches_modelled;

	emit_printf("=== Environment ===\n");
	emit_printf("CPU model       : %s\n",
		    env->cpu_model ? env->cpu_model : "");
	if (env->hypervisor && env->hypervisor[0])
		emit_printf("Hypervisor      : %s\n", env->hypervisor);
	else
		emit_printf("Hypervisor      : none (bare metal)\n");
	if (env->caches_modelled)
		emit_printf("Caches modelled : yes\n");
	else if (env->cache_model)
		emit_printf("Caches modelled : NO in these timings (QEMU "
			    "TCG); the cache-model plugin models them "
			    "apart: see Caches below\n");
	else
		emit_printf("Caches modelled : NO. This platform does not "
			    "model caches (QEMU TCG): cache misses, non-"
			    "temporal stores and memory types do not change "
			    "timings here. Compare only ratios of "
			    "instruction work; cache effects need KVM or "
			    "real hardware.\n");
	emit_printf("CPUs online     : %u\n", env->cpus_online);
	emit_printf("RAM             : %llu MiB\n",
		    (unsigned long long)(env->ram_bytes / MiB(1)));
	stats_fmt_fixed(mhz, sizeof(mhz), env->tsc_hz / KHZ,
			KHZ_TO_MHZ_DIGITS, KHZ_TO_MHZ_DIGITS);
	emit_printf("TSC             : %s MHz (source: %s)\n", mhz,
		    env->tsc_source ? env->tsc_source : "unknown");
	emit_printf("PMU             : %s\n", env->pmu ? "yes" : "no");
	if (env->cache_model) {
		emit_printf("Caches          : modelled (profile %s) by the "
			    "cache-model QEMU plugin: its figures are the "
			    "@@MODEL lines of its own file, the timings "
			    "below stay TCG's\n", env->cache_model);
		print_model_caches(env);
		emit_printf("Memory types    : honoured: %s in these timings; "
			    "honoured (by the model, profile %s)\n",
			    tristate_name(env->memtypes_honoured),
			    env->cache_model);
	} else {
		emit_printf("Memory types    : honoured: %s\n",
			    tristate_name(env->memtypes_honoured));
	}
	emit_printf("Kernel          : %s (git %s)\n",
		    env->kernel_version ? env->kernel_version : "",
		    env->git_hash ? env->git_hash : "unknown");
	emit_printf("Command line    : %s\n", env->cmdline ? env->cmdline : "");
	emit_printf("Mode            : %s\n",
		    env->mode == BENCH_MODE_ICOUNT
			    ? "icount (deterministic: one tick per instruction)"
			    : "normal");

	n = bench_format_env_line(line, sizeof(line), env);
	emit_line(line, sizeof(line), n);
}

/* ---- figures and tables ------------------------------------------------- */

void bench_figure_init(struct bench_figure *f, const char *experiment,
		       const char *variant, const char *metric,
		       const char *unit, unsigned scale,
		       const struct stats *st)
{
	f->experiment = experiment;
	f->variant = variant;
	f->metric = metric;
	f->unit = unit;
	f->scale = scale;
	f->st = *st;
	f->cpus = 1;
	f->size = 0;
	f->clients = 0;
	f->capped = false;
}

void bench_result_print(const struct bench_figure *f)
{
	char line[BENCH_LINE_MAX];
	int n = bench_format_result_line(line, sizeof(line), f,
					 env_caches_modelled);

	emit_line(line, sizeof(line), n);
}

enum table_col {
	COL_EXPERIMENT,
	COL_VARIANT,
	COL_METRIC,
	COL_UNIT,
	COL_MIN,
	COL_MEDIAN,
	COL_MAX,
	COL_SPREAD,
	COL_N,
	TABLE_COLS,
};

static const char *const table_head[TABLE_COLS] = {
	"experiment", "variant", "metric", "unit", "min",
	"median",     "max",     "spread", "n",
};

/* Text columns are left-aligned, numbers right-aligned. */
static bool col_is_number(unsigned col)
{
	return col >= COL_MIN;
}

typedef char table_row[TABLE_COLS][BENCH_CELL_MAX + 1];

/* Every cell is at most BENCH_CELL_MAX wide: a table line fits in this. */
#define TABLE_LINE_MAX (TABLE_COLS * (BENCH_CELL_MAX + TABLE_GAP) + 2)

static void cell_str(char *cell, const char *s)
{
	ksnprintf(cell, BENCH_CELL_MAX + 1, "%s", s ? s : "");
}

static void cell_fixed(char *cell, uint64_t v, unsigned scale)
{
	stats_fmt_fixed(cell, BENCH_CELL_MAX + 1, v, scale, scale);
}

static void table_cells(table_row row, const struct bench_figure *f)
{
	cell_str(row[COL_EXPERIMENT], f->experiment);
	cell_str(row[COL_VARIANT], f->variant);
	cell_str(row[COL_METRIC], f->metric);
	cell_str(row[COL_UNIT], f->unit);
	cell_fixed(row[COL_MIN], f->st.min, f->scale);
	cell_fixed(row[COL_MEDIAN], f->st.median, f->scale);
	cell_fixed(row[COL_MAX], f->st.max, f->scale);
	if (f->st.spread_ppm == STATS_PPM_UNDEFINED) {
		cell_str(row[COL_SPREAD], "n/a");
	} else {
		char pct[NUM_BUF];

		stats_fmt_fixed(pct, sizeof(pct), f->st.spread_ppm,
				PPM_PER_PCT_DIGITS, SPREAD_DECIMALS);
		ksnprintf(row[COL_SPREAD], BENCH_CELL_MAX + 1, "%s%%%s", pct,
			  bench_figure_noisy(f) ? " " BENCH_NOISY_MARK : "");
	}
	ksnprintf(row[COL_N], BENCH_CELL_MAX + 1, "%zu", f->st.n);
}

static void table_emit_row(const char *const *cells, const size_t *width)
{
	char line[TABLE_LINE_MAX];
	struct sbuf sb;
	int n;

	sb_init(&sb, line, sizeof(line));
	for (unsigned c = 0; c < TABLE_COLS; c++) {
		bool last = c == TABLE_COLS - 1;

		if (col_is_number(c))
			sb_printf(&sb, "%*s", (int)width[c], cells[c]);
		else
			sb_printf(&sb, "%-*s", (int)width[c], cells[c]);
		if (!last)
			sb_printf(&sb, "%*s", TABLE_GAP, "");
	}
	sb_putc(&sb, '\n');
	n = sb_finish(&sb);
	emit_line(line, sizeof(line), n);
}

void bench_table_print(const char *title, const struct bench_figure *figs,
		       size_t n)
{
	size_t width[TABLE_COLS];
	const char *cells[TABLE_COLS];
	char rule[TABLE_LINE_MAX];
	size_t total = 0, noisy = 0;
	table_row row;

	for (unsigned c = 0; c < TABLE_COLS; c++)
		width[c] = strlen(table_head[c]);
	for (size_t i = 0; i < n; i++) {
		table_cells(row, &figs[i]);
		for (unsigned c = 0; c < TABLE_COLS; c++)
			width[c] = MAX(width[c], strlen(row[c]));
	}

	emit_printf("=== %s ===\n", title ? title : "");
	table_emit_row(table_head, width);

	for (unsigned c = 0; c < TABLE_COLS; c++)
		total += width[c] + (c + 1 < TABLE_COLS ? TABLE_GAP : 0);
	kassert(total + 1 < sizeof(rule));
	memset(rule, '-', total);
	rule[total] = '\n';
	emit(rule, total + 1);

	for (size_t i = 0; i < n; i++) {
		table_cells(row, &figs[i]);
		for (unsigned c = 0; c < TABLE_COLS; c++)
			cells[c] = row[c];
		table_emit_row(cells, width);
	}
	for (size_t i = 0; i < n; i++)
		noisy += bench_figure_noisy(&figs[i]);
	if (noisy)
		emit_printf("note: %zu of %zu figures " BENCH_NOISY_MARK ": their "
			    "repetitions spread more than %u%% of the median, "
			    "so the host's load, not the code, may set them: "
			    "read no difference into them (docs/output.md, "
			    "\"Noise\")\n", noisy, n, BENCH_NOISY_SPREAD_PCT);
	for (size_t i = 0; i < n; i++)
		if (figs[i].capped)
			emit_printf("note: %s %s: capped: the iteration count "
				    "hit its maximum before the minimum time, "
				    "so its repetitions are shorter than asked "
				    "(noisier)\n", figs[i].variant,
				    figs[i].metric);
}

void bench_report(const char *title, const struct bench_figure *figs,
		  size_t n)
{
	bench_table_print(title, figs, n);
	for (size_t i = 0; i < n; i++)
		bench_result_print(&figs[i]);
}
