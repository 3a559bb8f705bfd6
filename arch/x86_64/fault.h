/*
 * The page-fault fix-up that hands demand faults to mm/space.h.
 */
#ifndef ARCH_X86_64_FAULT_H
#define ARCH_X86_64_FAULT_H

/* Install it (boot CPU, once, after idt_init). */
void fault_init(void);

#endif
