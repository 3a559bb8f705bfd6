/*
 * Setting up the ia64 model; see machine.h.
 */
#include "arch/ia64/machine.h"
#include "lib/string.h"

struct ia64_ptce_info ia64_default_ptce(void)
{
	/* Two nested loops over the TC's sets, as PAL_PTCE_INFO may
	 * describe them: 4 outer steps of 16 sets each. */
	struct ia64_ptce_info p = {
		.base = 0,
		.count = { 4, IA64_TC_SETS / 4 },
		.stride = { 0, 1ull << IA64_PTCE_SET_SHIFT },
	};
	return p;
}

static void set_fault(struct ia64_machine *m, const char *msg)
{
	size_t n = strlen(msg);

	if (n >= sizeof(m->fault))
		n = sizeof(m->fault) - 1;
	memcpy(m->fault, msg, n);
	m->fault[n] = '\0';
}

bool ia64_machine_init(struct ia64_machine *m, const struct ia64_config *cfg,
		       uint64_t *bitmap, uint64_t *flushmap)
{
	struct ia64_config c = *cfg;
	uint32_t ids;

	if (c.ncpus < 1 || c.ncpus > IA64_MAX_CPUS) {
		set_fault(m, "ia64 model: CPU count out of range");
		return false;
	}
	if (c.rid_bits < IA64_RID_BITS_MIN || c.rid_bits > IA64_RID_BITS_MAX) {
		set_fault(m, "ia64 model: region-ID width not 18..24 bits");
		return false;
	}
	ids = 1u << (c.rid_bits - IA64_RID_REGION_BITS);
	if (c.ctx_limit && (c.ctx_limit <= IA64_FIRST_CONTEXT + IA64_MAX_MMS ||
			    c.ctx_limit > ids)) {
		set_fault(m, "ia64 model: context limit too small or too large");
		return false;
	}
	if (!c.ptce.count[0] && !c.ptce.count[1])
		c.ptce = ia64_default_ptce();
	if (!c.ptce.count[0] || !c.ptce.count[1] ||
	    (uint64_t)c.ptce.count[0] * c.ptce.count[1] > 4 * IA64_TC_SETS) {
		set_fault(m, "ia64 model: ptc.e loop counts out of range");
		return false;
	}
	memset(m, 0, sizeof(*m));
	m->cfg = c;
	m->max_ctx = c.ctx_limit ? c.ctx_limit : ids;
	m->bitmap = bitmap;
	m->flushmap = flushmap;
	memset(bitmap, 0, IA64_CTX_WORDS(c.rid_bits) * sizeof(uint64_t));
	memset(flushmap, 0, IA64_CTX_WORDS(c.rid_bits) * sizeof(uint64_t));
	bitmap[0] = 1; /* context 0: the kernel's */
	m->next = IA64_FIRST_CONTEXT;
	m->limit = 0;
	for (unsigned i = 0; i < c.ncpus; i++) {
		m->cpus[i].active = IA64_NO_MM;
		m->cpus[i].kthread = true;
		for (unsigned r = 0; r < IA64_REGIONS; r++)
			m->cpus[i].rr_rid[r] =
				ia64_rid(IA64_KERNEL_CONTEXT, r);
	}
	return true;
}
