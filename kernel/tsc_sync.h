/*
 * Do the CPUs' time-stamp counters agree? tsc_sync_check() measures the
 * offset between the boot CPU's TSC and every AP's by ping-pong through
 * shared memory, with each AP answering from its work loop
 * (kernel/smp_call.h). Per-CPU benchmark figures (kernel/bench/bench_smp.h)
 * compare TSC readings across CPUs and rely on this.
 */
#ifndef KERNEL_TSC_SYNC_H
#define KERNEL_TSC_SYNC_H

#include <stdbool.h>
#include <stdint.h>

/* Result of the cross-CPU check (cycles; signed: remote minus boot CPU). */
struct tsc_sync_result {
	unsigned cpus_checked;
	unsigned worst_cpu;	 /* CPU with the largest |offset| */
	int64_t worst_offset;	 /* its offset estimate (min-RTT sample) */
	uint64_t worst_rtt;	 /* that sample's round trip: +-rtt/2 */
	uint64_t proven_skew;	 /* largest skew causality proves (>= 0) */
};

/*
 * Ping-pong with every online AP (they must be in their work loops).
 * Fills *r and returns true when it could run (false: single CPU).
 */
bool tsc_sync_check(struct tsc_sync_result *r);

/* The boot-report line. */
void tsc_sync_print(const struct tsc_sync_result *r);

#endif
