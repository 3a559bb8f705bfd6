/*
 * Ticket spinlock with optional wait statistics.
 *
 * A ticket lock is a bakery queue: spin_lock() takes the next ticket with
 * one atomic add and spins until "now serving" (owner) reaches it;
 * spin_unlock() advances owner. Waiters are served in arrival order (no
 * starvation, unlike a test-and-set lock), and the hand-over is one
 * release store, but every waiter polls the same cache line.
 *
 *   next  : 0 1 2 3 4 5 ...   ticket dispenser (fetch_add by lockers)
 *   owner :     ^             ticket now served (stored by the holder)
 *   held when owner != next; waiters queued = next - owner - 1
 *
 * Statistics are per lock and chosen when the lock is initialised: a NULL
 * stats pointer costs one predictable branch. Several locks may share one
 * struct lock_stats (all updates are atomic), e.g. to sum a lock class.
 *
 * Nothing here disables interrupts: that is the architecture's business.
 * The irqsave variants (spin_lock_irqsave() ...) will wrap these in arch/.
 * A lock that an interrupt handler takes must only be taken with
 * interrupts off elsewhere, or the handler can spin on its own CPU's lock.
 */
#ifndef LIB_SPINLOCK_H
#define LIB_SPINLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/atomic.h"

/*
 * Wait statistics of one lock (or one mode of an rwlock, or a class of
 * locks sharing the structure). Units of the cycle fields: cycles_now().
 */
struct lock_stats {
	const char *name;          /* for reports */
	uint64_t acquisitions;     /* successful locks and trylocks */
	uint64_t contended;        /* acquisitions that had to wait */
	uint64_t wait_cycles;      /* total time spent waiting */
	uint64_t max_wait_cycles;  /* longest single wait */
	uint64_t trylock_failures; /* trylocks that returned false */
};

#define LOCK_STATS_INIT(name_) { .name = (name_) }

struct spinlock {
	uint32_t next;  /* next ticket to hand out */
	uint32_t owner; /* ticket being served: the holder's ticket */
	struct lock_stats *stats; /* NULL: statistics off */
};

/* Static initialiser; stats_ may be NULL. */
#define SPINLOCK_INIT(stats_) { .next = 0, .owner = 0, .stats = (stats_) }

/*
 * More queued tickets than this means the lock is corrupt (uninitialised
 * memory, or an unlock without a lock): no machine has that many CPUs.
 */
#define SPIN_MAX_WAITERS (1u << 16)

/* Initialise an unlocked lock; stats may be NULL (statistics off). */
void spin_lock_init(struct spinlock *l, struct lock_stats *stats);

/* Acquire, spinning in FIFO order. Not recursive. */
void spin_lock(struct spinlock *l);

/* Release; the caller must hold the lock (kassert). */
void spin_unlock(struct spinlock *l);

/*
 * Acquire only if the lock is free and nobody queues for it; never waits.
 * Returns true if the lock is now held.
 */
bool spin_trylock(struct spinlock *l);

/* True while somebody holds the lock (a hint: it may change at once). */
static inline bool spin_is_locked(const struct spinlock *l)
{
	return atomic_load_relaxed(&l->owner) != atomic_load_relaxed(&l->next);
}

/* True while somebody waits behind the holder (a hint as well). */
static inline bool spin_is_contended(const struct spinlock *l)
{
	return (uint32_t)(atomic_load_relaxed(&l->next) -
			  atomic_load_relaxed(&l->owner)) > 1;
}

/*
 * Statistics. lock_stats_record() is for lock implementations: count one
 * acquisition that waited wait_cycles (contended) or did not.
 */
void lock_stats_record(struct lock_stats *s, bool contended,
		       uint64_t wait_cycles);
void lock_stats_reset(struct lock_stats *s);

/*
 * Machine-readable form of s: one line (no newline) in the style of
 * docs/output.md, a prefix and a JSON object, e.g.
 *   @@LOCKSTAT {"name":"pcache","mode":"read","acquisitions":10,
 *   "contended":2,"wait_cycles":900,"max_wait_cycles":700,
 *   "avg_wait_cycles":450,"trylock_failures":0}
 * (all on one line). mode names the lock kind: "spin", "read", "write".
 * Names are printed unescaped, so they must be plain identifiers of at
 * most LOCK_NAME_MAX characters (letters, digits, '_', '.', '-'; kassert).
 * Returns what ksnprintf() returns. Reads the counters while the lock may
 * be in use: concurrent updates can leave the fields slightly
 * inconsistent with each other.
 */
#define LOCK_STATS_PREFIX "@@LOCKSTAT "
#define LOCK_NAME_MAX 64
int lock_stats_format(char *buf, size_t size, const struct lock_stats *s,
		      const char *mode);

/* Print a human line, then the lock_stats_format() line, with kprintf(). */
void lock_stats_print_mode(const struct lock_stats *s, const char *mode);

/* Print the statistics of a spinlock (mode "spin"). */
void lock_stats_print(const struct lock_stats *s);

#endif
