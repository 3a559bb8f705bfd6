/*
 * x86_64's CPU-local read-modify-write operations: the single
 * instructions behind lib/atomic.h's local_cmpxchg(), local_try_cmpxchg(),
 * local_fetch_add() and local_add(), which document the contract (what
 * they order, and why no LOCK prefix is needed for data only one CPU
 * writes). Portable code includes lib/atomic.h, never this file; only
 * kernel builds reach it (host builds use lib/atomic.h's builtins).
 *
 * p points to a naturally aligned 1-, 2-, 4- or 8-byte integer;
 * lib/atomic.h checks the size before it expands these.
 */
#ifndef ASM_LOCAL_H
#define ASM_LOCAL_H

#include <stdbool.h>

/* CMPXCHG without LOCK; returns the value *p held before. */
#define arch_local_cmpxchg(p, old, new)                                     \
	({                                                                  \
		__typeof__(*(p)) local_prev_ = (old);                       \
		__asm__ volatile("cmpxchg %2, %1"                           \
				 : "+a"(local_prev_), "+m"(*(p))            \
				 : "r"((__typeof__(*(p)))(new))             \
				 : "memory", "cc");                         \
		local_prev_;                                                \
	})

/* XADD without LOCK; returns the value *p held before. */
#define arch_local_fetch_add(p, v)                                          \
	({                                                                  \
		__typeof__(*(p)) local_old_ = (v);                          \
		__asm__ volatile("xadd %0, %1"                              \
				 : "+r"(local_old_), "+m"(*(p))             \
				 :                                          \
				 : "memory", "cc");                         \
		local_old_;                                                 \
	})

/* CMPXCHG without LOCK; true exactly when the swap happened (ZF). */
#define arch_local_try_cmpxchg(p, old, new)                                 \
	({                                                                  \
		__typeof__(*(p)) local_prev_ = (old);                       \
		bool local_ok_;                                             \
		__asm__ volatile("cmpxchg %3, %1"                           \
				 : "+a"(local_prev_), "+m"(*(p)),           \
				   "=@ccz"(local_ok_)                       \
				 : "r"((__typeof__(*(p)))(new))             \
				 : "memory");                               \
		local_ok_;                                                  \
	})

/* ADD without LOCK; returns nothing. */
#define arch_local_add(p, v)                                                \
	__asm__ volatile("add%z0 %1, %0"                                    \
			 : "+m"(*(p))                                       \
			 : "er"((__typeof__(*(p)))(v))                      \
			 : "memory", "cc")

#endif
