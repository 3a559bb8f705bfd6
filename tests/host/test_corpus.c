/*
 * Host tests for workloads/corpus.c under ASan/UBSan: the generator is
 * deterministic and sized exactly, the tokenizer splits known text as
 * expected, the hash separates near-identical inputs, and a compile frees
 * every kmalloc() object and depends only on its source.
 */
// HOST_SRCS: workloads/corpus.c mm/kmalloc.c mm/kmalloc_large.c mm/kmalloc_stats.c lib/spinlock.c tests/host/host_cycles.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/ktest.h"
#include "mm/kmalloc.h"
#include "tests/host/host_threads.h"
#include "workloads/corpus.h"
#include "workloads/reference.h"

static const struct corpus_params params = {
	.seed = 7, .files = 8, .min_bytes = 1000, .max_bytes = 5000,
	.vocabulary = 100,
};

KTEST(corpus, generator_is_deterministic_and_sized)
{
	for (unsigned i = 0; i < params.files; i++) {
		size_t n = corpus_file_size(&params, i);
		char *a = malloc(n), *b = malloc(n);

		ASSERT_TRUE(a && b);
		EXPECT_GE(n, params.min_bytes);
		EXPECT_EQ(corpus_generate(&params, i, a, n), n);
		EXPECT_EQ(corpus_generate(&params, i, b, n), n);
		EXPECT_EQ(memcmp(a, b, n), 0);
		free(a);
		free(b);
	}
	EXPECT_NE(corpus_file_size(&params, 0), corpus_file_size(&params, 1));
}

KTEST(corpus, tokenizer)
{
	static const char src[] =
		"/* c */ int x1 = 42; // tail\n s(\"a\\\"b\", y);";
	static const enum corpus_tok kinds[] = {
		CORPUS_TOK_IDENT, CORPUS_TOK_IDENT, CORPUS_TOK_PUNCT,
		CORPUS_TOK_NUMBER, CORPUS_TOK_PUNCT, CORPUS_TOK_IDENT,
		CORPUS_TOK_PUNCT, CORPUS_TOK_STRING, CORPUS_TOK_PUNCT,
		CORPUS_TOK_IDENT, CORPUS_TOK_PUNCT, CORPUS_TOK_PUNCT,
		CORPUS_TOK_EOF,
	};
	struct corpus_token t;
	size_t pos = 0;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		EXPECT_EQ(corpus_next_token(src, strlen(src), &pos, &t),
			  kinds[i]);
		if (i == 1)
			EXPECT_EQ(t.len, 2); /* "x1" */
		if (i == 3)
			EXPECT_EQ(t.value, 42);
		if (i == 7)
			EXPECT_EQ(t.len, 6); /* "a\"b" with its quotes */
	}
}

KTEST(corpus, hash_separates)
{
	uint64_t a = corpus_hash64(CORPUS_HASH_INIT, "abcdefgh1", 9);
	uint64_t b = corpus_hash64(CORPUS_HASH_INIT, "abcdefgh2", 9);
	uint64_t c = corpus_hash64(CORPUS_HASH_INIT, "ab", 2);
	uint64_t d = corpus_hash64(CORPUS_HASH_INIT, "ab\0", 3);

	EXPECT_NE(a, b);
	EXPECT_NE(c, d);
	EXPECT_EQ(a, corpus_hash64(CORPUS_HASH_INIT, "abcdefgh1", 9));
}

KTEST(corpus, compile_frees_everything_and_is_pure)
{
	struct corpus_compile_stats st = {0};
	size_t n = corpus_file_size(&params, 3), la, lb;
	char *src = malloc(n);
	void *a, *b;
	size_t before;
	uint64_t ha;

	ASSERT_TRUE(src != NULL);
	kmalloc_init(&host_kmalloc_backend);
	corpus_generate(&params, 3, src, n);
	before = kmalloc_in_use_bytes();
	a = corpus_compile(src, n, &la, &st);
	ASSERT_TRUE(a != NULL);
	EXPECT_EQ(kmalloc_in_use_bytes(), before + ksize(a));
	b = corpus_compile(src, n, &lb, NULL);
	ASSERT_TRUE(b != NULL);
	EXPECT_EQ(la, lb);
	EXPECT_EQ(memcmp(a, b, la), 0);
	EXPECT_GT(st.tokens, 100);
	EXPECT_GT(st.symbols, 10);
	EXPECT_GT(st.allocs, st.tokens); /* a node per token, plus symbols */
	ha = corpus_hash64(CORPUS_HASH_INIT, a, la);
	kfree(a);
	kfree(b);
	EXPECT_EQ(kmalloc_in_use_bytes(), before);
	/* A one-byte change changes the object. */
	src[n / 2] = src[n / 2] == 'a' ? 'b' : 'a';
	b = corpus_compile(src, n, &lb, NULL);
	ASSERT_TRUE(b != NULL);
	EXPECT_NE(corpus_hash64(CORPUS_HASH_INIT, b, lb), ha);
	kfree(b);
	free(src);
}

/*
 * The kbuild experiment's quick tree (workloads/reference.h) folds to the
 * same hash on the host as in the kernel: the objects depend on the
 * source alone, not on the build or the machine.
 */
KTEST(corpus, kbuild_quick_tree_hash_matches_kernel)
{
	static const struct corpus_params quick = KBUILD_QUICK_CORPUS;
	uint64_t h = CORPUS_HASH_INIT;

	kmalloc_init(&host_kmalloc_backend);
	for (unsigned i = 0; i < quick.files; i++) {
		size_t n = corpus_file_size(&quick, i), ol;
		char *src = malloc(n);
		void *obj;

		ASSERT_TRUE(src != NULL);
		corpus_generate(&quick, i, src, n);
		obj = corpus_compile(src, n, &ol, NULL);
		free(src);
		ASSERT_TRUE(obj != NULL);
		h = corpus_hash_u64(h, i);
		h = corpus_hash64(h, obj, ol);
		kfree(obj);
	}
	EXPECT_EQ(h, KBUILD_QUICK_EXPECT_HASH);
}
