/*
 * What the parts of the cache-model engine share: the state of one level,
 * of a CPU and of the model, the constants that size them, the small
 * helpers every part inlines (counters, clocks, a level's ways), and the
 * functions one part offers the others, each with its contract. Private
 * to cachemodel/model_*.c; the engine's interface and its invariants are
 * cachemodel/model.h.
 *
 * The parts, one idea each:
 *   model_create.c     a profile checked, a model made and destroyed
 *   model_access.c     the accesses: the dispatch by memory type, the
 *                      lock-free fast path, fences, clflush
 *   model_level.c      one level: a set-associative array with LRU
 *   model_memtype.c    memory types per page, and evicting a range
 *   model_time.c       time: the bus, fill buffers, memory, hand-overs
 *   model_coherence.c  private caches, the LLC, MESI between the CPUs,
 *                      and the write-back accesses built on them
 *   model_prefetch.c   the hardware prefetchers
 *   model_buffers.c    the store buffer and the write-combining buffers
 *   model_readout.c    the counters and figures read out
 */
#ifndef CACHEMODEL_MODEL_INTERNAL_H
#define CACHEMODEL_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cachemodel/hash.h"
#include "cachemodel/model.h"

#define PAGES_PER_CHUNK_SHIFT 18	/* one type chunk: 2^18 pages = 1 GiB */
#define TYPE_CHUNKS (1u << (CM_MAX_PHYS_BITS - CM_PAGE_SHIFT - PAGES_PER_CHUNK_SHIFT))
/* evict_everywhere() for the model itself: the write-back counts on no CPU. */
#define NO_CPU CM_MAX_CPUS
/* No line number (pa >> 6 never reaches it). */
#define NO_LINE UINT64_MAX
#define WAY_HINT_BITS 6
#define WAY_HINTS (1u << WAY_HINT_BITS)
/* A host cache line: per-CPU state is aligned to it. */
#define HOST_LINE_BYTES 64
/* Streams the prefetcher follows per CPU, and prefetched lines it
 * remembers (to count useful and late ones), hashed by line number: a
 * line whose slot a later prefetch took is no longer counted. */
#define PF_STREAMS 8
#define PF_RECENT_BITS 6
#define PF_RECENT (1u << PF_RECENT_BITS)
/* When a CPU last wrote a line (model.h, invariant 8), by line number
 * hashed into WRITE_TIMES slots per CPU: one word each, so another CPU
 * reads it whole: the time below WRITE_TIME_BITS (clocks wrap after 2^44
 * cycles, hours of modelled time; a wrapped time reads as older: no
 * wait), a tag of the line above (another line's time is not taken). */
#define WRITE_TIME_INDEX_BITS 10
#define WRITE_TIMES (1u << WRITE_TIME_INDEX_BITS)
#define WRITE_TIME_BITS 44
#define WRITE_TIME_MASK ((1ull << WRITE_TIME_BITS) - 1)
#define WRITE_TAG_BITS (64 - WRITE_TIME_BITS)
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
 * line[], tag[] and stamp[] of a private level are written only by its
 * own CPU, tick too; state[] of a private level is also written by other
 * CPUs (snoops), so it is read and written with relaxed atomics
 * (state_get, state_set). Stamps are compared only within one set of one
 * level, so a tick per level gives the same LRU order as one global tick.
 *
 * tag[] is a filter in front of line[], so that a lookup reads a few
 * words, not every way's line number: set s has tag_words words from
 * tag[s * tag_words], way w in 16-bit lane w % TAG_LANES of word
 * w / TAG_LANES (lanes past the last way hold 0). Invariant: each way's
 * lane holds the tag of its line[] (level_tag(), below); so a line
 * whose tag is in no lane of its set is not in the set, and a lane
 * that matches is checked against line[].
 */
struct level {
	uint32_t sets, ways, latency;
	uint32_t tag_words;	/* words of tag[] per set */
	uint64_t set_mask;	/* sets - 1 when sets is a power of two, else 0 */
	uint64_t tick;		/* LRU clock of this level */
	uint64_t *fills;	/* the model's fills counter */
	uint64_t *line;		/* line number (pa >> 6) */
	uint64_t *tag;		/* TAG_LANES tags a word, see above */
	uint8_t *state;		/* enum line_state; LLC uses S (clean), M */
	uint64_t *stamp;	/* LRU: last touch, 0 = never */
};

/* struct level's tag[]: 16-bit lanes of a 64-bit word. */
#define TAG_BITS 16
#define TAG_LANES (64 / TAG_BITS)
#define TAG_LANE_MASK ((1ull << TAG_BITS) - 1)

/* The tag of line in struct level's tag[]: its top bits after Fibonacci
 * hashing, so lines of one set (equal in their low bits) differ in it. */
static inline uint64_t level_tag(uint64_t line)
{
	return fib_hash(line, TAG_BITS);
}

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
 * BUS_SLOTS: the window, 16384 x 16 = 262144 cycles, covers how far
 * apart the requests of paced CPUs can be: mostly a pacing quantum
 * (1000 cycles by default, PACE_DEFAULT_QUANTUM); at most a pause-waiter
 * that resumes with its clock kept after the others ran to its longest
 * deadline (cachemodel/pace.h, invariant 7, c and d: PACE_PAUSE_MAX_QUANTA
 * quanta) and a quantum past it, 65,000 cycles at the default quantum
 * and 130,000 at sync=2000; plus the longest wait
 * (bus_queue_max, 288 to 384 cycles) and a CPU's own requests booked
 * ahead of its clock (a fill buffer's memory latency, a partial WC
 * flush's chunks): twice over. (2048 slots and 16384 took the same
 * host time within its noise.) A request older than the window finds its slot holding a
 * later epoch: it is not queued (its history is gone) and is counted
 * (bus_late).
 */
#define BUS_SLOT_CYCLES 16
#define BUS_SLOTS 16384
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
	uint64_t last_end;	/* pa + size of the last cached load
				 * (NO_LINE: none; no pa is that large) */
	/* CPUs whose private copies this CPU's accesses invalidated since
	 * the last cm_take_invalidated() (a bit each; under the lock). */
	uint64_t invalidated;
	/* Timing (all CPU clocks, see cpu_now()): */
	uint64_t fb[CM_MAX_FILL_BUFFERS];	/* when each fill buffer frees */
	uint64_t l2q[CM_MAX_L2_QUEUE];	/* when each L2 queue entry frees */
	uint64_t fill_free;	/* when the L1D's fill port is next free */
	uint64_t sb[CM_MAX_STORE_BUFFER];	/* ring: buffered stores' */
	unsigned sb_head, sb_n;			/* ownership times */
	uint64_t sb_last;	/* latest ownership time in the store buffer */
	uint64_t wc_last;	/* latest WC flush completion */
	uint64_t skip;		/* cycles slept through (cm_set_skip); atomic:
				 * cpu_now() of another CPU reads it */
	/* cm_restart_clock(): the instructions then, and the clock then
	 * less the stalls and skip then (atomic, as skip). */
	uint64_t origin_insns, origin_cycles;
	struct pf_stream pf[PF_STREAMS];
	uint64_t pf_tick;
	struct pf_line pf_recent[PF_RECENT];	/* by pf_slot() */
	/* When this CPU last wrote a line (write_time_note()); written by
	 * its own thread, read by others taking the line: atomics. */
	uint64_t write_time[WRITE_TIMES];
	struct cm_stats st;
} __attribute__((aligned(HOST_LINE_BYTES)));

/* One die's LLC (model.h, invariant 4a), in host lines of its own: every
 * access to it writes its LRU clock. */
struct llc_die {
	struct level lv;
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
	/* The LLCs: CPU c uses llc[c / llc_cpus] (nllc of them; one
	 * without the profile's llc_cpus; model.h, invariant 4a). */
	struct llc_die *llc;
	unsigned nllc, llc_cpus;
	/* An inclusive LLC's sharer bits, one word per way (llc[0]'s index;
	 * an inclusive LLC is always the only one): bit d set if CPU d may
	 * hold the way's line privately (model.h, invariant 4); NULL for a
	 * non-inclusive LLC, which says nothing about the private caches.
	 * Under the caller's lock. */
	uint64_t *llc_sharers;
	/* Buses: CPU c uses bus[c / bus_cpus]; read and written with
	 * atomics (the fast path's WC flushes and UC accesses use them). */
	unsigned bus_cpus;
	uint64_t bus_queue_max;	/* cap of a bus wait (model.h, inv. 5) */
	struct bus *bus;	/* ncpus / bus_cpus of them, rounded up */
	/* How far a CPU may wait for another's write (cm_set_causality());
	 * 0: no causality waits. */
	uint64_t causal_window;
	/* Slow path only (under the caller's lock). */
	struct line_clock line_clock[LINE_CLOCKS];
};

/*
 * *v += n for a counter of struct cm_stats. Every counter is written by
 * its own CPU's thread only (or under fast_stop, see cachemodel/plugin.c)
 * and read by others (region snapshots) with atomic loads, so every
 * write is an atomic store; on x86 both are plain moves.
 */
static inline void stat_add(uint64_t *v, uint64_t n)
{
	__atomic_store_n(v, __atomic_load_n(v, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* cpu's die: the index of its LLC (model.h, invariant 4a). */
static inline unsigned die_of(const struct cm_model *m, unsigned cpu)
{
	return cpu / m->llc_cpus;
}

/* The LLC of cpu's die. */
static inline struct level *llc_of(struct cm_model *m, unsigned cpu)
{
	return &m->llc[die_of(m, cpu)].lv;
}

/* cpu's clock: instructions x CPI plus the cycles it stalled, plus the
 * cycles it slept through (model.h, invariant 5). */
static inline uint64_t cpu_now(const struct cm_model *m, unsigned cpu)
{
	const struct cpu *c = &m->cpu[cpu];

	return (c->st.insns -
		__atomic_load_n(&c->origin_insns, __ATOMIC_RELAXED)) *
		       m->p.cpi_x100 / 100 +
	       c->st.mem_cycles + __atomic_load_n(&c->skip, __ATOMIC_RELAXED) +
	       __atomic_load_n(&c->origin_cycles, __ATOMIC_RELAXED);
}

/* The line of cpu c's last cached load; beyond every physical line
 * when there was none (last_end NO_LINE). */
static inline uint64_t last_load_line(const struct cpu *c)
{
	return (c->last_end - 1) >> CM_LINE_SHIFT;
}

/*
 * Whether a cached load of line at pa is independent of c's previous
 * load, so the CPU does not wait for its data (model.h, invariant 5):
 * it is in the previous load's line (an out-of-order core issues such
 * loads back to back), or, in a profile with fill buffers (which hold
 * its miss instead of the CPU), it starts where the previous load ended:
 * a sweep, which reads every byte of a line in turn, as copies and
 * scans do; a pointer chase reads a word or two of each line it visits
 * and never continues its last load. The model sees no dependences;
 * this is its sign of their absence.
 */
static inline bool load_independent(const struct cm_model *m,
				    const struct cpu *c, uint64_t line,
				    uint64_t pa)
{
	return last_load_line(c) == line ||
	       (m->p.fill_buffers && c->last_end == pa);
}

static inline bool level_present(const struct level *l)
{
	return l->sets != 0;
}

static inline enum line_state state_get(const struct level *l, size_t i)
{
	return (enum line_state)__atomic_load_n(&l->state[i], __ATOMIC_RELAXED);
}

static inline void state_set(struct level *l, size_t i, enum line_state st)
{
	__atomic_store_n(&l->state[i], (uint8_t)st, __ATOMIC_RELAXED);
}

static inline void level_touch(struct level *l, long i)
{
	l->stamp[i] = ++l->tick;
}

/* cachemodel/model_level.c: one level. */

/* Make l empty with c's geometry (c->size 0: l absent), its arrays
 * counted in m->bytes, its fills counted in m->fills. Returns false when
 * out of memory (level_free() still frees what was allocated). */
bool level_init(struct cm_model *m, struct level *l,
		const struct cm_level_cfg *c);

/* Free l's arrays (l made by level_init(), or zeroed). */
void level_free(struct level *l);

/* Index of line in l, or -1. */
long level_find(const struct level *l, uint64_t line);

/*
 * Put line (not present) into l with state st, evicting the LRU way if
 * the set is full; the victim's line and state go to *vline, *vstate
 * (ST_I when a free way was used). Returns the index of the way used.
 */
size_t level_insert(struct level *l, uint64_t line,
		    enum line_state st, uint64_t *vline,
		    enum line_state *vstate);

/* Remove line from l; returns the state it had (ST_I if absent). */
enum line_state level_drop(struct level *l, uint64_t line);

/* cachemodel/model_memtype.c: memory types. */

/*
 * Evict every cached line and WC buffer of [first, last] (line numbers).
 * Write-backs are counted on cpu (NO_CPU: nobody's, as for a type change).
 */
void evict_range(struct cm_model *m, unsigned cpu, uint64_t first,
		 uint64_t last);

/* cachemodel/model_time.c: time (all at CPU clocks, cpu_now()). */

/* cpu stalls until clock t (nothing if t is past). */
void stall_until(struct cm_model *m, unsigned cpu, uint64_t t);

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
uint64_t bus_use(struct cm_model *m, unsigned cpu, uint64_t t,
		 uint32_t occ);

/* A fill buffer of cpu for a transaction asked at *t: *t moves to when
 * one is free. Returns its index, or -1 without fill buffers. */
int fb_take(struct cm_model *m, unsigned cpu, uint64_t *t);

/* A line read from memory by cpu, asked at clock t: a fill buffer, a
 * burst on the bus, the memory latency. Returns when the data is there;
 * *granted (unless NULL) gets when the request had its fill buffer. */
uint64_t mem_read(struct cm_model *m, unsigned cpu, uint64_t t,
		  uint64_t *granted);

/*
 * An L1D miss of cpu asked at clock t and served by a cache (L2 or the
 * LLC) of latency lat, or by a prefetch of the line arriving at pf (0:
 * none). A load's miss holds a fill buffer until its data is there and
 * the L1D's fill port for l1_fill cycles, so several such misses
 * overlap, bounded by the fill buffers and the fill rate; *granted gets
 * when it had both. granted NULL: a store's read-for-ownership, which
 * the store buffer tracks and which holds neither. Returns when the data
 * is there.
 */
uint64_t cache_fill(struct cm_model *m, unsigned cpu, uint64_t t,
		    uint32_t lat, uint64_t pf, uint64_t *granted);

/* A dirty line goes to memory: a posted burst on cpu's bus, through a
 * fill buffer (so write-backs cannot queue without bound). */
void mem_write_back(struct cm_model *m, unsigned cpu);

/*
 * line moves from another CPU's cache to cpu, asked at t: after the
 * line's previous hand-over, at most a queue of every other CPU later
 * (line_queued); and not before written, the owner's last write of it
 * (model.h, invariant 8), at most causal_window after t (causal_waits).
 * written 0: not known. Returns when the line arrives.
 */
uint64_t hand_over(struct cm_model *m, unsigned cpu, uint64_t line,
		   uint64_t t, uint64_t written);

/* Where cpu's write time of line lives (struct cpu, write_time[]) and
 * the tag that names line there. */
static inline uint64_t *write_time_slot(struct cm_model *m, unsigned cpu,
					uint64_t line, uint64_t *tag)
{
	uint64_t h = fib_hash(line, WRITE_TIME_INDEX_BITS + WRITE_TAG_BITS);

	*tag = h & ((1ull << WRITE_TAG_BITS) - 1);
	return &m->cpu[cpu].write_time[h >> WRITE_TAG_BITS];
}

/* cpu (its own thread) wrote line at clock t, for a CPU that takes the
 * line from it (hand_over()). Nothing without causality. */
static inline void write_time_note(struct cm_model *m, unsigned cpu,
				   uint64_t line, uint64_t t)
{
	uint64_t tag, *slot;

	/* Expected set: left unhinted, GCC's link-time optimisation took a
	 * store hit's note for cold code and computed cpu_now()'s division
	 * by 100 there with a divide instruction (tens of cycles), on every
	 * store that hits L1D. */
	if (__builtin_expect(!m->causal_window, 0))
		return;
	slot = write_time_slot(m, cpu, line, &tag);
	__atomic_store_n(slot, tag << WRITE_TIME_BITS | (t & WRITE_TIME_MASK),
			 __ATOMIC_RELAXED);
}

/* When owner last wrote line (write_time_note()); 0 if not known (never
 * noted, or its slot since taken by another line). */
static inline uint64_t write_time_of(struct cm_model *m, unsigned owner,
				     uint64_t line)
{
	uint64_t tag, *slot = write_time_slot(m, owner, line, &tag);
	uint64_t w = __atomic_load_n(slot, __ATOMIC_RELAXED);

	return w >> WRITE_TIME_BITS == tag ? w & WRITE_TIME_MASK : 0;
}

/* cachemodel/model_coherence.c: private caches and coherence; the
 * write-back accesses return when their data or ownership is there. */

/* line's MESI state in c's private caches (their outermost level). */
enum line_state priv_state(struct cpu *c, uint64_t line);

/* The CPUs (a bit each) whose private caches may hold the line at LLC
 * index i (-1: the LLC has it not): its sharer bits with an inclusive
 * LLC (none if absent, by inclusion), else every CPU. A superset: a CPU
 * outside it holds the line nowhere (model.h, invariant 4). */
uint64_t priv_holders_at(const struct cm_model *m, long i);

/* Put line, known absent, into the LLC; a dirty victim is written back
 * (counted on cpu). An inclusive LLC takes its victim out of every
 * private cache; a dirty private copy is written back too. */
void llc_insert(struct cm_model *m, unsigned cpu, uint64_t line,
		bool dirty);

/* Put line into cpu's L2 (present, line absent) with state st; the
 * victim leaves L1D too (inclusion) and a dirty one goes to the LLC. */
void l2_fill(struct cm_model *m, unsigned cpu, uint64_t line,
	     enum line_state st);

/* Does the LLC of a die other than cpu's hold line (model.h, invariant
 * 4a)? Always false with one LLC. */
bool llc_other_die_holds(struct cm_model *m, unsigned cpu, uint64_t line);
/*
 * Invalidate line in every other CPU (a read-for-ownership or an
 * upgrade), and in the LLCs of the other dies. Returns true if one of
 * them held it modified (it then supplies the data); *written (unless
 * written is NULL) then gets when that CPU last wrote it
 * (write_time_of(); left alone when a die's LLC held it).
 */
bool invalidate_others(struct cm_model *m, unsigned cpu, uint64_t line,
		       uint64_t *written);

/* A WB write (or locked read) at t: the line ends up M in cpu's caches.
 * Returns when cpu owns it. The prefetchers learn from an L1D miss after
 * the demand went out (it is first on the bus). */
uint64_t write_back_access(struct cm_model *m, unsigned cpu,
			   uint64_t line, uint64_t t);

/*
 * A WB read of n bytes at pa (within one line) at t; returns when cpu
 * may go on: when its data is there, unless the load is independent of
 * cpu's previous one (load_independent()). Then an L1D hit is served
 * with the previous load: an out-of-order core issues independent loads
 * back to back (two a cycle from Sandy Bridge on, one on the Core
 * microarchitecture) and overlaps their hit latencies; and an L1D miss
 * served by L2, the LLC or memory lets the CPU go on once it holds a
 * fill buffer (cache_fill(), mem_read()), so a sweep's misses overlap as
 * they do in the fill buffers of an out-of-order core. A pointer chase,
 * whose loads depend on each other, keeps its full latency (model.h,
 * invariant 5). A line taken from another CPU is always waited for.
 */
uint64_t write_back_read(struct cm_model *m, unsigned cpu, uint64_t pa,
			 unsigned n, uint64_t t);

/*
 * Remove line from every cache; a dirty copy is written to memory,
 * counted on cpu (not counted when cpu is NO_CPU).
 */
void evict_everywhere(struct cm_model *m, unsigned cpu, uint64_t line);

/* cachemodel/model_prefetch.c: hardware prefetch. */

/*
 * If line was prefetched by cpu and not yet used: count it useful (and
 * late if it has not arrived by t) and return when it arrives; else 0.
 */
uint64_t pf_consume(struct cm_model *m, unsigned cpu, uint64_t line,
		    uint64_t t);

/* The prefetchers learn from cpu's demand miss of line in L1D at t
 * (load or store, before the line is fetched) and issue what they
 * predict. */
void prefetch(struct cm_model *m, unsigned cpu, uint64_t line,
	      uint64_t t);

/* cachemodel/model_buffers.c: the store buffer and write combining. */

/* A store whose line cpu owns at clock ready enters the store buffer;
 * if it is full, cpu stalls until its oldest store is done. */
void sb_push(struct cm_model *m, unsigned cpu, uint64_t ready);

/*
 * Buffer b of cpu leaves: a full one as one burst, a partial one as one
 * 8-byte transaction per chunk holding data, each holding the bus for
 * wc_chunk. Posted: cpu goes on (without fill buffers it waits), the
 * buffer is busy until its last transaction is done.
 */
void wc_flush(struct cm_model *m, unsigned cpu, struct wc_buffer *b,
	      enum cm_wc_cause why);

/* Every WC buffer of cpu holding data leaves (wc_flush()), counted
 * under why if partial. */
void wc_drain(struct cm_model *m, unsigned cpu, enum cm_wc_cause why);

/* cpu's WC buffer holding data of line, or NULL. */
struct wc_buffer *wc_find(struct cm_model *m, unsigned cpu,
			  uint64_t line);

/* Bytes [off, off + n) of w's line are written; a full buffer goes out
 * as one burst. Returns w, or NULL if it went out. */
struct wc_buffer *wc_merge(struct cm_model *m, unsigned cpu,
			   struct wc_buffer *w, unsigned off,
			   unsigned n);

/* A WC or non-temporal store into cpu's WC buffers; returns the buffer
 * that holds it, or NULL if that buffer went out full. A new line takes
 * a free buffer (the earliest done), else evicts the least recently
 * written one; cpu waits until the buffer it takes is done. */
struct wc_buffer *wc_store(struct cm_model *m, unsigned cpu,
			   uint64_t line, unsigned off, unsigned n);

#endif
