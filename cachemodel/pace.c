/*
 * Pacing of several CPUs' modelled clocks (cachemodel/pace.h has the
 * contract and the invariants; docs/cachemodel.md, "Several CPUs: pacing
 * by modelled time", the why).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "cachemodel/pace.h"

#define PACE_MAX_CPUS 64
#define NS_PER_SEC 1000000000ll
/* A waiter wakes at least this often to look for a stall (invariant 4). */
#define PACE_TICK_NS 1000000ll	/* 1 ms */
#define HOST_LINE_BYTES 64
#define STAT_BYTES 512
#define NO_CLOCK UINT64_MAX
/* generation 0 is never current: a CPU's limit is stale until computed */
#define GEN_STALE 0
/* A pacing waiter spins for this long before it sleeps (invariant 2),
 * when there are no more vCPUs than host CPUs: on a 2-core host with a
 * vCPU thread on each core a sleep and its wake-up cost both threads tens
 * of microseconds, longer than most waits last. */
#define PACE_SPIN_NS 30000ll
/* A pause-waiter sleeps at once: its waits last a request of the other
 * CPU's (16 us to 2 ms on this host), and spinning 30 us first cost more
 * CPU time than the wake-ups it saved (docs/cachemodel.md). */
#define PACE_PAUSE_SPIN_NS 0ll
/* ... looking again after this many pause instructions. */
#define PACE_SPIN_PAUSES 32
/* turn (invariant 9): no CPU holds it */
#define TURN_FREE (-1)
/* A CPU waiting for the turn sleeps at once: the holder runs a quantum
 * or more, tens of microseconds of host time, and a spinning waiter
 * would double the CPU time of two vCPUs on two host cores. */
#define PACE_TURN_SPIN_NS 0ll
/* pace_order() yields the host CPU this many times before it sleeps. */
#define PACE_ORDER_YIELDS 64
/* ... and sleeps at once after a yield that took longer than this. */
#define PACE_ORDER_YIELD_NS 50000ll

struct pace_cpu {
	uint64_t clock;		/* busy + skip, published (atomic) */
	uint64_t skip;		/* own thread writes, others read (atomic) */
	uint64_t limit;		/* own thread: floor + quantum when computed */
	uint64_t limit_gen;	/* own thread: the generation limit is of */
	uint64_t wake_clock;	/* atomic: a wake sent while it was halted,
				 * the sender's clock then; NO_CLOCK: none */
	int64_t wake_until;	/* atomic: host ns it holds senders till */
	uint64_t pw_deadline;	/* atomic: pause-waiting till this clock
				 * (invariant 7); 0: not pause-waiting */
	uint64_t poke;		/* atomic: lowest clock of a poke not yet
				 * taken; NO_CLOCK: none */
	uint32_t pw_quanta;	/* own thread: its next pause-wait's delta,
				 * in quanta (invariant 7, b) */
	uint32_t runnable;	/* atomic: ticking, not halted */
	uint32_t exempt;	/* atomic: set at a break, cleared by owner */
	pid_t tid;		/* atomic: its host thread, 0 before a tick */
	uint64_t deliver_by;	/* own thread: NO_CLOCK, or it named a wake
				 * and does not wait until it writes the ICR
				 * or reaches this clock (invariant 6) */
} __attribute__((aligned(HOST_LINE_BYTES)));

struct pace {
	unsigned ncpus;
	uint64_t quantum;	/* atomic: in effect (invariant 8) */
	uint64_t quantum_max;	/* pace_create()'s: the coarsest allowed */
	int64_t blocked_ns;
	int64_t spin_ns;	/* a pacing wait's spin: PACE_SPIN_NS or 0 */
	uint32_t on;		/* atomic (invariant 5) */
	uint64_t gen;		/* atomic: bumped when runnable/exempt change */
	uint64_t wake_at;	/* atomic: the lowest clock a waiter needs */
	uint64_t waits, stalls, breaks;	/* atomic */
	uint64_t order_waits;	/* atomic: pace_order() found one behind */
	bool order;		/* pace_order() waits; set before the CPUs run */
	uint32_t serial;	/* atomic: one CPU runs at a time (inv. 9) */
	int32_t turn;		/* atomic: the CPU that may run, TURN_FREE */
	uint64_t turn_waits;	/* atomic */
	uint64_t pw_ends[PACE_PW_ENDS], pw_skipped;	/* atomic */
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* CLOCK_MONOTONIC */
	struct pace_cpu *cpu;
};

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_RELAXED)

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * NS_PER_SEC + t.tv_nsec;
}

/* The host CPUs this process may run on. */
static unsigned host_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		return (unsigned)CPU_COUNT(&set);
	return 1;
}

struct pace *pace_create(unsigned ncpus, uint64_t quantum,
			 int64_t blocked_ns)
{
	pthread_condattr_t ca;
	struct pace *p;

	if (ncpus < 1 || ncpus > PACE_MAX_CPUS || quantum < 1 ||
	    blocked_ns < 1)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->cpu = aligned_alloc(HOST_LINE_BYTES, ncpus * sizeof(*p->cpu));
	if (!p->cpu) {
		free(p);
		return NULL;
	}
	memset(p->cpu, 0, ncpus * sizeof(*p->cpu));
	for (unsigned c = 0; c < ncpus; c++) {
		p->cpu[c].wake_clock = NO_CLOCK;
		p->cpu[c].poke = NO_CLOCK;
		p->cpu[c].deliver_by = NO_CLOCK;
		p->cpu[c].pw_quanta = PACE_PAUSE_QUANTA;
	}
	p->ncpus = ncpus;
	p->quantum = quantum;
	p->quantum_max = quantum;
	p->blocked_ns = blocked_ns;
	/* A spinner holds a host CPU that a CPU it waits for may need: only
	 * when each vCPU thread can have a host CPU of its own. */
	p->spin_ns = ncpus <= host_cpus() ? PACE_SPIN_NS : 0;
	p->on = 1;
	p->gen = GEN_STALE + 1;
	p->wake_at = NO_CLOCK;
	p->turn = TURN_FREE;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	return p;
}

void pace_destroy(struct pace *p)
{
	if (!p)
		return;
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p->cpu);
	free(p);
}

static void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Wait with p->lock held, until a broadcast or the host clock reaches
 * deadline (ns); but while the wait, begun at started, is younger than
 * spin (ns), spin a little with the lock let go instead, and return for
 * another look (invariant 2).
 */
static void wait_or_spin(struct pace *p, int64_t started, int64_t spin,
			 int64_t deadline)
{
	struct timespec until;

	if (now_ns() - started < spin) {
		pthread_mutex_unlock(&p->lock);
		for (int i = 0; i < PACE_SPIN_PAUSES; i++)
			spin_pause();
		pthread_mutex_lock(&p->lock);
		return;
	}
	until.tv_sec = deadline / NS_PER_SEC;
	until.tv_nsec = deadline % NS_PER_SEC;
	pthread_cond_timedwait(&p->cond, &p->lock, &until);
}

/* Wake every waiter to look again (invariant 2). */
static void wake_all(struct pace *p)
{
	pthread_mutex_lock(&p->lock);
	STORE(p->wake_at, NO_CLOCK);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* The runnable set changed: every cached limit is stale. */
static void changed(struct pace *p)
{
	ADD(p->gen, 1);
	wake_all(p);
}

/* The clock a poke at t resumes a pause-waiter at clock now with
 * deadline dl at (invariant 7, a). */
static uint64_t poke_clock(uint64_t t, uint64_t now, uint64_t dl)
{
	if (t < now)
		t = now;
	return t < dl ? t : dl;
}

/* Is host thread tid running or runnable ('R' in /proc)? */
static bool thread_runs(pid_t tid)
{
	char path[64], buf[STAT_BYTES];
	const char *s;
	ssize_t n;
	int fd;

	if (tid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "tid (comm) S ...": comm may hold spaces and parentheses. */
	s = strrchr(buf, ')');
	return s && s[1] == ' ' && s[2] == 'R';
}

/*
 * Invariant 6: does the wake sent to halted CPU o still hold its sender?
 * Until its wake_until; past that, for as long as o's host thread is seen
 * runnable (woken, and not yet run by the host: a stall, as in invariant
 * 4), blocked_ns more each time it is seen so.
 */
static bool wake_holds(struct pace *p, struct pace_cpu *o)
{
	int64_t until = LOAD(o->wake_until), now;

	if (LOAD(o->wake_clock) == NO_CLOCK)
		return false;
	now = now_ns();
	if (now < until)
		return true;
	if (!thread_runs(LOAD(o->tid)))
		return false;
	if (__atomic_compare_exchange_n(&o->wake_until, &until,
					now + p->blocked_ns, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		ADD(p->stalls, 1);
	return true;
}

/* The slowest runnable, non-exempt CPU other than cpu: its clock (NO_CLOCK
 * if none) and, in *slow, its number. A halted CPU with a wake on its way
 * counts at the wake's clock until wake_until (invariant 6); a
 * pause-waiting one at its deadline (invariant 7), or, if workers, not
 * at all: then the result is the slowest working CPU's. A pause-waiter
 * with a poke on its way is working: it counts at the clock it will
 * resume at. */
static uint64_t slowest(struct pace *p, unsigned cpu, unsigned *slow,
			bool workers)
{
	uint64_t min = NO_CLOCK;

	for (unsigned c = 0; c < p->ncpus; c++) {
		struct pace_cpu *o = &p->cpu[c];
		uint64_t t, dl, poke;

		if (c == cpu || LOAD(o->exempt))
			continue;
		if (LOAD(o->runnable)) {
			t = LOAD(o->clock);
			dl = LOAD(o->pw_deadline);
			poke = dl ? LOAD(o->poke) : NO_CLOCK;
			if (poke != NO_CLOCK)
				t = poke_clock(poke, t, dl);	/* waking */
			else if (dl && workers)
				continue;
			else if (dl > t)
				t = dl;
		} else if (wake_holds(p, o))
			t = LOAD(o->wake_clock);
		else
			continue;
		if (t < min) {
			min = t;
			*slow = c;
		}
	}
	return min;
}

static uint64_t floor_of_others(struct pace *p, unsigned cpu, unsigned *slow)
{
	return slowest(p, cpu, slow, false);
}

/* The latest clock of any CPU other than cpu (0 if none). */
static uint64_t latest_of_others(struct pace *p, unsigned cpu)
{
	uint64_t max = 0;

	for (unsigned c = 0; c < p->ncpus; c++)
		if (c != cpu && LOAD(p->cpu[c].clock) > max)
			max = LOAD(p->cpu[c].clock);
	return max;
}

/* Invariant 5: the first call on each CPU records its host thread. */
static void note_thread(struct pace *p, unsigned cpu)
{
	pid_t me = (pid_t)syscall(SYS_gettid);

	if (LOAD(p->cpu[cpu].tid) == me)
		return;
	STORE(p->cpu[cpu].tid, me);
	for (unsigned c = 0; c < p->ncpus; c++)
		if (c != cpu && LOAD(p->cpu[c].tid) == me) {
			STORE(p->on, 0);
			wake_all(p);
			return;
		}
}

/* Invariants 3 and 6: cpu (now halted or new) joins the others' time,
 * or the clock of the wake sent to it while that wake still holds: a
 * wake that let go was not for cpu, or came too late to be timed. */
static void join(struct pace *p, unsigned cpu, uint64_t busy)
{
	struct pace_cpu *me = &p->cpu[cpu];
	unsigned slow = cpu;
	uint64_t mine = busy + me->skip;
	uint64_t to = LOAD(me->wake_clock);

	if (to != NO_CLOCK && now_ns() >= LOAD(me->wake_until))
		to = NO_CLOCK;
	STORE(me->wake_clock, NO_CLOCK);
	if (to == NO_CLOCK)
		to = floor_of_others(p, cpu, &slow);
	if (to == NO_CLOCK)
		to = latest_of_others(p, cpu);
	if (to > mine) {
		STORE(me->skip, me->skip + (to - mine));
		mine = to;
	}
	if (mine > LOAD(me->clock))
		STORE(me->clock, mine);
	STORE(me->runnable, 1);
	me->limit_gen = GEN_STALE;
	changed(p);
}

/*
 * What a waiter knows of the CPU it waits for (invariant 4): the clock
 * it last saw and since when, and since when its thread was seen asleep.
 */
struct standstill {
	uint64_t last;		/* NO_CLOCK: nothing seen yet */
	unsigned who;
	int64_t since, asleep_since;
	bool stalled;		/* a stall is counted for this wait */
};

static void standstill_init(struct standstill *w, int64_t now)
{
	w->last = NO_CLOCK;
	w->who = UINT32_MAX;
	w->since = now;
	w->asleep_since = 0;
	w->stalled = false;
}

/*
 * The waiter, at host time h, sees CPU who at clock t. True when pacing
 * must break (invariant 4): who stood still for blocked_ns and was then
 * seen asleep at every look for blocked_ns more. A runnable thread that
 * stands still is a host stall, counted once a wait. The caller breaks:
 * it makes who exempt and counts the break (the watch starts over).
 */
static bool standstill_breaks(struct pace *p, struct standstill *w,
			      unsigned who, uint64_t t, int64_t h)
{
	if (t != w->last || who != w->who) {
		w->last = t;
		w->who = who;
		w->since = h;
		w->asleep_since = 0;
	} else if (h - w->since >= p->blocked_ns) {
		if (thread_runs(LOAD(p->cpu[who].tid))) {
			if (!w->stalled)
				ADD(p->stalls, 1);
			w->stalled = true;
			w->since = h;
			w->asleep_since = 0;
		} else if (!w->asleep_since) {
			w->asleep_since = h;
		} else if (h - w->asleep_since >= p->blocked_ns) {
			w->last = NO_CLOCK;
			return true;
		}
	}
	return false;
}

/*
 * cpu's clock now is more than a quantum ahead: wait until every other
 * working CPU is within lead of it (invariants 2, 4; the caller passes
 * quantum / PACE_RESUME_DIV). The slowest CPU must stand still for blocked_ns, and then be seen not
 * running at every look for blocked_ns more, before the pacing breaks: a
 * thread briefly asleep on a lock (this one's, while this waiter held it)
 * is seen running again at a later look.
 */
static void wait_for_others(struct pace *p, unsigned cpu, uint64_t now,
			    uint64_t lead)
{
	uint64_t target = now - lead;
	unsigned slow = cpu;
	int64_t started = now_ns();
	struct standstill w;

	/* Stops ticking: publish for good and look (invariant 2). */
	STORE(p->cpu[cpu].clock, now);
	if (now >= LOAD(p->wake_at))
		wake_all(p);
	pthread_mutex_lock(&p->lock);
	ADD(p->waits, 1);
	standstill_init(&w, started);
	for (;;) {
		uint64_t floor;
		int64_t t;

		if (!LOAD(p->on))
			break;
		if (LOAD(p->wake_at) > target)
			STORE(p->wake_at, target);
		floor = floor_of_others(p, cpu, &slow);
		if (floor == NO_CLOCK || floor >= target)
			break;
		t = now_ns();
		if (standstill_breaks(p, &w, slow, floor, t)) {
			ADD(p->breaks, 1);
			STORE(p->cpu[slow].exempt, 1);
			ADD(p->gen, 1);
			continue;
		}
		wait_or_spin(p, started, p->spin_ns, t + PACE_TICK_NS);
	}
	p->cpu[cpu].limit_gen = GEN_STALE;
	pthread_mutex_unlock(&p->lock);
}

/* Invariant 9: let the turn go if cpu holds it, and wake the others to
 * look. */
static void release_turn(struct pace *p, unsigned cpu)
{
	int32_t mine = (int32_t)cpu;

	if (__atomic_compare_exchange_n(&p->turn, &mine, TURN_FREE, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		wake_all(p);
}

/*
 * Invariant 9: is cpu, at clock now, first in line for a free turn? No
 * other CPU counts (as in every floor) at a lower clock, or at the same
 * clock with a lower number. *slow: the one that does, if any.
 */
static bool first_in_line(struct pace *p, unsigned cpu, uint64_t now,
			  unsigned *slow)
{
	uint64_t floor = floor_of_others(p, cpu, slow);

	return floor == NO_CLOCK || floor > now ||
	       (floor == now && *slow > cpu);
}

/*
 * Invariant 9: wait until cpu, at clock now, holds the turn: the holder
 * lets it go and cpu is first in line. The CPU waited for (the holder,
 * or whoever is first in line) is watched as wait_for_others() watches
 * the slowest: one asleep outside guest code breaks the pacing.
 * pw_dl: 0, or cpu is a pause-waiter that paused at clock pw_from with
 * deadline pw_dl (invariant 7), still counted by the others at its
 * deadline or its lowest poke's clock: a poke that comes while it waits
 * lowers now with it, so that it waits at the clock the others count
 * it at (else each side would wait for the other until the pacing
 * broke). Returns the clock cpu took the turn at: now, or lower.
 */
static uint64_t wait_turn(struct pace *p, unsigned cpu, uint64_t now,
			  uint64_t pw_from, uint64_t pw_dl)
{
	int64_t started = now_ns();
	struct standstill w;

	pthread_mutex_lock(&p->lock);
	ADD(p->turn_waits, 1);
	standstill_init(&w, started);
	for (;;) {
		int32_t turn = LOAD(p->turn), free_turn = TURN_FREE;
		unsigned who = cpu;
		uint64_t t;
		int64_t h;

		if (pw_dl) {
			t = LOAD(p->cpu[cpu].poke);
			if (t != NO_CLOCK && poke_clock(t, pw_from, pw_dl) < now)
				now = poke_clock(t, pw_from, pw_dl);
		}
		if (!LOAD(p->on) || !LOAD(p->serial) || turn == (int32_t)cpu)
			break;
		if (turn == TURN_FREE) {
			if (first_in_line(p, cpu, now, &who)) {
				if (__atomic_compare_exchange_n(&p->turn,
						&free_turn, (int32_t)cpu,
						false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST)) {
					break;
				}
				continue;
			}
		} else {
			who = (unsigned)turn;
		}
		t = LOAD(p->cpu[who].clock);
		h = now_ns();
		if (standstill_breaks(p, &w, who, t, h)) {
			int32_t held = (int32_t)who;

			ADD(p->breaks, 1);
			STORE(p->cpu[who].exempt, 1);
			__atomic_compare_exchange_n(&p->turn, &held, TURN_FREE,
						    false, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
			ADD(p->gen, 1);
			continue;
		}
		wait_or_spin(p, started, PACE_TURN_SPIN_NS, h + PACE_TICK_NS);
	}
	p->cpu[cpu].limit_gen = GEN_STALE;
	pthread_mutex_unlock(&p->lock);
	return now;
}

void pace_tick(struct pace *p, unsigned cpu, uint64_t busy)
{
	struct pace_cpu *me = &p->cpu[cpu];
	uint64_t now, gen, floor;
	unsigned slow = cpu;
	uint32_t serial;

	if (!__atomic_load_n(&p->on, __ATOMIC_RELAXED))
		return;
	if (!me->tid) {
		note_thread(p, cpu);
		if (!LOAD(p->on))
			return;
	}
	if (!__atomic_load_n(&me->runnable, __ATOMIC_RELAXED))
		join(p, cpu, busy);	/* its first tick, or a missed resume */
	if (__atomic_load_n(&me->exempt, __ATOMIC_RELAXED)) {
		STORE(me->exempt, 0);	/* back from a break (invariant 4) */
		changed(p);
	}
	now = busy + me->skip;
	serial = __atomic_load_n(&p->serial, __ATOMIC_RELAXED);
	/* Invariant 9: a CPU without the turn waits at the clock the others
	 * saw last; what it counted since (the rest of the block it halted
	 * in) shows only in its turn, not whenever its thread got here. */
	if (serial && __atomic_load_n(&p->turn, __ATOMIC_RELAXED) !=
		      (int32_t)cpu)
		wait_turn(p, cpu, LOAD(me->clock), 0, 0);
	__atomic_store_n(&me->clock, now, __ATOMIC_RELEASE);	/* inv. 2 */
	if (now >= LOAD(p->wake_at))
		wake_all(p);
	if (me->deliver_by != NO_CLOCK) {
		if (now < me->deliver_by)
			return;		/* its IPI first (invariant 6) */
		me->deliver_by = NO_CLOCK;
	}
	gen = LOAD(p->gen);
	if (now <= me->limit && me->limit_gen == gen)
		return;
	floor = floor_of_others(p, cpu, &slow);
	me->limit = floor == NO_CLOCK ? NO_CLOCK : floor + LOAD(p->quantum);
	me->limit_gen = gen;
	if (now <= me->limit)
		return;
	if (serial) {
		/* Invariant 9: the turn goes to whoever is first in line. */
		release_turn(p, cpu);
		wait_turn(p, cpu, now, 0, 0);
	} else {
		wait_for_others(p, cpu, now,
				LOAD(p->quantum) / PACE_RESUME_DIV);
	}
}

/*
 * Has every working CPU other than cpu reached now? Looked at twice: a
 * CPU's poke of a pause-waiter (pace_poke()) comes before the poker's
 * clock passes now, so the second look, after the first saw that clock,
 * sees the poke even where the first read the waiter's poke before the
 * poker's clock.
 */
static bool all_reached(struct pace *p, unsigned cpu, uint64_t now)
{
	unsigned slow = cpu;

	for (int look = 0; look < 2; look++) {
		uint64_t floor = floor_of_others(p, cpu, &slow);

		if (floor != NO_CLOCK && floor < now)
			return false;
	}
	return true;
}

void pace_order(struct pace *p, unsigned cpu, uint64_t busy)
{
	struct pace_cpu *me = &p->cpu[cpu];
	uint64_t now;

	if (!p->order || !LOAD(p->on) || LOAD(p->serial))
		return;		/* serial: its turn orders it (inv. 9) */
	now = busy + me->skip;
	STORE(me->clock, now);	/* seen before we look (invariant 2) */
	if (all_reached(p, cpu, now))
		return;
	ADD(p->order_waits, 1);
	for (unsigned i = 0; i < PACE_ORDER_YIELDS; i++) {
		int64_t t0 = now_ns();

		/* A yield that gave the host CPU to another job for long is
		 * dearer than a sleep that wakes when the clock is there. */
		sched_yield();
		if (now_ns() - t0 > PACE_ORDER_YIELD_NS)
			break;
		if (all_reached(p, cpu, now))
			return;
	}
	do
		wait_for_others(p, cpu, now, 0);
	while (LOAD(p->on) && !all_reached(p, cpu, now));
}

void pace_idle(struct pace *p, unsigned cpu)
{
	if (!LOAD(p->on))
		return;
	STORE(p->cpu[cpu].wake_clock, NO_CLOCK);
	STORE(p->cpu[cpu].runnable, 0);
	release_turn(p, cpu);
	changed(p);
}

void pace_wake_sent(struct pace *p, unsigned cpu, uint64_t busy, int target)
{
	uint64_t t = busy + p->cpu[cpu].skip;
	int64_t now = now_ns();
	bool any = false;

	if (!LOAD(p->on))
		return;
	pthread_mutex_lock(&p->lock);
	for (unsigned c = 0; c < p->ncpus; c++) {
		struct pace_cpu *o = &p->cpu[c];

		if (c == cpu || LOAD(o->runnable) ||
		    (target >= 0 && c != (unsigned)target))
			continue;
		/* An earlier wake still on its way is the one that wakes. */
		if (LOAD(o->wake_clock) != NO_CLOCK &&
		    now < LOAD(o->wake_until))
			continue;
		STORE(o->wake_until, now + p->blocked_ns);
		STORE(o->wake_clock, t);
		any = true;
	}
	pthread_mutex_unlock(&p->lock);
	if (any) {
		ADD(p->gen, 1);
		if (target >= 0)	/* named before its write (inv. 6) */
			p->cpu[cpu].deliver_by = t + PACE_DELIVER_MAX_CYCLES;
	}
}

void pace_wake_delivered(struct pace *p, unsigned cpu)
{
	struct pace_cpu *me = &p->cpu[cpu];

	if (me->deliver_by == NO_CLOCK)
		return;
	me->deliver_by = NO_CLOCK;
	me->limit_gen = GEN_STALE;
}

void pace_resume(struct pace *p, unsigned cpu, uint64_t busy)
{
	if (!LOAD(p->on))
		return;
	note_thread(p, cpu);
	if (LOAD(p->on))
		join(p, cpu, busy);
}

/* Take cpu's poke, if any (NO_CLOCK if none). */
static uint64_t take_poke(struct pace_cpu *me)
{
	return __atomic_exchange_n(&me->poke, NO_CLOCK, __ATOMIC_SEQ_CST);
}

/*
 * Is the slowest working CPU slow held up outside guest code? Its host
 * thread is not running; under serial pacing, the turn's holder's is not
 * (slow may be asleep waiting for the turn: invariant 9).
 */
static bool held_up(struct pace *p, unsigned slow)
{
	int32_t turn = LOAD(p->turn);

	if (!LOAD(p->serial))
		return !thread_runs(LOAD(p->cpu[slow].tid));
	/* A free turn is being taken: the CPU first in line was woken. */
	return turn != TURN_FREE &&
	       !thread_runs(LOAD(p->cpu[turn].tid));
}

/*
 * Sleep (invariant 7) until a poke, the timeout at dl, no working CPU,
 * or a give-up; with the lock held. Returns the clock to resume at, and
 * in *end why.
 */
static uint64_t pause_sleep(struct pace *p, unsigned cpu, uint64_t now,
			    uint64_t dl, enum pace_pw_end *end)
{
	struct pace_cpu *me = &p->cpu[cpu];
	uint64_t last = NO_CLOCK;
	unsigned slow = cpu, last_slow = cpu;
	int64_t since = now_ns(), started = since;
	int64_t look = p->blocked_ns / PACE_PAUSE_LOOK_DIV + 1;

	for (;;) {
		uint64_t floor, t;
		int64_t h;

		/* A working CPU whose clock reaches dl wakes everyone: the
		 * deadline is published before the clocks are looked at. */
		if (LOAD(p->wake_at) > dl)
			STORE(p->wake_at, dl);
		/* Read, not taken: until it has published its new clock,
		 * the others count it at the clock the poke resumes it at
		 * (pace_pause() takes it then). */
		t = LOAD(me->poke);
		if (t != NO_CLOCK) {
			*end = PACE_PW_WRITE;
			return poke_clock(t, now, dl);
		}
		floor = slowest(p, cpu, &slow, true);
		if (!LOAD(p->on) || floor == NO_CLOCK) {
			*end = PACE_PW_ALONE;
			return now;
		}
		if (floor >= dl) {
			*end = PACE_PW_TIMEOUT;
			return dl;
		}
		h = now_ns();
		if (floor != last || slow != last_slow) {
			last = floor;
			last_slow = slow;
			since = h;
		} else if (h - since >= look) {
			if (held_up(p, slow)) {
				*end = PACE_PW_GAVE_UP;
				return now;
			}
			since = h;
		}
		wait_or_spin(p, started, PACE_PAUSE_SPIN_NS, h + look);
	}
}

uint64_t pace_pause(struct pace *p, unsigned cpu, uint64_t busy)
{
	struct pace_cpu *me = &p->cpu[cpu];
	enum pace_pw_end end;
	uint64_t now, dl, to, t;
	unsigned slow = cpu;

	if (!LOAD(p->on) || !me->tid || !LOAD(me->runnable))
		return 0;
	now = busy + me->skip;
	STORE(me->clock, now);
	dl = now + me->pw_quanta * LOAD(p->quantum);
	t = take_poke(me);
	if (t != NO_CLOCK) {
		end = PACE_PW_WRITE;	/* it came between two pauses */
		to = poke_clock(t, now, dl);
	} else if (slowest(p, cpu, &slow, true) == NO_CLOCK) {
		end = PACE_PW_NONE;	/* nobody would wake it */
		to = now;
	} else {
		STORE(me->pw_deadline, dl);
		ADD(p->gen, 1);		/* the others' floors rose */
		release_turn(p, cpu);	/* it sleeps (invariant 9) */
		if (dl >= LOAD(p->wake_at))
			wake_all(p);	/* to dl: stops ticking (inv. 2) */
		pthread_mutex_lock(&p->lock);
		to = pause_sleep(p, cpu, now, dl, &end);
		pthread_mutex_unlock(&p->lock);
		/* Invariant 9: its wait ends (its deadline and pokes are
		 * looked at by the CPU that runs) only in its turn; a poke
		 * meanwhile may bring that turn forward. */
		if (LOAD(p->serial)) {
			uint64_t was = to;

			to = wait_turn(p, cpu, to, now, dl);
			if (to < was)
				end = PACE_PW_WRITE;
		}
	}
	if (to > now) {
		STORE(me->skip, me->skip + (to - now));
		STORE(me->clock, to);	/* before the deadline goes: the
					 * others' floor never dips below */
	}
	if (LOAD(me->pw_deadline)) {
		STORE(me->pw_deadline, 0);
		me->limit_gen = GEN_STALE;
		ADD(p->gen, 1);		/* the others' floors fell to 'to' */
		take_poke(me);		/* its wait saw every poke so far */
	}
	if (to >= LOAD(p->wake_at))
		wake_all(p);
	/* Invariant 7, b: a loop whose waits time out waits for something
	 * far off; one that a write ended may wait as long next time. */
	if (end == PACE_PW_TIMEOUT)
		me->pw_quanta = 2 * me->pw_quanta <= PACE_PAUSE_MAX_QUANTA
					? 2 * me->pw_quanta
					: PACE_PAUSE_MAX_QUANTA;
	else if (end == PACE_PW_ALONE || end == PACE_PW_GAVE_UP)
		me->pw_quanta = PACE_PAUSE_QUANTA;
	ADD(p->pw_ends[end], 1);
	ADD(p->pw_skipped, to - now);
	return to - now;
}

void pace_poke(struct pace *p, unsigned cpu, uint64_t t)
{
	struct pace_cpu *o = &p->cpu[cpu];
	uint64_t old = LOAD(o->poke);

	while (t < old && !__atomic_compare_exchange_n(&o->poke, &old, t,
						       false, __ATOMIC_SEQ_CST,
						       __ATOMIC_SEQ_CST))
		;
	if (LOAD(o->pw_deadline)) {
		ADD(p->gen, 1);		/* it counts at its resume clock */
		wake_all(p);
	}
}

bool pace_pause_waiting(const struct pace *p, unsigned cpu)
{
	return __atomic_load_n(&p->cpu[cpu].pw_deadline, __ATOMIC_SEQ_CST);
}

uint64_t pace_pw_count(const struct pace *p, enum pace_pw_end e)
{
	return e < PACE_PW_ENDS ? __atomic_load_n(&p->pw_ends[e],
						  __ATOMIC_RELAXED) : 0;
}

uint64_t pace_pw_skipped(const struct pace *p)
{
	return __atomic_load_n(&p->pw_skipped, __ATOMIC_RELAXED);
}

uint64_t pace_skip(const struct pace *p, unsigned cpu)
{
	return __atomic_load_n(&p->cpu[cpu].skip, __ATOMIC_RELAXED);
}

bool pace_on(const struct pace *p)
{
	return __atomic_load_n(&p->on, __ATOMIC_RELAXED);
}

uint64_t pace_quantum(const struct pace *p)
{
	return __atomic_load_n(&p->quantum, __ATOMIC_RELAXED);
}

void pace_set_quantum(struct pace *p, uint64_t quantum)
{
	if (quantum == 0 || quantum > p->quantum_max)
		quantum = p->quantum_max;
	STORE(p->quantum, quantum);
	ADD(p->gen, 1);		/* every CPU computes its limit again */
}

uint64_t pace_waits(const struct pace *p)
{
	return __atomic_load_n(&p->waits, __ATOMIC_RELAXED);
}

void pace_set_order(struct pace *p, bool on)
{
	p->order = on;
}

bool pace_ordering(const struct pace *p)
{
	return p->order;
}

uint64_t pace_order_waits(const struct pace *p)
{
	return __atomic_load_n(&p->order_waits, __ATOMIC_RELAXED);
}

bool pace_align(struct pace *p, unsigned cpu, uint64_t busy,
		uint64_t window, uint64_t margin)
{
	struct pace_cpu *me = &p->cpu[cpu];
	uint64_t now, start;

	if (!LOAD(p->on) || !me->tid || window == 0)
		return false;
	for (unsigned c = 0; c < p->ncpus; c++)
		if (c != cpu && (LOAD(p->cpu[c].runnable) ||
				 LOAD(p->cpu[c].wake_clock) != NO_CLOCK))
			return false;
	now = busy + me->skip;
	start = (now + margin + window - 1) / window * window;
	STORE(me->skip, me->skip + (start - now));
	STORE(me->clock, start);
	me->limit_gen = GEN_STALE;
	return true;
}

void pace_set_serial(struct pace *p, bool on)
{
	STORE(p->serial, on ? 1 : 0);
	ADD(p->gen, 1);
	wake_all(p);		/* turn waiters look again */
}

bool pace_serial(const struct pace *p)
{
	return __atomic_load_n(&p->serial, __ATOMIC_RELAXED);
}

uint64_t pace_turn_waits(const struct pace *p)
{
	return __atomic_load_n(&p->turn_waits, __ATOMIC_RELAXED);
}

uint64_t pace_stalls(const struct pace *p)
{
	return __atomic_load_n(&p->stalls, __ATOMIC_RELAXED);
}

uint64_t pace_breaks(const struct pace *p)
{
	return __atomic_load_n(&p->breaks, __ATOMIC_RELAXED);
}
