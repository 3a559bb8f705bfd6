/*
 * The time-stamp counter: the kernel's clock (SDM vol. 3B, 18.17).
 *
 * tsc_init() finds its frequency: from CPUID 0x15 (crystal ratio) or 0x16
 * (base MHz) when present and credible, else by counting it against the
 * ACPI PM timer (3.579545 MHz), else against PIT channel 2. The result is
 * checked for credibility (range, repeat agreement) and its source kept
 * for the boot report. A caller that knows the rate exactly gives it
 * instead (tsc_init_given()). (kernel/tsc_sync.h checks that the CPUs' TSCs
 * agree.)
 */
#ifndef ARCH_X86_64_TSC_H
#define ARCH_X86_64_TSC_H

#include <stdbool.h>
#include <stdint.h>

enum tsc_source {
	TSC_SRC_NONE,
	TSC_SRC_CPUID_15H, /* crystal clock x TSC/crystal ratio */
	TSC_SRC_CPUID_16H, /* processor base frequency */
	TSC_SRC_PM_TIMER,  /* measured against the ACPI PM timer */
	TSC_SRC_PIT,	   /* measured against PIT channel 2 */
	TSC_SRC_GUESS,	   /* nothing worked: a fixed guess, not credible */
	TSC_SRC_GIVEN,	   /* given by the caller (tsc_init_given()) */
};

/* The ACPI PM timer: a fixed 3.579545 MHz counter, 24 or 32 bits wide. */
#define PM_TIMER_HZ 3579545ull
#define PM_TIMER_MASK_24 0xffffffu
#define PM_TIMER_MASK_32 0xffffffffu

/* Plausible TSC frequencies; anything outside is a failed calibration. */
#define TSC_MIN_HZ 100000000ull	   /* 100 MHz */
#define TSC_MAX_HZ 20000000000ull  /* 20 GHz */

/*
 * Calibrate. pm_port: the ACPI PM timer's I/O port (0: none), pm_32bit:
 * whether it counts 32 bits (else 24). Safe to call once, boot CPU only.
 */
void tsc_init(uint16_t pm_port, bool pm_32bit);

/*
 * Instead of tsc_init(): take hz (credible) as the frequency without
 * measuring it, for a TSC whose rate the caller knows exactly (QEMU
 * -icount: one tick per nanosecond of virtual time, kernel/main.c),
 * where counting it against the PM timer only adds that timer's phase,
 * which the host decides. Boot CPU only, once.
 */
void tsc_init_given(uint64_t hz);

uint64_t tsc_hz(void);
enum tsc_source tsc_source(void);
const char *tsc_source_name(enum tsc_source s);
bool tsc_invariant(void);

/* rdtsc that neither runs ahead of earlier instructions nor lets later
 * ones run ahead of it (lfence on both sides). */
static inline uint64_t rdtsc_ordered(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence; rdtsc; lfence"
			 : "=a"(lo), "=d"(hi)
			 :
			 : "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* Conversions with the calibrated frequency (tsc_init() must have run). */
uint64_t tsc_us_to_cycles(uint64_t us);
uint64_t tsc_cycles_to_ns(uint64_t cycles);
/* Busy-wait at least us microseconds. */
void tsc_delay_us(uint64_t us);

/* The boot-report lines: frequency, source, invariance. */
void tsc_print(void);

/*
 * What each calibration source gave and why it was or was not used: one
 * entry per CPUID claim and per PM-timer or PIT run, in order. hz is the
 * figure obtained (0: the source gave none); verdict says what became
 * of it ("used", "outside 100..20000 MHz", "disagrees with ...").
 * tsc_print() prints the rejected ones.
 */
#define TSC_CAL_LOG_MAX 16
struct tsc_cal_entry {
	enum tsc_source src;
	uint64_t hz;
	bool rejected;
	char verdict[80];
};
unsigned tsc_cal_log(const struct tsc_cal_entry **entries);

#endif
