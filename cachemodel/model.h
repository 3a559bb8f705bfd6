/*
 * The cache, coherence and memory-type timing model: the engine.
 *
 * Portable C with no QEMU in it: the QEMU plugin (cachemodel/plugin.c)
 * feeds it physical accesses, host tests (tests/host/test_cachemodel.c)
 * feed it hand-made streams. docs/cachemodel.md explains what it models.
 *
 *   CPU 0                 CPU 1                 ...
 *   +-----------+         +-----------+
 *   | WC buffers|         | WC buffers|    stores to WC memory and
 *   +-----------+         +-----------+    non-temporal stores
 *   | L1D  MESI |         | L1D  MESI |
 *   | L2   MESI |         | L2   MESI |    (L2 optional: size 0)
 *   +-----+-----+         +-----+-----+
 *         |   snoop the other CPUs' L2/L1 on every private miss/upgrade
 *         |   (with an inclusive LLC, only those its sharer bits name)
 *   +-----+-----------------------+-----+
 *   |       shared LLC (clean/dirty)    |
 *   +-----------------------------------+
 *   |  memory: a type per 4 KiB page    |  WB WT WC UC UC- WP
 *   +-----------------------------------+
 *
 * Invariants:
 *  0. Counters: wc_partial_by[] sums to wc_partials on every CPU.
 *  1. Lines are 64 bytes; every level is set-associative with true LRU
 *     (a per-level access counter stamps each touched way).
 *  2. L1D is a subset of L2 when L2 exists (an L2 eviction removes the
 *     line from L1D); a line has the same MESI state in both. L2's LRU
 *     order follows L1D misses only, as in hardware.
 *  3. At most one CPU holds a line in M or E; if one does, no other CPU
 *     holds it at all (single writer, MESI).
 *  4. The LLC is filled on every memory fill and by private write-backs.
 *     A non-inclusive LLC never back-invalidates private caches; an
 *     inclusive one (llc_inclusive) removes its victim from every
 *     private cache, so every privately held line is also in the LLC,
 *     and the LLC's sharer bits of that line name every CPU holding it
 *     (a superset: a bit is set when its CPU fills the line and cleared
 *     only when the LLC fills the way anew). Snoops, back-invalidations
 *     and prefetches then look only at the CPUs named, as the
 *     core-valid bits of Intel's inclusive L3 let it: the same
 *     outcome, fewer lookups.
 *  4a. With llc_cpus, each group of llc_cpus consecutive CPUs (a die)
 *     has an LLC of its own, of the profile's llc size; a CPU looks up
 *     and fills only its die's. A line may be in several dies' LLCs,
 *     clean; a line modified in one die's LLC (ST_M) is in no other
 *     die's LLC. Another die's miss on it takes it from there (a
 *     hand-over, as from a private cache: a snoop hit on a modified
 *     line over the bus) and leaves both copies clean; a clean copy in
 *     another die supplies nothing (memory does, as on a front-side
 *     bus); a write removes the line from every other die's LLC.
 *  5. Cost model (docs/cachemodel.md, "The timing model"): a CPU's
 *     clock is instructions x CPI plus the cycles it stalled
 *     (mem_cycles), plus the cycles it slept through (cm_set_skip(); so
 *     that every CPU's clock is on one time base, the paced one), from
 *     where cm_restart_clock() last started it over. Demand
 *     loads stall until their data arrives, except loads independent of
 *     the CPU's previous load: one in its line (an L1D hit, served with
 *     it) or, with fill buffers, one starting where it ended (a sweep),
 *     which waits only for a fill buffer and the L1D fill port; a chase
 *     across lines never continues its last load and waits in full. With
 *     a store buffer a store never waits for an L1D hit's write. A load's
 *     L1D miss holds a fill buffer until its data is there (from L2, the
 *     LLC or memory); misses to memory also hold a burst of the CPU's
 *     bus; stores with a store buffer,
 *     hardware prefetches, write-backs and WC flushes do not stall the
 *     CPU but occupy fill buffers and the bus. Fences, locked operations
 *     and UC accesses wait for buffered and write-combined writes. A
 *     line moving between CPUs is taken by one at a time (a hand-over
 *     clock per line). Waits behind the bus or a line are capped at the
 *     deepest queue the hardware can hold, so CPUs whose clocks drift
 *     apart do not wait for each other's future.
 *  7. The bus is a timeline of its occupancy in slots of modelled time
 *     (model_time.c; struct bus in model_internal.h), not one "busy
 *     until" clock: a transaction asked at clock t is booked from t's
 *     slot on, in the first room
 *     there or after, and waits only for what was booked at or before
 *     its time. So which of two CPUs reaches the model first (the host's
 *     order, anything within a pacing quantum) decides who waits only
 *     when their transactions fall in one slot (BUS_SLOT_CYCLES); one
 *     CPU's transactions asked in clock order wait exactly as behind a
 *     "busy until" clock. Requests older than the window (BUS_SLOTS
 *     slots) are not queued and are counted (bus_late).
 *  6. Lines of non-WB types are never allocated by stores; WC and UC
 *     lines are never allocated at all.
 *  8. Causality (cm_set_causality()): paced CPUs run up to a quantum
 *     apart in modelled time, so a CPU may execute a load of a line that
 *     another CPU wrote at a later modelled time than its own clock (the
 *     host ran the store first). A CPU that takes a modified line from
 *     another's cache (a read miss or a read-for-ownership) gets it no
 *     earlier than that CPU's last write of it, and at most the window
 *     later than its own clock: it waited for the write, as the hardware
 *     would have, instead of seeing it early. Only WB lines are cached,
 *     so only they carry write times.
 */
#ifndef CACHEMODEL_MODEL_H
#define CACHEMODEL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CM_LINE_SHIFT 6
#define CM_LINE_SIZE (1u << CM_LINE_SHIFT)
#define CM_PAGE_SHIFT 12
#define CM_MAX_CPUS 64
#define CM_MAX_WC_BUFFERS 16
#define CM_MAX_FILL_BUFFERS 32
#define CM_MAX_L2_QUEUE 32
#define CM_MAX_STORE_BUFFER 64
#define CM_MAX_PREFETCH_AHEAD 32
/* Physical addresses the type map covers; beyond, memory is WB. */
#define CM_MAX_PHYS_BITS 36
#define CM_NAME_MAX 32

/* Memory types (the engine's own numbering; WB is 0 so fresh maps are WB). */
enum cm_memtype {
	CM_WB = 0,
	CM_WT,
	CM_WC,
	CM_UC,
	CM_UC_MINUS,
	CM_WP,
	CM_NTYPES,
};

/* "WB", "WT", "WC", "UC", "UC-", "WP"; "?" for anything else. */
const char *cm_memtype_name(enum cm_memtype t);

struct cm_level_cfg {
	uint32_t size;		/* bytes; 0 = the level does not exist */
	uint32_t ways;
	uint32_t latency;	/* cycles for a hit at this level */
};

/* A machine profile (cachemodel/profiles.txt, parsed by profile.c). */
struct cm_profile {
	char name[CM_NAME_MAX];
	uint32_t freq_mhz;	/* to convert cycles to time, reports only */
	uint32_t cpi_x100;	/* base cycles per instruction, x100 */
	struct cm_level_cfg l1d, l2, llc;
	uint32_t mem_latency;	/* WB miss served by DRAM */
	uint32_t remote_latency; /* line taken from another CPU's cache */
	uint32_t uc_load;	/* one UC, UC- or WC load */
	uint32_t uc_store;	/* one UC/UC- store, WT/WP store to memory */
	uint32_t wc_buffers;	/* per CPU, 1..CM_MAX_WC_BUFFERS */
	uint32_t wc_burst;	/* flushing a full 64-byte WC buffer */
	uint32_t wc_chunk;	/* each 8-byte chunk of a partial flush */
	uint32_t locked;	/* cycles of a locked read-modify-write of an
				 * L1D-resident line, its accesses included */
	uint32_t fence;		/* extra cycles of an mfence */
	uint32_t clflush;	/* cycles of a clflush (plus a write-back) */
	/* Optional keys (0 when absent; 0 turns the mechanism off): */
	uint32_t sfence;	/* extra cycles of an sfence; 0: as fence */
	uint32_t llc_inclusive;	/* 1: LLC victims leave the private caches */
	uint32_t bus_cpus;	/* CPUs per bus / memory controller; 0: all */
	uint32_t llc_cpus;	/* CPUs sharing one LLC (a die), numbered
				 * consecutively; 0: one LLC for all. Needs
				 * a non-inclusive LLC (llc_inclusive 0) */
	uint32_t fill_buffers;	/* outstanding misses per CPU, shared with
				 * WC flushes; 0: every transaction waited for */
	uint32_t store_buffer;	/* stores waiting for ownership; 0: none */
	uint32_t prefetch_next;	/* 1: adjacent-line (128-byte pair) prefetch */
	uint32_t prefetch_ahead;	/* lines a stream prefetcher runs ahead */
	uint32_t l2_queue;	/* the L2's own outstanding misses, which its
				 * prefetches hold; 0: they hold fill buffers */
	uint32_t l1_fill;	/* cycles one line from L2 or the LLC holds
				 * the L1D's fill port; 0: no bound */
};

/* What made a write-combining buffer leave before it was full. */
enum cm_wc_cause {
	CM_WC_FENCE,	/* sfence / mfence */
	CM_WC_LOCKED,	/* a locked read-modify-write */
	CM_WC_UNCACHED,	/* a UC access, or a WC load of the buffer's line */
	CM_WC_EVICT,	/* buffer needed for another line, clflush, retype */
	CM_WC_NCAUSES,
};

/* Per-CPU counters. All monotonic; regions subtract two snapshots. */
struct cm_stats {
	uint64_t insns;
	uint64_t loads, stores;
	uint64_t l1_hits, l1_misses;
	uint64_t l2_hits, l2_misses;
	uint64_t llc_hits, llc_misses;
	uint64_t invalidations;	/* other CPUs' copies this CPU invalidated */
	uint64_t transfers;	/* lines taken from another CPU's cache */
	uint64_t writebacks;	/* dirty lines written to memory */
	uint64_t uncached;	/* accesses that went to memory uncached */
	uint64_t wc_bursts;	/* full 64-byte WC buffer flushes */
	uint64_t wc_partials;	/* partial WC buffer flushes */
	/* wc_partials by cause (enum cm_wc_cause); they sum to wc_partials */
	uint64_t wc_partial_by[CM_WC_NCAUSES];
	uint64_t nt_stores;
	uint64_t clflushes;
	uint64_t locked;
	uint64_t fences;
	uint64_t mem_cycles;	/* cycles stalled on memory (the CPU's clock) */
	uint64_t prefetches;	/* hardware prefetches issued */
	uint64_t prefetch_useful; /* prefetched lines a demand access used */
	uint64_t prefetch_late;	/* ... that had not arrived yet */
	uint64_t bus_queued;	/* cycles transactions waited for the bus */
	uint64_t bus_late;	/* bus transactions older than its window */
	uint64_t line_queued;	/* cycles transfers waited for the line's
				 * previous hand-over */
	uint64_t store_stalls;	/* cycles stalled on a full store buffer */
	uint64_t causal_waits;	/* cycles transfers waited for the owner's
				 * write of the line (cm_set_causality()) */
};

/* Access flags for cm_access(). */
#define CM_STORE (1u << 0)
#define CM_NT (1u << 1)		/* non-temporal store (movnti, movntdq...) */
#define CM_LOCKED (1u << 2)	/* part of a locked read-modify-write */
#define CM_IO (1u << 3)		/* a device register: UC whatever the page */
/* With CM_LOCKED: cm_locked_start() charged this RMW's start already. */
#define CM_LOCK_STARTED (1u << 4)

enum cm_fence_kind {
	CM_SFENCE,
	CM_MFENCE,
};

struct cm_model;

/*
 * Check a profile: levels with ways >= 1 and size a multiple of
 * ways * 64, L1D and LLC present, 1..CM_MAX_WC_BUFFERS WC buffers.
 * Returns NULL when valid, else a static message naming the problem.
 */
const char *cm_profile_check(const struct cm_profile *p);

/*
 * A model of ncpus CPUs (1..CM_MAX_CPUS) with profile p (copied).
 * Returns NULL if the profile is invalid or memory runs out.
 */
struct cm_model *cm_create(const struct cm_profile *p, unsigned ncpus);
void cm_destroy(struct cm_model *m);

/*
 * One access of size bytes (>= 1) at physical address pa by cpu, with
 * CM_* flags. Accesses crossing a line boundary count once per line.
 */
void cm_access(struct cm_model *m, unsigned cpu, uint64_t pa, unsigned size,
	       unsigned flags);
/*
 * cm_access()'s common cases, for callers that run CPUs on several
 * threads: if the access needs only cpu's own state (a plain WB access
 * within one line that hits cpu's L1D in a state that needs no coherence
 * action, a non-temporal store merging into cpu's open WC buffer with no
 * fill anywhere since it evicted the line, any plain access to a WC, UC
 * or UC- page or a device), count it exactly as cm_access() would and
 * return true; otherwise change nothing and return false (then call
 * cm_access()). Concurrency: it touches only cpu's own L1D, WC buffers,
 * fill and store buffers and counters, books its bus's timeline with
 * atomic compare-and-swaps, and reads the type map and the fills count,
 * so it may run while another thread makes calls for other CPUs (those
 * serialised among themselves), except cm_set_type() and
 * cm_clflush_lines(), which
 * may flush cpu's WC buffers into cpu's counters; never at the same time
 * as another call for the same cpu.
 */
bool cm_access_fast(struct cm_model *m, unsigned cpu, uint64_t pa,
		    unsigned size, unsigned flags);
/*
 * The start of a locked read-modify-write of cpu, charged before its
 * accesses: cpu drains its WC buffers, waits for them and for its store
 * buffer, and pays the locked cost; the RMW is counted. Its accesses then
 * follow with CM_LOCKED | CM_LOCK_STARTED and only take the line. Without
 * it, a locked load (CM_LOCKED, not CM_STORE) charges the start itself.
 * The same cycles and counts either way; a caller whose accesses take
 * effect before it reports them (QEMU's TCG) can so charge the wait
 * before the RMW is seen by other CPUs (cachemodel/locked.h).
 */
void cm_locked_start(struct cm_model *m, unsigned cpu);
/*
 * True if cpu's L1D holds the line of pa in state M or E: in the model no
 * other CPU has read or written it since cpu took it, so a locked RMW of
 * it contends with no one. Read-only; under the caller's engine lock, as
 * another CPU's access may change the state.
 */
bool cm_line_private(const struct cm_model *m, unsigned cpu, uint64_t pa);
/* sfence: drain cpu's WC buffers and wait for them; mfence: also wait
 * for the store buffer. */
void cm_fence(struct cm_model *m, unsigned cpu, enum cm_fence_kind kind);
/* clflush / clflushopt of the line holding pa: evicted from every cache. */
void cm_clflush(struct cm_model *m, unsigned cpu, uint64_t pa);
/*
 * A clflush whose address the caller cannot see (QEMU's TCG performs no
 * access for clflush): counted and charged, nothing is evicted.
 */
void cm_clflush_unseen(struct cm_model *m, unsigned cpu);
/*
 * The lines of [pa, pa + len) that clflushes already counted by
 * cm_clflush_unseen() named, as the kernel's flush helper reports them
 * afterwards (the doorbell): each is evicted from every cache and WC
 * buffer; dirty ones are written back, counted and charged to cpu, as
 * cm_clflush() does. No clflush is counted again. Ranges of any size: a
 * range larger than the caches is handled by scanning the caches.
 */
void cm_clflush_lines(struct cm_model *m, unsigned cpu, uint64_t pa,
		      uint64_t len);
/* n more instructions retired on cpu (they advance its clock: model.h,
 * invariant 5); called by cpu's own thread. */
void cm_instructions(struct cm_model *m, unsigned cpu, uint64_t n);
/*
 * cpu has slept through skip cycles in all so far (halted while the
 * other CPUs ran: cachemodel/pace.h's skip). Its clock is its busy
 * cycles plus skip, so that the bus and the line hand-overs compare
 * clocks of one time base (invariant 5); its counters and cm_cycles()
 * do not change. A smaller skip than the last is ignored. Called by
 * cpu's own thread.
 */
void cm_set_skip(struct cm_model *m, unsigned cpu, uint64_t skip);

/*
 * cpu's clock starts over at a round value: the first multiple of the
 * bus's window (every absolute time the engine keeps is compared within
 * it) at least margin past its clock now; from then on it counts from
 * there, its instructions since then times CPI included (so their
 * rounding to whole cycles starts over too). Its counters and
 * cm_cycles() do not change (cm_busy_cycles() moves with the clock). For a CPU whose history so far the
 * host decided (under QEMU's -icount, how many instructions the boot
 * took before the kernel's hello): with margin past everything in
 * flight, what it does next times the same in every run. Not for a CPU
 * paced with others: it moves its clock against theirs. Called by cpu's
 * own thread.
 */
void cm_restart_clock(struct cm_model *m, unsigned cpu, uint64_t margin);
/*
 * cpu's instructions count their cycles from here on: the whole cycles of
 * those so far (instructions x CPI) join its clock's origin and the
 * fraction of a cycle CPI left over is dropped, so that the instructions
 * that follow round to whole cycles alike however many came before (a
 * paced CPU whose clock is set where it joins the others, or where it
 * starts work they join: how it moves on from there must not depend on
 * the host-decided instructions of its past). The clock and
 * cm_busy_cycles() do not change. Called by cpu's own thread.
 */
void cm_rebase_clock(struct cm_model *m, unsigned cpu);
/* The bus's window in cycles (the round value cm_restart_clock() uses). */
uint64_t cm_clock_window(void);

/*
 * Causality between CPUs whose clocks may differ by up to window cycles
 * (invariant 8): a CPU that takes a line another CPU modified does not
 * get it before that CPU's last write of it, waiting at most window
 * cycles beyond its own clock; window 0 (the default) turns it off (as
 * for CPUs whose clocks are not kept together: a wait would be for the
 * other's future). Call before any access.
 */
void cm_set_causality(struct cm_model *m, uint64_t window);

/*
 * Give [pa, pa + len) memory type t, page granular (the range is widened
 * to whole pages). Like the kernel's set_memory_type(), lines of the range
 * are written back and evicted from every cache and WC buffer. Returns
 * false (and changes nothing) if the range reaches beyond
 * 2^CM_MAX_PHYS_BITS, t is invalid, or memory runs out.
 */
bool cm_set_type(struct cm_model *m, uint64_t pa, uint64_t len,
		 enum cm_memtype t);
enum cm_memtype cm_type_of(const struct cm_model *m, uint64_t pa);

/* The counters of cpu (valid until the next call on m). */
const struct cm_stats *cm_stats(const struct cm_model *m, unsigned cpu);
/*
 * Leave the counts between two snapshots out of a region: base += to -
 * from, field by field (a region paused at 'from' and resumed at 'to'
 * subtracts the moved base at its end). from <= to field by field.
 */
void cm_stats_skip(struct cm_stats *base, const struct cm_stats *from,
		   const struct cm_stats *to);
/*
 * Copy cpu's counters into *out with atomic loads: for a thread that is
 * not cpu's while cpu may be inside cm_access_fast(). Each counter is
 * exact as of some moment of the copy.
 */
void cm_stats_read(const struct cm_model *m, unsigned cpu,
		   struct cm_stats *out);
/* cpu's busy cycles now, cm_cycles() of its counters, without copying
 * them: two atomic loads, cheap enough for every translation block (any
 * thread). */
uint64_t cm_busy_cycles(const struct cm_model *m, unsigned cpu);
/*
 * The CPUs (bit d for CPU d) whose private copy of a line cpu's accesses
 * invalidated (a write taking the line, an eviction everywhere) since
 * the last call, and forget them: the pacing's cue that a CPU polling a
 * line may see a new value (cachemodel/pace.h, pause-wait). Called with
 * the engine's lock, like cm_access().
 */
uint64_t cm_take_invalidated(struct cm_model *m, unsigned cpu);
/* Modelled cycles of counters s: insns x CPI + mem_cycles. */
uint64_t cm_cycles(const struct cm_model *m, const struct cm_stats *s);
const struct cm_profile *cm_profile(const struct cm_model *m);
unsigned cm_ncpus(const struct cm_model *m);
/* Bytes of host memory the model's state occupies. */
size_t cm_state_bytes(const struct cm_model *m);

#endif
