/*
 * Sampling profiler, in the manner of oprofile: every online CPU's LAPIC
 * timer interrupts it PROFILE_HZ times a second, and the interrupted
 * instruction pointer is recorded; a report resolves the samples with the
 * embedded symbol table and prints "samples  %  symbol" for the top
 * functions. profile=1 on the command line profiles every experiment.
 *
 * Limits, printed with every report: only the timer samples (no PMU
 * overflow sampling, and QEMU TCG has no PMU anyway), and code that runs
 * with interrupts off (IPI handlers, spinlock sections taken with
 * interrupts off) is never sampled: its time lands on the instruction
 * that re-enables interrupts.
 */
#ifndef KERNEL_PROFILE_H
#define KERNEL_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#define PROFILE_HZ 1000
#define PROFILE_SAMPLES_PER_CPU 8192
#define PROFILE_TOP_N 10

/*
 * Start sampling on every online CPU at hz. Returns false (with a
 * message) when there is no LAPIC timer or no memory for the buffers.
 */
bool profile_start(unsigned hz);
/* The same on the online CPUs of mask only. */
struct cpumask;
bool profile_start_on(const struct cpumask *mask, unsigned hz);
/* Stop sampling everywhere; the samples stay until the next start. */
void profile_stop(void);
/* True between profile_start() and profile_stop(). */
bool profile_active(void);

/* One line of a report: a function and its samples. */
struct profile_entry {
	const char *symbol; /* "(outside the kernel)" for unknown addresses */
	uint64_t samples;
};

/*
 * The top max functions by samples, most first, into out[]. Returns the
 * number filled; *total gets all samples, *dropped those lost to full
 * buffers.
 */
unsigned profile_top(struct profile_entry *out, unsigned max,
		     uint64_t *total, uint64_t *dropped);

/* Print the top n like oprofile's report, under title. */
void profile_report(const char *title, unsigned n);

#endif
