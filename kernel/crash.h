/*
 * Deliberate failures (crash= on the command line), so the tests can check
 * that a page fault, an invalid opcode, a failed assertion, a triple fault
 * and a hang are each reported or caught as they should be.
 */
#ifndef KERNEL_CRASH_H
#define KERNEL_CRASH_H

#include "kernel/options.h"

void crash_if_asked(enum crash_kind kind);

#endif
