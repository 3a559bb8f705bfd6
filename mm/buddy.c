/*
 * Binary buddy allocator over frame numbers: see mm/buddy.h and
 * docs/mm-buddy.md.
 *
 * State lives only in struct page: the head frame of every block carries
 * the block's order and either PG_FREE (and sits on free_list[order]) or
 * PG_HEAD (allocated). All other frames of a block ("tails") have no flags,
 * which is what lets a split or a merge touch O(1) descriptors, and what
 * buddy_check() verifies.
 *
 * The buddy of the block at pfn of order o is pfn ^ 2^o: the other half of
 * the aligned block of order o + 1 that contains both.
 */
#include <stdarg.h>
#include "lib/assert.h"
#include "lib/compiler.h"
#include "lib/kprintf.h"
#include "lib/panic.h"
#include "mm/buddy.h"

/* buddy_check() reports at most this many violations in detail. */
#define BUDDY_CHECK_MAX_REPORTS 16

#define ORDER_PAGES(o) (1ull << (o))
#define ORDER_MASK(o) (ORDER_PAGES(o) - 1)

static bool in_array(const struct buddy *b, uint64_t pfn)
{
	return pfn >= b->first_pfn && pfn - b->first_pfn < b->npages;
}

static struct page *pfn_page(const struct buddy *b, uint64_t pfn)
{
	kassert(in_array(b, pfn));
	return &b->pages[pfn - b->first_pfn];
}

static uint64_t page_pfn(const struct buddy *b, const struct page *p)
{
	return b->first_pfn + (uint64_t)(p - b->pages);
}

void buddy_sort_free_lists(struct buddy *b)
{
	struct page *tail[BUDDY_NR_ORDERS] = {NULL};
	uint64_t relinked = 0;

	for (unsigned int o = 0; o <= b->max_order; o++)
		b->free_list[o] = NULL;
	/* A free block's head is the only page of it with PG_FREE, and
	 * every other page of the block lies above it: one pass in pfn
	 * order meets the heads in order. */
	for (uint64_t i = 0; i < b->npages;) {
		struct page *p = &b->pages[i];
		unsigned int o;

		if (!(p->flags & PG_FREE)) {
			i++;
			continue;
		}
		o = p->order;
		kassert(o <= b->max_order);
		p->list.next = NULL;
		p->list.prev = tail[o];
		if (tail[o])
			tail[o]->list.next = p;
		else
			b->free_list[o] = p;
		tail[o] = p;
		relinked++;
		i += ORDER_PAGES(o);
	}
	for (unsigned int o = 0; o <= b->max_order; o++)
		relinked -= b->stats.nr_free[o];
	kassert(relinked == 0);	/* every listed block was met once */
}

struct page *buddy_pfn_to_page(struct buddy *b, uint64_t pfn)
{
	return in_array(b, pfn) ? pfn_page(b, pfn) : NULL;
}

/* Put the block headed by p on free_list[order] and count it (LIFO: the
 * most recently freed block, likely still cached, goes out first). */
static void mark_free(struct buddy *b, struct page *p, unsigned int order)
{
	struct page *head = b->free_list[order];

	p->flags = PG_FREE;
	p->order = (uint8_t)order;
	p->owner = PAGE_OWNER_BUDDY;
	set_page_count(p, 0);
	p->list.prev = NULL;
	p->list.next = head;
	if (head)
		head->list.prev = p;
	b->free_list[order] = p;
	b->stats.nr_free[order]++;
	b->stats.free_pages += ORDER_PAGES(order);
}

/* Take the free block headed by p off its list; p becomes flag-less. */
static void unmark_free(struct buddy *b, struct page *p, unsigned int order)
{
	kassert(p->flags & PG_FREE);
	kassert(p->order == order);
	if (p->list.prev)
		p->list.prev->list.next = p->list.next;
	else
		b->free_list[order] = p->list.next;
	if (p->list.next)
		p->list.next->list.prev = p->list.prev;
	p->list.next = p->list.prev = NULL;
	p->flags = 0;
	p->owner = PAGE_OWNER_NONE;
	kassert(b->stats.nr_free[order] > 0);
	b->stats.nr_free[order]--;
	b->stats.free_pages -= ORDER_PAGES(order);
}

/* Free the block [pfn, pfn + 2^order), merging with free buddies. */
/* lab buddy/merge: begin (docs/labs/README.md) */
static void free_block(struct buddy *b, uint64_t pfn, unsigned int order)
{
	while (order < b->max_order) {
		uint64_t buddy = pfn ^ ORDER_PAGES(order);
		struct page *bp;

		if (!in_array(b, buddy))
			break;
		bp = pfn_page(b, buddy);
		if (!(bp->flags & PG_FREE) || bp->order != order)
			break;
		unmark_free(b, bp, order);
		pfn &= ~ORDER_PAGES(order);
		order++;
		b->stats.merges++;
	}
	mark_free(b, pfn_page(b, pfn), order);
}
/* lab buddy/merge: end */

void buddy_init(struct buddy *b, struct page *pages, uint64_t first_pfn,
		uint64_t npages)
{
	kassert(pages || npages == 0);
	kassert(npages <= UINT64_MAX - first_pfn);
	*b = (struct buddy){
		.pages = pages,
		.first_pfn = first_pfn,
		.npages = npages,
		.max_order = BUDDY_MAX_ORDER,
	};
	for (uint64_t i = 0; i < npages; i++)
		pages[i] = (struct page){ .flags = PG_RESERVED };
}

void buddy_limit_order(struct buddy *b, unsigned int max_order)
{
	kassert(max_order <= BUDDY_MAX_ORDER);
	kassert(b->stats.managed_pages == 0);
	b->max_order = max_order;
}

void buddy_set_poison(struct buddy *b, buddy_poison_fn poison)
{
	b->poison = poison;
}

/* Largest order <= max_order at which pfn is aligned and fits before end. */
static unsigned int fit_order(const struct buddy *b, uint64_t pfn,
			      uint64_t end)
{
	unsigned int order = b->max_order;

	while (order > 0 && ((pfn & ORDER_MASK(order)) ||
			     end - pfn < ORDER_PAGES(order)))
		order--;
	return order;
}

void buddy_add_range(struct buddy *b, uint64_t pfn_start, uint64_t pfn_end)
{
	if (pfn_start > pfn_end || pfn_start < b->first_pfn ||
	    pfn_end - b->first_pfn > b->npages)
		panic("buddy: add_range [%#llx-%#llx) outside the page array "
		      "[%#llx-%#llx)", (unsigned long long)pfn_start,
		      (unsigned long long)pfn_end,
		      (unsigned long long)b->first_pfn,
		      (unsigned long long)(b->first_pfn + b->npages));
	for (uint64_t pfn = pfn_start; pfn < pfn_end; pfn++) {
		struct page *p = pfn_page(b, pfn);

		if (!(p->flags & PG_RESERVED))
			panic("buddy: add_range [%#llx-%#llx): pfn %#llx is "
			      "already managed", (unsigned long long)pfn_start,
			      (unsigned long long)pfn_end,
			      (unsigned long long)pfn);
		p->flags = 0;
	}
	b->stats.managed_pages += pfn_end - pfn_start;
	for (uint64_t pfn = pfn_start; pfn < pfn_end;) {
		unsigned int order = fit_order(b, pfn, pfn_end);

		free_block(b, pfn, order);
		pfn += ORDER_PAGES(order);
	}
}

/* lab buddy/split: begin (docs/labs/README.md) */
uint64_t buddy_alloc(struct buddy *b, unsigned int order, unsigned int owner)
{
	unsigned int o = order;
	struct page *p;
	uint64_t pfn;

	kassert(owner < PAGE_OWNER_COUNT);
	while (o <= b->max_order && !b->free_list[o])
		o++;
	if (order > b->max_order || o > b->max_order) {
		b->stats.failures++;
		return BUDDY_NO_PFN;
	}
	p = b->free_list[o];
	unmark_free(b, p, o);
	pfn = page_pfn(b, p);
	/* Keep the lower half, give the upper halves back, one per order. */
	while (o > order) {
		o--;
		mark_free(b, pfn_page(b, pfn + ORDER_PAGES(o)), o);
		b->stats.splits++;
	}
	p->flags = PG_HEAD;
	p->order = (uint8_t)order;
	p->owner = (uint8_t)owner;
	set_page_count(p, 1);
	b->stats.allocs++;
	return pfn;
}
/* lab buddy/split: end */

static __noreturn void bad_free(uint64_t pfn, unsigned int order,
				const char *why, void *caller)
{
	panic("buddy: bad free of pfn %#llx (phys %#llx) order %u: %s, "
	      "caller %p", (unsigned long long)pfn,
	      (unsigned long long)PFN_PHYS(pfn), order, why, caller);
}

/* True if pfn lies inside a free block (whose head may be elsewhere). */
static bool inside_free_block(const struct buddy *b, uint64_t pfn)
{
	for (unsigned int o = 0; o <= b->max_order; o++) {
		uint64_t head = pfn & ~ORDER_MASK(o);
		const struct page *p;

		if (!in_array(b, head))
			break;
		p = pfn_page(b, head);
		if ((p->flags & PG_FREE) && p->order == o)
			return true;
	}
	return false;
}

/* noinline: the return address must be our caller's, for the report. */
__attribute__((noinline)) void buddy_free(struct buddy *b, uint64_t pfn,
					  unsigned int order)
{
	void *caller = __builtin_return_address(0);
	struct page *p;

	if (order > b->max_order)
		bad_free(pfn, order, "order above the maximum", caller);
	if (!in_array(b, pfn))
		bad_free(pfn, order, "outside managed RAM", caller);
	if (pfn & ORDER_MASK(order))
		bad_free(pfn, order, "pfn not aligned to the order", caller);
	p = pfn_page(b, pfn);
	if (p->flags & PG_RESERVED)
		bad_free(pfn, order, "outside managed RAM (reserved frame)",
			 caller);
	if ((p->flags & PG_FREE) || inside_free_block(b, pfn))
		bad_free(pfn, order, "double free (frame already free)",
			 caller);
	if (!(p->flags & PG_HEAD))
		bad_free(pfn, order, "not the start of an allocated block",
			 caller);
	if (p->order != order)
		panic("buddy: bad free of pfn %#llx (phys %#llx) order %u: "
		      "wrong order, allocated with order %u, caller %p",
		      (unsigned long long)pfn,
		      (unsigned long long)PFN_PHYS(pfn), order, p->order,
		      caller);

	p->flags = 0;
	p->owner = PAGE_OWNER_NONE;
	set_page_count(p, 0);
	b->stats.frees++;
	if (b->poison)
		b->poison(pfn, order);
	free_block(b, pfn, order);
}

/* Count a violation; print the first few. */
static __printf(2, 3) void check_fail(unsigned int *problems,
				      const char *fmt, ...)
{
	va_list ap;

	if ((*problems)++ >= BUDDY_CHECK_MAX_REPORTS)
		return;
	kprintf("buddy_check: ");
	va_start(ap, fmt);
	kvprintf(fmt, ap);
	va_end(ap);
	kprintf("\n");
}

/* Check free_list[order]; returns the number of blocks on it. */
static uint64_t check_list(const struct buddy *b, unsigned int order,
			   unsigned int *problems)
{
	uint64_t count = 0;
	const struct page *prev = NULL;

	for (const struct page *p = b->free_list[order]; p;
	     prev = p, p = p->list.next) {
		uint64_t pfn;

		if (p < b->pages || p >= b->pages + b->npages) {
			check_fail(problems, "order %u: list entry %p outside "
				   "the page array", order, (const void *)p);
			break;
		}
		if (count++ > b->npages) {
			check_fail(problems, "order %u: list loops", order);
			break;
		}
		pfn = page_pfn(b, p);
		if (p->list.prev != prev)
			check_fail(problems, "order %u: pfn %#llx has a bad "
				   "prev link", order,
				   (unsigned long long)pfn);
		if (!(p->flags & PG_FREE) || (p->flags & ~PG_FREE))
			check_fail(problems, "order %u: pfn %#llx on the free "
				   "list has flags %#x", order,
				   (unsigned long long)pfn, p->flags);
		if (p->order != order)
			check_fail(problems, "pfn %#llx on list %u has order "
				   "%u", (unsigned long long)pfn, order,
				   p->order);
		if (pfn & ORDER_MASK(order))
			check_fail(problems, "order %u: pfn %#llx unaligned",
				   order, (unsigned long long)pfn);
		if (b->first_pfn + b->npages - pfn < ORDER_PAGES(order))
			check_fail(problems, "order %u: block at pfn %#llx "
				   "runs past the page array", order,
				   (unsigned long long)pfn);
	}
	return count;
}

unsigned int buddy_check(const struct buddy *b)
{
	unsigned int problems = 0;
	uint64_t total = 0, blocks = 0, heads = 0, covered = 0;

	for (unsigned int o = 0; o <= BUDDY_MAX_ORDER; o++) {
		uint64_t n = check_list(b, o, &problems);

		if (o > b->max_order && n)
			check_fail(&problems, "order %u above max_order %u has "
				   "%llu blocks", o, b->max_order,
				   (unsigned long long)n);
		if (n != b->stats.nr_free[o])
			check_fail(&problems, "order %u: %llu blocks on the "
				   "list, counter says %llu", o,
				   (unsigned long long)n,
				   (unsigned long long)b->stats.nr_free[o]);
		total += n << o;
		blocks += n;
	}
	if (total != b->stats.free_pages)
		check_fail(&problems, "lists hold %llu free pages, counter "
			   "says %llu", (unsigned long long)total,
			   (unsigned long long)b->stats.free_pages);
	if (b->stats.free_pages > b->stats.managed_pages)
		check_fail(&problems, "%llu free pages but only %llu managed",
			   (unsigned long long)b->stats.free_pages,
			   (unsigned long long)b->stats.managed_pages);

	/* One pass over the descriptors: free blocks must be disjoint
	 * (a head never inside an earlier block) and fully merged. */
	for (uint64_t i = 0; i < b->npages; i++) {
		const struct page *p = &b->pages[i];
		uint64_t pfn = b->first_pfn + i, buddy;

		if (!(p->flags & PG_FREE)) {
			if (pfn < covered && p->flags)
				check_fail(&problems, "pfn %#llx inside a free "
					   "block has flags %#x",
					   (unsigned long long)pfn, p->flags);
			continue;
		}
		heads++;
		if (pfn < covered)
			check_fail(&problems, "free block at pfn %#llx "
				   "overlaps the one before",
				   (unsigned long long)pfn);
		if (p->order > BUDDY_MAX_ORDER)
			continue; /* already reported via its list */
		covered = MAX(covered, pfn + ORDER_PAGES(p->order));
		buddy = pfn ^ ORDER_PAGES(p->order);
		if (p->order < b->max_order && buddy > pfn &&
		    in_array(b, buddy)) {
			const struct page *bp = &b->pages[buddy - b->first_pfn];

			if ((bp->flags & PG_FREE) && bp->order == p->order)
				check_fail(&problems, "buddies %#llx and %#llx "
					   "of order %u are both free",
					   (unsigned long long)pfn,
					   (unsigned long long)buddy, p->order);
		}
	}
	if (heads != blocks)
		check_fail(&problems, "%llu pages marked free-block head, "
			   "%llu blocks on the lists",
			   (unsigned long long)heads,
			   (unsigned long long)blocks);
	if (problems > BUDDY_CHECK_MAX_REPORTS)
		kprintf("buddy_check: %u problems in all\n", problems);
	return problems;
}

void buddy_dump(const struct buddy *b)
{
	const struct buddy_stats *s = &b->stats;

	kprintf("buddy: order   blocks      pages        KiB\n");
	for (unsigned int o = 0; o <= b->max_order; o++) {
		uint64_t pages = s->nr_free[o] << o;

		kprintf("buddy: %5u %8llu %10llu %10llu\n", o,
			(unsigned long long)s->nr_free[o],
			(unsigned long long)pages,
			(unsigned long long)(PFN_PHYS(pages) >> 10));
	}
	kprintf("buddy: free %llu of %llu managed pages (%llu KiB)\n",
		(unsigned long long)s->free_pages,
		(unsigned long long)s->managed_pages,
		(unsigned long long)(PFN_PHYS(s->free_pages) >> 10));
	kprintf("buddy: allocs %llu frees %llu failures %llu splits %llu "
		"merges %llu\n", (unsigned long long)s->allocs,
		(unsigned long long)s->frees,
		(unsigned long long)s->failures,
		(unsigned long long)s->splits, (unsigned long long)s->merges);
}
