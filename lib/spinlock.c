/*
 * Ticket spinlock and lock statistics (see lib/spinlock.h).
 *
 * Orderings: the holder's release store to owner, read by the next
 * ticket's acquire load of owner, carries the critical section from one
 * holder to the next. Taking a ticket needs no ordering of its own (the
 * acquire load that follows it provides it), so it is a relaxed add.
 */
#include "lib/spinlock.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/compiler.h"
#include "lib/cycles.h"
#include "lib/kprintf.h"

/*
 * One machine line: prefix and keys (~170 bytes), six 20-digit numbers
 * and two names fit; it also stays below kprintf's own buffer.
 */
#define LOCK_STATS_LINE_MAX 384

void spin_lock_init(struct spinlock *l, struct lock_stats *stats)
{
	atomic_store_relaxed(&l->next, 0);
	atomic_store_relaxed(&l->owner, 0);
	l->stats = stats;
}

void spin_lock(struct spinlock *l)
{
	uint32_t ticket = atomic_fetch_add_relaxed(&l->next, 1);
	uint32_t owner = atomic_load_acquire(&l->owner);
	uint64_t start;

	kassert((uint32_t)(ticket - owner) < SPIN_MAX_WAITERS);
	if (likely(owner == ticket)) {
		if (l->stats)
			lock_stats_record(l->stats, false, 0);
		return;
	}

	start = l->stats ? cycles_now() : 0;
	do {
		cpu_relax();
		owner = atomic_load_acquire(&l->owner);
	} while (owner != ticket);
	if (l->stats)
		lock_stats_record(l->stats, true, cycles_now() - start);
}

void spin_unlock(struct spinlock *l)
{
	/* Only the holder writes owner, so a relaxed read of it is exact. */
	uint32_t owner = atomic_load_relaxed(&l->owner);

	kassert(owner != atomic_load_relaxed(&l->next));
	atomic_store_release(&l->owner, owner + 1);
}

bool spin_trylock(struct spinlock *l)
{
	uint32_t owner = atomic_load_acquire(&l->owner);
	bool taken;

	/*
	 * Free and unqueued means next == owner; claim ticket owner by
	 * moving next past it. If next moved meanwhile somebody else got
	 * there first, and we must not wait.
	 */
	taken = atomic_load_relaxed(&l->next) == owner &&
		atomic_cmpxchg(&l->next, owner, owner + 1) == owner;
	if (l->stats) {
		if (taken)
			lock_stats_record(l->stats, false, 0);
		else
			atomic_fetch_add_relaxed(&l->stats->trylock_failures,
						 1);
	}
	return taken;
}

void lock_stats_record(struct lock_stats *s, bool contended,
		       uint64_t wait_cycles)
{
	/* Relaxed: the counters order nothing, they only have to add up. */
	atomic_fetch_add_relaxed(&s->acquisitions, 1);
	if (!contended)
		return;
	atomic_fetch_add_relaxed(&s->contended, 1);
	atomic_fetch_add_relaxed(&s->wait_cycles, wait_cycles);
	atomic_max_relaxed(&s->max_wait_cycles, wait_cycles);
}

void lock_stats_reset(struct lock_stats *s)
{
	atomic_store_relaxed(&s->acquisitions, 0);
	atomic_store_relaxed(&s->contended, 0);
	atomic_store_relaxed(&s->wait_cycles, 0);
	atomic_store_relaxed(&s->max_wait_cycles, 0);
	atomic_store_relaxed(&s->trylock_failures, 0);
}

/* True if name is short and can go into JSON unescaped. */
static bool lock_name_ok(const char *name)
{
	const char *start = name;

	if (!name || !*name)
		return false;
	for (; *name; name++) {
		if (name - start >= LOCK_NAME_MAX)
			return false;
		char c = *name;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return false;
	}
	return true;
}

/* A consistent-enough copy of the counters, and the mean wait. */
struct lock_stats_snap {
	unsigned long long acq, contended, wait, max_wait, avg_wait, tryfail;
};

static void lock_stats_snap(const struct lock_stats *s,
			    struct lock_stats_snap *o)
{
	o->acq = atomic_load_relaxed(&s->acquisitions);
	o->contended = atomic_load_relaxed(&s->contended);
	o->wait = atomic_load_relaxed(&s->wait_cycles);
	o->max_wait = atomic_load_relaxed(&s->max_wait_cycles);
	o->avg_wait = o->contended ? o->wait / o->contended : 0;
	o->tryfail = atomic_load_relaxed(&s->trylock_failures);
}

int lock_stats_format(char *buf, size_t size, const struct lock_stats *s,
		      const char *mode)
{
	struct lock_stats_snap v;

	kassert(lock_name_ok(s->name) && lock_name_ok(mode));
	lock_stats_snap(s, &v);
	return ksnprintf(buf, size,
			 LOCK_STATS_PREFIX "{\"name\":\"%s\",\"mode\":\"%s\","
			 "\"acquisitions\":%llu,\"contended\":%llu,"
			 "\"wait_cycles\":%llu,\"max_wait_cycles\":%llu,"
			 "\"avg_wait_cycles\":%llu,\"trylock_failures\":%llu}",
			 s->name, mode, v.acq, v.contended, v.wait, v.max_wait,
			 v.avg_wait, v.tryfail);
}

void lock_stats_print_mode(const struct lock_stats *s, const char *mode)
{
	struct lock_stats_snap v;
	char line[LOCK_STATS_LINE_MAX];

	lock_stats_snap(s, &v);
	kprintf("lock %-16s %-5s acquisitions %llu, contended %llu, "
		"wait cycles %llu (avg %llu, max %llu), "
		"trylock failures %llu\n",
		s->name, mode, v.acq, v.contended, v.wait, v.avg_wait,
		v.max_wait, v.tryfail);
	lock_stats_format(line, sizeof(line), s, mode);
	kprintf("%s\n", line);
}

void lock_stats_print(const struct lock_stats *s)
{
	lock_stats_print_mode(s, "spin");
}
