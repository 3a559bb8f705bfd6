/*
 * lib/rcu.c under ThreadSanitizer, each thread playing a CPU. Readers
 * follow a published pointer and check the object is alive; an updater
 * replaces it and frees the old one after a grace period (synchronize_rcu
 * or call_rcu), poisoning it first. A grace period that ends too early
 * shows up as a reader seeing the poison, or as a TSan race between the
 * poisoning store and a reader's load.
 */
// HOST_SRCS: lib/rcu.c lib/spinlock.c tests/host/host_cycles.c tests/host/host_cpu.c
// HOST_SANITIZE: thread
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "lib/ktest.h"
#include "lib/rcu.h"
#include "tests/host/host_shim.h"
#include "tests/host/host_thread_group.h"

#define NR_READERS 3
#define UPDATES 400
#define OBJ_ALIVE 0x600dull
#define OBJ_DEAD 0xdeadull

struct obj {
	uint64_t magic;
	uint64_t value;
	struct rcu_head rcu;
};

static struct obj *shared;
static uint64_t stop, bad_reads, reads, freed;

static void poison_free(struct obj *o)
{
	/* Plain stores: a reader still inside would race with them. */
	o->magic = OBJ_DEAD;
	o->value = 0;
	free(o);
	atomic_fetch_add_relaxed(&freed, 1);
}

static void obj_free_rcu(struct rcu_head *h)
{
	poison_free((struct obj *)((char *)h - offsetof(struct obj, rcu)));
}

/* arg: the reader's CPU number (an unsigned). */
static void *reader(void *arg)
{
	this_cpu_num_set(*(const unsigned *)arg);
	rcu_idle_exit();
	while (!atomic_load_acquire(&stop)) {
		for (int i = 0; i < 64; i++) {
			struct obj *o;

			rcu_read_lock();
			o = rcu_dereference(shared);
			if (o->magic != OBJ_ALIVE || o->value == 0)
				atomic_fetch_add_relaxed(&bad_reads, 1);
			rcu_read_unlock();
			atomic_fetch_add_relaxed(&reads, 1);
		}
		rcu_quiescent_state();
	}
	rcu_idle_enter();
	return NULL;
}

static struct obj *new_obj(uint64_t v)
{
	struct obj *o = malloc(sizeof(*o));

	o->magic = OBJ_ALIVE;
	o->value = v;
	return o;
}

static void run(bool use_call_rcu, struct rcu_stats *before,
		struct rcu_stats *after)
{
	static unsigned cpu[NR_READERS];
	struct host_thread_group readers;

	rcu_stats_get(before);
	atomic_store_relaxed(&stop, 0);
	rcu_assign_pointer(shared, new_obj(1));
	for (unsigned i = 0; i < NR_READERS; i++)
		cpu[i] = i + 1; /* the updater is CPU 0 */
	host_thread_group_start(&readers, NR_READERS, reader, cpu,
				sizeof(cpu[0]));
	for (uint64_t v = 2; v < UPDATES; v++) {
		struct obj *old = shared;

		rcu_assign_pointer(shared, new_obj(v));
		if (use_call_rcu) {
			call_rcu(&old->rcu, obj_free_rcu);
			rcu_quiescent_state();
		} else {
			synchronize_rcu();
			poison_free(old);
		}
	}
	rcu_barrier();
	atomic_store_release(&stop, 1);
	host_thread_group_join(&readers);
	rcu_stats_get(after);
	poison_free(shared);
}

KTEST(rcu, synchronize_waits_for_readers)
{
	rcu_init(NULL);
	this_cpu_num_set(0);
	rcu_idle_exit();
	struct rcu_stats a, b;

	freed = 0;
	run(false, &a, &b);
	EXPECT_EQ(bad_reads, 0);
	EXPECT_GT(reads, 0);
	EXPECT_EQ(freed, UPDATES - 1);
	EXPECT_GE(b.gp_completed - a.gp_completed, UPDATES - 2);
	rcu_idle_enter();
}

KTEST(rcu, call_rcu_batches)
{
	rcu_init(NULL);
	this_cpu_num_set(0);
	rcu_idle_exit();
	struct rcu_stats a, b;

	freed = 0;
	run(true, &a, &b);
	EXPECT_EQ(bad_reads, 0);
	EXPECT_EQ(freed, UPDATES - 1);
	EXPECT_EQ(b.cbs_invoked, b.cbs_queued);
	EXPECT_EQ(b.cbs_queued - a.cbs_queued, UPDATES - 2);
	EXPECT_GT(b.gp_completed, a.gp_completed);
	/* Batched: fewer grace periods than callbacks. */
	EXPECT_LT(b.gp_completed - a.gp_completed, UPDATES - 2);
	rcu_idle_enter();
}

KTEST(rcu, idle_cpus_do_not_hold_grace_periods)
{
	struct rcu_stats a, b;

	rcu_init(NULL);
	this_cpu_num_set(0);
	rcu_idle_exit();
	rcu_stats_get(&a);
	/* Only CPU 0 is online: no other CPU is waited for. */
	synchronize_rcu();
	synchronize_rcu();
	rcu_stats_get(&b);
	EXPECT_GE(b.gp_completed - a.gp_completed, 2);
	rcu_idle_enter();
}

KTEST(rcu, debug_checks_catch_misuse)
{
	rcu_init(NULL);
	this_cpu_num_set(0);
	/* A reader on a CPU that is idle (never came online). */
	EXPECT_TRUE(HOST_EXPECT_PANIC(rcu_read_lock()));
	rcu_idle_exit();
	EXPECT_TRUE(HOST_EXPECT_PANIC(rcu_read_unlock()));
	rcu_read_lock();
	EXPECT_TRUE(rcu_read_lock_held());
	EXPECT_TRUE(HOST_EXPECT_PANIC(synchronize_rcu()));
	EXPECT_TRUE(HOST_EXPECT_PANIC(rcu_quiescent_state()));
	rcu_read_unlock();
	EXPECT_FALSE(rcu_read_lock_held());
	rcu_idle_enter();
}

KTEST(rcu, irq_on_an_idle_cpu_may_read)
{
	bool was_idle;

	rcu_init(NULL);
	this_cpu_num_set(0);
	/* Idle: a reader would panic (see debug_checks_catch_misuse). */
	was_idle = rcu_irq_enter();
	EXPECT_TRUE(was_idle);
	rcu_read_lock();
	rcu_read_unlock();
	rcu_irq_exit(was_idle);
	EXPECT_EQ(rcu_this_cpu()->idle, 1);
	/* On a running CPU the pair changes nothing. */
	rcu_idle_exit();
	was_idle = rcu_irq_enter();
	EXPECT_FALSE(was_idle);
	rcu_irq_exit(was_idle);
	EXPECT_EQ(rcu_this_cpu()->idle, 0);
	rcu_idle_enter();
}
