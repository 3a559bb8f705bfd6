/*
 * Host tests for lib/counter_check.c: a counter that does not count, one
 * that counts wrong, one within tolerance, a cycles counter that stands
 * still. The boot's PMU self-test rests on these verdicts.
 */
// HOST_SRCS: lib/counter_check.c
#include <string.h>
#include "lib/counter_check.h"
#include "lib/ktest.h"

#define LOOP_INSNS 2000000ull

KTEST(counter_check, instructions)
{
	char why[128];

	EXPECT_TRUE(counter_check_instructions(LOOP_INSNS, LOOP_INSNS, why,
					       sizeof(why)));
	/* A few hundred instructions around the loop are fine. */
	EXPECT_TRUE(counter_check_instructions(LOOP_INSNS + 300, LOOP_INSNS,
					       why, sizeof(why)));
	EXPECT_FALSE(counter_check_instructions(0, LOOP_INSNS, why,
						sizeof(why)));
	EXPECT_TRUE(strstr(why, "does not count") != NULL);
	EXPECT_FALSE(counter_check_instructions(LOOP_INSNS / 2, LOOP_INSNS,
						why, sizeof(why)));
	EXPECT_TRUE(strstr(why, "50% off") != NULL);
	EXPECT_FALSE(counter_check_instructions(LOOP_INSNS * 105 / 100,
						LOOP_INSNS, why,
						sizeof(why)));
	EXPECT_FALSE(counter_check_instructions(5, 0, why, sizeof(why)));
}

KTEST(counter_check, cycles)
{
	char why[128];

	EXPECT_TRUE(counter_check_cycles(1, why, sizeof(why)));
	EXPECT_FALSE(counter_check_cycles(0, why, sizeof(why)));
	EXPECT_TRUE(strstr(why, "did not advance") != NULL);
}
