/*
 * Believable counter values (see counter_check.h).
 */
#include "lib/counter_check.h"
#include "lib/kprintf.h"

#define PERCENT 100

bool counter_check_instructions(uint64_t counted, uint64_t expected,
				char *why, size_t len)
{
	uint64_t diff = counted > expected ? counted - expected
					   : expected - counted;

	if (expected == 0) {
		ksnprintf(why, len, "no loop to compare with");
		return false;
	}
	if (counted == 0) {
		ksnprintf(why, len, "counted 0 of %llu retired instructions: "
			  "the counter does not count",
			  (unsigned long long)expected);
		return false;
	}
	if (diff > expected / PERCENT * COUNTER_CHECK_TOLERANCE_PCT) {
		ksnprintf(why, len, "counted %llu of %llu retired "
			  "instructions: %llu%% off (tolerance %u%%)",
			  (unsigned long long)counted,
			  (unsigned long long)expected,
			  (unsigned long long)(diff * PERCENT / expected),
			  COUNTER_CHECK_TOLERANCE_PCT);
		return false;
	}
	return true;
}

bool counter_check_cycles(uint64_t cycles, char *why, size_t len)
{
	if (cycles == 0) {
		ksnprintf(why, len, "the cycles counter did not advance over "
			  "the loop");
		return false;
	}
	return true;
}
