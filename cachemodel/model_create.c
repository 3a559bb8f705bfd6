/*
 * Creation of the cache-model engine: a profile checked (every field the
 * engine relies on within its bounds), a model made for it with every
 * level, buffer and bus empty, and destroyed.
 */
#include <stdlib.h>
#include <string.h>
#include "cachemodel/model_internal.h"

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
	if (p->l1_fill > CM_LINE_SIZE)
		return "l1_fill must be 0..64";
	if (p->prefetch_ahead > CM_MAX_PREFETCH_AHEAD)
		return "prefetch_ahead must be 0..32";
	if (p->llc_inclusive > 1 || p->prefetch_next > 1)
		return "llc_inclusive and prefetch_next must be 0 or 1";
	if (p->llc_cpus && p->llc_inclusive)
		return "llc_cpus (an LLC per group of CPUs) needs "
		       "llc_inclusive 0";
	return NULL;
}

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
	m->llc_cpus = p->llc_cpus && p->llc_cpus < ncpus ? p->llc_cpus : ncpus;
	m->nllc = (ncpus + m->llc_cpus - 1) / m->llc_cpus;
	m->llc = aligned_alloc(HOST_LINE_BYTES, m->nllc * sizeof(*m->llc));
	if (m->llc)
		memset(m->llc, 0, m->nllc * sizeof(*m->llc));
	m->bytes += m->nllc * sizeof(*m->llc);
	ok = m->bus != NULL && m->cpu != NULL && m->llc != NULL;
	for (unsigned d = 0; ok && d < m->nllc; d++)
		ok = level_init(m, &m->llc[d].lv, &p->llc);
	m->bytes += ncpus * sizeof(*m->cpu);
	if (ok && p->llc_inclusive && level_present(&m->llc[0].lv)) {
		size_t ways = (size_t)m->llc[0].lv.sets * m->llc[0].lv.ways;

		m->llc_sharers = calloc(ways, sizeof(*m->llc_sharers));
		m->bytes += ways * sizeof(*m->llc_sharers);
		ok = m->llc_sharers != NULL;
	}
	for (unsigned c = 0; ok && c < ncpus; c++) {
		ok = level_init(m, &m->cpu[c].l1, &p->l1d) &&
		     level_init(m, &m->cpu[c].l2, &p->l2);
		for (unsigned k = 0; k < WAY_HINTS; k++)
			m->cpu[c].hint[k].line = NO_LINE;
		for (unsigned k = 0; k < PF_RECENT; k++)
			m->cpu[c].pf_recent[k].line = NO_LINE;
		m->cpu[c].last_end = NO_LINE;
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
	for (unsigned d = 0; m->llc && d < m->nllc; d++)
		level_free(&m->llc[d].lv);
	free(m->llc);
	free(m->llc_sharers);
	for (unsigned i = 0; i < TYPE_CHUNKS; i++)
		free(m->types[i]);
	free(m);
}
