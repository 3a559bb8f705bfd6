/*
 * The kernel's trace channel (see trace/trace.h and docs/trace.md).
 *
 *   %gs:trace_buffer (percpu_of(cpu)->trace_buffer)
 *               --> struct rb (kmalloc, cache-line aligned, WB)
 *                       |-- meta: slot words, record counts, page index
 *                       |         (kmalloc, cache-line aligned, WB)
 *                       |-- commit counters: each on its own line, or
 *                       |   one packed array, slot-major, so CPUs share
 *                       |   lines (seed 004's false sharing)
 *                       `-- pages: nr_subbufs + 1 blocks of
 *                           2^(subbuf_shift - 12) pages (page_alloc,
 *                           order <= 10), retyped to cfg.memtype
 *
 * 1. Only the buffer pages take the channel's memory type. Everything a
 *    writer updates with a read-modify-write (offset, commit counters,
 *    record counts, lost counts) is write-back memory: a locked or even
 *    a local RMW on UC or WC memory goes to the bus every time.
 * 2. With WC pages the ring buffer issues wmb_wc() (SFENCE) before each
 *    commit: WC stores are weakly ordered and could reach memory after
 *    the WB commit counter that publishes them.
 * 3. Every page block is set back to WB before it goes back to the page
 *    allocator (page_free() checks it).
 * 4. The per-CPU trace_buffer pointers are published after their buffer
 *    is ready and cleared (and every event turned off) before the
 *    memory goes.
 *    Callers of trace_teardown() make sure no CPU is inside an emit
 *    (the experiments stop tracing, then tear down on one CPU).
 */
#include "trace/trace.h"
#include "lib/assert.h"
#include "lib/cycles.h"
#include "lib/kprintf.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "mm/page_alloc.h"
#include "mm/vm.h"

#define TRACE_MIN_SUBBUF_SHIFT RB_PAGE_SHIFT
#define TRACE_MAX_SUBBUF_SHIFT (RB_PAGE_SHIFT + 10) /* one order-10 block */
#define TRACE_MAX_SUBBUFS_SHIFT 8
#define TRACE_DEFAULT_SUBBUF_SHIFT 14 /* 16 KiB */
#define TRACE_DEFAULT_SUBBUFS_SHIFT 3 /* 8 sub-buffers */
#define COMMIT_PER_LINE (CACHE_LINE_SIZE / sizeof(unsigned long))

bool trace_outofline;
volatile uint8_t trace_event_on[TRACE_EVENT_NR];

/* What one CPU's buffer owns. */
struct trace_cpu {
	struct rb *rb;
	void *meta;
	void **pages;       /* nr_pages page addresses */
	void **blocks;      /* nr_subbufs + 1 page blocks */
	unsigned nr_blocks; /* allocated so far */
	unsigned long *commit_own; /* aligned counters (NULL when packed) */
};

static struct {
	bool active;
	struct trace_config cfg;
	unsigned ncpus;
	struct trace_cpu cpu[MAX_CPUS];
	unsigned long *commit_packed; /* every CPU's counters, packed */
	uint8_t uuid[RB_UUID_SIZE];
} chan;

#define TRACE_NAME_(name, fields) #name,
#define TRACE_NO_FIELD_(type, field)
static const char *const event_names[TRACE_EVENT_NR] = {
	TRACE_EVENTS(TRACE_NAME_, TRACE_NO_FIELD_)};

const char *trace_event_name(unsigned id)
{
	return id < TRACE_EVENT_NR ? event_names[id] : NULL;
}

void trace_default_config(struct trace_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->memtype = MEMTYPE_WB;
	cfg->mode = RB_OVERWRITE;
	cfg->page_index = RB_PAGES_ARRAY;
	cfg->commit_packed = false;
	cfg->subbuf_shift = TRACE_DEFAULT_SUBBUF_SHIFT;
	cfg->nr_subbufs_shift = TRACE_DEFAULT_SUBBUFS_SHIFT;
}

__attribute__((noinline)) void trace_emit_outofline(uint32_t id,
						    const void *p,
						    uint32_t size,
						    uint32_t align)
{
	trace_emit_body(id, p, size, align);
}

__attribute__((noinline, cold)) void trace_emit_slow(uint32_t id,
						     const void *p,
						     uint32_t size,
						     uint32_t align)
{
	struct rb *rb = trace_this_cpu_buffer();
	uint32_t at = ALIGN_UP((uint32_t)RB_COMPACT_HEADER_SIZE, align);
	struct rb_ctx ctx; /* rb_reserve() fills the out fields */
	void *dst;

	ctx.size_compact = ALIGN_UP(at + size, RB_RECORD_ALIGN);
	ctx.size_extended = ALIGN_UP((uint32_t)RB_EXTENDED_HEADER_SIZE + size,
				     RB_RECORD_ALIGN);
	/* What follows the payload is padding (ring_buffer.c, inv. 11). */
	ctx.tail_compact = ctx.size_compact - (at + size);
	ctx.tail_extended = ctx.size_extended -
			    ((uint32_t)RB_EXTENDED_HEADER_SIZE + size);
	ctx.id = id;
	if (!rb || rb_reserve(rb, &ctx))
		return;
	ctx.cursor = ctx.begin + (ctx.extended ? RB_EXTENDED_HEADER_SIZE : at);
	dst = rb_write_ptr(rb, &ctx, size);
	if (dst != NULL)
		memcpy(dst, p, size);
	else
		rb_write(rb, &ctx, p, size);
	rb_commit(rb, &ctx);
}

void trace_set_outofline(bool on)
{
	WRITE_ONCE(trace_outofline, on);
}

void trace_event_enable(enum trace_event_id id, bool on)
{
	if ((unsigned)id < TRACE_EVENT_NR)
		trace_event_on[id] = on && chan.active;
}

void trace_enable_all(bool on)
{
	for (unsigned i = 0; i < TRACE_EVENT_NR; i++)
		trace_event_enable(i, on);
}

bool trace_active(void)
{
	return chan.active;
}

const struct trace_config *trace_current_config(void)
{
	return &chan.cfg;
}

unsigned trace_nr_cpus(void)
{
	return chan.active ? chan.ncpus : 0;
}

struct rb *trace_cpu_buffer(unsigned cpu)
{
	return chan.active && cpu < chan.ncpus ? chan.cpu[cpu].rb : NULL;
}

/* Give back what CPU c's buffer holds (any subset of it). */
static void free_cpu(struct trace_cpu *c, unsigned order)
{
	for (unsigned i = 0; i < c->nr_blocks; i++) {
		if (chan.cfg.memtype != MEMTYPE_WB)
			set_memory_type(c->blocks[i], 1ull << order,
					MEMTYPE_WB);
		page_free(c->blocks[i], order);
	}
	kfree(c->blocks);
	kfree(c->pages);
	kfree(c->meta);
	kfree(c->commit_own);
	kfree(c->rb);
	memset(c, 0, sizeof(*c));
}

/* Build CPU cpu's buffer; returns false (partly built) on failure. */
static bool setup_cpu(unsigned cpu)
{
	const struct trace_config *cfg = &chan.cfg;
	struct trace_cpu *c = &chan.cpu[cpu];
	unsigned order = cfg->subbuf_shift - RB_PAGE_SHIFT;
	unsigned long n = 1ul << cfg->nr_subbufs_shift;
	unsigned long pps = 1ul << order;
	unsigned long *commit;
	unsigned long stride;
	struct rb_config rc = {
		.subbuf_shift = cfg->subbuf_shift,
		.nr_subbufs_shift = cfg->nr_subbufs_shift,
		.mode = cfg->mode,
		.page_index = cfg->page_index,
		.wc_fence = cfg->memtype == MEMTYPE_WC,
		.cpu = cpu,
		.stream_id = 0,
		.clock = cycles_now,
	};

	memcpy(rc.uuid, chan.uuid, RB_UUID_SIZE);
	c->rb = kmalloc_cache_aligned(sizeof(struct rb));
	c->meta = kmalloc_cache_aligned(rb_meta_size(&rc));
	c->pages = kmalloc(rb_nr_pages(&rc) * sizeof(void *));
	c->blocks = kmalloc((n + 1) * sizeof(void *));
	if (!c->rb || !c->meta || !c->pages || !c->blocks)
		return false;
	for (unsigned long b = 0; b <= n; b++) {
		void *blk = page_alloc(order);

		if (!blk)
			return false;
		if (cfg->memtype != MEMTYPE_WB &&
		    set_memory_type(blk, pps, cfg->memtype) != 0) {
			page_free(blk, order);
			return false;
		}
		c->blocks[c->nr_blocks++] = blk;
		for (unsigned long p = 0; p < pps; p++)
			c->pages[b * pps + p] = (char *)blk + p * RB_PAGE_SIZE;
	}
	if (cfg->commit_packed) {
		/* Interleaved: slot s of every CPU side by side, so CPUs
		 * write the same cache lines (seed 004's false sharing). */
		commit = chan.commit_packed + cpu;
		stride = chan.ncpus;
	} else {
		c->commit_own = kmalloc_cache_aligned(n * CACHE_LINE_SIZE);
		if (!c->commit_own)
			return false;
		commit = c->commit_own;
		stride = COMMIT_PER_LINE;
	}
	if (rb_init(c->rb, &rc, c->pages, c->meta, commit, stride) != 0)
		return false;
	return true;
}

int trace_setup(const struct trace_config *cfg, unsigned ncpus)
{
	unsigned order;

	if (chan.active) {
		kprintf("trace: a channel is already set up\n");
		return -1;
	}
	if (cfg->subbuf_shift < TRACE_MIN_SUBBUF_SHIFT ||
	    cfg->subbuf_shift > TRACE_MAX_SUBBUF_SHIFT ||
	    cfg->nr_subbufs_shift < 1 ||
	    cfg->nr_subbufs_shift > TRACE_MAX_SUBBUFS_SHIFT ||
	    !memtype_valid(cfg->memtype) || cfg->memtype == MEMTYPE_WP ||
	    ncpus == 0 || ncpus > MAX_CPUS || ncpus > percpu_count()) {
		kprintf("trace: invalid channel configuration (sub-buffer "
			"2^%u bytes, 2^%u of them, %s, %u CPUs)\n",
			cfg->subbuf_shift, cfg->nr_subbufs_shift,
			memtype_name(cfg->memtype), ncpus);
		return -1;
	}
	memset(chan.cpu, 0, sizeof(chan.cpu));
	chan.cfg = *cfg;
	chan.ncpus = ncpus;
	order = cfg->subbuf_shift - RB_PAGE_SHIFT;
	/* A fresh UUID per channel: the TSC is good enough to tell apart. */
	for (unsigned i = 0; i < RB_UUID_SIZE; i += 8) {
		uint64_t v = cycles_now() * 0x9e3779b97f4a7c15ull + i;
		memcpy(chan.uuid + i, &v, 8);
	}
	chan.commit_packed = NULL;
	if (cfg->commit_packed) {
		chan.commit_packed = kzalloc(ncpus * sizeof(unsigned long)
					     << cfg->nr_subbufs_shift);
		if (!chan.commit_packed)
			goto fail;
	}
	for (unsigned cpu = 0; cpu < ncpus; cpu++)
		if (!setup_cpu(cpu))
			goto fail;
	for (unsigned cpu = 0; cpu < ncpus; cpu++)
		atomic_store_release(&percpu_of(cpu)->trace_buffer,
				     (void *)chan.cpu[cpu].rb);
	chan.active = true;
	return 0;
fail:
	kprintf("trace: out of memory or memory type %s refused\n",
		memtype_name(cfg->memtype));
	for (unsigned cpu = 0; cpu < ncpus; cpu++)
		free_cpu(&chan.cpu[cpu], order);
	kfree(chan.commit_packed);
	chan.commit_packed = NULL;
	return -2;
}

void trace_teardown(void)
{
	unsigned order = chan.cfg.subbuf_shift - RB_PAGE_SHIFT;

	if (!chan.active)
		return;
	trace_enable_all(false);
	for (unsigned cpu = 0; cpu < chan.ncpus; cpu++)
		atomic_store_release(&percpu_of(cpu)->trace_buffer,
				     (void *)NULL);
	chan.active = false;
	for (unsigned cpu = 0; cpu < chan.ncpus; cpu++)
		free_cpu(&chan.cpu[cpu], order);
	kfree(chan.commit_packed);
	chan.commit_packed = NULL;
	chan.ncpus = 0;
}
