/*
 * Locked read-modify-writes from TCG to the engine (cachemodel/locked.h
 * has the contract, the invariants and the why).
 */
#include <stdint.h>
#include "cachemodel/locked.h"
#include "cachemodel/model.h"
#include "cachemodel/pace.h"

void locked_before(struct locked_rmw *r, struct cm_model *m,
		   pthread_mutex_t *engine_lock, struct pace *p, unsigned cpu)
{
	struct cm_stats s;

	if (!p || !pace_on(p) || r->started)
		return;		/* the load charges it; or charged (inv. 3) */
	pthread_mutex_lock(engine_lock);
	cm_locked_start(m, cpu);
	pthread_mutex_unlock(engine_lock);
	r->started = true;
	/* cpu's busy cycles, now past the drain (cpu's own counters). */
	cm_stats_read(m, cpu, &s);
	pace_tick(p, cpu, cm_cycles(m, &s));
	cm_set_skip(m, cpu, pace_skip(p, cpu));
}

unsigned locked_access(struct locked_rmw *r, unsigned flags,
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
	r->started = false;
	return out;
}
