/*
 * The hardware-quirks table: what a machine does that makes this
 * kernel's figures less trustworthy (no invariant TSC, TSC skew between
 * CPUs, SMT siblings, frequency scaling, a PMU that fails its self-test,
 * no cache description, an emulator that models no cache) or makes it
 * take another path (no ACPI reset register, no keyboard controller).
 * The boot report prints one "quirk:" line for each that applies; the
 * experiments' figures should be read with those lines in mind.
 */
#ifndef KERNEL_HW_QUIRKS_H
#define KERNEL_HW_QUIRKS_H

#include "kernel/tsc_sync.h"

/* Remember the boot's TSC sync result (NULL: single CPU, not checked). */
void hw_quirks_note_tsc_sync(const struct tsc_sync_result *r);
/*
 * Check every quirk and print one line for each that applies, then a
 * summary line. Returns the number of quirks that weaken figures.
 * Runs the PMU self-test on the calling CPU (a few microseconds).
 */
unsigned hw_quirks_report(void);

#endif
