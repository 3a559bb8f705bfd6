/*
 * The environment header of the benchmark output (lib/bench_output.h):
 * printed once per boot, before the first experiment's figures.
 */
#ifndef KERNEL_BENCH_ENV_REPORT_H
#define KERNEL_BENCH_ENV_REPORT_H

/* Print the environment header once per boot (later calls do nothing).
 * Runs the quick memory-type probe first if no experiment has stated a
 * verdict yet; a verdict the latency sweep contradicts is reported as
 * unknown. */
void bench_env_report(void);

#endif
