/*
 * Kernel setjmp/longjmp (arch/x86_64/setjmp.asm). Only callee-saved
 * registers, RSP and RIP are kept: enough to unwind out of a caught fault.
 */
#ifndef ARCH_X86_64_SETJMP_H
#define ARCH_X86_64_SETJMP_H

#include <stdint.h>
#include "lib/compiler.h"

struct kjmp_buf {
	uint64_t rbx, rbp, r12, r13, r14, r15, rsp, rip;
};

__attribute__((returns_twice)) int ksetjmp(struct kjmp_buf *buf);
__noreturn void klongjmp(struct kjmp_buf *buf, int val);

#endif
