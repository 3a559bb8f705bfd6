/*
 * Host test shim: lets portable kernel code (lib/, mm/, trace/, the ia64
 * model) run as an ordinary program. panic() and kassert_fail() abort,
 * unless a test armed HOST_EXPECT_PANIC, in which case they jump back.
 */
#ifndef TESTS_HOST_SHIM_H
#define TESTS_HOST_SHIM_H

#include <setjmp.h>
#include <stdbool.h>

#include <stddef.h>

/* Copy console output into buf (NUL-terminated, truncated to size) as
 * well as printing it, until host_capture_stop(). */
void host_capture_start(char *buf, size_t size);
void host_capture_stop(void);

extern jmp_buf host_panic_jmp;
extern bool host_panic_armed;
extern char host_panic_msg[512];

/*
 * Evaluates to true if stmt panicked (message in host_panic_msg).
 * Usage: EXPECT_TRUE(HOST_EXPECT_PANIC(buddy_free(p)));
 */
#define HOST_EXPECT_PANIC(stmt)                                             \
	({                                                                  \
		volatile bool host_panicked_ = false;                              \
		host_panic_msg[0] = '\0';                                   \
		host_panic_armed = true;                                    \
		if (setjmp(host_panic_jmp) == 0) {                          \
			stmt;                                               \
		} else {                                                    \
			host_panicked_ = true;                              \
		}                                                           \
		host_panic_armed = false;                                   \
		host_panicked_;                                             \
	})

#endif
