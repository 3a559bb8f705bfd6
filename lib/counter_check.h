/*
 * Judging a performance counter against a loop of known length: the
 * boot-time self-test of the PMU (arch/x86_64/pmu.c) runs a loop whose
 * retired-instruction count is known exactly and asks this file whether
 * what each counter says is believable. Pure arithmetic, host-tested.
 */
#ifndef LIB_COUNTER_CHECK_H
#define LIB_COUNTER_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How far a retired-instruction count may stray from the loop's own
 * count, in per cent: the loop dwarfs the few instructions of the
 * reads around it, and interrupts are off. */
#define COUNTER_CHECK_TOLERANCE_PCT 3

/*
 * counted: what a retired-instructions counter reported over a loop that
 * retires expected instructions (expected > 0). Returns true when counted
 * is within COUNTER_CHECK_TOLERANCE_PCT of expected; otherwise false and
 * a one-line reason in why[0..len) ("counted 0 of 2000000: the counter
 * does not count", "counted 2300000 of 2000000: 15% off").
 */
bool counter_check_instructions(uint64_t counted, uint64_t expected,
				char *why, size_t len);

/* cycles: what a cycles counter advanced over the same loop. True when
 * it advanced at all; otherwise false and a reason in why. */
bool counter_check_cycles(uint64_t cycles, char *why, size_t len);

#endif
