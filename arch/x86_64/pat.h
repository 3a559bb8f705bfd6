/*
 * Programming the PAT and reading the MTRRs on this CPU.
 */
#ifndef ARCH_X86_64_PAT_H
#define ARCH_X86_64_PAT_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/x86_64/mtrr.h"
#include "arch/x86_64/pat_layout.h"
#include "mm/memtype.h"

/* The MTRR state read at boot (the boot CPU's; APs must match). */
extern struct mtrr_state mtrr_state;
extern bool mtrr_present;

/*
 * Write the kernel's PAT layout (arch/x86_64/pat_layout.c) to IA32_PAT on
 * this CPU following the SDM's procedure (caches off, flushes), then read
 * it back. Returns true if the read-back value equals the layout.
 */
bool pat_program(void);
uint64_t pat_read(void);
/* One line: IA32_PAT's value and the type of each entry. */
void pat_print(void);
/* Read MTRRcap, MTRRdefType and all ranges into mtrr_state. */
void mtrr_read(void);
/* Effective memory type of a physical page mapped with PAT type pat. */
enum memtype memtype_effective_at(uint64_t phys, enum memtype pat);

#endif
