/*
 * Pacing: several CPUs, each emulated on its own host thread, kept within
 * a quantum of modelled cycles of each other, so that what one CPU sees
 * of another (a flag it spins on, a line it shares) happens at a modelled
 * time rather than whenever the host scheduled the threads
 * (docs/cachemodel.md, "Several CPUs: pacing by modelled time").
 *
 *   clock(c) = busy(c) + skip(c)      busy: the caller's modelled cycles of
 *                                     c (instructions x CPI + memory);
 *                                     skip: cycles c slept through (halt)
 *   floor(c) = min clock(d) over the other runnable, non-exempt CPUs d
 *   pace_tick(c): c runs on only while clock(c) <= floor(c) + quantum
 *
 * Portable C with no QEMU in it (Linux threads): the QEMU plugin
 * (cachemodel/plugin.c) calls it, tests/host/test_pace.c drives it with
 * plain threads.
 *
 * Invariants:
 *  1. A CPU's clock, skip, limit and thread id are written only by that
 *     CPU's own thread (pace_tick, pace_resume); other threads read clock
 *     and skip with atomic loads. clock never decreases.
 *  2. A CPU that is ahead blocks on a condition variable (never spins):
 *     it publishes the clock it needs the others to reach (wake_at) and
 *     re-checks their clocks under the lock; a CPU whose published clock
 *     reaches wake_at broadcasts under the same lock. Clock stores and
 *     wake_at loads are sequentially consistent (a Dekker handshake), so a
 *     wake-up cannot be lost between the check and the sleep.
 *  3. Halted CPUs (pace_idle) hold no one back; a CPU that resumes, or
 *     runs for the first time, first moves its clock up to the slowest
 *     runnable other's (or, if none runs, to the latest clock of all).
 *  4. Pacing is never given up silently. A waiter whose slowest CPU has
 *     not moved for blocked_ns of host time looks at that CPU's host
 *     thread: runnable (the host did not schedule it) means keep waiting,
 *     counted as a stall; sleeping means it is blocked outside guest code
 *     (e.g. waiting for the waiter itself to leave an exclusive section),
 *     and the waiter breaks the pacing, counted in pace_breaks(), and runs
 *     on; that CPU is exempt until it ticks again.
 *  5. If two CPUs tick on one host thread (QEMU's single-threaded,
 *     round-robin TCG), waiting would deadlock: pacing turns itself off
 *     for good (pace_on() false) and never blocks.
 *  6. A wake (an IPI) sent at the sender's clock T to halted CPUs
 *     (pace_wake_sent) makes each of them count as runnable at T for
 *     blocked_ns of host time, so the sender cannot run more than a
 *     quantum past T before the woken CPU runs; the woken CPU's clock
 *     joins T, not the others' clock at the moment the host resumed it.
 *     A CPU the wake was not for stops counting after blocked_ns (the
 *     sender only waited; no figure changes); if it wakes later (a timer,
 *     or a wake the host delivered later than that), it joins the
 *     others' clock as in invariant 3.
 */
#ifndef CACHEMODEL_PACE_H
#define CACHEMODEL_PACE_H

#include <stdbool.h>
#include <stdint.h>

/* The default quantum, in modelled cycles (the plugin's sync=): assumed,
 * then checked by a sweep (docs/cachemodel.md, "Several CPUs: pacing by
 * modelled time"): a tbench request's elapsed cycles are the same at 200
 * and 2000 and a third higher at 20000; below 2000 the waits multiply. */
#define PACE_DEFAULT_QUANTUM 2000
/* Host time a waiter lets its slowest CPU stand still before it looks. */
#define PACE_DEFAULT_BLOCKED_NS 20000000ll	/* 20 ms */

struct pace;

/*
 * Pacing for ncpus CPUs (1..64) within quantum cycles (>= 1), looking at
 * a CPU that stands still after blocked_ns of host time. Returns NULL if
 * the arguments are out of range or memory runs out.
 */
struct pace *pace_create(unsigned ncpus, uint64_t quantum,
			 int64_t blocked_ns);
void pace_destroy(struct pace *p);

/*
 * cpu (the calling thread's) has busy modelled cycles, monotonic: publish
 * its clock and return when it is at most a quantum ahead of the slowest
 * runnable other CPU (invariants 2-5). Called often (at every translation
 * block); cheap when no wait is needed.
 */
void pace_tick(struct pace *p, unsigned cpu, uint64_t busy);
/* cpu (the calling thread's) halts: the others stop waiting for it. */
void pace_idle(struct pace *p, unsigned cpu);
/* cpu (the calling thread's) resumes with busy cycles (invariant 3). */
void pace_resume(struct pace *p, unsigned cpu, uint64_t busy);
/*
 * cpu (the calling thread's), with busy cycles, has just sent a wake-up
 * (an IPI) whose target it cannot name: every halted CPU may be woken
 * (invariant 6).
 */
void pace_wake_sent(struct pace *p, unsigned cpu, uint64_t busy);

/* Cycles cpu's clock runs ahead of its busy cycles (atomic read). */
uint64_t pace_skip(const struct pace *p, unsigned cpu);
/* False once pacing turned itself off (invariant 5). */
bool pace_on(const struct pace *p);
uint64_t pace_quantum(const struct pace *p);
/* Waits, stalls (invariant 4, host), breaks (invariant 4, blocked). */
uint64_t pace_waits(const struct pace *p);
uint64_t pace_stalls(const struct pace *p);
uint64_t pace_breaks(const struct pace *p);

#endif
