/*
 * Host tests for the shared bus of the cache model
 * (cachemodel/model_time.c, bus_use(); model.h, invariant 5) on two CPUs
 * whose requests reach the engine in an order other than their modelled
 * times', as under pacing (cachemodel/pace.h: the CPU that is ahead by up
 * to a quantum often reaches the model first):
 *  - requests that do not overlap in modelled time queue the same
 *    whatever the order they arrive in (none at all here);
 *  - requests at the same modelled times still queue behind each other,
 *    by the same total in either order;
 *  - a stream of one CPU asked in clock order queues as on a bus that is
 *    busy until its last transaction ends;
 *  - a CPU's clock includes the cycles it slept through (cm_set_skip()),
 *    so a CPU back from a halt meets the other's bookings at its time;
 *  - a request older than the bus's window is counted, not queued;
 *  - a line taken from another CPU waits for its previous hand-over;
 *  - a line taken from a CPU that wrote it at a later modelled time waits
 *    for that write, within the causality window (model.h, invariant 8).
 * Expected values are worked out in the comments from the profile below.
 */
// HOST_SRCS: cachemodel/model_create.c cachemodel/model_access.c cachemodel/model_level.c cachemodel/model_memtype.c cachemodel/model_time.c cachemodel/model_coherence.c cachemodel/model_prefetch.c cachemodel/model_buffers.c cachemodel/model_readout.c cachemodel/profile.c
#include <stdint.h>
#include <stdlib.h>
#include "cachemodel/model.h"
#include "lib/ktest.h"
#include "tests/host/cm_test_model.h"
#include "tests/host/host_shim.h"

#define PAGE 4096u
#define UC_PA 0x10000u		/* a page made UC by uc_pair() */
/* A UC store: 7 cycles on the bus (wc_chunk), the CPU waits 110 after
 * its start (uc_store). (The queue cap is bus_cpus x fill_buffers x
 * wc_burst = 2 x 4 x 20 = 160 cycles.) */
#define CHUNK 7
#define UC_STORE 110
/* Request k of CPU c is asked at clock k * SPACING + c * SPACING / 2. */
#define SPACING 1000
#define REQUESTS 40
/* Requests a CPU is let run ahead before the other catches up: 2000
 * cycles, the default pacing quantum. */
#define AHEAD 2

static const char profile_text[] =
	"[bus]\n"
	"freq_mhz 1000\ncpi_x100 100\n"
	"l1d 1024 2 3\nl2 4096 4 10\nllc 16384 4 30\n"
	"mem_latency 100\nremote_latency 50\nuc_load 120\n"
	"uc_store 110\nwc_buffers 2\nwc_burst 20\nwc_chunk 7\n"
	"locked 15\nfence 5\nclflush 40\n"
	"bus_cpus 2\nfill_buffers 4\n";

static struct cm_model *two_cpus(void)
{
	struct cm_model *m = cm_test_model(profile_text, "bus", 2);

	if (!cm_set_type(m, UC_PA, PAGE, CM_UC))
		abort();
	return m;
}

static uint64_t clock_of(struct cm_model *m, unsigned cpu)
{
	return cm_cycles(m, cm_stats(m, cpu));
}

/* cpu runs instructions up to t busy cycles (never back), then stores
 * to UC. */
static void uc_store_at(struct cm_model *m, unsigned cpu, uint64_t t)
{
	uint64_t now = clock_of(m, cpu);

	if (t > now)
		cm_instructions(m, cpu, t - now);
	cm_access(m, cpu, UC_PA + 8 * cpu, 8, CM_STORE);
}

/* When request k of cpu is asked; same_time: both CPUs at k * SPACING. */
static uint64_t when(unsigned cpu, unsigned k, bool same_time)
{
	return (uint64_t)k * SPACING + (same_time ? 0 : cpu * SPACING / 2);
}

/*
 * Both CPUs' REQUESTS UC stores. in_order: in modelled-time order;
 * else as pacing lets them arrive: CPU 0 runs AHEAD requests, then CPU 1
 * catches up over the same stretch of time, and so on. Returns the
 * cycles both CPUs waited for the bus; none may be older than the
 * window.
 */
static uint64_t run(struct ktest_ctx *ctx, bool in_order, bool same_time)
{
	struct cm_model *m = two_cpus();
	uint64_t queued;

	for (unsigned k0 = 0; k0 < REQUESTS; k0 += AHEAD)
		for (unsigned k = k0; k < k0 + AHEAD; k++) {
			if (in_order) {
				uc_store_at(m, 0, when(0, k, same_time));
				uc_store_at(m, 1, when(1, k, same_time));
				continue;
			}
			uc_store_at(m, 0, when(0, k, same_time));
			if (k + 1 == k0 + AHEAD)
				for (unsigned j = k0; j <= k; j++)
					uc_store_at(m, 1, when(1, j, same_time));
		}
	queued = cm_stats(m, 0)->bus_queued + cm_stats(m, 1)->bus_queued;
	EXPECT_EQ(cm_stats(m, 0)->bus_late + cm_stats(m, 1)->bus_late, 0);
	cm_destroy(m);
	return queued;
}

KTEST(cachemodel_bus, interleaved_requests_queue_alike_in_any_arrival_order)
{
	/* CPU 0 at 0, 1000, 2000...; CPU 1 at 500, 1500...: each store
	 * holds the bus 7 cycles, so nobody ever waits, whether CPU 1's
	 * requests arrive between CPU 0's or after two of them. (A bus
	 * that is one "busy until" clock makes each of CPU 1's late
	 * arrivals wait for CPU 0's later booking, up to the cap.) */
	EXPECT_EQ(run(ctx, true, false), 0);
	EXPECT_EQ(run(ctx, false, false), 0);
}

KTEST(cachemodel_bus, requests_at_the_same_time_still_queue)
{
	/* Both CPUs store at 0, 1000, 2000...: the second of each pair
	 * waits for the first's 7 cycles, in either arrival order. */
	EXPECT_EQ(run(ctx, true, true), REQUESTS * CHUNK);
	EXPECT_EQ(run(ctx, false, true), REQUESTS * CHUNK);
}

KTEST(cachemodel_bus, saturated_bus_queues_in_modelled_order)
{
	struct cm_model *m = two_cpus();
	const struct cm_stats *s0 = cm_stats(m, 0), *s1 = cm_stats(m, 1);

	/* Partial WC flushes hold the bus for 7 cycles per chunk, posted
	 * (fill buffers): CPU 0 writes 8 bytes to each of two WC lines
	 * and fences at 100; the flushes take 100..107 and 107..114.
	 * CPU 1 does the same at 100, arriving later: its chunks queue
	 * behind CPU 0's (114..121, 121..128), 14 + 21 cycles. */
	ASSERT_TRUE(cm_set_type(m, 0, PAGE, CM_WC));
	for (unsigned c = 0; c < 2; c++) {
		cm_instructions(m, c, 100);
		cm_access(m, c, 0, 8, CM_STORE);
		cm_access(m, c, 64, 8, CM_STORE);
		cm_fence(m, c, CM_SFENCE);
	}
	EXPECT_EQ(s0->bus_queued, 7);
	EXPECT_EQ(s1->bus_queued, 14 + 21);
	/* sfence waits for the last flush, then costs 5. */
	EXPECT_EQ(clock_of(m, 0), 114 + 5);
	EXPECT_EQ(clock_of(m, 1), 128 + 5);
	cm_destroy(m);
}

KTEST(cachemodel_bus, one_stream_in_clock_order_packs_behind_itself)
{
	struct cm_model *m = two_cpus();
	const struct cm_stats *s = cm_stats(m, 0);

	/* Eight chunks of one line flushed at clock 5 (a slot boundary is
	 * at 16): 5..12, 12..19, ... 54..61 back to back, as on a bus busy
	 * until its last transaction ends; the CPU waits for the last. */
	ASSERT_TRUE(cm_set_type(m, 0, PAGE, CM_WC));
	cm_instructions(m, 0, 5);
	for (unsigned b = 0; b < 64; b += 16)
		cm_access(m, 0, b, 8, CM_STORE);
	for (unsigned b = 8; b < 64; b += 16)
		cm_access(m, 0, b, 4, CM_STORE);
	cm_fence(m, 0, CM_SFENCE);
	EXPECT_EQ(s->wc_partials, 1);
	EXPECT_EQ(s->bus_queued, 0);
	EXPECT_EQ(clock_of(m, 0), 5 + 8 * CHUNK + 5);
	/* A UC store asked at 20, inside that stream (busy until 61),
	 * waits for its end: starts at 61, the CPU waits 110 more. */
	uc_store_at(m, 1, 20);
	EXPECT_EQ(cm_stats(m, 1)->bus_queued, 61 - 20);
	EXPECT_EQ(clock_of(m, 1), 61 + UC_STORE);
	cm_destroy(m);
}

KTEST(cachemodel_bus, slept_cycles_join_the_clock)
{
	struct cm_model *m = two_cpus();

	/* CPU 0 ran 100000 cycles and stores; CPU 1 halted all that time
	 * and stores on waking with 500 busy cycles: with its skip, at
	 * 100500, where the bus is free. (uc_store_at() takes busy
	 * cycles.) */
	uc_store_at(m, 0, 100000);
	cm_set_skip(m, 1, 100000);
	cm_set_skip(m, 1, 5);		/* smaller: ignored */
	uc_store_at(m, 1, 500);
	EXPECT_EQ(cm_stats(m, 1)->bus_queued, 0);
	EXPECT_EQ(cm_stats(m, 1)->bus_late, 0);
	/* Busy cycles leave the skip out: 500 instructions + the store. */
	EXPECT_EQ(clock_of(m, 1), 500 + UC_STORE);
	/* The skip is in the clock the bus sees: CPU 1's store at busy
	 * 611 is at 100611, and CPU 0's at 100605 holds the bus to 100612.
	 * (Without the skip it would be at 611, a slot of its own.) */
	uc_store_at(m, 0, 100605);
	uc_store_at(m, 1, 611);
	EXPECT_EQ(cm_stats(m, 1)->bus_queued, 1);
	cm_destroy(m);
}

KTEST(cachemodel_bus, request_older_than_the_window_is_counted)
{
	struct cm_model *m = two_cpus();

	/* CPU 0 far ahead (a million cycles: beyond any window); CPU 1's
	 * request at 0 finds its slot holding a later time (the slot of
	 * 0 is that of 1048576 when the window divides 2^20). It is not
	 * queued: bus_late counts it. */
	uc_store_at(m, 0, 1u << 20);
	uc_store_at(m, 1, 0);
	EXPECT_EQ(cm_stats(m, 1)->bus_queued, 0);
	EXPECT_EQ(cm_stats(m, 1)->bus_late, 1);
	EXPECT_EQ(clock_of(m, 1), UC_STORE);
	cm_destroy(m);
}

KTEST(cachemodel_bus, a_line_handed_over_waits_for_its_previous_hand_over)
{
	struct cm_model *m = two_cpus();
	const struct cm_stats *s0 = cm_stats(m, 0);

	/* CPU 0 writes line 0 (from memory: its data at 100, the burst
	 * included). CPU 1 takes it at 80: from CPU 0's cache, the line is
	 * free again at 80 + 50 (remote_latency). CPU 0, at 100, takes it
	 * back and waits 30 for that hand-over (line_queued), then 50. */
	cm_access(m, 0, 0, 8, CM_STORE);
	EXPECT_EQ(clock_of(m, 0), 100);
	cm_instructions(m, 1, 80);
	cm_access(m, 1, 0, 8, CM_STORE);
	EXPECT_EQ(cm_stats(m, 1)->line_queued, 0);
	cm_access(m, 0, 0, 8, CM_STORE);
	EXPECT_EQ(s0->line_queued, 130 - 100);
	EXPECT_EQ(s0->transfers, 1);
	EXPECT_EQ(clock_of(m, 0), 130 + 50);
	cm_destroy(m);
}

/* The bus profile's causality window in the tests below: 1000 cycles. */
#define WINDOW 1000

KTEST(cachemodel_bus, a_line_another_cpu_wrote_later_waits_for_that_write)
{
	struct cm_model *m = two_cpus();
	const struct cm_stats *s0 = cm_stats(m, 0);

	/* CPU 1 at 500 writes line 0: from memory, it owns the line at
	 * 600 (no store buffer: its clock waits). CPU 0, at 0, reads it
	 * from CPU 1's cache: not before 600 (the write), then 50. */
	cm_set_causality(m, WINDOW);
	cm_instructions(m, 1, 500);
	cm_access(m, 1, 0, 8, CM_STORE);
	EXPECT_EQ(clock_of(m, 1), 600);
	cm_access(m, 0, 0, 8, 0);
	EXPECT_EQ(s0->causal_waits, 600);
	EXPECT_EQ(s0->line_queued, 0);
	EXPECT_EQ(clock_of(m, 0), 600 + 50);
	/* CPU 1 writes it again, an L1D hit in M (the fast path) at 900,
	 * written when the hit's data is there (900 + 3); CPU 0, at 650,
	 * takes it for a store: it waits for that write. */
	cm_access(m, 1, 0, 8, CM_STORE);	/* S -> M: an upgrade */
	cm_instructions(m, 1, 900 - clock_of(m, 1));
	EXPECT_TRUE(cm_access_fast(m, 1, 8, 8, CM_STORE));
	cm_access(m, 0, 0, 8, CM_STORE);
	EXPECT_EQ(s0->causal_waits, 600 + (903 - 650));
	EXPECT_EQ(clock_of(m, 0), 903 + 50);
	/* A reader already past the write does not wait: CPU 1 reads at
	 * 1050 the line CPU 0 wrote at 953. */
	cm_instructions(m, 1, 1050 - clock_of(m, 1));
	cm_access(m, 1, 0, 8, 0);
	EXPECT_EQ(cm_stats(m, 1)->causal_waits, 0);
	EXPECT_EQ(clock_of(m, 1), 1050 + 50);
	cm_destroy(m);
}

KTEST(cachemodel_bus, causality_waits_at_most_its_window_and_is_off_by_default)
{
	struct cm_model *m = two_cpus();

	/* Off: CPU 0 reads at 0 what CPU 1 wrote at 600, at once. */
	cm_instructions(m, 1, 500);
	cm_access(m, 1, 0, 8, CM_STORE);
	cm_access(m, 0, 0, 8, 0);
	EXPECT_EQ(cm_stats(m, 0)->causal_waits, 0);
	EXPECT_EQ(clock_of(m, 0), 50);
	cm_destroy(m);
	/* A window of 100: CPU 0 waits from 0 to 100 only. */
	m = two_cpus();
	cm_set_causality(m, 100);
	cm_instructions(m, 1, 500);
	cm_access(m, 1, 0, 8, CM_STORE);
	cm_access(m, 0, 0, 8, 0);
	EXPECT_EQ(cm_stats(m, 0)->causal_waits, 100);
	EXPECT_EQ(clock_of(m, 0), 100 + 50);
	cm_destroy(m);
}
