/*
 * Panic reports: the reason, the exception and its error code (decoded for
 * page faults, with CR2), RIP as symbol+offset, every general register,
 * the control registers and a symbolized backtrace; then EXIT with a
 * non-zero status. Everything needed is in the kernel image, so a report
 * from a real machine's serial port is as readable as one from QEMU.
 */
#include <stdarg.h>
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/power.h"
#include "kernel/ksyms.h"
#include "kernel/options.h"
#include "kernel/panic.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/kprintf.h"
#include "mm/vm.h"

#define BACKTRACE_MAX_FRAMES 32
/* A frame pointer chain never spans more than one kernel stack. */
#define BACKTRACE_MAX_SPAN (64 * 1024)
#define CANONICAL_HIGH_HALF 0xffff800000000000ul

static volatile int panicking;
void (*panic_stop_other_cpus)(void);

static void (*notifiers[PANIC_NOTIFIERS])(void);

bool panic_notifier_register(void (*fn)(void))
{
	for (unsigned i = 0; i < PANIC_NOTIFIERS; i++)
		if (__atomic_load_n(&notifiers[i], __ATOMIC_ACQUIRE) == NULL) {
			__atomic_store_n(&notifiers[i], fn, __ATOMIC_RELEASE);
			return true;
		}
	return false;
}

void panic_notifier_unregister(void (*fn)(void))
{
	for (unsigned i = 0; i < PANIC_NOTIFIERS; i++)
		if (__atomic_load_n(&notifiers[i], __ATOMIC_ACQUIRE) == fn)
			__atomic_store_n(&notifiers[i], NULL, __ATOMIC_RELEASE);
}

static void run_notifiers(void)
{
	for (unsigned i = 0; i < PANIC_NOTIFIERS; i++) {
		void (*fn)(void) = __atomic_load_n(&notifiers[i],
						   __ATOMIC_ACQUIRE);
		if (fn)
			fn();
	}
}

bool panic_in_progress(void)
{
	return __atomic_load_n(&panicking, __ATOMIC_ACQUIRE) != 0;
}

static void print_symbol_line(const char *label, uint64_t addr)
{
	char sym[96];

	ksym_format(addr, sym, sizeof(sym));
	kprintf("%s%016lx  %s\n", label, (unsigned long)addr, sym);
}

void backtrace_print(uint64_t rbp)
{
	uint64_t start = rbp;

	kprintf("Backtrace:\n");
	for (int i = 0; i < BACKTRACE_MAX_FRAMES; i++) {
		const uint64_t *frame = (const uint64_t *)rbp;
		uint64_t ret;

		/* Walk only what looks like a kernel stack frame: a bad
		 * pointer must end the walk, not fault inside the panic. */
		if (rbp < CANONICAL_HIGH_HALF || (rbp & 7) ||
		    rbp - start > BACKTRACE_MAX_SPAN)
			break;
		ret = frame[1];
		if (ret == 0)
			break;
		print_symbol_line("  ", ret);
		if (frame[0] <= rbp)
			break;
		rbp = frame[0];
	}
}

/*
 * A stack pointer inside an unmapped page means the stack ran into its
 * guard page. The kernel is built with -fstack-clash-protection, so even
 * a large frame touches the guard page first instead of jumping over it;
 * the CPU then cannot push the #PF frame there and raises a double fault
 * on its IST stack, which is why overflows usually show up as #DF.
 */
static void report_stack_overflow(const struct trap_frame *f)
{
	struct vm_translation t;

	if (!vm_ready() || f->rsp < CANONICAL_HIGH_HALF)
		return;
	if (!vm_translate(&kernel_space, ALIGN_DOWN(f->rsp, PAGE_SIZE), &t))
		kprintf("Stack overflow: RSP %#lx is in an unmapped page, "
			"the guard page below a kernel stack\n",
			(unsigned long)f->rsp);
}

static void print_control_registers(void)
{
	kprintf("CR0: %016lx  CR2: %016lx  CR3: %016lx  CR4: %016lx\n",
		(unsigned long)read_cr0(), (unsigned long)read_cr2(),
		(unsigned long)read_cr3(), (unsigned long)read_cr4());
}

static void decode_page_fault(uint64_t err)
{
	kprintf("Page fault: %s %s in %s mode%s%s%s, CR2: %#lx\n",
		err & PF_ERR_FETCH ? "instruction fetch" :
		err & PF_ERR_WRITE ? "write" :
				     "read",
		err & PF_ERR_PRESENT ? "violating protection of a present page" :
				       "of a non-present page",
		err & PF_ERR_USER ? "user" : "kernel",
		err & PF_ERR_RSVD ? ", reserved bit set in an entry" : "",
		err & PF_ERR_PK ? ", protection key" : "",
		err & PF_ERR_SS ? ", shadow stack" : "",
		(unsigned long)read_cr2());
}

/*
 * Only one panic reports. The same CPU panicking again (inside its own
 * report) says so and stops at once; another CPU panicking meanwhile just
 * halts, leaving the report to the first.
 */
static void check_nested(void)
{
	int me = (int)smp_this_cpu() + 1, expected = 0;

	if (!__atomic_compare_exchange_n(&panicking, &expected, me, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		if (expected != me)
			arch_halt();
		kprintf("PANIC: nested panic while reporting a panic\n");
		kprintf("EXIT: STATUS=%d\n", EXIT_STATUS_PANIC);
		arch_qemu_exit(EXIT_STATUS_PANIC);
		arch_halt();
	}
	if (panic_stop_other_cpus)
		panic_stop_other_cpus();
}

void panic_trap(const struct trap_frame *f)
{
	char sym[96];

	cpu_cli();
	check_nested();
	ksym_format(f->rip, sym, sizeof(sym));
	kprintf("\nPANIC: unhandled exception %s (vector %lu) at %s\n",
		trap_name((unsigned)f->vector), (unsigned long)f->vector, sym);
	kprintf("Error code: %#lx\n", (unsigned long)f->error_code);
	if (f->vector == VEC_PAGE_FAULT)
		decode_page_fault(f->error_code);
	report_stack_overflow(f);
	kprintf("RIP: %s\n", sym);
	kprintf("RIP: %016lx  CS: %04lx  RFLAGS: %016lx\n",
		(unsigned long)f->rip, (unsigned long)f->cs,
		(unsigned long)f->rflags);
	kprintf("RSP: %016lx  SS: %04lx\n", (unsigned long)f->rsp,
		(unsigned long)f->ss);
	kprintf("RAX: %016lx  RBX: %016lx  RCX: %016lx\n",
		(unsigned long)f->rax, (unsigned long)f->rbx,
		(unsigned long)f->rcx);
	kprintf("RDX: %016lx  RSI: %016lx  RDI: %016lx\n",
		(unsigned long)f->rdx, (unsigned long)f->rsi,
		(unsigned long)f->rdi);
	kprintf("RBP: %016lx  R8:  %016lx  R9:  %016lx\n",
		(unsigned long)f->rbp, (unsigned long)f->r8,
		(unsigned long)f->r9);
	kprintf("R10: %016lx  R11: %016lx  R12: %016lx\n",
		(unsigned long)f->r10, (unsigned long)f->r11,
		(unsigned long)f->r12);
	kprintf("R13: %016lx  R14: %016lx  R15: %016lx\n",
		(unsigned long)f->r13, (unsigned long)f->r14,
		(unsigned long)f->r15);
	print_control_registers();
	print_symbol_line("  ", f->rip);
	backtrace_print(f->rbp);
	run_notifiers();
	kernel_exit(EXIT_STATUS_PANIC);
}

void panic(const char *fmt, ...)
{
	va_list ap;
	uint64_t rbp = read_rbp();

	cpu_cli();
	check_nested();
	kprintf("\nPANIC: ");
	va_start(ap, fmt);
	kvprintf(fmt, ap);
	va_end(ap);
	kprintf("\n");
	print_symbol_line("Called from: ",
			  (uint64_t)__builtin_return_address(0));
	kprintf("RSP: %016lx  RBP: %016lx\n", (unsigned long)read_rsp(),
		(unsigned long)rbp);
	print_control_registers();
	backtrace_print(rbp);
	run_notifiers();
	kernel_exit(EXIT_STATUS_PANIC);
}

void kassert_fail(const char *expr, const char *file, int line,
		  const char *func)
{
	panic("assertion failed: %s at %s:%d in %s()", expr, file, line, func);
}

void kernel_exit(int status)
{
	kprintf("EXIT: STATUS=%d\n", status);
	switch (kopt.exit) {
	case EXIT_QEMU:
		arch_qemu_exit((uint32_t)status);
		/* No debug-exit device (real hardware): halt instead. */
		arch_halt();
	case EXIT_REBOOT:
		arch_reboot();
	case EXIT_HALT:
	default:
		arch_halt();
	}
}
