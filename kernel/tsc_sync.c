/*
 * The TSC sync check (see tsc_sync.h).
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/tsc.h"
#include "kernel/smp_call.h"
#include "kernel/tsc_sync.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/compiler.h"
#include "lib/kprintf.h"

#define SYNC_ROUNDS 64

/*
 * Sync check by ping-pong. Round i: the boot CPU reads t0 and stores
 * seq = 2i+1; the AP, seeing it, reads t1 and stores seq = 2i+2; the
 * boot CPU, seeing that, reads t2. If both TSCs agreed, t0 <= t1 <= t2,
 * and the offset estimate t1 - (t0+t2)/2 is off by at most rtt/2.
 * A violation of t0 <= t1 <= t2 proves a skew at least that large.
 */
struct sync_pp {
	uint64_t seq __aligned(CACHE_LINE_SIZE);
	uint64_t t1 __aligned(CACHE_LINE_SIZE);
};

static void sync_responder(void *arg)
{
	struct sync_pp *pp = arg;

	for (uint64_t i = 0; i < SYNC_ROUNDS; i++) {
		while (atomic_load_acquire(&pp->seq) != 2 * i + 1)
			cpu_relax();
		atomic_store_relaxed(&pp->t1, rdtsc_ordered());
		atomic_store_release(&pp->seq, 2 * i + 2);
	}
}

static void sync_one(unsigned cpu, struct tsc_sync_result *r)
{
	static struct sync_pp pp;
	uint64_t best_rtt = ~0ull, proven = 0;
	int64_t best_off = 0;

	atomic_store_relaxed(&pp.seq, 0);
	if (!smp_work_post(cpu, sync_responder, &pp))
		return;
	for (uint64_t i = 0; i < SYNC_ROUNDS; i++) {
		uint64_t t0 = rdtsc_ordered(), t1, t2;

		atomic_store_release(&pp.seq, 2 * i + 1);
		while (atomic_load_acquire(&pp.seq) != 2 * i + 2)
			cpu_relax();
		t2 = rdtsc_ordered();
		t1 = atomic_load_relaxed(&pp.t1);
		if (t1 < t0 && t0 - t1 > proven)
			proven = t0 - t1;
		if (t1 > t2 && t1 - t2 > proven)
			proven = t1 - t2;
		if (t2 - t0 < best_rtt) {
			best_rtt = t2 - t0;
			best_off = (int64_t)(t1 - t0) - (int64_t)(best_rtt / 2);
		}
	}
	smp_work_wait(cpu);
	r->cpus_checked++;
	if (proven > r->proven_skew)
		r->proven_skew = proven;
	if (r->cpus_checked == 1 ||
	    (best_off < 0 ? -best_off : best_off) >
		    (r->worst_offset < 0 ? -r->worst_offset :
					   r->worst_offset)) {
		r->worst_cpu = cpu;
		r->worst_offset = best_off;
		r->worst_rtt = best_rtt;
	}
}

bool tsc_sync_check(struct tsc_sync_result *r)
{
	*r = (struct tsc_sync_result){0};
	kassert(this_cpu_id() == 0);
	for (unsigned cpu = 1; cpu < percpu_count(); cpu++)
		if (smp_cpu_online(cpu))
			sync_one(cpu, r);
	return r->cpus_checked > 0;
}

void tsc_sync_print(const struct tsc_sync_result *r)
{
	if (!r->cpus_checked) {
		kprintf("tsc: sync check: only one CPU\n");
		return;
	}
	kprintf("tsc: sync check over %u APs: largest offset %ld cycles "
		"(cpu %u, +-%lu), proven skew %lu cycles (%lu ns)\n",
		r->cpus_checked, (long)r->worst_offset, r->worst_cpu,
		(unsigned long)(r->worst_rtt / 2),
		(unsigned long)r->proven_skew,
		(unsigned long)tsc_cycles_to_ns(r->proven_skew));
}
