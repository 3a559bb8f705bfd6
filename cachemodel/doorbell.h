/*
 * The model doorbell: how the kernel talks to the cache-model plugin.
 *
 * QEMU 7.2's plugin API shows a plugin the address of every guest access
 * but not the data, so the kernel speaks through addresses: it reads
 * bytes of one page mapped read-only at a fixed virtual address, and the
 * offset of each read is a symbol. Without the plugin the page is an
 * ordinary page and a command costs a few byte loads; with it, the
 * plugin turns the reads into commands and leaves them out of the model.
 * Nothing flows back: the kernel cannot tell whether a plugin listens.
 *
 *   offset            meaning (per CPU; interrupts off for a whole command)
 *   0x000 - 0x0ff     DIGIT: acc = acc << 8 | (offset & 0xff)
 *   0x100             PUSH:  args[n++] = acc, acc = 0 (at most DB_MAX_ARGS)
 *   0x200 + cmd       run command cmd with args[0..n), then n = 0
 *   0x400 - 0x4ff     CHAR:  append byte (offset & 0xff) to the label
 *
 *   cmd               args
 *   DB_CMD_HELLO      protocol version (DB_VERSION)
 *   DB_CMD_SET_TYPE   physical address, pages, memory type (the PAT
 *                     encoding: 0 UC, 1 WC, 4 WT, 5 WP, 6 WB, 7 UC-):
 *                     the effective type, MTRRs included
 *   DB_CMD_BEGIN      region id [, scope]: start a measured region on
 *                     this CPU. Scope DB_SCOPE_CPU (the default) counts
 *                     this CPU's work; DB_SCOPE_ALL every CPU's, for work
 *                     this CPU hands to others and waits for. The plugin
 *                     prints a line per CPU either way, with the scope;
 *                     readers sum the lines of an "all" region
 *   DB_CMD_END        region id, iterations of work it held (0: not
 *                     counted): end it; the plugin prints its figures
 *   DB_CMD_LABEL      none: the CHARs since the last LABEL name the
 *                     regions that follow (e.g. the experiment's name)
 *   DB_CMD_PAUSE      region id: this CPU's open region stops counting
 *                     (every CPU's counts are left out until RESUME)
 *   DB_CMD_RESUME     region id: it counts again
 *   DB_CMD_CLFLUSHED  physical address, bytes: the kernel's flush helper
 *                     has just clflushed these lines (TCG performs no
 *                     access for clflush, so the plugin cannot see its
 *                     address): the model evicts them, without counting
 *                     the clflushes again
 *   DB_CMD_QUANTUM    cycles: pace the CPUs within this many modelled
 *                     cycles of each other from now on, for work whose
 *                     CPUs share lines at a finer grain than the run's
 *                     quantum (0: the run's quantum again; never coarser
 *                     than it; nothing on an unpaced run)
 *   DB_CMD_SERIAL     0 or 1: from now on one CPU at a time runs, the
 *                     turn going by modelled clock (cachemodel/pace.h,
 *                     invariant 9), for work whose figures would
 *                     otherwise follow the order in which the host ran
 *                     the CPUs inside a quantum; 0: concurrent pacing
 *                     again (unless the run asked for serial=1; nothing
 *                     on an unpaced run, nor on one with order=1)
 *   DB_CMD_CPU        APIC ID: this CPU's local APIC ID (each CPU says
 *                     it once, when it comes up)
 *   DB_CMD_WAKE       APIC ID: this CPU's next write of the ICR sends an
 *                     interrupt to that APIC (the plugin sees the write's
 *                     address, not its data): a paced model wakes only
 *                     that CPU if it is halted, not every halted one
 *   DB_CMD_ALIGN      none: this CPU starts work that others will join;
 *                     if every other CPU is halted, a paced model moves
 *                     its clock to a round value (cachemodel/pace.h,
 *                     pace_align()), so that what came before (a wait
 *                     on the TSC, whose length the host decides) does
 *                     not show in the clocks of the work
 *
 * Version 2 added PAUSE, RESUME and CLFLUSHED, version 3 QUANTUM,
 * version 4 SERIAL, CPU, WAKE and ALIGN; an
 * older plugin counts them as doorbell errors and otherwise works on.
 *
 * Shared by the kernel (arch/x86_64/model_doorbell.c) and the plugin
 * (cachemodel/plugin.c): plain constants, no includes.
 */
#ifndef CACHEMODEL_DOORBELL_H
#define CACHEMODEL_DOORBELL_H

/* 32 MiB below the top of the address space, far above the kernel image
 * (KERNEL_VMA + its physical load address + its size). */
#define DB_VA 0xfffffffffe000000ull
#define DB_SIZE 0x1000ull

#define DB_VERSION 4
/* The model keeps memory types below 2^DB_TYPE_MAP_BITS (higher
 * addresses are WB to it) and refuses SET_TYPE ranges reaching above. */
#define DB_TYPE_MAP_BITS 36
#define DB_MAX_ARGS 4
/* Room for the longest keyed label, terminator included, e.g.
 * "pagecache_splice|lockless_nogang_perfile|throughput|65536" or
 * "tbench|trace_outofline_shared_array|throughput+ops|0". */
#define DB_LABEL_MAX 80

#define DB_DIGIT_BASE 0x000
#define DB_DIGIT_BITS 8
#define DB_PUSH 0x100
#define DB_CMD_BASE 0x200
#define DB_CHAR_BASE 0x400
#define DB_BYTE_MASK 0xff

#define DB_CMD_HELLO 0
#define DB_CMD_SET_TYPE 1
#define DB_CMD_BEGIN 2
#define DB_CMD_END 3
#define DB_CMD_LABEL 4
#define DB_CMD_PAUSE 5
#define DB_CMD_RESUME 6
#define DB_CMD_CLFLUSHED 7
#define DB_CMD_QUANTUM 8
#define DB_CMD_SERIAL 9
#define DB_CMD_CPU 10
#define DB_CMD_WAKE 11
#define DB_CMD_ALIGN 12

#define DB_SCOPE_CPU 0
#define DB_SCOPE_ALL 1

#endif
