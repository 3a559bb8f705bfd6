/*
 * The kernel side of the benchmark harness (lib/bench.h): the TSC as the
 * harness's clock, the PMU as its counters, and the facts the
 * environment header states (kernel/bench/env_report.h prints it).
 */
#ifndef KERNEL_BENCH_ENV_H
#define KERNEL_BENCH_ENV_H

#include "lib/bench.h"
#include "lib/bench_output.h"

const struct bench_clock *bench_kernel_clock(void);
/* Cycles, instructions, LLC references and misses; NULL without a PMU. */
const struct bench_counters *bench_kernel_counters(void);
/* True once a counter session failed to start: figures read through
 * bench_kernel_counters() since are not measured and must not be
 * published (they would read as zero). */
bool bench_kernel_counters_failed(void);
/* The memory-type verdict the header states (set by the probe). Under
 * QEMU TCG, which applies no memory type, a measured BENCH_YES is noise
 * and is recorded, with a message, as BENCH_UNKNOWN; read the recorded
 * verdict back with bench_env_memtypes(). */
void bench_env_set_memtypes(enum bench_tristate honoured);
enum bench_tristate bench_env_memtypes(void);
/* True once a verdict was set (by the memtype experiment or the header's
 * own quick probe). */
bool bench_env_memtypes_checked(void);
/* True under QEMU's TCG, where caches and memory types are not modelled. */
bool bench_env_is_tcg(void);
/*
 * The cache geometry of the cache-model plugin's profile, from the
 * command line (cachemodel= and cachemodel.caches=, written by make
 * MODEL= and the test runner); NULL without a model or when the value is
 * malformed (said once, with the reason).
 */
const struct cache_geometry *bench_env_model_caches(void);
/*
 * The last-level cache size, the one source for every part of the kernel
 * that sizes or prints by it (the boot's latency sweep, the experiments,
 * the shell's `info caches`): the modelled one under the cache model,
 * else CPUID's (arch/x86_64/cpu_caches.c: leaf 4, 0x8000001d or AMD's
 * legacy 0x80000006), else an assumed size. Never 0. *source (if not
 * NULL) says which, as words that follow the size: "modelled
 * (cachemodel.caches=)", "per CPUID" or "assumed (CPUID describes no
 * cache)".
 */
uint64_t bench_env_llc_bytes(const char **source);
/* The same as one phrase, "LLC 16 MiB per CPUID", for every printer
 * (a static buffer, rewritten by each call). */
const char *bench_env_llc_text(void);

#endif
