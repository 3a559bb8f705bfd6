/*
 * Atomics and barriers for portable code (kernel and host), as thin
 * wrappers over the GCC __atomic builtins. The memory ordering is always
 * spelled out in the name, so a reader sees what each access promises:
 *
 *   relaxed  the access itself is atomic (never torn, never invented or
 *            split by the compiler); it orders nothing else.
 *   acquire  (loads) no later load or store of this thread may be seen
 *            to happen before it: the "lock" side of a hand-over.
 *   release  (stores) no earlier load or store of this thread may be seen
 *            to happen after it: the "unlock" side of a hand-over. An
 *            acquire that reads a release's value sees everything the
 *            releasing thread did before it.
 *   acq_rel  (read-modify-write) both of the above.
 *   seq_cst  acq_rel plus one total order of all seq_cst operations
 *            (only smp_mb() uses it here).
 *
 * The operations are type-generic macros: p points to a naturally aligned
 * 1-, 2-, 4- or 8-byte integer or pointer, which the compiler turns into a
 * single lock-free instruction on x86_64. The kernel's CPU-local
 * operations and the WC store fence are single instructions that no
 * builtin expresses: kernel builds take them from the architecture's
 * "asm/local.h" and "asm/barrier.h" (x86_64: arch/x86_64/include/asm/,
 * on the include path of kernel builds only), which is the only place
 * they are written; every other build, including the host tests under
 * ThreadSanitizer, uses the builtins.
 */
#ifndef LIB_ATOMIC_H
#define LIB_ATOMIC_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Reject objects the hardware cannot access atomically in one go (a
 * struct, a 16-byte integer) at compile time.
 */
#define ATOMIC_CHECK_SIZE(p)                                                \
	_Static_assert(sizeof(*(p)) == 1 || sizeof(*(p)) == 2 ||           \
			       sizeof(*(p)) == 4 || sizeof(*(p)) == 8,      \
		       "atomic access to an object of unsupported size")

#define ATOMIC_LOAD_(p, order)                                              \
	({                                                                  \
		ATOMIC_CHECK_SIZE(p);                                       \
		__atomic_load_n((p), (order));                              \
	})

#define ATOMIC_STORE_(p, v, order)                                          \
	do {                                                                \
		ATOMIC_CHECK_SIZE(p);                                       \
		__atomic_store_n((p), (v), (order));                        \
	} while (0)

/* Loads and stores. */
#define atomic_load_relaxed(p) ATOMIC_LOAD_(p, __ATOMIC_RELAXED)
#define atomic_load_acquire(p) ATOMIC_LOAD_(p, __ATOMIC_ACQUIRE)
#define atomic_store_relaxed(p, v) ATOMIC_STORE_(p, v, __ATOMIC_RELAXED)
#define atomic_store_release(p, v) ATOMIC_STORE_(p, v, __ATOMIC_RELEASE)

/* Read-modify-write: each returns the value *p held before the operation. */
#define ATOMIC_RMW_(op, p, v, order)                                        \
	({                                                                  \
		ATOMIC_CHECK_SIZE(p);                                       \
		__atomic_fetch_##op((p), (v), __ATOMIC_##order);            \
	})

#define atomic_fetch_add_relaxed(p, v) ATOMIC_RMW_(add, p, v, RELAXED)
#define atomic_fetch_add_acquire(p, v) ATOMIC_RMW_(add, p, v, ACQUIRE)
#define atomic_fetch_add_release(p, v) ATOMIC_RMW_(add, p, v, RELEASE)
#define atomic_fetch_add_acq_rel(p, v) ATOMIC_RMW_(add, p, v, ACQ_REL)
#define atomic_fetch_sub_relaxed(p, v) ATOMIC_RMW_(sub, p, v, RELAXED)
#define atomic_fetch_sub_release(p, v) ATOMIC_RMW_(sub, p, v, RELEASE)
#define atomic_fetch_sub_acq_rel(p, v) ATOMIC_RMW_(sub, p, v, ACQ_REL)
#define atomic_fetch_or_relaxed(p, v) ATOMIC_RMW_(or, p, v, RELAXED)
#define atomic_fetch_or_acq_rel(p, v) ATOMIC_RMW_(or, p, v, ACQ_REL)
#define atomic_fetch_and_release(p, v) ATOMIC_RMW_(and, p, v, RELEASE)
#define atomic_fetch_and_acq_rel(p, v) ATOMIC_RMW_(and, p, v, ACQ_REL)

/* Swap in v; returns the old value. */
#define atomic_xchg_acq_rel(p, v)                                           \
	({                                                                  \
		ATOMIC_CHECK_SIZE(p);                                       \
		__atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL);            \
	})

/*
 * Strong compare-and-swap: if *p == old, store new. Returns the value *p
 * held before (== old exactly when the swap happened), like Linux's
 * cmpxchg(). acq_rel on success, acquire on failure, so a failed attempt
 * still synchronises with the store it observed.
 */
#define atomic_cmpxchg(p, old, new)                                         \
	({                                                                  \
		ATOMIC_CHECK_SIZE(p);                                       \
		__typeof__(*(p)) atomic_expected_ = (old);                  \
		__atomic_compare_exchange_n((p), &atomic_expected_, (new),  \
					    false, __ATOMIC_ACQ_REL,        \
					    __ATOMIC_ACQUIRE);              \
		atomic_expected_;                                           \
	})

/* Typed forms, for callers that want the width checked at the call. */
static inline uint32_t atomic_cmpxchg32(uint32_t *p, uint32_t old,
					uint32_t new)
{
	return atomic_cmpxchg(p, old, new);
}

static inline uint64_t atomic_cmpxchg64(uint64_t *p, uint64_t old,
					uint64_t new)
{
	return atomic_cmpxchg(p, old, new);
}

/*
 * CPU-local operations, for data that only one CPU ever writes while other
 * CPUs at most read it (a per-CPU trace buffer's write offset and commit
 * counters). Interrupts and NMIs nesting on the owning CPU are the only
 * writers that can interleave, and an interrupt is taken between
 * instructions, never inside one: a single read-modify-write instruction
 * is therefore atomic against them without the LOCK prefix, which costs
 * tens of cycles and drains the store buffer. Remote readers still see each
 * store whole (an aligned 8-byte store is never torn), in program order
 * (x86 TSO), but the operation is NOT atomic against another CPU writing
 * the same word: never use these on memory another CPU modifies.
 *
 *   local_cmpxchg(p, old, new)  CMPXCHG without LOCK; returns the value *p
 *       held before (== old exactly when the swap happened). Ordering:
 *       the compiler keeps it after every earlier access and before every
 *       later one (asm "memory" clobber); the CPU orders it like any store
 *       under TSO: after earlier stores, not after earlier WC stores (see
 *       wmb_wc()).
 *   local_try_cmpxchg(p, old, new)  the same CMPXCHG; returns true
 *       exactly when the swap happened (the CPU's ZF, no compare after).
 *       Same ordering.
 *   local_fetch_add(p, v)       XADD without LOCK; returns the value *p
 *       held before. Same ordering as local_cmpxchg().
 *   local_add(p, v)             ADD without LOCK; returns nothing (one
 *       instruction less than local_fetch_add() when the old value is not
 *       needed). Same ordering.
 *
 * Host builds (tests, sanitizers, other architectures) use the __atomic
 * builtins with acq_rel ordering instead: stronger than needed, and
 * ThreadSanitizer understands them, so the host tests check the protocol
 * built on top, not these two instructions.
 */
#if defined(__x86_64__) && !defined(HOST_BUILD)
#include "asm/local.h"
#define local_cmpxchg(p, old, new)                                          \
	({                                                                  \
		ATOMIC_CHECK_SIZE(p);                                       \
		arch_local_cmpxchg(p, old, new);                            \
	})
#define local_fetch_add(p, v)                                               \
	({                                                                  \
		ATOMIC_CHECK_SIZE(p);                                       \
		arch_local_fetch_add(p, v);                                 \
	})
#define local_try_cmpxchg(p, old, new)                                      \
	({                                                                  \
		ATOMIC_CHECK_SIZE(p);                                       \
		arch_local_try_cmpxchg(p, old, new);                        \
	})
#define local_add(p, v)                                                     \
	do {                                                                \
		ATOMIC_CHECK_SIZE(p);                                       \
		arch_local_add(p, v);                                       \
	} while (0)
#else
#define local_cmpxchg(p, old, new) atomic_cmpxchg(p, old, new)
#define local_try_cmpxchg(p, old, new)                                      \
	({                                                                  \
		__typeof__(*(p)) local_expect_ = (old);                     \
		atomic_cmpxchg(p, local_expect_, new) == local_expect_;     \
	})
#define local_fetch_add(p, v) atomic_fetch_add_acq_rel(p, v)
#define local_add(p, v) ((void)atomic_fetch_add_acq_rel(p, v))
#endif

/*
 * Raise *p to at least v (a running maximum). Relaxed: statistics only.
 * Returns nothing; concurrent callers never lose the larger value.
 */
#define atomic_max_relaxed(p, v)                                            \
	do {                                                                \
		__typeof__(*(p)) atomic_v_ = (v);                           \
		__typeof__(*(p)) atomic_cur_ = atomic_load_relaxed(p);      \
		while (atomic_cur_ < atomic_v_ &&                           \
		       !__atomic_compare_exchange_n((p), &atomic_cur_,      \
						    atomic_v_, true,        \
						    __ATOMIC_RELAXED,       \
						    __ATOMIC_RELAXED))      \
			;                                                   \
	} while (0)

/*
 * Barriers.
 * barrier(): compiler only; the CPU may still reorder. Keeps the compiler
 *   from caching memory in registers across it (e.g. in a polling loop).
 * smp_mb(): full fence; orders earlier loads and stores against later
 *   ones, including store-then-load, which x86 otherwise reorders.
 * smp_rmb(): earlier loads before later loads (acquire fence).
 * smp_wmb(): earlier stores before later stores (release fence).
 * On x86_64 smp_rmb()/smp_wmb() cost nothing but a compiler barrier (TSO
 * already keeps those orders); smp_mb() is an mfence or locked op.
 * Prefer acquire/release accesses on the flag itself: they say which
 * access the ordering hangs on, and ThreadSanitizer can check them (it
 * does not model stand-alone fences).
 */
#define barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)

/*
 * wmb_wc(): order every earlier store, including stores to write-combining
 * (WC) memory, before every later store. x86 keeps ordinary (WB, UC, WT)
 * stores in program order, so smp_wmb() is only a compiler barrier there;
 * but WC stores sit in the write-combining buffers and may become visible
 * after later ordinary stores (SDM vol. 3A, 11.3 "Write Combining" and
 * 8.2.2 "Memory Ordering in P6 and More Recent Processor Families"). A
 * trace record written to a WC buffer and then published by a commit
 * counter in WB memory needs an SFENCE in between, or a reader on another
 * CPU could see the commit and read stale bytes. Cost: a few cycles on
 * top of draining the WC buffers, so callers use it only when the buffer
 * really is WC (or when they cannot know).
 *
 * Host builds have no WC memory and every publishing store there is a
 * release (local_fetch_add() is acq_rel on the host), which already
 * orders the earlier stores: a compiler barrier suffices (and
 * ThreadSanitizer rejects stand-alone fences).
 */
#if defined(__x86_64__) && !defined(HOST_BUILD)
#include "asm/barrier.h"
#define wmb_wc() arch_wmb_wc()
#else
#define wmb_wc() barrier()
#endif

/*
 * rmb_wc(): every earlier load completes before any later load, loads
 * from write-combining memory included. x86 keeps ordinary loads in
 * order, but WC is a weakly ordered type whose reads may be speculative
 * (SDM vol. 3A, 11.3): a copy out of a WC buffer after an acquire load
 * of the counter that publishes it could still return bytes read before
 * that load. LFENCE ("every load before it is globally visible before
 * any load after it", SDM vol. 2A) prevents that; Linux's rmb() is the
 * same instruction. Host builds: a compiler barrier (no WC memory; the
 * acquire load already orders the later loads in C11).
 */
#if defined(__x86_64__) && !defined(HOST_BUILD)
#define rmb_wc() arch_rmb_wc()
#else
#define rmb_wc() barrier()
#endif

/*
 * READ_ONCE/WRITE_ONCE: one untorn access, for data read outside the
 * lock that protects it (a flag, a statistic). Implemented as relaxed
 * atomics rather than volatile casts: the code is the same plain mov on
 * x86_64, GCC neither merges, repeats nor hoists atomic accesses out of a
 * loop, and ThreadSanitizer does not report them as races.
 */
#define READ_ONCE(x) atomic_load_relaxed(&(x))
#define WRITE_ONCE(x, v) atomic_store_relaxed(&(x), (v))

/*
 * cpu_relax(): the body of every spin-wait loop. On x86_64 the PAUSE hint
 * saves power, yields the core to its hyper-thread sibling and avoids the
 * memory-order machine clear when the awaited line finally changes (SDM
 * vol. 2B, PAUSE). Elsewhere a compiler barrier, so the loop re-reads.
 *
 * Host builds also give up the CPU. A kernel lock holder runs with
 * preemption off, but a host thread can be descheduled holding a lock or
 * the next ticket, and on a loaded machine with more threads than CPUs a
 * FIFO lock then convoys: each hand-over waits for a time slice. Yielding
 * keeps the sanitizer tests fast; it changes timing, not the protocol.
 */
#ifdef HOST_BUILD
int sched_yield(void); /* <sched.h>, declared here to stay libc-free */
#endif

static inline void cpu_relax(void)
{
#ifdef __x86_64__
	__builtin_ia32_pause();
#else
	barrier();
#endif
#ifdef HOST_BUILD
	sched_yield();
#endif
}

#endif
