/*
 * The kernel's side of the model doorbell (protocol: cachemodel/doorbell.h,
 * teaching note: docs/cachemodel.md). Each call is a handful of byte
 * loads from one read-only page; a cache-model QEMU plugin reads them as
 * commands, anything else (real hardware, QEMU without the plugin) just
 * performs the loads.
 */
#ifndef ARCH_X86_64_MODEL_DOORBELL_H
#define ARCH_X86_64_MODEL_DOORBELL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Map the doorbell page, say hello and mark the benchmark harness's
 * repetitions as regions. Call once, after vm_init() and mtrr_read();
 * the model then learns the MTRRs' types and the types set before (kept
 * since boot, up to a limit that is said when exceeded). Returns false
 * (with a message) if the page cannot be mapped; the doorbell then stays
 * silent.
 */
bool model_doorbell_init(void);

/* Name the regions that follow (e.g. the experiment's name); characters
 * other than printable ASCII, '"' and '\\' are sent as '?'. */
void model_doorbell_label(const char *label);

/* Begin / end a measured region on this CPU; iters: the iterations of
 * work it held (0: not counted). */
void model_doorbell_begin(uint64_t id);
void model_doorbell_end(uint64_t id, uint64_t iters);
/* Begin a region that counts every CPU's work (bench_region_begin_all()). */
void model_doorbell_begin_all(uint64_t id);

/*
 * Leave work out of this CPU's open region id and take it in again
 * (untimed work between timed slices of one measured phase); the model
 * leaves every CPU's counts between the two out of the region.
 */
void model_doorbell_pause(uint64_t id);
void model_doorbell_resume(uint64_t id);

/*
 * Ask a paced multi-CPU model to keep the CPUs within cycles modelled
 * cycles of each other from now on (0: the run's own quantum again; a
 * model never paces coarser than that): for work whose CPUs share lines
 * at a grain of a few cycles, which the run's quantum would batch.
 */
void model_doorbell_quantum(uint64_t cycles);

/*
 * Ask a paced multi-CPU model to run one CPU at a time from now on, the
 * turn passing by modelled clock (on), or to run them concurrently again
 * (off): for work whose figures would otherwise follow the order in
 * which the host ran the CPUs inside a quantum (two CPUs that take the
 * same lines in lockstep). Costs a host thread hand-over per quantum.
 */
void model_doorbell_serial(bool on);

/*
 * This CPU starts work other CPUs will join: if they are all halted, a
 * paced model starts its clock over at a round value, so that what came
 * before (a wait on the TSC, whose length the host decides) does not
 * show in the work's clocks.
 */
void model_doorbell_align(void);

/* This CPU's local APIC ID (each CPU once, when its APIC is set up). */
void model_doorbell_cpu(uint32_t apic_id);
/*
 * This CPU's next ICR write sends an interrupt to APIC apic_id: a paced
 * model then wakes that CPU only, not every halted one. Call it with
 * interrupts off, right before the write.
 */
void model_doorbell_wake(uint32_t apic_id);

/*
 * The lines of [va, va + len) (kernel virtual) have just been clflushed:
 * the model evicts them (it cannot see a clflush's address). Pages that
 * are not mapped are skipped.
 */
void model_doorbell_clflushed(const void *va, uint64_t len);

#endif
