/*
 * Does this machine honour memory types? A dependent-load chase through a
 * buffer is timed mapped write-back and mapped uncached: on hardware that
 * honours the PAT, every uncached load is a trip to DRAM, several times a
 * cached one. QEMU's TCG models no caches and KVM on Intel normally
 * ignores the guest's PAT for RAM, so there the two are about equal.
 *
 * The memtype experiment (experiments/memtype.c) runs the same chase at
 * full length over six types; the environment header (kernel/bench/bench_env.h)
 * needs only the verdict, and gets it from memtype_check_quick() when no
 * experiment has measured it yet.
 */
#ifndef KERNEL_MEMTYPE_CHECK_H
#define KERNEL_MEMTYPE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/bench_output.h"
#include "mm/memtype.h"

/* One chase slot per cache line. */
#define MEMCHASE_SLOT_BYTES 64
/* Largest buffer memchase_build() can arrange (1 MiB). */
#define MEMCHASE_MAX_BYTES (1u << 20)
/* UC latency at least this many times WB latency: types are honoured. */
#define MEMTYPE_HONOURED_RATIO 3
/* Below this ratio (in tenths) they are plainly ignored; between: unclear. */
#define MEMTYPE_IGNORED_RATIO_X10 15

/* A buffer of whole cache lines, linked into one cycle of loads. */
struct memchase {
	uint64_t *words;	/* page-aligned direct-map buffer */
	size_t bytes;		/* a multiple of MEMCHASE_SLOT_BYTES */
	uint64_t *cursor;	/* chase position, carried between runs */
};

/*
 * Link the slots of c->words into one random cycle (Sattolo's shuffle,
 * lib/prng.h with a fixed seed), so the chase visits every line before it
 * comes back and no prefetcher can guess the next one. Overwrites the
 * buffer; c->bytes must be at most MEMCHASE_MAX_BYTES. Not reentrant (one
 * static scratch array: experiments run one at a time).
 */
void memchase_build(struct memchase *c);
/* bench_fn body: iters dependent loads along the chase (arg: memchase). */
void memchase_run(void *arg, uint64_t iters);
/* True if the chase from c->cursor is one cycle through every slot. */
bool memchase_is_one_cycle(const struct memchase *c);
/* Retype the buffer (set_memory_type()). Returns 0, or the vm error after
 * printing "memtype: cannot map the buffer TYPE: reason". */
int memchase_retype(struct memchase *c, enum memtype t);

/*
 * The verdict from two chase latencies (any same unit, 0 = not measured):
 * BENCH_YES if uc >= MEMTYPE_HONOURED_RATIO * wb, BENCH_NO if uc is below
 * MEMTYPE_IGNORED_RATIO_X10 / 10 * wb, BENCH_UNKNOWN otherwise or if
 * either is 0.
 */
enum bench_tristate memtype_verdict_from(uint64_t wb_latency,
					 uint64_t uc_latency);

/*
 * The quick check: a 16 KiB chase, best of nine short runs WB and UC.
 * Returns the verdict, BENCH_UNKNOWN if there is no memory or the buffer
 * cannot be retyped. Leaves nothing mapped differently.
 */
enum bench_tristate memtype_check_quick(void);

#endif
