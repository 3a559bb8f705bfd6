/*
 * Read-out of the cache model: a CPU's counters (plain or atomically
 * read), the cycles they stand for, skipping a paused stretch, and the
 * model's profile, size and CPU count.
 */
#include "cachemodel/model_internal.h"

const struct cm_stats *cm_stats(const struct cm_model *m, unsigned cpu)
{
	return &m->cpu[cpu].st;
}

void cm_stats_skip(struct cm_stats *base, const struct cm_stats *from,
		   const struct cm_stats *to)
{
	/* struct cm_stats is uint64_t counters only. */
	uint64_t *b = (uint64_t *)base;
	const uint64_t *f = (const uint64_t *)from, *t = (const uint64_t *)to;

	for (size_t i = 0; i < sizeof(*base) / sizeof(uint64_t); i++)
		b[i] += t[i] - f[i];
}

void cm_stats_read(const struct cm_model *m, unsigned cpu,
		   struct cm_stats *out)
{
	const uint64_t *from = (const uint64_t *)&m->cpu[cpu].st;
	uint64_t *to = (uint64_t *)out;

	_Static_assert(sizeof(*out) % sizeof(uint64_t) == 0,
		       "struct cm_stats holds only uint64_t counters");
	for (size_t k = 0; k < sizeof(*out) / sizeof(uint64_t); k++)
		to[k] = __atomic_load_n(&from[k], __ATOMIC_RELAXED);
}

uint64_t cm_busy_cycles(const struct cm_model *m, unsigned cpu)
{
	const struct cpu *c = &m->cpu[cpu];

	/* cpu_now() without the cycles slept through (model_internal.h). */
	return (__atomic_load_n(&c->st.insns, __ATOMIC_RELAXED) -
		__atomic_load_n(&c->origin_insns, __ATOMIC_RELAXED)) *
		       m->p.cpi_x100 / 100 +
	       __atomic_load_n(&c->st.mem_cycles, __ATOMIC_RELAXED) +
	       __atomic_load_n(&c->origin_cycles, __ATOMIC_RELAXED);
}

uint64_t cm_cycles(const struct cm_model *m, const struct cm_stats *s)
{
	return s->insns * m->p.cpi_x100 / 100 + s->mem_cycles;
}

const struct cm_profile *cm_profile(const struct cm_model *m)
{
	return &m->p;
}

unsigned cm_ncpus(const struct cm_model *m)
{
	return m->ncpus;
}

size_t cm_state_bytes(const struct cm_model *m)
{
	return m->bytes;
}
