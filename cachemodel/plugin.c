/*
 * The QEMU TCG plugin around the cache model: QEMU's callbacks in, the
 * engine's figures out as @@MODEL lines (docs/cachemodel.md).
 *
 *   qemu-system-x86_64 ... -plugin build/cachemodel/cachemodel.so,\
 *       profile=core2-2007,profiles=cachemodel/profiles.txt,out=model.jsonl
 *       [,sync=CYCLES]   (the pacing quantum; 0: no pacing)
 *       [,order=1]       (contended locked RMWs in modelled-time order,
 *                         cachemodel/locked.h, invariant 4)
 *       [,serial=1]      (one vCPU at a time for the whole run, the turn
 *                         passing by modelled clock: cachemodel/pace.h,
 *                         invariant 9; without it the kernel asks for
 *                         it where it needs it, DB_CMD_SERIAL)
 *   qemu-system-x86_64 ... -plugin build/cachemodel/cachemodel.so,model=off
 *       (the same callbacks, each returning at once: what QEMU's
 *       instrumentation costs without a model, make model-cost's floor)
 *
 * At translation time each instruction is classified from its bytes
 * (cachemodel/x86_insn.c): its memory callback carries the NT-store and
 * locked flags, fences and clflush get an execution callback. At run
 * time each access is translated to a physical address (the hwaddr API)
 * and given to the engine, except reads of the doorbell page
 * (cachemodel/doorbell.h), which are commands from the kernel.
 *
 * This file is QEMU's side: the callbacks, the fast path's exclusion,
 * pacing and installation. The doorbell's commands are interpreted in
 * cachemodel/plugin_doorbell.c, the counters are read and printed in
 * cachemodel/plugin_counters.c; what the three share is in
 * cachemodel/plugin_internal.h.
 *
 * Invariants:
 *  1. The engine is entered with model_lock held, except for the fast
 *     path: under multi-threaded TCG the vCPU threads share the LLC and
 *     the other CPUs' private caches (snoops), so every engine call but
 *     cm_access_fast() is one critical section. cm_access_fast() (an
 *     access that needs only the vCPU's own state, such as an L1D hit
 *     needing no coherence action: most of them) runs without a lock,
 *     between fast_enter() and fast_leave(); a thread that needs the
 *     engine to leave the vCPUs' WC buffers and counters alone
 *     (cm_set_type(), cm_clflush_lines() flushing their WC buffers)
 *     holds model_lock and calls fast_stop() first, fast_restart()
 *     after. Without membarrier(2) every access takes the slow path.
 *  2. Per-vCPU state (doorbell arguments, pending label characters, open
 *     region) is written only by that vCPU's callbacks; the engine's
 *     counters, its instruction count among them, are read by other
 *     threads with atomic loads (region snapshots read every CPU's).
 *     The current label is global, under model_lock.
 *  3. Output lines are written whole under model_lock.
 *  4. With more than one vCPU, the vCPUs are paced (cachemodel/pace.h):
 *     at every translation block a vCPU publishes its modelled clock
 *     (instructions x CPI + memory cycles, plus the cycles it slept
 *     through) and waits, no lock held, while it is more than the quantum
 *     (sync=, PACE_DEFAULT_QUANTUM) ahead of the slowest runnable vCPU.
 *     An IPI sent through the xAPIC's ICR wakes halted vCPUs at the
 *     sender's clock. A `pause` (the guest polling) pause-waits: the
 *     vCPU sleeps until another vCPU invalidates one of its lines that
 *     its loop touched in the turn before the pause (every slow-path
 *     access hands the engine's cm_take_invalidated() to pace_poke() at
 *     the writer's clock, filtered by cachemodel/pause_watch.h) or has
 *     run a quantum past it, and its clock moves to that modelled time
 *     (cachemodel/pace.h, 7). A locked read-modify-write's start (its
 *     drain and cost) is charged before its instruction, and the vCPU
 *     paces at its new clock before the RMW takes effect
 *     (cachemodel/locked.h). The engine's clock of a vCPU includes the
 *     cycles it slept through (cm_set_skip() after every tick and
 *     resume), so the bus and line hand-overs compare clocks on the
 *     paced time base. A region's elapsed time is the global modelled
 *     clock (the latest vCPU clock) at its end minus at its start; a
 *     region during which pacing was broken, or a multi-vCPU region that
 *     was not paced, says "valid":false in its line.
 *  5. Each vCPU caches the physical page of the virtual pages it used
 *     (QEMU's hwaddr lookup is a large part of the cost), like a TLB:
 *     the cache is emptied whenever that vCPU executes an instruction
 *     that changes translations (mov to CR0/CR3/CR4, invlpg, invpcid), so
 *     it never holds a translation QEMU's own TLB would not.
 *  6. A vCPU's instructions are counted (in the engine's counters,
 *     which are its clock) through the one whose callback runs: every
 *     memory and execution callback first counts its block's
 *     instructions up to and including its own (count_through()), and a
 *     block's instructions after its last callback are counted when the
 *     next block starts. So an access, a fence or a region's doorbell sees
 *     the same count however QEMU cut the code into blocks (under
 *     -icount, a block ends early where the instruction budget of a
 *     timer deadline ends, and those deadlines follow the host).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include "cachemodel/hash.h"
#include "cachemodel/plugin_internal.h"
#include "cachemodel/profile.h"
#include "cachemodel/qemu_plugin_api.h"
#include "cachemodel/x86_insn.h"

#define DEFAULT_PROFILES "cachemodel/profiles.txt"
#define PROFILES_MAX_BYTES (1u << 20)
/* The local APIC's interrupt command register, low half, at the xAPIC's
 * default base (SDM vol. 3, 11.4.1 and 11.6.1): writing it sends an IPI.
 * x2APIC's ICR is an MSR, which a plugin cannot see. */
#define XAPIC_DEFAULT_BASE 0xfee00000ull
#define APIC_REG_ICR_LOW 0x300
#define GUEST_PAGE_SHIFT 12
#define GUEST_PAGE_MASK ((1ull << GUEST_PAGE_SHIFT) - 1)
/* An instruction's callback data: its X86_* flags below this bit, a
 * locked instruction's slot (cachemodel/locked.h) from it up. */
#define UDATA_SLOT_SHIFT 16
_Static_assert(X86_PAUSE < 1u << UDATA_SLOT_SHIFT,
	       "the X86_* flags fit below the slot");
_Static_assert(LOCKED_SLOT_BITS + UDATA_SLOT_SHIFT <= 32,
	       "a slot fits in the unsigned callback data");
/* ... and above those 32 bits, the instruction's index in its block
 * (invariant 6). */
#define UDATA_INDEX_SHIFT 32
_Static_assert(sizeof(void *) == sizeof(uint64_t),
	       "the callback data holds 64 bits");

QEMU_PLUGIN_EXPORT int qemu_plugin_version = CM_QEMU_PLUGIN_VERSION;

pthread_mutex_t model_lock = PTHREAD_MUTEX_INITIALIZER;
struct cm_model *model;
struct vcpu *vcpus;
unsigned nvcpus;
FILE *out;
struct pace *pace;
static struct timespec started;
static uint64_t quantum = PACE_DEFAULT_QUANTUM;	/* sync=; 0: unpaced */
static int order_locked;	/* order=1 */
int serial_turns;	/* serial=1 */
/*
 * How far a paced vCPU may wait for another's write of a line it takes
 * (cm_set_causality()), in quanta: a runnable vCPU is at most a quantum
 * ahead of the slowest, checked at translation-block ends, and a
 * pause-waiting one counts at its clock plus at most PACE_PAUSE_MAX_QUANTA
 * quanta (cachemodel/pace.h, invariant 7), so a write is at most that plus a
 * quantum and one block's cycles ahead of any reader; one more quantum
 * bounds that with room.
 */
#define CAUSAL_WINDOW_QUANTA (PACE_PAUSE_MAX_QUANTA + 2)

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* ------------------------------------------------------------------ */
/* Fast-path exclusion (invariant 1)                                    */

/*
 * An asymmetric Dekker handshake, so that the fast path, taken on most
 * accesses, needs no atomic read-modify-write and no fence: a vCPU
 * announces itself in v->in_fast, then reads fast_stopped; fast_stop()
 * sets fast_stopped, has every running thread of QEMU execute a full
 * memory barrier (membarrier(2), private expedited: IPIs, microseconds,
 * a handful of times per boot), then waits for every in_fast to drop.
 * Either a vCPU's in_fast store was before its barrier, so fast_stop()
 * sees it and waits, or its fast_stopped load was after it, so it sees
 * the stop and takes the slow path.
 */
static uint32_t fast_stopped;	/* written under model_lock; 1 for good
				 * when the fast path is off */
static bool fast_path_on;	/* membarrier registered */

static long membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

/* True if cpu may run cm_access_fast() now; then call fast_leave(). */
static bool fast_enter(struct vcpu *v)
{
	__atomic_store_n(&v->in_fast, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&fast_stopped, __ATOMIC_ACQUIRE))
		return true;
	__atomic_store_n(&v->in_fast, 0, __ATOMIC_RELEASE);
	return false;
}

static void fast_leave(struct vcpu *v)
{
	__atomic_store_n(&v->in_fast, 0, __ATOMIC_RELEASE);
}

void fast_stop(void)
{
	if (!fast_path_on)
		return;
	__atomic_store_n(&fast_stopped, 1, __ATOMIC_RELAXED);
	if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)) {
		/* Registered at install, so it cannot fail; if it did,
		 * a hang or a race would be worse than a slow run. */
		fprintf(stderr, "cachemodel plugin: membarrier failed (%s); "
			"the fast path is off from now on\n", strerror(errno));
		fast_path_on = false;	/* fast_stopped stays 1 */
	}
	for (unsigned c = 0; c < nvcpus; c++)
		while (__atomic_load_n(&vcpus[c].in_fast, __ATOMIC_ACQUIRE))
			sched_yield();
}

void fast_restart(void)
{
	if (fast_path_on)
		__atomic_store_n(&fast_stopped, 0, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ */
/* Pacing (invariant 4; cachemodel/pace.h)                             */

/* QEMU calls these on the vCPU's own thread, as pace.h requires. */
static void on_idle(qemu_plugin_id_t id, unsigned int cpu)
{
	(void)id;
	if (cpu < nvcpus)
		pace_idle(pace, cpu);
}

static void on_resume(qemu_plugin_id_t id, unsigned int cpu)
{
	(void)id;
	if (cpu >= nvcpus)
		return;
	/* Its clock is set where it joins: from there it moves alike in
	 * every run (cachemodel/model.h, cm_rebase_clock()). */
	cm_rebase_clock(model, cpu);
	pace_resume(pace, cpu, busy_cycles(cpu));
	/* The engine's clock joins the paced one (cachemodel/model.h, 5). */
	cm_set_skip(model, cpu, pace_skip(pace, cpu));
}

/* ------------------------------------------------------------------ */
/* Callbacks                                                            */

/*
 * The physical address of vaddr for cpu, and whether it is a device
 * region; false if QEMU cannot say.
 */
static bool translate(unsigned cpu, qemu_plugin_meminfo_t info,
		      uint64_t vaddr, uint64_t *pa, bool *io)
{
	uint64_t vpage = vaddr >> GUEST_PAGE_SHIFT;
	struct xlat *x =
		&vcpus[cpu].xlat[fib_hash(vpage, XLAT_BITS)];
	struct qemu_plugin_hwaddr *hw;

	if (x->vpage != vpage + 1) {
		hw = qemu_plugin_get_hwaddr(info, vaddr);
		if (!hw)
			return false;
		x->vpage = vpage + 1;
		x->ppage = qemu_plugin_hwaddr_phys_addr(hw) >> GUEST_PAGE_SHIFT;
		x->io = qemu_plugin_hwaddr_is_io(hw);
	}
	*pa = x->ppage << GUEST_PAGE_SHIFT | (vaddr & GUEST_PAGE_MASK);
	*io = x->io;
	return true;
}

/*
 * rep movs / rep stos reach the plugin as one access per element (TCG
 * runs them as a loop); the hardware's fast strings move whole lines.
 * The model sees one access per line and direction: the first element
 * in a line stands for the rest of the line, the others are dropped.
 * Any other access ends the string (the next rep string starts afresh).
 * Returns true if this element is to be dropped.
 */
static bool rep_string_again(struct vcpu *v, unsigned insn, uint64_t pa,
			     bool store)
{
	uint64_t line = (pa >> CM_LINE_SHIFT) + 1;

	if (!(insn & X86_REP_STRING)) {
		v->rep_line[0] = v->rep_line[1] = 0;
		return false;
	}
	if (v->rep_line[store] == line)
		return true;
	v->rep_line[store] = line;
	return false;
}

/* cpu's access to the lines first..last invalidated lines of the CPUs in
 * victims: a CPU polling one of them resumes at cpu's clock now
 * (cachemodel/pace.h, 7); a pause-waiter whose loop did not touch them
 * sleeps on (cachemodel/pause_watch.h). */
static void poke(unsigned cpu, uint64_t victims, uint64_t first,
		 uint64_t last)
{
	uint64_t t = busy_cycles(cpu) + pace_skip(pace, cpu);

	for (unsigned d = 0; d < nvcpus; d++)
		if (victims >> d & 1 &&
		    (!pace_pause_waiting(pace, d) ||
		     pause_watch_has(&vcpus[d].watch, first, last)))
			pace_poke(pace, d, t);
}

/* One access of cpu to the engine: its fast path, else the full one. */
static void model_access(unsigned cpu, uint64_t pa, unsigned size,
			 unsigned flags)
{
	if (fast_enter(&vcpus[cpu])) {
		bool done = cm_access_fast(model, cpu, pa, size, flags);

		fast_leave(&vcpus[cpu]);
		if (done)
			return;
	}
	uint64_t victims;

	pthread_mutex_lock(&model_lock);
	cm_access(model, cpu, pa, size, flags);
	victims = cm_take_invalidated(model, cpu);
	pthread_mutex_unlock(&model_lock);
	if (pace && victims)
		poke(cpu, victims, pa >> CM_LINE_SHIFT,
		     (pa + size - 1) >> CM_LINE_SHIFT);
}

/* Invariant 6: cpu's current block is counted through the instruction
 * whose callback data is udata. */
static void count_through(unsigned cpu, uint64_t udata)
{
	struct vcpu *v = &vcpus[cpu];
	uint32_t upto = (uint32_t)(udata >> UDATA_INDEX_SHIFT) + 1;

	if (upto > v->block_counted) {
		cm_instructions(model, cpu, upto - v->block_counted);
		v->block_counted = upto;
	}
}

static void on_mem(unsigned int cpu, qemu_plugin_meminfo_t info,
		   uint64_t vaddr, void *udata)
{
	unsigned insn = (unsigned)(uintptr_t)udata;
	bool store = qemu_plugin_mem_is_store(info);
	unsigned flags = 0, size;
	uint64_t pa;
	bool io;

	if (cpu >= nvcpus)
		return;
	count_through(cpu, (uint64_t)(uintptr_t)udata);
	if (vaddr - DB_VA < DB_SIZE) {
		if (!store) {
			pthread_mutex_lock(&model_lock);
			doorbell(cpu, vaddr - DB_VA,
				 1u << qemu_plugin_mem_size_shift(info));
			pthread_mutex_unlock(&model_lock);
		}
		return;
	}
	if (!translate(cpu, info, vaddr, &pa, &io))
		return;
	if (rep_string_again(&vcpus[cpu], insn, pa, store))
		return;
	if (store)
		flags |= CM_STORE;
	if (store && (insn & X86_NT_STORE))
		flags |= CM_NT;
	if (insn & X86_LOCKED)
		flags |= CM_LOCKED;
	if (io)
		flags |= CM_IO;
	/* An IPI: halted vCPUs wake at this clock (cachemodel/pace.h, 6). */
	if (pace && store && io && pa == XAPIC_DEFAULT_BASE + APIC_REG_ICR_LOW) {
		/* A named target's wake was sent at DB_CMD_WAKE; its
		 * sender waits at its ticks again. */
		if (vcpus[cpu].wake_target < 0)
			pace_wake_sent(pace, cpu, busy_cycles(cpu), -1);
		else
			pace_wake_delivered(pace, cpu);
		vcpus[cpu].wake_target = -1;
	}
	size = insn & X86_REP_STRING ? CM_LINE_SIZE - (pa & (CM_LINE_SIZE - 1))
				     : 1u << qemu_plugin_mem_size_shift(info);
	/* A turn of a poll loop, for its pause (cachemodel/pause_watch.h). */
	if (pace) {
		uint64_t first = pa >> CM_LINE_SHIFT;
		uint64_t last = (pa + size - 1) >> CM_LINE_SHIFT;

		pause_watch_note(&vcpus[cpu].watch, first);
		if (last != first)
			pause_watch_note(&vcpus[cpu].watch, last);
	}
	if (insn & X86_LOCKED) {
		bool load_first;

		flags = locked_access(&vcpus[cpu].locked, flags, pa,
				      &load_first);
		if (load_first)
			model_access(cpu, pa, size, flags & ~CM_STORE);
	}
	model_access(cpu, pa, size, flags);
}

static void on_special(unsigned int cpu, void *udata)
{
	unsigned insn = (unsigned)(uintptr_t)udata;

	if (cpu >= nvcpus)
		return;
	count_through(cpu, (uint64_t)(uintptr_t)udata);
	if (insn & X86_LOCKED) {
		/* Before a paced RMW takes effect (cachemodel/locked.h). */
		locked_before(&vcpus[cpu].locked, model, &model_lock, pace,
			      cpu, insn >> UDATA_SLOT_SHIFT);
		return;
	}
	if (insn & X86_PAUSE) {
		/* The guest polls: pause-wait (invariant 4). */
		pause_watch_publish(&vcpus[cpu].watch);
		if (pace_pause(pace, cpu, busy_cycles(cpu)))
			cm_set_skip(model, cpu, pace_skip(pace, cpu));
		return;
	}
	if (insn & X86_TLB_FLUSH) {
		/* This vCPU's own state: no lock (invariant 5). */
		memset(vcpus[cpu].xlat, 0, sizeof(vcpus[cpu].xlat));
		return;
	}
	pthread_mutex_lock(&model_lock);
	if (insn & X86_SFENCE)
		cm_fence(model, cpu, CM_SFENCE);
	if (insn & X86_MFENCE)
		cm_fence(model, cpu, CM_MFENCE);
	if (insn & X86_CLFLUSH)
		cm_clflush_unseen(model, cpu);
	pthread_mutex_unlock(&model_lock);
}

static void on_tb(unsigned int cpu, void *udata)
{
	if (cpu < nvcpus) {
		struct vcpu *v = &vcpus[cpu];

		/* The last block's instructions after its last callback
		 * (invariant 6); this one's come at its callbacks. */
		cm_instructions(model, cpu, v->block_insns - v->block_counted);
		v->block_insns = (uint32_t)(uintptr_t)udata;
		v->block_counted = 0;
		if (pace) {
			pace_tick(pace, cpu, busy_cycles(cpu));
			cm_set_skip(model, cpu, pace_skip(pace, cpu));
		}
	}
}

/* model=off: the callbacks QEMU calls, with nothing behind them. */
static void off_tb(unsigned int cpu, void *udata)
{
	(void)cpu;
	(void)udata;
}

static void off_mem(unsigned int cpu, qemu_plugin_meminfo_t info,
		    uint64_t vaddr, void *udata)
{
	(void)cpu;
	(void)info;
	(void)vaddr;
	(void)udata;
}

/* The callbacks on_translate() registers: the model's, or model=off's. */
static qemu_plugin_vcpu_udata_cb_t tb_cb = on_tb, special_cb = on_special;
static qemu_plugin_vcpu_mem_cb_t mem_cb = on_mem;

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_cb, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)n);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		unsigned kind = x86_insn_classify(qemu_plugin_insn_data(insn),
						  qemu_plugin_insn_size(insn));

		uint64_t data;

		/* A locked instruction's slot rides above its flags
		 * (cachemodel/locked.h, invariant 4), and every
		 * instruction's index in the block above both
		 * (invariant 6). */
		if (kind & X86_LOCKED)
			kind |= locked_slot(qemu_plugin_insn_vaddr(insn))
				<< UDATA_SLOT_SHIFT;
		data = kind | (uint64_t)i << UDATA_INDEX_SHIFT;

		/* QEMU calls it only at the instruction's memory
		 * operations: instructions without any cost nothing at run
		 * time. (One callback per direction, QEMU_PLUGIN_MEM_R and
		 * _W, would save asking the direction, but on QEMU 7.2 that
		 * miscounted: the doorbell's loads never reached the load
		 * callback.) */
		qemu_plugin_register_vcpu_mem_cb(insn, mem_cb,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW,
						 (void *)(uintptr_t)data);
		/* A locked RMW's start is charged before it, and a pause
		 * pause-waits, only on a paced run: one vCPU's callbacks
		 * stay as they were. */
		if (kind & (X86_SFENCE | X86_MFENCE | X86_CLFLUSH |
			    X86_TLB_FLUSH |
			    (pace ? X86_LOCKED | X86_PAUSE : 0)))
			qemu_plugin_register_vcpu_insn_exec_cb(
				insn, special_cb, QEMU_PLUGIN_CB_NO_REGS,
				(void *)(uintptr_t)data);
	}
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
	struct cm_stats now, zero;

	(void)id;
	(void)udata;
	memset(&zero, 0, sizeof(zero));
	pthread_mutex_lock(&model_lock);
	for (unsigned c = 0; c < nvcpus; c++) {
		stats_now(c, &now);
		print_counters("total", "", -1, false, 0, c, c, &now, &zero,
			       "");
		doorbell_exit(c);
	}
	fprintf(out, PREFIX "{\"kind\":\"summary\",\"profile\":\"%s\","
		"\"cpus\":%u,", cm_profile(model)->name, nvcpus);
	doorbell_summary();
	fprintf(out, ",\"paced\":%" PRIu64 ",\"pace_waits\":%" PRIu64
		",\"pace_stalls\":%" PRIu64 ",\"pace_breaks\":%" PRIu64 ",",
		pace && pace_on(pace) ? pace_quantum(pace) : 0,
		pace ? pace_waits(pace) : 0, pace ? pace_stalls(pace) : 0,
		pace ? pace_breaks(pace) : 0);
	fprintf(out, "\"ordered\":%d,\"order_waits\":%" PRIu64 ",",
		order_locked, pace ? pace_order_waits(pace) : 0);
	fprintf(out, "\"serial\":%d,\"turn_waits\":%" PRIu64 ",",
		pace ? pace_serial(pace) : 0,
		pace ? pace_turn_waits(pace) : 0);
	pause_wait_summary();
	fprintf(out, ",\"state_bytes\":%zu,\"host_seconds\":%.3f}\n",
		cm_state_bytes(model), seconds_since(&started));
	fclose(out);
	out = NULL;
	pthread_mutex_unlock(&model_lock);
}

/* ------------------------------------------------------------------ */
/* Installation                                                         */

static char *read_text(const char *path, char *err, size_t err_size)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f) {
		snprintf(err, err_size, "cannot open %s: %s", path,
			 strerror(errno));
		return NULL;
	}
	buf = malloc(PROFILES_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	n = fread(buf, 1, PROFILES_MAX_BYTES + 1, f);
	fclose(f);
	if (n > PROFILES_MAX_BYTES) {
		free(buf);
		snprintf(err, err_size, "%s is larger than %u bytes", path,
			 PROFILES_MAX_BYTES);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

static int fail(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "cachemodel plugin: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n");
	return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info, int argc,
					   char **argv)
{
	const char *profile = NULL, *profiles = DEFAULT_PROFILES;
	const char *out_path = NULL;
	char err[ERR_MAX], num[32];
	struct cm_profile p;
	char *text;

	clock_gettime(CLOCK_MONOTONIC, &started);
	if (info->version.cur < CM_QEMU_PLUGIN_VERSION ||
	    info->version.min > CM_QEMU_PLUGIN_VERSION) {
		snprintf(num, sizeof(num), "%d..%d", info->version.min,
			 info->version.cur);
		return fail("this QEMU offers plugin API versions %s; the "
			    "plugin is written for version 1 (QEMU 7.x)%s",
			    num, "");
	}
	if (!info->system_emulation || strcmp(info->target_name, "x86_64"))
		return fail("needs qemu-system-x86_64 (this is %s%s)",
			    info->target_name,
			    info->system_emulation ? "" : " user mode");
	if (argc == 1 && !strcmp(argv[0], "model=off")) {
		/* The floor of the model's cost: QEMU's instrumentation
		 * (translation-time classification included), no model. */
		tb_cb = special_cb = off_tb;
		mem_cb = off_mem;
		qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
		return 0;
	}
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "profile=", 8))
			profile = argv[i] + 8;
		else if (!strncmp(argv[i], "profiles=", 9))
			profiles = argv[i] + 9;
		else if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
		else if (!strcmp(argv[i], "model=off"))
			return fail("model=off takes no other argument%s%s",
				    "", "");
		else if (!strncmp(argv[i], "sync=", 5)) {
			char *end;

			quantum = strtoull(argv[i] + 5, &end, 10);
			if (argv[i][5] < '0' || argv[i][5] > '9' || *end)
				return fail("sync=%s: expected a number of "
					    "cycles%s", argv[i] + 5, "");
		}
		else if (!strcmp(argv[i], "order=1"))
			order_locked = 1;
		else if (!strcmp(argv[i], "order=0"))
			order_locked = 0;
		else if (!strcmp(argv[i], "serial=1"))
			serial_turns = 1;
		else if (!strcmp(argv[i], "serial=0"))
			serial_turns = 0;
		else
			return fail("unknown argument '%s' (known: profile=, "
				    "profiles=, out=, sync=, order=0|1, "
				    "serial=0|1; or "
				    "model=off alone)%s", argv[i], "");
	}
	if (!profile || !out_path)
		return fail("profile=NAME and out=FILE are required%s%s", "",
			    "");
	text = read_text(profiles, err, sizeof(err));
	if (!text)
		return fail("%s%s", err, "");
	if (!cm_profile_parse(text, profile, &p, err, sizeof(err))) {
		free(text);
		return fail("%s: %s", profiles, err);
	}
	free(text);
	nvcpus = (unsigned)info->system.max_vcpus;
	if (nvcpus < 1 || nvcpus > CM_MAX_CPUS) {
		snprintf(num, sizeof(num), "%u", nvcpus);
		return fail("%s CPUs; the model handles 1..64%s", num, "");
	}
	model = cm_create(&p, nvcpus);
	vcpus = aligned_alloc(HOST_LINE_BYTES, nvcpus * sizeof(*vcpus));
	if (vcpus)
		memset(vcpus, 0, nvcpus * sizeof(*vcpus));
	if (nvcpus > 1 && quantum)
		pace = pace_create(nvcpus, quantum, PACE_DEFAULT_BLOCKED_NS);
	if (model && pace)
		cm_set_causality(model, CAUSAL_WINDOW_QUANTA * quantum);
	if (pace) {
		pace_set_order(pace, order_locked);
		pace_set_serial(pace, serial_turns);
	}
	if (!model || !vcpus || (nvcpus > 1 && quantum && !pace))
		return fail("out of memory for the model%s%s", "", "");
	for (unsigned c = 0; c < nvcpus; c++) {
		vcpus[c].wake_target = -1;
		vcpus[c].snap = calloc(nvcpus, sizeof(struct cm_stats));
		vcpus[c].paused_at = calloc(nvcpus, sizeof(struct cm_stats));
		if (!vcpus[c].snap || !vcpus[c].paused_at)
			return fail("out of memory%s%s", "", "");
	}
	out = fopen(out_path, "w");
	if (!out)
		return fail("cannot write %s: %s", out_path, strerror(errno));
	fprintf(out, PREFIX "{\"kind\":\"start\",\"profile\":\"%s\","
		"\"cpus\":%u,\"api\":%d,\"freq_mhz\":%u,\"cpi_x100\":%u}\n",
		p.name, nvcpus, info->version.cur, p.freq_mhz, p.cpi_x100);
	/* The fast path needs membarrier(2) (Linux 4.14). */
	fast_path_on =
		membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
	fast_stopped = !fast_path_on;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	if (pace) {
		qemu_plugin_register_vcpu_idle_cb(id, on_idle);
		qemu_plugin_register_vcpu_resume_cb(id, on_resume);
	}
	return 0;
}
