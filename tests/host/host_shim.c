/*
 * Host test shim: console, panic and main() for host test programs.
 * Each program runs the KTEST suites linked into it and prints KTAP,
 * whose top level is plain TAP, so prove can read it directly.
 *
 * Built with -DHOST_SHIM_FUZZER for the libFuzzer harnesses of
 * tests/fuzz/: libFuzzer brings main(), and the console is silent unless
 * FUZZ_VERBOSE is set in the environment (to read what an input printed).
 * A panic or failed assertion aborts, which libFuzzer reports as a crash.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../lib/assert.h"
#include "../../lib/kprintf.h"
#include "../../lib/ktest.h"
#include "../../lib/panic.h"
#include "host_shim.h"

jmp_buf host_panic_jmp;
bool host_panic_armed;
char host_panic_msg[512];
static bool host_console_quiet;

static char *capture_buf;
static size_t capture_size, capture_len;

void host_capture_start(char *buf, size_t size)
{
	capture_buf = buf;
	capture_size = size;
	capture_len = 0;
	if (size)
		buf[0] = '\0';
}

void host_capture_stop(void)
{
	capture_buf = NULL;
}

void console_write(const char *s, size_t n)
{
	if (capture_buf) {
		size_t room = capture_size - 1 - capture_len;
		size_t k = n < room ? n : room;

		memcpy(capture_buf + capture_len, s, k);
		capture_len += k;
		capture_buf[capture_len] = '\0';
	}
	if (host_console_quiet)
		return;
	fwrite(s, 1, n, stdout);
	fflush(stdout);
}

void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(host_panic_msg, sizeof(host_panic_msg), fmt, ap);
	va_end(ap);
	if (host_panic_armed)
		longjmp(host_panic_jmp, 1);
	fprintf(stderr, "panic: %s\n", host_panic_msg);
	abort();
}

void kassert_fail(const char *expr, const char *file, int line,
		  const char *func)
{
	panic("assertion failed: %s at %s:%d (%s)", expr, file, line, func);
}

#ifdef HOST_SHIM_FUZZER
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	host_console_quiet = !getenv("FUZZ_VERBOSE");
	return 0;
}
#elif !defined(HOST_SHIM_OWN_MAIN) /* benchmarks bring their own main() */
int main(int argc, char **argv)
{
	return ktest_run(argc > 1 ? argv[1] : "all") ? 1 : 0;
}
#endif
