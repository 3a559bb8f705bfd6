/*
 * Host test of what a pause-waiting CPU watches (cachemodel/pause_watch.h,
 * used by cachemodel/plugin.c to filter its pokes, cachemodel/pace.h
 * invariant 7 a). The turns are those of the kernel's poll loops
 * (lib/atomic.h cpu_relax(): a load of the polled flag, then `pause`):
 *  - the lines a turn touched are watched, and no other;
 *  - a write's lines are a range: a write that only starts or only ends
 *    on a watched line is watched;
 *  - a turn that touched more lines than the watch holds, and the first
 *    pause after a long run of code, watch every line (invariant 3);
 *  - each pause starts a new turn: what the last turn touched is not
 *    watched at the next pause unless touched again;
 *  - a line touched twice in a turn takes one place.
 */
// HOST_SRCS:
#include <stdint.h>
#include <string.h>
#include "cachemodel/pause_watch.h"
#include "lib/ktest.h"
#include "tests/host/host_shim.h"

#define FLAG_LINE 0x1000u	/* the polled flag's line */
#define STACK_LINE 0x2000u	/* a stack slot the loop spills to */
#define OTHER_LINE 0x3000u	/* data the partner writes meanwhile */

static void turn(struct pause_watch *w, const uint64_t *lines, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		pause_watch_note(w, lines[i]);
	pause_watch_publish(w);
}

KTEST(pause_watch, watches_the_lines_of_the_last_turn_only)
{
	static struct pause_watch w;
	const uint64_t poll[] = { FLAG_LINE, STACK_LINE, FLAG_LINE };

	memset(&w, 0, sizeof(w));
	turn(&w, poll, 3);
	EXPECT_TRUE(pause_watch_has(&w, FLAG_LINE, FLAG_LINE));
	EXPECT_TRUE(pause_watch_has(&w, STACK_LINE, STACK_LINE));
	EXPECT_FALSE(pause_watch_has(&w, OTHER_LINE, OTHER_LINE));
	EXPECT_FALSE(pause_watch_has(&w, FLAG_LINE + 1, FLAG_LINE + 1));
	/* One place for the flag touched twice. */
	EXPECT_EQ(w.n, 2);
}

KTEST(pause_watch, a_write_range_touching_a_watched_line_is_watched)
{
	static struct pause_watch w;
	const uint64_t poll[] = { FLAG_LINE };

	memset(&w, 0, sizeof(w));
	turn(&w, poll, 1);
	EXPECT_TRUE(pause_watch_has(&w, FLAG_LINE - 1, FLAG_LINE));
	EXPECT_TRUE(pause_watch_has(&w, FLAG_LINE, FLAG_LINE + 1));
	EXPECT_FALSE(pause_watch_has(&w, FLAG_LINE + 1, FLAG_LINE + 2));
	EXPECT_FALSE(pause_watch_has(&w, FLAG_LINE - 2, FLAG_LINE - 1));
}

KTEST(pause_watch, a_long_turn_watches_every_line)
{
	static struct pause_watch w;
	uint64_t many[PAUSE_WATCH_LINES + 1];

	for (unsigned n = PAUSE_WATCH_LINES; n <= PAUSE_WATCH_LINES + 1;
	     n++) {
		memset(&w, 0, sizeof(w));
		for (unsigned i = 0; i < n; i++)
			many[i] = FLAG_LINE + i;
		turn(&w, many, n);
		/* Exactly the watch's size: still line by line. */
		EXPECT_EQ(pause_watch_has(&w, OTHER_LINE, OTHER_LINE),
			  n > PAUSE_WATCH_LINES);
		EXPECT_TRUE(pause_watch_has(&w, FLAG_LINE + n - 1,
					    FLAG_LINE + n - 1));
	}
	/* The first pause after a long stretch of code: every line, however
	 * many more lines that code touched. */
	memset(&w, 0, sizeof(w));
	for (uint64_t l = 0; l < 10000; l++)
		pause_watch_note(&w, l);
	pause_watch_publish(&w);
	EXPECT_TRUE(pause_watch_has(&w, OTHER_LINE * 7, OTHER_LINE * 7));
}

KTEST(pause_watch, each_pause_starts_a_new_turn)
{
	static struct pause_watch w;
	uint64_t many[PAUSE_WATCH_LINES + 1];
	const uint64_t poll[] = { FLAG_LINE };

	memset(&w, 0, sizeof(w));
	for (unsigned i = 0; i <= PAUSE_WATCH_LINES; i++)
		many[i] = OTHER_LINE + i;
	turn(&w, many, PAUSE_WATCH_LINES + 1);	/* the loop's entry */
	turn(&w, poll, 1);			/* its turns */
	EXPECT_TRUE(pause_watch_has(&w, FLAG_LINE, FLAG_LINE));
	EXPECT_FALSE(pause_watch_has(&w, OTHER_LINE, OTHER_LINE));
	turn(&w, poll, 1);
	EXPECT_FALSE(pause_watch_has(&w, OTHER_LINE + 1, OTHER_LINE + 1));
	/* A turn that touched nothing watches nothing. */
	turn(&w, poll, 0);
	EXPECT_FALSE(pause_watch_has(&w, FLAG_LINE, FLAG_LINE));
}
