/*
 * In-kernel tests of the foundation: the boot information, trap_try()
 * catching each kind of fault and resuming, the embedded symbol table, and
 * kprintf running in the kernel's own environment.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/trap.h"
#include "kernel/ksyms.h"
#include "kernel/multiboot2.h"
#include "kernel/options.h"
#include "lib/kprintf.h"
#include "lib/ktest.h"
#include "lib/string.h"

/* Lower-half, canonical, never mapped by the kernel. */
#define TEST_UNMAPPED_ADDR 0x00007ffe00001000ul
#define TEST_NON_CANONICAL_ADDR 0x0000900000000000ul

KTEST(boot, memory_map_present)
{
	uint64_t avail = 0;

	ASSERT_TRUE(boot_info.mmap_count > 0);
	for (unsigned i = 0; i < boot_info.mmap_count; i++)
		if (boot_info.mmap[i].type == MB2_MMAP_AVAILABLE)
			avail += boot_info.mmap[i].len;
	/* Every configuration we boot has at least 32 MiB. */
	EXPECT_GE(avail, 32ul << 20);
}

KTEST(boot, command_line_copied)
{
	/* The tests only run when ktest= is on the command line. */
	EXPECT_TRUE(strstr(boot_info.cmdline, "ktest="));
	EXPECT_NE(strcmp(kopt.ktest, "none"), 0);
}

KTEST(boot, loader_named)
{
	EXPECT_GT(strlen(boot_info.loader), 0);
}

static void do_ud2(void *arg __unused)
{
	__asm__ volatile("ud2");
}

static void do_read(void *arg)
{
	(void)*(volatile uint64_t *)arg;
}

static void do_write(void *arg)
{
	*(volatile uint64_t *)arg = 1;
}

static void do_divide(void *arg)
{
	/* In assembly: the compiler may rewrite a C division (1u / x is
	 * just x == 1) and never divide at all. */
	uint32_t divisor = *(uint32_t *)arg;

	__asm__ volatile("xor %%edx, %%edx\n\tmov $100, %%eax\n\tdivl %0"
			 :
			 : "r"(divisor)
			 : "rax", "rdx", "cc");
}

static void do_nothing(void *arg)
{
	(*(int *)arg)++;
}

KTEST(trap, catches_invalid_opcode)
{
	struct trap_caught c;

	trap_try(do_ud2, NULL, &c);
	EXPECT_TRUE(c.faulted);
	EXPECT_EQ(c.vector, VEC_INVALID_OPCODE);
}

KTEST(trap, catches_page_fault_with_cr2)
{
	struct trap_caught c;

	trap_try(do_read, (void *)TEST_UNMAPPED_ADDR, &c);
	EXPECT_TRUE(c.faulted);
	EXPECT_EQ(c.vector, VEC_PAGE_FAULT);
	EXPECT_EQ(c.cr2, TEST_UNMAPPED_ADDR);
	EXPECT_EQ(c.error_code & PF_ERR_WRITE, 0);
	EXPECT_EQ(c.error_code & PF_ERR_PRESENT, 0);

	trap_try(do_write, (void *)TEST_UNMAPPED_ADDR, &c);
	EXPECT_TRUE(c.faulted);
	EXPECT_EQ(c.error_code & PF_ERR_WRITE, PF_ERR_WRITE);
}

KTEST(trap, catches_general_protection)
{
	struct trap_caught c;

	trap_try(do_read, (void *)TEST_NON_CANONICAL_ADDR, &c);
	EXPECT_TRUE(c.faulted);
	EXPECT_EQ(c.vector, VEC_GENERAL_PROTECTION);
}

KTEST(trap, catches_divide_error)
{
	struct trap_caught c;
	unsigned zero = 0;

	trap_try(do_divide, &zero, &c);
	EXPECT_TRUE(c.faulted);
	EXPECT_EQ(c.vector, VEC_DIVIDE_ERROR);
}

KTEST(trap, no_fault_runs_to_completion)
{
	struct trap_caught c;
	int calls = 0;

	trap_try(do_nothing, &calls, &c);
	EXPECT_FALSE(c.faulted);
	EXPECT_EQ(calls, 1);
	/* And the machinery is re-armable many times over. */
	for (int i = 0; i < 100; i++)
		trap_try(do_ud2, NULL, &c);
	EXPECT_TRUE(c.faulted);
}

KTEST(ksyms, lookup_names_functions)
{
	uint64_t off = 99;
	uint64_t addr = (uint64_t)&ktest_run;
	const char *name = ksym_lookup(addr, &off);

	ASSERT_TRUE(name != NULL);
	EXPECT_STREQ(name, "ktest_run");
	EXPECT_EQ(off, 0);
	name = ksym_lookup(addr + 5, &off);
	EXPECT_STREQ(name, "ktest_run");
	EXPECT_EQ(off, 5);
	EXPECT_NE(ksym_address("kmain"), 0);
	EXPECT_EQ(ksym_address("no_such_symbol_here"), 0);
	EXPECT_TRUE(ksym_lookup(0x1000, &off) == NULL);
	EXPECT_GT(ksym_count(), 50);
}

extern const uint64_t ksyms_count;
extern const uint64_t ksyms_addrs[];

KTEST(ksyms, table_is_sorted)
{
	size_t unsorted = 0;

	/* The binary search in ksym_lookup() depends on this order. */
	for (size_t i = 1; i < ksyms_count; i++)
		if (ksyms_addrs[i] < ksyms_addrs[i - 1])
			unsorted++;
	EXPECT_EQ(unsorted, 0);
	EXPECT_EQ(ksym_count(), ksyms_count);
}

KTEST(kprintf, formats_in_kernel)
{
	char buf[64];

	ksnprintf(buf, sizeof(buf), "%-4s|%5d|%#x|%lu", "ab", -12, 255,
		  (unsigned long)1 << 40);
	EXPECT_STREQ(buf, "ab  |  -12|0xff|1099511627776");
}
