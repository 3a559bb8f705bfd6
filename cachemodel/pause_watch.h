/*
 * What a polling CPU watches while it pause-waits (cachemodel/pace.h,
 * invariant 7): the lines its loop touched in the turn before its
 * `pause`. A poll loop touches what it polls and little else (the flag,
 * perhaps a stack slot), so a write to another line of its caches cannot
 * end the loop; waking it for one costs a host sleep and wake-up and a
 * turn that changes nothing. The plugin pokes a pause-waiter only for a
 * write to a watched line (cachemodel/plugin.c, invariant 4).
 *
 * Invariants:
 *  1. seen[] and nseen are the vCPU's own: the lines of the accesses it
 *     made since its last pause, in order of first touch, while there
 *     are at most PAUSE_WATCH_LINES of them; nseen counts on to
 *     PAUSE_WATCH_LINES + 1 and then stops (the turn touched too many to
 *     watch, or was not a poll loop's: the first pause of a loop).
 *  2. At a pause the vCPU publishes seen[] as line[] and n (n last,
 *     release), then restarts seen[]; only after that does it announce
 *     the pause-wait (pace_pause() stores pw_deadline, seq_cst). A
 *     thread that sees the pause-wait announced (seq_cst load) and then
 *     loads n (acquire) reads the watch of that pause or of a later one.
 *  3. A watch with n > PAUSE_WATCH_LINES watches every line: nothing is
 *     left out because the turn was long. Loads and stores alike are
 *     seen (a test-and-set loop polls with locked stores).
 */
#ifndef CACHEMODEL_PAUSE_WATCH_H
#define CACHEMODEL_PAUSE_WATCH_H

#include <stdbool.h>
#include <stdint.h>

/* Lines one turn of a poll loop may touch and still be watched line by
 * line: tbench's loops touch one to three. */
#define PAUSE_WATCH_LINES 8

struct pause_watch {
	uint64_t seen[PAUSE_WATCH_LINES];	/* own thread (invariant 1) */
	uint32_t nseen;
	uint64_t line[PAUSE_WATCH_LINES];	/* published (invariant 2) */
	uint32_t n;				/* atomic */
};

/* The owner touched line (any access). Cheap once the turn overflowed. */
static inline void pause_watch_note(struct pause_watch *w, uint64_t line)
{
	uint32_t k = w->nseen;

	if (k > PAUSE_WATCH_LINES)
		return;
	for (uint32_t i = 0; i < k; i++)
		if (w->seen[i] == line)
			return;
	if (k < PAUSE_WATCH_LINES)
		w->seen[k] = line;
	w->nseen = k + 1;
}

/* The owner pauses: publish the turn's lines as the watch, start a new
 * turn (invariant 2). Call before announcing the pause-wait. */
static inline void pause_watch_publish(struct pause_watch *w)
{
	uint32_t k = w->nseen;

	for (uint32_t i = 0; i < k && i < PAUSE_WATCH_LINES; i++)
		__atomic_store_n(&w->line[i], w->seen[i], __ATOMIC_RELAXED);
	__atomic_store_n(&w->n, k, __ATOMIC_RELEASE);
	w->nseen = 0;
}

/* Any thread, after seeing the owner's pause-wait announced: does the
 * watch hold a line of first..last (a write's lines)? */
static inline bool pause_watch_has(const struct pause_watch *w,
				   uint64_t first, uint64_t last)
{
	uint32_t k = __atomic_load_n(&w->n, __ATOMIC_ACQUIRE);

	if (k > PAUSE_WATCH_LINES)
		return true;
	for (uint32_t i = 0; i < k; i++) {
		uint64_t l = __atomic_load_n(&w->line[i], __ATOMIC_RELAXED);

		if (l >= first && l <= last)
			return true;
	}
	return false;
}

#endif
