/*
 * Trace points: TRACEPOINT(name, a, b) in any layer's hot path (today the
 * workloads': seeds 000 and 004 measure the tracing overhead LTTng has
 * with tbench and a kernel compile).
 *
 * TRACEPOINT(name, a, b) costs one load of a global flag and a
 * predicted-not-taken branch while tracing is off. The trace buffers
 * (docs/README.md, "What comes next") will install a probe and set the
 * flag; the same benchmark run then measures the cost of tracing.
 *
 * This is the one header of trace/ that lower layers may include
 * (docs/layers.md): lib/ and mm/ must be able to emit events, so it
 * includes nothing but lib/ and knows nothing of the buffers.
 *
 * The flag and the probe pointer are weak definitions here, so every file
 * that includes this header shares one copy without a .c file of its own,
 * and the trace subsystem can later provide the strong definitions.
 */
#ifndef TRACE_TRACEPOINT_H
#define TRACE_TRACEPOINT_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/atomic.h"
#include "lib/compiler.h"

/* name: the trace point's name (a string literal); a, b: its payload. */
typedef void (*tracepoint_probe_fn)(const char *name, uint64_t a,
				    uint64_t b);

__attribute__((weak)) bool tracepoint_enabled;
__attribute__((weak)) tracepoint_probe_fn tracepoint_probe;

#define TRACEPOINT(name, a, b)                                              \
	do {                                                                \
		if (unlikely(READ_ONCE(tracepoint_enabled))) {              \
			tracepoint_probe_fn tp_fn_ =                        \
				READ_ONCE(tracepoint_probe);                \
			if (tp_fn_)                                         \
				tp_fn_(#name, (uint64_t)(a), (uint64_t)(b)); \
		}                                                           \
	} while (0)

/*
 * Install (or, with NULL, remove) the probe. The probe is published
 * before the flag is raised, and the flag lowered before it is removed.
 */
static inline void tracepoint_set_probe(tracepoint_probe_fn fn)
{
	if (fn) {
		atomic_store_release(&tracepoint_probe, fn);
		atomic_store_release(&tracepoint_enabled, true);
	} else {
		atomic_store_release(&tracepoint_enabled, false);
		atomic_store_release(&tracepoint_probe, fn);
	}
}

#endif
