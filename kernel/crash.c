/*
 * crash=pf|ud|gp|assert|triple|hang|stack: each goes through a named function so
 * the panic report's backtrace has something recognisable to show.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/power.h"
#include "kernel/crash.h"
#include "lib/assert.h"
#include "lib/config.h"
#include "lib/kprintf.h"
#include "lib/panic.h"

/* An address in the non-canonical hole cannot be mapped: a sure #GP. */
#define NON_CANONICAL_ADDR 0x0000800000000000ul
/* Canonical but never mapped: the kernel's own page tables map nothing in
 * the lower half (and the boot tables only its first 4 GiB). */
#define UNMAPPED_ADDR 0x00007fff00000008ul

static __attribute__((noinline)) void crash_page_fault(void)
{
	/* Through a volatile so the compiler cannot see the address. */
	volatile uintptr_t addr = UNMAPPED_ADDR;
	volatile uint64_t *p = (volatile uint64_t *)addr;

	kprintf("crash: reading unmapped address %p\n", (void *)p);
	(void)*p;
}

static __attribute__((noinline)) void crash_invalid_opcode(void)
{
	kprintf("crash: executing ud2\n");
	cpu_ud2();
}

static __attribute__((noinline)) void crash_general_protection(void)
{
	volatile uintptr_t addr = NON_CANONICAL_ADDR;
	volatile uint64_t *p = (volatile uint64_t *)addr;

	kprintf("crash: reading non-canonical address %p\n", (void *)p);
	(void)*p;
}

static __attribute__((noinline)) void crash_triple_fault(void)
{
	kprintf("crash: loading an empty IDT and raising #BP\n");
	arch_triple_fault();
}

static __attribute__((noinline)) void crash_hang(void)
{
	kprintf("crash: spinning forever with interrupts off\n");
	for (;;)
		cpu_cli();
}

/* Far more than a 16 KiB kernel stack: the first probe lands in the
 * guard page (-fstack-clash-protection). */
#define OVERFLOW_FRAME_BYTES (64 * 1024)

static __attribute__((noinline)) void crash_stack_overflow(void)
{
	volatile char frame[OVERFLOW_FRAME_BYTES];

	kprintf("crash: a %u KiB local array on a 16 KiB stack\n",
		OVERFLOW_FRAME_BYTES / 1024);
	for (unsigned i = 0; i < sizeof(frame); i += PAGE_SIZE)
		frame[i] = (char)i;
}

void crash_if_asked(enum crash_kind kind)
{
	switch (kind) {
	case CRASH_NONE:
		return;
	case CRASH_PAGE_FAULT:
		crash_page_fault();
		break;
	case CRASH_INVALID_OPCODE:
		crash_invalid_opcode();
		break;
	case CRASH_GENERAL_PROTECTION:
		crash_general_protection();
		break;
	case CRASH_ASSERT:
		kassert(kind == CRASH_NONE);
		break;
	case CRASH_TRIPLE_FAULT:
		crash_triple_fault();
		break;
	case CRASH_HANG:
		crash_hang();
		break;
	case CRASH_STACK_OVERFLOW:
		crash_stack_overflow();
		break;
	}
	panic("crash=%d did not crash: the fault it provokes was not raised",
	      kind);
}
