/*
 * The environment header every benchmark run starts with: what the
 * machine is, and the verdicts of the boot's two probes (the memory-type
 * chase, the latency sweep), reconciled.
 */
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/pmu.h"
#include "arch/x86_64/tsc.h"
#include "kernel/bench/bench_env.h"
#include "kernel/bench/cache_sweep.h"
#include "kernel/bench/env_report.h"
#include "kernel/bench/memtype_check.h"
#include "kernel/multiboot2.h"
#include "kernel/options.h"
#include "kernel/smp_call.h"
#include "kernel/version.h"
#include "lib/bench_output.h"
#include "lib/string.h"
#include "lib/kprintf.h"
#include "mm/page_alloc.h"

void bench_env_report(void)
{
	static bool env_printed;
	enum bench_tristate memtypes;
	struct bench_env env;
	const char *brand = cpu_info.brand;

	if (env_printed)
		return;
	env_printed = true;
	if (!bench_env_memtypes_checked())
		bench_env_set_memtypes(memtype_check_quick());
	memtypes = bench_env_memtypes();
	while (*brand == ' ')
		brand++;
	memset(&env, 0, sizeof(env));
	env.cpu_model = brand;
	env.hypervisor = cpu_info.hypervisor[0] ? cpu_info.hypervisor : NULL;
	env.caches_modelled = cache_sweep_caches_modelled();
	if (cache_sweep_verdict() == BENCH_NO && memtypes == BENCH_YES) {
		/* UC slower than WB needs a cache to skip: with a flat
		 * sweep the two measurements contradict each other. */
		kprintf("bench: the memtype probe says honoured but the "
			"latency sweep finds no cache: memtypes_honoured "
			"unknown\n");
		memtypes = BENCH_UNKNOWN;
		bench_env_set_memtypes(memtypes);
	}
	env.cpus_online = smp_cpus_online();
	env.ram_bytes = page_alloc_total_pages() << 12;
	env.tsc_hz = tsc_hz();
	env.tsc_source = tsc_source_name(tsc_source());
	env.pmu = pmu_caps()->present;
	env.memtypes_honoured = memtypes;
	env.kernel_version = kernel_version;
	env.git_hash = kernel_git_hash;
	env.cmdline = boot_info.cmdline;
	env.mode = kopt.icount ? BENCH_MODE_ICOUNT : BENCH_MODE_NORMAL;
	env.cache_model = kopt.cachemodel[0] ? kopt.cachemodel : NULL;
	env.model_caches = bench_env_model_caches();
	bench_output_env(&env);
}
