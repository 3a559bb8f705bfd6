/*
 * The model doorbell, kernel side: commands to a cache-model QEMU plugin
 * encoded as the offsets of byte loads from one page (the protocol is
 * cachemodel/doorbell.h; the why is in docs/cachemodel.md).
 *
 * Invariants:
 *  1. Nothing is sent before the page is mapped (bell_ready), so calls
 *     made early in boot are silent, never a page fault.
 *  2. A command's loads run with interrupts off: the plugin keeps one
 *     argument list per CPU, and an interrupt handler that sent its own
 *     command in the middle would mix the two.
 *  3. The page is read-only and its contents never matter: only the
 *     addresses of the loads carry information.
 *  4. The model is told effective memory types: the PAT type a range is
 *     mapped with combined with the MTRRs (SDM table), run by run. At
 *     hello it learns the MTRRs' non-WB runs (the type of the WB direct
 *     map there) and then every type set before the doorbell existed,
 *     in order (kept in early[], at most EARLY_TYPES_MAX; more are
 *     counted and said). early[] needs no lock: until the doorbell is
 *     mapped only the boot CPU runs.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/model_doorbell.h"
#include "arch/x86_64/pat.h"
#include "cachemodel/doorbell.h"
#include "lib/bench.h"
#include "lib/kprintf.h"
#include "mm/cachemodel.h"
#include "mm/page_alloc.h"
#include "mm/vm.h"

#define BYTE_BITS 8
#define TOP_BYTE_SHIFT 56

#define EARLY_TYPES_MAX 16

static bool bell_ready;

/* Type changes made before the doorbell was mapped (invariant 4). */
static struct early_type {
	uint64_t phys, npages;
	enum memtype pat;
} early[EARLY_TYPES_MAX];
static unsigned early_count, early_lost;

static inline void ring(unsigned off)
{
	(void)*(volatile const uint8_t *)(DB_VA + off);
}

/* A number as big-endian digit bytes (at least one), then PUSH. */
static void send_number(uint64_t v)
{
	int shift = TOP_BYTE_SHIFT;

	while (shift > 0 && ((v >> shift) & DB_BYTE_MASK) == 0)
		shift -= BYTE_BITS;
	for (; shift >= 0; shift -= BYTE_BITS)
		ring(DB_DIGIT_BASE + ((v >> shift) & DB_BYTE_MASK));
	ring(DB_PUSH);
}

static void command(unsigned cmd, const uint64_t *args, unsigned nargs)
{
	uint64_t flags;

	if (!bell_ready)
		return;
	flags = read_rflags();
	cpu_cli();
	for (unsigned i = 0; i < nargs; i++)
		send_number(args[i]);
	ring(DB_CMD_BASE + cmd);
	if (flags & RFLAGS_IF)
		cpu_sti();
}

/* Physical addresses the model keeps types for (cachemodel/doorbell.h). */
static uint64_t type_map_limit(void)
{
	return MIN(page_alloc_phys_limit(), 1ull << DB_TYPE_MAP_BITS);
}

static void send_type(uint64_t phys, uint64_t end, enum memtype t)
{
	const uint64_t args[] = {phys, (end - phys) >> PAGE_SHIFT,
				 (uint64_t)t};

	command(DB_CMD_SET_TYPE, args, 3);
}

/* [phys, end) mapped with PAT type pat: its effective types, run by run
 * of one MTRR type (invariant 4). */
static void send_effective(uint64_t phys, uint64_t end, enum memtype pat)
{
	end = MIN(end, type_map_limit());
	while (phys < end) {
		uint64_t run_end = end;
		enum memtype t = memtype_effective_at(phys, pat);

		if (mtrr_present)
			run_end = mtrr_run_end(&mtrr_state, phys, end);
		/* An undefined MTRR combination: time it as uncached. */
		if (t == MEMTYPE_UNDEFINED)
			t = MEMTYPE_UC;
		send_type(phys, run_end, t);
		phys = run_end;
	}
}

void cachemodel_set_type(uint64_t phys, uint64_t npages, enum memtype t)
{
	if (!bell_ready) {
		if (early_count < EARLY_TYPES_MAX) {
			early[early_count].phys = phys;
			early[early_count].npages = npages;
			early[early_count++].pat = t;
		} else {
			early_lost++;
		}
		return;
	}
	send_effective(phys, phys + (npages << PAGE_SHIFT), t);
}

/* At hello: the MTRRs' non-WB runs under the WB direct map, then the
 * types set before the doorbell, in order (invariant 4). */
static void replay_types(void)
{
	uint64_t limit = type_map_limit();

	for (uint64_t p = 0; mtrr_present && p < limit;) {
		uint64_t end = mtrr_run_end(&mtrr_state, p, limit);

		if (mtrr_type_of(&mtrr_state, p) != MEMTYPE_WB)
			send_effective(p, end, MEMTYPE_WB);
		p = end;
	}
	for (unsigned i = 0; i < early_count; i++)
		send_effective(early[i].phys,
			       early[i].phys + (early[i].npages << PAGE_SHIFT),
			       early[i].pat);
	if (early_lost)
		kprintf("model doorbell: %u memory-type changes made before "
			"the doorbell were not kept (room for %u): a cache "
			"model times those pages as WB\n", early_lost,
			EARLY_TYPES_MAX);
}

void model_doorbell_label(const char *label)
{
	uint64_t flags;

	if (!bell_ready)
		return;
	flags = read_rflags();
	cpu_cli();
	for (unsigned i = 0; label[i] && i + 1 < DB_LABEL_MAX; i++) {
		unsigned char c = (unsigned char)label[i];

		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
			c = '?';
		ring(DB_CHAR_BASE + c);
	}
	ring(DB_CMD_BASE + DB_CMD_LABEL);
	if (flags & RFLAGS_IF)
		cpu_sti();
}

void model_doorbell_begin(uint64_t id)
{
	command(DB_CMD_BEGIN, &id, 1);
}

void model_doorbell_begin_all(uint64_t id)
{
	const uint64_t args[] = {id, DB_SCOPE_ALL};

	command(DB_CMD_BEGIN, args, 2);
}

void model_doorbell_end(uint64_t id, uint64_t iters)
{
	const uint64_t args[] = {id, iters};

	command(DB_CMD_END, args, 2);
}

void model_doorbell_pause(uint64_t id)
{
	command(DB_CMD_PAUSE, &id, 1);
}

void model_doorbell_resume(uint64_t id)
{
	command(DB_CMD_RESUME, &id, 1);
}

void model_doorbell_quantum(uint64_t cycles)
{
	command(DB_CMD_QUANTUM, &cycles, 1);
}

void model_doorbell_serial(bool on)
{
	const uint64_t arg = on ? 1 : 0;

	command(DB_CMD_SERIAL, &arg, 1);
}

void model_doorbell_align(void)
{
	command(DB_CMD_ALIGN, NULL, 0);
}

void model_doorbell_cpu(uint32_t apic_id)
{
	const uint64_t arg = apic_id;

	command(DB_CMD_CPU, &arg, 1);
}

void model_doorbell_wake(uint32_t apic_id)
{
	const uint64_t arg = apic_id;

	command(DB_CMD_WAKE, &arg, 1);
}

void model_doorbell_clflushed(const void *va, uint64_t len)
{
	uint64_t p = (uint64_t)va & ~(uint64_t)(PAGE_SIZE - 1);
	uint64_t end = (uint64_t)va + len, run_pa = 0, run_len = 0;
	struct vm_translation t;

	if (!bell_ready || len == 0)
		return;
	/* Page by page to physical runs; an unmapped page ends a run. */
	for (; p < end; p += PAGE_SIZE) {
		uint64_t from = MAX(p, (uint64_t)va);
		uint64_t n = MIN(p + PAGE_SIZE, end) - from;

		if (!vm_translate(&kernel_space, from, &t)) {
			n = 0;
		} else if (run_len && run_pa + run_len == t.phys) {
			run_len += n;
			continue;
		}
		if (run_len) {
			const uint64_t args[] = {run_pa, run_len};

			command(DB_CMD_CLFLUSHED, args, 2);
		}
		run_pa = n ? t.phys : 0;
		run_len = n;
	}
	if (run_len) {
		const uint64_t args[] = {run_pa, run_len};

		command(DB_CMD_CLFLUSHED, args, 2);
	}
}

static const struct bench_region_ops region_ops = {
	.begin = model_doorbell_begin,
	.end = model_doorbell_end,
	.begin_all = model_doorbell_begin_all,
};

bool model_doorbell_init(void)
{
	const uint64_t version = DB_VERSION;
	void *page = page_alloc(0);
	int err;

	if (!page) {
		kprintf("model doorbell: no page; a cache model will see no "
			"commands\n");
		return false;
	}
	err = vm_map(&kernel_space, DB_VA, virt_to_phys(page), 1, VM_GLOBAL,
		     MEMTYPE_WB, 0);
	if (err) {
		kprintf("model doorbell: mapping %#lx failed: %s\n",
			(unsigned long)DB_VA, vm_strerror(err));
		page_free(page, 0);
		return false;
	}
	bell_ready = true;
	command(DB_CMD_HELLO, &version, 1);
	replay_types();
	bench_set_region_ops(&region_ops);
	return true;
}
