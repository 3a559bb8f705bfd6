/*
 * Local APIC (SDM vol. 3A, chapter 11): one register accessor that hides
 * the two programming models,
 *
 *   xAPIC   registers in a 4 KiB MMIO page (MSR_APIC_BASE), 8-bit ids,
 *           ICR written as two 32-bit halves, delivery-status polling
 *   x2APIC  registers as MSRs 0x800 + (offset >> 4), 32-bit ids,
 *           ICR one 64-bit MSR write, no delivery-status bit
 *
 * x2APIC is used whenever the CPU has it (and is required for ids > 255).
 * Callers name registers by their xAPIC MMIO offset (APIC_REG_*).
 */
#ifndef ARCH_X86_64_APIC_H
#define ARCH_X86_64_APIC_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/x86_64/trap.h"

/* Register offsets in the xAPIC page (SDM vol. 3A, table 11-1). */
#define APIC_REG_ID 0x020
#define APIC_REG_VERSION 0x030
#define APIC_REG_TPR 0x080
#define APIC_REG_EOI 0x0b0
#define APIC_REG_LDR 0x0d0
#define APIC_REG_DFR 0x0e0
#define APIC_REG_SVR 0x0f0
#define APIC_REG_ESR 0x280
#define APIC_REG_ICR_LOW 0x300
#define APIC_REG_ICR_HIGH 0x310
#define APIC_REG_LVT_TIMER 0x320
#define APIC_REG_LVT_THERMAL 0x330
#define APIC_REG_LVT_PERF 0x340
#define APIC_REG_LVT_LINT0 0x350
#define APIC_REG_LVT_LINT1 0x360
#define APIC_REG_LVT_ERROR 0x370
#define APIC_REG_TIMER_INITIAL 0x380
#define APIC_REG_TIMER_CURRENT 0x390
#define APIC_REG_TIMER_DIVIDE 0x3e0

/* Vectors owned by the APIC code; 0x20-0xdf are free for others. */
#define VEC_APIC_TIMER 0xec
#define VEC_IPI_CALL 0xf0 /* smp_call(): run queued functions */
#define VEC_IPI_WAKE 0xf1 /* wake a halted CPU's work loop */
#define VEC_APIC_ERROR 0xfe
#define VEC_APIC_SPURIOUS 0xff

/* The highest x2APIC id the kernel accepts (ids are 32 bits). */
#define APIC_ID_INVALID 0xffffffffu

enum apic_mode { APIC_MODE_NONE, APIC_MODE_XAPIC, APIC_MODE_X2APIC };

/* Boot CPU: mask the 8259 PICs, choose the mode, enable this LAPIC. */
void apic_init_bsp(void);
/* An AP: enable its LAPIC in the mode the boot CPU chose. */
void apic_init_ap(void);

enum apic_mode apic_mode(void);
const char *apic_mode_name(void);
/* Physical base of the LAPIC page (xAPIC MMIO; informative in x2APIC). */
uint64_t apic_base_phys(void);
/* Version register: version (bits 7:0) and max LVT entry (23:16). */
uint32_t apic_version(void);

uint32_t apic_read(uint32_t reg);
void apic_write(uint32_t reg, uint32_t v);
/* This CPU's APIC id (32 bits in x2APIC mode, 8 in xAPIC mode). */
uint32_t apic_id(void);
void apic_eoi(void);

/* Interprocessor interrupts, physical destination mode. */
void apic_send_ipi(uint32_t apic_id, uint8_t vector);
void apic_send_nmi(uint32_t apic_id);
void apic_send_init(uint32_t apic_id);
/* Start-up IPI: the AP begins in real mode at page << 12. */
void apic_send_sipi(uint32_t apic_id, uint8_t page);
/* The previous IPI was accepted (xAPIC delivery status idle); x2APIC:
 * always true. Waits at most timeout_us microseconds. */
bool apic_ipi_wait_idle(unsigned timeout_us);

/*
 * The LAPIC timer. apic_timer_calibrate() measures its input clock
 * (after the divide-by-16) against the TSC; tsc_init() must have run.
 */
void apic_timer_calibrate(void);
uint64_t apic_timer_hz(void);
/* Periodic interrupts at hz on VEC_APIC_TIMER; hz 0 stops the timer.
 * Programs this CPU's timer only. */
void apic_timer_periodic(unsigned hz);
/* Called with the interrupted trap frame on every timer tick of every
 * CPU (a sampling profiler); NULL removes it. */
void apic_timer_set_hook(trap_handler_t hook);
/* Timer interrupts this CPU has taken since boot. */
uint64_t apic_timer_ticks(void);

/* NMIs this CPU has received (any source). */
uint64_t apic_nmi_count(void);
/* Call fn from every NMI (after the count), NULL for none: tests. */
void apic_set_nmi_hook(void (*fn)(void));
/* APIC errors (ESR) reported by the error interrupt, all CPUs. */
uint64_t apic_error_count(void);

/* One line per fact for the boot report. */
void apic_print(void);

#endif
