/*
 * LTTng-UST tracepoint provider for tools/bench_host/trace_bench.c: one
 * event with the same 16-byte payload (two 64-bit integers) as ours.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "tools/bench_host/ust_tp.h"

#if !defined(TOOLS_BENCH_HOST_UST_TP_H) ||                                  \
	defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TOOLS_BENCH_HOST_UST_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(bench, ev,
	LTTNG_UST_TP_ARGS(uint64_t, seq, uint64_t, value),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)
		lttng_ust_field_integer(uint64_t, value, value)))

#endif

#include <lttng/tracepoint-event.h>
