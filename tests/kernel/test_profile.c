/*
 * In-kernel test of the sampling profiler: every CPU spins in one known
 * function with interrupts on, and that function must be the report's
 * top entry.
 */
#include "kernel/profile.h"
#include "kernel/smp_call.h"
#include "lib/atomic.h"
#include "lib/cycles.h"
#include "lib/ktest.h"
#include "lib/string.h"
#include "arch/x86_64/tsc.h"

#define BUSY_MS 300
#define BUSY_INNER 20000
#define MS_PER_SEC 1000

static uint64_t busy_until;

/* The known busy loop: arithmetic, with a rare clock check. */
static __attribute__((noinline, noclone)) void profile_test_busy_loop(void)
{
	volatile uint64_t acc = 1;

	while (cycles_now() < atomic_load_relaxed(&busy_until))
		for (unsigned i = 0; i < BUSY_INNER; i++)
			acc = acc * 3 + i;
}

static void busy(void *arg __unused)
{
	profile_test_busy_loop();
}

KTEST(profile, top_entry_is_the_busy_loop)
{
	struct profile_entry top[2];
	uint64_t total, dropped;
	struct cpumask all;
	unsigned n;

	if (!profile_start(PROFILE_HZ))
		KTEST_SKIP("no LAPIC timer");
	atomic_store_relaxed(&busy_until,
			     cycles_now() + tsc_hz() / MS_PER_SEC * BUSY_MS);
	cpumask_online(&all, false);
	smp_run_on(&all, busy, NULL);
	profile_stop();
	n = profile_top(top, 2, &total, &dropped);
	ASSERT_TRUE(n >= 1);
	EXPECT_STREQ(top[0].symbol, "profile_test_busy_loop");
	EXPECT_GT(total, 0);
	/* Most samples land in the loop (the rest: the clock, the start). */
	EXPECT_GT(top[0].samples * 2, total);
	profile_report("profile self-test", 2);
}
