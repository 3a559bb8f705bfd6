/*
 * Tracing variants for the tbench and kbuild experiments (see
 * experiments/trace_variants.h).
 */
#include "experiments/trace_variants.h"
#include "arch/x86_64/model_doorbell.h"
#include "arch/x86_64/percpu.h"
#include "cachemodel/doorbell.h"
#include "kernel/bench/bench_env.h"
#include "kernel/experiment.h"
#include "kernel/options.h"
#include "lib/assert.h"
#include "lib/bench.h"
#include "lib/compiler.h"
#include "lib/cycles.h"
#include "lib/kprintf.h"
#include "lib/stats.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "mm/page_alloc.h"
#include "mm/vm.h"

#define PCT 100
#define P99 99
#define FRAC_DIGITS_SCALE 100 /* events per op with two decimals */

const struct trace_variant trace_variants[] = {
	{"trace_off", false, MEMTYPE_WB, RB_PAGES_ARRAY, false, false},
	{"trace_wb", true, MEMTYPE_WB, RB_PAGES_ARRAY, false, false},
	{"trace_wc", true, MEMTYPE_WC, RB_PAGES_ARRAY, false, false},
	{"trace_uc", true, MEMTYPE_UC, RB_PAGES_ARRAY, false, false},
	/* LTTng 0.108 against what came before it (both with page lists) */
	{"trace_inline_aligned", true, MEMTYPE_WB, RB_PAGES_LIST, false,
	 false},
	{"trace_outofline_shared", true, MEMTYPE_WB, RB_PAGES_LIST, true,
	 true},
	/* LTTng 0.110 against 0.108 (both inline, aligned) */
	{"trace_array", true, MEMTYPE_WB, RB_PAGES_ARRAY, false, false},
	{"trace_list", true, MEMTYPE_WB, RB_PAGES_LIST, false, false},
};
const size_t trace_variants_count = ARRAY_SIZE(trace_variants);

static const char *const combo_names[TRACE_COMBOS] = {
	"trace_inline_aligned_array",	"trace_inline_aligned_list",
	"trace_inline_shared_array",	"trace_inline_shared_list",
	"trace_outofline_aligned_array", "trace_outofline_aligned_list",
	"trace_outofline_shared_array", "trace_outofline_shared_list",
};

const struct trace_variant *trace_combo(unsigned i)
{
	static struct trace_variant v;

	if (i >= TRACE_COMBOS)
		return NULL;
	v.name = combo_names[i];
	v.on = true;
	v.memtype = MEMTYPE_WB;
	v.outofline = i & 4;
	v.commit_packed = i & 2;
	v.page_index = i & 1 ? RB_PAGES_LIST : RB_PAGES_ARRAY;
	return &v;
}

void trace_variants_prepare(void)
{
	static bool done;
	struct trace_config cfg;

	if (done)
		return;
	done = true;
	trace_default_config(&cfg);
	cfg.memtype = MEMTYPE_WC;
	if (trace_setup(&cfg, percpu_count()) != 0) {
		kprintf("trace: could not pre-split the direct map; traced "
			"variants may run on smaller pages than trace_off\n");
		return;
	}
	trace_teardown();
}

int trace_variant_start(const struct trace_variant *v)
{
	struct trace_config cfg;

	if (!v->on)
		return 0;
	trace_default_config(&cfg);
	cfg.memtype = v->memtype;
	cfg.page_index = v->page_index;
	cfg.commit_packed = v->commit_packed;
	if (trace_setup(&cfg, percpu_count()) != 0) {
		kprintf("trace: %s: cannot set up the trace channel\n",
			v->name);
		return -1;
	}
	trace_set_outofline(v->outofline);
	trace_enable_all(true);
	trace_event_enable(TRACE_ID_trace_test, false);
	return 0;
}

uint64_t trace_variant_stop(const struct trace_variant *v)
{
	uint64_t events = 0;

	if (!v->on)
		return 0;
	trace_enable_all(false);
	for (unsigned cpu = 0; cpu < trace_nr_cpus(); cpu++)
		events += rb_records_emitted(trace_cpu_buffer(cpu));
	trace_set_outofline(false);
	trace_teardown();
	return events;
}

static const char *verdict_name(enum bench_tristate t)
{
	return t == BENCH_YES ? "yes" : t == BENCH_NO ? "no" : "unknown";
}

void trace_variant_describe(const char *experiment,
			    const struct trace_variant *v, uint64_t events,
			    uint64_t ops, const char *op)
{
	uint64_t per = ops ? stats_muldiv(events, FRAC_DIGITS_SCALE, ops) : 0;

	kprintf("%s: %s: %s, buffers %s, %s fast path, commit counters %s, "
		"pages by %s; %lu.%02lu events per %s; memory types honoured "
		"on this platform: %s\n",
		experiment, v->name, v->on ? "flight recorder on" : "tracing off",
		memtype_name(v->memtype), v->outofline ? "out-of-line" : "inline",
		v->commit_packed ? "packed" : "cache-line aligned",
		v->page_index == RB_PAGES_LIST ? "list" : "array",
		(unsigned long)(per / FRAC_DIGITS_SCALE),
		(unsigned long)(per % FRAC_DIGITS_SCALE),
		op,
		verdict_name(bench_env_memtypes()));
}

bool trace_variants_wanted(void)
{
	uint64_t v;

	return !(experiment_param("trace", &v) && v == 0);
}

int trace_variant_run(struct traced_workload *w,
		      const struct trace_variant *v)
{
	uint64_t events, ticks[BENCH_MAX_REPS];
	int rc;

	kassert(w->reps <= BENCH_MAX_REPS && *w->nfig <= w->room);
	if (trace_variant_start(v) != 0)
		return 1;
	rc = w->run(w->arg, v->name, ticks);
	events = trace_variant_stop(v);
	trace_variant_describe(w->exp, v, events, w->ops * w->reps, w->op);
	if (!rc)
		*w->nfig += trace_work_figures(w->exp, v, ticks, w->reps,
					       w->ops, w->op, w->unit,
					       &w->off_ticks,
					       w->figs + *w->nfig,
					       w->room - *w->nfig);
	return rc;
}

/* trace.reps=: quick mode's repetitions of each traced variant. */
static unsigned trace_quick_reps;
OPTION_UINT(trace_reps, "tbench,kbuild", "trace.reps", trace_quick_reps,
	    TRACE_QUICK_REPS, 1, BENCH_MAX_REPS,
	    "repetitions of each traced variant in quick mode");

unsigned trace_variants_reps(enum experiment_mode mode, unsigned asked)
{
	uint64_t shell;

	if (mode == EXPERIMENT_FULL || experiment_param("reps", &shell))
		return asked;
	return trace_quick_reps;
}

int trace_variants_run_all(struct traced_workload *w,
			   enum experiment_mode mode, unsigned *reps,
			   size_t nseed, bool combos)
{
	int rc = 0;

	kassert(nseed <= trace_variants_count);
	*reps = trace_variants_reps(mode, *reps);
	w->reps = *reps;
	trace_variants_prepare();
	for (size_t i = 0; i < nseed && !rc; i++)
		rc |= trace_variant_run(w, &trace_variants[i]);
	for (unsigned i = 0; combos && mode == EXPERIMENT_FULL &&
			     i < TRACE_COMBOS && !rc; i++)
		rc |= trace_variant_run(w, trace_combo(i));
	return rc;
}

size_t trace_work_figures(const char *exp, const struct trace_variant *v,
			  const uint64_t *ticks, unsigned reps, uint64_t ops,
			  const char *op, const char *unit, uint64_t *off_ticks,
			  struct bench_figure *figs, size_t room)
{
	uint64_t per[BENCH_MAX_REPS], slow[BENCH_MAX_REPS];
	struct stats st, sd;
	bool faster = false;
	size_t added = 0;

	kassert(reps >= 1 && reps <= BENCH_MAX_REPS);
	if (!kopt.icount || ops == 0 || room == 0)
		return 0;
	for (unsigned r = 0; r < reps; r++)
		per[r] = stats_muldiv(ticks[r], BENCH_SCALE, ops);
	stats_compute(&st, per, reps, per);
	bench_figure_init(&figs[added++], exp, v->name, "insns_per_op", unit,
			  BENCH_SCALE_DIGITS, &st);
	if (!v->on) {
		uint64_t sorted[BENCH_MAX_REPS];

		memcpy(sorted, ticks, reps * sizeof(sorted[0]));
		stats_sort_u64(sorted, reps);
		*off_ticks = sorted[reps / 2];
		kprintf("%s: %s: %lu.%03lu instructions per %s (QEMU -icount: "
			"counted, not timed)\n", exp, v->name,
			(unsigned long)(st.median / BENCH_SCALE),
			(unsigned long)(st.median % BENCH_SCALE), op);
		return added;
	}
	if (*off_ticks == 0 || added == room)
		return added;
	for (unsigned r = 0; r < reps; r++) {
		faster |= ticks[r] < *off_ticks;
		slow[r] = ticks[r] < *off_ticks ? 0 :
			  stats_muldiv(ticks[r] - *off_ticks,
				       PCT * BENCH_SCALE, ticks[r]);
	}
	if (faster) {
		kprintf("%s: %s: fewer instructions than trace_off: no "
			"slowdown figure\n", exp, v->name);
		return added;
	}
	stats_compute(&sd, slow, reps, slow);
	bench_figure_init(&figs[added++], exp, v->name, "slowdown_insns", "%",
			  BENCH_SCALE_DIGITS, &sd);
	kprintf("%s: %s: %lu.%03lu instructions per %s, a slowdown of "
		"%lu.%03lu %% over trace_off (%ss per instruction lost; QEMU "
		"-icount: counted, not timed, not a hardware figure)\n",
		exp, v->name,
		(unsigned long)(st.median / BENCH_SCALE),
		(unsigned long)(st.median % BENCH_SCALE), op,
		(unsigned long)(sd.median / BENCH_SCALE),
		(unsigned long)(sd.median % BENCH_SCALE), op);
	return added;
}

size_t trace_event_cost(const char *exp, struct bench_figure *figs,
			size_t room, unsigned n)
{
	static const struct {
		const char *variant;
		enum memtype type;
	} types[] = {{"trace_wb", MEMTYPE_WB},
		     {"trace_wc", MEMTYPE_WC},
		     {"trace_uc", MEMTYPE_UC}};
	uint64_t *s = kmalloc(n * sizeof(uint64_t));
	uint64_t timer;
	size_t added = 0;

	if (!s || n == 0) {
		kprintf("%s: no memory for the event cost samples\n", exp);
		kfree(s);
		return 0;
	}
	/* What the two timer reads cost alone (median). */
	for (unsigned i = 0; i < n; i++) {
		uint64_t t0 = cycles_now();

		s[i] = cycles_now() - t0;
	}
	stats_sort_u64(s, n);
	timer = s[n / 2];
	for (unsigned t = 0; t < ARRAY_SIZE(types) && added + 2 <= room;
	     t++) {
		struct trace_config cfg;
		struct stats st, p99;
		char label[DB_LABEL_MAX];
		uint64_t region;

		trace_default_config(&cfg);
		cfg.memtype = types[t].type;
		if (trace_setup(&cfg, percpu_count()) != 0)
			continue;
		trace_event_enable(TRACE_ID_trace_test, true);
		/* One model region per memory type: modelled cycles per
		 * event, the timer reads included as in the timed figure. */
		ksnprintf(label, sizeof(label), "%s|%s|event_cycles|0", exp,
			  types[t].variant);
		model_doorbell_label(label);
		region = bench_region_begin();
		for (unsigned i = 0; i < n; i++) {
			uint64_t t0 = cycles_now();

			trace_point(trace_test, i, t0);
			s[i] = cycles_now() - t0;
		}
		bench_region_end(region, n);
		model_doorbell_label(exp);
		trace_teardown();
		stats_sort_u64(s, n);
		memset(&p99, 0, sizeof(p99));
		p99.n = 1;
		p99.min = p99.max = p99.median = p99.mean =
			s[(uint64_t)(n - 1) * P99 / PCT];
		stats_compute(&st, s, n, s); /* reorders s */
		kprintf("%s: %s: one 16-byte event costs %lu cycles (median), "
			"%lu (p99), timer reads included (alone: %lu, so %ld "
			"net%s); memory types honoured on this platform: %s\n",
			exp, types[t].variant, (unsigned long)st.median,
			(unsigned long)p99.median, (unsigned long)timer,
			(long)(st.median - timer),
			kopt.icount ? ": instructions, QEMU -icount" : "",
			verdict_name(bench_env_memtypes()));
		bench_figure_init(&figs[added++], exp, types[t].variant,
				  "event_cycles", "cycles", 0, &st);
		bench_figure_init(&figs[added++], exp, types[t].variant,
				  "event_cycles_p99", "cycles", 0, &p99);
	}
	kfree(s);
	return added;
}
