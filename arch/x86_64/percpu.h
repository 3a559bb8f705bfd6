/*
 * Per-CPU data, reached through the GS base (SDM vol. 3A, 3.4.4: in 64-bit
 * mode GS is a plain base register, set with MSR_GS_BASE). The first word
 * of every area points to itself, so this_cpu() is one load: mov %gs:0.
 *
 *   GS base -> struct percpu { self, cpu_id, apic_id, tables, ... }
 *
 * CPU numbers are dense (0 = boot CPU, then APs in MADT order); APIC ids
 * are whatever the firmware assigned and may exceed 255 with x2APIC.
 */
#ifndef ARCH_X86_64_PERCPU_H
#define ARCH_X86_64_PERCPU_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/x86_64/gdt.h"
#include "lib/compiler.h"
#include "lib/config.h"
#include "lib/spinlock.h"

/* Entries one CPU's smp_call() queue holds before senders wait. */
#define SMP_CALL_QUEUE_LEN 32

struct smp_call_entry {
	void (*fn)(void *arg);
	void *arg;
	uint32_t *pending; /* decremented after fn ran; NULL: nobody waits */
};

/* Short functions run in the VEC_IPI_CALL handler, interrupts off. */
struct smp_call_queue {
	struct spinlock lock; /* taken with interrupts off */
	uint32_t head, tail;  /* tail - head entries queued */
	struct smp_call_entry e[SMP_CALL_QUEUE_LEN];
};

/*
 * The work slot: one long-running item (a benchmark body) for this CPU's
 * work loop. posted and done are sequence numbers: the slot is busy while
 * done != posted. The poster writes fn/arg, then posted (release); the
 * CPU runs it and stores done = posted (release).
 */
struct work_slot {
	void (*fn)(void *arg);
	void *arg;
	uint64_t posted;
	uint64_t done;
};

struct percpu {
	struct percpu *self; /* must stay first: this_cpu() reads %gs:0 */
	unsigned cpu_id;
	uint32_t apic_id;
	struct cpu_tables *tables; /* this CPU's GDT, TSS and IST stacks */
	uint64_t stack_top;	   /* kernel stack (APs: allocated) */
	bool online;		   /* set by the CPU itself once running */

	/* Counters kept by the interrupt handlers. */
	uint64_t timer_ticks;
	uint64_t nmi_count;
	uint64_t ipi_count;
	uint64_t pat; /* IA32_PAT as this CPU saw it at start-up */
	void *trace_buffer; /* this CPU's trace ring buffer, or NULL (set
			     * by the trace channel, read by its fast path) */

	struct work_slot work __aligned(CACHE_LINE_SIZE);
	struct smp_call_queue calls __aligned(CACHE_LINE_SIZE);
} __aligned(CACHE_LINE_SIZE);

/* The current CPU's area (valid after percpu_init_bsp / AP start). */
static inline struct percpu *this_cpu(void)
{
	struct percpu *p;

	__asm__ volatile("mov %%gs:0, %0" : "=r"(p));
	return p;
}

/*
 * One pointer-sized field of the current CPU's area, with one %gs-relative
 * load (no need to load the area's address first):
 * this_cpu_read_ptr(trace_buffer) is mov %gs:offsetof(...), reg. Volatile:
 * other CPUs may change the field, so the load is never cached or hoisted.
 */
#define this_cpu_read_ptr(field)                                            \
	({                                                                  \
		__typeof__(((struct percpu *)0)->field) pcpu_v_;            \
		_Static_assert(sizeof(pcpu_v_) == sizeof(void *),           \
			       "this_cpu_read_ptr: not a pointer field");   \
		__asm__ volatile("mov %%gs:%c1, %0"                         \
				 : "=r"(pcpu_v_)                            \
				 : "i"(__builtin_offsetof(struct percpu,    \
							  field)));         \
		pcpu_v_;                                                    \
	})

static inline unsigned this_cpu_id(void)
{
	return this_cpu()->cpu_id;
}

/* Boot CPU, first thing: point the GS base at its static area with only
 * its CPU number (0) set, so that lib/this_cpu.h works from then on. */
void percpu_early_bsp(void);
/* Boot CPU: set up its static area as CPU 0 and load the GS base. */
void percpu_init_bsp(uint32_t apic_id);
/* Allocate and register the area of the next CPU number; NULL when out of
 * numbers or memory. The caller fills tables and stack_top. */
struct percpu *percpu_alloc(uint32_t apic_id);
/* Point this CPU's GS base at p (called by the CPU itself). */
void percpu_install(struct percpu *p);

/* Area of CPU number cpu, or NULL. */
struct percpu *percpu_of(unsigned cpu);
/* CPU numbers handed out so far (online or not). */
unsigned percpu_count(void);
/* True once percpu_init_bsp() ran: this_cpu() may be used. */
bool percpu_ready(void);

/* 2^order zeroed, direct-mapped pages for AP areas, stacks and tables;
 * NULL when memory is exhausted. */
void *percpu_pages(unsigned order);

#endif
