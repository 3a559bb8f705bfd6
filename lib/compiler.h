/*
 * Compiler helpers shared by kernel and host builds.
 */
#ifndef LIB_COMPILER_H
#define LIB_COMPILER_H

#define __printf(a, b) __attribute__((format(printf, a, b)))
#define __noreturn __attribute__((noreturn))
#define __unused __attribute__((unused))
#define __used __attribute__((used))
#define __aligned(x) __attribute__((aligned(x)))
#define __packed __attribute__((packed))
#define __section(s) __attribute__((section(s)))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a) (((x) + ((a)-1)) & ~((__typeof__(x))(a)-1))
#define ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a)-1))
#define IS_ALIGNED(x, a) (((x) & ((__typeof__(x))(a)-1)) == 0)
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define KiB(x) ((unsigned long)(x) << 10)
#define MiB(x) ((unsigned long)(x) << 20)
#define GiB(x) ((unsigned long)(x) << 30)

/* The cache-line size every allocation that must avoid false sharing uses. */
#define CACHE_LINE_SIZE 64

#endif
