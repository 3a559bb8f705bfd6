/*
 * pagefile: deterministic files behind the page cache (see pagefile.h).
 */
#include "lib/atomic.h"
#include "lib/cycles.h"
#include "workloads/pagefile.h"

static bool pagefile_read_page(void *file, uint64_t index, void *buf)
{
	struct pagefile *f = file;
	uint64_t *w = buf;

	if (index >= f->size_pages)
		return false;
	if (f->latency_cycles) {
		uint64_t t0 = cycles_now();

		while (cycles_now() - t0 < f->latency_cycles)
			cpu_relax();
	}
	for (unsigned i = 0; i < PAGE_SIZE / sizeof(*w); i++)
		w[i] = pagefile_word(f->id, index, i);
	atomic_fetch_add_relaxed(&f->reads, 1);
	return true;
}

const struct backing_store pagefile_store = {
	.read_page = pagefile_read_page,
};

bool pagefile_page_ok(uint32_t id, uint64_t index, const void *data)
{
	const uint64_t *w = data;

	for (unsigned i = 0; i < PAGE_SIZE / sizeof(*w); i++)
		if (w[i] != pagefile_word(id, index, i))
			return false;
	return true;
}

bool pagefile_page_spot_ok(uint32_t id, uint64_t index, const void *data)
{
	const uint64_t *w = data;
	const unsigned last = PAGE_SIZE / sizeof(*w) - 1;

	return w[0] == pagefile_word(id, index, 0) &&
	       w[last / 2] == pagefile_word(id, index, last / 2) &&
	       w[last] == pagefile_word(id, index, last);
}
