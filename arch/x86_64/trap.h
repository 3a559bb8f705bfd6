/*
 * Exceptions and interrupts: the frame the entry stubs build, handler
 * registration, and trap_try(), which runs a function and catches an
 * expected fault instead of panicking (tests use it to touch unmapped
 * pages and come back).
 */
#ifndef ARCH_X86_64_TRAP_H
#define ARCH_X86_64_TRAP_H

#include <stdbool.h>
#include <stdint.h>

#define VEC_DIVIDE_ERROR 0
#define VEC_DEBUG 1
#define VEC_NMI 2
#define VEC_BREAKPOINT 3
#define VEC_OVERFLOW 4
#define VEC_BOUND_RANGE 5
#define VEC_INVALID_OPCODE 6
#define VEC_DEVICE_NOT_AVAILABLE 7
#define VEC_DOUBLE_FAULT 8
#define VEC_INVALID_TSS 10
#define VEC_SEGMENT_NOT_PRESENT 11
#define VEC_STACK_FAULT 12
#define VEC_GENERAL_PROTECTION 13
#define VEC_PAGE_FAULT 14
#define VEC_X87_FP 16
#define VEC_ALIGNMENT_CHECK 17
#define VEC_MACHINE_CHECK 18
#define VEC_SIMD_FP 19
#define VEC_VIRTUALIZATION 20
#define VEC_CONTROL_PROTECTION 21
#define VEC_EXCEPTION_COUNT 32
#define VEC_COUNT 256

/* #PF error code bits (SDM vol. 3A, 4.7). */
#define PF_ERR_PRESENT (1u << 0)
#define PF_ERR_WRITE (1u << 1)
#define PF_ERR_USER (1u << 2)
#define PF_ERR_RSVD (1u << 3)
#define PF_ERR_FETCH (1u << 4)
#define PF_ERR_PK (1u << 5)
#define PF_ERR_SS (1u << 6)

/* Built by arch/x86_64/isr.asm: GPRs pushed by the stub, then CPU frame. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error_code;
	uint64_t rip, cs, rflags, rsp, ss;
};

typedef void (*trap_handler_t)(struct trap_frame *f);

void idt_init(void);
/* Load the (shared) IDT on this CPU. */
void idt_load(void);
void trap_register(unsigned vector, trap_handler_t handler);
/*
 * A fix-up for an exception: tried first; returns true if it resolved
 * the fault (the instruction is retried), false to let the exception go
 * on to trap_try() or the panic report as if there were no fix-up.
 */
typedef bool (*trap_fixup_t)(struct trap_frame *f);
void trap_register_fixup(unsigned vector, trap_fixup_t fixup);
const char *trap_name(unsigned vector);

struct trap_caught {
	bool faulted;
	unsigned vector;
	uint64_t error_code;
	uint64_t cr2;
	uint64_t rip;
};

/*
 * Run fn(arg). If it raises an exception, unwind back here and report it
 * in *out instead of panicking. Each CPU has its own slot; nested use on
 * one CPU is not allowed (asserted).
 */
void trap_try(void (*fn)(void *), void *arg, struct trap_caught *out);

/* Called by the stubs of isr.asm with the frame they pushed: the
 * registered handler, a trap_try() catch, or panic_trap(). */
void trap_dispatch(struct trap_frame *f);

#endif
