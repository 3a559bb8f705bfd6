/*
 * console_write() fans out to every registered console. Output is
 * serialised by a simple lock so lines from several CPUs do not
 * interleave mid-line; a panicking CPU that finds the lock held for too
 * long writes anyway rather than losing its report.
 */
#include <stdbool.h>
#include "kernel/console.h"
#include "kernel/panic.h"
#include "lib/kprintf.h"

#define CONSOLE_LOCK_SPIN_LIMIT 50000000

static const struct console *consoles[CONSOLE_MAX];
static unsigned nconsoles;
static volatile int console_lock;

void console_register(const struct console *c)
{
	if (nconsoles < CONSOLE_MAX)
		consoles[nconsoles++] = c;
}

void console_write(const char *s, size_t n)
{
	bool locked = false;

	/* A panicking CPU has stopped the others, possibly while one held
	 * the lock: write without it. */
	for (long i = 0; !panic_in_progress() && i < CONSOLE_LOCK_SPIN_LIMIT;
	     i++) {
		if (!__atomic_exchange_n(&console_lock, 1, __ATOMIC_ACQUIRE)) {
			locked = true;
			break;
		}
		__builtin_ia32_pause();
	}
	for (unsigned i = 0; i < nconsoles; i++)
		consoles[i]->write(s, n);
	if (locked)
		__atomic_store_n(&console_lock, 0, __ATOMIC_RELEASE);
}

unsigned console_count(void)
{
	return nconsoles;
}

bool console_unregister(const struct console *c)
{
	for (unsigned i = 0; i < nconsoles; i++) {
		if (consoles[i] != c)
			continue;
		for (unsigned j = i + 1; j < nconsoles; j++)
			consoles[j - 1] = consoles[j];
		nconsoles--;
		return true;
	}
	return false;
}

void console_print_list(void)
{
	kprintf("consoles:");
	for (unsigned i = 0; i < nconsoles; i++)
		kprintf(" %s", consoles[i]->name);
	kprintf("\n");
}
