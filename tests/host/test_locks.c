/*
 * Host tests for lib/atomic.h, lib/spinlock.c and lib/rwlock.c, run under
 * ThreadSanitizer: plain (non-atomic) data is shared between pthreads
 * under the locks, so a lock that fails to exclude or to order shows up
 * both as a wrong count and as a TSan data-race report.
 *
 * Worker threads never call EXPECT_*: they record what they saw and the
 * test thread checks it after pthread_join().
 */
// HOST_SRCS: lib/spinlock.c lib/rwlock.c tests/host/host_cycles.c
// HOST_SANITIZE: thread
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "lib/atomic.h"
#include "lib/cycles.h"
#include "lib/ktest.h"
#include "lib/rwlock.h"
#include "lib/spinlock.h"
#include "tests/host/host_clock.h"
#include "tests/host/host_shim.h"
#include "tests/host/host_thread_group.h"

#define NR_THREADS 4
#define SPIN_ITERS 5000	/* per thread */
#define RW_WRITERS 2
#define RW_READERS 2
#define RW_WRITER_ITERS 2000
#define RW_READER_ITERS 20000
/* How long a test waits for another thread to reach a state. */
#define WAIT_TIMEOUT_NS (2 * HOST_NSEC_PER_SEC)

/* Spin until *flag becomes true or the timeout passes; returns *flag. */
static bool wait_for_flag(const bool *flag)
{
	uint64_t deadline = host_now_ns() + WAIT_TIMEOUT_NS;

	while (!atomic_load_acquire(flag) && host_now_ns() < deadline)
		cpu_relax();
	return atomic_load_acquire(flag);
}

/* Spin until *word == want or the timeout passes; returns whether. */
static bool wait_for_u32(const uint32_t *word, uint32_t want)
{
	uint64_t deadline = host_now_ns() + WAIT_TIMEOUT_NS;

	while (atomic_load_acquire(word) != want && host_now_ns() < deadline)
		cpu_relax();
	return atomic_load_acquire(word) == want;
}

/* ---- Atomics ------------------------------------------------------------ */

KTEST(atomic, rmw_return_old_values)
{
	uint32_t w = 5;
	uint64_t q = 1ull << 40;

	EXPECT_EQ(atomic_fetch_add_relaxed(&w, 3), 5);
	EXPECT_EQ(w, 8);
	EXPECT_EQ(atomic_cmpxchg32(&w, 7, 100), 8);	/* fails */
	EXPECT_EQ(w, 8);
	EXPECT_EQ(atomic_cmpxchg32(&w, 8, 100), 8);	/* succeeds */
	EXPECT_EQ(w, 100);
	EXPECT_EQ(atomic_cmpxchg64(&q, 1ull << 40, 3ull << 40), 1ull << 40);
	EXPECT_EQ(q, 3ull << 40);
	EXPECT_EQ(atomic_fetch_add_acq_rel(&q, 1), 3ull << 40);
	EXPECT_EQ(atomic_load_acquire(&q), (3ull << 40) + 1);
	atomic_max_relaxed(&q, 5);
	EXPECT_EQ(q, (3ull << 40) + 1);
	atomic_max_relaxed(&q, 1ull << 50);
	EXPECT_EQ(q, 1ull << 50);
	WRITE_ONCE(w, 7);
	EXPECT_EQ(READ_ONCE(w), 7);
}

KTEST(atomic, cycles_advance)
{
	uint64_t a = cycles_now(), b;
	volatile unsigned int spin;

	for (spin = 0; spin < 100000; spin++)
		;
	b = cycles_now();
	EXPECT_GT(b, a);
}

/* ---- Spinlock ----------------------------------------------------------- */

KTEST(spinlock, trylock_and_unlock)
{
	struct spinlock l;

	spin_lock_init(&l, NULL);
	EXPECT_FALSE(spin_is_locked(&l));
	ASSERT_TRUE(spin_trylock(&l));
	EXPECT_TRUE(spin_is_locked(&l));
	EXPECT_FALSE(spin_trylock(&l));
	spin_unlock(&l);
	EXPECT_FALSE(spin_is_locked(&l));
	spin_lock(&l);
	EXPECT_FALSE(spin_trylock(&l));
	spin_unlock(&l);
	EXPECT_TRUE(spin_trylock(&l));
	spin_unlock(&l);
	/* Unlocking a free lock is a bug the lock must catch. */
	EXPECT_TRUE(HOST_EXPECT_PANIC(spin_unlock(&l)));
	EXPECT_FALSE(spin_is_locked(&l));
}

/*
 * Single-threaded look at the tickets: queue two pretend waiters by
 * taking tickets by hand, and watch each unlock serve the next ticket.
 */
KTEST(spinlock, tickets_served_in_order)
{
	struct spinlock l = SPINLOCK_INIT(NULL);

	spin_lock(&l);				/* ticket 0 */
	EXPECT_EQ(l.next, 1);
	EXPECT_EQ(l.owner, 0);
	EXPECT_FALSE(spin_is_contended(&l));
	EXPECT_EQ(atomic_fetch_add_relaxed(&l.next, 1), 1);	/* waiter A */
	EXPECT_EQ(atomic_fetch_add_relaxed(&l.next, 1), 2);	/* waiter B */
	EXPECT_TRUE(spin_is_contended(&l));
	/* trylock may not jump the queue, even once the holder leaves. */
	EXPECT_FALSE(spin_trylock(&l));
	spin_unlock(&l);
	EXPECT_EQ(l.owner, 1);			/* A is served, not B */
	EXPECT_TRUE(spin_is_locked(&l));
	EXPECT_FALSE(spin_trylock(&l));
	spin_unlock(&l);			/* A leaves */
	EXPECT_EQ(l.owner, 2);			/* B is served */
	EXPECT_FALSE(spin_is_contended(&l));
	spin_unlock(&l);			/* B leaves */
	EXPECT_FALSE(spin_is_locked(&l));
	/* Tickets wrap around without harm. */
	l.next = l.owner = UINT32_MAX;
	spin_lock(&l);
	EXPECT_EQ(l.next, 0);
	EXPECT_TRUE(spin_is_locked(&l));
	spin_unlock(&l);
	EXPECT_EQ(l.owner, 0);
	EXPECT_FALSE(spin_is_locked(&l));
}

struct fifo_arg {
	struct spinlock *lock;
	int id;
	int *order;	/* under lock */
	int *nr;	/* under lock */
};

static void *fifo_thread(void *p)
{
	struct fifo_arg *a = p;

	spin_lock(a->lock);
	a->order[(*a->nr)++] = a->id;
	spin_unlock(a->lock);
	return NULL;
}

/* Two threads queue in a known order; they must be served in it. */
KTEST(spinlock, waiters_served_fifo)
{
	struct spinlock l = SPINLOCK_INIT(NULL);
	int order[2] = { -1, -1 }, nr = 0;
	struct fifo_arg args[2] = {
		{ &l, 1, order, &nr },
		{ &l, 2, order, &nr },
	};
	pthread_t t[2];
	bool queued1, queued2 = false;

	spin_lock(&l);
	pthread_create(&t[0], NULL, fifo_thread, &args[0]);
	queued1 = wait_for_u32(&l.next, 2);
	if (queued1) {
		pthread_create(&t[1], NULL, fifo_thread, &args[1]);
		queued2 = wait_for_u32(&l.next, 3);
	}
	spin_unlock(&l);
	pthread_join(t[0], NULL);
	if (queued1)
		pthread_join(t[1], NULL);
	ASSERT_TRUE(queued1);
	ASSERT_TRUE(queued2);
	EXPECT_EQ(nr, 2);
	EXPECT_EQ(order[0], 1);
	EXPECT_EQ(order[1], 2);
}

struct counter_arg {
	struct spinlock *lock;
	pthread_barrier_t *start;
	uint64_t *counter;	/* plain: protected by lock only */
	bool use_trylock;
};

static void *counter_thread(void *p)
{
	struct counter_arg *a = p;
	uint64_t v;
	int i;

	pthread_barrier_wait(a->start);
	for (i = 0; i < SPIN_ITERS; i++) {
		if (a->use_trylock) {
			while (!spin_trylock(a->lock))
				cpu_relax();
		} else {
			spin_lock(a->lock);
		}
		/* Read-modify-write in two steps: a lost update shows. */
		v = *a->counter;
		barrier();
		*a->counter = v + 1;
		spin_unlock(a->lock);
	}
	return NULL;
}

/*
 * NR_THREADS threads add SPIN_ITERS each to *counter under l. With gate,
 * the caller's thread holds l until every worker has queued a ticket, so
 * at least NR_THREADS acquisitions are contended whatever the scheduler
 * does (the gate itself is one more acquisition). Returns false if the
 * workers did not all queue in time.
 */
static bool run_counter(struct spinlock *l, uint64_t *counter,
			bool use_trylock, bool gate)
{
	pthread_barrier_t start;
	struct counter_arg arg = { l, &start, counter, use_trylock };
	struct host_thread_group g;
	bool queued = true;

	pthread_barrier_init(&start, NULL, NR_THREADS);
	if (gate)
		spin_lock(l);
	host_thread_group_start(&g, NR_THREADS, counter_thread, &arg, 0);
	if (gate) {
		queued = wait_for_u32(&l->next, NR_THREADS + 1);
		spin_unlock(l);
	}
	host_thread_group_join(&g);
	pthread_barrier_destroy(&start);
	return queued;
}

KTEST(spinlock, counter_exact_with_stats)
{
	struct lock_stats st = LOCK_STATS_INIT("test_counter");
	struct spinlock l;
	uint64_t counter = 0;
	char line[256];

	spin_lock_init(&l, &st);
	EXPECT_TRUE(run_counter(&l, &counter, false, true));
	EXPECT_EQ(counter, (uint64_t)NR_THREADS * SPIN_ITERS);
	EXPECT_FALSE(spin_is_locked(&l));
	/* Every worker's locks, plus the gate's. */
	EXPECT_EQ(st.acquisitions, (uint64_t)NR_THREADS * SPIN_ITERS + 1);
	EXPECT_GE(st.contended, NR_THREADS);
	EXPECT_LE(st.contended, st.acquisitions);
	EXPECT_GT(st.max_wait_cycles, 0);
	EXPECT_GE(st.wait_cycles, st.max_wait_cycles);
	EXPECT_EQ(st.trylock_failures, 0);
	lock_stats_format(line, sizeof(line), &st, "spin");
	ktest_diag("%s", line);
}

KTEST(spinlock, trylock_counter_exact)
{
	struct lock_stats st = LOCK_STATS_INIT("test_trylock");
	struct spinlock l;
	uint64_t counter = 0;

	spin_lock_init(&l, &st);
	run_counter(&l, &counter, true, false);
	EXPECT_EQ(counter, (uint64_t)NR_THREADS * SPIN_ITERS);
	EXPECT_EQ(st.acquisitions, (uint64_t)NR_THREADS * SPIN_ITERS);
	EXPECT_EQ(st.contended, 0);	/* trylock never waits */
	EXPECT_EQ(st.wait_cycles, 0);
	ktest_diag("trylock failures: %llu",
		   (unsigned long long)st.trylock_failures);
}

KTEST(spinlock, stats_record_and_format)
{
	struct lock_stats st = LOCK_STATS_INIT("demo");
	char line[256];
	int n;

	lock_stats_record(&st, false, 0);
	lock_stats_record(&st, true, 700);
	lock_stats_record(&st, true, 200);
	st.trylock_failures = 4;
	EXPECT_EQ(st.acquisitions, 3);
	EXPECT_EQ(st.contended, 2);
	EXPECT_EQ(st.wait_cycles, 900);
	EXPECT_EQ(st.max_wait_cycles, 700);
	n = lock_stats_format(line, sizeof(line), &st, "spin");
	EXPECT_STREQ(line, "@@LOCKSTAT {\"name\":\"demo\",\"mode\":\"spin\","
			   "\"acquisitions\":3,\"contended\":2,"
			   "\"wait_cycles\":900,\"max_wait_cycles\":700,"
			   "\"avg_wait_cycles\":450,\"trylock_failures\":4}");
	EXPECT_EQ(n, (int)strlen(line));
	lock_stats_reset(&st);
	EXPECT_EQ(st.acquisitions + st.contended + st.wait_cycles +
			  st.max_wait_cycles + st.trylock_failures, 0);
	lock_stats_format(line, sizeof(line), &st, "read");
	EXPECT_STREQ(line, "@@LOCKSTAT {\"name\":\"demo\",\"mode\":\"read\","
			   "\"acquisitions\":0,\"contended\":0,"
			   "\"wait_cycles\":0,\"max_wait_cycles\":0,"
			   "\"avg_wait_cycles\":0,\"trylock_failures\":0}");
	/* A name that would break the JSON is refused. */
	st.name = "bad\"name";
	EXPECT_TRUE(HOST_EXPECT_PANIC(
		lock_stats_format(line, sizeof(line), &st, "spin")));
	st.name = "a_name_that_is_longer_than_the_sixty_four_characters_"
		  "allowed_for_locks";
	EXPECT_TRUE(HOST_EXPECT_PANIC(
		lock_stats_format(line, sizeof(line), &st, "spin")));
}

/* ---- Reader-writer lock ------------------------------------------------- */

KTEST(rwlock, single_thread_states)
{
	struct rwlock_stats st = RWLOCK_STATS_INIT("single");
	struct rwlock l;

	rwlock_init(&l, &st);
	read_lock(&l);
	read_lock(&l);		/* fine: no writer waits */
	EXPECT_EQ(rwlock_readers(&l), 2);
	EXPECT_FALSE(write_trylock(&l));
	EXPECT_TRUE(read_trylock(&l));
	EXPECT_EQ(rwlock_readers(&l), 3);
	read_unlock(&l);
	read_unlock(&l);
	read_unlock(&l);
	EXPECT_EQ(rwlock_readers(&l), 0);
	ASSERT_TRUE(write_trylock(&l));
	EXPECT_TRUE(rwlock_is_write_locked(&l));
	EXPECT_FALSE(read_trylock(&l));
	EXPECT_FALSE(write_trylock(&l));
	EXPECT_EQ(rwlock_readers(&l), 0);	/* the failed try backed out */
	write_unlock(&l);
	EXPECT_FALSE(rwlock_is_write_locked(&l));
	write_lock(&l);
	write_unlock(&l);
	EXPECT_EQ(st.read.acquisitions, 3);
	EXPECT_EQ(st.read.trylock_failures, 1);
	EXPECT_EQ(st.write.acquisitions, 2);
	EXPECT_EQ(st.write.trylock_failures, 2);
	EXPECT_EQ(st.read.contended + st.write.contended, 0);
	/* Unbalanced unlocks are caught. */
	EXPECT_TRUE(HOST_EXPECT_PANIC(read_unlock(&l)));
	rwlock_init(&l, NULL);
	EXPECT_TRUE(HOST_EXPECT_PANIC(write_unlock(&l)));
}

struct rw_probe {
	struct rwlock *lock;
	bool write;
	bool done;		/* atomic */
	uint32_t *seq;		/* atomic: order of acquisition */
	uint32_t my_seq;
};

static void *rw_probe_thread(void *p)
{
	struct rw_probe *a = p;

	if (a->write)
		write_lock(a->lock);
	else
		read_lock(a->lock);
	a->my_seq = atomic_fetch_add_relaxed(a->seq, 1) + 1;
	if (a->write)
		write_unlock(a->lock);
	else
		read_unlock(a->lock);
	atomic_store_release(&a->done, true);
	return NULL;
}

/* A second reader gets in while the first still holds the lock. */
KTEST(rwlock, readers_do_not_exclude)
{
	struct rwlock l = RWLOCK_INIT(NULL);
	uint32_t seq = 0;
	struct rw_probe r = { &l, false, false, &seq, 0 };
	pthread_t t;
	bool entered;

	read_lock(&l);
	pthread_create(&t, NULL, rw_probe_thread, &r);
	entered = wait_for_flag(&r.done);
	read_unlock(&l);
	pthread_join(t, NULL);
	EXPECT_TRUE(entered);
	EXPECT_EQ(rwlock_readers(&l), 0);
}

/*
 * While a reader holds the lock a writer queues; from then on new readers
 * are turned away and served after the writer, so it cannot starve.
 */
KTEST(rwlock, waiting_writer_blocks_new_readers)
{
	struct rwlock_stats st = RWLOCK_STATS_INIT("fair");
	struct rwlock l;
	uint32_t seq = 0;
	struct rw_probe w = { &l, true, false, &seq, 0 };
	struct rw_probe r = { &l, false, false, &seq, 0 };
	pthread_t tw, tr;
	bool waiting, queued = false, early;

	rwlock_init(&l, &st);
	read_lock(&l);
	pthread_create(&tw, NULL, rw_probe_thread, &w);
	waiting = wait_for_u32(&l.cnts, RW_READER_BIAS | RW_WRITER_WAITING);
	if (waiting) {
		EXPECT_FALSE(read_trylock(&l));
		pthread_create(&tr, NULL, rw_probe_thread, &r);
		/* The writer holds ticket 0 of the queue, the reader 1. */
		queued = wait_for_u32(&l.wait.next, 2);
	}
	early = atomic_load_acquire(&w.done) || atomic_load_acquire(&r.done);
	read_unlock(&l);
	pthread_join(tw, NULL);
	if (waiting)
		pthread_join(tr, NULL);
	ASSERT_TRUE(waiting);
	ASSERT_TRUE(queued);
	EXPECT_FALSE(early);
	EXPECT_EQ(w.my_seq, 1);
	EXPECT_EQ(r.my_seq, 2);
	EXPECT_EQ(st.write.contended, 1);
	EXPECT_EQ(st.read.contended, 1);
	EXPECT_GT(st.write.wait_cycles, 0);
	EXPECT_EQ(st.read.trylock_failures, 1);
	EXPECT_EQ(atomic_load_relaxed(&l.cnts), 0);
}

struct rw_shared {
	struct rwlock lock;
	pthread_barrier_t start;
	uint64_t a, b;			/* plain, under lock: a == b */
};

struct rw_reader_result {
	struct rw_shared *sh;
	uint64_t broken;	/* reads that saw a != b */
	uint64_t went_back;	/* reads that saw a smaller a than before */
	uint64_t mid_run;	/* reads between the first and last write */
	uint32_t max_readers;	/* most readers seen inside at once */
};

static void *rw_writer_thread(void *p)
{
	struct rw_shared *sh = p;
	int i;

	pthread_barrier_wait(&sh->start);
	for (i = 0; i < RW_WRITER_ITERS; i++) {
		/*
		 * Odd rounds try first; trylock alone could fail for as long
		 * as readers keep overlapping, so fall back to waiting.
		 */
		if (!(i & 1) || !write_trylock(&sh->lock))
			write_lock(&sh->lock);
		sh->a++;
		/*
		 * Give up the CPU with a != b: any reader that runs now
		 * must find the lock taken, whatever the scheduler does.
		 */
		cpu_relax();
		sh->b++;
		write_unlock(&sh->lock);
	}
	return NULL;
}

static void *rw_reader_thread(void *p)
{
	struct rw_reader_result *res = p;
	struct rw_shared *sh = res->sh;
	uint64_t a, b, last_a = 0;
	uint32_t inside;
	int i;

	pthread_barrier_wait(&sh->start);
	for (i = 0; i < RW_READER_ITERS; i++) {
		if (!(i & 1) || !read_trylock(&sh->lock))
			read_lock(&sh->lock);
		a = sh->a;
		inside = rwlock_readers(&sh->lock);
		b = sh->b;
		read_unlock(&sh->lock);
		res->broken += a != b;
		res->went_back += a < last_a;
		res->mid_run += a > 0 &&
				a < (uint64_t)RW_WRITERS * RW_WRITER_ITERS;
		res->max_readers = MAX(res->max_readers, inside);
		last_a = a;
	}
	return NULL;
}

KTEST(rwlock, invariant_under_readers_and_writers)
{
	static struct rw_shared sh;
	struct rwlock_stats st = RWLOCK_STATS_INIT("invariant");
	struct rw_reader_result res[RW_READERS];
	struct host_thread_group writers, readers;
	uint64_t broken = 0, went_back = 0, mid_run = 0;
	uint32_t max_readers = 0;
	char line[256];
	int i;

	memset(&sh, 0, sizeof(sh));
	memset(res, 0, sizeof(res));
	rwlock_init(&sh.lock, &st);
	pthread_barrier_init(&sh.start, NULL, RW_WRITERS + RW_READERS);
	for (i = 0; i < RW_READERS; i++)
		res[i].sh = &sh;
	host_thread_group_start(&readers, RW_READERS, rw_reader_thread, res,
				sizeof(res[0]));
	host_thread_group_start(&writers, RW_WRITERS, rw_writer_thread, &sh, 0);
	host_thread_group_join(&writers);
	host_thread_group_join(&readers);
	for (i = 0; i < RW_READERS; i++) {
		broken += res[i].broken;
		went_back += res[i].went_back;
		mid_run += res[i].mid_run;
		max_readers = MAX(max_readers, res[i].max_readers);
	}
	pthread_barrier_destroy(&sh.start);

	EXPECT_EQ(sh.a, (uint64_t)RW_WRITERS * RW_WRITER_ITERS);
	EXPECT_EQ(sh.b, sh.a);
	EXPECT_EQ(broken, 0);
	EXPECT_EQ(went_back, 0);
	EXPECT_EQ(st.write.acquisitions,
		  (uint64_t)RW_WRITERS * RW_WRITER_ITERS);
	EXPECT_EQ(st.read.acquisitions,
		  (uint64_t)RW_READERS * RW_READER_ITERS);
	EXPECT_GE(max_readers, 1);
	EXPECT_EQ(atomic_load_relaxed(&sh.lock.cnts), 0);
	/* How much the two sides overlapped: informative, not checked. */
	ktest_diag("reads during the writes: %llu, most readers inside: %u",
		   (unsigned long long)mid_run, max_readers);
	lock_stats_format(line, sizeof(line), &st.read, "read");
	ktest_diag("%s", line);
	lock_stats_format(line, sizeof(line), &st.write, "write");
	ktest_diag("%s", line);
}
