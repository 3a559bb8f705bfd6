/*
 * The model engine: set-associative LRU caches, MESI between the CPUs'
 * private caches, a shared LLC, write-combining buffers and memory types
 * per page. The picture and the invariants are in cachemodel/model.h.
 */
#include <stdlib.h>
#include <string.h>
#include "cachemodel/model.h"

#define WC_FULL_MASK UINT64_MAX	/* all 64 bytes of a line written */
#define WC_CHUNK_BYTES 8
#define PAGES_PER_CHUNK_SHIFT 18	/* one type chunk: 2^18 pages = 1 GiB */
#define TYPE_CHUNKS (1u << (CM_MAX_PHYS_BITS - CM_PAGE_SHIFT - PAGES_PER_CHUNK_SHIFT))
#define PAGES_PER_CHUNK (1u << PAGES_PER_CHUNK_SHIFT)
/* evict_everywhere() for the model itself: the write-back counts on no CPU. */
#define NO_CPU CM_MAX_CPUS
/* No line number (pa >> 6 never reaches it). */
#define NO_LINE UINT64_MAX
#define WAY_HINT_BITS 6
#define WAY_HINTS (1u << WAY_HINT_BITS)
/* Fibonacci hashing: the multiply moves every bit of a line number into
 * the top bits, so lines a power of two apart get different hints. */
#define HASH_MULTIPLIER 0x9e3779b97f4a7c15ull
/* A host cache line: per-CPU state is aligned to it. */
#define HOST_LINE_BYTES 64
#define LINES_PER_PAGE (1u << (CM_PAGE_SHIFT - CM_LINE_SHIFT))
/* Streams the prefetcher follows per CPU, and prefetched lines it
 * remembers (to count useful and late ones), hashed by line number: a
 * line whose slot a later prefetch took is no longer counted. */
#define PF_STREAMS 8
#define PF_RECENT_BITS 6
#define PF_RECENT (1u << PF_RECENT_BITS)
/* Misses in one direction within a page before a stream is trusted. */
#define PF_TRAIN 2
/* Hand-over clocks of contended lines, hashed by line number. */
#define LINE_CLOCK_BITS 10
#define LINE_CLOCKS (1u << LINE_CLOCK_BITS)

enum line_state {
	ST_I = 0,
	ST_S,
	ST_E,
	ST_M,
};

/*
 * One cache level: sets x ways, way w of set s at index s * ways + w.
 * Who writes what (cm_access_fast() runs beside other CPUs' calls):
 * line[] and stamp[] of a private level are written only by its own CPU,
 * tick too; state[] of a private level is also written by other CPUs
 * (snoops), so it is read and written with relaxed atomics (state_get,
 * state_set). Stamps are compared only within one set of one level, so
 * a tick per level gives the same LRU order as one global tick.
 */
struct level {
	uint32_t sets, ways, latency;
	uint64_t set_mask;	/* sets - 1 when sets is a power of two, else 0 */
	uint64_t tick;		/* LRU clock of this level */
	uint64_t *fills;	/* the model's fills counter */
	uint64_t *line;		/* line number (pa >> 6) */
	uint8_t *state;		/* enum line_state; LLC uses S (clean), M */
	uint64_t *stamp;	/* LRU: last touch, 0 = never */
};

/*
 * "Line was in way i of l1 when last looked up": a hint, checked before
 * use (l1.line[i] == line and valid), so nothing has to forget it when
 * the way is refilled or snooped. A hashed table, not only the last
 * line: a copy alternates between a source and a destination line that
 * sit in the same L1D set.
 */
struct way_hint {
	uint64_t line;		/* NO_LINE: empty */
	size_t i;
};

struct wc_buffer {
	uint64_t line;
	uint64_t mask;		/* bytes written; 0 = buffer free */
	uint64_t stamp;
	/* cm_model.fills when a non-temporal store last evicted the line:
	 * while fills has not moved, no cache holds it. */
	uint64_t evicted_at;
	uint64_t done;		/* its last flush leaves the bus (CPU clock) */
};

/* A stream the prefetcher follows: misses moving through one page. */
struct pf_stream {
	uint64_t page;		/* page number + 1; 0: free */
	uint64_t last;		/* line of its last miss */
	uint64_t next;		/* next line to prefetch */
	uint64_t stamp;		/* LRU */
	int dir;		/* +1, -1; 0 before a second miss */
	unsigned hits;		/* misses in dir so far */
};

/* A line a prefetch brought: when it arrives; used once counted. */
struct pf_line {
	uint64_t line;		/* NO_LINE: empty */
	uint64_t ready;
	bool used;
};

/*
 * A bus (front-side bus or memory controller) as a timeline of its
 * occupancy (model.h, invariant 7): BUS_SLOTS slots in a ring, slot k
 * for the cycles [e * BUS_SLOT_CYCLES, (e + 1) * BUS_SLOT_CYCLES) of
 * every epoch e = k mod BUS_SLOTS, each one word: the epoch it holds
 * (above BUS_USED_BITS) and the cycles of it booked (below), changed
 * with compare-and-swap only. A slot holding an older epoch is empty.
 *
 * BUS_SLOT_CYCLES: the order in which two CPUs' requests reach the
 * model within one slot still decides which of them waits; across slots
 * it does not. 16 cycles is about one transaction of the shipped
 * profiles (wc_burst and wc_chunk are 8 to 18), so the host's order
 * moves a wait by at most about a slot and a transaction. Narrower
 * slots cost more steps per request (a transaction spans occ / 16 + 1
 * slots).
 * BUS_SLOTS: the window, 2048 x 16 = 32768 cycles, covers how far
 * apart the requests of paced CPUs can be: the pacing quantum (2000
 * by default, PACE_DEFAULT_QUANTUM), the longest wait (bus_queue_max,
 * 288 to 384 cycles) and a CPU's own requests booked ahead of its clock
 * (a fill buffer's memory latency, a partial WC flush's chunks), sixteen
 * times over. A request older than the window finds its slot holding a
 * later epoch: it is not queued (its history is gone) and is counted
 * (bus_late).
 */
#define BUS_SLOT_CYCLES 16
#define BUS_SLOTS 2048
#define BUS_USED_BITS 8
#define BUS_USED_MASK ((1ull << BUS_USED_BITS) - 1)
_Static_assert(BUS_SLOT_CYCLES <= BUS_USED_MASK,
	       "a slot's booked cycles fit below its epoch");
struct bus {
	uint64_t slot[BUS_SLOTS];
} __attribute__((aligned(HOST_LINE_BYTES)));

/* When a contended line can next be handed over. */
struct line_clock {
	uint64_t line;
	uint64_t free;
};

/* Cache-line aligned so two CPUs' hot fields never share a host line. */
struct cpu {
	struct level l1, l2;	/* l2.sets == 0: no private L2 */
	struct wc_buffer wc[CM_MAX_WC_BUFFERS];
	uint64_t wc_tick;	/* LRU clock of the WC buffers */
	/* cm_access_fast()'s memory (this CPU's only): where in l1 it
	 * found recent lines, and its last access's page: */
	struct way_hint hint[WAY_HINTS];
	uint64_t last_page;	/* page number + 1 (0: none), */
	uint64_t last_types_gen;	/* of this cm_model.types_gen, */
	enum cm_memtype last_type;	/* had this type */
	uint64_t last_load;	/* line + 1 of the last cached load (0: none) */
	/* Timing (all CPU clocks, see cpu_now()): */
	uint64_t fb[CM_MAX_FILL_BUFFERS];	/* when each fill buffer frees */
	uint64_t l2q[CM_MAX_L2_QUEUE];	/* when each L2 queue entry frees */
	uint64_t sb[CM_MAX_STORE_BUFFER];	/* ring: buffered stores' */
	unsigned sb_head, sb_n;			/* ownership times */
	uint64_t sb_last;	/* latest ownership time in the store buffer */
	uint64_t wc_last;	/* latest WC flush completion */
	uint64_t skip;		/* cycles slept through (cm_set_skip); atomic:
				 * cpu_now() of another CPU reads it */
	struct pf_stream pf[PF_STREAMS];
	uint64_t pf_tick;
	struct pf_line pf_recent[PF_RECENT];	/* by pf_slot() */
	struct cm_stats st;
} __attribute__((aligned(HOST_LINE_BYTES)));

/*
 * Laid out by who writes what, in host cache lines: the fast path of
 * every CPU reads the first fields on every access, so nothing written
 * often may share their lines (the LLC's LRU clock, written on every LLC
 * access, once sat next to the cpu pointer and cost a host cache miss
 * per access to the other vCPU's thread).
 */
struct cm_model {
	/* Read-mostly: written at creation, the type chunk pointers when a
	 * chunk is first needed. */
	struct cm_profile p;
	unsigned ncpus;
	struct cpu *cpu;
	/* Per page enum cm_memtype, chunks allocated lazily; pointers and
	 * bytes are atomic because cm_access_fast() reads them. */
	uint8_t *types[TYPE_CHUNKS];
	size_t bytes;
	/* Bumped by every type change (after the map), so a CPU's
	 * remembered page type is known to be stale; alone in its host
	 * line, as every fast-path access reads it. */
	uint64_t types_gen __attribute__((aligned(HOST_LINE_BYTES)));
	/* Bumped by every insertion of a line into any cache (under the
	 * caller's lock); in its own host line, as misses write it often. */
	uint64_t fills __attribute__((aligned(HOST_LINE_BYTES)));
	/* Written on every LLC access (its LRU clock). */
	struct level llc __attribute__((aligned(HOST_LINE_BYTES)));
	/* Buses: CPU c uses bus[c / bus_cpus]; read and written with
	 * atomics (the fast path's WC flushes and UC accesses use them). */
	unsigned bus_cpus;
	uint64_t bus_queue_max;	/* cap of a bus wait (model.h, inv. 5) */
	struct bus *bus;	/* ncpus / bus_cpus of them, rounded up */
	/* Slow path only (under the caller's lock). */
	struct line_clock line_clock[LINE_CLOCKS];
};

/*
 * *v += n for a counter of struct cm_stats. Every counter is written by
 * its own CPU's thread only (or under fast_stop, see cachemodel/plugin.c)
 * and read by others (region snapshots) with atomic loads, so every
 * write is an atomic store; on x86 both are plain moves.
 */
static void stat_add(uint64_t *v, uint64_t n)
{
	__atomic_store_n(v, __atomic_load_n(v, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

static const char *const type_names[CM_NTYPES] = {
	[CM_WB] = "WB", [CM_WT] = "WT", [CM_WC] = "WC",
	[CM_UC] = "UC", [CM_UC_MINUS] = "UC-", [CM_WP] = "WP",
};

const char *cm_memtype_name(enum cm_memtype t)
{
	return (unsigned)t < CM_NTYPES ? type_names[t] : "?";
}

/* ------------------------------------------------------------------ */
/* One level                                                            */

static const char *level_check(const struct cm_level_cfg *c, bool optional)
{
	if (c->size == 0)
		return optional ? NULL : "a required cache level has size 0";
	if (c->ways == 0)
		return "a cache level has 0 ways";
	if (c->size % (c->ways * CM_LINE_SIZE))
		return "a cache size is not a multiple of ways x 64 bytes";
	return NULL;
}

const char *cm_profile_check(const struct cm_profile *p)
{
	const char *e;

	if ((e = level_check(&p->l1d, false)) ||
	    (e = level_check(&p->l2, true)) ||
	    (e = level_check(&p->llc, false)))
		return e;
	if (p->wc_buffers < 1 || p->wc_buffers > CM_MAX_WC_BUFFERS)
		return "wc_buffers must be 1..16";
	if (p->cpi_x100 == 0)
		return "cpi_x100 must be at least 1";
	if (p->fill_buffers > CM_MAX_FILL_BUFFERS)
		return "fill_buffers must be 0..32";
	if (p->l2_queue > CM_MAX_L2_QUEUE)
		return "l2_queue must be 0..32";
	if (p->store_buffer > CM_MAX_STORE_BUFFER)
		return "store_buffer must be 0..64";
	if (p->prefetch_ahead > CM_MAX_PREFETCH_AHEAD)
		return "prefetch_ahead must be 0..32";
	if (p->llc_inclusive > 1 || p->prefetch_next > 1)
		return "llc_inclusive and prefetch_next must be 0 or 1";
	return NULL;
}

static bool level_init(struct cm_model *m, struct level *l,
		       const struct cm_level_cfg *c)
{
	size_t n;

	memset(l, 0, sizeof(*l));
	l->fills = &m->fills;
	if (c->size == 0)
		return true;
	l->ways = c->ways;
	l->sets = c->size / (c->ways * CM_LINE_SIZE);
	if ((l->sets & (l->sets - 1)) == 0)
		l->set_mask = l->sets - 1;
	l->latency = c->latency;
	n = (size_t)l->sets * l->ways;
	l->line = calloc(n, sizeof(*l->line));
	l->state = calloc(n, sizeof(*l->state));
	l->stamp = calloc(n, sizeof(*l->stamp));
	m->bytes += n * (sizeof(*l->line) + sizeof(*l->state) +
			 sizeof(*l->stamp));
	return l->line && l->state && l->stamp;
}

static void level_free(struct level *l)
{
	free(l->line);
	free(l->state);
	free(l->stamp);
}

static bool level_present(const struct level *l)
{
	return l->sets != 0;
}

static enum line_state state_get(const struct level *l, size_t i)
{
	return (enum line_state)__atomic_load_n(&l->state[i], __ATOMIC_RELAXED);
}

static void state_set(struct level *l, size_t i, enum line_state st)
{
	__atomic_store_n(&l->state[i], (uint8_t)st, __ATOMIC_RELAXED);
}

/* Index of way 0 of line's set (no division for the usual sizes). */
static size_t set_base(const struct level *l, uint64_t line)
{
	uint64_t set = l->set_mask || l->sets == 1 ? line & l->set_mask
						    : line % l->sets;

	return (size_t)set * l->ways;
}

/* Index of line in l, or -1. */
static long level_find(const struct level *l, uint64_t line)
{
	size_t base;

	if (!level_present(l))
		return -1;
	base = set_base(l, line);
	for (uint32_t w = 0; w < l->ways; w++)
		if (l->line[base + w] == line && state_get(l, base + w) != ST_I)
			return (long)(base + w);
	return -1;
}

static void level_touch(struct level *l, long i)
{
	l->stamp[i] = ++l->tick;
}

/*
 * Put line (not present) into l with state st, evicting the LRU way if
 * the set is full; the victim's line and state go to *vline, *vstate
 * (ST_I when a free way was used).
 */
static void level_insert(struct level *l, uint64_t line,
			 enum line_state st, uint64_t *vline,
			 enum line_state *vstate)
{
	size_t base = set_base(l, line);
	size_t victim = base;

	for (uint32_t w = 0; w < l->ways; w++) {
		size_t i = base + w;

		if (state_get(l, i) == ST_I) {
			victim = i;
			break;
		}
		if (l->stamp[i] < l->stamp[victim])
			victim = i;
	}
	*vline = l->line[victim];
	*vstate = state_get(l, victim);
	__atomic_store_n(l->fills,
			 __atomic_load_n(l->fills, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	l->line[victim] = line;
	state_set(l, victim, st);
	level_touch(l, (long)victim);
}

/* Remove line from l; returns the state it had (ST_I if absent). */
static enum line_state level_drop(struct level *l, uint64_t line)
{
	long i = level_find(l, line);
	enum line_state st;

	if (i < 0)
		return ST_I;
	st = state_get(l, (size_t)i);
	state_set(l, (size_t)i, ST_I);
	return st;
}

/* ------------------------------------------------------------------ */
/* Creation                                                             */

struct cm_model *cm_create(const struct cm_profile *p, unsigned ncpus)
{
	struct cm_model *m;
	unsigned nbus;
	bool ok;

	if (cm_profile_check(p) || ncpus < 1 || ncpus > CM_MAX_CPUS)
		return NULL;
	m = aligned_alloc(HOST_LINE_BYTES, sizeof(*m));
	if (!m)
		return NULL;
	memset(m, 0, sizeof(*m));
	m->p = *p;
	m->ncpus = ncpus;
	m->bus_cpus = p->bus_cpus && p->bus_cpus < ncpus ? p->bus_cpus : ncpus;
	m->bus_queue_max = (uint64_t)m->bus_cpus *
			   (p->fill_buffers ? p->fill_buffers : 1) *
			   (p->wc_burst ? p->wc_burst : 1);
	for (unsigned k = 0; k < LINE_CLOCKS; k++)
		m->line_clock[k].line = NO_LINE;
	m->bytes = sizeof(*m);
	nbus = (ncpus + m->bus_cpus - 1) / m->bus_cpus;
	m->bus = aligned_alloc(HOST_LINE_BYTES, nbus * sizeof(*m->bus));
	if (m->bus)
		memset(m->bus, 0, nbus * sizeof(*m->bus));
	m->bytes += nbus * sizeof(*m->bus);
	m->cpu = aligned_alloc(HOST_LINE_BYTES, ncpus * sizeof(*m->cpu));
	if (m->cpu)
		memset(m->cpu, 0, ncpus * sizeof(*m->cpu));
	ok = m->bus != NULL && m->cpu != NULL &&
	     level_init(m, &m->llc, &p->llc);
	m->bytes += ncpus * sizeof(*m->cpu);
	for (unsigned c = 0; ok && c < ncpus; c++) {
		ok = level_init(m, &m->cpu[c].l1, &p->l1d) &&
		     level_init(m, &m->cpu[c].l2, &p->l2);
		for (unsigned k = 0; k < WAY_HINTS; k++)
			m->cpu[c].hint[k].line = NO_LINE;
		for (unsigned k = 0; k < PF_RECENT; k++)
			m->cpu[c].pf_recent[k].line = NO_LINE;
	}
	if (!ok) {
		cm_destroy(m);
		return NULL;
	}
	return m;
}

void cm_destroy(struct cm_model *m)
{
	if (!m)
		return;
	for (unsigned c = 0; m->cpu && c < m->ncpus; c++) {
		level_free(&m->cpu[c].l1);
		level_free(&m->cpu[c].l2);
	}
	free(m->cpu);
	free(m->bus);
	level_free(&m->llc);
	for (unsigned i = 0; i < TYPE_CHUNKS; i++)
		free(m->types[i]);
	free(m);
}

/* ------------------------------------------------------------------ */
/* Memory types                                                         */

enum cm_memtype cm_type_of(const struct cm_model *m, uint64_t pa)
{
	uint64_t page = pa >> CM_PAGE_SHIFT;
	uint64_t chunk = page >> PAGES_PER_CHUNK_SHIFT;
	const uint8_t *types;

	if (chunk >= TYPE_CHUNKS)
		return CM_WB;
	types = __atomic_load_n(&m->types[chunk], __ATOMIC_ACQUIRE);
	if (!types)
		return CM_WB;
	return (enum cm_memtype)__atomic_load_n(
		&types[page & (PAGES_PER_CHUNK - 1)], __ATOMIC_RELAXED);
}

static void evict_everywhere(struct cm_model *m, unsigned cpu, uint64_t line);
static void wc_flush(struct cm_model *m, unsigned cpu, struct wc_buffer *b,
		     enum cm_wc_cause why);

static bool line_in(uint64_t line, uint64_t first, uint64_t last)
{
	return line >= first && line <= last;
}

/*
 * Evict every cached line and WC buffer of [first, last] (line numbers).
 * Write-backs are counted on cpu (NO_CPU: nobody's, as for a type change).
 */
static void evict_range(struct cm_model *m, unsigned cpu, uint64_t first,
			uint64_t last)
{
	struct level *lv[2 * CM_MAX_CPUS + 1];
	unsigned n = 0;

	for (unsigned c = 0; c < m->ncpus; c++) {
		for (unsigned b = 0; b < m->p.wc_buffers; b++) {
			struct wc_buffer *w = &m->cpu[c].wc[b];

			if (w->mask && line_in(w->line, first, last))
				wc_flush(m, c, w, CM_WC_EVICT);
		}
		lv[n++] = &m->cpu[c].l1;
		lv[n++] = &m->cpu[c].l2;
	}
	lv[n++] = &m->llc;
	/* Scan the caches rather than the range: ranges may be huge. */
	for (unsigned k = 0; k < n; k++) {
		struct level *l = lv[k];
		size_t ways = (size_t)l->sets * l->ways;

		for (size_t i = 0; i < ways; i++)
			if (state_get(l, i) != ST_I &&
			    line_in(l->line[i], first, last))
				evict_everywhere(m, cpu, l->line[i]);
	}
}

bool cm_set_type(struct cm_model *m, uint64_t pa, uint64_t len,
		 enum cm_memtype t)
{
	uint64_t first = pa >> CM_PAGE_SHIFT;
	uint64_t end = (pa + len + (1ull << CM_PAGE_SHIFT) - 1) >> CM_PAGE_SHIFT;
	uint64_t limit = 1ull << (CM_MAX_PHYS_BITS - CM_PAGE_SHIFT);

	if ((unsigned)t >= CM_NTYPES || len == 0 || pa + len < pa ||
	    end > limit)
		return false;
	for (uint64_t c = first >> PAGES_PER_CHUNK_SHIFT;
	     c <= (end - 1) >> PAGES_PER_CHUNK_SHIFT; c++) {
		uint8_t *chunk;

		if (m->types[c])
			continue;
		chunk = calloc(PAGES_PER_CHUNK, 1);
		if (!chunk)
			return false;
		__atomic_store_n(&m->types[c], chunk, __ATOMIC_RELEASE);
		m->bytes += PAGES_PER_CHUNK;
	}
	for (uint64_t pg = first; pg < end; pg++)
		__atomic_store_n(&m->types[pg >> PAGES_PER_CHUNK_SHIFT]
				 [pg & (PAGES_PER_CHUNK - 1)], (uint8_t)t,
				 __ATOMIC_RELAXED);
	__atomic_add_fetch(&m->types_gen, 1, __ATOMIC_RELEASE);
	evict_range(m, NO_CPU, first << (CM_PAGE_SHIFT - CM_LINE_SHIFT),
		    (end << (CM_PAGE_SHIFT - CM_LINE_SHIFT)) - 1);
	return true;
}

/* ------------------------------------------------------------------ */
/* Time                                                                 */

/* cpu's clock: instructions x CPI plus the cycles it stalled, plus the
 * cycles it slept through (model.h, invariant 5). */
static uint64_t cpu_now(const struct cm_model *m, unsigned cpu)
{
	const struct cpu *c = &m->cpu[cpu];

	return c->st.insns * m->p.cpi_x100 / 100 + c->st.mem_cycles +
	       __atomic_load_n(&c->skip, __ATOMIC_RELAXED);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* cpu stalls until clock t (nothing if t is past). */
static void stall_until(struct cm_model *m, unsigned cpu, uint64_t t)
{
	uint64_t now = cpu_now(m, cpu);

	if (t > now)
		stat_add(&m->cpu[cpu].st.mem_cycles, t - now);
}

/*
 * One transaction of occ cycles on cpu's bus, asked at clock t. Returns
 * when it starts: at t if the bus has room then, else at the first room
 * after t, at most bus_queue_max later (model.h, invariant 5).
 *
 * The occupancy is booked in the timeline (struct bus) from t's slot
 * on. In t's slot the cycles before t count as taken, so a stream asked
 * in clock order is packed behind itself, as on a bus that is busy until
 * the end of its last transaction; a full slot passes the request on to
 * the next. The transaction starts where its first cycle is booked (later
 * cycles may spill into slots with room left by other requests). A wait
 * beyond bus_queue_max books nothing: the transaction overlaps the queue
 * it would have joined, as when the CPUs' clocks drift apart.
 * Lock-free: the fast path of several CPUs may share a bus.
 */
static uint64_t bus_use(struct cm_model *m, unsigned cpu, uint64_t t,
			uint32_t occ)
{
	struct bus *b = &m->bus[cpu / m->bus_cpus];
	uint64_t first = t / BUS_SLOT_CYCLES, start = UINT64_MAX;
	uint64_t left = occ;

	for (uint64_t e = first; left > 0; e++) {
		uint64_t *slot = &b->slot[e % BUS_SLOTS];
		uint64_t w = __atomic_load_n(slot, __ATOMIC_RELAXED);
		uint64_t used, take;

		do {
			if (w >> BUS_USED_BITS > e) {
				/* Older than the window (struct bus). */
				stat_add(&m->cpu[cpu].st.bus_late, 1);
				return start == UINT64_MAX ? t : start;
			}
			used = w >> BUS_USED_BITS == e ? w & BUS_USED_MASK : 0;
			if (e == first)
				used = max_u64(used, t % BUS_SLOT_CYCLES);
			if (start == UINT64_MAX &&
			    e * BUS_SLOT_CYCLES + used - t > m->bus_queue_max) {
				stat_add(&m->cpu[cpu].st.bus_queued,
					 m->bus_queue_max);
				return t + m->bus_queue_max;
			}
			if (used >= BUS_SLOT_CYCLES)
				break;		/* full: the next slot */
			take = BUS_SLOT_CYCLES - used;
			if (take > left)
				take = left;
		} while (!__atomic_compare_exchange_n(
			slot, &w, e << BUS_USED_BITS | (used + take), true,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED));
		if (used >= BUS_SLOT_CYCLES)
			continue;
		if (start == UINT64_MAX)
			start = e * BUS_SLOT_CYCLES + used;
		left -= take;
	}
	if (start == UINT64_MAX)
		return t;	/* occ 0: nothing to book */
	if (start > t)
		stat_add(&m->cpu[cpu].st.bus_queued, start - t);
	return start;
}

/* A fill buffer of cpu for a transaction asked at *t: *t moves to when
 * one is free. Returns its index, or -1 without fill buffers. */
static int fb_take(struct cm_model *m, unsigned cpu, uint64_t *t)
{
	struct cpu *c = &m->cpu[cpu];
	int k = 0;

	if (!m->p.fill_buffers)
		return -1;
	for (unsigned i = 1; i < m->p.fill_buffers; i++)
		if (c->fb[i] < c->fb[k])
			k = (int)i;
	*t = max_u64(*t, c->fb[k]);
	return k;
}

/* A line read from memory by cpu, asked at clock t: a fill buffer, a
 * burst on the bus, the memory latency. Returns when the data is there. */
static uint64_t mem_read(struct cm_model *m, unsigned cpu, uint64_t t)
{
	int k = fb_take(m, cpu, &t);
	uint64_t done = bus_use(m, cpu, t, m->p.wc_burst) + m->p.mem_latency;

	if (k >= 0)
		m->cpu[cpu].fb[k] = done;
	return done;
}

/* A dirty line goes to memory: a posted burst on cpu's bus, through a
 * fill buffer (so write-backs cannot queue without bound). */
static void mem_write_back(struct cm_model *m, unsigned cpu)
{
	uint64_t t;
	int k;

	if (cpu == NO_CPU)
		return;
	stat_add(&m->cpu[cpu].st.writebacks, 1);
	t = cpu_now(m, cpu);
	k = fb_take(m, cpu, &t);
	t = bus_use(m, cpu, t, m->p.wc_burst) + m->p.wc_burst;
	if (k >= 0)
		m->cpu[cpu].fb[k] = t;
}

/*
 * line moves from another CPU's cache to cpu, asked at t: after the
 * line's previous hand-over, at most a queue of every other CPU later.
 * Returns when it arrives.
 */
static uint64_t hand_over(struct cm_model *m, unsigned cpu, uint64_t line,
			  uint64_t t)
{
	struct line_clock *lc =
		&m->line_clock[(line * HASH_MULTIPLIER) >> (64 - LINE_CLOCK_BITS)];
	uint64_t cap = (uint64_t)(m->ncpus - 1) * m->p.remote_latency;
	uint64_t start = t;

	if (lc->line == line && lc->free > t)
		start = lc->free - t > cap ? t + cap : lc->free;
	if (start > t)
		stat_add(&m->cpu[cpu].st.line_queued, start - t);
	lc->line = line;
	lc->free = start + m->p.remote_latency;
	stat_add(&m->cpu[cpu].st.transfers, 1);
	return lc->free;
}

/* ------------------------------------------------------------------ */
/* Private caches and coherence                                         */

/* The outermost private level: where a CPU's MESI state lives. */
static struct level *outer(struct cpu *c)
{
	return level_present(&c->l2) ? &c->l2 : &c->l1;
}

static enum line_state priv_state(struct cpu *c, uint64_t line)
{
	struct level *o = outer(c);
	long i = level_find(o, line);

	return i < 0 ? ST_I : state_get(o, (size_t)i);
}

static void priv_set_state(struct cpu *c, uint64_t line, enum line_state st)
{
	long i = level_find(&c->l1, line);

	if (i >= 0)
		state_set(&c->l1, (size_t)i, st);
	i = level_find(&c->l2, line);
	if (i >= 0)
		state_set(&c->l2, (size_t)i, st);
}

/* Remove line from cpu's private caches; returns its state there. */
static enum line_state priv_drop(struct cpu *c, uint64_t line)
{
	enum line_state a = level_drop(&c->l1, line);
	enum line_state b = level_drop(&c->l2, line);

	return a > b ? a : b;
}

/* Put line, known absent, into the LLC; a dirty victim is written back
 * (counted on cpu). An inclusive LLC takes its victim out of every
 * private cache; a dirty private copy is written back too. */
static void llc_insert(struct cm_model *m, unsigned cpu, uint64_t line,
		       bool dirty)
{
	uint64_t vline;
	enum line_state vst;
	bool vdirty;

	level_insert(&m->llc, line, dirty ? ST_M : ST_S, &vline, &vst);
	if (vst == ST_I)
		return;
	vdirty = vst == ST_M;
	if (m->p.llc_inclusive)
		for (unsigned d = 0; d < m->ncpus; d++)
			if (priv_drop(&m->cpu[d], vline) == ST_M)
				vdirty = true;
	if (vdirty)
		mem_write_back(m, cpu);
}

/* A dirty line leaves the private caches: it goes to the LLC, dirty
 * (dirty false: a clean fill from memory). */
static void llc_fill(struct cm_model *m, unsigned cpu, uint64_t line,
		     bool dirty)
{
	long i = level_find(&m->llc, line);

	if (i >= 0) {
		if (dirty)
			state_set(&m->llc, (size_t)i, ST_M);
		level_touch(&m->llc, i);
		return;
	}
	llc_insert(m, cpu, line, dirty);
}

/* Put line into cpu's L2 (present, line absent) with state st; the
 * victim leaves L1D too (inclusion) and a dirty one goes to the LLC. */
static void l2_fill(struct cm_model *m, unsigned cpu, uint64_t line,
		    enum line_state st)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t vline;
	enum line_state vst;

	level_insert(&c->l2, line, st, &vline, &vst);
	if (vst != ST_I) {
		enum line_state l1st = level_drop(&c->l1, vline);

		if (vst == ST_M || l1st == ST_M)
			llc_fill(m, cpu, vline, true);
	}
}

/* Put line into cpu's private caches with state st (not present there). */
static void priv_fill(struct cm_model *m, unsigned cpu, uint64_t line,
		      enum line_state st)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t vline;
	enum line_state vst;

	if (level_present(&c->l2)) {
		l2_fill(m, cpu, line, st);
		level_insert(&c->l1, line, st, &vline, &vst);
		/* An L1 victim stays in L2, same state. */
		return;
	}
	level_insert(&c->l1, line, st, &vline, &vst);
	if (vst == ST_M)
		llc_fill(m, cpu, vline, true);
}

/* ------------------------------------------------------------------ */
/* Hardware prefetch                                                    */

static unsigned pf_slot(uint64_t line)
{
	return (unsigned)((line * HASH_MULTIPLIER) >> (64 - PF_RECENT_BITS));
}

/*
 * If line was prefetched by cpu and not yet used: count it useful (and
 * late if it has not arrived by t) and return when it arrives; else 0.
 */
static uint64_t pf_consume(struct cm_model *m, unsigned cpu, uint64_t line,
			   uint64_t t)
{
	struct pf_line *p = &m->cpu[cpu].pf_recent[pf_slot(line)];

	if (p->line != line || p->used)
		return 0;
	p->used = true;
	stat_add(&m->cpu[cpu].st.prefetch_useful, 1);
	if (p->ready > t)
		stat_add(&m->cpu[cpu].st.prefetch_late, 1);
	return p->ready;
}

/*
 * A prefetched line read from memory for cpu, asked at clock t: with an
 * L2 queue (l2_queue), an entry of it, a burst on the bus and the memory
 * latency, leaving the fill buffers to demand misses (Intel's L2
 * streamer tracks its requests in the L2's "superqueue"); without one,
 * as a demand miss (mem_read()). Returns when the data is there.
 */
static uint64_t pf_mem_read(struct cm_model *m, unsigned cpu, uint64_t t)
{
	struct cpu *c = &m->cpu[cpu];
	unsigned k = 0;
	uint64_t done;

	if (!m->p.l2_queue)
		return mem_read(m, cpu, t);
	for (unsigned i = 1; i < m->p.l2_queue; i++)
		if (c->l2q[i] < c->l2q[k])
			k = i;
	t = max_u64(t, c->l2q[k]);
	done = bus_use(m, cpu, t, m->p.wc_burst) + m->p.mem_latency;
	c->l2q[k] = done;
	return done;
}

/*
 * Prefetch line for cpu at clock t into its L2, or the LLC without one:
 * WB lines only, not already held by cpu nor by any other CPU (a
 * prefetch never takes a line from another core), from the LLC or else
 * from memory (pf_mem_read()).
 */
static void pf_issue(struct cm_model *m, unsigned cpu, uint64_t line,
		     uint64_t t)
{
	struct cpu *c = &m->cpu[cpu];
	bool to_l2 = level_present(&c->l2);
	uint64_t ready;
	long i;

	if (line >= (1ull << (CM_MAX_PHYS_BITS - CM_LINE_SHIFT)) ||
	    cm_type_of(m, line << CM_LINE_SHIFT) != CM_WB)
		return;
	for (unsigned d = 0; d < m->ncpus; d++)
		if (priv_state(&m->cpu[d], line) != ST_I)
			return;
	i = level_find(&m->llc, line);
	if (i >= 0 && !to_l2)
		return;
	if (i >= 0) {
		level_touch(&m->llc, i);
		ready = t + m->llc.latency;
	} else {
		ready = pf_mem_read(m, cpu, t);
		llc_insert(m, cpu, line, false);
	}
	if (to_l2)
		l2_fill(m, cpu, line, ST_E);
	stat_add(&c->st.prefetches, 1);
	c->pf_recent[pf_slot(line)] = (struct pf_line){line, ready, false};
}

/* The prefetchers learn from cpu's demand miss of line in L1D at t
 * (load or store, before the line is fetched) and issue what they
 * predict. */
static void prefetch(struct cm_model *m, unsigned cpu, uint64_t line,
		     uint64_t t)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t page = line / LINES_PER_PAGE + 1;
	struct pf_stream *s = NULL, *victim = &c->pf[0];
	int dir;

	if (m->p.prefetch_next)
		pf_issue(m, cpu, line ^ 1, t);
	if (!m->p.prefetch_ahead)
		return;
	for (unsigned k = 0; k < PF_STREAMS; k++) {
		if (c->pf[k].page == page)
			s = &c->pf[k];
		if (c->pf[k].stamp < victim->stamp)
			victim = &c->pf[k];
	}
	if (!s) {
		*victim = (struct pf_stream){page, line, line + 1, 0, 0, 0};
		victim->stamp = ++c->pf_tick;
		return;
	}
	s->stamp = ++c->pf_tick;
	if (line == s->last)
		return;
	dir = line > s->last ? 1 : -1;
	if (dir != s->dir) {
		s->dir = dir;
		s->hits = 0;
	}
	s->hits++;
	s->last = line;
	if (s->hits < PF_TRAIN)
		return;
	/* Never behind the demand stream, never beyond its page. */
	if ((dir > 0 && s->next <= line) || (dir < 0 && s->next >= line))
		s->next = line + (uint64_t)(int64_t)dir;
	while (s->next / LINES_PER_PAGE + 1 == page &&
	       (dir > 0 ? s->next - line : line - s->next) <=
		       m->p.prefetch_ahead) {
		pf_issue(m, cpu, s->next, t);
		s->next += (uint64_t)(int64_t)dir;
	}
}

/* ------------------------------------------------------------------ */
/* Write-back accesses: each returns when its data or ownership is there */

/*
 * Look line up in cpu's private caches, refreshing LRU and filling L1
 * from L2, at clock t. Returns the state (ST_I on a private miss); on a
 * hit *ready gets when the data is there, and the hit/miss counts move.
 * *l1_miss tells whether L1D missed (the prefetchers' cue).
 */
static enum line_state priv_lookup(struct cm_model *m, unsigned cpu,
				   uint64_t line, uint64_t t,
				   uint64_t *ready, bool *l1_miss)
{
	struct cpu *c = &m->cpu[cpu];
	long i = level_find(&c->l1, line);
	uint64_t vline;
	enum line_state vst, st;

	*l1_miss = i < 0;
	if (i >= 0) {
		stat_add(&c->st.l1_hits, 1);
		*ready = t + c->l1.latency;
		/* L2 does not see L1D hits (as in hardware): its LRU order
		 * is that of L1D misses, so it may evict a line L1D uses. */
		level_touch(&c->l1, i);
		return state_get(&c->l1, (size_t)i);
	}
	stat_add(&c->st.l1_misses, 1);
	if (!level_present(&c->l2))
		return ST_I;
	i = level_find(&c->l2, line);
	if (i < 0) {
		stat_add(&c->st.l2_misses, 1);
		return ST_I;
	}
	stat_add(&c->st.l2_hits, 1);
	*ready = max_u64(t + c->l2.latency, pf_consume(m, cpu, line, t));
	level_touch(&c->l2, i);
	st = state_get(&c->l2, (size_t)i);
	level_insert(&c->l1, line, st, &vline, &vst);
	return st;
}

/* Shared part of a private miss at t: from the LLC or from memory.
 * Returns when the data is there. */
static uint64_t fetch_shared(struct cm_model *m, unsigned cpu, uint64_t line,
			     uint64_t t)
{
	struct cpu *c = &m->cpu[cpu];
	long i = level_find(&m->llc, line);

	if (i >= 0) {
		stat_add(&c->st.llc_hits, 1);
		level_touch(&m->llc, i);
		return max_u64(t + m->llc.latency, pf_consume(m, cpu, line, t));
	}
	stat_add(&c->st.llc_misses, 1);
	llc_insert(m, cpu, line, false);	/* just looked up: absent */
	return mem_read(m, cpu, t);
}

/* A WB read that missed cpu's private caches, at t. */
static uint64_t read_miss(struct cm_model *m, unsigned cpu, uint64_t line,
			  uint64_t t)
{
	bool shared = false, transferred = false;
	uint64_t ready;

	for (unsigned d = 0; d < m->ncpus; d++) {
		enum line_state st;

		if (d == cpu)
			continue;
		st = priv_state(&m->cpu[d], line);
		if (st == ST_I)
			continue;
		shared = true;
		if (st == ST_M || st == ST_E) {
			/* The owner supplies the line and keeps a copy. */
			if (st == ST_M)
				llc_fill(m, cpu, line, true);
			priv_set_state(&m->cpu[d], line, ST_S);
			transferred = true;
		}
	}
	if (transferred)
		ready = hand_over(m, cpu, line, t);
	else
		ready = fetch_shared(m, cpu, line, t);
	priv_fill(m, cpu, line, shared ? ST_S : ST_E);
	return ready;
}

/*
 * Invalidate line in every other CPU (a read-for-ownership or an
 * upgrade). Returns true if one of them held it modified (it then
 * supplies the data).
 */
static bool invalidate_others(struct cm_model *m, unsigned cpu, uint64_t line)
{
	bool dirty = false;

	for (unsigned d = 0; d < m->ncpus; d++) {
		enum line_state st;

		if (d == cpu)
			continue;
		st = priv_drop(&m->cpu[d], line);
		if (st == ST_I)
			continue;
		stat_add(&m->cpu[cpu].st.invalidations, 1);
		if (st == ST_M)
			dirty = true;
	}
	return dirty;
}

/* A WB write (or locked read) at t: the line ends up M in cpu's caches.
 * Returns when cpu owns it. The prefetchers learn from an L1D miss after
 * the demand went out (it is first on the bus). */
static uint64_t write_back_access(struct cm_model *m, unsigned cpu,
				  uint64_t line, uint64_t t)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t ready = t;
	bool l1_miss;
	enum line_state st = priv_lookup(m, cpu, line, t, &ready, &l1_miss);

	switch (st) {
	case ST_M:
		break;
	case ST_E:
		priv_set_state(c, line, ST_M);
		break;
	case ST_S:
		/* Upgrade: ask the LLC to invalidate the other copies. */
		invalidate_others(m, cpu, line);
		priv_set_state(c, line, ST_M);
		ready += m->llc.latency;
		break;
	case ST_I:
		if (invalidate_others(m, cpu, line))
			ready = hand_over(m, cpu, line, t);
		else
			ready = fetch_shared(m, cpu, line, t);
		priv_fill(m, cpu, line, ST_M);
		break;
	}
	if (l1_miss)
		prefetch(m, cpu, line, t);
	return ready;
}

/*
 * A WB read at t; returns when its data is there. A load that hits L1D
 * in the line of cpu's previous load is served with it: an out-of-order
 * core issues independent loads back to back (two a cycle from Sandy
 * Bridge on, one on the Core microarchitecture) and overlaps their hit
 * latencies. The model sees no dependences; a pointer chase, whose loads
 * depend on each other, touches a new line with every load and keeps
 * its full latency (model.h, invariant 5).
 */
static uint64_t write_back_read(struct cm_model *m, unsigned cpu,
				uint64_t line, uint64_t t)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t ready = t;
	bool l1_miss;

	if (priv_lookup(m, cpu, line, t, &ready, &l1_miss) == ST_I)
		ready = read_miss(m, cpu, line, t);
	else if (!l1_miss && c->last_load == line + 1)
		ready = t;
	c->last_load = line + 1;
	if (l1_miss)
		prefetch(m, cpu, line, t);
	return ready;
}

/*
 * Remove line from every cache; a dirty copy is written to memory,
 * counted on cpu (not counted when cpu is NO_CPU).
 */
static void evict_everywhere(struct cm_model *m, unsigned cpu, uint64_t line)
{
	bool dirty = false;

	for (unsigned d = 0; d < m->ncpus; d++)
		if (priv_drop(&m->cpu[d], line) == ST_M)
			dirty = true;
	if (level_drop(&m->llc, line) == ST_M)
		dirty = true;
	if (dirty)
		mem_write_back(m, cpu);
}

/* ------------------------------------------------------------------ */
/* The store buffer                                                     */

/* A store whose line cpu owns at clock ready enters the store buffer;
 * if it is full, cpu stalls until its oldest store is done. */
static void sb_push(struct cm_model *m, unsigned cpu, uint64_t ready)
{
	struct cpu *c = &m->cpu[cpu];
	unsigned cap = m->p.store_buffer;

	/* Stores already done leave the buffer first. */
	while (c->sb_n && c->sb[c->sb_head] <= cpu_now(m, cpu)) {
		c->sb_head = (c->sb_head + 1) % cap;
		c->sb_n--;
	}
	if (c->sb_n == cap) {
		uint64_t before = cpu_now(m, cpu);

		stall_until(m, cpu, c->sb[c->sb_head]);
		stat_add(&c->st.store_stalls, cpu_now(m, cpu) - before);
		c->sb_head = (c->sb_head + 1) % cap;
		c->sb_n--;
	}
	c->sb[(c->sb_head + c->sb_n) % cap] = ready;
	c->sb_n++;
	c->sb_last = max_u64(c->sb_last, ready);
}

/* ------------------------------------------------------------------ */
/* Write combining                                                      */

/*
 * Buffer b of cpu leaves: a full one as one burst, a partial one as one
 * 8-byte transaction per chunk holding data, each holding the bus for
 * wc_chunk. Posted: cpu goes on (without fill buffers it waits), the
 * buffer is busy until its last transaction is done.
 */
static void wc_flush(struct cm_model *m, unsigned cpu, struct wc_buffer *b,
		     enum cm_wc_cause why)
{
	struct cpu *c = &m->cpu[cpu];
	struct cm_stats *s = &c->st;
	uint64_t t;
	int k;

	if (!b->mask)
		return;
	t = cpu_now(m, cpu);
	k = fb_take(m, cpu, &t);
	if (b->mask == WC_FULL_MASK) {
		stat_add(&s->wc_bursts, 1);
		t = bus_use(m, cpu, t, m->p.wc_burst) + m->p.wc_burst;
	} else {
		for (unsigned o = 0; o < CM_LINE_SIZE; o += WC_CHUNK_BYTES)
			if ((b->mask >> o) & 0xff)
				t = bus_use(m, cpu, t, m->p.wc_chunk) +
				    m->p.wc_chunk;
		stat_add(&s->wc_partials, 1);
		stat_add(&s->wc_partial_by[why], 1);
	}
	if (k >= 0)
		c->fb[k] = t;
	b->done = t;
	c->wc_last = max_u64(c->wc_last, t);
	if (!m->p.fill_buffers)
		stall_until(m, cpu, t);
	b->mask = 0;
}

static void wc_drain(struct cm_model *m, unsigned cpu, enum cm_wc_cause why)
{
	for (unsigned b = 0; b < m->p.wc_buffers; b++)
		wc_flush(m, cpu, &m->cpu[cpu].wc[b], why);
}

static struct wc_buffer *wc_find(struct cm_model *m, unsigned cpu,
				 uint64_t line)
{
	for (unsigned b = 0; b < m->p.wc_buffers; b++) {
		struct wc_buffer *w = &m->cpu[cpu].wc[b];

		if (w->mask && w->line == line)
			return w;
	}
	return NULL;
}

/* Bytes [off, off + n) of a line as a mask; off + n <= 64. */
static uint64_t byte_mask(unsigned off, unsigned n)
{
	uint64_t bits = n >= CM_LINE_SIZE ? WC_FULL_MASK : (1ull << n) - 1;

	return bits << off;
}

/* Bytes [off, off + n) of w's line are written; a full buffer goes out
 * as one burst. Returns w, or NULL if it went out. */
static struct wc_buffer *wc_merge(struct cm_model *m, unsigned cpu,
				  struct wc_buffer *w, unsigned off,
				  unsigned n)
{
	w->mask |= byte_mask(off, n);
	w->stamp = ++m->cpu[cpu].wc_tick;
	if (w->mask != WC_FULL_MASK)
		return w;
	wc_flush(m, cpu, w, CM_WC_EVICT);	/* full: a burst */
	return NULL;
}

/* A WC or non-temporal store into cpu's WC buffers; returns the buffer
 * that holds it, or NULL if that buffer went out full. A new line takes
 * a free buffer (the earliest done), else evicts the least recently
 * written one; cpu waits until the buffer it takes is done. */
static struct wc_buffer *wc_store(struct cm_model *m, unsigned cpu,
				  uint64_t line, unsigned off, unsigned n)
{
	struct wc_buffer *w = wc_find(m, cpu, line);

	if (!w) {
		struct wc_buffer *all = m->cpu[cpu].wc;
		struct wc_buffer *lru = &all[0];

		for (unsigned b = 0; b < m->p.wc_buffers; b++) {
			if (!all[b].mask && (!w || all[b].done < w->done))
				w = &all[b];
			if (all[b].stamp < lru->stamp)
				lru = &all[b];
		}
		if (!w) {
			w = lru;
			wc_flush(m, cpu, w, CM_WC_EVICT);
		}
		stall_until(m, cpu, w->done);
		w->line = line;
	}
	return wc_merge(m, cpu, w, off, n);
}

/* ------------------------------------------------------------------ */
/* Accesses                                                             */

/*
 * One uncached transaction (UC, UC- or device; a WC load; a WT or WP
 * store), strongly ordered: after cpu's buffered and write-combined
 * writes, then one 8-byte transaction on the bus; cpu waits for a load's
 * data or for the bus to take a store (uc_load, uc_store cycles after
 * the transaction starts).
 */
static void uncached(struct cm_model *m, unsigned cpu, bool store)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t t = max_u64(cpu_now(m, cpu), max_u64(c->wc_last, c->sb_last));

	stat_add(&c->st.uncached, 1);
	t = bus_use(m, cpu, t, m->p.wc_chunk);
	stall_until(m, cpu, t + (store ? m->p.uc_store : m->p.uc_load));
}

/*
 * A WB store that will own its line at ready. With a store buffer the
 * store retires at once ("store buffers improve performance by allowing
 * the processor to continue executing instructions without having to
 * wait until a write to memory and/or cache is complete", Intel's
 * Optimization Reference Manual): a store whose line is not there yet
 * waits in the buffer for its ownership; one that hits L1D is written
 * from the buffer's head, which this model takes as immediate (it never
 * holds an entry, so a fence does not wait for it). Without a store
 * buffer the CPU waits for ownership or for the L1D write.
 */
static void wb_store_done(struct cm_model *m, unsigned cpu, uint64_t now,
			  uint64_t ready)
{
	if (!m->p.store_buffer) {
		stall_until(m, cpu, ready);
		return;
	}
	if (ready > now + m->cpu[cpu].l1.latency)
		sb_push(m, cpu, ready);
}

/* One access within one line. */
static void access_line(struct cm_model *m, unsigned cpu, uint64_t pa,
			unsigned n, unsigned flags)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t line = pa >> CM_LINE_SHIFT;
	unsigned off = pa & (CM_LINE_SIZE - 1);
	enum cm_memtype t = flags & CM_IO ? CM_UC : cm_type_of(m, pa);
	bool store = flags & CM_STORE;
	struct wc_buffer *w;
	uint64_t now;

	if (flags & CM_LOCKED) {
		/* A locked RMW drains the WC buffers and the store buffer,
		 * and owns the line. */
		wc_drain(m, cpu, CM_WC_LOCKED);
		if (!store) {
			stall_until(m, cpu, max_u64(c->wc_last, c->sb_last));
			stat_add(&c->st.locked, 1);
			/* locked includes the RMW's own two L1D hits. */
			if (m->p.locked > 2 * c->l1.latency)
				stat_add(&c->st.mem_cycles,
					 m->p.locked - 2 * c->l1.latency);
		}
		if (t == CM_WB) {
			now = cpu_now(m, cpu);
			stall_until(m, cpu, write_back_access(m, cpu, line, now));
			return;
		}
	}
	if (store && (flags & CM_NT) && t != CM_UC && t != CM_UC_MINUS) {
		/* Non-temporal: a WC store that also evicts the line. */
		stat_add(&c->st.nt_stores, 1);
		evict_everywhere(m, cpu, line);
		w = wc_store(m, cpu, line, off, n);
		if (w)
			w->evicted_at = __atomic_load_n(&m->fills,
							__ATOMIC_RELAXED);
		return;
	}
	now = cpu_now(m, cpu);
	switch (t) {
	case CM_WB:
		if (store)
			wb_store_done(m, cpu, now,
				      write_back_access(m, cpu, line, now));
		else
			stall_until(m, cpu, write_back_read(m, cpu, line, now));
		return;
	case CM_WT:
	case CM_WP:
		if (!store) {
			stall_until(m, cpu, write_back_read(m, cpu, line, now));
			return;
		}
		/* The write goes to memory. WT keeps (clean) copies up to
		 * date in this CPU; WP invalidates every copy. */
		if (t == CM_WP || priv_state(c, line) == ST_I)
			evict_everywhere(m, cpu, line);
		else
			invalidate_others(m, cpu, line);
		uncached(m, cpu, true);
		return;
	case CM_WC:
		if (store) {
			wc_store(m, cpu, line, off, n);
			return;
		}
		/* No store forwarding from a WC buffer: flush it first. */
		w = wc_find(m, cpu, line);
		if (w)
			wc_flush(m, cpu, w, CM_WC_UNCACHED);
		uncached(m, cpu, false);
		return;
	case CM_UC:
	case CM_UC_MINUS:
	default:
		/* Strongly ordered: earlier WC stores go out first. */
		wc_drain(m, cpu, CM_WC_UNCACHED);
		uncached(m, cpu, store);
		return;
	}
}

void cm_access(struct cm_model *m, unsigned cpu, uint64_t pa, unsigned size,
	       unsigned flags)
{
	struct cm_stats *s = &m->cpu[cpu].st;

	if (flags & CM_STORE)
		stat_add(&s->stores, 1);
	else
		stat_add(&s->loads, 1);
	while (size > 0) {
		unsigned off = pa & (CM_LINE_SIZE - 1);
		unsigned n = CM_LINE_SIZE - off;

		if (n > size)
			n = size;
		access_line(m, cpu, pa, n, flags);
		pa += n;
		size -= n;
	}
}

/* The type of pa's page for cm_access_fast(), remembered per CPU:
 * consecutive accesses often fall on one page, so it is looked up again
 * only for another page or after a type change. */
static enum cm_memtype fast_page_type(struct cm_model *m, struct cpu *c,
				      uint64_t pa)
{
	uint64_t page = pa >> CM_PAGE_SHIFT;
	uint64_t gen = __atomic_load_n(&m->types_gen, __ATOMIC_ACQUIRE);

	if (c->last_page != page + 1 || c->last_types_gen != gen) {
		c->last_type = cm_type_of(m, pa);
		c->last_page = page + 1;
		c->last_types_gen = gen;
	}
	return c->last_type;
}

/* A WB access that hits cpu's L1D in a state needing no coherence
 * action: a load in any valid state, a store in M. */
static bool fast_l1_hit(struct cm_model *m, unsigned cpu, uint64_t line,
			bool store)
{
	struct cpu *c = &m->cpu[cpu];
	struct way_hint *h;
	enum line_state st;
	long i;

	/* The way a line was found in is tried before the set. Only this
	 * CPU puts lines into its L1D, so if the way still names the line
	 * it holds it; whether validly is the state's to say (snoops change
	 * it). */
	h = &c->hint[(line * HASH_MULTIPLIER) >> (64 - WAY_HINT_BITS)];
	i = (long)h->i;
	if (h->line != line || c->l1.line[i] != line ||
	    state_get(&c->l1, (size_t)i) == ST_I) {
		i = level_find(&c->l1, line);
		if (i < 0)
			return false;
		h->line = line;
		h->i = (size_t)i;
	}
	st = state_get(&c->l1, (size_t)i);
	/* E -> M is left to cm_access(), which changes L1D and L2 together. */
	if (store && st != ST_M)
		return false;
	stat_add(store ? &c->st.stores : &c->st.loads, 1);
	stat_add(&c->st.l1_hits, 1);
	/* A load waits for its data unless it is served with the previous
	 * load of its line (write_back_read()); a store retires into the
	 * store buffer without waiting for the L1D write (wb_store_done()). */
	if (store ? !m->p.store_buffer : c->last_load != line + 1)
		stat_add(&c->st.mem_cycles, c->l1.latency);
	if (!store)
		c->last_load = line + 1;
	level_touch(&c->l1, i);
	return true;
}

/* A non-temporal store to a WB line that cpu's open WC buffer took from
 * an earlier one, with no fill anywhere since that one evicted the line:
 * the eviction cm_access() would do finds nothing, so it is the merge. */
static bool fast_nt_merge(struct cm_model *m, unsigned cpu, uint64_t line,
			  unsigned off, unsigned n)
{
	struct cpu *c = &m->cpu[cpu];
	struct wc_buffer *w = wc_find(m, cpu, line);

	if (!w || w->evicted_at != __atomic_load_n(&m->fills, __ATOMIC_RELAXED))
		return false;
	stat_add(&c->st.stores, 1);
	stat_add(&c->st.nt_stores, 1);
	wc_merge(m, cpu, w, off, n);
	return true;
}

/*
 * The accesses cm_access() handles with cpu's own state only, so they
 * need no lock: a plain (not locked) access within one line that is
 *  - WB and hits cpu's L1D in a state that needs no coherence action
 *    (fast_l1_hit()), or a non-temporal store that merges into a WC
 *    buffer (fast_nt_merge());
 *  - to a WC page: no cache ever holds its lines (model.h, invariant 6),
 *    so a store only goes into cpu's WC buffers and a load is uncached
 *    after flushing its line's buffer;
 *  - to a UC or UC- page or a device: cpu's WC buffers drain and the
 *    access is uncached.
 * Each is counted exactly as cm_access() counts it; besides cpu's own
 * state, only cpu's bus timeline is touched (atomically, bus_use()).
 * Anything else (a miss, E -> M, WT, WP, a first non-temporal store,
 * locked, crossing a line) is left alone.
 */
bool cm_access_fast(struct cm_model *m, unsigned cpu, uint64_t pa,
		    unsigned size, unsigned flags)
{
	struct cpu *c = &m->cpu[cpu];
	uint64_t line = pa >> CM_LINE_SHIFT;
	unsigned off = pa & (CM_LINE_SIZE - 1);
	bool store = flags & CM_STORE;
	struct wc_buffer *w;

	if ((flags & CM_LOCKED) || size == 0 || off + size > CM_LINE_SIZE)
		return false;
	switch (flags & CM_IO ? CM_UC : fast_page_type(m, c, pa)) {
	case CM_WB:
		if (store && (flags & CM_NT))
			return fast_nt_merge(m, cpu, line, off, size);
		return fast_l1_hit(m, cpu, line, store);
	case CM_WC:
		if (store) {
			stat_add(&c->st.stores, 1);
			if (flags & CM_NT)
				stat_add(&c->st.nt_stores, 1);
			wc_store(m, cpu, line, off, size);
			return true;
		}
		stat_add(&c->st.loads, 1);
		w = wc_find(m, cpu, line);
		if (w)
			wc_flush(m, cpu, w, CM_WC_UNCACHED);
		uncached(m, cpu, false);
		return true;
	case CM_UC:
	case CM_UC_MINUS:
		stat_add(store ? &c->st.stores : &c->st.loads, 1);
		wc_drain(m, cpu, CM_WC_UNCACHED);
		uncached(m, cpu, store);
		return true;
	default:
		return false;
	}
}

void cm_fence(struct cm_model *m, unsigned cpu, enum cm_fence_kind kind)
{
	struct cpu *c = &m->cpu[cpu];
	uint32_t cost = kind == CM_SFENCE && m->p.sfence ? m->p.sfence
							 : m->p.fence;

	stat_add(&c->st.fences, 1);
	wc_drain(m, cpu, CM_WC_FENCE);
	stall_until(m, cpu, kind == CM_MFENCE ? max_u64(c->wc_last, c->sb_last)
					      : c->wc_last);
	stat_add(&c->st.mem_cycles, cost);
}

void cm_clflush(struct cm_model *m, unsigned cpu, uint64_t pa)
{
	uint64_t line = pa >> CM_LINE_SHIFT;
	struct cm_stats *s = &m->cpu[cpu].st;
	uint64_t before = s->writebacks;
	struct wc_buffer *w = wc_find(m, cpu, line);

	if (w)
		wc_flush(m, cpu, w, CM_WC_EVICT);
	stat_add(&s->clflushes, 1);
	evict_everywhere(m, cpu, line);
	stat_add(&s->mem_cycles, m->p.clflush);
	if (s->writebacks != before)
		stat_add(&s->mem_cycles, m->p.mem_latency);
}

void cm_clflush_unseen(struct cm_model *m, unsigned cpu)
{
	stat_add(&m->cpu[cpu].st.clflushes, 1);
	stat_add(&m->cpu[cpu].st.mem_cycles, m->p.clflush);
}

/* Lines all caches of the model hold at most. */
static uint64_t cached_lines_max(const struct cm_model *m)
{
	uint64_t n = (uint64_t)m->llc.sets * m->llc.ways;

	for (unsigned c = 0; c < m->ncpus; c++)
		n += (uint64_t)m->cpu[c].l1.sets * m->cpu[c].l1.ways +
		     (uint64_t)m->cpu[c].l2.sets * m->cpu[c].l2.ways;
	return n;
}

void cm_clflush_lines(struct cm_model *m, unsigned cpu, uint64_t pa,
		      uint64_t len)
{
	struct cm_stats *s = &m->cpu[cpu].st;
	uint64_t first = pa >> CM_LINE_SHIFT, last, before = s->writebacks;

	if (len == 0)
		return;
	last = pa + len - 1 < pa ? UINT64_MAX >> CM_LINE_SHIFT
				 : (pa + len - 1) >> CM_LINE_SHIFT;
	if (last - first < cached_lines_max(m)) {
		for (uint64_t line = first; line <= last; line++) {
			struct wc_buffer *w = wc_find(m, cpu, line);

			if (w)
				wc_flush(m, cpu, w, CM_WC_EVICT);
			evict_everywhere(m, cpu, line);
		}
	} else {
		evict_range(m, cpu, first, last);
	}
	stat_add(&s->mem_cycles, (s->writebacks - before) * m->p.mem_latency);
}


void cm_instructions(struct cm_model *m, unsigned cpu, uint64_t n)
{
	stat_add(&m->cpu[cpu].st.insns, n);
}

void cm_set_skip(struct cm_model *m, unsigned cpu, uint64_t skip)
{
	struct cpu *c = &m->cpu[cpu];

	if (skip > __atomic_load_n(&c->skip, __ATOMIC_RELAXED))
		__atomic_store_n(&c->skip, skip, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* Read-out                                                             */

const struct cm_stats *cm_stats(const struct cm_model *m, unsigned cpu)
{
	return &m->cpu[cpu].st;
}

void cm_stats_skip(struct cm_stats *base, const struct cm_stats *from,
		   const struct cm_stats *to)
{
	/* struct cm_stats is uint64_t counters only. */
	uint64_t *b = (uint64_t *)base;
	const uint64_t *f = (const uint64_t *)from, *t = (const uint64_t *)to;

	for (size_t i = 0; i < sizeof(*base) / sizeof(uint64_t); i++)
		b[i] += t[i] - f[i];
}

void cm_stats_read(const struct cm_model *m, unsigned cpu,
		   struct cm_stats *out)
{
	const uint64_t *from = (const uint64_t *)&m->cpu[cpu].st;
	uint64_t *to = (uint64_t *)out;

	_Static_assert(sizeof(*out) % sizeof(uint64_t) == 0,
		       "struct cm_stats holds only uint64_t counters");
	for (size_t k = 0; k < sizeof(*out) / sizeof(uint64_t); k++)
		to[k] = __atomic_load_n(&from[k], __ATOMIC_RELAXED);
}

uint64_t cm_cycles(const struct cm_model *m, const struct cm_stats *s)
{
	return s->insns * m->p.cpi_x100 / 100 + s->mem_cycles;
}

const struct cm_profile *cm_profile(const struct cm_model *m)
{
	return &m->p;
}

unsigned cm_ncpus(const struct cm_model *m)
{
	return m->ncpus;
}

size_t cm_state_bytes(const struct cm_model *m)
{
	return m->bytes;
}
