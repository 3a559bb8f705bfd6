/*
 * MTRR decoding, lookup and the MTRR x PAT combination (see mtrr.h).
 * Pure computation on values arch/x86_64/pat.c reads from the MSRs.
 */
#include "arch/x86_64/mtrr.h"
#include "lib/assert.h"
#include "lib/compiler.h"
#include "lib/kprintf.h"

bool mtrr_type_valid(unsigned int encoding)
{
	return encoding != MEMTYPE_UC_MINUS && memtype_valid(encoding);
}

/* ---- MTRRs -------------------------------------------------------------- */
/* The fixed-range MSRs (arch/x86_64/msr.h); the 4K ones are consecutive. */
const uint32_t mtrr_fixed_msr[MTRR_NUM_FIXED_MSRS] = {
	MSR_MTRR_FIX64K_00000,
	MSR_MTRR_FIX16K_80000, MSR_MTRR_FIX16K_A0000,
	MSR_MTRR_FIX4K_C0000 + 0, MSR_MTRR_FIX4K_C0000 + 1,
	MSR_MTRR_FIX4K_C0000 + 2, MSR_MTRR_FIX4K_C0000 + 3,
	MSR_MTRR_FIX4K_C0000 + 4, MSR_MTRR_FIX4K_C0000 + 5,
	MSR_MTRR_FIX4K_C0000 + 6, MSR_MTRR_FIX4K_C0000 + 7,
};

/* The three granularities of the fixed ranges, lowest address first. */
static const struct {
	uint64_t start;		/* first byte covered */
	uint64_t unit;		/* bytes per range */
	unsigned int first;	/* global index of its first range */
	unsigned int count;	/* ranges of this granularity */
} fixed_seg[] = {
	{ 0x00000, KiB(64), 0, 8 },
	{ 0x80000, KiB(16), 8, 16 },
	{ 0xC0000, KiB(4), 24, 64 },
};

BUILD_ASSERT(8 + 16 + 64 == MTRR_NUM_FIXED_RANGES);

void mtrr_fixed_range(unsigned int i, uint64_t *start, uint64_t *len)
{
	unsigned int k;

	kassert(i < MTRR_NUM_FIXED_RANGES);
	for (k = ARRAY_SIZE(fixed_seg); k-- > 0;) {
		if (i >= fixed_seg[k].first) {
			*start = fixed_seg[k].start +
				 (i - fixed_seg[k].first) * fixed_seg[k].unit;
			*len = fixed_seg[k].unit;
			return;
		}
	}
}

/* Global index of the fixed range holding phys (phys < 1 MiB). */
static unsigned int fixed_index(uint64_t phys)
{
	unsigned int k;

	kassert(phys < MTRR_FIXED_END);
	for (k = ARRAY_SIZE(fixed_seg); k-- > 0;)
		if (phys >= fixed_seg[k].start)
			break;
	return fixed_seg[k].first +
	       (unsigned int)((phys - fixed_seg[k].start) / fixed_seg[k].unit);
}

uint8_t mtrr_fixed_type(const struct mtrr_state *s, unsigned int i)
{
	kassert(i < MTRR_NUM_FIXED_RANGES);
	return (uint8_t)(s->fixed[i / MTRR_RANGES_PER_FIXED] >>
			 ((i % MTRR_RANGES_PER_FIXED) * 8));
}

void mtrr_state_init(struct mtrr_state *s, uint64_t cap, uint64_t def_type,
		     unsigned int phys_addr_bits)
{
	unsigned int vcnt = (unsigned int)(cap & MTRRCAP_VCNT_MASK);

	kassert(phys_addr_bits >= MTRR_MIN_PHYS_BITS &&
		phys_addr_bits <= MTRR_MAX_PHYS_BITS);
	*s = (struct mtrr_state){ 0 };
	s->vcnt = MIN(vcnt, (unsigned int)MTRR_MAX_VAR_RANGES);
	s->fixed_supported = cap & MTRRCAP_FIX;
	s->wc_supported = cap & MTRRCAP_WC;
	s->enabled = def_type & MTRR_DEF_TYPE_E;
	s->fixed_enabled = def_type & MTRR_DEF_TYPE_FE;
	s->default_type = (uint8_t)(def_type & MTRR_DEF_TYPE_MASK);
	s->phys_addr_bits = phys_addr_bits;
}

uint64_t mtrr_addr_mask(const struct mtrr_state *s)
{
	kassert(s->phys_addr_bits >= MTRR_MIN_PHYS_BITS &&
		s->phys_addr_bits <= MTRR_MAX_PHYS_BITS);
	return ((1ull << s->phys_addr_bits) - 1) &
	       ~((1ull << MTRR_ADDR_SHIFT) - 1);
}

bool mtrr_var_enabled(const struct mtrr_state *s, unsigned int n)
{
	kassert(s->vcnt <= MTRR_MAX_VAR_RANGES);
	return n < s->vcnt && (s->var[n].mask & MTRR_PHYSMASK_VALID);
}

bool mtrr_var_extent(const struct mtrr_state *s, unsigned int n,
		     uint64_t *base, uint64_t *size)
{
	uint64_t am = mtrr_addr_mask(s);
	uint64_t m, low;

	kassert(n < MTRR_MAX_VAR_RANGES);
	m = s->var[n].mask & am;
	*base = s->var[n].base & am;
	*size = 0;
	if (m == 0) {		/* matches every address */
		*size = 1ull << s->phys_addr_bits;
		return true;
	}
	low = m & -m;
	/* Contiguous: every address bit from the lowest set one up is set. */
	if (m != (am & ~(low - 1)))
		return false;
	*size = low;
	return true;
}

/* Bit for encoding t in a set of matched MTRR types. */
#define TYPE_BIT(t) (1u << (t))

enum memtype mtrr_type_of(const struct mtrr_state *s, uint64_t phys)
{
	uint64_t am;
	unsigned int n, seen = 0;

	kassert(s->phys_addr_bits >= MTRR_MIN_PHYS_BITS &&
		s->phys_addr_bits <= MTRR_MAX_PHYS_BITS);
	kassert(phys < (1ull << s->phys_addr_bits));
	if (!s->enabled)
		return MEMTYPE_UC;
	if (phys < MTRR_FIXED_END && s->fixed_supported && s->fixed_enabled) {
		uint8_t t = mtrr_fixed_type(s, fixed_index(phys));

		return mtrr_type_valid(t) ? (enum memtype)t : MEMTYPE_UNDEFINED;
	}
	am = mtrr_addr_mask(s);
	for (n = 0; n < s->vcnt; n++) {
		uint64_t m = s->var[n].mask & am;
		unsigned int t;

		if (!mtrr_var_enabled(s, n))
			continue;
		if ((phys & m) != (s->var[n].base & m))
			continue;
		t = (unsigned int)(s->var[n].base & MTRR_PHYSBASE_TYPE_MASK);
		if (!mtrr_type_valid(t))
			return MEMTYPE_UNDEFINED;
		seen |= TYPE_BIT(t);
	}
	if (seen == 0)
		return mtrr_type_valid(s->default_type) ?
			       (enum memtype)s->default_type :
			       MEMTYPE_UNDEFINED;
	/* One type (possibly from several ranges): that type. */
	if ((seen & (seen - 1)) == 0)
		return (enum memtype)__builtin_ctz(seen);
	if (seen & TYPE_BIT(MEMTYPE_UC))
		return MEMTYPE_UC;
	if (seen == (TYPE_BIT(MEMTYPE_WT) | TYPE_BIT(MEMTYPE_WB)))
		return MEMTYPE_WT;
	return MEMTYPE_UNDEFINED;
}

#define MTRR_PAGE_SIZE (1ull << MTRR_ADDR_SHIFT)

/* The first range boundary above phys (below limit), or limit. */
static uint64_t next_boundary(const struct mtrr_state *s, uint64_t phys,
			      uint64_t limit)
{
	uint64_t next = limit, base, size;

	if (!s->enabled)
		return limit;
	if (phys < MTRR_FIXED_END && s->fixed_supported && s->fixed_enabled) {
		uint64_t start, len;

		mtrr_fixed_range(fixed_index(phys), &start, &len);
		return MIN(start + len, limit);
	}
	for (unsigned int n = 0; n < s->vcnt; n++) {
		if (!mtrr_var_enabled(s, n))
			continue;
		if (!mtrr_var_extent(s, n, &base, &size))
			return MIN(phys + MTRR_PAGE_SIZE, limit);
		if (base > phys)
			next = MIN(next, base);
		if (base + size > phys)
			next = MIN(next, base + size);
	}
	return next;
}

uint64_t mtrr_run_end(const struct mtrr_state *s, uint64_t phys,
		      uint64_t limit)
{
	enum memtype t = mtrr_type_of(s, phys);
	uint64_t end = phys;

	kassert(phys < limit && limit <= 1ull << s->phys_addr_bits);
	do
		end = next_boundary(s, end, limit);
	while (end < limit && mtrr_type_of(s, end) == t);
	return end;
}

/* ---- MTRR x PAT --------------------------------------------------------- */
/*
 * The SDM gives a 5 x 6 table; it follows from a few rules, applied in
 * order (tests/host/test_memtype.c checks them against the table itself):
 *  1. A PAT WC wins over every MTRR type.
 *  2. A UC on either side gives UC (except rule 1).
 *  3. PAT UC- is UC unless the MTRR asks for write-combining (WC, and
 *     also WP, which the processors treat the same way here).
 *  4. A WB on one side yields the other side's type.
 *  5. Left: MTRR WC/WT/WP with PAT WT/WP. With MTRR WC it is UC; among
 *     WT and WP the PAT's choice stands.
 */
enum memtype mtrr_pat_combine(enum memtype mtrr, enum memtype pat,
			      unsigned int *notes)
{
	unsigned int n = 0;
	enum memtype r;

	if (!mtrr_type_valid(mtrr) || !memtype_valid(pat)) {
		r = MEMTYPE_UNDEFINED;
	} else if (pat == MEMTYPE_WC) {
		r = MEMTYPE_WC;
	} else if (mtrr == MEMTYPE_UC) {
		r = MEMTYPE_UC;
		n = MEMTYPE_NOTE_FROM_MTRR_UC;
	} else if (pat == MEMTYPE_UC) {
		r = MEMTYPE_UC;
		n = MEMTYPE_NOTE_FROM_PAT_UC;
	} else if (pat == MEMTYPE_UC_MINUS) {
		if (mtrr == MEMTYPE_WC) {
			r = MEMTYPE_WC;
		} else if (mtrr == MEMTYPE_WP) {
			r = MEMTYPE_WC;
			n = MEMTYPE_NOTE_FORMERLY_UNDEFINED;
		} else {
			r = MEMTYPE_UC;
			n = MEMTYPE_NOTE_FROM_PAT_UC;
		}
	} else if (pat == MEMTYPE_WB) {
		r = mtrr;
	} else if (mtrr == MEMTYPE_WB) {
		r = pat;
	} else if (mtrr == MEMTYPE_WC) {
		r = MEMTYPE_UC;
		n = MEMTYPE_NOTE_FROM_PAT_UC | MEMTYPE_NOTE_FORMERLY_UNDEFINED;
	} else {
		kassert((mtrr == MEMTYPE_WT || mtrr == MEMTYPE_WP) &&
			(pat == MEMTYPE_WT || pat == MEMTYPE_WP));
		r = pat;
		if (mtrr != pat)
			n = MEMTYPE_NOTE_FORMERLY_UNDEFINED;
	}
	if (notes)
		*notes = n;
	return r;
}

/* ---- Dump --------------------------------------------------------------- */
#define DUMP_LINE_MAX	112
#define TYPE_STR_MAX	24

static const char *type_str(unsigned int raw, char buf[TYPE_STR_MAX])
{
	if (mtrr_type_valid(raw))
		return memtype_name((enum memtype)raw);
	ksnprintf(buf, TYPE_STR_MAX, "reserved(%u)", raw);
	return buf;
}

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

/* Size as "N GiB/MiB/KiB" in the largest unit that divides it exactly. */
static void size_str(uint64_t size, char *buf, size_t n)
{
	static const struct {
		unsigned int shift;
		const char *unit;
	} units[] = { { 30, "GiB" }, { 20, "MiB" }, { 10, "KiB" } };
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(units); k++) {
		if (size >= (1ull << units[k].shift) &&
		    IS_ALIGNED(size, 1ull << units[k].shift)) {
			ksnprintf(buf, n, "%llu %s",
				  (unsigned long long)(size >> units[k].shift),
				  units[k].unit);
			return;
		}
	}
	ksnprintf(buf, n, "%llu B", (unsigned long long)size);
}

static void dump_fixed(const struct mtrr_state *s,
		       void (*emit)(void *arg, const char *line), void *arg)
{
	char line[DUMP_LINE_MAX], tb[TYPE_STR_MAX];
	unsigned int i = 0;

	if (!s->fixed_supported || !s->fixed_enabled) {
		emit(arg, s->fixed_supported ? "fixed: disabled"
					     : "fixed: not supported");
		return;
	}
	while (i < MTRR_NUM_FIXED_RANGES) {
		uint8_t t = mtrr_fixed_type(s, i);
		uint64_t start, len, end;
		unsigned int j = i;

		/* Extend the run while the next range has the same type. */
		while (j + 1 < MTRR_NUM_FIXED_RANGES &&
		       mtrr_fixed_type(s, j + 1) == t)
			j++;
		mtrr_fixed_range(i, &start, &len);
		mtrr_fixed_range(j, &end, &len);
		end += len - 1;
		ksnprintf(line, sizeof(line), "fixed: %05llx-%05llx %s",
			  (unsigned long long)start, (unsigned long long)end,
			  type_str(t, tb));
		emit(arg, line);
		i = j + 1;
	}
}

void mtrr_dump(const struct mtrr_state *s,
	       void (*emit)(void *arg, const char *line), void *arg)
{
	char line[DUMP_LINE_MAX], tb[TYPE_STR_MAX], sz[TYPE_STR_MAX];
	unsigned int n, shown = 0;

	ksnprintf(line, sizeof(line),
		  "cap: variable=%u fixed=%s wc=%s maxphyaddr=%u", s->vcnt,
		  yes_no(s->fixed_supported), yes_no(s->wc_supported),
		  s->phys_addr_bits);
	emit(arg, line);
	ksnprintf(line, sizeof(line),
		  "def_type: enabled=%s fixed_enabled=%s default=%s%s",
		  yes_no(s->enabled), yes_no(s->fixed_enabled),
		  type_str(s->default_type, tb),
		  s->enabled ? "" : " (disabled: all memory is UC)");
	emit(arg, line);
	dump_fixed(s, emit, arg);
	for (n = 0; n < s->vcnt; n++) {
		uint64_t base, size;
		unsigned int t;

		if (!mtrr_var_enabled(s, n))
			continue;
		shown++;
		t = (unsigned int)(s->var[n].base & MTRR_PHYSBASE_TYPE_MASK);
		if (mtrr_var_extent(s, n, &base, &size)) {
			size_str(size, sz, sizeof(sz));
			ksnprintf(line, sizeof(line),
				  "var%u: base=0x%012llx size=0x%llx (%s) %s", n,
				  (unsigned long long)base,
				  (unsigned long long)size, sz,
				  type_str(t, tb));
		} else {
			ksnprintf(line, sizeof(line),
				  "var%u: base=0x%012llx mask=0x%012llx "
				  "(non-contiguous) %s",
				  n, (unsigned long long)base,
				  (unsigned long long)(s->var[n].mask &
						       mtrr_addr_mask(s)),
				  type_str(t, tb));
		}
		emit(arg, line);
	}
	ksnprintf(line, sizeof(line), "var: %u of %u enabled", shown, s->vcnt);
	emit(arg, line);
}

static void print_line(void *arg __unused, const char *line)
{
	kprintf("mtrr: %s\n", line);
}

void mtrr_print(const struct mtrr_state *s)
{
	mtrr_dump(s, print_line, NULL);
}
