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
 *
 * Files: this one holds the classes, slabs, per-CPU caches and the
 * interface; mm/kmalloc_large.c the large blocks and large_table;
 * mm/kmalloc_stats.c the statistics; mm/kmalloc_internal.h what the three
 * share. The rules above are the invariants of all three.
 */
#include "mm/kmalloc.h"
#include "mm/kmalloc_internal.h"
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

/* Bounds of one (CPU, class) cache (CPU_CACHE_MAX: kmalloc_internal.h); a
 * class caches up to two slabs' worth (so the top class, two objects a
 * slab, keeps 4, not 32 pages' worth). */
#define CPU_CACHE_MIN 4u
#define CPU_CACHE_SLABS 2u
/* First word of an object sitting in a per-CPU cache, xored with its
 * address. Its low bits differ from the poison's, so for an 8-aligned
 * object the mark can never equal the poison word. */
#define CACHED_MAGIC 0x454e495a4147414dull /* "MAGAZINE" */
BUILD_ASSERT(((CACHED_MAGIC ^ KMALLOC_POISON_WORD) &
	      (KMALLOC_MIN_ALIGN - 1)) != 0);

BUILD_ASSERT(KMALLOC_MAX_ORDER <= BUDDY_MAX_ORDER);

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

static const uint32_t user_class_sizes[] = {
	8, 16, 32, 64, 128, 256, 512, 1024, KMALLOC_TOP_SIZE,
};
static const char *const user_class_names[] = {
	"kmalloc-8",   "kmalloc-16",  "kmalloc-32",
	"kmalloc-64",  "kmalloc-128", "kmalloc-256",
	"kmalloc-512", "kmalloc-1k",  "kmalloc-top",
};
BUILD_ASSERT(ARRAY_SIZE(user_class_sizes) == NR_USER_CLASSES);
BUILD_ASSERT(ARRAY_SIZE(user_class_names) == NR_USER_CLASSES);
BUILD_ASSERT(sizeof(struct kmalloc_cpu) <= PAGE_SIZE);

struct kmalloc_class kmalloc_classes[NR_CLASSES];

static const struct kmalloc_backend *backend;

/* NULL: no per-CPU caches. Set by kmalloc_enable_cpu_caches(). */
static unsigned (*cpu_hook)(void);
unsigned kmalloc_cpu_limit; /* CPU numbers below this have caches */
struct kmalloc_cpu *kmalloc_cpu_area[MAX_CPUS];
uint64_t kmalloc_cpu_area_pages;

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
		class_setup(&kmalloc_classes[i], user_class_names[i],
			    user_class_sizes[i], false);
	class_setup(&kmalloc_classes[REC_CLASS], "large-rec",
		    sizeof(struct large_rec), true);
	kmalloc_large_init();
	atomic_store_relaxed(&cpu_hook, NULL);
	atomic_store_relaxed(&kmalloc_cpu_limit, 0);
	memset(kmalloc_cpu_area, 0, sizeof(kmalloc_cpu_area));
	kmalloc_cpu_area_pages = 0;
	atomic_store_release(&backend, b);
}

bool kmalloc_initialized(void)
{
	return atomic_load_acquire(&backend) != NULL;
}

const struct kmalloc_backend *kmalloc_backend(void)
{
	const struct kmalloc_backend *b = atomic_load_acquire(&backend);

	if (unlikely(!b))
		panic("kmalloc used before kmalloc_init()");
	return b;
}

void kmalloc_enable_cpu_caches(unsigned (*cpu_id)(void), unsigned ncpus_max)
{
	kmalloc_backend();
	/* Switching the caches off would strand what they hold. */
	kassert(cpu_id && !atomic_load_relaxed(&cpu_hook));
	atomic_store_relaxed(&kmalloc_cpu_limit, MIN(ncpus_max, MAX_CPUS));
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
	struct slab *s = kmalloc_backend()->alloc_pages(0);

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

	if (s->tag != slab_tag(s) || s->cls < kmalloc_classes ||
	    s->cls >= kmalloc_classes + NR_CLASSES || s->cls->internal)
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
		kmalloc_backend()->free_pages(s, 0);
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
	if (cpu >= atomic_load_relaxed(&kmalloc_cpu_limit))
		return NULL;
	pc = atomic_load_relaxed(&kmalloc_cpu_area[cpu]);
	if (likely(pc))
		return pc;
	pc = kmalloc_backend()->alloc_pages(0);
	if (!pc)
		return NULL;
	memset(pc, 0, sizeof(*pc));
	atomic_fetch_add_relaxed(&kmalloc_cpu_area_pages, 1);
	/* Release: statistics on other CPUs read the zeroed counters. */
	atomic_store_release(&kmalloc_cpu_area[cpu], pc);
	return pc;
}

static struct cpu_cache *cache_of(struct kmalloc_class *c)
{
	struct kmalloc_cpu *pc;

	if (!c->cache_limit)
		return NULL;
	pc = this_cpu_area();
	return pc ? &pc->cache[c - kmalloc_classes] : NULL;
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

		kmalloc_backend()->free_pages(empty, 0);
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
			cache_flush(&kmalloc_classes[i], &pc->cache[i],
				    pc->cache[i].count);
}

void kmalloc_drain_all(void (*run_on_each_cpu)(void (*fn)(void)))
{
	if (atomic_load_acquire(&cpu_hook))
		run_on_each_cpu(kmalloc_drain_cpu);
}

/* Merge two address-ordered chains (next links only). */
static struct slab *merge_by_address(struct slab *a, struct slab *b)
{
	struct slab *out = NULL, **tail = &out;

	while (a && b) {
		struct slab *low = (uintptr_t)a < (uintptr_t)b ? a : b;

		if (low == a)
			a = a->next;
		else
			b = b->next;
		*tail = low;
		tail = &low->next;
	}
	*tail = a ? a : b;
	return out;
}

/* Sort c's partial list by address (merge sort on the next links, then
 * the prev links again); c->lock held. */
static void partial_sort(struct kmalloc_class *c)
{
	struct slab *runs[BITS_PER_WORD] = {NULL}, *s = c->partial, *prev;
	unsigned nruns = 0;

	/* Bottom-up: runs[k] holds a sorted run of 2^k slabs, or none. */
	while (s) {
		struct slab *one = s;
		unsigned k = 0;

		s = s->next;
		one->next = NULL;
		for (; k < nruns && runs[k]; k++) {
			one = merge_by_address(runs[k], one);
			runs[k] = NULL;
		}
		kassert(k < BITS_PER_WORD);
		runs[k] = one;
		if (k == nruns)
			nruns++;
	}
	s = NULL;
	for (unsigned k = 0; k < nruns; k++)
		s = merge_by_address(runs[k], s);
	c->partial = s;
	for (prev = NULL; s; prev = s, s = s->next)
		s->prev = prev;
}

void kmalloc_sort_partial(void)
{
	for (unsigned i = 0; i < NR_CLASSES; i++) {
		struct kmalloc_class *c = &kmalloc_classes[i];

		spin_lock(&c->lock);
		partial_sort(c);
		spin_unlock(&c->lock);
	}
}

/* ---- records of large blocks (mm/kmalloc_large.c) ----------------------- */

struct large_rec *kmalloc_rec_alloc(void)
{
	return class_alloc(&kmalloc_classes[REC_CLASS]);
}

/* Records are internal: this bypasses the user check of slab_of(). */
void kmalloc_rec_free(struct large_rec *rec, void *caller)
{
	struct slab *s = (struct slab *)ALIGN_DOWN((uintptr_t)rec, PAGE_SIZE);

	kassert(s->tag == slab_tag(s) && s->cls == &kmalloc_classes[REC_CLASS]);
	class_free(s, rec, caller);
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
		kmalloc_backend();
		kmalloc_large_fail();
		return NULL;
	}
	if (size == 0)
		size = 1;
	/* Round up so the object owns whole align-sized blocks. */
	size = ALIGN_UP(size, align);
	for (unsigned i = 0; i < NR_USER_CLASSES; i++) {
		struct kmalloc_class *c = &kmalloc_classes[i];

		if (c->size >= size && c->align >= align) {
			struct cpu_cache *cc = cache_of(c);

			return cc ? cache_alloc(c, cc) : class_alloc(c);
		}
	}
	return kmalloc_large_alloc(size);
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
	kmalloc_backend();
	if (!IS_ALIGNED((uintptr_t)ptr, KMALLOC_MIN_ALIGN))
		panic("kfree(%p) from %p: misaligned pointer, not from kmalloc",
		      ptr, caller);
	if (IS_ALIGNED((uintptr_t)ptr, PAGE_SIZE)) {
		kmalloc_large_free(ptr, caller);
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
	struct slab *s;
	size_t size;

	if (IS_ALIGNED((uintptr_t)ptr, PAGE_SIZE)) {
		size = kmalloc_large_size(ptr);
		if (!size)
			panic("ksize(%p) from %p: no live large block", ptr,
			      caller);
		return size;
	}
	s = slab_of(ptr, "ksize", caller);
	slab_index(s, ptr, "ksize", caller);
	return s->cls->size;
}
