/*
 * Invariant checks. kassert() is always compiled in: this is a laboratory,
 * and an invariant that fails silently would make every figure suspect.
 * The kernel's kassert_fail() panics; the host test shim aborts.
 */
#ifndef LIB_ASSERT_H
#define LIB_ASSERT_H

#include "compiler.h"

__noreturn void kassert_fail(const char *expr, const char *file, int line,
			     const char *func);

#define kassert(e)                                                          \
	do {                                                                \
		if (unlikely(!(e)))                                         \
			kassert_fail(#e, __FILE__, __LINE__, __func__);     \
	} while (0)

#define BUILD_ASSERT(e) _Static_assert(e, #e)

#endif
