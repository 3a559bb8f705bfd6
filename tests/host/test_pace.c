/*
 * Host test of the pacing of modelled clocks (cachemodel/pace.c), under
 * ThreadSanitizer, with plain threads standing for QEMU's vCPU threads:
 *  - two CPUs ticking at different speeds never get more than a quantum
 *    apart, and nothing breaks; a CPU that had to wait for a slower one
 *    runs quantum / PACE_RESUME_DIV before it waits again;
 *  - a halted CPU holds no one back, and joins the other's time when it
 *    resumes;
 *  - a CPU that stands still while its thread sleeps (blocked outside
 *    guest code) makes the waiter break the pacing, counted; one whose
 *    thread keeps running (the host did not schedule it) is waited for,
 *    counted as a stall and not as a break;
 *  - two CPUs ticked from one thread (round-robin TCG) turn pacing off
 *    instead of deadlocking;
 *  - a wake sent to a halted CPU holds the sender within a quantum of the
 *    wake until the woken CPU runs, whose clock joins the wake's; past
 *    its time it holds on while the woken CPU's thread is runnable, and
 *    lets go if that thread sleeps;
 *  - an ordered action (pace_order()) waits until the other CPU reaches
 *    its clock, not for a halted one, and not at all unless ordering is
 *    on.
 */
// HOST_SRCS: cachemodel/pace.c
// HOST_SANITIZE: thread
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "cachemodel/pace.h"
#include "lib/ktest.h"
#include "tests/host/host_shim.h"
#include "tests/host/host_thread_group.h"

#define QUANTUM 100
#define TICKS 20000
#define SLOW_STEP 3		/* cycles per tick, CPU 1 */
#define FAST_STEP 7		/* cycles per tick, CPU 0 */
#define BLOCKED_NS 5000000ll	/* 5 ms: the test's stand-still limit */
#define STAND_STILL_NS 100000000ll	/* 100 ms: > 2 x BLOCKED_NS */
#define SLOW_TICK_NS 1000ll	/* CPU 1's host time per tick, SLOW_HOST */
#define NS_PER_SEC 1000000000ll
#define FINE_QUANTUM 20		/* pace_set_quantum() halfway, FINER */

struct run {
	struct pace *p;
	uint64_t clock[2];	/* atomic: each CPU's busy + skip */
	uint64_t worst_lead;	/* atomic: most a CPU was ahead after a tick */
	uint64_t worst_fine;	/* the same, ticks begun after FINER's change */
	uint32_t fine;		/* atomic: FINER's change is made */
	uint32_t done[2];	/* atomic: set before the CPU's last idle */
	int mode;		/* what CPU 1 does in the middle */
	pthread_barrier_t bar;
};

struct arg {
	struct run *r;
	unsigned cpu;
};

enum { PLAIN, HALT, SLEEP, SPIN, SLOW_HOST, FINER };

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * NS_PER_SEC + t.tv_nsec;
}

/* After a tick of cpu: its lead over the other, into *worst if more. */
static void note_lead(struct run *r, unsigned cpu, uint64_t *worst)
{
	uint64_t me = __atomic_load_n(&r->clock[cpu], __ATOMIC_SEQ_CST);
	uint64_t other = __atomic_load_n(&r->clock[!cpu], __ATOMIC_SEQ_CST);
	uint64_t w = __atomic_load_n(worst, __ATOMIC_RELAXED);

	/* Before its first tick the other CPU holds no one back. */
	while (other && me > other && me - other > w &&
	       !__atomic_compare_exchange_n(worst, &w, me - other, false,
					    __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

static void *cpu_thread(void *a)
{
	struct arg *arg = a;
	struct run *r = arg->r;
	unsigned cpu = arg->cpu;
	uint64_t busy = 0, step = cpu ? SLOW_STEP : FAST_STEP;
	uint32_t fine;

	/* Both start ticking before either runs ahead. */
	busy += step;
	pace_tick(r->p, cpu, busy);
	__atomic_store_n(&r->clock[cpu], busy + pace_skip(r->p, cpu),
			 __ATOMIC_SEQ_CST);
	pthread_barrier_wait(&r->bar);
	for (unsigned i = 1; i < TICKS; i++) {
		if (cpu == 1 && i == TICKS / 2 &&
		    (r->mode == HALT || r->mode == SLEEP || r->mode == SPIN)) {
			int64_t until = now_ns() + STAND_STILL_NS;

			if (r->mode == HALT)
				pace_idle(r->p, 1);
			/* CPU 1 stands still: asleep, halted or spinning. */
			if (r->mode == SPIN) {
				while (now_ns() < until)
					;
			} else {
				struct timespec t = {0, STAND_STILL_NS};

				nanosleep(&t, NULL);
			}
			if (r->mode == HALT)
				pace_resume(r->p, 1, busy);
		}
		if (cpu == 1 && r->mode == SLOW_HOST) {
			int64_t until = now_ns() + SLOW_TICK_NS;

			while (now_ns() < until)
				;
		}
		if (cpu == 0 && r->mode == FINER && i == TICKS / 2) {
			pace_set_quantum(r->p, FINE_QUANTUM);
			__atomic_store_n(&r->fine, 1, __ATOMIC_SEQ_CST);
		}
		/* A tick begun after the change paces with the new one. */
		fine = __atomic_load_n(&r->fine, __ATOMIC_SEQ_CST);
		busy += step;
		pace_tick(r->p, cpu, busy);
		__atomic_store_n(&r->clock[cpu], busy + pace_skip(r->p, cpu),
				 __ATOMIC_SEQ_CST);
		/* Only while both tick: the other's clock is then current
		 * (done is set before the idle that frees this CPU). */
		if ((r->mode == PLAIN || r->mode == FINER) &&
		    !__atomic_load_n(&r->done[!cpu], __ATOMIC_SEQ_CST))
			note_lead(r, cpu, fine ? &r->worst_fine :
						 &r->worst_lead);
	}
	__atomic_store_n(&r->done[cpu], 1, __ATOMIC_SEQ_CST);
	pace_idle(r->p, cpu);
	return NULL;
}

/* Runs CPUs 0 and 1 to the end; false if pacing could not be created. */
static bool run_pair(struct run *r, int mode)
{
	struct host_thread_group g;
	struct arg args[2] = {{r, 0}, {r, 1}};

	r->p = pace_create(2, QUANTUM, BLOCKED_NS);
	if (!r->p)
		return false;
	r->clock[0] = r->clock[1] = 0;
	r->worst_lead = r->worst_fine = 0;
	r->fine = 0;
	r->done[0] = r->done[1] = 0;
	r->mode = mode;
	pthread_barrier_init(&r->bar, NULL, 2);
	host_thread_group_start(&g, 2, cpu_thread, args, sizeof(args[0]));
	host_thread_group_join(&g);
	pthread_barrier_destroy(&r->bar);
	return true;
}

KTEST(pace, clocks_stay_within_a_quantum)
{
	struct run r;

	ASSERT_TRUE(run_pair(&r, PLAIN));
	/* A tick publishes after its step: a lead of quantum + a step. */
	EXPECT_LE(r.worst_lead, QUANTUM + FAST_STEP);
	EXPECT_GT(pace_waits(r.p), 0);
	EXPECT_EQ(pace_breaks(r.p), 0);
	EXPECT_TRUE(pace_on(r.p));
	pace_destroy(r.p);
}

/*
 * Halfway through, CPU 0 makes the quantum finer (invariant 8): from the
 * next tick on neither CPU is more than the new quantum ahead; asked
 * for a coarser one than pacing began with, it keeps that one; asked
 * for 0, it goes back to it.
 */
KTEST(pace, a_finer_quantum_holds_from_the_next_tick)
{
	struct run r;

	ASSERT_TRUE(run_pair(&r, FINER));
	EXPECT_LE(r.worst_lead, QUANTUM + FAST_STEP);
	EXPECT_GT(r.worst_lead, FINE_QUANTUM + FAST_STEP);
	EXPECT_LE(r.worst_fine, FINE_QUANTUM + FAST_STEP);
	EXPECT_EQ(pace_quantum(r.p), FINE_QUANTUM);
	pace_set_quantum(r.p, 10 * QUANTUM);
	EXPECT_EQ(pace_quantum(r.p), QUANTUM);
	pace_set_quantum(r.p, FINE_QUANTUM);
	pace_set_quantum(r.p, 0);
	EXPECT_EQ(pace_quantum(r.p), QUANTUM);
	EXPECT_EQ(pace_breaks(r.p), 0);
	pace_destroy(r.p);
}

/*
 * CPU 1 is slow in host time too: CPU 0 keeps reaching its limit. Had
 * it resumed as soon as it was back within the quantum, it would wait
 * again at nearly every tick of its own (about SLOW_STEP x TICKS /
 * FAST_STEP waits); resuming within quantum / PACE_RESUME_DIV, it runs
 * that far between two waits, while CPU 1 covers SLOW_STEP x TICKS.
 */
KTEST(pace, a_waiter_runs_part_of_a_quantum_before_it_waits_again)
{
	struct run r;
	uint64_t run_between = QUANTUM / PACE_RESUME_DIV;

	ASSERT_TRUE(run_pair(&r, SLOW_HOST));
	EXPECT_GT(pace_waits(r.p), 0);
	/* Either CPU runs at most SLOW_STEP x TICKS + QUANTUM while the
	 * other still ticks. */
	EXPECT_LE(pace_waits(r.p),
		  2 * ((SLOW_STEP * TICKS + QUANTUM) / run_between + 1));
	EXPECT_EQ(pace_breaks(r.p), 0);
	pace_destroy(r.p);
}

/* CPU 1 stands still in the middle of its run; what that must lead to. */
static const struct stand_still {
	int mode;
	bool breaks;	/* a pacing break is counted */
	bool stalls;	/* at least one host stall is counted */
	bool joins;	/* CPU 1's clock moved up on resume */
} stand_still_cases[] = {
	{HALT, false, false, true},	/* holds no one back, then joins */
	{SLEEP, true, false, false},	/* blocked outside guest code */
	{SPIN, false, true, false},	/* runnable, not run: waited for */
};

KTEST(pace, cpu_standing_still_halted_blocked_or_not_run)
{
	for (size_t i = 0; i < sizeof(stand_still_cases) /
			       sizeof(stand_still_cases[0]); i++) {
		const struct stand_still *c = &stand_still_cases[i];
		struct run r;

		ASSERT_TRUE(run_pair(&r, c->mode));
		EXPECT_EQ(pace_breaks(r.p) > 0, c->breaks);
		if (c->stalls)
			EXPECT_GE(pace_stalls(r.p), 1);
		if (c->joins)
			EXPECT_GT(pace_skip(r.p, 1), 0);
		pace_destroy(r.p);
	}
}

KTEST(pace, one_thread_for_two_cpus_turns_pacing_off)
{
	struct pace *p = pace_create(2, QUANTUM, BLOCKED_NS);

	ASSERT_TRUE(p != NULL);
	pace_tick(p, 0, 1);
	pace_tick(p, 1, 1);
	/* Far ahead of CPU 1: with pacing on this would wait for ever. */
	pace_tick(p, 0, 1000 * QUANTUM);
	EXPECT_FALSE(pace_on(p));
	pace_destroy(p);
}

KTEST(pace, bad_arguments_are_refused)
{
	EXPECT_TRUE(pace_create(0, QUANTUM, BLOCKED_NS) == NULL);
	EXPECT_TRUE(pace_create(65, QUANTUM, BLOCKED_NS) == NULL);
	EXPECT_TRUE(pace_create(2, 0, BLOCKED_NS) == NULL);
	EXPECT_TRUE(pace_create(2, QUANTUM, 0) == NULL);
}

/* A wake sent to a halted CPU: the sender cannot run more than a quantum
 * past the wake before the woken CPU runs, and the woken CPU's clock
 * joins the wake's clock, however late its host thread resumes. */
struct wake_run {
	struct pace *p;
	pthread_barrier_t bar;
	uint32_t resumed;	/* atomic */
	uint64_t before_resume;	/* atomic: CPU 0's clock while 1 slept */
	long latency_ns;	/* how late the host resumes CPU 1 */
	bool runnable;		/* CPU 1's thread spins meanwhile: woken,
				 * not yet run (not asleep) */
};

#define WAKE_AT 1000
#define WAKE_LATENCY_NS 3000000	/* 3 ms: the host wakes CPU 1 late */

static void *wake_sender(void *a)
{
	struct wake_run *w = a;
	uint64_t busy = WAKE_AT;

	pace_tick(w->p, 0, busy);
	pthread_barrier_wait(&w->bar);	/* CPU 1 is halted */
	pace_wake_sent(w->p, 0, busy, -1);
	for (unsigned i = 0; i < TICKS; i++) {
		busy += FAST_STEP;
		pace_tick(w->p, 0, busy);
		if (!__atomic_load_n(&w->resumed, __ATOMIC_SEQ_CST))
			__atomic_store_n(&w->before_resume, busy,
					 __ATOMIC_SEQ_CST);
	}
	pace_idle(w->p, 0);
	return NULL;
}

static void *wake_target(void *a)
{
	struct wake_run *w = a;
	struct timespec late = {0, w->latency_ns};
	uint64_t busy = 1;

	pace_tick(w->p, 1, busy);
	pace_idle(w->p, 1);
	pthread_barrier_wait(&w->bar);
	if (w->runnable) {
		int64_t until = now_ns() + w->latency_ns;

		while (now_ns() < until)
			;
	} else {
		nanosleep(&late, NULL);
	}
	__atomic_store_n(&w->resumed, 1, __ATOMIC_SEQ_CST);
	pace_resume(w->p, 1, busy);
	for (unsigned i = 0; i < TICKS; i++) {
		busy += SLOW_STEP;
		pace_tick(w->p, 1, busy);
	}
	pace_idle(w->p, 1);
	return NULL;
}

/* CPU 0 wakes the halted CPU 1 at WAKE_AT; the host resumes CPU 1
 * latency_ns later; the wake holds for blocked_ns. */
static struct pace *run_wake(struct wake_run *w, int64_t blocked_ns,
			     long latency_ns, bool runnable)
{
	struct host_thread_group a, b;

	memset(w, 0, sizeof(*w));
	w->latency_ns = latency_ns;
	w->runnable = runnable;
	w->p = pace_create(2, QUANTUM, blocked_ns);
	if (!w->p)
		return NULL;
	pthread_barrier_init(&w->bar, NULL, 2);
	host_thread_group_start(&b, 1, wake_target, w, 0);
	host_thread_group_start(&a, 1, wake_sender, w, 0);
	host_thread_group_join(&a);
	host_thread_group_join(&b);
	pthread_barrier_destroy(&w->bar);
	return w->p;
}

KTEST(pace, a_wake_arrives_at_the_senders_clock)
{
	struct wake_run w;

	/* blocked_ns far above the wake latency, even on a loaded host:
	 * the wake holds until CPU 1 runs */
	ASSERT_TRUE(run_wake(&w, 40 * BLOCKED_NS, WAKE_LATENCY_NS, false) != NULL);
	EXPECT_LE(w.before_resume, WAKE_AT + QUANTUM + FAST_STEP);
	/* joined at the wake (1 + skip == WAKE_AT), not CPU 0's clock */
	EXPECT_EQ(pace_skip(w.p, 1), WAKE_AT - 1);
	EXPECT_EQ(pace_breaks(w.p), 0);
	pace_destroy(w.p);
}

KTEST(pace, a_wake_that_let_go_does_not_pull_a_later_resume_back)
{
	struct wake_run w;

	/* CPU 1 resumes long after the wake let CPU 0 go: it joins CPU 0's
	 * clock, which ran far past the wake, not the wake's. */
	ASSERT_TRUE(run_wake(&w, BLOCKED_NS, 6 * BLOCKED_NS, false) != NULL);
	EXPECT_GT(w.before_resume, WAKE_AT + QUANTUM + FAST_STEP);
	EXPECT_GT(pace_skip(w.p, 1), WAKE_AT + QUANTUM);
	pace_destroy(w.p);
}

KTEST(pace, a_wake_holds_while_the_woken_thread_waits_to_run)
{
	struct wake_run w;

	/* The same lateness, but CPU 1's thread is runnable all along (the
	 * host has not run it yet): the wake holds on, counted as stalls,
	 * and CPU 1 joins the wake's clock. The hold is renewed by CPU 0's
	 * looks, so a CPU 0 that the host does not run for a whole
	 * blocked_ns lets it lapse: with 5 ms that happened in one run of
	 * six to ten on a 2-core host with CPU 1 spinning, hence 20 ms. */
	ASSERT_TRUE(run_wake(&w, 4 * BLOCKED_NS, 24 * BLOCKED_NS, true) !=
		    NULL);
	EXPECT_LE(w.before_resume, WAKE_AT + QUANTUM + FAST_STEP);
	EXPECT_EQ(pace_skip(w.p, 1), WAKE_AT - 1);
	EXPECT_GT(pace_stalls(w.p), 0);
	EXPECT_EQ(pace_breaks(w.p), 0);
	pace_destroy(w.p);
}

/* pace_order(): CPU 0 at ORDER_AT orders an action after CPU 1, which
 * ticks slowly up from 0 (or halts on the way). */
#define ORDER_AT 500
#define ORDER_SLOW_NS 20000	/* 20 us between CPU 1's ticks */

struct order_run {
	struct pace *p;
	uint64_t slow_clock;	/* atomic: CPU 1's clock, set before its tick */
	uint64_t seen;		/* CPU 1's clock when pace_order() returned */
	uint64_t halt_at;	/* CPU 1 halts there (0: never) */
	pthread_barrier_t bar;
};

static void *order_fast(void *a)
{
	struct order_run *o = a;

	pthread_barrier_wait(&o->bar);	/* both CPUs have ticked */
	pace_tick(o->p, 0, ORDER_AT);
	pace_order(o->p, 0, ORDER_AT);
	o->seen = __atomic_load_n(&o->slow_clock, __ATOMIC_SEQ_CST);
	pace_idle(o->p, 0);
	return NULL;
}

static void *order_slow(void *a)
{
	struct order_run *o = a;
	struct timespec gap = {0, ORDER_SLOW_NS};

	pace_tick(o->p, 1, 0);
	pthread_barrier_wait(&o->bar);
	for (uint64_t busy = SLOW_STEP; busy <= 2 * ORDER_AT;
	     busy += SLOW_STEP) {
		if (o->halt_at && busy >= o->halt_at) {
			pace_idle(o->p, 1);
			return NULL;
		}
		nanosleep(&gap, NULL);
		__atomic_store_n(&o->slow_clock, busy, __ATOMIC_SEQ_CST);
		pace_tick(o->p, 1, busy);
	}
	pace_idle(o->p, 1);
	return NULL;
}

static struct pace *run_order(struct order_run *o, uint64_t halt_at,
			      bool off)
{
	struct host_thread_group a, b;

	memset(o, 0, sizeof(*o));
	o->halt_at = halt_at;
	o->p = pace_create(2, QUANTUM, 40 * BLOCKED_NS);
	if (!o->p)
		return NULL;
	pace_set_order(o->p, !off);
	pthread_barrier_init(&o->bar, NULL, 2);
	/* CPU 0 ticks first at 0, as a CPU must tick before it is waited
	 * for */
	pace_tick(o->p, 0, 0);
	host_thread_group_start(&b, 1, order_slow, o, 0);
	host_thread_group_start(&a, 1, order_fast, o, 0);
	host_thread_group_join(&a);
	host_thread_group_join(&b);
	pthread_barrier_destroy(&o->bar);
	return o->p;
}

KTEST(pace, an_ordered_action_waits_for_every_cpu_to_reach_its_clock)
{
	struct order_run o;

	ASSERT_TRUE(run_order(&o, 0, false) != NULL);
	/* pace_tick() alone would have let CPU 0 go at ORDER_AT - QUANTUM */
	EXPECT_GE(o.seen, ORDER_AT);
	EXPECT_EQ(pace_order_waits(o.p), 1);
	EXPECT_EQ(pace_breaks(o.p), 0);
	pace_destroy(o.p);
}

KTEST(pace, a_halted_cpu_does_not_hold_an_ordered_action_back)
{
	struct order_run o;

	ASSERT_TRUE(run_order(&o, ORDER_AT / 2, false) != NULL);
	EXPECT_LT(o.seen, ORDER_AT);
	EXPECT_EQ(pace_breaks(o.p), 0);
	pace_destroy(o.p);
}


KTEST(pace, ordering_is_off_unless_asked_for)
{
	struct order_run o;

	/* CPU 1 stops below ORDER_AT (so a slow host cannot let it pass
	 * ORDER_AT before CPU 0 looks): only the count tells. */
	ASSERT_TRUE(run_order(&o, ORDER_AT - QUANTUM / 2, true) != NULL);
	EXPECT_LT(o.seen, ORDER_AT);
	EXPECT_EQ(pace_order_waits(o.p), 0);
	pace_destroy(o.p);
}
