/*
 * In-kernel tests of the workloads: ramfs round trips and page
 * accounting against the real page allocator, the loopback ring between
 * two CPUs (order, wrap-around), and the quick-mode checksums of the
 * tbench-like and kbuild-like workloads against recorded values, for
 * one CPU and for all of them; and that a cache model does not change
 * how often quick mode repeats a traced variant (the same work with
 * MODEL= and without).
 */
#include "kernel/options.h"
#include "kernel/smp_call.h"
#include "lib/atomic.h"
#include "lib/kprintf.h"
#include "lib/ktest.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "mm/page_alloc.h"
#include "workloads/corpus.h"
#include "workloads/loopback.h"
#include "workloads/kbuild.h"
#include "workloads/ramfs.h"
#include "workloads/ramfs_pages.h"
#include "workloads/tbench.h"
#include "experiments/trace_variants.h"

#define T_FILES 64
#define T_BIG (3 * RAMFS_PAGE_SIZE + 100)

static uint8_t t_buf[T_BIG], t_back[T_BIG];

KTEST(ramfs, write_read_unlink_returns_every_page)
{
	uint64_t before = page_alloc_free_pages();
	struct ramfs *fs = ramfs_new(&ramfs_page_backend, T_FILES);
	struct ramfs_stat st;
	int h;

	ASSERT_TRUE(fs != NULL);
	for (size_t i = 0; i < T_BIG; i++)
		t_buf[i] = (uint8_t)(i * 7 + 3);
	h = ramfs_open(fs, "a/file", RAMFS_O_CREAT | RAMFS_O_EXCL);
	ASSERT_TRUE(h >= 0);
	/* Straddle page boundaries on purpose: start 50 bytes in. */
	EXPECT_EQ(ramfs_write(fs, h, 50, t_buf, T_BIG), T_BIG);
	EXPECT_EQ(ramfs_read(fs, h, 50, t_back, T_BIG), T_BIG);
	EXPECT_EQ(memcmp(t_buf, t_back, T_BIG), 0);
	/* The first 50 bytes were never written: zeros. */
	EXPECT_EQ(ramfs_read(fs, h, 0, t_back, 50), 50);
	EXPECT_EQ(t_back[0] | t_back[49], 0);
	EXPECT_EQ(ramfs_stat(fs, "a/file", &st), 0);
	EXPECT_EQ(st.size, 50 + T_BIG);
	EXPECT_EQ(st.pages, 4);
	/* Four data pages and the index page. */
	EXPECT_EQ(ramfs_pages_held(fs), 5);
	EXPECT_EQ(ramfs_open(fs, "a/file", RAMFS_O_CREAT | RAMFS_O_EXCL),
		  -RAMFS_EEXIST);
	EXPECT_EQ(ramfs_truncate(fs, h, RAMFS_PAGE_SIZE), 0);
	EXPECT_EQ(ramfs_pages_held(fs), 2);
	EXPECT_EQ(ramfs_close(fs, h), 0);
	EXPECT_EQ(ramfs_unlink(fs, "a/file"), 0);
	EXPECT_EQ(ramfs_unlink(fs, "a/file"), -RAMFS_ENOENT);
	EXPECT_EQ(ramfs_pages_held(fs), 0);
	EXPECT_EQ(ramfs_file_count(fs), 0);
	ramfs_destroy(fs);
	EXPECT_EQ(page_alloc_free_pages(), before);
}

KTEST(ramfs, destroy_frees_open_and_unlinked_files)
{
	uint64_t before = page_alloc_free_pages();
	struct ramfs *fs = ramfs_new(&ramfs_page_backend, T_FILES);
	struct ramfs_stat st;
	char name[16], open_name[16];
	unsigned open_i = 0;
	int h, open_h = -1;

	ASSERT_TRUE(fs != NULL);
	for (unsigned i = 0; i < T_FILES; i++) {
		ksnprintf(name, sizeof(name), "f%u", i);
		h = ramfs_open(fs, name, RAMFS_O_CREAT);
		ASSERT_TRUE(h >= 0);
		EXPECT_EQ(ramfs_write(fs, h, i * 1000, t_buf, 10), 10);
		if (i % 2) {
			EXPECT_EQ(ramfs_close(fs, h), 0);
			EXPECT_EQ(ramfs_close(fs, h), -RAMFS_EBADF);
		} else {
			open_h = h; /* the even ones stay open */
			open_i = i;
			strlcpy(open_name, name, sizeof(open_name));
		}
	}
	EXPECT_EQ(ramfs_open(fs, "one-too-many", RAMFS_O_CREAT),
		  -RAMFS_ENOSPC);
	/* Unlinked while open: still readable through the handle. */
	EXPECT_EQ(ramfs_unlink(fs, open_name), 0);
	EXPECT_EQ(ramfs_stat(fs, open_name, &st), -RAMFS_ENOENT);
	EXPECT_EQ(ramfs_read(fs, open_h, open_i * 1000, t_back, 10), 10);
	EXPECT_EQ(memcmp(t_back, t_buf, 10), 0);
	EXPECT_EQ(ramfs_file_count(fs), T_FILES - 1);
	ramfs_destroy(fs);
	EXPECT_EQ(page_alloc_free_pages(), before);
}

/* Loopback between two CPUs: the producer sends messages of varying
 * length through a ring much smaller than they are; the consumer checks
 * every byte arrives in order. */
#define LB_RING 64
#define LB_MSGS 400
#define LB_MAX_MSG 300

struct lb_test {
	struct loopback_ring ring;
	uint8_t mem[LB_RING];
	uint32_t errors;
	uint64_t received;
	uint32_t done;
};

static struct lb_test lbt;

static uint8_t lb_byte(uint64_t i)
{
	return (uint8_t)(i * 31 + (i >> 8));
}

static size_t lb_len(unsigned m)
{
	return 1 + (m * 37) % LB_MAX_MSG;
}

static void lb_consumer(void *arg)
{
	struct lb_test *t = arg;
	uint8_t buf[LB_MAX_MSG];
	uint64_t pos = 0;

	for (unsigned m = 0; m < LB_MSGS; m++) {
		size_t n = lb_len(m);

		loopback_recv(&t->ring, buf, n);
		for (size_t i = 0; i < n; i++, pos++)
			if (buf[i] != lb_byte(pos))
				t->errors++;
	}
	t->received = pos;
	atomic_store_release(&t->done, 1);
}

static void lb_produce(struct lb_test *t)
{
	uint8_t buf[LB_MAX_MSG];
	uint64_t pos = 0;

	for (unsigned m = 0; m < LB_MSGS; m++) {
		size_t n = lb_len(m);

		for (size_t i = 0; i < n; i++)
			buf[i] = lb_byte(pos++);
		loopback_send(&t->ring, buf, n);
	}
}

KTEST(loopback, wraps_in_order_single_cpu)
{
	uint8_t out[LB_RING];
	uint64_t pos = 0, got = 0;

	loopback_ring_init(&lbt.ring, lbt.mem, LB_RING);
	/* 2.5 ring sizes per round: the copy splits at the end. */
	for (unsigned round = 0; round < 10; round++) {
		uint8_t in[LB_RING / 2 + 7];

		for (size_t i = 0; i < sizeof(in); i++)
			in[i] = lb_byte(pos++);
		EXPECT_EQ(loopback_ring_write_some(&lbt.ring, in, sizeof(in)),
			  sizeof(in));
		EXPECT_EQ(loopback_ring_read_some(&lbt.ring, out, sizeof(out)),
			  sizeof(in));
		for (size_t i = 0; i < sizeof(in); i++)
			EXPECT_EQ(out[i], lb_byte(got++));
	}
	/* Full ring refuses more; empty ring gives nothing. */
	EXPECT_EQ(loopback_ring_write_some(&lbt.ring, out, LB_RING + 10),
		  LB_RING);
	EXPECT_EQ(loopback_ring_write_some(&lbt.ring, out, 1), 0);
	EXPECT_EQ(loopback_ring_read_some(&lbt.ring, out, LB_RING), LB_RING);
	EXPECT_EQ(loopback_ring_read_some(&lbt.ring, out, 1), 0);
}

KTEST(loopback, two_cpus_in_order)
{
	unsigned other = MAX_CPUS;
	uint64_t total = 0;

	for (unsigned c = 0; c < MAX_CPUS; c++)
		if (c != smp_this_cpu() && smp_cpu_online(c)) {
			other = c;
			break;
		}
	if (other == MAX_CPUS)
		KTEST_SKIP("one CPU");
	memset(&lbt, 0, sizeof(lbt));
	loopback_ring_init(&lbt.ring, lbt.mem, LB_RING);
	ASSERT_TRUE(smp_work_post(other, lb_consumer, &lbt));
	lb_produce(&lbt);
	smp_work_wait(other);
	for (unsigned m = 0; m < LB_MSGS; m++)
		total += lb_len(m);
	EXPECT_EQ(atomic_load_acquire(&lbt.done), 1);
	EXPECT_EQ(lbt.errors, 0);
	EXPECT_EQ(lbt.received, total);
	EXPECT_EQ(lbt.ring.bytes_in, total);
}

/* The quick script's checksum with npairs pairs (0: alternating on this
 * CPU); *bytes gets the payload bytes moved. 0 on failure. */
static uint64_t tbench_quick_checksum(unsigned npairs, uint64_t *bytes)
{
	struct tbench_check chk = {0};

	if (!tbench_checksum(&tbench_quick, npairs, &chk))
		return 0;
	*bytes = chk.bytes;
	return chk.hash;
}

/* The quick tree built with 'jobs' workers (0: the reference compile);
 * the objects' hash, 0 on failure. */
static uint64_t kbuild_quick_checksum(unsigned jobs)
{
	static struct kbuild_run run;
	uint64_t h = 0;
	bool ok;

	if (jobs == 0)
		return kbuild_reference(&kbuild_quick.corpus, &h) ? h : 0;
	ok = kbuild_setup(&run, &kbuild_quick) && kbuild_build(&run, jobs, &h);
	kbuild_teardown(&run);
	return ok ? h : 0;
}

KTEST(workloads, tbench_quick_checksum_alternating)
{
	uint64_t bytes = 0;

	EXPECT_EQ(tbench_quick_checksum(0, &bytes), TBENCH_QUICK_EXPECT_HASH);
	EXPECT_EQ(bytes, TBENCH_QUICK_EXPECT_BYTES);
}

KTEST(workloads, tbench_quick_checksum_all_pairs)
{
	/* One pair: more spinning pairs than host cores under TCG only
	 * measure the host's scheduler. */
	unsigned pairs = MIN(smp_cpus_online() / 2, 1u);
	uint64_t bytes = 0;

	if (pairs == 0)
		KTEST_SKIP("one CPU: no client/server pair");
	EXPECT_EQ(tbench_quick_checksum(pairs, &bytes),
		  TBENCH_QUICK_EXPECT_HASH);
	EXPECT_EQ(bytes, TBENCH_QUICK_EXPECT_BYTES);
}

KTEST(workloads, kbuild_quick_checksum)
{
	size_t in_use;

	EXPECT_EQ(kbuild_quick_checksum(0), KBUILD_QUICK_EXPECT_HASH);
	/* Every symbol, token and buffer of a build goes back. */
	in_use = kmalloc_in_use_bytes();
	EXPECT_EQ(kbuild_quick_checksum(1), KBUILD_QUICK_EXPECT_HASH);
	EXPECT_EQ(kmalloc_in_use_bytes(), in_use);
	/* Two workers: enough to check the result does not depend on
	 * the CPU count, without more contending vCPUs than host cores. */
	if (smp_cpus_online() > 1)
		EXPECT_EQ(kbuild_quick_checksum(2), KBUILD_QUICK_EXPECT_HASH);
	EXPECT_EQ(kmalloc_in_use_bytes(), in_use);
}

/*
 * Every pair and every CPU: run by the smp4-workloads boot, which has
 * 4 CPUs, its own timeout and the machine to itself. Under ktest=all on
 * a 2-core host, spinning pairs on more vCPUs than host cores only
 * measure the host's scheduler, so the suite runs only when named.
 */
static bool workloads_smp_named(void)
{
	return strcmp(kopt.ktest, "all") != 0;
}

KTEST(workloads_smp, tbench_quick_checksum_every_pair)
{
	unsigned pairs = smp_cpus_online() / 2;
	uint64_t bytes = 0;

	if (!workloads_smp_named())
		KTEST_SKIP("run by name (ktest=workloads_smp)");
	if (pairs < 2)
		KTEST_SKIP("fewer than 4 CPUs: no second pair");
	ktest_diag("%u pairs", pairs);
	EXPECT_EQ(tbench_quick_checksum(pairs, &bytes),
		  TBENCH_QUICK_EXPECT_HASH);
	EXPECT_EQ(bytes, TBENCH_QUICK_EXPECT_BYTES);
}

KTEST(workloads_smp, kbuild_quick_checksum_every_cpu)
{
	unsigned jobs = smp_cpus_online();
	size_t in_use = kmalloc_in_use_bytes();

	if (!workloads_smp_named())
		KTEST_SKIP("run by name (ktest=workloads_smp)");
	if (jobs < 3)
		KTEST_SKIP("fewer than 3 CPUs: kbuild_quick_checksum covers 2");
	ktest_diag("%u jobs", jobs);
	EXPECT_EQ(kbuild_quick_checksum(jobs), KBUILD_QUICK_EXPECT_HASH);
	EXPECT_EQ(kmalloc_in_use_bytes(), in_use);
}

/* experiments/trace_variants.h: trace_variants_reps(). */
KTEST(workloads, traced_reps_are_the_same_with_a_model)
{
	char saved[OPT_STRING_MAX];
	unsigned plain, modelled;

	memcpy(saved, kopt.cachemodel, sizeof(saved));
	kopt.cachemodel[0] = '\0';
	plain = trace_variants_reps(EXPERIMENT_QUICK, 3);
	strlcpy(kopt.cachemodel, "core2-2007", sizeof(kopt.cachemodel));
	modelled = trace_variants_reps(EXPERIMENT_QUICK, 3);
	EXPECT_EQ(trace_variants_reps(EXPERIMENT_FULL, 7), 7);
	memcpy(kopt.cachemodel, saved, sizeof(saved));
	EXPECT_EQ(modelled, plain);
	EXPECT_GE(plain, 1);
}
