/*
 * kmalloc: size classes over one-page slabs, large blocks straight from
 * the page allocator (see mm/kmalloc.h and docs/kmalloc.md).
 *
 * How kfree() finds what it frees, with no header before any object:
 *
 *   slab page (one page, page-aligned)          large block (2^order pages)
 *   +--------------------+ <- page base          +--------------------+ <- p
 *   | struct slab        |  tag = SLAB_MAGIC     | user data from the |
 *   |  tag, class, list, |        ^ page base    | very first byte    |
 *   |  used-bitmap       |                       |                    |
 *   +--------------------+ <- first (>= 128)     |                    |
 *   | obj 0 | obj 1 | ...|  objects, each        |                    |
 *   | ...        | obj n |  aligned to its class |                    |
 *   +--------------------+                       +--------------------+
 *
 *   large_table: hash of { p, order } records, keyed by p's page number
 *
 * 1. A slab object never starts at offset 0 of its page (the header is
 *    there), while a large block always does. So a page-aligned pointer
 *    can only be a large block: it must be in large_table, else panic.
 *    The decision never reads user memory, so no user data can fool it.
 * 2. Any other pointer must lie in a slab: ptr & ~(PAGE_SIZE-1) is the
 *    page base, whose tag must equal SLAB_MAGIC ^ base. Mixing the address
 *    in means a copy of a header elsewhere does not validate, and the tag
 *    is wiped when the slab goes back to the backend, so a stale pointer
 *    into a freed slab is caught. Then (ptr - first) must be a multiple of
 *    the class size (else: pointer inside an object) and the object's bit
 *    in the used-bitmap must be set (else: double free).
 *
 * Free objects are found through the bitmap, not a list threaded through
 * them, so a freed object is poison from its first byte to its last and a
 * write after kfree() is seen when the object is handed out again.
 *
 * Locking: each class has a spinlock guarding its partial list, its slabs'
 * bitmaps and its counters; large_table has its own. The backend is never
 * called with a lock held. Panics release the lock first (host tests
 * recover from them).
 *
 * Per-CPU caches (once kmalloc_enable_cpu_caches() gave a CPU-number hook):
 * each (CPU, user class) pair owns a small stack of free objects in a
 * page of its own, so CPUs never share its lines (seed 004: a shared lock
 * on the fast path stops scaling). kmalloc pops, kfree pushes, with no
 * lock and no shared write; only an empty cache takes the class lock, to
 * refill half of it, and only a full one, to flush half back. A cache is
 * touched by its own CPU only, and never from an interrupt handler: there
 * is no preemption or migration, so a CPU's kmalloc runs to completion.
 *
 *   this CPU's page    cache[class]: count | obj[0] ... obj[count-1]
 *                                            ^ oldest   ^ next handed out
 *
 * An object in a cache keeps its used-bit set (the slab still counts it
 * out) and is marked by its first word, CACHED_MAGIC ^ its address, the
 * rest being poison. kfree() of an object that carries the mark is a
 * double free; kfree() of one whose bit is clear is one too (it went back
 * to its slab). Only a live object whose first word a caller set to that
 * exact mark would be misreported, which no real data does. Objects in
 * caches are free: kmalloc_in_use_bytes() subtracts them.
 */
#include "mm/kmalloc.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/compiler.h"
#include "lib/config.h"
#include "lib/kprintf.h"
#include "lib/panic.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "mm/buddy.h"
#include "mm/page.h"
#include "trace/tracepoint.h"

/* Check that freed objects still hold the poison when reused. */
#ifndef KMALLOC_DEBUG
#define KMALLOC_DEBUG 1
#endif

/* Fill of free objects (the byte Linux uses for freed slab objects). */
#define KMALLOC_POISON_FREE 0x6b
#define KMALLOC_POISON_WORD 0x6b6b6b6b6b6b6b6bull

/* "KMALLOC\0" as little-endian bytes, xored with the slab's address. */
#define SLAB_MAGIC 0x00434f4c4c414d4bull

/* Room reserved for struct slab at the start of a slab page: two lines. */
#define SLAB_HDR_SIZE 128u
#define BITS_PER_WORD 64u
/* Enough bits for the smallest class: (PAGE_SIZE - header) / 8. */
#define SLAB_MAX_OBJS ((PAGE_SIZE - SLAB_HDR_SIZE) / KMALLOC_MIN_ALIGN)
#define SLAB_BITMAP_WORDS ((SLAB_MAX_OBJS + BITS_PER_WORD - 1) / BITS_PER_WORD)

/* The top class: the largest line-aligned size two of which fit a slab. */
#define KMALLOC_TOP_SIZE                                                    \
	ALIGN_DOWN((PAGE_SIZE - SLAB_HDR_SIZE) / 2, (uint64_t)CACHE_LINE_SIZE)

#define LARGE_HASH_BUCKETS 64u

/* Bounds of one (CPU, class) cache; a class caches up to two slabs' worth
 * (so the top class, two objects a slab, keeps 4, not 32 pages' worth). */
#define CPU_CACHE_MAX 32u
#define CPU_CACHE_MIN 4u
#define CPU_CACHE_SLABS 2u
/* First word of an object sitting in a per-CPU cache, xored with its
 * address. Its low bits differ from the poison's, so for an 8-aligned
 * object the mark can never equal the poison word. */
#define CACHED_MAGIC 0x454e495a4147414dull /* "MAGAZINE" */
BUILD_ASSERT(((CACHED_MAGIC ^ KMALLOC_POISON_WORD) &
	      (KMALLOC_MIN_ALIGN - 1)) != 0);

BUILD_ASSERT(KMALLOC_MAX_ORDER <= BUDDY_MAX_ORDER);

struct kmalloc_class;

/* Header at the start of every slab page. */
struct slab {
	uint64_t tag;		   /* SLAB_MAGIC ^ this header's address */
	struct kmalloc_class *cls; /* fixed while the slab lives */
	struct slab *next;	   /* cls->partial list: slabs with room */
	struct slab *prev;
	uint16_t inuse;		   /* objects handed out */
	uint16_t hint;		   /* no free object below this index */
	uint64_t used[SLAB_BITMAP_WORDS]; /* bit i: object i handed out */
};

BUILD_ASSERT(sizeof(struct slab) <= SLAB_HDR_SIZE);
BUILD_ASSERT(SLAB_HDR_SIZE % CACHE_LINE_SIZE == 0);

/*
 * One size class. Aligned to a cache line so that two CPUs working on
 * different classes do not bounce one line between them.
 */
struct kmalloc_class {
	struct spinlock lock;
	const char *name;
	uint32_t size;	/* object size */
	uint32_t align; /* every object is aligned to this */
	uint32_t first; /* offset of object 0 in the slab page */
	uint32_t nr;	/* objects per slab */
	bool internal;	/* not for kfree() by users */
	uint32_t cache_limit; /* per-CPU cache size, 0: not cached */
	uint32_t cache_batch; /* objects moved per refill or flush */
	struct slab *partial; /* slabs with at least one free object */
	/* out: used-bits set (callers and per-CPU caches); allocs, frees:
	 * the locked path only; refills, flushes: per-CPU cache traffic. */
	uint64_t out, slabs, allocs, frees, failures, refills, flushes;
} __aligned(CACHE_LINE_SIZE);

/*
 * One CPU's cache of one class. count and the counters are written only
 * by the owning CPU (count also only under the class lock when objects
 * move to or from slabs), and read by the statistics from any CPU, hence
 * the relaxed atomic accesses: plain moves on x86, no lock prefix.
 */
struct cpu_cache {
	uint32_t count;
	uint64_t allocs; /* objects handed to callers from this cache */
	uint64_t frees;	 /* objects kfree() put into this cache */
	void *obj[CPU_CACHE_MAX];
} __aligned(CACHE_LINE_SIZE);

/* Where a large block is; lives in the internal record class. */
struct large_rec {
	void *addr;
	struct large_rec *next; /* hash chain */
	uint32_t order;
};

static const uint32_t user_class_sizes[] = {
	8, 16, 32, 64, 128, 256, 512, 1024, KMALLOC_TOP_SIZE,
};
static const char *const user_class_names[] = {
	"kmalloc-8",   "kmalloc-16",  "kmalloc-32",
	"kmalloc-64",  "kmalloc-128", "kmalloc-256",
	"kmalloc-512", "kmalloc-1k",  "kmalloc-top",
};
#define NR_USER_CLASSES ARRAY_SIZE(user_class_sizes)
BUILD_ASSERT(ARRAY_SIZE(user_class_names) == NR_USER_CLASSES);
#define REC_CLASS NR_USER_CLASSES /* index of the record class */
#define NR_CLASSES (NR_USER_CLASSES + 1)

static struct kmalloc_class classes[NR_CLASSES];

static struct {
	struct spinlock lock;
	struct large_rec *bucket[LARGE_HASH_BUCKETS];
	uint64_t in_use, pages, allocs, frees, failures;
} large __aligned(CACHE_LINE_SIZE);

/* The caches of one CPU: one backend page, allocated on its first use. */
struct kmalloc_cpu {
	struct cpu_cache cache[NR_USER_CLASSES];
};
BUILD_ASSERT(sizeof(struct kmalloc_cpu) <= PAGE_SIZE);

static const struct kmalloc_backend *backend;

/* NULL: no per-CPU caches. Set by kmalloc_enable_cpu_caches(). */
static unsigned (*cpu_hook)(void);
static unsigned cpu_limit; /* CPU numbers below this have caches */
static struct kmalloc_cpu *cpu_area[MAX_CPUS];
static uint64_t cpu_area_pages;

/* Largest power of two dividing x, at most cap (a power of two). */
static uint32_t pow2_factor(uint32_t x, uint32_t cap)
{
	uint32_t a = x & -x;

	return a && a < cap ? a : cap;
}

static void class_setup(struct kmalloc_class *c, const char *name,
			uint32_t size, bool internal)
{
	size = ALIGN_UP(size, (uint32_t)KMALLOC_MIN_ALIGN);
	spin_lock_init(&c->lock, NULL);
	c->name = name;
	c->size = size;
	c->align = pow2_factor(size, PAGE_SIZE);
	c->first = ALIGN_UP(SLAB_HDR_SIZE, c->align);
	c->nr = (PAGE_SIZE - c->first) / size;
	c->internal = internal;
	c->partial = NULL;
	c->out = c->slabs = c->allocs = c->frees = c->failures = 0;
	c->refills = c->flushes = 0;
	kassert(c->nr >= 2 && c->nr <= SLAB_MAX_OBJS);
	/* Internal records stay on the locked path: large blocks are rare. */
	c->cache_limit = internal ? 0 :
		MAX(CPU_CACHE_MIN, MIN(CPU_CACHE_MAX, CPU_CACHE_SLABS * c->nr));
	c->cache_batch = c->cache_limit / 2;
}

void kmalloc_init(const struct kmalloc_backend *b)
{
	kassert(b && b->alloc_pages && b->free_pages);
	for (unsigned i = 0; i < NR_USER_CLASSES; i++)
		class_setup(&classes[i], user_class_names[i],
			    user_class_sizes[i], false);
	class_setup(&classes[REC_CLASS], "large-rec",
		    sizeof(struct large_rec), true);
	spin_lock_init(&large.lock, NULL);
	memset(large.bucket, 0, sizeof(large.bucket));
	large.in_use = large.pages = large.allocs = 0;
	large.frees = large.failures = 0;
	atomic_store_relaxed(&cpu_hook, NULL);
	atomic_store_relaxed(&cpu_limit, 0);
	memset(cpu_area, 0, sizeof(cpu_area));
	cpu_area_pages = 0;
	atomic_store_release(&backend, b);
}

bool kmalloc_initialized(void)
{
	return atomic_load_acquire(&backend) != NULL;
}

static const struct kmalloc_backend *get_backend(void)
{
	const struct kmalloc_backend *b = atomic_load_acquire(&backend);

	if (unlikely(!b))
		panic("kmalloc used before kmalloc_init()");
	return b;
}

void kmalloc_enable_cpu_caches(unsigned (*cpu_id)(void), unsigned ncpus_max)
{
	get_backend();
	/* Switching the caches off would strand what they hold. */
	kassert(cpu_id && !atomic_load_relaxed(&cpu_hook));
	atomic_store_relaxed(&cpu_limit, MIN(ncpus_max, MAX_CPUS));
	atomic_store_release(&cpu_hook, cpu_id);
}

/* ---- slabs -------------------------------------------------------------- */

static inline uint64_t slab_tag(const struct slab *s)
{
	return SLAB_MAGIC ^ (uintptr_t)s;
}

static inline void *slab_obj(const struct slab *s, unsigned i)
{
	return (char *)s + s->cls->first + (size_t)i * s->cls->size;
}

static void partial_push(struct kmalloc_class *c, struct slab *s)
{
	s->prev = NULL;
	s->next = c->partial;
	if (c->partial)
		c->partial->prev = s;
	c->partial = s;
}

static void partial_remove(struct kmalloc_class *c, struct slab *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		c->partial = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->next = s->prev = NULL;
}

/* A fresh slab from the backend, every object poisoned; NULL if none. */
static struct slab *slab_new(struct kmalloc_class *c)
{
	struct slab *s = get_backend()->alloc_pages(0);

	if (!s)
		return NULL;
	if (!IS_ALIGNED((uintptr_t)s, PAGE_SIZE))
		panic("kmalloc: backend returned unaligned page %p", (void *)s);
	memset(s, 0, sizeof(*s));
	s->cls = c;
	s->tag = slab_tag(s);
	memset((char *)s + c->first, KMALLOC_POISON_FREE,
	       (size_t)c->nr * c->size);
	return s;
}

/* Take the lowest free object of s. Class lock held, s has room. */
static void *slab_take(struct slab *s)
{
	unsigned nr = s->cls->nr;

	for (unsigned w = s->hint / BITS_PER_WORD; w < SLAB_BITMAP_WORDS; w++) {
		uint64_t free_bits = ~atomic_load_relaxed(&s->used[w]);
		unsigned i;

		if (!free_bits)
			continue;
		i = w * BITS_PER_WORD + __builtin_ctzll(free_bits);
		kassert(i < nr);
		/* Atomic store (not RMW, the lock is held): kfree() checks
		 * bits without the lock on the per-CPU path. */
		atomic_store_relaxed(&s->used[w], ~free_bits |
				     1ull << (i % BITS_PER_WORD));
		s->inuse++;
		s->hint = i + 1;
		return slab_obj(s, i);
	}
	panic("kmalloc: slab %p of %s full but on the partial list",
	      (void *)s, s->cls->name);
}

/* Panic unless obj (just handed out) still holds the free poison. */
static void check_poison(const struct kmalloc_class *c, const void *obj)
{
	const uint64_t *w = obj;

	for (size_t i = 0; i < c->size / sizeof(*w); i++) {
		if (likely(w[i] == KMALLOC_POISON_WORD))
			continue;
		panic("kmalloc: %s object %p was written after kfree() "
		      "(word at offset %zu is %#llx, poison %#llx)",
		      c->name, obj, i * sizeof(*w),
		      (unsigned long long)w[i],
		      (unsigned long long)KMALLOC_POISON_WORD);
	}
}

/*
 * A slab of c with a free object; called and returns with c->lock held.
 * When none is partial, a new one comes from the backend with the lock
 * dropped meanwhile (never call the backend holding it). NULL, counted
 * as a failure, when the backend is exhausted.
 */
static struct slab *slab_with_room(struct kmalloc_class *c)
{
	struct slab *s = c->partial;

	if (s)
		return s;
	spin_unlock(&c->lock);
	s = slab_new(c);
	spin_lock(&c->lock);
	if (!s) {
		c->failures++;
		return NULL;
	}
	c->slabs++;
	partial_push(c, s);
	return s;
}

/* Take one object from s (which has room); c->lock held. */
static void *take_locked(struct kmalloc_class *c, struct slab *s)
{
	void *obj = slab_take(s);

	if (s->inuse == c->nr)
		partial_remove(c, s);
	c->out++;
	return obj;
}

/* An object of class c, or NULL when the backend is exhausted. */
static void *class_alloc(struct kmalloc_class *c)
{
	struct slab *s;
	void *obj;

	spin_lock(&c->lock);
	s = slab_with_room(c);
	if (!s) {
		spin_unlock(&c->lock);
		return NULL;
	}
	obj = take_locked(c, s);
	c->allocs++;
	spin_unlock(&c->lock);

	/* The object is ours alone now: no lock needed to read it. */
	if (KMALLOC_DEBUG)
		check_poison(c, obj);
	return obj;
}

/*
 * The slab holding ptr (not page-aligned), or a panic naming ptr and
 * caller if ptr is not inside a live slab.
 */
static struct slab *slab_of(const void *ptr, const char *what, void *caller)
{
	struct slab *s = (struct slab *)ALIGN_DOWN((uintptr_t)ptr, PAGE_SIZE);

	if (s->tag != slab_tag(s) || s->cls < classes ||
	    s->cls >= classes + NR_CLASSES || s->cls->internal)
		panic("%s(%p) from %p: pointer not from kmalloc (or its slab "
		      "was already freed)", what, ptr, caller);
	return s;
}

/* Index of ptr in s, or a panic if ptr is not the start of an object. */
static unsigned slab_index(const struct slab *s, const void *ptr,
			   const char *what, void *caller)
{
	const struct kmalloc_class *c = s->cls;
	size_t off = (uintptr_t)ptr - (uintptr_t)s;

	if (off < c->first || (off - c->first) % c->size != 0 ||
	    (off - c->first) / c->size >= c->nr)
		panic("%s(%p) from %p: pointer inside a %s object, not at its "
		      "start", what, ptr, caller, c->name);
	return (off - c->first) / c->size;
}

/*
 * Give object i of s (poisoned, its used-bit set) back to s. Class lock
 * held. True when s became empty and left the class: the caller hands it
 * to the backend once the lock is dropped.
 */
/* lab kmalloc/slab_put: begin (docs/labs/README.md) */
static bool slab_put(struct kmalloc_class *c, struct slab *s, unsigned i)
{
	uint64_t *word = &s->used[i / BITS_PER_WORD];

	atomic_store_relaxed(word, atomic_load_relaxed(word) &
				   ~(1ull << (i % BITS_PER_WORD)));
	if (i < s->hint)
		s->hint = i;
	if (s->inuse-- == c->nr)
		partial_push(c, s); /* was full: has room again */
	c->out--;
	if (s->inuse)
		return false;
	/* Empty slabs go straight back: page counts stay exact. */
	partial_remove(c, s);
	c->slabs--;
	s->tag = 0;
	return true;
}
/* lab kmalloc/slab_put: end */

static bool obj_used(struct slab *s, unsigned i)
{
	uint64_t word = atomic_load_relaxed(&s->used[i / BITS_PER_WORD]);

	return word >> (i % BITS_PER_WORD) & 1;
}

static void class_free(struct slab *s, void *ptr, void *caller)
{
	struct kmalloc_class *c = s->cls;
	unsigned i = slab_index(s, ptr, "kfree", caller);
	bool release;

	spin_lock(&c->lock);
	if (!obj_used(s, i)) {
		spin_unlock(&c->lock);
		panic("kfree(%p) from %p: double free of a %s object", ptr,
		      caller, c->name);
	}
	/* Poison before the bit clears: after that another CPU may take it. */
	memset(ptr, KMALLOC_POISON_FREE, c->size);
	release = slab_put(c, s, i);
	c->frees++;
	spin_unlock(&c->lock);
	if (release)
		get_backend()->free_pages(s, 0);
}

/* ---- per-CPU caches ----------------------------------------------------- */

static inline uint64_t cached_mark(const void *obj)
{
	return CACHED_MAGIC ^ (uintptr_t)obj;
}

static inline void count_store(uint32_t *p, uint32_t v)
{
	atomic_store_relaxed(p, v);
}

/* Owner-only increment: a plain load and store, never a locked RMW. */
static inline void stat_inc(uint64_t *p)
{
	atomic_store_relaxed(p, atomic_load_relaxed(p) + 1);
}

/* This CPU's caches, allocated on first use; NULL if none (no hook, CPU
 * number out of range, or no page for them: then the locked path). */
static struct kmalloc_cpu *this_cpu_area(void)
{
	unsigned (*hook)(void) = atomic_load_acquire(&cpu_hook);
	struct kmalloc_cpu *pc;
	unsigned cpu;

	if (!hook)
		return NULL;
	cpu = hook();
	if (cpu >= atomic_load_relaxed(&cpu_limit))
		return NULL;
	pc = atomic_load_relaxed(&cpu_area[cpu]);
	if (likely(pc))
		return pc;
	pc = get_backend()->alloc_pages(0);
	if (!pc)
		return NULL;
	memset(pc, 0, sizeof(*pc));
	atomic_fetch_add_relaxed(&cpu_area_pages, 1);
	/* Release: statistics on other CPUs read the zeroed counters. */
	atomic_store_release(&cpu_area[cpu], pc);
	return pc;
}

static struct cpu_cache *cache_of(struct kmalloc_class *c)
{
	struct kmalloc_cpu *pc;

	if (!c->cache_limit)
		return NULL;
	pc = this_cpu_area();
	return pc ? &pc->cache[c - classes] : NULL;
}

/*
 * Move the n oldest objects of cc back to their slabs, under the class
 * lock; slabs left empty go to the backend after it is dropped.
 */
static void cache_flush(struct kmalloc_class *c, struct cpu_cache *cc,
			unsigned n)
{
	unsigned count = cc->count;
	struct slab *empty = NULL;

	kassert(n <= count);
	spin_lock(&c->lock);
	for (unsigned k = 0; k < n; k++) {
		uint64_t *obj = cc->obj[k];
		struct slab *s =
			(struct slab *)ALIGN_DOWN((uintptr_t)obj, PAGE_SIZE);
		unsigned i = ((uintptr_t)obj - (uintptr_t)s - c->first) /
			     c->size;

		obj[0] = KMALLOC_POISON_WORD; /* unmark: poison throughout */
		if (slab_put(c, s, i)) {
			s->next = empty; /* off every list now: reuse next */
			empty = s;
		}
	}
	memmove(cc->obj, cc->obj + n, (count - n) * sizeof(cc->obj[0]));
	count_store(&cc->count, count - n);
	c->flushes++;
	spin_unlock(&c->lock);
	while (empty) {
		struct slab *next = empty->next;

		get_backend()->free_pages(empty, 0);
		empty = next;
	}
}

/* Fill an empty cc with up to cache_batch objects; false if none at all. */
static bool cache_refill(struct kmalloc_class *c, struct cpu_cache *cc)
{
	unsigned got = 0;

	kassert(cc->count == 0);
	spin_lock(&c->lock);
	while (got < c->cache_batch) {
		struct slab *s;

		if (!c->partial && got)
			break; /* enough to go on: no backend call */
		s = slab_with_room(c);
		if (!s) {
			spin_unlock(&c->lock);
			return false;
		}
		cc->obj[got++] = take_locked(c, s);
	}
	count_store(&cc->count, got);
	c->refills++;
	spin_unlock(&c->lock);

	/* Ours alone now: check the first word's poison, then mark. */
	for (unsigned k = 0; k < got; k++) {
		uint64_t *obj = cc->obj[k];

		if (KMALLOC_DEBUG && obj[0] != KMALLOC_POISON_WORD)
			check_poison(c, obj); /* panics, naming the offset */
		obj[0] = cached_mark(obj);
	}
	return true;
}

/* kmalloc from this CPU's cache: lock-free unless it is empty. */
static void *cache_alloc(struct kmalloc_class *c, struct cpu_cache *cc)
{
	uint64_t *obj;
	unsigned count = cc->count;

	if (!count) {
		if (!cache_refill(c, cc))
			return NULL;
		count = cc->count;
	}
	obj = cc->obj[--count];
	count_store(&cc->count, count);
	stat_inc(&cc->allocs);
	/* Handed out before any check, as class_alloc() does. */
	if (obj[0] != cached_mark(obj))
		panic("kmalloc: %s object %p was written after kfree() "
		      "(word at offset 0 is %#llx, mark %#llx)", c->name,
		      (void *)obj, (unsigned long long)obj[0],
		      (unsigned long long)cached_mark(obj));
	obj[0] = KMALLOC_POISON_WORD;
	if (KMALLOC_DEBUG)
		check_poison(c, obj);
	return obj;
}

/* kfree into this CPU's cache: lock-free unless it is full. */
static void cache_free(struct slab *s, struct cpu_cache *cc, void *ptr,
		       void *caller)
{
	struct kmalloc_class *c = s->cls;
	unsigned i = slab_index(s, ptr, "kfree", caller);
	uint64_t *obj = ptr;

	/*
	 * Marked: it sits in a cache (this CPU's or another's). Bit clear:
	 * it went back to its slab. Either way it is already free.
	 */
	if (obj[0] == cached_mark(obj) || !obj_used(s, i))
		panic("kfree(%p) from %p: double free of a %s object", ptr,
		      caller, c->name);
	memset(ptr, KMALLOC_POISON_FREE, c->size);
	obj[0] = cached_mark(obj);
	if (cc->count == c->cache_limit)
		cache_flush(c, cc, c->cache_batch);
	cc->obj[cc->count] = ptr;
	count_store(&cc->count, cc->count + 1);
	stat_inc(&cc->frees);
}

void kmalloc_drain_cpu(void)
{
	struct kmalloc_cpu *pc;

	if (!atomic_load_acquire(&cpu_hook))
		return;
	pc = this_cpu_area();
	if (!pc)
		return;
	for (unsigned i = 0; i < NR_USER_CLASSES; i++)
		if (pc->cache[i].count)
			cache_flush(&classes[i], &pc->cache[i],
				    pc->cache[i].count);
}

void kmalloc_drain_all(void (*run_on_each_cpu)(void (*fn)(void)))
{
	if (atomic_load_acquire(&cpu_hook))
		run_on_each_cpu(kmalloc_drain_cpu);
}

/* ---- large blocks ------------------------------------------------------- */

static inline unsigned large_hash(const void *p)
{
	return ((uintptr_t)p >> PAGE_SHIFT) % LARGE_HASH_BUCKETS;
}

/* Smallest order whose block holds size bytes (size <= max block). */
static unsigned order_for(size_t size)
{
	unsigned order = 0;

	while (((size_t)PAGE_SIZE << order) < size)
		order++;
	return order;
}

/* Records are internal: this bypasses the user check of slab_of(). */
static void rec_free(struct large_rec *rec, void *caller)
{
	struct slab *s = (struct slab *)ALIGN_DOWN((uintptr_t)rec, PAGE_SIZE);

	kassert(s->tag == slab_tag(s) && s->cls == &classes[REC_CLASS]);
	class_free(s, rec, caller);
}

static void large_fail(void)
{
	spin_lock(&large.lock);
	large.failures++;
	spin_unlock(&large.lock);
}

static void *large_alloc(size_t size)
{
	unsigned order = order_for(size);
	struct large_rec *rec;
	void *p;

	rec = class_alloc(&classes[REC_CLASS]);
	if (!rec) {
		large_fail();
		return NULL;
	}
	p = get_backend()->alloc_pages(order);
	if (!p) {
		rec_free(rec, __builtin_return_address(0));
		large_fail();
		return NULL;
	}
	if (!IS_ALIGNED((uintptr_t)p, PAGE_SIZE))
		panic("kmalloc: backend returned unaligned block %p", p);
	rec->addr = p;
	rec->order = order;

	spin_lock(&large.lock);
	rec->next = large.bucket[large_hash(p)];
	large.bucket[large_hash(p)] = rec;
	large.in_use++;
	large.pages += 1ull << order;
	large.allocs++;
	spin_unlock(&large.lock);
	return p;
}

/* The record of the large block at p; large.lock held. NULL if none. */
static struct large_rec **large_find(const void *p)
{
	struct large_rec **pp = &large.bucket[large_hash(p)];

	while (*pp && (*pp)->addr != p)
		pp = &(*pp)->next;
	return *pp ? pp : NULL;
}

static void large_free(void *p, void *caller)
{
	struct large_rec **pp, *rec;
	unsigned order;

	spin_lock(&large.lock);
	pp = large_find(p);
	if (!pp) {
		spin_unlock(&large.lock);
		panic("kfree(%p) from %p: page-aligned pointer that is no live "
		      "large block (double free, or not from kmalloc)", p,
		      caller);
	}
	rec = *pp;
	*pp = rec->next;
	order = rec->order;
	large.in_use--;
	large.pages -= 1ull << order;
	large.frees++;
	spin_unlock(&large.lock);

	get_backend()->free_pages(p, order);
	rec_free(rec, caller);
}

/* ---- interface ---------------------------------------------------------- */

void *kmalloc_aligned(size_t size, size_t align)
{
	if (align < KMALLOC_MIN_ALIGN)
		align = KMALLOC_MIN_ALIGN;
	if (align & (align - 1) || align > PAGE_SIZE)
		panic("kmalloc_aligned(%zu, %zu) from %p: alignment must be a "
		      "power of two <= %llu", size, align,
		      __builtin_return_address(0),
		      (unsigned long long)PAGE_SIZE);
	if (size > ((size_t)PAGE_SIZE << KMALLOC_MAX_ORDER)) {
		get_backend();
		large_fail();
		return NULL;
	}
	if (size == 0)
		size = 1;
	/* Round up so the object owns whole align-sized blocks. */
	size = ALIGN_UP(size, align);
	for (unsigned i = 0; i < NR_USER_CLASSES; i++) {
		struct kmalloc_class *c = &classes[i];

		if (c->size >= size && c->align >= align) {
			struct cpu_cache *cc = cache_of(c);

			return cc ? cache_alloc(c, cc) : class_alloc(c);
		}
	}
	return large_alloc(size);
}

void *kmalloc(size_t size)
{
	void *p = kmalloc_aligned(size, KMALLOC_MIN_ALIGN);

	trace_point(kmalloc, (uintptr_t)p, size);
	return p;
}

void *kzalloc_aligned(size_t size, size_t align)
{
	void *p = kmalloc_aligned(size, align);

	if (p)
		memset(p, 0, size);
	return p;
}

void *kzalloc(size_t size)
{
	return kzalloc_aligned(size, KMALLOC_MIN_ALIGN);
}

void kfree(void *ptr)
{
	void *caller = __builtin_return_address(0);

	if (!ptr)
		return;
	trace_point(kfree, (uintptr_t)ptr);
	get_backend();
	if (!IS_ALIGNED((uintptr_t)ptr, KMALLOC_MIN_ALIGN))
		panic("kfree(%p) from %p: misaligned pointer, not from kmalloc",
		      ptr, caller);
	if (IS_ALIGNED((uintptr_t)ptr, PAGE_SIZE)) {
		large_free(ptr, caller);
	} else {
		struct slab *s = slab_of(ptr, "kfree", caller);
		struct cpu_cache *cc = cache_of(s->cls);

		if (cc)
			cache_free(s, cc, ptr, caller);
		else
			class_free(s, ptr, caller);
	}
}

size_t ksize(const void *ptr)
{
	void *caller = __builtin_return_address(0);
	struct large_rec **pp;
	struct slab *s;
	size_t size;

	if (IS_ALIGNED((uintptr_t)ptr, PAGE_SIZE)) {
		spin_lock(&large.lock);
		pp = large_find(ptr);
		size = pp ? (size_t)PAGE_SIZE << (*pp)->order : 0;
		spin_unlock(&large.lock);
		if (!size)
			panic("ksize(%p) from %p: no live large block", ptr,
			      caller);
		return size;
	}
	s = slab_of(ptr, "ksize", caller);
	slab_index(s, ptr, "ksize", caller);
	return s->cls->size;
}

/* ---- statistics --------------------------------------------------------- */

unsigned kmalloc_stats_rows(void)
{
	return NR_CLASSES + 1;
}

bool kmalloc_stats_get(unsigned i, struct kmalloc_stats *out)
{
	if (i < NR_CLASSES) {
		struct kmalloc_class *c = &classes[i];
		uint64_t cached = 0, hits = 0, cfrees = 0;
		unsigned ncpu = atomic_load_relaxed(&cpu_limit);

		spin_lock(&c->lock);
		/* Counts change under this lock when objects cross between
		 * caches and slabs, so out - cached is a consistent view. */
		for (unsigned cpu = 0; c->cache_limit && cpu < ncpu; cpu++) {
			struct kmalloc_cpu *pc =
				atomic_load_acquire(&cpu_area[cpu]);

			if (!pc)
				continue;
			cached += atomic_load_relaxed(&pc->cache[i].count);
			hits += atomic_load_relaxed(&pc->cache[i].allocs);
			cfrees += atomic_load_relaxed(&pc->cache[i].frees);
		}
		*out = (struct kmalloc_stats){
			.name = c->name,
			.obj_size = c->size,
			.per_slab = c->nr,
			/* A counter read mid-move may lag: never wrap. */
			.in_use = c->out > cached ? c->out - cached : 0,
			.slabs = c->slabs,
			.pages = c->slabs,
			.allocs = c->allocs + hits,
			.frees = c->frees + cfrees,
			.failures = c->failures,
			.cached = cached,
			/* Each refill served one allocation: a miss. */
			.cache_hits = hits - MIN(hits, c->refills),
			.cache_refills = c->refills,
			.cache_flushes = c->flushes,
		};
		spin_unlock(&c->lock);
		return true;
	}
	if (i == NR_CLASSES) {
		spin_lock(&large.lock);
		*out = (struct kmalloc_stats){
			.name = "large",
			.in_use = large.in_use,
			.slabs = large.in_use,
			.pages = large.pages,
			.allocs = large.allocs,
			.frees = large.frees,
			.failures = large.failures,
		};
		spin_unlock(&large.lock);
		return true;
	}
	return false;
}

size_t kmalloc_in_use_bytes(void)
{
	struct kmalloc_stats st;
	size_t bytes = 0;

	for (unsigned i = 0; kmalloc_stats_get(i, &st); i++) {
		if (i == REC_CLASS)
			continue; /* bookkeeping, not user memory */
		if (st.obj_size)
			bytes += st.in_use * st.obj_size;
		else
			bytes += st.pages * PAGE_SIZE;
	}
	return bytes;
}

uint64_t kmalloc_backend_pages(void)
{
	struct kmalloc_stats st;
	uint64_t pages = 0;

	for (unsigned i = 0; kmalloc_stats_get(i, &st); i++)
		pages += st.pages;
	return pages + kmalloc_percpu_pages();
}

uint64_t kmalloc_percpu_pages(void)
{
	return atomic_load_relaxed(&cpu_area_pages);
}

void kmalloc_stats_print(void)
{
	struct kmalloc_stats st, sum = { .name = "total" };

	kprintf("kmalloc: %-12s %6s %5s %9s %7s %10s %10s %6s %6s %10s %8s "
		"%8s\n", "class", "size", "/slab", "in-use", "pages", "allocs",
		"frees", "fails", "cached", "hits", "refills", "flushes");
	for (unsigned i = 0; kmalloc_stats_get(i, &st); i++) {
		kprintf("kmalloc: %-12s %6zu %5u %9llu %7llu %10llu %10llu "
			"%6llu %6llu %10llu %8llu %8llu\n", st.name,
			st.obj_size, st.per_slab,
			(unsigned long long)st.in_use,
			(unsigned long long)st.pages,
			(unsigned long long)st.allocs,
			(unsigned long long)st.frees,
			(unsigned long long)st.failures,
			(unsigned long long)st.cached,
			(unsigned long long)st.cache_hits,
			(unsigned long long)st.cache_refills,
			(unsigned long long)st.cache_flushes);
		sum.pages += st.pages;
		if (i == REC_CLASS)
			continue; /* bookkeeping: counted by "large" */
		sum.allocs += st.allocs;
		sum.frees += st.frees;
		sum.failures += st.failures;
		sum.cached += st.cached;
		sum.cache_hits += st.cache_hits;
		sum.cache_refills += st.cache_refills;
		sum.cache_flushes += st.cache_flushes;
	}
	kprintf("kmalloc: %-12s %6s %5s %9s %7llu %10llu %10llu %6llu %6llu "
		"%10llu %8llu %8llu\n", sum.name, "", "", "",
		(unsigned long long)sum.pages, (unsigned long long)sum.allocs,
		(unsigned long long)sum.frees,
		(unsigned long long)sum.failures,
		(unsigned long long)sum.cached,
		(unsigned long long)sum.cache_hits,
		(unsigned long long)sum.cache_refills,
		(unsigned long long)sum.cache_flushes);
	kprintf("kmalloc: %zu bytes in use, %llu pages of per-CPU caches\n",
		kmalloc_in_use_bytes(),
		(unsigned long long)kmalloc_percpu_pages());
}
