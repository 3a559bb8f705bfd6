/*
 * Log levels for the boot report (loglevel= on the command line), with
 * Linux's numbering. Test and benchmark output is never filtered: the
 * harness must always see it.
 */
#ifndef KERNEL_LOG_H
#define KERNEL_LOG_H

#include <stdbool.h>
#include "kernel/options.h"

#define LOG_ERR 3 /* errors only */
#define LOG_WARNING 4
#define LOG_NOTICE 5 /* one-line summaries */
#define LOG_INFO 6 /* the full boot report (default) */
#define LOG_DEBUG 7 /* plus allocator and lock internals */

static inline bool log_enabled(unsigned level)
{
	return kopt.loglevel >= level;
}

#endif
