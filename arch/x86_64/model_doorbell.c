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
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/model_doorbell.h"
#include "cachemodel/doorbell.h"
#include "lib/bench.h"
#include "lib/kprintf.h"
#include "mm/cachemodel.h"
#include "mm/page_alloc.h"
#include "mm/vm.h"

#define BYTE_BITS 8
#define TOP_BYTE_SHIFT 56

static bool bell_ready;

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

void cachemodel_set_type(uint64_t phys, uint64_t npages, enum memtype t)
{
	const uint64_t args[] = {phys, npages, (uint64_t)t};

	command(DB_CMD_SET_TYPE, args, 3);
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
	model_doorbell_begin,
	model_doorbell_end,
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
	bench_set_region_ops(&region_ops);
	return true;
}
