/*
 * Memory types of the cache model: the type of every page (a lazily
 * allocated map, read lock-free by the fast path), and a type change,
 * which evicts the range's lines from every cache and WC buffer
 * (cachemodel/model.h, invariant 6).
 */
#include <stdlib.h>
#include "cachemodel/model_internal.h"

#define PAGES_PER_CHUNK (1u << PAGES_PER_CHUNK_SHIFT)

static const char *const type_names[CM_NTYPES] = {
	[CM_WB] = "WB", [CM_WT] = "WT", [CM_WC] = "WC",
	[CM_UC] = "UC", [CM_UC_MINUS] = "UC-", [CM_WP] = "WP",
};

const char *cm_memtype_name(enum cm_memtype t)
{
	return (unsigned)t < CM_NTYPES ? type_names[t] : "?";
}

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

static bool line_in(uint64_t line, uint64_t first, uint64_t last)
{
	return line >= first && line <= last;
}

void evict_range(struct cm_model *m, unsigned cpu, uint64_t first,
		 uint64_t last)
{
	struct level *lv[3 * CM_MAX_CPUS];
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
	for (unsigned d = 0; d < m->nllc; d++)
		lv[n++] = &m->llc[d].lv;
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
