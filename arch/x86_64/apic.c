/*
 * Local APIC driver (SDM vol. 3A, chapter 11; x2APIC: chapter 11.12).
 *
 * The boot CPU masks the legacy 8259 pair (after moving its vectors out of
 * the exception range, so a spurious IRQ 7/15 cannot look like #NM/#MF),
 * picks x2APIC when CPUID says the CPU has it, and sets up the spurious
 * and error vectors. Every AP repeats the local part in the same mode.
 *
 * xAPIC registers are reached through the direct map, where phys_map()
 * maps the APIC page uncached (UC): register accesses must not be cached,
 * combined or reordered.
 */
#include "arch/x86_64/apic.h"
#include "arch/x86_64/power.h"
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/model_doorbell.h"
#include "arch/x86_64/msr.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/tsc.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/kprintf.h"
#include "lib/panic.h"
#include "mm/vm.h"

/* MSR_APIC_BASE fields (SDM vol. 3A, figure 11-5). */
#define APIC_BASE_BSP (1ull << 8)
#define APIC_BASE_EXTD (1ull << 10) /* x2APIC mode */
#define APIC_BASE_EN (1ull << 11)
#define APIC_BASE_ADDR_MASK 0x000ffffffffff000ull

/* x2APIC: register offset o is MSR MSR_X2APIC_FIRST + (o >> 4). */
#define X2APIC_REG_SHIFT 4
#define XAPIC_ID_SHIFT 24

#define SVR_APIC_ENABLE (1u << 8)
#define LVT_MASKED (1u << 16)
#define LVT_TIMER_PERIODIC (1u << 17)
#define LVT_DELIVERY_NMI (4u << 8)

/* ICR (SDM vol. 3A, figure 11-12). */
#define ICR_DELIVERY_FIXED (0u << 8)
#define ICR_DELIVERY_NMI (4u << 8)
#define ICR_DELIVERY_INIT (5u << 8)
#define ICR_DELIVERY_STARTUP (6u << 8)
#define ICR_DELIVERY_STATUS (1u << 12) /* xAPIC only: send pending */
#define ICR_LEVEL_ASSERT (1u << 14)
#define ICR_XAPIC_DEST_SHIFT 24	       /* in ICR_HIGH */
#define ICR_X2APIC_DEST_SHIFT 32
#define XAPIC_MAX_ID 0xfe /* 0xff is the broadcast id */

#define TIMER_DIVIDE_BY_16 0x3
#define TIMER_DIVISOR 16
#define TIMER_COUNT_MAX 0xffffffffu
#define TIMER_CAL_US 10000
/*
 * Each edge of the calibration window (the count started, the count
 * read) is taken between two TSC reads and kept only when they are less
 * than CAL_EDGE_MAX_US apart: under TCG on a busy host the vCPU thread
 * can be descheduled between the TSC read and the APIC access, and the
 * TSC (host time) would then count milliseconds the APIC count did not,
 * or the other way round, in a 10 ms window. CAL_EDGE_TRIES attempts per
 * edge; the last one is kept if none is that quick.
 */
#define CAL_EDGE_MAX_US 50
#define CAL_EDGE_TRIES 1000

/* 8259 PICs: remapped to 0x20-0x2f, then every line masked. */
#define PIC1_CMD 0x20
#define PIC1_DATA 0x21
#define PIC2_CMD 0xa0
#define PIC2_DATA 0xa1
#define PIC_ICW1_INIT_ICW4 0x11
#define PIC1_VECTOR_BASE 0x20
#define PIC2_VECTOR_BASE 0x28
#define PIC_ICW3_SLAVE_ON_IRQ2 0x04
#define PIC_ICW3_SLAVE_ID 0x02
#define PIC_ICW4_8086 0x01
#define PIC_MASK_ALL 0xff
#define PIC_SPURIOUS_LINE 7

#define VERSION_MAX_LVT_SHIFT 16
#define BYTE_MASK 0xffu

static enum apic_mode mode;
static uint64_t base_phys;
static volatile uint32_t *xapic_regs;
static uint64_t timer_hz;
static uint64_t errors;
static uint64_t spurious;
static uint32_t last_esr;

enum apic_mode apic_mode(void)
{
	return mode;
}

const char *apic_mode_name(void)
{
	switch (mode) {
	case APIC_MODE_XAPIC:
		return "xAPIC";
	case APIC_MODE_X2APIC:
		return "x2APIC";
	default:
		return "none";
	}
}

uint64_t apic_base_phys(void)
{
	return base_phys;
}

uint32_t apic_read(uint32_t reg)
{
	if (mode == APIC_MODE_X2APIC)
		return (uint32_t)rdmsr(MSR_X2APIC_FIRST +
				       (reg >> X2APIC_REG_SHIFT));
	return xapic_regs[reg / sizeof(uint32_t)];
}

void apic_write(uint32_t reg, uint32_t v)
{
	if (mode == APIC_MODE_X2APIC)
		wrmsr(MSR_X2APIC_FIRST + (reg >> X2APIC_REG_SHIFT), v);
	else
		xapic_regs[reg / sizeof(uint32_t)] = v;
}

uint32_t apic_id(void)
{
	uint32_t id = apic_read(APIC_REG_ID);

	return mode == APIC_MODE_X2APIC ? id : id >> XAPIC_ID_SHIFT;
}

uint32_t apic_version(void)
{
	return apic_read(APIC_REG_VERSION);
}

void apic_eoi(void)
{
	apic_write(APIC_REG_EOI, 0);
}

bool apic_ipi_wait_idle(unsigned timeout_us)
{
	uint64_t t0, limit;

	if (mode == APIC_MODE_X2APIC)
		return true;
	t0 = rdtsc();
	limit = tsc_us_to_cycles(timeout_us);
	while (apic_read(APIC_REG_ICR_LOW) & ICR_DELIVERY_STATUS) {
		if (rdtsc() - t0 > limit)
			return false;
		cpu_pause();
	}
	return true;
}

#define IPI_IDLE_TIMEOUT_US 1000

/* Write the ICR as one unit: an interrupt between the two xAPIC halves
 * that sent its own IPI would change the destination under us. */
static void send_icr(uint32_t dest, uint32_t low)
{
	uint64_t flags = read_rflags();

	kassert(mode != APIC_MODE_NONE);
	cpu_cli();
	/* Interrupts are off: no other IPI comes between. */
	model_doorbell_wake(dest);
	if (mode == APIC_MODE_X2APIC) {
		wrmsr(MSR_X2APIC_FIRST + (APIC_REG_ICR_LOW >> X2APIC_REG_SHIFT),
		      ((uint64_t)dest << ICR_X2APIC_DEST_SHIFT) | low);
	} else {
		kassert(dest <= XAPIC_MAX_ID);
		apic_ipi_wait_idle(IPI_IDLE_TIMEOUT_US);
		apic_write(APIC_REG_ICR_HIGH, dest << ICR_XAPIC_DEST_SHIFT);
		apic_write(APIC_REG_ICR_LOW, low);
	}
	if (flags & RFLAGS_IF)
		cpu_sti();
}

void apic_send_ipi(uint32_t dest, uint8_t vector)
{
	send_icr(dest, ICR_DELIVERY_FIXED | ICR_LEVEL_ASSERT | vector);
}

void apic_send_nmi(uint32_t dest)
{
	send_icr(dest, ICR_DELIVERY_NMI | ICR_LEVEL_ASSERT);
}

void apic_send_init(uint32_t dest)
{
	send_icr(dest, ICR_DELIVERY_INIT | ICR_LEVEL_ASSERT);
}

void apic_send_sipi(uint32_t dest, uint8_t page)
{
	send_icr(dest, ICR_DELIVERY_STARTUP | ICR_LEVEL_ASSERT | page);
}

static trap_handler_t timer_hook;

void apic_timer_set_hook(trap_handler_t hook)
{
	atomic_store_release(&timer_hook, hook);
}

static void timer_handler(struct trap_frame *f)
{
	trap_handler_t hook = atomic_load_acquire(&timer_hook);

	this_cpu()->timer_ticks++;
	if (hook)
		hook(f);
	apic_eoi();
}

/* Spurious interrupts (LAPIC or PIC) need no EOI (SDM 11.9). */
static void spurious_handler(struct trap_frame *f __unused)
{
	atomic_fetch_add_relaxed(&spurious, 1);
}

static void error_handler(struct trap_frame *f __unused)
{
	/* The ESR latches on a write (SDM 11.5.3). */
	apic_write(APIC_REG_ESR, 0);
	atomic_store_relaxed(&last_esr, apic_read(APIC_REG_ESR));
	atomic_fetch_add_relaxed(&errors, 1);
	apic_eoi();
}

static void (*nmi_hook)(void);

void apic_set_nmi_hook(void (*fn)(void))
{
	atomic_store_release(&nmi_hook, fn);
}

static void nmi_handler(struct trap_frame *f __unused)
{
	void (*hook)(void);

	/* Another CPU panicked and stops us: stay out of its report. */
	if (panic_in_progress())
		arch_halt();
	if (percpu_ready())
		this_cpu()->nmi_count++;
	hook = atomic_load_acquire(&nmi_hook);
	if (hook)
		hook();
}

uint64_t apic_timer_ticks(void)
{
	return atomic_load_relaxed(&this_cpu()->timer_ticks);
}

uint64_t apic_nmi_count(void)
{
	return atomic_load_relaxed(&this_cpu()->nmi_count);
}

uint64_t apic_error_count(void)
{
	return atomic_load_relaxed(&errors);
}

static void pic_disable(void)
{
	outb(PIC1_CMD, PIC_ICW1_INIT_ICW4);
	outb(PIC2_CMD, PIC_ICW1_INIT_ICW4);
	outb(PIC1_DATA, PIC1_VECTOR_BASE);
	outb(PIC2_DATA, PIC2_VECTOR_BASE);
	outb(PIC1_DATA, PIC_ICW3_SLAVE_ON_IRQ2);
	outb(PIC2_DATA, PIC_ICW3_SLAVE_ID);
	outb(PIC1_DATA, PIC_ICW4_8086);
	outb(PIC2_DATA, PIC_ICW4_8086);
	outb(PIC1_DATA, PIC_MASK_ALL);
	outb(PIC2_DATA, PIC_MASK_ALL);
}

/* The part every CPU does for itself once its mode is on. */
static void apic_local_setup(void)
{
	apic_write(APIC_REG_TPR, 0);
	apic_write(APIC_REG_SVR, SVR_APIC_ENABLE | VEC_APIC_SPURIOUS);
	apic_write(APIC_REG_LVT_TIMER, LVT_MASKED | VEC_APIC_TIMER);
	/* No 8259 behind LINT0 any more; LINT1 carries NMI on PCs. */
	apic_write(APIC_REG_LVT_LINT0, LVT_MASKED);
	apic_write(APIC_REG_LVT_LINT1, LVT_DELIVERY_NMI);
	apic_write(APIC_REG_LVT_ERROR, VEC_APIC_ERROR);
	/* Clear errors from before we owned the APIC (back-to-back write). */
	apic_write(APIC_REG_ESR, 0);
	apic_write(APIC_REG_ESR, 0);
	apic_eoi();
	/* A cache model learns which vCPU answers to this ID, to know whom
	 * an IPI wakes (model_doorbell_wake()). */
	model_doorbell_cpu(apic_id());
}

static void enable_mode(void)
{
	uint64_t b = rdmsr(MSR_APIC_BASE);

	/* x2APIC may only be entered from xAPIC-enabled (SDM 11.12.5). */
	b |= APIC_BASE_EN;
	wrmsr(MSR_APIC_BASE, b);
	if (mode == APIC_MODE_X2APIC)
		wrmsr(MSR_APIC_BASE, b | APIC_BASE_EXTD);
}

void apic_init_bsp(void)
{
	uint64_t b;

	pic_disable();
	trap_register(PIC1_VECTOR_BASE + PIC_SPURIOUS_LINE, spurious_handler);
	trap_register(PIC2_VECTOR_BASE + PIC_SPURIOUS_LINE, spurious_handler);
	if (!cpu_has(FEAT_APIC)) {
		mode = APIC_MODE_NONE;
		return;
	}
	b = rdmsr(MSR_APIC_BASE);
	kassert(b & APIC_BASE_BSP);
	base_phys = b & APIC_BASE_ADDR_MASK;
	/* Firmware that already chose x2APIC cannot be undone without a
	 * disable; we would pick it anyway when the CPU has it. */
	mode = (cpu_has(FEAT_X2APIC) || (b & APIC_BASE_EXTD)) ?
		       APIC_MODE_X2APIC :
		       APIC_MODE_XAPIC;
	if (mode == APIC_MODE_XAPIC) {
		xapic_regs = phys_map(base_phys, PAGE_SIZE, MEMTYPE_UC);
		kassert(xapic_regs);
	}

	trap_register(VEC_APIC_TIMER, timer_handler);
	trap_register(VEC_APIC_SPURIOUS, spurious_handler);
	trap_register(VEC_APIC_ERROR, error_handler);
	trap_register(VEC_NMI, nmi_handler);
	enable_mode();
	apic_local_setup();
}

void apic_init_ap(void)
{
	kassert(mode != APIC_MODE_NONE);
	enable_mode();
	apic_local_setup();
}

/* The count starts (an initial count written); returns the TSC at that
 * moment, the middle of a bracket shorter than CAL_EDGE_MAX_US if one
 * of CAL_EDGE_TRIES attempts gave one. */
static uint64_t cal_start_edge(void)
{
	uint64_t limit = tsc_us_to_cycles(CAL_EDGE_MAX_US), a = 0, b = 0;

	for (int i = 0; i < CAL_EDGE_TRIES; i++) {
		uint64_t flags = cpu_irq_save();

		a = rdtsc_ordered();
		apic_write(APIC_REG_TIMER_INITIAL, TIMER_COUNT_MAX);
		b = rdtsc_ordered();
		cpu_irq_restore(flags);
		if (b - a < limit)
			break;
	}
	return a + (b - a) / 2;
}

/* The count read: *left gets it; returns the TSC then, as above. */
static uint64_t cal_read_edge(uint32_t *left)
{
	uint64_t limit = tsc_us_to_cycles(CAL_EDGE_MAX_US), a = 0, b = 0;

	for (int i = 0; i < CAL_EDGE_TRIES; i++) {
		uint64_t flags = cpu_irq_save();

		a = rdtsc_ordered();
		*left = apic_read(APIC_REG_TIMER_CURRENT);
		b = rdtsc_ordered();
		cpu_irq_restore(flags);
		if (b - a < limit)
			break;
	}
	return a + (b - a) / 2;
}

void apic_timer_calibrate(void)
{
	uint64_t t0, t1;
	uint32_t left;

	if (mode == APIC_MODE_NONE)
		return;
	apic_write(APIC_REG_LVT_TIMER, LVT_MASKED | VEC_APIC_TIMER);
	apic_write(APIC_REG_TIMER_DIVIDE, TIMER_DIVIDE_BY_16);
	t0 = cal_start_edge();
	tsc_delay_us(TIMER_CAL_US);
	t1 = cal_read_edge(&left);
	apic_write(APIC_REG_TIMER_INITIAL, 0);
	kassert(left < TIMER_COUNT_MAX);
	kassert(t1 > t0);
	timer_hz = (uint64_t)(TIMER_COUNT_MAX - left) * tsc_hz() / (t1 - t0);
}

uint64_t apic_timer_hz(void)
{
	return timer_hz;
}

void apic_timer_periodic(unsigned hz)
{
	kassert(timer_hz > 0);
	if (hz == 0) {
		apic_write(APIC_REG_LVT_TIMER, LVT_MASKED | VEC_APIC_TIMER);
		apic_write(APIC_REG_TIMER_INITIAL, 0);
		return;
	}
	apic_write(APIC_REG_TIMER_DIVIDE, TIMER_DIVIDE_BY_16);
	apic_write(APIC_REG_LVT_TIMER, LVT_TIMER_PERIODIC | VEC_APIC_TIMER);
	apic_write(APIC_REG_TIMER_INITIAL, (uint32_t)(timer_hz / hz));
}

void apic_print(void)
{
	uint32_t v;

	if (mode == APIC_MODE_NONE) {
		kprintf("apic: no local APIC: single CPU, no timer\n");
		return;
	}
	v = apic_version();
	kprintf("apic: %s, base %#lx, version %#x, %u LVT entries, boot cpu "
		"apic id %u\n", apic_mode_name(), (unsigned long)base_phys,
		v & BYTE_MASK, ((v >> VERSION_MAX_LVT_SHIFT) & BYTE_MASK) + 1,
		apic_id());
	kprintf("apic: timer %lu Hz (bus clock / %u, against the TSC); "
		"legacy PIC masked\n", (unsigned long)timer_hz, TIMER_DIVISOR);
}
