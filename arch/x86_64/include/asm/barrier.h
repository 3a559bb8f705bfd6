/*
 * x86_64's fences for write-combining memory: the instructions behind
 * lib/atomic.h's wmb_wc() and rmb_wc(), which document why a WC store
 * needs one before a publishing WB store, and a copy out of WC memory one
 * after the load that found it published (SDM vol. 3A, 11.3 and 8.2.2).
 * Portable code includes lib/atomic.h, never this file; only kernel
 * builds reach it.
 */
#ifndef ASM_BARRIER_H
#define ASM_BARRIER_H

/* SFENCE: every earlier store, WC ones included, before every later one. */
#define arch_wmb_wc() __asm__ volatile("sfence" ::: "memory")
/* LFENCE: every earlier load, WC ones included, before every later one. */
#define arch_rmb_wc() __asm__ volatile("lfence" ::: "memory")

#endif
