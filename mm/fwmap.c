/*
 * Physical memory map sanitiser: see mm/fwmap.h for the contract.
 *
 * The map is kept sorted and non-overlapping at all times; every input
 * entry and every reservation goes through one operation, fwmap_insert(),
 * which lays a typed range over the map and lets the more restrictive type
 * win on each overlapping piece. Maps are small (tens of entries) and this
 * runs once at boot, so the code prefers obviousness over speed: it
 * re-searches the map after each step instead of tracking indices.
 *
 * Rule for running out of room: an address range the map does not list is
 * unusable, so dropping a piece never makes reserved memory usable. When a
 * restrictive range must split an available entry and there is no room,
 * the available entry is truncated first, so the worst case is lost RAM.
 */
#include <stdarg.h>
#include "lib/assert.h"
#include "lib/compiler.h"
#include "lib/kprintf.h"
#include "lib/string.h"
#include "mm/fwmap.h"
#include "mm/page.h"

/* Room for "entry N" in reports. */
#define FWMAP_NAME_LEN 32

/* Ranks for the overlap rule: a higher rank wins. Firmware's verdicts beat
 * the kernel's carve-outs, which beat available. */
static unsigned int fwmap_rank(uint32_t type)
{
	switch (type) {
	case FWMAP_AVAILABLE:
		return 0;
	case FWMAP_LOWMEM:
		return 1;
	case FWMAP_BOOTALLOC:
		return 2;
	case FWMAP_MODULE:
		return 3;
	case FWMAP_BOOTINFO:
		return 4;
	case FWMAP_KERNEL:
		return 5;
	case FWMAP_ACPI_RECLAIMABLE:
		return 6;
	case FWMAP_ACPI_NVS:
		return 8;
	case FWMAP_BAD:
		return 9;
	case FWMAP_BEYOND_WIDTH:
		return 10;
	case FWMAP_RESERVED:
	default:
		return 7;
	}
}

const char *fwmap_type_name(uint32_t type)
{
	switch (type) {
	case FWMAP_AVAILABLE:
		return "available";
	case FWMAP_RESERVED:
		return "reserved";
	case FWMAP_ACPI_RECLAIMABLE:
		return "ACPI reclaimable";
	case FWMAP_ACPI_NVS:
		return "ACPI NVS";
	case FWMAP_BAD:
		return "bad RAM";
	case FWMAP_LOWMEM:
		return "low memory";
	case FWMAP_KERNEL:
		return "kernel";
	case FWMAP_BOOTINFO:
		return "boot info";
	case FWMAP_MODULE:
		return "module";
	case FWMAP_BOOTALLOC:
		return "boot alloc";
	case FWMAP_BEYOND_WIDTH:
		return "beyond MAXPHYADDR";
	default:
		return "unknown";
	}
}

/* Report a problem unless the map is quiet (the counters always count). */
static __printf(2, 3) void fwmap_report(const struct fwmap *map,
					 const char *fmt, ...)
{
	va_list ap;

	if (map->quiet)
		return;
	va_start(ap, fmt);
	kvprintf(fmt, ap);
	va_end(ap);
}

static uint64_t entry_end(const struct fwmap_entry *e)
{
	return e->base + e->len;
}

static void set_range(struct fwmap_entry *e, uint64_t base, uint64_t end,
		      uint32_t type)
{
	kassert(base < end);
	e->base = base;
	e->len = end - base;
	e->type = type;
}

static void remove_at(struct fwmap *map, size_t i)
{
	memmove(&map->entries[i], &map->entries[i + 1],
		(map->n - i - 1) * sizeof(map->entries[0]));
	map->n--;
}

/*
 * Put [base, end) of type at index i, where it fits between entries i-1
 * and i without overlapping either. Extends a same-type neighbour when
 * adjacent, so merging never needs a free slot. Returns false (and reports)
 * if the piece had to be dropped because the map is full.
 */
static bool put(struct fwmap *map, size_t i, uint64_t base, uint64_t end,
		uint32_t type)
{
	struct fwmap_entry *e = map->entries;

	kassert(i <= map->n);
	kassert(i == 0 || entry_end(&e[i - 1]) <= base);
	kassert(i == map->n || end <= e[i].base);
	if (i > 0 && entry_end(&e[i - 1]) == base && e[i - 1].type == type) {
		e[i - 1].len += end - base;
		map->stats.merged++;
		if (i < map->n && e[i].base == end && e[i].type == type) {
			e[i - 1].len += e[i].len;
			remove_at(map, i);
			map->stats.merged++;
		}
		return true;
	}
	if (i < map->n && e[i].base == end && e[i].type == type) {
		e[i].len += e[i].base - base;
		e[i].base = base;
		map->stats.merged++;
		return true;
	}
	if (map->n == map->cap) {
		map->stats.overflow++;
		fwmap_report(map, "fwmap: map full (%zu entries), dropping "
			      "[%#llx-%#llx) %s\n", map->cap,
			      (unsigned long long)base,
			      (unsigned long long)end,
			      fwmap_type_name(type));
		return false;
	}
	memmove(&e[i + 1], &e[i], (map->n - i) * sizeof(e[0]));
	set_range(&e[i], base, end, type);
	map->n++;
	return true;
}

/* Give [cur, seg) inside entry i the (more restrictive) type. */
static bool override(struct fwmap *map, size_t i, uint64_t cur,
		     uint64_t seg, uint32_t type)
{
	struct fwmap_entry *e = &map->entries[i];
	uint64_t eb = e->base, ee = entry_end(e);
	uint32_t old = e->type;
	bool left = eb < cur, right = seg < ee;
	bool ok = true;

	kassert(eb <= cur && cur < seg && seg <= ee);
	if (!left && !right) {
		e->type = type;
	} else if (left && !right) {
		set_range(e, eb, cur, old);
		ok = put(map, i + 1, cur, seg, type);
	} else if (!left && right) {
		set_range(e, seg, ee, old);
		ok = put(map, i, cur, seg, type);
	} else {
		/* Truncate first: without room, the old right part and then
		 * the new piece are dropped, never left overlapping. */
		set_range(e, eb, cur, old);
		ok = put(map, i + 1, seg, ee, old);
		ok &= put(map, i + 1, cur, seg, type);
	}
	return ok;
}

/* Index of the first entry that ends above addr (map->n if none). */
static size_t find_from(const struct fwmap *map, uint64_t addr)
{
	size_t i = 0;

	while (i < map->n && entry_end(&map->entries[i]) <= addr)
		i++;
	return i;
}

static void coalesce(struct fwmap *map)
{
	size_t i = 0;

	while (i + 1 < map->n) {
		struct fwmap_entry *a = &map->entries[i];
		struct fwmap_entry *b = a + 1;

		if (entry_end(a) == b->base && a->type == b->type) {
			a->len += b->len;
			remove_at(map, i + 1);
			map->stats.merged++;
		} else {
			i++;
		}
	}
}

/* Lay [base, end) of type over the map; the higher rank wins per piece. */
/* lab fwmap/insert: begin (docs/labs/README.md) */
static bool fwmap_insert(struct fwmap *map, uint64_t base, uint64_t end,
			  uint32_t type)
{
	uint64_t cur = base;
	bool ok = true;

	while (cur < end) {
		size_t i = find_from(map, cur);
		struct fwmap_entry *e = &map->entries[i];
		uint64_t seg;

		if (i == map->n || e->base >= end) {
			ok &= put(map, i, cur, end, type);
			break;
		}
		if (e->base > cur) {
			seg = e->base;
			ok &= put(map, i, cur, seg, type);
		} else {
			seg = MIN(entry_end(e), end);
			if (fwmap_rank(type) > fwmap_rank(e->type))
				ok &= override(map, i, cur, seg, type);
		}
		cur = seg;
	}
	coalesce(map);
	return ok;
}
/* lab fwmap/insert: end */

/*
 * End of [base, base + len), clipped below 2^64 (with a report). what
 * names the range in the report ("entry 3", "reservation").
 */
static uint64_t clipped_end(struct fwmap *map, const char *what,
			    uint64_t base, uint64_t len)
{
	if (len <= UINT64_MAX - base)
		return base + len;
	map->stats.wrapped++;
	fwmap_report(map, "fwmap: %s [%#llx +%#llx) wraps past 2^64, "
		      "clipped to end %#llx\n", what,
		      (unsigned long long)base, (unsigned long long)len,
		      (unsigned long long)UINT64_MAX);
	return UINT64_MAX;
}

void fwmap_init(struct fwmap *map, struct fwmap_entry *storage,
		 size_t cap)
{
	memset(map, 0, sizeof(*map));
	map->entries = storage;
	map->cap = cap;
}

unsigned int fwmap_problems(const struct fwmap *map)
{
	const struct fwmap_stats *s = &map->stats;

	return s->zero_len + s->wrapped + s->overlaps + s->unsorted +
	       s->unknown_type + s->overflow;
}

/* Report every earlier input entry that [base, end) overlaps. */
static void report_overlaps(struct fwmap *map,
			    const struct fwmap_entry *raw, size_t i,
			    uint64_t base, uint64_t end, uint32_t type)
{
	for (size_t j = 0; j < i; j++) {
		uint64_t jb = raw[j].base, je;
		uint32_t jt = raw[j].type;
		const char *winner;

		if (raw[j].len == 0)
			continue;
		je = raw[j].len <= UINT64_MAX - jb ? jb + raw[j].len
						   : UINT64_MAX;
		if (je <= base || end <= jb)
			continue;
		if (jt < FWMAP_AVAILABLE || jt > FWMAP_BAD)
			jt = FWMAP_RESERVED;
		map->stats.overlaps++;
		if (jt == type)
			winner = "same type, merged";
		else if (fwmap_rank(type) > fwmap_rank(jt))
			winner = fwmap_type_name(type);
		else
			winner = fwmap_type_name(jt);
		fwmap_report(map, "fwmap: entry %zu [%#llx-%#llx) %s "
			      "overlaps entry %zu [%#llx-%#llx) %s, %s%s\n",
			      i, (unsigned long long)base,
			      (unsigned long long)end,
			      fwmap_type_name(type), j,
			      (unsigned long long)jb,
			      (unsigned long long)je, fwmap_type_name(jt),
			      winner, jt == type ? "" : " wins");
	}
}

unsigned int fwmap_sanitize(struct fwmap *map,
			     const struct fwmap_entry *raw, size_t nraw)
{
	size_t prev = 0; /* last entry with a length, for the order check */
	bool have_prev = false;

	map->n = 0;
	memset(&map->stats, 0, sizeof(map->stats));
	for (size_t i = 0; i < nraw; i++) {
		uint64_t base = raw[i].base, end;
		uint32_t type = raw[i].type;

		if (raw[i].len == 0) {
			map->stats.zero_len++;
			fwmap_report(map, "fwmap: entry %zu at %#llx has "
				      "zero length, dropped\n", i,
				      (unsigned long long)base);
			continue;
		}
		if (type < FWMAP_AVAILABLE || type > FWMAP_BAD) {
			map->stats.unknown_type++;
			fwmap_report(map, "fwmap: entry %zu at %#llx has "
				      "unknown type %u, treated as reserved\n",
				      i, (unsigned long long)base, type);
			type = FWMAP_RESERVED;
		}
		if (have_prev && base < raw[prev].base) {
			map->stats.unsorted++;
			fwmap_report(map, "fwmap: entry %zu at %#llx is "
				      "below entry %zu at %#llx (unsorted), "
				      "sorted\n", i, (unsigned long long)base,
				      prev, (unsigned long long)raw[prev].base);
		}
		have_prev = true;
		prev = i;
		if (raw[i].len > UINT64_MAX - base) {
			char what[FWMAP_NAME_LEN];

			ksnprintf(what, sizeof(what), "entry %zu", i);
			end = clipped_end(map, what, base, raw[i].len);
		} else {
			end = base + raw[i].len;
		}
		if (end == base)
			continue; /* base was UINT64_MAX: nothing left */
		report_overlaps(map, raw, i, base, end, type);
		fwmap_insert(map, base, end, type);
	}
	return fwmap_problems(map);
}

bool fwmap_reserve(struct fwmap *map, uint64_t base, uint64_t len,
		    uint32_t type)
{
	uint64_t end;

	/* Available would only fill holes, never carve anything out. */
	kassert(type != FWMAP_AVAILABLE);
	if (len == 0)
		return true;
	end = clipped_end(map, "reservation", base, len);
	if (end == base)
		return true;
	return fwmap_insert(map, base, end, type);
}

bool fwmap_next_usable(const struct fwmap *map, size_t *iter,
			uint64_t *base, uint64_t *end)
{
	while (*iter < map->n) {
		const struct fwmap_entry *e = &map->entries[(*iter)++];
		uint64_t b = e->base, en = ALIGN_DOWN(entry_end(e), PAGE_SIZE);

		if (e->type != FWMAP_AVAILABLE)
			continue;
		if (b > UINT64_MAX - (PAGE_SIZE - 1))
			continue; /* rounding up would wrap */
		b = ALIGN_UP(b, PAGE_SIZE);
		if (b >= en)
			continue;
		*base = b;
		*end = en;
		return true;
	}
	return false;
}

uint64_t fwmap_usable_bytes(const struct fwmap *map)
{
	uint64_t total = 0, b, e;
	size_t it = 0;

	while (fwmap_next_usable(map, &it, &b, &e))
		total += e - b;
	return total;
}

void fwmap_dump(const struct fwmap *map)
{
	for (size_t i = 0; i < map->n; i++) {
		const struct fwmap_entry *e = &map->entries[i];

		if (e->type == FWMAP_BEYOND_WIDTH) {
			/* Derived by the kernel, not said by firmware: no
			 * address here can be generated, so no size. */
			kprintf("fwmap: [0x%016llx-2^64) %-16s (kernel: no "
				"address the CPU can generate)\n",
				(unsigned long long)e->base,
				fwmap_type_name(e->type));
			continue;
		}
		kprintf("fwmap: [0x%016llx-0x%016llx) %-16s %llu KiB\n",
			(unsigned long long)e->base,
			(unsigned long long)entry_end(e),
			fwmap_type_name(e->type),
			(unsigned long long)(e->len >> 10));
	}
	kprintf("fwmap: %zu entries, %llu KiB usable, %u problems\n", map->n,
		(unsigned long long)(fwmap_usable_bytes(map) >> 10),
		fwmap_problems(map));
}

enum fwmap_range_verdict fwmap_check_range(const struct fwmap *map,
					   uint64_t base, uint64_t len,
					   unsigned int phys_bits)
{
	uint64_t end;
	bool usable = false;

	if (len == 0 || len > UINT64_MAX - base)
		return FWMAP_RANGE_EMPTY;
	end = base + len;
	if (phys_bits < 64 && end > (1ull << phys_bits))
		return FWMAP_RANGE_BEYOND_WIDTH;
	for (size_t i = find_from(map, base); i < map->n; i++) {
		const struct fwmap_entry *e = &map->entries[i];

		if (e->base >= end)
			break;
		if (e->type == FWMAP_KERNEL || e->type == FWMAP_BOOTALLOC)
			return FWMAP_RANGE_KERNEL;
		if (e->type == FWMAP_BEYOND_WIDTH)
			return FWMAP_RANGE_BEYOND_WIDTH;
		if (e->type == FWMAP_AVAILABLE)
			usable = true;
	}
	return usable ? FWMAP_RANGE_USABLE : FWMAP_RANGE_OK;
}

bool fwmap_range_refused(enum fwmap_range_verdict v)
{
	return v == FWMAP_RANGE_EMPTY || v == FWMAP_RANGE_BEYOND_WIDTH ||
	       v == FWMAP_RANGE_KERNEL;
}

const char *fwmap_range_verdict_name(enum fwmap_range_verdict v)
{
	switch (v) {
	case FWMAP_RANGE_OK:
		return "outside RAM";
	case FWMAP_RANGE_USABLE:
		return "in usable RAM";
	case FWMAP_RANGE_EMPTY:
		return "empty or wrapping past 2^64";
	case FWMAP_RANGE_BEYOND_WIDTH:
		return "beyond the CPU's physical address width";
	case FWMAP_RANGE_KERNEL:
		return "overlapping the kernel";
	}
	return "?";
}
