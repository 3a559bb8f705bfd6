/*
 * Read-copy-update for a kernel without preemption: quiescent-state based
 * (the scheme of Linux's classic and Tiny RCU, not its preemptible one).
 *
 * Readers bracket their accesses with rcu_read_lock()/rcu_read_unlock(),
 * which only count a per-CPU nesting depth: no store to shared memory, no
 * barrier. Since nothing preempts a CPU, a CPU that is seen outside every
 * read-side section at some moment (a "quiescent state") holds no pointer
 * it found inside one. Updaters unpublish an object, then either wait with
 * synchronize_rcu() until every online CPU has passed a quiescent state
 * (a "grace period") or queue the free with call_rcu(), which runs the
 * callback after such a grace period, in batches.
 *
 * Nobody can observe a CPU's quiescent states for it: the code reports
 * them by calling rcu_quiescent_state() at points where it holds no RCU-
 * protected pointer (between work items, in barrier and completion waits,
 * in the client loops of long benchmarks). A CPU that halts or leaves is
 * in an "extended" quiescent state between rcu_idle_enter() and
 * rcu_idle_exit(): grace periods do not wait for it. CPUs start idle;
 * each one calls rcu_idle_exit() when it starts running code that reads.
 *
 * When a grace period waits too long for a CPU, synchronize_rcu() asks the
 * kick hook (the kernel sends a cross-CPU call) to interrupt it; the
 * interrupt handler calls rcu_qs_unless_reading(), which counts as a quiescent
 * state only when the interrupted code was outside every read-side section.
 *
 * Portable: the CPU number comes from lib/this_cpu.h (one GS-relative
 * load in the kernel, a thread-local variable in host builds, where each
 * thread plays a CPU).
 */
#ifndef LIB_RCU_H
#define LIB_RCU_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/atomic.h"
#include "lib/compiler.h"
#include "lib/config.h"
#include "lib/this_cpu.h"

/* CPU numbers RCU tracks: all of them. */
#define RCU_MAX_CPUS MAX_CPUS

/* Debug checks of the read-side nesting (on unless built with RCU_DEBUG=0). */
#ifndef RCU_DEBUG
#define RCU_DEBUG 1
#endif
/* Deeper nesting than this means an unbalanced rcu_read_lock(). */
#define RCU_MAX_NESTING 64

/* A deferred call: embed it in the object to free. */
struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
	uint64_t gp; /* grace period that must complete before func runs */
};

/* Per-CPU state, one cache line each (written by its CPU only, except the
 * kick counter). */
struct rcu_cpu {
	uint32_t nesting;  /* read-side depth; 0 outside every section */
	uint32_t idle;     /* 1: extended quiescent state (idle, offline) */
	uint64_t qs_gp;    /* grace period seen at the last quiescent state */
	uint64_t qs_count; /* quiescent states reported (statistics) */
	uint64_t kicks;    /* times a grace period interrupted this CPU */
	uint64_t fence;    /* target of full-fence RMWs (rcu.c) */
} __aligned(64);

extern struct rcu_cpu rcu_cpus[RCU_MAX_CPUS];

/*
 * Set the kick hook (called with a CPU number that holds up a grace
 * period; may be NULL). Call once before any other function; every CPU
 * starts idle.
 */
void rcu_init(void (*kick)(unsigned cpu));

/* Reports an rcu_read_lock()/unlock() misuse (the debug checks). */
__attribute__((noreturn)) void rcu_read_lock_bug(uint32_t nesting);

static inline struct rcu_cpu *rcu_this_cpu(void)
{
	return &rcu_cpus[this_cpu_num()];
}

/*
 * Enter and leave a read-side section; they nest. Pointers loaded with
 * rcu_dereference() inside stay valid until the matching unlock. The
 * section must not wait for a grace period nor report a quiescent state.
 */
static inline void rcu_read_lock(void)
{
	struct rcu_cpu *c = rcu_this_cpu();
	uint32_t n = READ_ONCE(c->nesting);

#if RCU_DEBUG
	if (n >= RCU_MAX_NESTING || READ_ONCE(c->idle))
		rcu_read_lock_bug(n);
#endif
	WRITE_ONCE(c->nesting, n + 1);
	barrier();
}

static inline void rcu_read_unlock(void)
{
	struct rcu_cpu *c = rcu_this_cpu();
	uint32_t n = READ_ONCE(c->nesting);

	barrier();
#if RCU_DEBUG
	if (n == 0)
		rcu_read_lock_bug(n);
#endif
	WRITE_ONCE(c->nesting, n - 1);
}

/* True inside a read-side section on this CPU. */
static inline bool rcu_read_lock_held(void)
{
	return READ_ONCE(rcu_this_cpu()->nesting) != 0;
}

/* Load an RCU-protected pointer (pairs with rcu_assign_pointer()). */
#define rcu_dereference(p) atomic_load_acquire(&(p))
/* Publish v: everything written to *v before is visible to readers. */
#define rcu_assign_pointer(p, v) atomic_store_release(&(p), (v))

/*
 * This CPU holds no RCU-protected pointer now. Records the quiescent
 * state, helps the current grace period along and runs callbacks whose
 * grace period is over (so it must not be called with a lock that a
 * callback takes). Panics (debug) inside a read-side section.
 */
void rcu_quiescent_state(void);

/*
 * From an interrupt handler or a wait loop: a quiescent state if the
 * interrupted (or waiting) code is outside every read-side section, else
 * nothing. Runs no callback, takes no lock.
 */
void rcu_qs_unless_reading(void);

/* This CPU stops (idle, halted, leaving) / resumes running readers. */
void rcu_idle_enter(void);
void rcu_idle_exit(void);

/*
 * Around interrupt handlers that may read: an interrupt can wake an idle
 * CPU, whose readers grace periods would not wait for. rcu_irq_enter()
 * leaves the idle state if the CPU was in it and returns whether it was;
 * rcu_irq_exit() gets that value and goes back.
 */
static inline bool rcu_irq_enter(void)
{
	bool was_idle = READ_ONCE(rcu_this_cpu()->idle) != 0;

	if (was_idle)
		rcu_idle_exit();
	return was_idle;
}

static inline void rcu_irq_exit(bool was_idle)
{
	if (was_idle)
		rcu_idle_enter();
}

/*
 * Wait until every CPU that was online at the call has passed a quiescent
 * state (a full grace period), reporting this CPU's own quiescent states
 * meanwhile. Not from a read-side section (panics in debug builds).
 */
void synchronize_rcu(void);

/* Run func(head) on some CPU after a grace period; never waits. */
void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head));

/* Wait until every callback queued before the call has run. */
void rcu_barrier(void);

struct rcu_stats {
	uint64_t gp_started;    /* grace periods started */
	uint64_t gp_completed;  /* grace periods completed */
	uint64_t cbs_queued;    /* call_rcu() calls */
	uint64_t cbs_invoked;   /* callbacks run */
	uint64_t max_batch;     /* most callbacks run in one batch */
	uint64_t kicks;         /* cross-CPU kicks sent */
};

void rcu_stats_get(struct rcu_stats *out);

#endif
