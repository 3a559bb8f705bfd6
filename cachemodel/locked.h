/*
 * Locked read-modify-writes (a LOCK-prefixed instruction, xchg with
 * memory) on their way from QEMU's TCG to the engine: what each access
 * of one tells cm_access(), and, when the CPUs are paced, its start
 * charged and paced before it takes effect (docs/cachemodel.md, "Locked
 * operations").
 *
 * Two things TCG does that the engine must not see:
 *  - Parallel TCG (several vCPUs) runs the RMW as one host atomic
 *    operation and reports it once, as a store (QEMU's atomic helpers
 *    report a read-and-write access, which qemu_plugin_mem_is_store()
 *    calls a store); single-threaded TCG (one vCPU, -icount) reports its
 *    load and its store. The engine charges the RMW's start (the drain
 *    of the store and WC buffers, the locked cost) at its load, so a
 *    load missing is sent first.
 *  - TCG performs an access before the plugin hears of it, so a cost
 *    charged at the access comes after the other vCPUs could see its
 *    effect. For a plain access that is the error pacing accepts (within
 *    a quantum). The start of a locked RMW can be hundreds of cycles (the
 *    drain of a store that waits for its line), far beyond a small
 *    quantum; charged after the RMW took effect, it lets a CPU release a
 *    lock and take it back at once in host order while its clock says
 *    the take-back came after the drain, when another CPU spinning on
 *    the lock would have run first. Two CPUs spinning on one lock then
 *    fall into step, every attempt of the waiter landing while the
 *    holder has it again (SeaBIOS's start-up of the APs spun so for
 *    minutes at a 20-cycle quantum). So on a paced run the start is
 *    charged before the instruction (QEMU's instruction callback), and
 *    the CPU paces at its new clock before the RMW takes effect.
 *
 * Portable C with no QEMU in it: the plugin (cachemodel/plugin.c) calls
 * it from its callbacks, tests/host/test_locked.c from plain threads.
 *
 * Invariants:
 *  1. A struct locked_rmw is one CPU's, used by that CPU's thread only.
 *  2. Per RMW the engine sees exactly one start (locked_before(), or the
 *     load) and one store, each access with CM_LOCKED; started is set
 *     from the start charged before the instruction until its store.
 *  3. An RMW whose instruction is run again before its store (TCG
 *     restarting it in exclusive mode, or after a page fault) is
 *     charged once: a pending start is not charged again.
 *  4. Contended RMWs take effect in modelled-time order. Pacing alone
 *     lets CPUs run up to a quantum apart, so which of several CPUs
 *     contending for one lock or count takes it next would be decided by
 *     the order in which the host runs their atomics, and a run's figures
 *     would drift with the host. So on a paced run an RMW that may
 *     contend waits, before it takes effect, until no working CPU is
 *     behind its clock (pace_order()). The instruction callback comes
 *     before the address is known, so each CPU remembers, per locked
 *     instruction (a slot hashed from its address, LOCKED_SLOTS of them),
 *     the line its last RMW took; an RMW whose remembered line the CPU
 *     still holds in M or E (cm_line_private(): no other CPU touched it
 *     since) does not wait, unless an earlier RMW of that instruction
 *     found its line elsewhere: a contended lock is one the holder
 *     often retakes before the others, behind it in modelled time, have
 *     touched it on the host. A wrong guess (a slot shared by two
 *     instructions, a new address) costs a wait or lets one RMW run in
 *     host order, as every plain access does within a quantum.
 */
#ifndef CACHEMODEL_LOCKED_H
#define CACHEMODEL_LOCKED_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct cm_model;
struct pace;

/* Locked instructions are told apart by a slot of this many bits, hashed
 * from the instruction's address (invariant 4; locked_slot()). */
#define LOCKED_SLOT_BITS 12
#define LOCKED_SLOTS (1u << LOCKED_SLOT_BITS)

/* One CPU's state between the callbacks of one locked RMW, and what it
 * remembers of its earlier ones. */
struct locked_rmw {
	bool started;		/* locked_before() charged the start */
	bool load_seen;		/* its load was reported, the store is due */
	unsigned slot;		/* the RMW under way's slot */
	/* per slot: line + 1 of the last RMW of its instruction (0: none) */
	uint64_t last_line[LOCKED_SLOTS];
	/* per slot: an RMW of its instruction once found its line not
	 * cpu's own (contended: it waits from then on) */
	bool contended[LOCKED_SLOTS];
};

/* The slot (0 .. LOCKED_SLOTS - 1) of the locked instruction at vaddr. */
unsigned locked_slot(uint64_t vaddr);

/*
 * cpu (the calling thread's) is about to execute a locked RMW of the
 * instruction whose slot is slot, on a paced run (p non-NULL): charge its
 * start in m (with engine_lock held) and pace cpu at its new clock
 * (pace_tick(), then cm_set_skip()), so the RMW takes effect after every
 * other CPU has run to within a quantum of that clock; unless the line
 * this instruction's last RMW took is still cpu's own, also after every
 * working CPU has reached that clock (pace_order(), invariant 4).
 * Nothing if p is NULL or its pacing is off (then the RMW's load charges
 * the start, invariant 2).
 */
void locked_before(struct locked_rmw *r, struct cm_model *m,
		   pthread_mutex_t *engine_lock, struct pace *p, unsigned cpu,
		   unsigned slot);

/*
 * One reported access of a locked RMW (a load, or the store, which ends
 * it) at physical address pa, with flags its CM_* flags (CM_LOCKED among
 * them): returns the flags to give cm_access(); *load_first is set when
 * the store arrives without its load, which must then be sent first (the
 * returned flags without CM_STORE). The store notes pa's line for the
 * slot locked_before() was given.
 */
unsigned locked_access(struct locked_rmw *r, unsigned flags, uint64_t pa,
		       bool *load_first);

#endif
