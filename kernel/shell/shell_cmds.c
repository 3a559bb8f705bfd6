/*
 * The shell's commands (see kernel/shell/shell_cmds.h): mostly the boot
 * report's printers, on demand, plus the page-table walk, a memory-type
 * demonstration and the experiment runner.
 */
#include <stdint.h>
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpu_caches.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/pat.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/pgtable.h"
#include "arch/x86_64/pmu.h"
#include "arch/x86_64/power.h"
#include "arch/x86_64/smp.h"
#include "arch/x86_64/tsc.h"
#include "kernel/acpi.h"
#include "kernel/acpi_boot.h"
#include "kernel/bench/bench_env.h"
#include "kernel/experiment.h"
#include "kernel/bench/hw_quirks.h"
#include "kernel/ksyms.h"
#include "kernel/multiboot2.h"
#include "kernel/options.h"
#include "kernel/panic.h"
#include "kernel/shell/shell_cmds.h"
#include "kernel/shell/shell_table.h"
#include "kernel/smp.h"
#include "lib/compiler.h"
#include "lib/kprintf.h"
#include "lib/string.h"
#include "mm/filemap.h"
#include "mm/kmalloc.h"
#include "mm/memtype.h"
#include "mm/page_alloc.h"
#include "mm/tlb.h"
#include "mm/vm.h"

/* Virtual addresses have this many significant bits with 4-level paging;
 * the bits above must copy the top one (SDM vol. 1, 3.3.7.1). */
#define VA_BITS (PT_LEVEL_SHIFT(PT_LEVELS) + PT_INDEX_BITS)

/* memtype TYPE: 64 KiB, read three times; the best pass counts. */
#define MEMTYPE_DEMO_ORDER 4
#define MEMTYPE_DEMO_PAGES (1u << MEMTYPE_DEMO_ORDER)
#define MEMTYPE_DEMO_PASSES 3

void shell_error(const char *msg)
{
	kprintf("error: %s\n", msg);
}

static void cmd_help(const struct shell_parsed *p)
{
	const struct shell_command *c;

	if (!p->arg[0].present) {
		/* One line each, within 80 columns (a VGA screen). */
		kprintf("commands (help COMMAND for its arguments):\n");
		for (unsigned i = 0; i < SHELL_CMD_COUNT; i++)
			kprintf("  %-8s %s\n", shell_commands[i].name,
				shell_commands[i].help);
		kprintf("keys: Left/Right Home/End Backspace/Delete edit, "
			"Up/Down recall the history,\n"
			"      Ctrl-U erases the line, Ctrl-C drops it\n");
		return;
	}
	c = shell_find(shell_commands, SHELL_CMD_COUNT, p->arg[0].word);
	if (!c) {
		kprintf("error: help: no command '%.24s' (help lists them)\n",
			p->arg[0].word);
		return;
	}
	kprintf("usage: %s\n  %s\n", c->usage, c->help);
	if (c->details)
		kprintf("%s\n", c->details);
}

static void cmd_info(const struct shell_parsed *p)
{
	const struct acpi_info *acpi;

	switch ((enum shell_info_topic)p->arg[0].choice) {
	case INFO_CPU:
		cpu_print_report();
		break;
	case INFO_MEM:
		page_alloc_print();
		kmalloc_stats_print();
		break;
	case INFO_PAT:
		pat_print();
		break;
	case INFO_MTRR:
		if (mtrr_present)
			mtrr_print(&mtrr_state);
		else
			kprintf("mtrr: none (CPUID.1:EDX.MTRR clear)\n");
		break;
	case INFO_ACPI:
		acpi = acpi_tables();
		if (acpi)
			acpi_print(acpi);
		else
			kprintf("acpi: no tables were found at boot\n");
		break;
	case INFO_SMP:
		smp_print();
		break;
	case INFO_PMU:
		pmu_print();
		break;
	case INFO_TSC:
		tsc_print();
		break;
	case INFO_CACHES:
		cpu_caches_print();
		kprintf("caches: the boot's latency sweep and the experiments "
			"size by %s\n", bench_env_llc_text());
		break;
	case INFO_QUIRKS:
		hw_quirks_report();
		break;
	}
}

static bool canonical(uint64_t va)
{
	int64_t top = (int64_t)(va << (64 - VA_BITS)) >> (64 - VA_BITS);

	return (uint64_t)top == va;
}

static void cmd_pt(const struct shell_parsed *p)
{
	uint64_t va = p->arg[0].number;
	struct vm_translation t;

	if (p->arg[0].symbol) {
		va = ksym_address(p->arg[0].word);
		if (!va) {
			kprintf("error: pt: no kernel symbol '%.24s'\n",
				p->arg[0].word);
			return;
		}
		kprintf("pt: %s = %#lx\n", p->arg[0].word, (unsigned long)va);
	}
	if (!canonical(va)) {
		kprintf("error: pt: %#lx is not canonical (bits 63..%u must "
			"all equal bit %u)\n", (unsigned long)va, VA_BITS - 1,
			VA_BITS - 1);
		return;
	}
	if (!vm_translate(&kernel_space, va, &t)) {
		kprintf("error: pt: %#lx is not mapped (the walk would fault)"
			"\n", (unsigned long)va);
		return;
	}
	pt_walk(&kernel_space, va);
}

/* Cycles for one read of every cache line of [buf, buf + len). */
static uint64_t read_sweep(const volatile uint8_t *buf, size_t len)
{
	uint64_t t0 = rdtsc_ordered();

	for (size_t off = 0; off < len; off += CACHE_LINE_SIZE)
		(void)buf[off]; /* a volatile read is never dropped */
	return rdtsc_ordered() - t0;
}

static void cmd_memtype(const struct shell_parsed *p)
{
	const char *name = shell_memtype_names[p->arg[0].choice];
	enum memtype type = memtype_from_name(name);
	size_t len = MEMTYPE_DEMO_PAGES * PAGE_SIZE;
	uint64_t best = UINT64_MAX;
	uint8_t *buf;
	int rc;

	buf = page_alloc(MEMTYPE_DEMO_ORDER);
	if (!buf) {
		shell_error("memtype: no memory for the 64 KiB buffer");
		return;
	}
	memset(buf, 0, len);
	rc = set_memory_type(buf, MEMTYPE_DEMO_PAGES, type);
	if (rc) {
		kprintf("error: memtype: cannot map as %s: %s\n",
			memtype_name(type), vm_strerror(rc));
		page_free(buf, MEMTYPE_DEMO_ORDER);
		return;
	}
	kprintf("memtype: 64 KiB at %p (phys %#lx) now %s\n", (void *)buf,
		(unsigned long)virt_to_phys(buf), memtype_name(type));
	pt_walk(&kernel_space, (uint64_t)buf);
	for (unsigned i = 0; i < MEMTYPE_DEMO_PASSES; i++)
		best = MIN(best, read_sweep(buf, len));
	kprintf("memtype: read sweep %s: %lu TSC cycles per 64-byte line "
		"(best of %u passes)%s\n", memtype_name(type),
		(unsigned long)(best / (len / CACHE_LINE_SIZE)),
		MEMTYPE_DEMO_PASSES,
		bench_env_is_tcg() ? "; TCG: memory types are not "
				     "modelled, this is the emulator's speed" :
				     "");
	rc = set_memory_type(buf, MEMTYPE_DEMO_PAGES, MEMTYPE_WB);
	if (rc) {
		/* page_free() insists on WB: keep the pages rather than
		 * free them in the wrong state. */
		kprintf("error: memtype: cannot set the buffer back to WB "
			"(%s); 64 KiB kept\n", vm_strerror(rc));
		return;
	}
	page_free(buf, MEMTYPE_DEMO_ORDER);
}

static int cmd_run(const struct shell_parsed *p, bool profile)
{
	struct experiment_setting s[SHELL_MAX_SETTINGS];
	const struct shell_value *name = &p->arg[SHELL_RUN_ARG_NAME];
	const struct shell_value *mode = &p->arg[SHELL_RUN_ARG_MODE];
	const struct experiment *e;
	char err[EXPERIMENT_ERROR_MAX];
	int rc;

	if (!profile && strcmp(name->word, "list") == 0) {
		if (mode->present || p->nsettings)
			shell_error("run: list takes nothing after it");
		else
			experiments_list();
		return 0;
	}
	e = experiment_find(name->word);
	if (!e) {
		kprintf("error: %s: no experiment named '%.24s' (run list "
			"shows them)\n", p->cmd->name, name->word);
		return 0;
	}
	for (unsigned i = 0; i < p->nsettings; i++) {
		s[i].key = p->settings[i].key;
		s[i].value = p->settings[i].value;
	}
	rc = experiment_run_with(e,
				 mode->present && mode->choice == SHELL_RUN_FULL ?
					 EXPERIMENT_FULL :
					 EXPERIMENT_QUICK,
				 s, p->nsettings, profile || kopt.profile, err,
				 sizeof(err));
	if (rc < 0) {
		shell_error(err);
		return 0;
	}
	return rc;
}

static void cmd_tlb_stats(void)
{
	struct tlb_cpu_stats s, sum;

	kprintf("tlb: %-5s %10s %10s %10s %10s %10s %10s %10s\n", "cpu",
		"invlpg", "full", "ipi-sent", "ipi-recv", "requests", "pages",
		"pcid-keep");
	for (unsigned cpu = 0; cpu < percpu_count(); cpu++) {
		tlb_stats_read(cpu, &s);
		kprintf("tlb: %-5u %10lu %10lu %10lu %10lu %10lu %10lu %10lu\n",
			cpu, (unsigned long)s.single, (unsigned long)s.full,
			(unsigned long)s.ipis_sent,
			(unsigned long)s.ipis_received,
			(unsigned long)s.flushes, (unsigned long)s.pages,
			(unsigned long)s.pcid_hits);
	}
	tlb_stats_sum(&sum);
	kprintf("tlb: %-5s %10lu %10lu %10lu %10lu %10lu %10lu %10lu\n",
		"all", (unsigned long)sum.single, (unsigned long)sum.full,
		(unsigned long)sum.ipis_sent, (unsigned long)sum.ipis_received,
		(unsigned long)sum.flushes, (unsigned long)sum.pages,
		(unsigned long)sum.pcid_hits);
	if (sum.flushes)
		kprintf("tlb: %lu.%02lu pages per flush request (full flushes "
			"count 0); %lu PCID flushes on switch\n",
			(unsigned long)(sum.pages / sum.flushes),
			(unsigned long)(sum.pages * 100 / sum.flushes % 100),
			(unsigned long)sum.pcid_flushes);
	else
		kprintf("tlb: no flush requests yet; %lu PCID flushes on "
			"switch\n", (unsigned long)sum.pcid_flushes);
}

static void cmd_pcache_stats(void)
{
	struct pagecache_stats s;

	pagecache_stats_read(&s);
	kprintf("pcache: lookups %lu hits %lu misses %lu\n",
		(unsigned long)s.lookups, (unsigned long)s.hits,
		(unsigned long)s.misses);
	kprintf("pcache: readahead pages %lu, reclaimed pages %lu, cached "
		"now %lu\n", (unsigned long)s.readahead_pages,
		(unsigned long)s.reclaimed_pages,
		(unsigned long)s.cached_pages);
	kprintf("pcache: RCU grace periods completed %lu\n",
		(unsigned long)s.rcu_grace_periods);
}

extern const struct shell_handler __start_shell_handlers[];
extern const struct shell_handler __stop_shell_handlers[];

static void run_handler(const struct shell_parsed *p, unsigned id)
{
	for (const struct shell_handler *h = __start_shell_handlers;
	     h < __stop_shell_handlers; h++) {
		if (h->cmd_id == id) {
			h->fn(p);
			return;
		}
	}
	kprintf("error: %s: not built into this kernel\n", p->cmd->name);
}

static void cmd_cmdline(void)
{
	kprintf("cmdline: \"%s\"\n", boot_info.cmdline);
	options_print();
	options_list_experiment_options();
	/* A rejected option keeps its default: say so again here, where
	 * someone checks what applies (the reasons are in the boot log). */
	if (kopt.errors)
		kprintf("cmdline: %u option%s rejected at boot and left at "
			"the default (the boot log says why)\n", kopt.errors,
			kopt.errors == 1 ? "" : "s");
}

int shell_dispatch(const struct shell_parsed *p, int failures)
{
	switch ((enum shell_cmd_id)(p->cmd - shell_commands)) {
	case SHELL_CMD_HELP:
		cmd_help(p);
		break;
	case SHELL_CMD_INFO:
		cmd_info(p);
		break;
	case SHELL_CMD_PT:
		cmd_pt(p);
		break;
	case SHELL_CMD_MEMTYPE:
		cmd_memtype(p);
		break;
	case SHELL_CMD_RUN:
		return cmd_run(p, false);
	case SHELL_CMD_PROFILE:
		return cmd_run(p, true);
	case SHELL_CMD_TRACE:
		run_handler(p, SHELL_CMD_TRACE);
		break;
	case SHELL_CMD_TLB:
		cmd_tlb_stats();
		break;
	case SHELL_CMD_PCACHE:
		cmd_pcache_stats();
		break;
	case SHELL_CMD_CMDLINE:
		cmd_cmdline();
		break;
	case SHELL_CMD_REBOOT:
		kprintf("shell: rebooting\n");
		arch_reboot();
	case SHELL_CMD_HALT:
		kprintf("shell: halt (%d experiment failure(s) in this boot)"
			"\n", failures);
		kernel_exit(failures ? 1 : 0);
	case SHELL_CMD_COUNT:
		break;
	}
	return 0;
}
