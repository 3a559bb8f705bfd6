/*
 * corpus: the kbuild-like workload's "source tree" and "compiler"
 * (seeds 000, 001 and 003 time `make -j N` of a kernel).
 *
 *  - a deterministic generator of C-looking source files: file i of a
 *    corpus is a pure function of (seed, i), so every run, every CPU
 *    count and the host tests see the same bytes;
 *  - a tokenizer (identifiers, numbers, strings, punctuation, comments
 *    skipped);
 *  - corpus_compile(): tokenise one file, build its symbol table out of
 *    many small kmalloc() objects, and emit an "object file" whose bytes
 *    depend only on the source, then free everything: the allocation
 *    pattern of a compiler, in miniature;
 *  - a 64-bit hash used for every checksum of the workloads.
 *
 * Portable: the kernel and host tests run the same code (kmalloc must
 * have been initialised).
 */
#ifndef WORKLOADS_CORPUS_H
#define WORKLOADS_CORPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CORPUS_HASH_INIT 0xcbf29ce484222325ull
#define CORPUS_IDENT_MAX 32 /* longest identifier the generator emits */

/* Mix len bytes into h (word at a time; any alignment). */
uint64_t corpus_hash64(uint64_t h, const void *buf, size_t len);
/* Mix one 64-bit value into h. */
uint64_t corpus_hash_u64(uint64_t h, uint64_t v);

/* A lib/prng.h state (non-zero) derived from (seed, stream). */
uint64_t corpus_rng_seed(uint64_t seed, uint64_t stream);

struct corpus_params {
	uint64_t seed;
	unsigned files;
	unsigned min_bytes;	/* size of a file: min_bytes .. max_bytes */
	unsigned max_bytes;
	unsigned vocabulary;	/* distinct global identifiers */
};

/* Exact length of file idx (the generator stops at a line boundary). */
size_t corpus_file_size(const struct corpus_params *p, unsigned idx);
/*
 * Write file idx into buf (cap bytes, at least corpus_file_size());
 * returns the bytes written. No NUL terminator.
 */
size_t corpus_generate(const struct corpus_params *p, unsigned idx,
		       char *buf, size_t cap);

enum corpus_tok {
	CORPUS_TOK_EOF = 0,
	CORPUS_TOK_IDENT,
	CORPUS_TOK_NUMBER,
	CORPUS_TOK_STRING,
	CORPUS_TOK_PUNCT,
};

struct corpus_token {
	enum corpus_tok kind;
	uint32_t start;		/* offset in the source */
	uint32_t len;
	uint64_t value;		/* NUMBER: its value; PUNCT: the char */
};

/* Next token from *pos on; advances *pos. Returns the token's kind. */
enum corpus_tok corpus_next_token(const char *src, size_t len, size_t *pos,
				  struct corpus_token *t);

struct corpus_compile_stats {
	uint64_t tokens;
	uint64_t symbols;	/* distinct identifiers */
	uint64_t allocs;	/* kmalloc() calls */
	uint64_t alloc_bytes;
};

/*
 * Compile src[0..len): returns a kmalloc()ed object of *obj_len bytes
 * (the caller kfree()s it), or NULL when memory ran out. st may be NULL.
 */
void *corpus_compile(const char *src, size_t len, size_t *obj_len,
		     struct corpus_compile_stats *st);

#endif
