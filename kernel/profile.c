/*
 * Sampling profiler (see profile.h).
 *
 * Each CPU appends the interrupted RIP to its own buffer from its timer
 * interrupt (no lock, no shared line); a report, run after profile_stop()
 * on one CPU, resolves every sample to its function through the embedded
 * symbol table, sorts the function names and counts runs of equal ones.
 *
 * Invariants:
 *  1. Only CPU c writes samples[c] and nsamples[c], and only while active
 *     is set; readers look only after profile_stop() has disarmed every
 *     CPU's timer and waited for it (smp_call with wait).
 *  2. nsamples[c] <= PROFILE_SAMPLES_PER_CPU; samples beyond are counted
 *     in dropped[c], never written.
 */
#include "arch/x86_64/apic.h"
#include "kernel/ksyms.h"
#include "kernel/profile.h"
#include "kernel/smp_call.h"
#include "lib/atomic.h"
#include "lib/kprintf.h"
#include "lib/stats.h"
#include "lib/string.h"
#include "mm/kmalloc.h"

#define PROFILE_PERCENT_SCALE 10000 /* percent with four decimals */

static uint64_t *samples[MAX_CPUS];
static uint32_t nsamples[MAX_CPUS];
static uint64_t dropped[MAX_CPUS];
static uint32_t active;
static unsigned profile_hz;
static unsigned profiled_cpus;

static void sample(struct trap_frame *f)
{
	unsigned cpu = smp_this_cpu();

	if (!atomic_load_relaxed(&active) || !samples[cpu])
		return;
	if (nsamples[cpu] < PROFILE_SAMPLES_PER_CPU)
		samples[cpu][nsamples[cpu]++] = f->rip;
	else
		dropped[cpu]++;
}

static void arm(void *arg)
{
	apic_timer_periodic(*(unsigned *)arg);
}

bool profile_start(unsigned hz)
{
	struct cpumask all;

	cpumask_online(&all, false);
	return profile_start_on(&all, hz);
}

bool profile_start_on(const struct cpumask *mask, unsigned hz)
{
	static struct cpumask all;
	static unsigned hz_arg;

	if (apic_timer_hz() == 0) {
		kprintf("profile: no calibrated LAPIC timer: not profiling\n");
		return false;
	}
	cpumask_clear(&all);
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++) {
		nsamples[cpu] = 0;
		dropped[cpu] = 0;
		if (!cpumask_test(mask, cpu) || !smp_cpu_online(cpu))
			continue;
		cpumask_set(&all, cpu);
		if (!samples[cpu])
			samples[cpu] = kmalloc(PROFILE_SAMPLES_PER_CPU *
					       sizeof(uint64_t));
		if (!samples[cpu]) {
			kprintf("profile: no memory for cpu %u's samples: "
				"not profiling\n", cpu);
			return false;
		}
	}
	profile_hz = hz;
	profiled_cpus = cpumask_weight(&all);
	hz_arg = hz;
	apic_timer_set_hook(sample);
	atomic_store_release(&active, 1);
	smp_call(&all, arm, &hz_arg, true);
	return true;
}

void profile_stop(void)
{
	struct cpumask all;
	static unsigned zero;

	cpumask_online(&all, false);
	smp_call(&all, arm, &zero, true);
	atomic_store_release(&active, 0);
	apic_timer_set_hook(NULL);
}

/* Functions a report tells apart (an open-addressing table); samples of
 * further functions are counted under "(other functions)". */
#define PROFILE_MAX_FUNCS 1024
/* Fibonacci hashing of a name pointer: multiply, keep the top bits. */
#define PROFILE_HASH_MUL 0x9e3779b97f4a7c15ull
#define PROFILE_HASH_SHIFT 54

bool profile_active(void)
{
	return atomic_load_acquire(&active) != 0;
}

unsigned profile_top(struct profile_entry *out, unsigned max,
		     uint64_t *total, uint64_t *dropped_out)
{
	static const char outside[] = "(outside the kernel)";
	static const char other[] = "(other functions)";
	static struct profile_entry table[PROFILE_MAX_FUNCS];
	uint64_t n = 0, other_count = 0;
	unsigned filled = 0;

	*dropped_out = 0;
	memset(table, 0, sizeof(table));
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++) {
		*dropped_out += dropped[cpu];
		for (uint32_t i = 0; i < nsamples[cpu]; i++) {
			uint64_t off;
			const char *name = ksym_lookup(samples[cpu][i], &off);
			/* Names are unique strings of the table: hash the
			 * pointer. */
			uint64_t h = (uint64_t)(uintptr_t)(name ? name : outside);
			unsigned slot = (unsigned)((h * PROFILE_HASH_MUL) >>
						   PROFILE_HASH_SHIFT) %
					PROFILE_MAX_FUNCS;
			unsigned probes = 0;

			if (!name)
				name = outside;
			while (table[slot].symbol && table[slot].symbol != name &&
			       probes++ < PROFILE_MAX_FUNCS)
				slot = (slot + 1) % PROFILE_MAX_FUNCS;
			if (probes >= PROFILE_MAX_FUNCS) {
				other_count++;
			} else {
				table[slot].symbol = name;
				table[slot].samples++;
			}
			n++;
		}
	}
	*total = n;
	for (unsigned t = 0; t <= PROFILE_MAX_FUNCS; t++) {
		struct profile_entry e;
		unsigned pos;

		if (t == PROFILE_MAX_FUNCS)
			e = (struct profile_entry){other, other_count};
		else
			e = table[t];
		if (!e.samples)
			continue;
		/* Insert into the sorted top list (most samples first). */
		pos = filled;
		while (pos > 0 && out[pos - 1].samples < e.samples)
			pos--;
		if (pos >= max)
			continue;
		for (unsigned k = filled < max ? filled : max - 1; k > pos; k--)
			out[k] = out[k - 1];
		out[pos] = e;
		if (filled < max)
			filled++;
	}
	return filled;
}

void profile_report(const char *title, unsigned n)
{
	static struct profile_entry top[PROFILE_TOP_N];
	uint64_t total, lost;
	unsigned got;

	if (n > PROFILE_TOP_N)
		n = PROFILE_TOP_N;
	got = profile_top(top, n, &total, &lost);
	kprintf("profile: %s: %lu samples at %u Hz per CPU on %u CPUs "
		"(%lu dropped: buffers full)\n", title, (unsigned long)total,
		profile_hz, profiled_cpus, (unsigned long)lost);
	kprintf("profile: source: the LAPIC timer only (no PMU overflow "
		"sampling); code run with interrupts off is not sampled, its "
		"time shows on the instruction that turns them back on\n");
	kprintf("samples  %%         symbol name\n");
	for (unsigned i = 0; i < got; i++) {
		uint64_t pct = stats_muldiv(top[i].samples,
					    100 * PROFILE_PERCENT_SCALE, total);

		kprintf("%-8lu %3lu.%04lu  %s\n",
			(unsigned long)top[i].samples,
			(unsigned long)(pct / PROFILE_PERCENT_SCALE),
			(unsigned long)(pct % PROFILE_PERCENT_SCALE),
			top[i].symbol);
	}
}
