/*
 * corpus: synthetic sources, tokenizer, mini compiler and hash (see
 * corpus.h). Everything here is a pure function of its inputs.
 */
#include "workloads/corpus.h"
#include "lib/assert.h"
#include "lib/compiler.h"
#include "lib/prng.h"
#include "lib/string.h"
#include "mm/kmalloc.h"

#define HASH_MUL 0x9e3779b97f4a7c15ull /* 2^64 / golden ratio */
#define HASH_ROT 29

uint64_t corpus_hash_u64(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= HASH_MUL;
	return h ^ (h >> HASH_ROT);
}

uint64_t corpus_hash64(uint64_t h, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t w;

	for (; len >= sizeof(w); p += sizeof(w), len -= sizeof(w)) {
		memcpy(&w, p, sizeof(w));
		h = corpus_hash_u64(h, w);
	}
	/* The tail, with its length, so "ab" and "ab\0" differ. */
	w = (uint64_t)len << 56;
	for (size_t i = 0; i < len; i++)
		w |= (uint64_t)p[i] << (8 * i);
	return corpus_hash_u64(h, w);
}

uint64_t corpus_rng_seed(uint64_t seed, uint64_t stream)
{
	uint64_t s = corpus_hash_u64(corpus_hash_u64(CORPUS_HASH_INIT, seed),
				     stream);

	return prng_seed(s);
}

/* ---- Generator ---------------------------------------------------------- */

/* Emits into buf, or only counts when buf is NULL. */
struct writer {
	char *buf;
	size_t cap;
	size_t n;
};

static void put(struct writer *w, const char *s, size_t len)
{
	if (w->buf) {
		kassert(w->n + len <= w->cap);
		memcpy(w->buf + w->n, s, len);
	}
	w->n += len;
}

static void put_str(struct writer *w, const char *s)
{
	put(w, s, strlen(s));
}

static void put_uint(struct writer *w, uint64_t v)
{
	char tmp[20];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(w, tmp + i, sizeof(tmp) - i);
}

static const char *const ident_prefix[] = {
	"page", "lock", "buf", "vma", "pte", "list", "node", "cpu",
	"irq", "dev", "inode", "slab", "tlb", "rcu", "trace", "sched",
};
static const char *const local_names[] = {
	"a", "b", "i", "n", "ret", "tmp", "p", "flags",
};
static const char *const types[] = {
	"int", "long", "unsigned", "u64", "struct page *", "void *",
};

#define ALPHABET 26
#define STMTS_MIN 2
#define STMTS_SPREAD 8
#define NUM_RANGE 4096
#define INCLUDES_MAX 6

/* Global identifier v: a prefix and v in base 26, e.g. "vma_bq". */
static void put_ident(struct writer *w, unsigned v)
{
	char tmp[CORPUS_IDENT_MAX];
	size_t i = sizeof(tmp);

	put_str(w, ident_prefix[v % ARRAY_SIZE(ident_prefix)]);
	put(w, "_", 1);
	v /= ARRAY_SIZE(ident_prefix);
	do {
		tmp[--i] = (char)('a' + v % ALPHABET);
		v /= ALPHABET;
	} while (v);
	put(w, tmp + i, sizeof(tmp) - i);
}

/* A skewed pick: small indices (popular symbols) come up more often. */
static unsigned pick_ident(uint64_t *rng, unsigned vocabulary)
{
	unsigned span = (unsigned)(prng_next(rng) % vocabulary) + 1;

	return (unsigned)(prng_next(rng) % span);
}

static const char *pick(uint64_t *rng, const char *const *v, size_t n)
{
	return v[prng_next(rng) % n];
}

static void put_statement(struct writer *w, uint64_t *rng, unsigned voc)
{
	const char *l = pick(rng, local_names, ARRAY_SIZE(local_names));

	switch (prng_next(rng) % 5) {
	case 0:
		put_str(w, "\t");
		put_str(w, l);
		put_str(w, " = ");
		put_ident(w, pick_ident(rng, voc));
		put_str(w, "(");
		put_str(w, l);
		put_str(w, ", ");
		put_uint(w, prng_next(rng) % NUM_RANGE);
		put_str(w, ");\n");
		break;
	case 1:
		put_str(w, "\tif (");
		put_str(w, l);
		put_str(w, " > ");
		put_uint(w, prng_next(rng) % NUM_RANGE);
		put_str(w, ")\n\t\treturn ");
		put_ident(w, pick_ident(rng, voc));
		put_str(w, ";\n");
		break;
	case 2:
		put_str(w, "\t/* keep ");
		put_ident(w, pick_ident(rng, voc));
		put_str(w, " in step with the caller */\n");
		break;
	case 3:
		put_str(w, "\tprintk(\"");
		put_ident(w, pick_ident(rng, voc));
		put_str(w, ": %d\\n\", ");
		put_str(w, l);
		put_str(w, ");\n");
		break;
	default:
		put_str(w, "\t");
		put_str(w, l);
		put_str(w, " += ");
		put_ident(w, pick_ident(rng, voc));
		put_str(w, "->");
		put_ident(w, pick_ident(rng, voc));
		put_str(w, " * ");
		put_uint(w, prng_next(rng) % NUM_RANGE);
		put_str(w, ";\n");
		break;
	}
}

static void put_function(struct writer *w, uint64_t *rng, unsigned voc)
{
	unsigned stmts = STMTS_MIN +
			 (unsigned)(prng_next(rng) % STMTS_SPREAD);

	put_str(w, "static ");
	put_str(w, pick(rng, types, ARRAY_SIZE(types)));
	put_str(w, " ");
	put_ident(w, pick_ident(rng, voc));
	put_str(w, "(");
	put_str(w, pick(rng, types, ARRAY_SIZE(types)));
	put_str(w, " a, long b)\n{\n\tlong ret = 0, tmp = b, i, n = a;\n");
	while (stmts--)
		put_statement(w, rng, voc);
	put_str(w, "\treturn ret;\n}\n\n");
}

static size_t generate(const struct corpus_params *p, unsigned idx,
		       struct writer *w)
{
	uint64_t rng = corpus_rng_seed(p->seed, idx);
	unsigned spread = p->max_bytes - p->min_bytes + 1;
	size_t target = p->min_bytes + prng_next(&rng) % spread;
	unsigned includes = (unsigned)(prng_next(&rng) % INCLUDES_MAX);

	kassert(p->vocabulary > 0 && p->max_bytes >= p->min_bytes);
	put_str(w, "// generated file ");
	put_uint(w, idx);
	put_str(w, "\n");
	while (includes--) {
		put_str(w, "#include \"");
		put_ident(w, pick_ident(&rng, p->vocabulary));
		put_str(w, ".h\"\n");
	}
	put_str(w, "\n");
	while (w->n < target)
		put_function(w, &rng, p->vocabulary);
	return w->n;
}

size_t corpus_file_size(const struct corpus_params *p, unsigned idx)
{
	struct writer w = {NULL, 0, 0};

	return generate(p, idx, &w);
}

size_t corpus_generate(const struct corpus_params *p, unsigned idx,
		       char *buf, size_t cap)
{
	struct writer w = {buf, cap, 0};

	kassert(buf);
	return generate(p, idx, &w);
}

/* ---- Tokenizer ---------------------------------------------------------- */

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Skip blanks and comments from *pos on. */
static void skip_blank(const char *s, size_t len, size_t *pos)
{
	size_t i = *pos;

	for (;;) {
		while (i < len && is_space(s[i]))
			i++;
		if (i + 1 < len && s[i] == '/' && s[i + 1] == '/') {
			while (i < len && s[i] != '\n')
				i++;
		} else if (i + 1 < len && s[i] == '/' && s[i + 1] == '*') {
			i += 2;
			while (i + 1 < len && !(s[i] == '*' && s[i + 1] == '/'))
				i++;
			i = MIN(i + 2, len);
		} else {
			break;
		}
	}
	*pos = i;
}

enum corpus_tok corpus_next_token(const char *s, size_t len, size_t *pos,
				  struct corpus_token *t)
{
	size_t i;

	skip_blank(s, len, pos);
	i = *pos;
	t->start = (uint32_t)i;
	t->value = 0;
	if (i >= len) {
		t->kind = CORPUS_TOK_EOF;
	} else if (is_alpha(s[i])) {
		while (i < len && (is_alpha(s[i]) || is_digit(s[i])))
			i++;
		t->kind = CORPUS_TOK_IDENT;
	} else if (is_digit(s[i])) {
		while (i < len && is_digit(s[i]))
			t->value = t->value * 10 + (uint64_t)(s[i++] - '0');
		t->kind = CORPUS_TOK_NUMBER;
	} else if (s[i] == '"') {
		for (i++; i < len && s[i] != '"'; i++)
			if (s[i] == '\\' && i + 1 < len)
				i++;
		i = MIN(i + 1, len);
		t->kind = CORPUS_TOK_STRING;
	} else {
		t->value = (uint8_t)s[i++];
		t->kind = CORPUS_TOK_PUNCT;
	}
	t->len = (uint32_t)(i - *pos);
	*pos = i;
	return t->kind;
}

/* ---- Compiler ----------------------------------------------------------- */

#define SYMTAB_BUCKETS 256u
#define OBJ_MAGIC 0x4a424f4bu /* "KOBJ" */
#define OBJ_VERSION 1u
#define OBJ_KIND_SHIFT 28
#define OBJ_VALUE_MASK ((1u << OBJ_KIND_SHIFT) - 1)

struct tok_node {
	struct tok_node *next;
	uint32_t kind;
	uint32_t operand;	/* symbol index, or the value's low bits */
};

struct sym {
	struct sym *next;	/* hash chain */
	uint64_t hash;
	uint32_t index;		/* order of first appearance */
	uint32_t count;
	uint32_t first_token;
	uint32_t len;
	char name[];
};

struct obj_header {
	uint32_t magic, version, ntokens, nsyms;
	uint64_t src_hash;
};

struct obj_sym {
	uint64_t hash;
	uint32_t count;
	uint32_t index;
	uint32_t first_token;
	uint32_t len;
};

struct cc {
	struct sym **bucket;
	struct tok_node *head, **tail;
	uint32_t ntokens, nsyms;
	struct corpus_compile_stats *st;
};

static void *cc_alloc(struct cc *c, size_t size)
{
	c->st->allocs++;
	c->st->alloc_bytes += size;
	return kmalloc(size);
}

static struct sym *intern(struct cc *c, const char *name, uint32_t len)
{
	uint64_t h = corpus_hash64(CORPUS_HASH_INIT, name, len);
	struct sym **pp = &c->bucket[h & (SYMTAB_BUCKETS - 1)], *s;

	for (s = *pp; s; s = s->next)
		if (s->hash == h && s->len == len &&
		    memcmp(s->name, name, len) == 0)
			return s;
	s = cc_alloc(c, sizeof(*s) + len + 1);
	if (!s)
		return NULL;
	s->hash = h;
	s->index = c->nsyms++;
	s->count = 0;
	s->first_token = c->ntokens;
	s->len = len;
	memcpy(s->name, name, len);
	s->name[len] = '\0';
	/* Append, so the chain order is the order of appearance. */
	while (*pp)
		pp = &(*pp)->next;
	s->next = NULL;
	*pp = s;
	return s;
}

static void cc_free(struct cc *c)
{
	for (struct tok_node *t = c->head, *n; t; t = n) {
		n = t->next;
		kfree(t);
	}
	if (!c->bucket)
		return;
	for (unsigned b = 0; b < SYMTAB_BUCKETS; b++)
		for (struct sym *s = c->bucket[b], *n; s; s = n) {
			n = s->next;
			kfree(s);
		}
	kfree(c->bucket);
}

/* Tokenise and build the symbol table; false when memory ran out. */
static bool cc_parse(struct cc *c, const char *src, size_t len)
{
	struct corpus_token t;
	size_t pos = 0;

	while (corpus_next_token(src, len, &pos, &t) != CORPUS_TOK_EOF) {
		struct tok_node *n = cc_alloc(c, sizeof(*n));

		if (!n)
			return false;
		n->next = NULL;
		n->kind = t.kind;
		if (t.kind == CORPUS_TOK_IDENT) {
			struct sym *s = intern(c, src + t.start, t.len);

			if (!s) {
				kfree(n);
				return false;
			}
			s->count++;
			n->operand = s->index;
		} else if (t.kind == CORPUS_TOK_STRING) {
			n->operand = (uint32_t)corpus_hash64(CORPUS_HASH_INIT,
							     src + t.start,
							     t.len);
		} else {
			n->operand = (uint32_t)t.value;
		}
		n->operand &= OBJ_VALUE_MASK;
		*c->tail = n;
		c->tail = &n->next;
		c->ntokens++;
	}
	return true;
}

static uint8_t *emit(uint8_t *p, const void *v, size_t n)
{
	memcpy(p, v, n);
	return p + n;
}

void *corpus_compile(const char *src, size_t len, size_t *obj_len,
		     struct corpus_compile_stats *st)
{
	struct corpus_compile_stats dummy = {0};
	struct cc c = {0};
	struct obj_header hdr;
	uint8_t *obj = NULL, *p;
	size_t size;

	c.st = st ? st : &dummy;
	c.tail = &c.head;
	c.bucket = cc_alloc(&c, SYMTAB_BUCKETS * sizeof(*c.bucket));
	if (!c.bucket)
		goto out;
	memset(c.bucket, 0, SYMTAB_BUCKETS * sizeof(*c.bucket));
	if (!cc_parse(&c, src, len))
		goto out;

	size = sizeof(hdr) + c.nsyms * sizeof(struct obj_sym) +
	       c.ntokens * sizeof(uint32_t);
	obj = cc_alloc(&c, size);
	if (!obj)
		goto out;
	hdr.magic = OBJ_MAGIC;
	hdr.version = OBJ_VERSION;
	hdr.ntokens = c.ntokens;
	hdr.nsyms = c.nsyms;
	hdr.src_hash = corpus_hash64(CORPUS_HASH_INIT, src, len);
	p = emit(obj, &hdr, sizeof(hdr));
	/* Symbol table in bucket order: fixed by the source alone. */
	for (unsigned b = 0; b < SYMTAB_BUCKETS; b++)
		for (struct sym *s = c.bucket[b]; s; s = s->next) {
			struct obj_sym os = {s->hash, s->count, s->index,
					     s->first_token, s->len};

			p = emit(p, &os, sizeof(os));
		}
	for (struct tok_node *t = c.head; t; t = t->next) {
		uint32_t word = t->kind << OBJ_KIND_SHIFT | t->operand;

		p = emit(p, &word, sizeof(word));
	}
	kassert((size_t)(p - obj) == size);
	*obj_len = size;
	c.st->tokens += c.ntokens;
	c.st->symbols += c.nsyms;
out:
	cc_free(&c);
	return obj;
}
