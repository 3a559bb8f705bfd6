/*
 * x86_64's store fence for write-combining memory: the instruction behind
 * lib/atomic.h's wmb_wc(), which documents why a WC store needs it before
 * a publishing WB store (SDM vol. 3A, 11.3 and 8.2.2). Portable code
 * includes lib/atomic.h, never this file; only kernel builds reach it.
 */
#ifndef ASM_BARRIER_H
#define ASM_BARRIER_H

/* SFENCE: every earlier store, WC ones included, before every later one. */
#define arch_wmb_wc() __asm__ volatile("sfence" ::: "memory")

#endif
