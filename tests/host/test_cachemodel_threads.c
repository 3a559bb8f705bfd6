/*
 * Host test of the cache model under threads, as multi-threaded TCG runs
 * it, under ThreadSanitizer: one thread per modelled CPU takes
 * cm_access_fast() without a lock and every other engine call under one
 * mutex (the QEMU plugin's arrangement, cachemodel/plugin.c invariant 1),
 * while a reader thread copies every CPU's counters with cm_stats_read()
 * under the mutex, as region snapshots do. The CPUs share some lines, so
 * snoops change a CPU's L1D states while that CPU reads them on its fast
 * path.
 *
 * Some accesses go to a WC page and a UC page and some are non-temporal
 * stores to the CPU's own lines, so the fast path also writes the CPU's
 * WC buffers (merging, flushing, draining) while other CPUs' misses move
 * the fills count it reads.
 *
 * Both CPUs share one bus, whose timeline the fast path books with
 * compare-and-swap, and each CPU's clock now and then jumps (its
 * slept-through cycles, cm_set_skip()) without the lock, as the plugin
 * does after a halt.
 *
 * A race shows up as a TSan report; a lost counter update as a wrong
 * count: each CPU's loads + stores must equal the accesses its thread
 * made, L1D hits + misses its plain WB ones, uncached its UC accesses and
 * WC loads, nt_stores its non-temporal ones; the reader must never see a
 * counter go backwards.
 */
// HOST_SRCS: cachemodel/model_create.c cachemodel/model_access.c cachemodel/model_level.c cachemodel/model_memtype.c cachemodel/model_time.c cachemodel/model_coherence.c cachemodel/model_prefetch.c cachemodel/model_buffers.c cachemodel/model_readout.c cachemodel/profile.c
// HOST_SANITIZE: thread
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "cachemodel/model.h"
#include "cachemodel/profile.h"
#include "lib/ktest.h"
#include "tests/host/host_shim.h"
#include "tests/host/host_thread_group.h"

#define NCPUS 2
#define ACCESSES 200000		/* per CPU thread */
#define PRIVATE_LINES 8		/* per CPU */
#define SHARED_LINES 4
#define SHARED_BASE 4096u
#define WC_PAGE 8192u
#define UC_PAGE 12288u
#define PAGE 4096u
/* Every SKIP_EVERY accesses a CPU's slept-through cycles grow. */
#define SKIP_EVERY 1000
#define SKIP_CYCLES 3

static const char profile_text[] =
	"[tiny]\n"
	"freq_mhz 1000\ncpi_x100 100\n"
	"l1d 1024 2 3\nl2 4096 4 10\nllc 16384 4 30\n"
	"mem_latency 100\nremote_latency 50\nuc_load 120\nuc_store 110\n"
	"wc_buffers 2\nwc_burst 20\nwc_chunk 7\nlocked 15\nfence 5\n"
	"clflush 40\n";

struct run {
	struct cm_model *m;
	pthread_mutex_t lock;
	int cpu_threads_left;	/* under lock: the reader stops at 0 */
	uint64_t fast[NCPUS];	/* accesses the fast path took, per CPU */
	/* Per CPU, written by its thread: what its accesses should count. */
	uint64_t cached[NCPUS], uncached[NCPUS], nt[NCPUS], wc_uc[NCPUS];
	bool went_back;		/* the reader saw a counter decrease */
	uint64_t reads;		/* snapshots the reader took */
};

struct worker {
	struct run *run;
	unsigned cpu;
};

static void *cpu_thread(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;
	uint64_t x = 0x2545f4914f6cdd1dull * (w->cpu + 1);

	for (unsigned i = 0; i < ACCESSES; i++) {
		uint64_t pa;
		unsigned flags;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* 90 % this CPU's own lines, 10 % the shared ones. */
		pa = x % 10 ? (w->cpu * PRIVATE_LINES + (x >> 8) %
			       PRIVATE_LINES) * CM_LINE_SIZE :
			      SHARED_BASE + ((x >> 8) % SHARED_LINES) *
			      CM_LINE_SIZE;
		pa += (x >> 16) % (CM_LINE_SIZE / 8) * 8;
		flags = (x >> 24) % 4 ? 0 : CM_STORE;
		switch ((x >> 32) % 16) {
		case 0:		/* WC: stores combine, loads are uncached */
		case 1:
			pa = WC_PAGE + pa % PAGE;
			r->wc_uc[w->cpu]++;
			if (!(flags & CM_STORE))
				r->uncached[w->cpu]++;
			break;
		case 2:
			pa = UC_PAGE + pa % PAGE;
			r->wc_uc[w->cpu]++;
			r->uncached[w->cpu]++;
			break;
		case 3:		/* non-temporal, to this CPU's own lines */
		case 4:
			pa = w->cpu * PRIVATE_LINES * CM_LINE_SIZE +
			     pa % (PRIVATE_LINES * CM_LINE_SIZE);
			flags = CM_STORE | CM_NT;
			r->nt[w->cpu]++;
			break;
		default:
			r->cached[w->cpu]++;
			break;
		}
		/* Its clock moves on as after a halt, as the plugin tells
		 * the engine at a translation block: no lock. */
		if (i % SKIP_EVERY == 0)
			cm_set_skip(r->m, w->cpu, (uint64_t)i * SKIP_CYCLES);
		if (cm_access_fast(r->m, w->cpu, pa, 8, flags)) {
			r->fast[w->cpu]++;
			continue;
		}
		pthread_mutex_lock(&r->lock);
		cm_access(r->m, w->cpu, pa, 8, flags);
		pthread_mutex_unlock(&r->lock);
	}
	pthread_mutex_lock(&r->lock);
	r->cpu_threads_left--;
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static void *reader_thread(void *arg)
{
	struct run *r = arg;
	struct cm_stats last[NCPUS] = { 0 }, now;

	for (;;) {
		int left;

		pthread_mutex_lock(&r->lock);
		for (unsigned c = 0; c < NCPUS; c++) {
			cm_stats_read(r->m, c, &now);
			if (now.loads < last[c].loads ||
			    now.l1_hits < last[c].l1_hits ||
			    now.wc_bursts < last[c].wc_bursts ||
			    now.uncached < last[c].uncached ||
			    now.mem_cycles < last[c].mem_cycles)
				r->went_back = true;
			last[c] = now;
		}
		r->reads++;
		left = r->cpu_threads_left;
		pthread_mutex_unlock(&r->lock);
		if (!left)
			return NULL;
	}
}

/* The causality window (cycles): as wide as the clocks drift here. */
#define CAUSAL_WINDOW 100000

KTEST(cachemodel_threads, fast_path_beside_locked_snoops)
{
	struct cm_profile p;
	char err[128];
	struct run r = { .cpu_threads_left = NCPUS };
	struct worker w[NCPUS];
	struct host_thread_group cpus, reader;

	ASSERT_TRUE(cm_profile_parse(profile_text, "tiny", &p, err,
				     sizeof(err)));
	r.m = cm_create(&p, NCPUS);
	ASSERT_TRUE(r.m != NULL);
	/* Causality on: the fast path notes write times (each CPU's own),
	 * which the slow path of the others reads (model.h, invariant 8). */
	cm_set_causality(r.m, CAUSAL_WINDOW);
	ASSERT_TRUE(cm_set_type(r.m, WC_PAGE, PAGE, CM_WC));
	ASSERT_TRUE(cm_set_type(r.m, UC_PAGE, PAGE, CM_UC));
	pthread_mutex_init(&r.lock, NULL);
	for (unsigned c = 0; c < NCPUS; c++)
		w[c] = (struct worker){ .run = &r, .cpu = c };
	host_thread_group_start(&reader, 1, reader_thread, &r, 0);
	host_thread_group_start(&cpus, NCPUS, cpu_thread, w, sizeof(w[0]));
	host_thread_group_join(&cpus);
	host_thread_group_join(&reader);
	for (unsigned c = 0; c < NCPUS; c++) {
		const struct cm_stats *s = cm_stats(r.m, c);

		EXPECT_EQ(s->loads + s->stores, ACCESSES);
		EXPECT_EQ(s->l1_hits + s->l1_misses, r.cached[c]);
		EXPECT_EQ(s->uncached, r.uncached[c]);
		EXPECT_EQ(s->nt_stores, r.nt[c]);
		EXPECT_GT(s->wc_bursts + s->wc_partials, 0);
		/* Mostly private lines: most accesses are fast hits. */
		EXPECT_GT(r.fast[c], ACCESSES / 2);
		/* Fast: L1D hits, WC and UC accesses, merging NT stores. */
		EXPECT_LE(r.fast[c], s->l1_hits + r.wc_uc[c] + r.nt[c]);
		EXPECT_GT(r.fast[c], s->l1_hits);
	}
	EXPECT_FALSE(r.went_back);
	EXPECT_GT(r.reads, 0);
	cm_destroy(r.m);
	pthread_mutex_destroy(&r.lock);
}
