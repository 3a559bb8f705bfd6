/*
 * Fair queued reader-writer lock (see lib/rwlock.h for the policy).
 *
 * Orderings: every acquisition ends with an acquire operation on cnts
 * that reads a value written by a release operation of the previous
 * holder's unlock (read_unlock's and write_unlock's release subtractions),
 * so a writer sees all that readers before it read and all that earlier
 * writers wrote, and readers see all that earlier writers wrote.
 *
 * The wait queue is held only while queuing; nobody holds it while
 * holding the rwlock itself, so it never nests the other way round.
 */
#include "lib/rwlock.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/compiler.h"
#include "lib/cycles.h"
#include "lib/spinlock.h"

void rwlock_init(struct rwlock *l, struct rwlock_stats *stats)
{
	atomic_store_relaxed(&l->cnts, 0);
	spin_lock_init(&l->wait, NULL);
	l->stats = stats;
}

/*
 * Contended reader: queue in FIFO order. At the head of the queue no
 * writer is waiting (a waiting writer holds the queue until it owns the
 * lock), so count ourselves in and wait only for a writer that holds it.
 */
static void read_lock_slow(struct rwlock *l)
{
	uint64_t start = l->stats ? cycles_now() : 0;

	spin_lock(&l->wait);
	atomic_fetch_add_acquire(&l->cnts, RW_READER_BIAS);
	while (atomic_load_acquire(&l->cnts) & RW_WRITER_LOCKED)
		cpu_relax();
	spin_unlock(&l->wait);
	if (l->stats)
		lock_stats_record(&l->stats->read, true,
				  cycles_now() - start);
}

void read_lock(struct rwlock *l)
{
	uint32_t c = atomic_fetch_add_acquire(&l->cnts, RW_READER_BIAS);

	kassert((c >> RW_READER_SHIFT) < RW_MAX_READERS);
	if (likely(!(c & RW_WRITER_MASK))) {
		if (l->stats)
			lock_stats_record(&l->stats->read, false, 0);
		return;
	}
	/* A writer holds or awaits the lock: undo, and queue behind it. */
	atomic_fetch_sub_relaxed(&l->cnts, RW_READER_BIAS);
	read_lock_slow(l);
}

void read_unlock(struct rwlock *l)
{
	uint32_t c = atomic_fetch_sub_release(&l->cnts, RW_READER_BIAS);

	kassert((c >> RW_READER_SHIFT) != 0);
	kassert(!(c & RW_WRITER_LOCKED));
}

bool read_trylock(struct rwlock *l)
{
	uint32_t c = atomic_load_relaxed(&l->cnts);
	bool taken = false;

	if (!(c & RW_WRITER_MASK)) {
		c = atomic_fetch_add_acquire(&l->cnts, RW_READER_BIAS);
		taken = !(c & RW_WRITER_MASK);
		if (!taken)
			atomic_fetch_sub_relaxed(&l->cnts, RW_READER_BIAS);
	}
	if (l->stats) {
		if (taken)
			lock_stats_record(&l->stats->read, false, 0);
		else
			atomic_fetch_add_relaxed(
				&l->stats->read.trylock_failures, 1);
	}
	return taken;
}

/*
 * Contended writer: queue, then at the head announce ourselves with W so
 * no new reader enters, and take L once the readers inside have left
 * (and a writer that got in without queuing has gone).
 */
static void write_lock_slow(struct rwlock *l)
{
	uint64_t start = l->stats ? cycles_now() : 0;

	spin_lock(&l->wait);
	atomic_fetch_or_relaxed(&l->cnts, RW_WRITER_WAITING);
	for (;;) {
		if (atomic_load_relaxed(&l->cnts) == RW_WRITER_WAITING &&
		    atomic_cmpxchg(&l->cnts, RW_WRITER_WAITING,
				   RW_WRITER_LOCKED) == RW_WRITER_WAITING)
			break;
		cpu_relax();
	}
	spin_unlock(&l->wait);
	if (l->stats)
		lock_stats_record(&l->stats->write, true,
				  cycles_now() - start);
}

void write_lock(struct rwlock *l)
{
	if (likely(atomic_cmpxchg(&l->cnts, 0, RW_WRITER_LOCKED) == 0)) {
		if (l->stats)
			lock_stats_record(&l->stats->write, false, 0);
		return;
	}
	write_lock_slow(l);
}

void write_unlock(struct rwlock *l)
{
	uint32_t c = atomic_fetch_sub_release(&l->cnts, RW_WRITER_LOCKED);

	kassert(c & RW_WRITER_LOCKED);
}

bool write_trylock(struct rwlock *l)
{
	bool taken = atomic_load_relaxed(&l->cnts) == 0 &&
		     atomic_cmpxchg(&l->cnts, 0, RW_WRITER_LOCKED) == 0;

	if (l->stats) {
		if (taken)
			lock_stats_record(&l->stats->write, false, 0);
		else
			atomic_fetch_add_relaxed(
				&l->stats->write.trylock_failures, 1);
	}
	return taken;
}

void rwlock_stats_print(const struct rwlock_stats *s)
{
	lock_stats_print_mode(&s->read, "read");
	lock_stats_print_mode(&s->write, "write");
}
