/*
 * In-kernel test of the sampling profiler: this CPU spins in one known
 * function with interrupts on while only its own timer samples, and that
 * function must be the report's top entry.
 */
#include "kernel/profile.h"
#include "kernel/smp_call.h"
#include "lib/cycles.h"
#include "lib/ktest.h"
#include "lib/string.h"
#include "arch/x86_64/tsc.h"

#define BUSY_MS 200
#define BUSY_INNER 20000
#define MS_PER_SEC 1000

/* The known busy loop: arithmetic, with a rare clock check. */
static __attribute__((noinline, noclone)) void profile_test_busy_loop(
	uint64_t until)
{
	volatile uint64_t acc = 1;

	while (cycles_now() < until)
		for (unsigned i = 0; i < BUSY_INNER; i++)
			acc = acc * 3 + i;
}

KTEST(profile, top_entry_is_the_busy_loop)
{
	struct profile_entry top[2];
	uint64_t total, dropped;
	struct cpumask self;
	unsigned n;

	cpumask_clear(&self);
	cpumask_set(&self, smp_this_cpu());
	if (!profile_start_on(&self, PROFILE_HZ))
		KTEST_SKIP("no LAPIC timer");
	profile_test_busy_loop(cycles_now() + tsc_hz() / MS_PER_SEC * BUSY_MS);
	profile_stop();
	n = profile_top(top, 2, &total, &dropped);
	ASSERT_TRUE(n >= 1);
	EXPECT_STREQ(top[0].symbol, "profile_test_busy_loop");
	EXPECT_GT(total, 0);
	/* Most samples land in the loop (the rest: the clock, the start). */
	EXPECT_GT(top[0].samples * 2, total);
	profile_report("profile self-test", 2);
}
