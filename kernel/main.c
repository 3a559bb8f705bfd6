/*
 * kmain(): the boot CPU's path from the assembly entry to the experiments.
 *
 *   consoles -> boot information -> command line -> CPU tables (GDT, IDT)
 *   -> boot report -> tests (ktest=) -> experiments (run=)
 *   -> the shell (shell) -> EXIT
 */
#include <stdint.h>
#include "arch/x86_64/apic.h"
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/fault.h"
#include "arch/x86_64/fpu.h"
#include "arch/x86_64/gdt.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/model_doorbell.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/pmu.h"
#include "arch/x86_64/pat.h"
#include "arch/x86_64/serial.h"
#include "arch/x86_64/tlb.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/tsc.h"
#include "arch/x86_64/vga.h"
#include "kernel/acpi_boot.h"
#include "kernel/bench/cache_sweep.h"
#include "kernel/console.h"
#include "kernel/crash.h"
#include "kernel/fbcon.h"
#include "kernel/bench/hw_quirks.h"
#include "kernel/experiment.h"
#include "kernel/log.h"
#include "kernel/version.h"
#include "kernel/multiboot2.h"
#include "kernel/options.h"
#include "kernel/panic.h"
#include "kernel/shell/shell.h"
#include "kernel/smp.h"
#include "kernel/smp_call.h"
#include "kernel/tsc_sync.h"
#include "lib/kprintf.h"
#include "lib/rcu.h"
#include "lib/ktest.h"
#include "lib/string.h"
#include "mm/filemap.h"
#include "mm/kmalloc.h"
#include "mm/fwmap.h"
#include "mm/page_alloc.h"
#include "mm/reclaim.h"
#include "mm/vm.h"

static const struct console serial_console = {"serial", serial_write};
static const struct console vga_console = {"vga", vga_write};
static const struct console fb_console = {"fb", fbcon_write};

/* kmalloc's pages come from the buddy allocator through the direct map. */
static const struct kmalloc_backend kernel_kmalloc_backend = {page_alloc,
							       page_free};

/* The page allocator from boot_info: the firmware's map, and what the
 * boot loader left in use (its information, the modules). */
static void page_alloc_from_boot_info(void)
{
	static struct fwmap_entry firmware[BOOT_MAX_MMAP];
	static struct fwmap_entry in_use[1 + BOOT_MAX_MODULES];
	struct page_alloc_boot b = {firmware, boot_info.mmap_count, in_use, 0,
				    kopt.poison};

	for (unsigned i = 0; i < boot_info.mmap_count; i++) {
		firmware[i].base = boot_info.mmap[i].base;
		firmware[i].len = boot_info.mmap[i].len;
		firmware[i].type = boot_info.mmap[i].type;
	}
	in_use[b.in_use_entries++] = (struct fwmap_entry){
		boot_info.mbi_phys, boot_info.mbi_size, FWMAP_BOOTINFO};
	for (unsigned i = 0; i < boot_info.module_count; i++)
		in_use[b.in_use_entries++] = (struct fwmap_entry){
			boot_info.modules[i].start,
			boot_info.modules[i].end - boot_info.modules[i].start,
			FWMAP_MODULE};
	page_alloc_init(&b);
}

/* The kernel's page tables; the framebuffer, if GRUB set up a linear
 * RGB one, is mapped write-combining. */
static void vm_init_from_boot_info(void)
{
	const struct boot_framebuffer *fb = &boot_info.fb;

	if (fb->present && fb->type == MB2_FB_TYPE_RGB && !fb->refused)
		vm_init(fb->addr, (uint64_t)fb->pitch * fb->height);
	else
		vm_init(0, 0);
}

/* The memory part of the boot report: map, allocator, PAT, MTRRs and two
 * page-table walks (a kernel text address and a direct-map address). */
static void memory_report(void)
{
	page_alloc_print();
	if (log_enabled(LOG_DEBUG))
		kmalloc_stats_print();
	pat_print();
	if (mtrr_present)
		mtrr_print(&mtrr_state);
	else
		kprintf("mtrr: none (CPUID.1:EDX.MTRR clear)\n");
	pt_walk(&kernel_space, (uint64_t)&memory_report);
	pt_walk(&kernel_space, (uint64_t)phys_to_virt(boot_info.mbi_phys));
}

/*
 * Check the loader's framebuffer before anything draws into it: against
 * the firmware's map with the kernel image carved out (page_alloc has not
 * run yet), the CPU's physical width and the boot direct map.
 */
static void check_framebuffer(void)
{
	static struct fwmap_entry raw[BOOT_MAX_MMAP], storage[BOOT_MAX_MMAP + 8];
	struct boot_framebuffer *fb = &boot_info.fb;
	struct fwmap map;

	if (!fb->present)
		return;
	for (unsigned i = 0; i < boot_info.mmap_count; i++)
		raw[i] = (struct fwmap_entry){boot_info.mmap[i].base,
					      boot_info.mmap[i].len,
					      boot_info.mmap[i].type};
	fwmap_init(&map, storage, BOOT_MAX_MMAP + 8);
	map.quiet = true; /* page_alloc reports the map's problems */
	fwmap_sanitize(&map, raw, boot_info.mmap_count);
	fwmap_reserve(&map, (uint64_t)__kernel_phys_start,
		      (uint64_t)__kernel_phys_end -
			      (uint64_t)__kernel_phys_start,
		      FWMAP_KERNEL);
	fb->refused = mb2_framebuffer_problem(fb, &map,
					      cpu_info.phys_addr_bits,
					      EARLY_DIRECT_MAP_SIZE);
	if (fb->refused)
		kprintf("console: framebuffer %ux%u pitch %u at %#llx "
			"refused (%s): no screen console\n", fb->width,
			fb->height, fb->pitch, (unsigned long long)fb->addr,
			fb->refused);
}

static void setup_screen_console(void)
{
	const struct boot_framebuffer *fb = &boot_info.fb;

	check_framebuffer();
	if (fb->refused)
		return;
	if (fb->present && fb->type == MB2_FB_TYPE_EGA_TEXT &&
	    (kopt.consoles & CONSOLE_VGA)) {
		vga_init(phys_to_virt(fb->addr), fb->width, fb->height);
		console_register(&vga_console);
	}
	if (fb->present && fb->type == MB2_FB_TYPE_RGB &&
	    (kopt.consoles & CONSOLE_FB) &&
	    fbcon_init(phys_to_virt(fb->addr), fb, font_psf_start,
		       (size_t)(font_psf_end - font_psf_start)))
		console_register(&fb_console);
}

/* Entered from boot/multiboot2.asm with GRUB's magic and the physical
 * address of the multiboot2 information. */
void kmain(uint32_t magic, uint32_t mbi_phys)
{
	int failures = 0;

	if (serial_init())
		console_register(&serial_console);
	kprintf("\nkernel %s (%s): booting\n", kernel_version,
		kernel_git_hash);
	if (magic != MB2_BOOTLOADER_MAGIC)
		panic("bad multiboot2 magic %#x", magic);

	/* Copy the boot information first: it may lie in memory we are
	 * about to reuse. */
	mb2_parse(phys_to_virt(mbi_phys), mbi_phys);
	options_parse(boot_info.cmdline);

	gdt_init_cpu(&boot_cpu_tables);
	/* Before anything can take an RCU read lock or count per CPU
	 * (lib/this_cpu.h reads the CPU number through GS). */
	percpu_early_bsp();
	idt_init();
	fault_init();
	cpu_identify();
	/* After cpu_identify(): the framebuffer check needs MAXPHYADDR. */
	setup_screen_console();
	/* Serial was registered before the command line could be read. */
	if (!(kopt.consoles & CONSOLE_SERIAL) && serial_present()) {
		if (console_count() > 1) {
			kprintf("console: serial off (console= leaves it out)\n");
			console_unregister(&serial_console);
		} else {
			kprintf("console: console= leaves serial out but there "
				"is no other console; keeping serial\n");
		}
	}
	fpu_init_cpu();

	console_print_list();
	if (log_enabled(LOG_INFO)) {
		mb2_print();
		options_print();
		cpu_print_report();
	}

	/* ---- memory: page allocator, page tables (mm/) ------------------ */
	page_alloc_set_phys_limit(cpu_info.phys_addr_bits);
	page_alloc_from_boot_info();
	mtrr_read();
	vm_init_from_boot_info();
	if (kopt.tlb_ceiling)
		tlb_flush_ceiling = kopt.tlb_ceiling;
	tlb_init_cpu(!kopt.nopcid);
	kmalloc_init(&kernel_kmalloc_backend);
	/* A cache-model QEMU plugin, if one listens, learns memory types
	 * and measured regions from here on (docs/cachemodel.md). */
	model_doorbell_init();
	/* Per-CPU object caches: a kmalloc/kfree pair touches no lock and
	 * no shared line (seed 004's lesson). */
	kmalloc_enable_cpu_caches(smp_this_cpu, MAX_CPUS);
	/* RCU: every CPU starts idle; this one runs readers from now on. */
	rcu_init(rcu_kick_cpu);
	rcu_idle_exit();
	/* The page cache takes frames from the page allocator, which asks it
	 * for clean pages back when free memory runs low. */
	pagecache_init(&page_alloc_frames);
	pagecache_stats_enable();
	page_alloc_set_reclaim(reclaim_page_cache, PAGECACHE_LOW_WATERMARK_PAGES);
	if (log_enabled(LOG_INFO))
		memory_report();
	/* ---- end memory ------------------------------------------------- */

	/* ---- CPUs and time: ACPI, APIC, TSC, PMU, SMP ------------------- */
	acpi_init();
	apic_init_bsp();
	percpu_init_bsp(apic_id());
	/* Under -icount the TSC ticks once per nanosecond of virtual time:
	 * its rate is known, and a count against the PM timer would only
	 * add the timer's phase, which depends on how long the host took
	 * to complete the boot loader's reads (docs/cachemodel.md). */
	if (kopt.icount)
		tsc_init_given(ICOUNT_TSC_HZ);
	else
		tsc_init(acpi_tables() ? acpi_tables()->pm_timer_port : 0,
			 acpi_tables() && acpi_tables()->pm_timer_32bit);
	tsc_print();
	apic_timer_calibrate();
	apic_print();
	pmu_init();
	pmu_print();
	cache_sweep_run();
	if (log_enabled(LOG_INFO))
		cache_sweep_print();
	smp_init();
	smp_print();
	cpu_sti();
	{
		struct tsc_sync_result sync;

		if (tsc_sync_check(&sync)) {
			tsc_sync_print(&sync);
			hw_quirks_note_tsc_sync(&sync);
		}
	}
	/* ---- end CPUs and time ------------------------------------------ */

	/* What makes this machine's figures less trustworthy. */
	hw_quirks_report();

	crash_if_asked(kopt.crash);

	if (strcmp(kopt.ktest, "none") != 0)
		failures = ktest_run(kopt.ktest);

	/* A cache model's figures depend on where memory lands. */
	experiments_settle_memory(kopt.cachemodel[0] != '\0');
	failures += experiments_run(kopt.run, kopt.runmode, kopt.profile);

	if (kopt.shell)
		shell_run(failures);
	kernel_exit(failures ? 1 : 0);
}
