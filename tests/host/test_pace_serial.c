/*
 * Host test of serial pacing (cachemodel/pace.h, invariant 9), of wakes
 * with a named target (invariant 6) and of pace_align(), under
 * ThreadSanitizer, with plain threads standing for QEMU's vCPU threads:
 *  - with serial pacing on, one CPU at a time runs between its ticks,
 *    and none is more than a quantum ahead of the slowest;
 *  - the order in which the CPUs take turns follows their clocks only:
 *    two runs, one with the host threads slowed at random, hand the turn
 *    over in the same sequence;
 *  - a pause-waiter resumes in its turn, at the clock of the write that
 *    poked it, and the order stays the host's no more;
 *  - a wake named for one halted CPU does not hold the sender back for
 *    another halted CPU; an unnamed one holds it for every halted CPU
 *    until its time runs out;
 *  - the sender of a named wake runs on to the write that sends it,
 *    however far past a quantum that takes it, and the woken CPU joins
 *    at the wake's clock, serial or not;
 *  - pace_align() moves a CPU's clock to a round value only while every
 *    other CPU is halted.
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

#define NCPUS 3
#define QUANTUM 100
#define TICKS 4000
#define MAX_STEP 37		/* a tick's cycles: 1..MAX_STEP */
#define BLOCKED_NS 5000000ll	/* 5 ms */
#define HANDOVERS_MAX (NCPUS * TICKS)
#define JITTER_NS 20000ll	/* a slowed run's host delay, at most */
#define NS_PER_SEC 1000000000ll

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * NS_PER_SEC + t.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
	struct timespec t = {ns / NS_PER_SEC, ns % NS_PER_SEC};

	nanosleep(&t, NULL);
}

/* Every CPU is known (runnable at clock 0) before serial pacing starts,
 * so the first turn is CPU 0's in every run: each thread calls this
 * first; the barrier is for all of them. */
static void join_then_serial(struct pace *p, unsigned cpu,
			     pthread_barrier_t *bar)
{
	pace_tick(p, cpu, 0);
	pthread_barrier_wait(bar);
	if (cpu == 0)
		pace_set_serial(p, true);
	pthread_barrier_wait(bar);
}

/* A CPU's cycles per tick: a fixed sequence of its own (an LCG). */
static unsigned next_step(uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return 1 + (*seed >> 16) % MAX_STEP;
}

struct serial_run {
	struct pace *p;
	uint32_t inside;	/* atomic: CPUs between a tick and the next */
	uint32_t worst_inside;	/* atomic */
	uint64_t clock[NCPUS];	/* atomic */
	uint64_t worst_lead;	/* atomic */
	uint32_t done[NCPUS];	/* atomic */
	bool jitter;		/* slow the host threads at random */
	pthread_mutex_t log_lock;
	unsigned last;		/* the CPU that ran last (log_lock) */
	unsigned n;		/* handovers logged (log_lock) */
	uint8_t who[HANDOVERS_MAX];	/* each turn's CPU (log_lock) */
	uint64_t at[HANDOVERS_MAX];	/* its clock then (log_lock) */
	pthread_barrier_t bar;
};

struct serial_arg {
	struct serial_run *r;
	unsigned cpu;
};

static void note_turn(struct serial_run *r, unsigned cpu, uint64_t clock)
{
	pthread_mutex_lock(&r->log_lock);
	if (r->n == 0 || r->last != cpu) {
		if (r->n < HANDOVERS_MAX) {
			r->who[r->n] = (uint8_t)cpu;
			r->at[r->n] = clock;
		}
		r->n++;
		r->last = cpu;
	}
	pthread_mutex_unlock(&r->log_lock);
}

/* Lead of cpu over the slowest other CPU still ticking. */
static void note_lead(struct serial_run *r, unsigned cpu)
{
	uint64_t mine = __atomic_load_n(&r->clock[cpu], __ATOMIC_SEQ_CST);
	uint64_t min = UINT64_MAX;

	for (unsigned c = 0; c < NCPUS; c++)
		if (c != cpu && !__atomic_load_n(&r->done[c], __ATOMIC_SEQ_CST)
		    && __atomic_load_n(&r->clock[c], __ATOMIC_SEQ_CST) < min)
			min = __atomic_load_n(&r->clock[c], __ATOMIC_SEQ_CST);
	if (min != UINT64_MAX && mine > min) {
		uint64_t lead = mine - min, w;

		w = __atomic_load_n(&r->worst_lead, __ATOMIC_SEQ_CST);
		while (lead > w &&
		       !__atomic_compare_exchange_n(&r->worst_lead, &w, lead,
						    false, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST))
			;
	}
}

static void *serial_cpu(void *a)
{
	struct serial_arg *arg = a;
	struct serial_run *r = arg->r;
	unsigned cpu = arg->cpu;
	uint32_t seed = 1 + cpu, jitter_seed = 77 + cpu * (uint32_t)now_ns();
	uint64_t busy = 0;

	join_then_serial(r->p, cpu, &r->bar);
	for (unsigned i = 0; i < TICKS; i++) {
		uint32_t in;

		busy += next_step(&seed);
		pace_tick(r->p, cpu, busy);
		/* Its turn, until its next tick. */
		in = __atomic_add_fetch(&r->inside, 1, __ATOMIC_SEQ_CST);
		if (in > __atomic_load_n(&r->worst_inside, __ATOMIC_SEQ_CST))
			__atomic_store_n(&r->worst_inside, in,
					 __ATOMIC_SEQ_CST);
		__atomic_store_n(&r->clock[cpu], busy + pace_skip(r->p, cpu),
				 __ATOMIC_SEQ_CST);
		note_lead(r, cpu);
		note_turn(r, cpu, busy + pace_skip(r->p, cpu));
		if (r->jitter && next_step(&jitter_seed) % 8 == 0)
			sleep_ns(next_step(&jitter_seed) * JITTER_NS /
				 MAX_STEP);
		__atomic_sub_fetch(&r->inside, 1, __ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&r->done[cpu], 1, __ATOMIC_SEQ_CST);
	pace_idle(r->p, cpu);
	return NULL;
}

static struct serial_run *run_serial(bool jitter)
{
	static struct serial_run runs[2];
	struct serial_run *r = &runs[jitter];
	struct serial_arg args[NCPUS];
	struct host_thread_group g;

	memset(r, 0, sizeof(*r));
	r->jitter = jitter;
	r->p = pace_create(NCPUS, QUANTUM, BLOCKED_NS);
	if (!r->p)
		return NULL;
	pthread_mutex_init(&r->log_lock, NULL);
	pthread_barrier_init(&r->bar, NULL, NCPUS);
	for (unsigned c = 0; c < NCPUS; c++)
		args[c] = (struct serial_arg){r, c};
	host_thread_group_start(&g, NCPUS, serial_cpu, args, sizeof(args[0]));
	host_thread_group_join(&g);
	pthread_barrier_destroy(&r->bar);
	pthread_mutex_destroy(&r->log_lock);
	return r;
}

KTEST(pace_serial, one_cpu_runs_at_a_time_within_a_quantum)
{
	struct serial_run *r = run_serial(false);

	ASSERT_TRUE(r != NULL);
	EXPECT_TRUE(pace_serial(r->p));
	EXPECT_EQ(r->worst_inside, 1);
	/* A tick publishes after its step: a quantum and a step at most. */
	EXPECT_LE(r->worst_lead, QUANTUM + MAX_STEP);
	EXPECT_GT(r->n, TICKS / 10);	/* they took turns, many times */
	EXPECT_GT(pace_turn_waits(r->p), 0);
	EXPECT_EQ(pace_breaks(r->p), 0);
	pace_destroy(r->p);
}

KTEST(pace_serial, turns_follow_the_clocks_not_the_host)
{
	struct serial_run *plain = run_serial(false);
	struct serial_run *slowed = run_serial(true);
	unsigned n, first_diff;

	ASSERT_TRUE(plain != NULL && slowed != NULL);
	ASSERT_TRUE(plain->n <= HANDOVERS_MAX);
	EXPECT_EQ(plain->n, slowed->n);
	n = plain->n < slowed->n ? plain->n : slowed->n;
	first_diff = n;
	for (unsigned i = 0; i < n && first_diff == n; i++)
		if (plain->who[i] != slowed->who[i] ||
		    plain->at[i] != slowed->at[i])
			first_diff = i;
	EXPECT_EQ(first_diff, n);
	EXPECT_EQ(slowed->worst_inside, 1);
	pace_destroy(plain->p);
	pace_destroy(slowed->p);
}

/*
 * Pause-wait under serial pacing: CPU 1 polls (pauses) until CPU 0,
 * working, pokes it at its clock POKE_AT; CPU 1 then resumes at that
 * clock, and only in its turn: CPU 0, which ran on, is by then past the
 * poke by no more than a quantum.
 */
#define POKE_AT 400	/* before the first pause-wait times out */
#define POLL_STEP 5

struct poll_run {
	struct pace *p;
	uint64_t poked_at;	/* atomic: CPU 0's clock at the poke */
	uint64_t cpu0_clock;	/* atomic: CPU 0's clock after each tick */
	uint64_t resumed_at;	/* CPU 1's clock after its pause-wait */
	uint64_t cpu0_at_resume;	/* CPU 0's clock then */
	uint32_t polling_done;	/* atomic */
	pthread_barrier_t bar;
};

static void poll_worker(struct poll_run *r)
{
	uint64_t busy = 0;
	bool poked = false;

	while (!__atomic_load_n(&r->polling_done, __ATOMIC_SEQ_CST)) {
		busy += POLL_STEP;
		pace_tick(r->p, 0, busy);
		__atomic_store_n(&r->cpu0_clock, busy + pace_skip(r->p, 0),
				 __ATOMIC_SEQ_CST);
		if (!poked && busy >= POKE_AT) {
			__atomic_store_n(&r->poked_at, busy, __ATOMIC_SEQ_CST);
			pace_poke(r->p, 1, busy);
			poked = true;
		}
	}
}

static void poll_waiter(struct poll_run *r)
{
	uint64_t busy = 0, moved = 0;

	while (!moved) {
		busy += POLL_STEP;
		pace_tick(r->p, 1, busy);
		moved = pace_pause(r->p, 1, busy);
	}
	r->resumed_at = busy + pace_skip(r->p, 1);
	r->cpu0_at_resume = __atomic_load_n(&r->cpu0_clock, __ATOMIC_SEQ_CST);
	__atomic_store_n(&r->polling_done, 1, __ATOMIC_SEQ_CST);
}

struct poll_arg {
	struct poll_run *r;
	unsigned cpu;
};

static void *poll_cpu(void *a)
{
	struct poll_arg *arg = a;
	struct poll_run *r = arg->r;

	join_then_serial(r->p, arg->cpu, &r->bar);
	if (arg->cpu == 0)
		poll_worker(r);
	else
		poll_waiter(r);
	pace_idle(r->p, arg->cpu);
	return NULL;
}

KTEST(pace_serial, a_poked_poller_resumes_at_the_write_in_its_turn)
{
	struct poll_run r;
	struct poll_arg args[2] = {{&r, 0}, {&r, 1}};
	struct host_thread_group g;

	memset(&r, 0, sizeof(r));
	r.p = pace_create(2, QUANTUM, BLOCKED_NS);
	ASSERT_TRUE(r.p != NULL);
	pthread_barrier_init(&r.bar, NULL, 2);
	host_thread_group_start(&g, 2, poll_cpu, args, sizeof(args[0]));
	host_thread_group_join(&g);
	EXPECT_EQ(r.resumed_at, r.poked_at);
	EXPECT_GE(r.cpu0_at_resume, r.poked_at);
	EXPECT_LE(r.cpu0_at_resume, r.poked_at + QUANTUM + POLL_STEP);
	EXPECT_GT(pace_pw_count(r.p, PACE_PW_WRITE), 0);
	EXPECT_EQ(pace_breaks(r.p), 0);
	pthread_barrier_destroy(&r.bar);
	pace_destroy(r.p);
}

/*
 * Four CPUs poll and write, serially paced: each ticks, now and then
 * pause-waits (a poll) and now and then pokes another at its own clock
 * (a write the other watches). A poller waiting for its turn after its
 * wait ended may be poked again, at a lower clock, by a CPU that ran
 * after the first poker; it must then wait at that lower clock, where
 * the others count it, or each side waits for the other until the
 * pacing breaks (a 4-CPU tbench with two pairs broke so). No break,
 * and every CPU gets through (the test before the fix: 13 to 17 breaks
 * a run).
 */
#define POKE_CPUS 4
#define POKE_TICKS 3000
#define POKE_PAUSE_ONE_IN 4
#define POKE_POKE_ONE_IN 3

struct poke_run {
	struct pace *p;
	pthread_barrier_t bar;
	uint32_t finished;	/* atomic */
};

struct poke_arg {
	struct poke_run *r;
	unsigned cpu;
};

static void *poke_cpu(void *a)
{
	struct poke_arg *arg = a;
	struct poke_run *r = arg->r;
	unsigned cpu = arg->cpu;
	uint32_t seed = 11 + 7 * cpu;
	uint64_t busy = 0;

	join_then_serial(r->p, cpu, &r->bar);
	for (unsigned i = 0; i < POKE_TICKS; i++) {
		busy += next_step(&seed);
		pace_tick(r->p, cpu, busy);
		if (next_step(&seed) % POKE_POKE_ONE_IN == 0)
			pace_poke(r->p, (cpu + 1 + next_step(&seed) %
						   (POKE_CPUS - 1)) % POKE_CPUS,
				  busy + pace_skip(r->p, cpu));
		if (next_step(&seed) % POKE_PAUSE_ONE_IN == 0)
			pace_pause(r->p, cpu, busy);
	}
	__atomic_add_fetch(&r->finished, 1, __ATOMIC_SEQ_CST);
	pace_idle(r->p, cpu);
	return NULL;
}

KTEST(pace_serial, a_poke_while_waiting_for_the_turn_brings_the_turn_forward)
{
	struct poke_run r;
	struct poke_arg args[POKE_CPUS];
	struct host_thread_group g;

	memset(&r, 0, sizeof(r));
	r.p = pace_create(POKE_CPUS, QUANTUM, BLOCKED_NS);
	ASSERT_TRUE(r.p != NULL);
	pthread_barrier_init(&r.bar, NULL, POKE_CPUS);
	for (unsigned c = 0; c < POKE_CPUS; c++)
		args[c] = (struct poke_arg){&r, c};
	host_thread_group_start(&g, POKE_CPUS, poke_cpu, args,
				sizeof(args[0]));
	host_thread_group_join(&g);
	EXPECT_EQ(r.finished, POKE_CPUS);
	EXPECT_GT(pace_pw_count(r.p, PACE_PW_WRITE), 0);
	EXPECT_EQ(pace_breaks(r.p), 0);
	pthread_barrier_destroy(&r.bar);
	pace_destroy(r.p);
}

/*
 * Three CPUs: 0 runs, 1 and 2 are halted. CPU 0 sends a wake at
 * WAKE_AT; CPU 1 resumes WAKE_DELAY_NS of host time after that; CPU 2
 * never does. With the wake named for CPU 1, CPU 0 runs to its end as soon as
 * CPU 1 runs; unnamed, CPU 2 holds it too, until the wake's time runs
 * out (LONG_BLOCKED_NS, the test's measure).
 */
#define WAKE_AT 1000
#define WAKE_TICKS 2000
#define WAKE_DELAY_NS 2000000ll		/* 2 ms */
#define LONG_BLOCKED_NS 400000000ll	/* 400 ms */

struct wake_run {
	struct pace *p;
	int target;		/* pace_wake_sent()'s */
	uint32_t numbered;	/* atomic: CPU numbers handed out */
	uint32_t halted;	/* atomic: CPUs 1 and 2 have halted */
	uint32_t sent;		/* atomic: the wake is sent */
	int64_t sender_ns;	/* host time CPU 0 took from the wake on */
};

static void *wake_sender(void *a)
{
	struct wake_run *w = a;
	uint64_t busy = WAKE_AT;
	int64_t t0;

	pace_tick(w->p, 0, busy);
	while (__atomic_load_n(&w->halted, __ATOMIC_SEQ_CST) < 2)
		sleep_ns(100000);
	t0 = now_ns();
	pace_wake_sent(w->p, 0, busy, w->target);
	__atomic_store_n(&w->sent, 1, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < WAKE_TICKS; i++) {
		busy += POLL_STEP;
		pace_tick(w->p, 0, busy);
	}
	w->sender_ns = now_ns() - t0;
	pace_idle(w->p, 0);
	return NULL;
}

static void *wake_halted(void *a)
{
	struct wake_run *w = a;
	unsigned cpu = __atomic_add_fetch(&w->numbered, 1, __ATOMIC_SEQ_CST);

	pace_tick(w->p, cpu, 0);
	pace_idle(w->p, cpu);
	__atomic_add_fetch(&w->halted, 1, __ATOMIC_SEQ_CST);
	if (cpu == 1) {
		uint64_t busy = 0;

		/* The host runs the woken CPU late, as QEMU may. */
		while (!__atomic_load_n(&w->sent, __ATOMIC_SEQ_CST))
			sleep_ns(WAKE_DELAY_NS / 10);
		sleep_ns(WAKE_DELAY_NS);
		pace_resume(w->p, 1, busy);
		for (unsigned i = 0; i < WAKE_TICKS; i++)
			pace_tick(w->p, 1, busy += POLL_STEP);
		pace_idle(w->p, 1);
	}
	return NULL;
}

static int64_t run_wake(int target)
{
	struct wake_run w;
	struct host_thread_group g, h;

	memset(&w, 0, sizeof(w));
	w.target = target;
	w.p = pace_create(NCPUS, QUANTUM, LONG_BLOCKED_NS);
	if (!w.p)
		return -1;
	/* The halted CPUs first, so that they get numbers 1 and 2. */
	host_thread_group_start(&h, 2, wake_halted, &w, 0);
	host_thread_group_start(&g, 1, wake_sender, &w, 0);
	host_thread_group_join(&g);
	host_thread_group_join(&h);
	pace_destroy(w.p);
	return w.sender_ns;
}

KTEST(pace_serial, a_named_wake_holds_the_sender_for_its_target_only)
{
	int64_t named = run_wake(1), unnamed = run_wake(-1);

	ASSERT_TRUE(named >= 0);
	ASSERT_TRUE(unnamed >= 0);
	EXPECT_LT(named, LONG_BLOCKED_NS / 2);
	EXPECT_GE(unnamed, LONG_BLOCKED_NS);
}

/*
 * Two CPUs: 1 halts; 0 names a wake for it at DELIVER_AT, then takes
 * DELIVER_TICKS ticks of DELIVER_STEP cycles (more than a quantum) to the
 * write that sends it; CPU 1's thread resumes only after that write, as
 * QEMU's does. Were the sender held by its own wake, it would wait for a
 * CPU that waits for it, until the wake's host time ran out.
 */
#define DELIVER_AT 1000
#define DELIVER_TICKS 5
#define DELIVER_STEP 50

struct deliver_run {
	struct pace *p;
	uint32_t halted;	/* atomic: CPU 1 has halted */
	uint32_t written;	/* atomic: CPU 0 wrote the ICR */
	int64_t sender_ns;	/* host time from naming to writing */
	uint64_t joined_at;	/* CPU 1's clock when it resumed */
	uint64_t breaks;	/* pace_breaks() at the end */
	bool ran;
};

static void *deliver_sender(void *a)
{
	struct deliver_run *r = a;
	uint64_t busy = DELIVER_AT;
	int64_t t0;

	while (!__atomic_load_n(&r->halted, __ATOMIC_SEQ_CST))
		sleep_ns(100000);
	pace_tick(r->p, 0, busy);
	t0 = now_ns();
	pace_wake_sent(r->p, 0, busy, 1);
	for (unsigned i = 0; i < DELIVER_TICKS; i++)
		pace_tick(r->p, 0, busy += DELIVER_STEP);
	r->sender_ns = now_ns() - t0;
	pace_wake_delivered(r->p, 0);
	__atomic_store_n(&r->written, 1, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < WAKE_TICKS; i++)
		pace_tick(r->p, 0, busy += POLL_STEP);
	pace_idle(r->p, 0);
	return NULL;
}

static void *deliver_woken(void *a)
{
	struct deliver_run *r = a;
	uint64_t busy = 0;

	pace_tick(r->p, 1, busy);
	pace_idle(r->p, 1);
	__atomic_store_n(&r->halted, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&r->written, __ATOMIC_SEQ_CST))
		sleep_ns(100000);
	pace_resume(r->p, 1, busy);
	r->joined_at = busy + pace_skip(r->p, 1);
	for (unsigned i = 0; i < WAKE_TICKS; i++)
		pace_tick(r->p, 1, busy += POLL_STEP);
	pace_idle(r->p, 1);
	return NULL;
}

static void run_deliver(struct deliver_run *r, bool serial)
{
	struct host_thread_group g, h;

	memset(r, 0, sizeof(*r));
	r->p = pace_create(2, QUANTUM, LONG_BLOCKED_NS);
	if (!r->p)
		return;
	pace_set_serial(r->p, serial);
	/* CPU 1 first, so that it ticks first and gets its number. */
	host_thread_group_start(&h, 1, deliver_woken, r, 0);
	host_thread_group_start(&g, 1, deliver_sender, r, 0);
	host_thread_group_join(&g);
	host_thread_group_join(&h);
	r->breaks = pace_breaks(r->p);
	pace_destroy(r->p);
	r->ran = true;
}

KTEST(pace_serial, the_sender_of_a_named_wake_runs_on_to_its_write)
{
	struct deliver_run r;

	_Static_assert(DELIVER_TICKS * DELIVER_STEP > QUANTUM,
		       "the write must come more than a quantum on");
	for (int serial = 0; serial <= 1; serial++) {
		run_deliver(&r, serial);
		ASSERT_TRUE(r.ran);
		EXPECT_EQ(r.breaks, 0);
		EXPECT_LT(r.sender_ns, LONG_BLOCKED_NS / 2);
		EXPECT_EQ(r.joined_at, DELIVER_AT);
	}
}

#define WINDOW 4096
#define MARGIN 1000

struct align_run {
	struct pace *p;
	pthread_barrier_t bar;
};

/* CPU 1: runnable between the first two barriers, halted after. */
static void *align_other(void *a)
{
	struct align_run *r = a;

	pace_tick(r->p, 1, 0);
	pthread_barrier_wait(&r->bar);
	pthread_barrier_wait(&r->bar);
	pace_idle(r->p, 1);
	pthread_barrier_wait(&r->bar);
	return NULL;
}

KTEST(pace_serial, align_moves_a_clock_only_when_the_others_are_halted)
{
	struct align_run r;
	struct host_thread_group g;
	uint64_t busy = 12345, clock;

	r.p = pace_create(2, QUANTUM, BLOCKED_NS);
	ASSERT_TRUE(r.p != NULL);
	pthread_barrier_init(&r.bar, NULL, 2);
	host_thread_group_start(&g, 1, align_other, &r, 0);
	pthread_barrier_wait(&r.bar);		/* CPU 1 is runnable */
	pace_tick(r.p, 0, busy);
	EXPECT_FALSE(pace_align(r.p, 0, busy, WINDOW, MARGIN));
	EXPECT_EQ(pace_skip(r.p, 0), 0);
	pthread_barrier_wait(&r.bar);
	pthread_barrier_wait(&r.bar);		/* CPU 1 is halted */
	EXPECT_TRUE(pace_align(r.p, 0, busy, WINDOW, MARGIN));
	clock = busy + pace_skip(r.p, 0);
	EXPECT_EQ(clock % WINDOW, 0);
	EXPECT_GE(clock, busy + MARGIN);
	EXPECT_LT(clock, busy + MARGIN + WINDOW);
	host_thread_group_join(&g);
	pthread_barrier_destroy(&r.bar);
	pace_destroy(r.p);
}
