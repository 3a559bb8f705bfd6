/*
 * Reader-writer spinlock with optional statistics, split read/write.
 *
 * Built for seed 002 (lockless page cache), which compares a radix tree
 * under this lock with a lockless one as clients are added: the rwlock
 * side must scale for readers as well as such a lock can, so readers
 * share one atomic add on one word and nothing else.
 *
 * Policy: fair, queued (the scheme of Linux's qrwlock). One 32-bit word
 * holds the state:
 *
 *    31                          2   1   0
 *   +-----------------------------+---+---+
 *   |        reader count         | W | L |   L: a writer holds the lock
 *   +-----------------------------+---+---+   W: a writer waits for it
 *
 * A reader adds one reader and is done if neither L nor W is set. Else it
 * backs out and queues on a ticket spinlock (the wait queue) behind
 * whoever came first. A writer that finds the word non-zero queues too;
 * at the head of the queue it sets W, which turns new readers away, and
 * waits for the readers inside to leave. So neither side starves: a
 * stream of readers cannot keep a writer out (pure reader preference
 * would), and waiting readers are not overtaken by every later writer
 * (pure writer preference would). Readers queued behind a writer enter
 * one after another as soon as it leaves, without waiting for each other.
 *
 * Consequence: read_lock() is not recursive. A CPU holding a read lock
 * that takes it again while a writer waits deadlocks (the second read
 * queues behind the writer, which waits for the first). Interrupt
 * handlers that read-lock follow the same rule as for spinlocks: arch/
 * will provide irqsave wrappers.
 */
#ifndef LIB_RWLOCK_H
#define LIB_RWLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/atomic.h"
#include "lib/spinlock.h"

#define RW_WRITER_LOCKED (1u << 0)
#define RW_WRITER_WAITING (1u << 1)
#define RW_WRITER_MASK (RW_WRITER_LOCKED | RW_WRITER_WAITING)
#define RW_READER_SHIFT 2
#define RW_READER_BIAS (1u << RW_READER_SHIFT)
/* More readers than this means an unbalanced read_lock or a corrupt word. */
#define RW_MAX_READERS (1u << 24)

/* Read-side and write-side statistics of one rwlock (or a class). */
struct rwlock_stats {
	struct lock_stats read;
	struct lock_stats write;
};

#define RWLOCK_STATS_INIT(name_)                                            \
	{ .read = LOCK_STATS_INIT(name_), .write = LOCK_STATS_INIT(name_) }

struct rwlock {
	uint32_t cnts;               /* reader count and W, L bits */
	struct spinlock wait;        /* FIFO of contended lockers */
	struct rwlock_stats *stats;  /* NULL: statistics off */
};

#define RWLOCK_INIT(stats_)                                                 \
	{ .cnts = 0, .wait = SPINLOCK_INIT(NULL), .stats = (stats_) }

/* Initialise an unlocked rwlock; stats may be NULL. */
void rwlock_init(struct rwlock *l, struct rwlock_stats *stats);

/* Shared acquire/release. Not recursive (see above). */
void read_lock(struct rwlock *l);
void read_unlock(struct rwlock *l);

/* Exclusive acquire/release. */
void write_lock(struct rwlock *l);
void write_unlock(struct rwlock *l);

/*
 * Acquire without waiting; true if now held. read_trylock() fails while
 * a writer holds the lock or waits for it.
 */
bool read_trylock(struct rwlock *l);
bool write_trylock(struct rwlock *l);

/* Hints for assertions and tests: the state may change at once. */
static inline uint32_t rwlock_readers(const struct rwlock *l)
{
	return atomic_load_relaxed(&l->cnts) >> RW_READER_SHIFT;
}

static inline bool rwlock_is_write_locked(const struct rwlock *l)
{
	return atomic_load_relaxed(&l->cnts) & RW_WRITER_LOCKED;
}

static inline bool rwlock_writer_waiting(const struct rwlock *l)
{
	return atomic_load_relaxed(&l->cnts) & RW_WRITER_WAITING;
}

/* Print two lockstat lines, mode=read and mode=write. */
void rwlock_stats_print(const struct rwlock_stats *s);

#endif
