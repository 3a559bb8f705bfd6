/*
 * Host test of locked read-modify-writes on paced CPUs
 * (cachemodel/locked.c with the engine, cachemodel/model_*.c, and the
 * pacing, cachemodel/pace.c), under ThreadSanitizer. Two threads stand
 * for parallel TCG's vCPU threads and call what the plugin's callbacks
 * call: at each block cm_instructions() and pace_tick() (on_tb), before
 * each locked instruction locked_before() (the instruction callback),
 * then the host atomic operation itself, then locked_access() and the
 * engine (on_mem: one access, a store, as parallel TCG reports it).
 *
 * The program is SeaBIOS's start-up of an AP (src/fw/smp.c, smp_scan()
 * and the AP's trampoline; it hung the 20-cycle-quantum falseshare boot):
 * the BSP holds a lock and, until the AP has counted itself, releases it
 * and takes it back with `lock bts` after a pause; the AP spins with
 * pause and `lock bts` until it gets the lock. The window in which the
 * lock is free is a store's and a pause's, a few cycles; the BSP's `lock
 * bts` waits for that store to own its line (hundreds of cycles, the line
 * being the AP's). Charged after the RMW took effect, that wait put the
 * take-back in host order before every attempt of the AP, for ever;
 * charged before it, the AP, its clock earlier, tries first.
 *
 *  - the AP gets the lock within a handful of its attempts, in each of
 *    several hand-overs;
 *  - each RMW is counted once, with a store, on a paced run;
 *  - without pacing (one vCPU's path), an RMW's load and store charge
 *    the same as a start charged before its store alone.
 */
// HOST_SRCS: cachemodel/locked.c cachemodel/model_create.c cachemodel/model_access.c cachemodel/model_level.c cachemodel/model_memtype.c cachemodel/model_time.c cachemodel/model_coherence.c cachemodel/model_prefetch.c cachemodel/model_buffers.c cachemodel/model_readout.c cachemodel/pace.c cachemodel/profile.c
// HOST_SANITIZE: thread
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "cachemodel/locked.h"
#include "cachemodel/model.h"
#include "cachemodel/pace.h"
#include "cachemodel/profile.h"
#include "lib/ktest.h"
#include "tests/host/host_shim.h"
#include "tests/host/host_thread_group.h"

/* core2-2007's timing keys (cachemodel/profiles.txt): a store buffer, a
 * 174-cycle hand-over of a line between the cores, a 20-cycle RMW. */
static const char profile_text[] =
	"[pair]\n"
	"freq_mhz 2400\ncpi_x100 100\n"
	"l1d 32768 8 3\nl2 0 0 0\nllc 4194304 16 14\n"
	"mem_latency 200\nremote_latency 174\nuc_load 200\nuc_store 36\n"
	"wc_buffers 8\nwc_burst 18\nwc_chunk 18\nlocked 20\nfence 9\n"
	"clflush 50\nbus_cpus 2\nfill_buffers 8\nstore_buffer 20\n";

/* The falseshare boot's quantum, far below one hand-over. */
#define QUANTUM 20
#define BLOCKED_NS 20000000ll	/* pace.h's default */
/* The AP's attempts before the test calls it a livelock: with the start
 * charged first it needs one or two; charged after, hundreds of
 * thousands (the boot spun for minutes). */
#define MAX_ATTEMPTS 5000
#define ENOUGH_ATTEMPTS 8
/* Hand-overs per test, each from a fresh start: charged after the RMW,
 * one in ten or so escaped the lock step early (host timing, under
 * causality), so one round alone could pass without the fix. */
#define ROUNDS 5
/* SeaBIOS's variables, each in a line of its own (physical addresses). */
#define PA_LOCK 0xf5200u	/* SMPLock */
#define PA_STACK 0xf5240u	/* SMPStack */
#define PA_COUNT 0xf5280u	/* CountCPUs */
#define WORD 4u
/* Instructions per block: the BSP's loop test, stack and release store
 * and pause; a `lock bts` with its branch; a pause alone; the AP's work
 * between taking the lock and releasing it (handle_smp(), assumed). */
#define BSP_RELEASE_INSNS 5
#define BTS_INSNS 2
#define PAUSE_INSNS 1
#define AP_WORK_INSNS 200
#define BSP 0
#define AP 1

struct run {
	struct cm_model *m;
	struct pace *p;
	pthread_mutex_t lock;	/* the engine's (plugin.c's model_lock) */
	struct locked_rmw rmw[2];
	uint32_t smp_lock, count;	/* the guest's words (atomic) */
	uint32_t gave_up;	/* atomic: the AP stopped trying */
	uint64_t attempts;	/* the AP's */
	pthread_barrier_t bar;
};

struct arg {
	struct run *r;
	unsigned cpu;
};

/* on_tb: the block's instructions count, then cpu paces. */
static void block(struct run *r, unsigned cpu, unsigned insns)
{
	struct cm_stats s;

	cm_instructions(r->m, cpu, insns);
	cm_stats_read(r->m, cpu, &s);
	pace_tick(r->p, cpu, cm_cycles(r->m, &s));
	cm_set_skip(r->m, cpu, pace_skip(r->p, cpu));
}

/* on_mem's slow path: one access to the engine under its lock. */
static void access(struct run *r, unsigned cpu, uint64_t pa, unsigned flags)
{
	pthread_mutex_lock(&r->lock);
	cm_access(r->m, cpu, pa, WORD, flags);
	pthread_mutex_unlock(&r->lock);
}

/* A plain store the guest makes (TCG: the store, then on_mem). */
static void store(struct run *r, unsigned cpu, uint32_t *word, uint64_t pa,
		  uint32_t v)
{
	__atomic_store_n(word, v, __ATOMIC_SEQ_CST);
	access(r, cpu, pa, CM_STORE);
}

/* `lock bts $0, SMPLock` as parallel TCG runs it: the instruction
 * callback, the host atomic, one store reported. True if it was set. */
static bool lock_bts(struct run *r, unsigned cpu)
{
	bool load_first, was;
	unsigned flags;

	locked_before(&r->rmw[cpu], r->m, &r->lock, r->p, cpu, 0);
	was = __atomic_fetch_or(&r->smp_lock, 1u, __ATOMIC_SEQ_CST) & 1u;
	flags = locked_access(&r->rmw[cpu], CM_STORE | CM_LOCKED, PA_LOCK,
			      &load_first);
	if (load_first)
		access(r, cpu, PA_LOCK, flags & ~CM_STORE);
	access(r, cpu, PA_LOCK, flags);
	return was;
}

/* smp_scan(): holds the lock; lets it go and takes it back until the AP
 * has counted itself (or gave up). */
static void bsp(struct run *r)
{
	while (!__atomic_load_n(&r->count, __ATOMIC_SEQ_CST) &&
	       !__atomic_load_n(&r->gave_up, __ATOMIC_SEQ_CST)) {
		block(r, BSP, BSP_RELEASE_INSNS);
		access(r, BSP, PA_COUNT, 0);
		access(r, BSP, PA_STACK, CM_STORE);
		store(r, BSP, &r->smp_lock, PA_LOCK, 0);
		for (;;) {
			block(r, BSP, BTS_INSNS);
			if (!lock_bts(r, BSP) ||
			    __atomic_load_n(&r->gave_up, __ATOMIC_SEQ_CST))
				break;
			block(r, BSP, PAUSE_INSNS);
		}
	}
}

/* The AP's trampoline: pause, `lock bts` until it has the lock; count
 * itself, let the lock go, halt. */
static void ap(struct run *r)
{
	uint64_t n = 0;
	bool held;

	do {
		block(r, AP, PAUSE_INSNS);
		block(r, AP, BTS_INSNS);
		held = lock_bts(r, AP);
	} while (held && ++n < MAX_ATTEMPTS);
	r->attempts = held ? n : n + 1;
	if (held) {
		__atomic_store_n(&r->gave_up, 1, __ATOMIC_SEQ_CST);
	} else {
		block(r, AP, AP_WORK_INSNS);
		access(r, AP, PA_COUNT, 0);
		store(r, AP, &r->count, PA_COUNT, 1);
		store(r, AP, &r->smp_lock, PA_LOCK, 0);
	}
	pace_idle(r->p, AP);
}

static void *cpu_thread(void *a)
{
	struct arg *arg = a;
	struct run *r = arg->r;

	/* The BSP holds the lock, its lines in its cache as after
	 * smp_scan()'s set-up, before the AP ticks (it then joins the
	 * BSP's clock) and either runs ahead. */
	if (arg->cpu == BSP) {
		block(r, BSP, PAUSE_INSNS);
		access(r, BSP, PA_COUNT, 0);
		access(r, BSP, PA_STACK, CM_STORE);
		lock_bts(r, BSP);
	}
	pthread_barrier_wait(&r->bar);
	if (arg->cpu == BSP)
		bsp(r);
	else
		ap(r);
	return NULL;
}

static struct cm_model *pair_model(void)
{
	struct cm_profile prof;
	char err[128];

	if (!cm_profile_parse(profile_text, "pair", &prof, err, sizeof(err)))
		return NULL;
	return cm_create(&prof, 2);
}

KTEST(locked, a_spinning_cpu_gets_a_lock_released_and_retaken)
{
	for (unsigned k = 0; k < ROUNDS; k++) {
		struct run r;
		struct arg args[2] = {{&r, BSP}, {&r, AP}};
		struct host_thread_group g;
		struct cm_stats s[2];

		memset(&r, 0, sizeof(r));
		r.m = pair_model();
		r.p = pace_create(2, QUANTUM, BLOCKED_NS);
		ASSERT_TRUE(r.m && r.p);
		/* As the plugin sets it on a paced run (two quanta). */
		cm_set_causality(r.m, 2 * QUANTUM);
		pthread_mutex_init(&r.lock, NULL);
		pthread_barrier_init(&r.bar, NULL, 2);
		host_thread_group_start(&g, 2, cpu_thread, args,
					sizeof(args[0]));
		host_thread_group_join(&g);
		EXPECT_EQ(r.count, 1);
		EXPECT_LE(r.attempts, ENOUGH_ATTEMPTS);
		EXPECT_EQ(pace_breaks(r.p), 0);
		EXPECT_TRUE(pace_on(r.p));
		/* Every `lock bts` counted once, its start charged first. */
		cm_stats_read(r.m, AP, &s[AP]);
		cm_stats_read(r.m, BSP, &s[BSP]);
		EXPECT_EQ(s[AP].locked, r.attempts);
		EXPECT_GE(s[BSP].locked, 2);
		EXPECT_EQ(s[AP].loads + s[AP].stores,
			  2 * r.attempts + 3 * r.count);
		pthread_barrier_destroy(&r.bar);
		pthread_mutex_destroy(&r.lock);
		pace_destroy(r.p);
		cm_destroy(r.m);
	}
}

/* One CPU, no pacing: the RMW's load charges the start, as single-
 * threaded TCG reports it; a start charged first and a store alone give
 * the same counters (engine level, so the paths stay one figure). */
KTEST(locked, start_first_charges_as_the_load_does)
{
	struct cm_model *a = pair_model(), *b = pair_model();
	struct locked_rmw ra = {0}, rb = {0};
	struct cm_stats sa, sb;
	bool load_first;
	unsigned flags;

	ASSERT_TRUE(a && b);
	for (unsigned k = 0; k < 3; k++) {
		/* A store waiting for its line (CPU 1 has it) precedes it. */
		cm_access(a, 1, PA_STACK, WORD, CM_STORE);
		cm_access(b, 1, PA_STACK, WORD, CM_STORE);
		cm_access(a, 0, PA_STACK, WORD, CM_STORE);
		cm_access(b, 0, PA_STACK, WORD, CM_STORE);
		/* a: load and store reported, nothing before. */
		locked_before(&ra, a, NULL, NULL, 0, 0);
		flags = locked_access(&ra, CM_LOCKED, 0, &load_first);
		EXPECT_FALSE(load_first);
		cm_access(a, 0, PA_LOCK, WORD, flags);
		flags = locked_access(&ra, CM_LOCKED | CM_STORE, 0, &load_first);
		EXPECT_FALSE(load_first);
		cm_access(a, 0, PA_LOCK, WORD, flags);
		/* b: the start first, then the store alone (its load sent
		 * first, as for parallel TCG). */
		cm_locked_start(b, 0);
		rb.started = true;
		flags = locked_access(&rb, CM_LOCKED | CM_STORE, 0, &load_first);
		EXPECT_TRUE(load_first);
		EXPECT_TRUE(flags & CM_LOCK_STARTED);
		cm_access(b, 0, PA_LOCK, WORD, flags & ~CM_STORE);
		cm_access(b, 0, PA_LOCK, WORD, flags);
		EXPECT_FALSE(rb.started);
	}
	cm_stats_read(a, 0, &sa);
	cm_stats_read(b, 0, &sb);
	EXPECT_EQ(sa.locked, 3);
	EXPECT_EQ(sb.locked, 3);
	EXPECT_EQ(sa.mem_cycles, sb.mem_cycles);
	EXPECT_EQ(sa.loads, sb.loads);
	EXPECT_EQ(sa.stores, sb.stores);
	EXPECT_EQ(sa.transfers, sb.transfers);
	EXPECT_GT(sa.mem_cycles, 3 * 20);
	cm_destroy(a);
	cm_destroy(b);
}
