/*
 * Host test of pause-wait (cachemodel/pace.c, cachemodel/pace.h invariant
 * 7), under ThreadSanitizer, with plain threads standing for QEMU's vCPU
 * threads and pace_poke() for the engine's invalidation of a polled line:
 *  - a pause-waiter woken by a write resumes at the write's clock, and a
 *    write that came before its pause resumes it at once at that clock;
 *  - with no write, it resumes at exactly its clock plus delta once the
 *    other CPU got there, and the other CPU ran no further than a
 *    quantum past that while it slept; delta doubles with each timeout,
 *    up to its most, and a write keeps it;
 *  - with no other CPU working (halted, or itself pause-waiting) it does
 *    not sleep and its clock does not move; a sleeper whose only working
 *    CPU halts resumes, its clock kept;
 *  - two CPUs pausing over and over while a third works and then halts
 *    all finish;
 *  - a poke racing with the start of a pause-wait is never lost (many
 *    rounds, each ending by the poke at once, never by the periodic look).
 */
// HOST_SRCS: cachemodel/pace.c
// HOST_SANITIZE: thread
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cachemodel/pace.h"
#include "lib/ktest.h"
#include "tests/host/host_shim.h"
#include "tests/host/host_thread_group.h"

#define QUANTUM 100
#define DELTA (PACE_PAUSE_QUANTA * QUANTUM)
#define STEP 7			/* the working CPU's cycles per tick */
#define BLOCKED_NS 20000000ll	/* 20 ms: looks every 2 ms */
/* The lost-wake-up test looks only every 1 s: a lost poke costs that. */
#define SLOW_LOOK_BLOCKED_NS (10ll * NS_PER_SEC)
#define NS_PER_SEC 1000000000ll
#define SPIN_AT 1000		/* the pause-waiter's clock */
#define WRITE_AT 1050		/* the write's clock: within delta */
#define WORK_UNTIL 5000		/* the working CPU's last clock */
#define WATCHDOG_S 60		/* a deadlock ends the test, failed */

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * NS_PER_SEC + t.tv_nsec;
}

static uint64_t ends(struct pace *p, enum pace_pw_end e)
{
	return pace_pw_count(p, e);
}

/* cpu0(arg) and cpu1(arg), each on its own thread, to the end. */
static void run_two(void *(*cpu0)(void *), void *(*cpu1)(void *), void *arg)
{
	struct host_thread_group a, b;

	host_thread_group_start(&a, 1, cpu0, arg, 0);
	host_thread_group_start(&b, 1, cpu1, arg, 0);
	host_thread_group_join(&a);
	host_thread_group_join(&b);
}

/* run_two() with bar, a barrier for the two threads, set up around it. */
static void run_two_met(void *(*cpu0)(void *), void *(*cpu1)(void *),
			void *arg, pthread_barrier_t *bar)
{
	pthread_barrier_init(bar, NULL, 2);
	run_two(cpu0, cpu1, arg);
	pthread_barrier_destroy(bar);
}

/* A deadlock would hang the test: end it, failed, after WATCHDOG_S. */
static void *watchdog(void *a)
{
	(void)a;
	sleep(WATCHDOG_S);
	fprintf(stderr, "test_pace_pause: no progress in %d s: deadlock\n",
		WATCHDOG_S);
	_exit(1);
	return NULL;
}

static void start_watchdog(void)
{
	static pthread_t t;

	if (!t)
		pthread_create(&t, NULL, watchdog, NULL);
}

/* CPU 1 pauses at SPIN_AT while CPU 0 works from 0 to WORK_UNTIL and,
 * if poke_at is not 0, invalidates CPU 1's line at clock poke_at. */
struct spin_run {
	struct pace *p;
	uint64_t poke_at;
	bool poke_first;	/* poke before CPU 1 pauses */
	uint64_t moved;		/* pace_pause()'s result */
	uint32_t paused;	/* atomic: CPU 1 is in or past its pause */
	uint32_t resumed;	/* atomic */
	uint64_t worker_max;	/* atomic: CPU 0's clock while 1 slept */
	pthread_barrier_t bar;
};

static void *worker(void *a)
{
	struct spin_run *r = a;
	uint64_t busy = 0;

	pace_tick(r->p, 0, busy);
	pthread_barrier_wait(&r->bar);
	while (busy < WORK_UNTIL) {
		busy += STEP;
		if (r->poke_at && busy >= r->poke_at &&
		    busy - STEP < r->poke_at) {
			/* Poke the sleeper (or, first, the one about to
			 * pause): the two paths of invariant 7, a. */
			while (!r->poke_first &&
			       !pace_pause_waiting(r->p, 1))
				sched_yield();
			pace_poke(r->p, 1, busy);
			if (r->poke_first)
				pthread_barrier_wait(&r->bar);
		}
		pace_tick(r->p, 0, busy);
		if (__atomic_load_n(&r->paused, __ATOMIC_SEQ_CST) &&
		    !__atomic_load_n(&r->resumed, __ATOMIC_SEQ_CST))
			__atomic_store_n(&r->worker_max, busy,
					 __ATOMIC_SEQ_CST);
	}
	pace_idle(r->p, 0);
	return NULL;
}

static void *spinner(void *a)
{
	struct spin_run *r = a;

	pace_tick(r->p, 1, 1);
	pthread_barrier_wait(&r->bar);
	pace_tick(r->p, 1, SPIN_AT);
	if (r->poke_first)
		pthread_barrier_wait(&r->bar);	/* the worker has poked */
	__atomic_store_n(&r->paused, 1, __ATOMIC_SEQ_CST);
	r->moved = pace_pause(r->p, 1, SPIN_AT);
	__atomic_store_n(&r->resumed, 1, __ATOMIC_SEQ_CST);
	pace_tick(r->p, 1, SPIN_AT + 1);
	pace_idle(r->p, 1);
	return NULL;
}

static struct pace *run_spin(struct spin_run *r, uint64_t poke_at,
			     bool poke_first)
{
	memset(r, 0, sizeof(*r));
	r->poke_at = poke_at;
	r->poke_first = poke_first;
	r->p = pace_create(2, QUANTUM, BLOCKED_NS);
	if (!r->p)
		return NULL;
	run_two_met(worker, spinner, r, &r->bar);
	return r->p;
}

KTEST(pace_pause, a_write_wakes_it_at_the_writes_clock)
{
	struct spin_run r;
	/* The first tick at or past WRITE_AT is the poke's clock. */
	uint64_t t = (WRITE_AT + STEP - 1) / STEP * STEP;

	start_watchdog();
	ASSERT_TRUE(run_spin(&r, WRITE_AT, false) != NULL);
	EXPECT_EQ(r.moved, t - SPIN_AT);
	EXPECT_EQ(pace_skip(r.p, 1), t - SPIN_AT);
	EXPECT_EQ(ends(r.p, PACE_PW_WRITE), 1);
	EXPECT_EQ(ends(r.p, PACE_PW_TIMEOUT), 0);
	EXPECT_EQ(pace_pw_skipped(r.p), t - SPIN_AT);
	pace_destroy(r.p);
}

KTEST(pace_pause, a_write_before_the_pause_resumes_it_at_once)
{
	struct spin_run r;
	uint64_t t = (WRITE_AT + STEP - 1) / STEP * STEP;

	/* The worker pokes, then the spinner pauses: it must not sleep
	 * until the timeout, and resumes at the write's clock. */
	ASSERT_TRUE(run_spin(&r, WRITE_AT, true) != NULL);
	EXPECT_EQ(r.moved, t - SPIN_AT);
	EXPECT_EQ(ends(r.p, PACE_PW_WRITE), 1);
	pace_destroy(r.p);
}

KTEST(pace_pause, the_timeout_moves_the_clock_by_exactly_delta)
{
	struct spin_run r;

	ASSERT_TRUE(run_spin(&r, 0, false) != NULL);
	EXPECT_EQ(r.moved, DELTA);
	EXPECT_EQ(pace_skip(r.p, 1), DELTA);
	EXPECT_EQ(ends(r.p, PACE_PW_TIMEOUT), 1);
	EXPECT_EQ(ends(r.p, PACE_PW_WRITE), 0);
	/* Asleep, it held the worker within a quantum past its deadline
	 * (a tick publishes after its step). */
	EXPECT_LE(r.worker_max, SPIN_AT + DELTA + QUANTUM + STEP);
	pace_destroy(r.p);
}

/* CPU 1 pause-waits BACKOFF_WAITS times in a row while CPU 0 works, and
 * is poked once, during the pause-wait numbered BACKOFF_POKE_AT: the
 * clock each wait moved CPU 1 by. */
#define BACKOFF_WAITS 8
#define BACKOFF_POKE_AT 5

struct backoff {
	struct pace *p;
	uint64_t moved[BACKOFF_WAITS];
	uint32_t waits;		/* atomic: pause-waits CPU 1 began */
	uint32_t done;		/* atomic: CPU 1 finished */
	pthread_barrier_t bar;
};

static void *backoff_worker(void *a)
{
	struct backoff *b = a;
	uint64_t busy = 0;
	bool poked = false;

	pace_tick(b->p, 0, busy);
	pthread_barrier_wait(&b->bar);
	while (!__atomic_load_n(&b->done, __ATOMIC_SEQ_CST)) {
		busy += STEP;
		if (!poked && pace_pause_waiting(b->p, 1) &&
		    __atomic_load_n(&b->waits, __ATOMIC_SEQ_CST) ==
			    BACKOFF_POKE_AT + 1) {
			pace_poke(b->p, 1, busy);
			poked = true;
		}
		pace_tick(b->p, 0, busy);
	}
	pace_idle(b->p, 0);
	return NULL;
}

static void *backoff_waiter(void *a)
{
	struct backoff *b = a;
	uint64_t busy = SPIN_AT;

	pace_tick(b->p, 1, 1);
	pthread_barrier_wait(&b->bar);
	pace_tick(b->p, 1, busy);
	for (unsigned i = 0; i < BACKOFF_WAITS; i++) {
		__atomic_store_n(&b->waits, i + 1, __ATOMIC_SEQ_CST);
		b->moved[i] = pace_pause(b->p, 1, busy);
		busy += 1;	/* one turn of its loop */
		pace_tick(b->p, 1, busy);
	}
	__atomic_store_n(&b->done, 1, __ATOMIC_SEQ_CST);
	pace_idle(b->p, 1);
	return NULL;
}

KTEST(pace_pause, timeouts_double_delta_and_a_write_keeps_it)
{
	struct backoff b;
	uint64_t q = PACE_PAUSE_QUANTA;

	start_watchdog();
	memset(&b, 0, sizeof(b));
	b.p = pace_create(2, QUANTUM, BLOCKED_NS);
	ASSERT_TRUE(b.p != NULL);
	run_two_met(backoff_worker, backoff_waiter, &b, &b.bar);
	for (unsigned i = 0; i < BACKOFF_WAITS; i++) {
		if (i == BACKOFF_POKE_AT) {
			/* Poked: resumed at the write, within its delta. */
			EXPECT_LE(b.moved[i], q * QUANTUM);
			continue;
		}
		EXPECT_EQ(b.moved[i], q * QUANTUM);
		q = 2 * q <= PACE_PAUSE_MAX_QUANTA ? 2 * q
						   : PACE_PAUSE_MAX_QUANTA;
	}
	/* The waits before the poke reached the most, and stayed there. */
	EXPECT_EQ(b.moved[BACKOFF_POKE_AT - 1],
		  (uint64_t)PACE_PAUSE_MAX_QUANTA * QUANTUM);
	EXPECT_EQ(pace_pw_count(b.p, PACE_PW_WRITE), 1);
	EXPECT_EQ(pace_pw_count(b.p, PACE_PW_TIMEOUT), BACKOFF_WAITS - 1);
	pace_destroy(b.p);
}

static void *tick_then_halt(void *a)
{
	struct pace *p = a;

	pace_tick(p, 1, 1);
	pace_idle(p, 1);
	return NULL;
}

KTEST(pace_pause, no_sleep_without_another_working_cpu)
{
	struct pace *p = pace_create(2, QUANTUM, BLOCKED_NS);
	struct host_thread_group g;

	ASSERT_TRUE(p != NULL);
	host_thread_group_start(&g, 1, tick_then_halt, p, 0);
	host_thread_group_join(&g);
	/* CPU 1 is halted: CPU 0's pause returns at once, clock kept. */
	pace_tick(p, 0, SPIN_AT);
	EXPECT_EQ(pace_pause(p, 0, SPIN_AT), 0);
	EXPECT_EQ(ends(p, PACE_PW_NONE), 1);
	EXPECT_EQ(pace_skip(p, 0), 0);
	pace_destroy(p);
}

static void *pause_then_halt(void *a)
{
	struct spin_run *r = a;

	pace_tick(r->p, 1, SPIN_AT);
	__atomic_store_n(&r->paused, 1, __ATOMIC_SEQ_CST);
	r->moved = pace_pause(r->p, 1, SPIN_AT);
	pace_idle(r->p, 1);
	return NULL;
}

KTEST(pace_pause, no_sleep_while_the_other_cpu_pause_waits)
{
	struct spin_run r;
	struct host_thread_group g;

	memset(&r, 0, sizeof(r));
	r.p = pace_create(2, QUANTUM, BLOCKED_NS);
	ASSERT_TRUE(r.p != NULL);
	pace_tick(r.p, 0, SPIN_AT);
	host_thread_group_start(&g, 1, pause_then_halt, &r, 0);
	/* CPU 1 sleeps in its pause-wait: CPU 0 works. */
	while (!pace_pause_waiting(r.p, 1))
		sched_yield();
	/* Now nobody works but CPU 0: its pause must not sleep. */
	EXPECT_EQ(pace_pause(r.p, 0, SPIN_AT), 0);
	EXPECT_EQ(ends(r.p, PACE_PW_NONE), 1);
	/* CPU 0 halts: CPU 1 is alone and resumes, its clock kept. On a
	 * loaded host one of its looks may first find CPU 0's thread off a
	 * host CPU (asleep on the pacing lock) and give up (invariant 7,
	 * d): the same resume at the same clock. */
	pace_idle(r.p, 0);
	host_thread_group_join(&g);
	EXPECT_EQ(r.moved, 0);
	EXPECT_EQ(ends(r.p, PACE_PW_ALONE) + ends(r.p, PACE_PW_GAVE_UP), 1);
	pace_destroy(r.p);
}

/* Three CPUs: 0 and 1 tick and pause ROUNDS times each; 2 works for a
 * while, then halts for good. */
#define ROUNDS 3000
#define WORKER_TICKS 2000

struct trio {
	struct pace *p;
	pthread_barrier_t bar;
};

struct trio_arg {
	struct trio *t;
	unsigned cpu;
};

static void *trio_cpu(void *a)
{
	struct trio_arg *arg = a;
	struct pace *p = arg->t->p;
	unsigned cpu = arg->cpu;
	uint64_t busy = 1;

	pace_tick(p, cpu, busy);
	pthread_barrier_wait(&arg->t->bar);
	if (cpu == 2) {
		for (unsigned i = 0; i < WORKER_TICKS; i++) {
			busy += STEP;
			pace_tick(p, cpu, busy);
		}
		pace_idle(p, cpu);
		return NULL;
	}
	for (unsigned i = 0; i < ROUNDS; i++) {
		busy += 1 + cpu;
		pace_tick(p, cpu, busy);
		pace_pause(p, cpu, busy);
	}
	pace_idle(p, cpu);
	return NULL;
}

KTEST(pace_pause, two_waiters_and_a_halting_cpu_do_not_deadlock)
{
	struct trio t;
	struct trio_arg args[3] = {{&t, 0}, {&t, 1}, {&t, 2}};
	struct host_thread_group g;
	uint64_t all = 0;

	start_watchdog();
	t.p = pace_create(3, QUANTUM, BLOCKED_NS);
	ASSERT_TRUE(t.p != NULL);
	pthread_barrier_init(&t.bar, NULL, 3);
	host_thread_group_start(&g, 3, trio_cpu, args, sizeof(args[0]));
	host_thread_group_join(&g);	/* the watchdog ends a deadlock */
	pthread_barrier_destroy(&t.bar);
	for (int e = 0; e < PACE_PW_ENDS; e++)
		all += ends(t.p, e);
	EXPECT_EQ(all, 2 * ROUNDS);
	/* Some pauses slept (timeouts while CPU 2 worked); after its halt
	 * the two waiters never both sleep. */
	EXPECT_GT(ends(t.p, PACE_PW_TIMEOUT), 0);
	EXPECT_EQ(pace_breaks(t.p), 0);
	pace_destroy(t.p);
}

/* Many rounds of a poke racing with the start of a pause-wait: CPU 1
 * announces its round, then pauses; CPU 0 pokes as soon as it sees the
 * round. The clocks never reach a deadline, so only the poke ends a
 * round; a poke lost between the waiter's look and its sleep would leave
 * it asleep until its next periodic look, a second later. */
#define RACE_ROUNDS 2000
#define RACE_CLOCK 100
#define LOST_NS (NS_PER_SEC / 2)
#define RACE_JITTER_NS 40000	/* 0 to 40 us before each poke */
#define RACE_JITTER_PRIME 7919u

struct race {
	struct pace *p;
	uint32_t round;		/* atomic: CPU 1 is in this round (from 1) */
	uint32_t done;		/* atomic: CPU 1 finished this round */
	uint32_t lost;		/* atomic: a round took LOST_NS: stop */
	int64_t worst_ns;	/* CPU 1's longest round */
	pthread_barrier_t bar;
};

static void *race_poker(void *a)
{
	struct race *r = a;

	pace_tick(r->p, 0, RACE_CLOCK);
	pthread_barrier_wait(&r->bar);
	for (uint32_t i = 1; i <= RACE_ROUNDS; i++) {
		int64_t until;

		while (__atomic_load_n(&r->round, __ATOMIC_SEQ_CST) != i)
			sched_yield();
		/* A varying delay, so that the pokes land at every point
		 * of the waiter's way into its sleep. */
		until = now_ns() + (int64_t)(i * RACE_JITTER_PRIME %
					     RACE_JITTER_NS);
		while (now_ns() < until)
			;
		pace_poke(r->p, 1, RACE_CLOCK);
		while (__atomic_load_n(&r->done, __ATOMIC_SEQ_CST) != i)
			sched_yield();
		if (__atomic_load_n(&r->lost, __ATOMIC_SEQ_CST))
			break;
	}
	pace_idle(r->p, 0);
	return NULL;
}

static void *race_waiter(void *a)
{
	struct race *r = a;

	pace_tick(r->p, 1, RACE_CLOCK);
	pthread_barrier_wait(&r->bar);
	for (uint32_t i = 1; i <= RACE_ROUNDS; i++) {
		int64_t t0 = now_ns(), dt;

		__atomic_store_n(&r->round, i, __ATOMIC_SEQ_CST);
		pace_pause(r->p, 1, RACE_CLOCK);
		dt = now_ns() - t0;
		if (dt > r->worst_ns)
			r->worst_ns = dt;
		if (dt >= LOST_NS)
			__atomic_store_n(&r->lost, 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&r->done, i, __ATOMIC_SEQ_CST);
		if (dt >= LOST_NS)
			break;
	}
	pace_idle(r->p, 1);
	return NULL;
}

KTEST(pace_pause, a_racing_poke_is_never_lost)
{
	struct race r;

	start_watchdog();
	memset(&r, 0, sizeof(r));
	r.p = pace_create(2, QUANTUM, SLOW_LOOK_BLOCKED_NS);
	ASSERT_TRUE(r.p != NULL);
	run_two_met(race_poker, race_waiter, &r, &r.bar);
	EXPECT_LT(r.worst_ns, LOST_NS);
	EXPECT_EQ(ends(r.p, PACE_PW_WRITE), RACE_ROUNDS);
	EXPECT_EQ(pace_skip(r.p, 1), 0);
	pace_destroy(r.p);
}
