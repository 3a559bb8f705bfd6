/*
 * Interrupt descriptor table and the C side of every trap (SDM vol. 3A,
 * chapter 6). Exceptions nobody expects end in panic_trap(), which prints
 * the full report; interrupts go to handlers registered by vector.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/gdt.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/setjmp.h"
#include "arch/x86_64/trap.h"
#include "lib/assert.h"
#include "lib/config.h"
#include "lib/kprintf.h"
#include "lib/panic.h"

#define IDT_GATE_INTERRUPT 0xe
#define IDT_GATE_PRESENT 0x80

struct idt_gate {
	uint16_t offset_low;
	uint16_t selector;
	uint8_t ist;
	uint8_t type_attr;
	uint16_t offset_mid;
	uint32_t offset_high;
	uint32_t reserved;
} __packed;

static struct idt_gate idt[VEC_COUNT] __aligned(16);
static trap_handler_t handlers[VEC_COUNT];
static trap_fixup_t fixups[VEC_EXCEPTION_COUNT];
extern const uint64_t isr_stub_table[VEC_COUNT];

static const char *const exception_names[VEC_EXCEPTION_COUNT] = {
	[VEC_DIVIDE_ERROR] = "#DE divide error",
	[VEC_DEBUG] = "#DB debug",
	[VEC_NMI] = "NMI",
	[VEC_BREAKPOINT] = "#BP breakpoint",
	[VEC_OVERFLOW] = "#OF overflow",
	[VEC_BOUND_RANGE] = "#BR bound range exceeded",
	[VEC_INVALID_OPCODE] = "#UD invalid opcode",
	[VEC_DEVICE_NOT_AVAILABLE] = "#NM device not available",
	[VEC_DOUBLE_FAULT] = "#DF double fault",
	[9] = "coprocessor segment overrun",
	[VEC_INVALID_TSS] = "#TS invalid TSS",
	[VEC_SEGMENT_NOT_PRESENT] = "#NP segment not present",
	[VEC_STACK_FAULT] = "#SS stack-segment fault",
	[VEC_GENERAL_PROTECTION] = "#GP general protection",
	[VEC_PAGE_FAULT] = "#PF page fault",
	[VEC_X87_FP] = "#MF x87 floating-point error",
	[VEC_ALIGNMENT_CHECK] = "#AC alignment check",
	[VEC_MACHINE_CHECK] = "#MC machine check",
	[VEC_SIMD_FP] = "#XM SIMD floating-point",
	[VEC_VIRTUALIZATION] = "#VE virtualization",
	[VEC_CONTROL_PROTECTION] = "#CP control protection",
};

const char *trap_name(unsigned vector)
{
	if (vector < VEC_EXCEPTION_COUNT)
		return exception_names[vector] ? exception_names[vector] :
						 "reserved exception";
	return "interrupt";
}

static void set_gate(unsigned v, uint64_t handler, uint8_t ist)
{
	idt[v].offset_low = handler & 0xffff;
	idt[v].selector = GDT_KERNEL_CS;
	idt[v].ist = ist;
	idt[v].type_attr = IDT_GATE_PRESENT | IDT_GATE_INTERRUPT;
	idt[v].offset_mid = (handler >> 16) & 0xffff;
	idt[v].offset_high = handler >> 32;
	idt[v].reserved = 0;
}

void idt_load(void)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __packed idtr = {sizeof(idt) - 1, (uint64_t)idt};

	__asm__ volatile("lidt %0" : : "m"(idtr));
}

void idt_init(void)
{
	for (unsigned v = 0; v < VEC_COUNT; v++)
		set_gate(v, isr_stub_table[v], 0);
	/* These may arrive on a broken stack: give them their own. */
	set_gate(VEC_DOUBLE_FAULT, isr_stub_table[VEC_DOUBLE_FAULT],
		 IST_DOUBLE_FAULT);
	set_gate(VEC_NMI, isr_stub_table[VEC_NMI], IST_NMI);
	set_gate(VEC_MACHINE_CHECK, isr_stub_table[VEC_MACHINE_CHECK],
		 IST_MACHINE_CHECK);
	idt_load();
}

void trap_register(unsigned vector, trap_handler_t handler)
{
	kassert(vector < VEC_COUNT);
	handlers[vector] = handler;
}

void trap_register_fixup(unsigned vector, trap_fixup_t fixup)
{
	kassert(vector < VEC_EXCEPTION_COUNT);
	fixups[vector] = fixup;
}

/* One trap_try() slot per CPU: a fault is caught by the CPU that took
 * it, while it runs the function it armed the slot for. */
static struct fault_catch {
	bool armed;
	struct kjmp_buf jmp;
	struct trap_caught caught;
} fault_catch[MAX_CPUS];

static struct fault_catch *my_catch(void)
{
	return &fault_catch[percpu_ready() ? this_cpu_id() : 0];
}

static __noreturn void trap_catch_landing(void)
{
	klongjmp(&my_catch()->jmp, 1);
}

void trap_try(void (*fn)(void *), void *arg, struct trap_caught *out)
{
	struct fault_catch *fc = my_catch();

	kassert(!fc->armed);
	fc->caught = (struct trap_caught){0};
	if (ksetjmp(&fc->jmp) == 0) {
		fc->armed = true;
		fn(arg);
	}
	fc->armed = false;
	*out = fc->caught;
}

void trap_dispatch(struct trap_frame *f)
{
	if (handlers[f->vector]) {
		handlers[f->vector](f);
		return;
	}
	if (f->vector < VEC_EXCEPTION_COUNT && fixups[f->vector] &&
	    fixups[f->vector](f))
		return;
	if (f->vector < VEC_EXCEPTION_COUNT && my_catch()->armed &&
	    f->vector != VEC_NMI && f->vector != VEC_DOUBLE_FAULT &&
	    f->vector != VEC_MACHINE_CHECK) {
		struct fault_catch *fc = my_catch();

		fc->armed = false;
		fc->caught.faulted = true;
		fc->caught.vector = (unsigned)f->vector;
		fc->caught.error_code = f->error_code;
		fc->caught.cr2 = read_cr2();
		fc->caught.rip = f->rip;
		/* Return into the landing pad, on the same stack, aligned as
		 * if it had been called. */
		f->rip = (uint64_t)trap_catch_landing;
		f->rsp = ALIGN_DOWN(f->rsp - 128, 16) - 8;
		return;
	}
	panic_trap(f);
}
