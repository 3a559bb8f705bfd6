/*
 * tlb_purge_model: the tlb_purge experiment's glue to the ia64 purge model
 * (arch/ia64/). One stream of events (spaces created, loaded, faulting,
 * exiting; every page reclaim unmaps from a job's space a purge request
 * from CPU 0) feeds two modelled machines, one per version of
 * ia64_global_tlb_purge(): index 0 the old, 1 the new. Every call takes
 * one lock, so the jobs' CPUs and reclaim may feed it at once.
 */
#ifndef EXPERIMENTS_TLB_PURGE_MODEL_H
#define EXPERIMENTS_TLB_PURGE_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/ia64/machine.h"
#include "mm/space.h"

#define TP_RID_BITS 24 /* Montecito's region-ID width */

/* Forgets any previous run (no machine allocated): call first. */
void tp_model_init(void);
/* Allocates and starts both machines with ncpus CPUs (at most
 * IA64_MAX_CPUS). False without memory or on a configuration the model
 * refuses (its fault printed). */
bool tp_model_setup(unsigned ncpus);
/* Frees what tp_model_setup() allocated (any part of it). */
void tp_model_teardown(void);

/* A space is created (returns its model slot) or has exited. */
int tp_model_create(struct addr_space *as);
void tp_model_exit(int slot);
/* cpu switches to slot's space, or (idle) to a kernel thread. */
void tp_model_switch(unsigned cpu, int slot);
void tp_model_idle(unsigned cpu);
/* A job's turn: cpu switched to slot's space and touched the n job
 * addresses va[] (heap or toolchain of workloads/purge_jobs.h). */
void tp_model_turn(unsigned cpu, int slot, const uint64_t *va, unsigned n);
/* Reclaim's unmap observer (mm/reclaim.h; arg unused): a purge request
 * from CPU 0 for a page of a job's space; other unmaps are counted as
 * skipped. Also counts the unmaps of a space loaded on another CPU. */
void tp_model_purge(struct addr_space *as, uint64_t va, void *arg);

/* Prints the machines' global purges so far, in the seed's style. */
void tp_model_line(void);
/* Machine p (0 old, 1 new), once set up; read when nothing feeds it. */
const struct ia64_machine *tp_model_machine(int p);
/* Unmaps reclaim made of a space loaded on another CPU then. */
uint64_t tp_model_unmaps_loaded(void);
/* Unmaps not modelled (not a job's), and those of pages a job had not
 * reported yet (mapped in the model first). */
uint64_t tp_model_skipped(void);
uint64_t tp_model_late(void);

#endif
