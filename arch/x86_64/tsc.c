/*
 * TSC calibration and cross-CPU synchronisation check (see tsc.h).
 *
 * Calibration by counting (tsc_init(), unless the caller gives the rate,
 * tsc_init_given()): read the TSC, let a reference clock of known
 * rate advance by a known amount, read the TSC again. The PM timer is read
 * continuously and its differences taken modulo its width, so a wrap
 * during the window costs nothing; the PIT is used in one-shot mode and
 * only its output pin is polled, so its count is never read at all.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/tsc.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include <stdarg.h>
#include "lib/kprintf.h"

#define CPUID_LEAF_TSC_CRYSTAL 0x15
#define CPUID_LEAF_FREQ 0x16


/* PIT (8254): channel 2, gated through port 0x61 (the speaker port). */
#define PIT_HZ 1193182ull
#define PIT_CH2_DATA 0x42
#define PIT_COMMAND 0x43
#define PIT_CMD_CH2 (2u << 6)
#define PIT_CMD_LOHI (3u << 4)
#define PIT_CMD_MODE0 (0u << 1) /* interrupt on terminal count */
#define PORT_SPEAKER 0x61
#define SPEAKER_GATE2 (1u << 0)
#define SPEAKER_DATA (1u << 1)
#define SPEAKER_OUT2 (1u << 5)
#define PIT_COUNT_MAX 0xffffu

/* Calibration windows: long enough for 0.1% resolution at PIT rates. */
#define CAL_PM_MS 25
#define CAL_PIT_MS 50
#define CAL_ATTEMPTS 4
/* Two consecutive runs agreeing this closely make a credible result. */
#define CAL_AGREE_PPM 20000 /* 2%: TCG's clocks are noisy */
/* CPUID's claim must agree with a measurement this closely, if we have
 * one; a hypervisor can report a crystal that is not the guest TSC's. */
#define CPUID_AGREE_PPM 50000
#define PPM 1000000ull
/* If nothing can be measured, assume this (and say it is a guess). */
#define TSC_GUESS_HZ 2000000000ull
/* Rounds of ping-pong per CPU in the sync check. */

static uint64_t tsc_freq;
static enum tsc_source tsc_src;
static bool invariant;
static uint64_t cpuid_claim_hz;
static uint64_t measured_hz;
static const char *cal_note = "";
static struct tsc_cal_entry cal_log[TSC_CAL_LOG_MAX];
static unsigned cal_count;

unsigned tsc_cal_log(const struct tsc_cal_entry **entries)
{
	*entries = cal_log;
	return cal_count;
}

/* Record what source src gave (hz) and its fate; returns the entry. */
static __printf(4, 5) struct tsc_cal_entry *
cal_record(enum tsc_source src, uint64_t hz, bool rejected,
	   const char *fmt, ...)
{
	static struct tsc_cal_entry overflow;
	struct tsc_cal_entry *e = cal_count < TSC_CAL_LOG_MAX ?
					  &cal_log[cal_count++] :
					  &overflow;
	va_list ap;

	e->src = src;
	e->hz = hz;
	e->rejected = rejected;
	va_start(ap, fmt);
	kvsnprintf(e->verdict, sizeof(e->verdict), fmt, ap);
	va_end(ap);
	return e;
}

#define BOUNDS_FMT "outside the credible %llu..%llu MHz"
#define BOUNDS_ARGS TSC_MIN_HZ / 1000000, TSC_MAX_HZ / 1000000

uint64_t tsc_hz(void)
{
	return tsc_freq;
}

enum tsc_source tsc_source(void)
{
	return tsc_src;
}

bool tsc_invariant(void)
{
	return invariant;
}

const char *tsc_source_name(enum tsc_source s)
{
	switch (s) {
	case TSC_SRC_CPUID_15H:
		return "cpuid-0x15";
	case TSC_SRC_CPUID_16H:
		return "cpuid-0x16";
	case TSC_SRC_PM_TIMER:
		return "acpi-pm-timer";
	case TSC_SRC_PIT:
		return "pit";
	case TSC_SRC_GUESS:
		return "guess";
	case TSC_SRC_GIVEN:
		return "given";
	default:
		return "none";
	}
}

static bool credible(uint64_t hz)
{
	return hz >= TSC_MIN_HZ && hz <= TSC_MAX_HZ;
}

static uint64_t ppm_diff(uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a;

	return b ? d * PPM / b : PPM;
}

/* Frequency CPUID claims (leaf 0x15, else 0x16), or 0. */
static uint64_t cpuid_tsc_hz(enum tsc_source *src)
{
	struct cpuid_regs r;

	if (cpu_info.max_leaf >= CPUID_LEAF_TSC_CRYSTAL) {
		r = cpuid(CPUID_LEAF_TSC_CRYSTAL, 0);
		/* eax: denominator, ebx: numerator, ecx: crystal Hz. */
		if (r.eax && r.ebx && r.ecx) {
			*src = TSC_SRC_CPUID_15H;
			return (uint64_t)r.ecx * r.ebx / r.eax;
		}
	}
	if (cpu_info.max_leaf >= CPUID_LEAF_FREQ) {
		r = cpuid(CPUID_LEAF_FREQ, 0);
		/* eax bits 15:0: base frequency in MHz. */
		if (r.eax & 0xffff) {
			*src = TSC_SRC_CPUID_16H;
			return (uint64_t)(r.eax & 0xffff) * 1000000ull;
		}
	}
	return 0;
}

/* One PM-timer measurement of ms milliseconds; 0 if the timer is dead. */
static uint64_t measure_pm(uint16_t port, bool is32, unsigned ms)
{
	uint32_t mask = is32 ? PM_TIMER_MASK_32 : PM_TIMER_MASK_24;
	uint64_t target = PM_TIMER_HZ * ms / 1000, elapsed = 0;
	uint64_t t0, t1, spins = 0;
	uint32_t prev, now;

	prev = inl(port) & mask;
	t0 = rdtsc_ordered();
	while (elapsed < target) {
		now = inl(port) & mask;
		elapsed += (now - prev) & mask; /* modulo the width: wraps */
		prev = now;
		/* A PM timer that never moves must not hang the boot. */
		if (++spins > target * 64 && elapsed == 0)
			return 0;
	}
	t1 = rdtsc_ordered();
	if (elapsed == 0) /* ms == 0: nothing measured */
		return 0;
	return (t1 - t0) * PM_TIMER_HZ / elapsed;
}

/* One PIT channel-2 measurement of ms milliseconds; 0 if OUT2 is stuck. */
static uint64_t measure_pit(unsigned ms)
{
	uint32_t count = (uint32_t)(PIT_HZ * ms / 1000);
	uint64_t t0, t1, limit;
	uint8_t spk;

	kassert(count <= PIT_COUNT_MAX);
	spk = inb(PORT_SPEAKER);
	/* Gate low and speaker off while programming. */
	outb(PORT_SPEAKER, spk & ~(SPEAKER_GATE2 | SPEAKER_DATA));
	outb(PIT_COMMAND, PIT_CMD_CH2 | PIT_CMD_LOHI | PIT_CMD_MODE0);
	outb(PIT_CH2_DATA, count & 0xff);
	outb(PIT_CH2_DATA, count >> 8);
	outb(PORT_SPEAKER, (spk & ~SPEAKER_DATA) | SPEAKER_GATE2);
	t0 = rdtsc_ordered();
	/* Give up after ~100x the window at the fastest credible TSC. */
	limit = TSC_MAX_HZ / 1000 * ms * 100;
	while (!(inb(PORT_SPEAKER) & SPEAKER_OUT2))
		if (rdtsc() - t0 > limit)
			return 0;
	t1 = rdtsc_ordered();
	outb(PORT_SPEAKER, spk & ~SPEAKER_DATA);
	return (t1 - t0) * PIT_HZ / count;
}

/* Repeat until two consecutive credible runs agree; 0 on failure. Each
 * run is recorded in the calibration log with its fate. */
static uint64_t measure(uint16_t pm_port, bool pm32, enum tsc_source *src)
{
	uint64_t prev = 0, hz = 0;
	struct tsc_cal_entry *prev_entry = NULL, *e;

	if (!pm_port)
		cal_record(TSC_SRC_PM_TIMER, 0, true,
			   "no PM timer (no FADT, or PM_TMR_BLK 0)");
	for (int i = 0; i < CAL_ATTEMPTS; i++) {
		hz = 0;
		if (pm_port) {
			hz = measure_pm(pm_port, pm32, CAL_PM_MS);
			*src = TSC_SRC_PM_TIMER;
			if (!hz)
				cal_record(*src, 0, true, "the PM timer at "
					   "port %#x did not move", pm_port);
			else if (!credible(hz))
				cal_record(*src, hz, true, BOUNDS_FMT,
					   BOUNDS_ARGS);
		}
		if (!credible(hz)) {
			hz = measure_pit(CAL_PIT_MS);
			*src = TSC_SRC_PIT;
			if (!hz)
				cal_record(*src, 0, true, "PIT channel 2 never "
					   "reached terminal count");
			else if (!credible(hz))
				cal_record(*src, hz, true, BOUNDS_FMT,
					   BOUNDS_ARGS);
		}
		if (!credible(hz))
			continue;
		e = cal_record(*src, hz, false, "credible");
		if (prev && ppm_diff(hz, prev) <= CAL_AGREE_PPM) {
			ksnprintf(e->verdict, sizeof(e->verdict),
				  "agrees with the run before within %llu ppm",
				  (unsigned long long)ppm_diff(hz, prev));
			return (hz + prev) / 2;
		}
		if (prev_entry) {
			prev_entry->rejected = true;
			ksnprintf(prev_entry->verdict,
				  sizeof(prev_entry->verdict),
				  "the next run differs by %llu ppm (> %u)",
				  (unsigned long long)ppm_diff(hz, prev),
				  CAL_AGREE_PPM);
		}
		prev = hz;
		prev_entry = e;
	}
	if (credible(prev)) {
		cal_note = " (runs disagreed; last used)";
		return prev;
	}
	return 0;
}

void tsc_init(uint16_t pm_port, bool pm_32bit)
{
	enum tsc_source csrc = TSC_SRC_NONE, msrc = TSC_SRC_NONE;

	invariant = cpu_has(FEAT_INVARIANT_TSC);
	cpuid_claim_hz = cpuid_tsc_hz(&csrc);
	measured_hz = measure(pm_port, pm_32bit, &msrc);

	if (!cpuid_claim_hz)
		cal_record(TSC_SRC_CPUID_15H, 0, true,
			   "CPUID leaves 0x15/0x16 give no frequency");
	else if (!credible(cpuid_claim_hz))
		cal_record(csrc, cpuid_claim_hz, true, BOUNDS_FMT,
			   BOUNDS_ARGS);
	else if (measured_hz &&
		 ppm_diff(cpuid_claim_hz, measured_hz) > CPUID_AGREE_PPM)
		cal_record(csrc, cpuid_claim_hz, true, "%llu ppm from the "
			   "measured %llu Hz (> %u)",
			   (unsigned long long)ppm_diff(cpuid_claim_hz,
							measured_hz),
			   (unsigned long long)measured_hz, CPUID_AGREE_PPM);
	if (credible(cpuid_claim_hz) &&
	    (!measured_hz ||
	     ppm_diff(cpuid_claim_hz, measured_hz) <= CPUID_AGREE_PPM)) {
		tsc_freq = cpuid_claim_hz;
		tsc_src = csrc;
	} else if (measured_hz) {
		tsc_freq = measured_hz;
		tsc_src = msrc;
	} else {
		tsc_freq = TSC_GUESS_HZ;
		tsc_src = TSC_SRC_GUESS;
	}
}

void tsc_init_given(uint64_t hz)
{
	kassert(credible(hz));
	invariant = cpu_has(FEAT_INVARIANT_TSC);
	tsc_freq = hz;
	tsc_src = TSC_SRC_GIVEN;
	cal_record(TSC_SRC_GIVEN, hz, false,
		   "given by the caller, not measured");
}

uint64_t tsc_us_to_cycles(uint64_t us)
{
	return us * (tsc_freq / 1000) / 1000;
}

uint64_t tsc_cycles_to_ns(uint64_t cycles)
{
	/* Split to avoid overflow for long intervals. */
	return cycles / tsc_freq * 1000000000ull +
	       cycles % tsc_freq * 1000000000ull / tsc_freq;
}

void tsc_delay_us(uint64_t us)
{
	uint64_t t0 = rdtsc(), n = tsc_us_to_cycles(us);

	while (rdtsc() - t0 < n)
		cpu_pause();
}

void tsc_print(void)
{
	for (unsigned i = 0; i < cal_count; i++)
		if (cal_log[i].rejected)
			kprintf("tsc: rejected %s: %llu Hz: %s\n",
				tsc_source_name(cal_log[i].src),
				(unsigned long long)cal_log[i].hz,
				cal_log[i].verdict);
	kprintf("tsc: %lu.%06lu MHz from %s%s, %s\n",
		(unsigned long)(tsc_freq / 1000000),
		(unsigned long)(tsc_freq % 1000000), tsc_source_name(tsc_src),
		cal_note,
		invariant ? "invariant" :
			    "NOT invariant (rate may change with P-states)");
	if (cpuid_claim_hz && tsc_src != TSC_SRC_CPUID_15H &&
	    tsc_src != TSC_SRC_CPUID_16H)
		kprintf("tsc: cpuid claims %lu Hz, not credible against the "
			"measured %lu Hz: ignored\n",
			(unsigned long)cpuid_claim_hz,
			(unsigned long)measured_hz);
	else if (measured_hz && tsc_src != TSC_SRC_PM_TIMER &&
		 tsc_src != TSC_SRC_PIT)
		kprintf("tsc: cross-check: measured %lu Hz\n",
			(unsigned long)measured_hz);
}
