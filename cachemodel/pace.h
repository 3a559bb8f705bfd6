/*
 * Pacing: several CPUs, each emulated on its own host thread, kept within
 * a quantum of modelled cycles of each other, so that what one CPU sees
 * of another (a flag it spins on, a line it shares) happens at a modelled
 * time rather than whenever the host scheduled the threads
 * (docs/cachemodel.md, "Several CPUs: pacing by modelled time").
 *
 *   clock(c) = busy(c) + skip(c)      busy: the caller's modelled cycles of
 *                                     c (instructions x CPI + memory);
 *                                     skip: cycles c slept through (halt,
 *                                     pause-wait)
 *   floor(c) = min clock(d) over the other runnable, non-exempt CPUs d
 *              (a pause-waiting d at clock(d) + delta: invariant 7)
 *   pace_tick(c): c runs on only while clock(c) <= floor(c) + quantum;
 *                 past that it waits until floor(c) >= clock(c) -
 *                 quantum / PACE_RESUME_DIV, so it then runs at least
 *                 that far before it waits again
 *
 * Portable C with no QEMU in it (Linux threads): the QEMU plugin
 * (cachemodel/plugin.c) calls it, tests/host/test_pace.c drives it with
 * plain threads.
 *
 * Invariants:
 *  1. A CPU's clock, skip, limit, thread id and pause-wait deadline are
 *     written only by that CPU's own thread (pace_tick, pace_resume,
 *     pace_pause); other threads read them with atomic loads; its poke
 *     is lowered by others (pace_poke) and taken by it, atomically.
 *     clock never decreases.
 *  2. A CPU that is ahead blocks on a condition variable, after a
 *     bounded spin (a pacing wait spins for PACE_SPIN_NS of host time
 *     when there are no more CPUs than host CPUs, a pause-wait not at
 *     all; a spinning waiter looks at the clocks again between its
 *     spins, so it needs no broadcast): it publishes the clock it needs
 *     the others to reach (wake_at) and
 *     re-checks their clocks under the lock; a CPU whose published clock
 *     reaches wake_at broadcasts under the same lock. wake_at's stores
 *     and loads are sequentially consistent. A tick publishes its clock
 *     with a release store (a plain store on x86: a sequentially
 *     consistent one, at every translation block, was the tick's largest
 *     cost), so its load of wake_at may see the value from before a
 *     waiter's store while the waiter sees the clock from before the
 *     tick; the CPU's next tick loads wake_at again and wakes it. A CPU
 *     stops ticking only through a sequentially consistent publication
 *     followed by a look at wake_at (waiting, pause-waiting, halting),
 *     so no wake-up is lost; one blocked outside guest code right after
 *     a tick costs the waiter at most its periodic look (invariant 4).
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
 *  6. A wake (an IPI) sent at the sender's clock T to a halted CPU, or
 *     to every halted CPU when the sender cannot name its target
 *     (pace_wake_sent), makes each of them count as runnable at T for
 *     blocked_ns of host time, so the sender cannot run more than a
 *     quantum past T before the woken CPU runs; the woken CPU's clock
 *     joins T, not the others' clock at the moment the host resumed it.
 *     While the held time is up but the woken CPU's host thread is
 *     runnable (the host has not run it yet), the wake holds on, counted
 *     as a stall (invariant 4), blocked_ns more each time it is seen so:
 *     on a busy host a woken client would otherwise start late in
 *     modelled time, and silently.
 *     A wake named before the write that sends it (pace_wake_sent()
 *     with a target, then pace_wake_delivered() at the write) does not
 *     hold its own sender: from the naming until the write, or until
 *     the sender's clock is PACE_DELIVER_MAX_CYCLES past T, the sender
 *     does not wait at its ticks. Else a sender more than a quantum
 *     ahead of another CPU would wait, between naming and writing, for
 *     a CPU that waits for the woken one, which waits for the write: a
 *     deadlock that only the host's clock (blocked_ns) undid.
 *     A CPU the wake was not for stops counting after blocked_ns (the
 *     sender only waited; no figure changes); if it wakes later (a timer,
 *     or a wake the host delivered later than that), it joins the
 *     others' clock as in invariant 3.
 *  7. Pause-wait (pace_pause(), at the guest's `pause`: "I am polling").
 *     A CPU c at clock C that pauses, with another CPU working (runnable,
 *     not pause-waiting, not exempt; or halted with a wake on its way,
 *     invariant 6), sleeps instead of running more turns of its loop,
 *     and resumes with its clock moved (never back) to
 *       (a) write: min(max(C, T), C + delta), T the lowest clock at
 *           which another CPU poked it (pace_poke()) since c's last
 *           pause-wait ended; a poke that came before this pause-wait
 *           resumes it at once. The plugin pokes c for a write that
 *           invalidated a line of c's private caches: any such line
 *           while c runs, only a line its loop touched in the turn
 *           before the pause while c pause-waits
 *           (cachemodel/pause_watch.h);
 *       (b) timeout: exactly C + delta, once every working other CPU's
 *           clock reached C + delta. delta starts at PACE_PAUSE_QUANTA
 *           quanta; each of c's pause-waits that ends so doubles it, up
 *           to PACE_PAUSE_MAX_QUANTA; one that ends by (a) keeps it, one
 *           that ends by (c) or (d) sets it back;
 *       (c) alone: C, if no other CPU works (all halted, exempt or
 *           pause-waiting), or none does any more: it does not sleep.
 *           A pause-waiter with a poke on its way works: it counts at
 *           the clock of (a), in this and in every floor, until it has
 *           published that clock;
 *       (d) gave up: C, if the slowest working CPU's clock stood still
 *           for blocked_ns / PACE_PAUSE_LOOK_DIV of host time while its
 *           thread was not running (blocked outside guest code, e.g.
 *           waiting for this CPU to leave an exclusive section of
 *           QEMU's).
 *     The cycles moved go to its skip (invariant 1), as a halt's do.
 *     While it sleeps it counts in the others' floor at C + delta, so
 *     they run at most delta + quantum past C, and none waits for it
 *     below that: a worker whose floor it is has passed C + delta, which
 *     ends the sleep (timeout). A write's resume clock is its poker's
 *     clock or C + delta, and every other CPU is then within a quantum
 *     of the slowest of them (none of which can be far behind); only an
 *     end of (c) or (d) leaves c up to delta + quantum behind another
 *     CPU. A sleeper publishes C + delta, then
 *     looks, under the lock, for pokes and working CPUs; a poker
 *     publishes the poke, then looks for a sleeper and broadcasts under
 *     the lock (the Dekker handshake of invariant 2): no poke is lost,
 *     and of two CPUs that start to pause-wait at once at least one sees
 *     the other and does not sleep, so some CPU always runs. A CPU that
 *     halts wakes every sleeper to look again; a sleeper also looks
 *     every blocked_ns / PACE_PAUSE_LOOK_DIV of host time.
 *  8. The quantum may be made finer while the CPUs run
 *     (pace_set_quantum(): an experiment whose CPUs share lines at a
 *     grain of a few cycles asks for it), never coarser than the one
 *     pace_create() was given: every window sized in quanta (the pause
 *     deltas here, the plugin's causality window, the engine's bus
 *     window) was sized for that one. Each CPU takes the new quantum at
 *     its next tick; one already waiting resumes at the lead it waited
 *     for.
 *  9. Serial pacing (pace_set_serial(); off by default). Inside a quantum
 *     concurrent pacing leaves the order of two CPUs' accesses to the
 *     host; serially, one CPU at a time runs guest code: the one that
 *     holds the turn. The holder keeps it while its clock is at most a
 *     quantum past the slowest other's (as in pace_tick()) and lets it
 *     go at the tick that passes that, or when it halts or sleeps in a
 *     pause-wait. A free turn goes to the CPU first in line: the lowest
 *     clock as every floor counts it (a pause-waiter at its deadline or
 *     its poke's clock, a halted CPU with a wake on its way at the
 *     wake's; invariants 6, 7), the lower number on a tie. Which CPU runs
 *     when is then a function of the modelled clocks alone, and so is
 *     every order of events between CPUs. A CPU without the turn waits
 *     at the clock it published last (what it counted since shows in
 *     its turn). A pause-waiter whose wait ended
 *     resumes (takes its pokes, leaves its deadline) only in its turn, so
 *     the holder sees its state change at the same point of its run in
 *     every run; until then the others count it at its deadline or its
 *     lowest poke's clock, and so does it: a poke that comes while it
 *     waits for the turn lowers the clock it waits at. A CPU waiting for the turn sleeps; one waiting for a
 *     holder whose thread is asleep outside guest code for 2 x
 *     blocked_ns breaks the pacing (invariant 4): the holder is exempt
 *     and the turn free. ordering (pace_order()) waits for nothing: the
 *     turn orders every action.
 */
#ifndef CACHEMODEL_PACE_H
#define CACHEMODEL_PACE_H

#include <stdbool.h>
#include <stdint.h>

/* The default quantum, in modelled cycles (the plugin's sync=): assumed,
 * then checked by sweeps (docs/cachemodel.md, "Several CPUs: pacing by
 * modelled time"): a tbench request's elapsed cycles are the same at 200
 * and 2000 and a third higher at 20000; the page cache's lockless chunk
 * is the same at 200, 500 and 1000 and 17 % dearer at 2000; a kbuild's
 * is not converged (about 3 % above its figure at 250: its causality
 * waits grow with the quantum), its ratios are (within 0.3 %). The
 * waits multiply as it shrinks. */
#define PACE_DEFAULT_QUANTUM 1000
/* Invariant 6: how far past a named wake's clock its sender runs without
 * waiting if its ICR write is never seen (x2APIC's WRMSR is not a memory
 * access; QEMU 7.2's TCG offers no x2APIC). An xAPIC send is a read and
 * two uncached writes of the APIC, under 1,000 cycles on every profile. */
#define PACE_DELIVER_MAX_CYCLES 20000
/* A CPU that had to wait resumes once the slowest is within quantum /
 * PACE_RESUME_DIV of it, not within the whole quantum: it then has that
 * much to run before its next wait, instead of waiting again at nearly
 * every translation block (a 2-CPU kbuild boot waited a tenth as often;
 * docs/cachemodel.md, "Several CPUs: pacing by modelled time"). No CPU
 * is ever further ahead than before. */
#define PACE_RESUME_DIV 2
/* Host time a waiter lets its slowest CPU stand still before it looks. */
#define PACE_DEFAULT_BLOCKED_NS 20000000ll	/* 20 ms */
/* A pause-wait's first timeout, delta, in quanta (invariant 7, b):
 * assumed, then measured (docs/cachemodel.md, "Pause-wait"). A hand-over
 * ends the wait at the write's clock whatever delta is; delta bounds the
 * wait for what is not a line (the TSC, an interrupt). Each timeout is a
 * host wake-up of a sleeping thread, the dearest thing pacing does (a
 * client waiting out a server's long request timed out about a dozen
 * times a request), so a CPU's delta doubles at each of its waits that times
 * out, up to PACE_PAUSE_MAX_QUANTA, and stays where it is when a write
 * ends one: its next wait is likely as long. The engine's bus window
 * (BUS_SLOTS) and the plugin's causality window cover that plus a
 * quantum. */
#define PACE_PAUSE_QUANTA 8
#define PACE_PAUSE_MAX_QUANTA 64
/* A pause-waiter looks again every blocked_ns / PACE_PAUSE_LOOK_DIV of
 * host time even without a wake (2 ms by default), and gives up its wait
 * when the slowest working CPU's clock stood still that long while its
 * thread was not running (invariant 7, d): giving up changes no figure's
 * validity (the CPU only runs one more turn of its loop), so it is much
 * shorter than blocked_ns. */
#define PACE_PAUSE_LOOK_DIV 10

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
/*
 * If ordering is on (pace_set_order()): cpu is about to do something
 * whose order among CPUs should follow modelled time (a contended locked
 * RMW, cachemodel/locked.h): wait, as pace_tick() waits but with no
 * quantum of lead, until every other working CPU's clock (halted, exempt
 * and pause-waiting ones counted as in invariants 3, 4 and 7) has
 * reached cpu's clock busy + skip; first by yielding the host CPU, then
 * asleep. Each wait is a host-level hand-over between the CPUs' threads:
 * cheap on an idle host, milliseconds on a busy one (docs/cachemodel.md,
 * "The page cache on four CPUs"), which is why ordering is an option.
 * Call it right after pace_tick() at the same busy. Nothing if ordering
 * or pacing is off.
 */
void pace_order(struct pace *p, unsigned cpu, uint64_t busy);
/*
 * Serial pacing on or off (invariant 9; off by default). Any thread, at
 * any time: each CPU takes the change at its next tick.
 */
void pace_set_serial(struct pace *p, bool on);
/*
 * If every CPU but cpu (the calling thread's, with busy cycles) is
 * halted: move cpu's clock forward to the first multiple of window at
 * least margin past it, and return true; else false and nothing moves.
 * Work that starts so starts at the same clock, relative to the
 * engine's windows, in every run.
 */
bool pace_align(struct pace *p, unsigned cpu, uint64_t busy,
		uint64_t window, uint64_t margin);
/* Is serial pacing on? */
bool pace_serial(const struct pace *p);
/* Waits for the turn (invariant 9). */
uint64_t pace_turn_waits(const struct pace *p);
/* Ordering on or off (off by default); before the CPUs run. */
void pace_set_order(struct pace *p, bool on);
/* Is ordering on? */
bool pace_ordering(const struct pace *p);
/* pace_order() calls that found a CPU behind and waited. */
uint64_t pace_order_waits(const struct pace *p);
void pace_idle(struct pace *p, unsigned cpu);
/* cpu (the calling thread's) resumes with busy cycles (invariant 3). */
void pace_resume(struct pace *p, unsigned cpu, uint64_t busy);
/*
 * cpu (the calling thread's), with busy cycles, has just sent a wake-up
 * (an IPI) to CPU target, or, target < 0, to one it cannot name: then
 * every halted CPU may be woken (invariant 6).
 */
void pace_wake_sent(struct pace *p, unsigned cpu, uint64_t busy, int target);
/*
 * cpu (the calling thread's) has written the ICR that sends the wake it
 * named in pace_wake_sent(): it waits at its ticks again (invariant 6).
 */
void pace_wake_delivered(struct pace *p, unsigned cpu);

/*
 * cpu (the calling thread's), with busy cycles, executes a `pause`:
 * pause-wait (invariant 7); returns the cycles its clock moved (added to
 * its skip). Returns 0 at once when pacing is off or cpu has not ticked.
 */
uint64_t pace_pause(struct pace *p, unsigned cpu, uint64_t busy);
/*
 * Another CPU, at its clock t, invalidated a line in cpu's private
 * caches (any thread but cpu's): a pause-waiting cpu resumes
 * (invariant 7, a).
 */
void pace_poke(struct pace *p, unsigned cpu, uint64_t t);

/* Whether cpu is pause-waiting now (atomic read; for observers). */
bool pace_pause_waiting(const struct pace *p, unsigned cpu);

/* How pause-waits ended (invariant 7); PACE_PW_NONE: it did not sleep
 * (no other CPU worked). */
enum pace_pw_end {
	PACE_PW_WRITE, PACE_PW_TIMEOUT, PACE_PW_ALONE, PACE_PW_GAVE_UP,
	PACE_PW_NONE, PACE_PW_ENDS
};
/* Pauses that ended so (atomic read). */
uint64_t pace_pw_count(const struct pace *p, enum pace_pw_end e);
/* Cycles pause-waits moved clocks by, over all CPUs. */
uint64_t pace_pw_skipped(const struct pace *p);

/* Cycles cpu's clock runs ahead of its busy cycles (atomic read). */
uint64_t pace_skip(const struct pace *p, unsigned cpu);
/* False once pacing turned itself off (invariant 5). */
bool pace_on(const struct pace *p);
/* The quantum in effect (atomic read). */
uint64_t pace_quantum(const struct pace *p);
/*
 * Pace with quantum cycles from now on (invariant 8); 0, or more than
 * pace_create()'s quantum: back to that one. Any thread.
 */
void pace_set_quantum(struct pace *p, uint64_t quantum);
/* Waits, stalls (invariant 4, host), breaks (invariant 4, blocked). */
uint64_t pace_waits(const struct pace *p);
uint64_t pace_stalls(const struct pace *p);
uint64_t pace_breaks(const struct pace *p);

#endif
