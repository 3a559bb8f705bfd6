/*
 * Quiescent-state-based RCU (see rcu.h for the model and its contract).
 *
 * Grace periods are numbered. Global state:
 *
 *   gp_seq        number of the newest grace period started
 *   gp_done       number of the newest grace period completed
 *                 (gp_done == gp_seq: none in progress;
 *                  gp_done == gp_seq - 1: grace period gp_seq in progress)
 *   gp_needed     highest grace period somebody waits for
 *
 *   per CPU:  qs_gp  the gp_seq it read at its last quiescent state
 *             idle   1 while in an extended quiescent state
 *
 *   callbacks: one FIFO, each tagged with the grace period it needs
 *
 *      call_rcu            synchronize_rcu
 *         |  gp = gp_seq+1     |  gp = gp_seq+1
 *         v                    v
 *     gp_needed = max(gp_needed, gp) ----> advance(): start gp_seq+1 when
 *                                          none runs and one is needed;
 *                                          complete it when every CPU is
 *                                          idle or has qs_gp >= gp_seq
 *
 * Invariants:
 *  1. gp_done <= gp_seq <= gp_done + 1; both only grow, and only under
 *     gp_lock.
 *  2. A CPU's qs_gp = N means it was outside every read-side section at a
 *     moment after grace period N started (it read gp_seq == N after a
 *     full fence that follows its last read-side access).
 *  3. Grace period N completes only once every CPU has qs_gp >= N or was
 *     seen idle after N started: so every reader that could hold a
 *     pointer unpublished before N started has finished.
 *  4. A callback queued when gp_seq was S needs grace period S + 1 (the
 *     one in progress, if any, may have started before the unpublish).
 *     The FIFO's tags never decrease, so callbacks run in queue order;
 *     one CPU at a time invokes (invoke_lock), which makes rcu_barrier()
 *     a count comparison.
 *  5. Callbacks run in rcu_quiescent_state() or the waits that call it,
 *     never from an interrupt handler and never with gp_lock held.
 */
#include "lib/assert.h"
#include "lib/panic.h"
#include "lib/rcu.h"
#include "lib/spinlock.h"

/* A waiting synchronize_rcu() kicks laggards every this many polls. */
#define RCU_KICK_POLLS 4096

struct rcu_cpu rcu_cpus[RCU_MAX_CPUS];

static void (*rcu_kick)(unsigned cpu);

static uint64_t gp_seq, gp_done, gp_needed;
static struct spinlock gp_lock = SPINLOCK_INIT(NULL);

static struct spinlock cb_lock = SPINLOCK_INIT(NULL);
static struct rcu_head *cb_head, **cb_tail = &cb_head;
static uint64_t cb_pending; /* queued, not yet taken for invocation */
static struct spinlock invoke_lock = SPINLOCK_INIT(NULL);

static struct rcu_stats stats;

void rcu_read_lock_bug(uint32_t nesting)
{
	panic("rcu: read-side misuse on cpu %u: nesting %u%s", this_cpu_num(),
	      nesting,
	      READ_ONCE(rcu_cpus[this_cpu_num()].idle) ?
		      " (reader on a CPU marked idle)" :
		      " (unbalanced lock/unlock)");
}

void rcu_init(void (*kick)(unsigned cpu))
{
	rcu_kick = kick;
	for (unsigned i = 0; i < RCU_MAX_CPUS; i++) {
		atomic_store_relaxed(&rcu_cpus[i].nesting, 0);
		atomic_store_relaxed(&rcu_cpus[i].idle, 1);
		atomic_store_relaxed(&rcu_cpus[i].qs_gp, 0);
	}
}

/*
 * Full fence: a locked read-modify-write of this CPU's own word (an
 * mfence's cost on x86_64). Not smp_mb(): ThreadSanitizer models atomic
 * operations, not stand-alone fences, and must see these orderings.
 */
static void full_fence(struct rcu_cpu *c)
{
	__atomic_fetch_add(&c->fence, 1, __ATOMIC_SEQ_CST);
}

/* With RCU_DEBUG, report a caller that claims a quiescent state, or
 * waits for a grace period, inside a read-side critical section. */
static inline void check_not_reading(void)
{
#if RCU_DEBUG
	struct rcu_cpu *c = rcu_this_cpu();

	if (READ_ONCE(c->nesting))
		rcu_read_lock_bug(READ_ONCE(c->nesting));
#endif
}

/* Record a quiescent state of c (invariant 2). */
static void note_qs(struct rcu_cpu *c)
{
	uint64_t seen;

	full_fence(c); /* earlier read-side loads before the gp_seq read */
	seen = atomic_load_acquire(&gp_seq);
	if (seen > atomic_load_relaxed(&c->qs_gp))
		atomic_store_release(&c->qs_gp, seen);
	atomic_store_relaxed(&c->qs_count, c->qs_count + 1);
}

/* Is CPU i done with grace period gp (invariant 3)? */
static bool cpu_passed(unsigned i, uint64_t gp)
{
	return atomic_load_acquire(&rcu_cpus[i].qs_gp) >= gp ||
	       __atomic_load_n(&rcu_cpus[i].idle, __ATOMIC_SEQ_CST);
}

/* Start or complete a grace period if one is due. Returns the first CPU
 * still holding up the current grace period, or RCU_MAX_CPUS. */
static unsigned advance(bool wait_for_lock)
{
	unsigned laggard = RCU_MAX_CPUS;
	uint64_t seq;

	if (wait_for_lock)
		spin_lock(&gp_lock);
	else if (!spin_trylock(&gp_lock))
		return laggard;
	seq = atomic_load_relaxed(&gp_seq);
	if (seq != atomic_load_relaxed(&gp_done)) {
		for (unsigned i = 0; i < RCU_MAX_CPUS; i++)
			if (!cpu_passed(i, seq)) {
				laggard = i;
				break;
			}
		if (laggard == RCU_MAX_CPUS) {
			atomic_store_release(&gp_done, seq);
			atomic_fetch_add_relaxed(&stats.gp_completed, 1);
		}
	}
	if (atomic_load_relaxed(&gp_done) == seq &&
	    atomic_load_acquire(&gp_needed) > seq) {
		/* seq_cst: ordered against the idle flags read later */
		__atomic_store_n(&gp_seq, seq + 1, __ATOMIC_SEQ_CST);
		atomic_fetch_add_relaxed(&stats.gp_started, 1);
		laggard = 0;
	}
	spin_unlock(&gp_lock);
	return laggard;
}

/* The grace period a caller needs now (invariant 4), registered. */
static uint64_t need_gp(void)
{
	uint64_t gp;

	full_fence(rcu_this_cpu()); /* the unpublish before the gp_seq read */
	gp = atomic_load_acquire(&gp_seq) + 1;
	atomic_max_relaxed(&gp_needed, gp);
	return gp;
}

/* Run the callbacks whose grace period is over, one CPU at a time. */
static void invoke_callbacks(void)
{
	struct rcu_head *list, **tail;
	uint64_t done, n = 0;

	if (!atomic_load_relaxed(&cb_pending) || !spin_trylock(&invoke_lock))
		return;
	done = atomic_load_acquire(&gp_done);
	spin_lock(&cb_lock);
	list = cb_head;
	tail = &cb_head;
	while (*tail && (*tail)->gp <= done) {
		tail = &(*tail)->next;
		n++;
	}
	if (n == 0) {
		list = NULL;
	} else {
		cb_head = *tail;
		*tail = NULL;
		if (!cb_head)
			cb_tail = &cb_head;
		atomic_fetch_sub_relaxed(&cb_pending, n);
	}
	spin_unlock(&cb_lock);
	while (list) {
		struct rcu_head *next = list->next;

		list->func(list);
		list = next;
	}
	atomic_max_relaxed(&stats.max_batch, n);
	atomic_fetch_add_release(&stats.cbs_invoked, n);
	spin_unlock(&invoke_lock);
}

void rcu_quiescent_state(void)
{
	struct rcu_cpu *c = rcu_this_cpu();

	check_not_reading();
	note_qs(c);
	if (atomic_load_relaxed(&gp_needed) > atomic_load_relaxed(&gp_done))
		advance(false);
	invoke_callbacks();
}

void rcu_qs_unless_reading(void)
{
	struct rcu_cpu *c = rcu_this_cpu();

	if (READ_ONCE(c->nesting) == 0)
		note_qs(c);
}

void rcu_idle_enter(void)
{
	struct rcu_cpu *c = rcu_this_cpu();

	check_not_reading();
	note_qs(c);
	__atomic_store_n(&c->idle, 1, __ATOMIC_SEQ_CST);
}

void rcu_idle_exit(void)
{
	struct rcu_cpu *c = rcu_this_cpu();

	__atomic_store_n(&c->idle, 0, __ATOMIC_SEQ_CST);
	full_fence(c); /* later readers see what grace periods waited for */
	note_qs(c);
}

/* Wait until grace period gp completed, reporting our own quiescent
 * states and kicking a CPU that holds it up for long. */
static void wait_for_gp(uint64_t gp)
{
	uint64_t polls = 0;

	while (atomic_load_acquire(&gp_done) < gp) {
		unsigned laggard;

		note_qs(rcu_this_cpu());
		laggard = advance(true);
		if (atomic_load_acquire(&gp_done) >= gp)
			break;
		if (++polls % RCU_KICK_POLLS == 0 && rcu_kick &&
		    laggard < RCU_MAX_CPUS && laggard != this_cpu_num()) {
			atomic_fetch_add_relaxed(&rcu_cpus[laggard].kicks, 1);
			atomic_fetch_add_relaxed(&stats.kicks, 1);
			rcu_kick(laggard);
		}
		cpu_relax();
	}
}

void synchronize_rcu(void)
{
	check_not_reading();
	wait_for_gp(need_gp());
	invoke_callbacks();
}

void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	head->func = func;
	head->next = NULL;
	spin_lock(&cb_lock);
	/* Under cb_lock, so the FIFO's tags never decrease (invariant 4). */
	head->gp = need_gp();
	*cb_tail = head;
	cb_tail = &head->next;
	atomic_fetch_add_relaxed(&cb_pending, 1);
	atomic_fetch_add_relaxed(&stats.cbs_queued, 1);
	spin_unlock(&cb_lock);
}

void rcu_barrier(void)
{
	uint64_t queued = atomic_load_acquire(&stats.cbs_queued);
	uint64_t gp;

	spin_lock(&cb_lock);
	gp = cb_head ? atomic_load_relaxed(&gp_needed) : 0;
	spin_unlock(&cb_lock);
	if (gp)
		wait_for_gp(gp);
	while (atomic_load_acquire(&stats.cbs_invoked) < queued) {
		rcu_quiescent_state();
		cpu_relax();
	}
}

void rcu_stats_get(struct rcu_stats *out)
{
	out->gp_started = atomic_load_relaxed(&stats.gp_started);
	out->gp_completed = atomic_load_relaxed(&stats.gp_completed);
	out->cbs_queued = atomic_load_relaxed(&stats.cbs_queued);
	out->cbs_invoked = atomic_load_relaxed(&stats.cbs_invoked);
	out->max_batch = atomic_load_relaxed(&stats.max_batch);
	out->kicks = atomic_load_relaxed(&stats.kicks);
}
