/*
 * Locked read-modify-writes from TCG to the engine (cachemodel/locked.h
 * has the contract, the invariants and the why).
 */
#include <stdint.h>
#include "cachemodel/hash.h"
#include "cachemodel/locked.h"
#include "cachemodel/model.h"
#include "cachemodel/pace.h"

unsigned locked_slot(uint64_t vaddr)
{
	return (unsigned)fib_hash(vaddr, LOCKED_SLOT_BITS);
}

void locked_before(struct locked_rmw *r, struct cm_model *m,
		   pthread_mutex_t *engine_lock, struct pace *p, unsigned cpu,
		   unsigned slot)
{
	bool order, own = false;
	uint64_t last, busy;

	if (!p || !pace_on(p) || r->started)
		return;		/* the load charges it; or charged (inv. 3) */
	order = pace_ordering(p);
	slot %= LOCKED_SLOTS;
	last = r->last_line[slot];
	pthread_mutex_lock(engine_lock);
	cm_locked_start(m, cpu);
	/* Only ordering needs to know whose line it is (invariant 4). */
	if (order && last)
		own = cm_line_private(m, cpu, (last - 1) << CM_LINE_SHIFT);
	pthread_mutex_unlock(engine_lock);
	if (order && last && !own)
		r->contended[slot] = true;
	own = own && !r->contended[slot];
	r->started = true;
	r->slot = slot;
	/* cpu's busy cycles, now past the drain (cpu's own counters). */
	busy = cm_busy_cycles(m, cpu);
	pace_tick(p, cpu, busy);
	if (order && !own)
		pace_order(p, cpu, busy);	/* invariant 4 */
	cm_set_skip(m, cpu, pace_skip(p, cpu));
}

unsigned locked_access(struct locked_rmw *r, unsigned flags, uint64_t pa,
		       bool *load_first)
{
	unsigned out = flags | (r->started ? CM_LOCK_STARTED : 0);

	*load_first = false;
	if (!(flags & CM_STORE)) {
		r->load_seen = true;
		return out;
	}
	*load_first = !r->load_seen;
	r->load_seen = false;
	if (r->started)
		r->last_line[r->slot] = (pa >> CM_LINE_SHIFT) + 1;
	r->started = false;
	return out;
}
