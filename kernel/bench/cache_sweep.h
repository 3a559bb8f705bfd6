/*
 * Does this platform cache memory? Measured, not inferred from a
 * hypervisor signature: a dependent-load chase (each load's address is
 * the value of the one before, so loads cannot overlap) over working sets
 * from 4 KiB to several times the last-level cache, in random order
 * within and across pages (no prefetcher can guess it; each page's lines
 * are visited together, so page-walk or emulator-TLB costs do not pose
 * as a cache). Where caches exist the cost per load steps up where the
 * set outgrows each level (a knee); where none are modelled (QEMU TCG)
 * the line is flat. lib/cache_knee.h reads the points.
 *
 * cache_sweep_run() measures once at boot (a fraction of a second under
 * TCG); the environment header's caches_modelled and the memtype
 * experiment's verdict both come from cache_sweep_verdict().
 */
#ifndef KERNEL_CACHE_SWEEP_H
#define KERNEL_CACHE_SWEEP_H

#include "lib/cache_knee.h"

/* Measure (once; later calls do nothing). Needs the page allocator and a
 * calibrated TSC. */
void cache_sweep_run(void);
/* BENCH_YES / BENCH_NO from the sweep, BENCH_UNKNOWN when it could not
 * tell or has not run. */
enum bench_tristate cache_sweep_verdict(void);
/* The environment header's caches_modelled: the sweep said yes, and
 * the knees are the guest's own (not a TCG guest seeing its host's
 * caches through the emulator). */
bool cache_sweep_caches_modelled(void);
/* "yes", "no", "unknown". */
const char *cache_sweep_verdict_name(void);
/* The sweep's table, knees and verdict, for the boot report. */
void cache_sweep_print(void);

#endif
