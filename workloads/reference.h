/*
 * The recorded results of the workloads' quick runs: what the quick
 * tbench script and the quick kbuild tree must produce, on any machine,
 * any CPU count and the host. The experiments check their quick runs
 * against these, and so do the KTAP suite "workloads" and the host test
 * of the corpus. Change a value only together with the script, generator
 * or compiler it was recorded from.
 */
#ifndef WORKLOADS_REFERENCE_H
#define WORKLOADS_REFERENCE_H

/* tbench quick script: logical clients x steps per client. */
#define TBENCH_QUICK_CLIENTS 4
#define TBENCH_QUICK_STEPS 300
#define TBENCH_QUICK_EXPECT_HASH 0xd68f41d52277700cull
#define TBENCH_QUICK_EXPECT_BYTES 6601728ull

/* kbuild quick tree (a struct corpus_params initialiser) and the hash
 * its objects fold to. */
#define KBUILD_QUICK_CORPUS                                               \
	{                                                                 \
		.seed = 1, .files = 48, .min_bytes = 2048,                \
		.max_bytes = 8192, .vocabulary = 600,                     \
	}
#define KBUILD_QUICK_EXPECT_HASH 0xce5d047f7ab3490full

#endif
