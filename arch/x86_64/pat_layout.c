/*
 * The kernel's PAT layout and the paging-entry bits that select it (see
 * pat_layout.h). Pure computation.
 */
#include "arch/x86_64/pat_layout.h"
#include "lib/assert.h"
#include "lib/compiler.h"
#include "lib/kprintf.h"

/* ---- PAT ---------------------------------------------------------------- */
/*
 * The kernel's layout (Linux's). Entries 0-3 are what PWT/PCD alone
 * select, so they hold the common types: a paging entry without the PAT
 * bit can ask for WB, WC, UC- or UC. Entries 0-3 keep the power-on
 * meaning of PCD (UC- / UC) so code unaware of the PAT stays safe; only
 * PAT1 changes, from the power-on WT to WC. WP and WT, rarely wanted,
 * need the PAT bit.
 *
 *   index  PAT PCD PWT  type
 *     0     0   0   0   WB
 *     1     0   0   1   WC
 *     2     0   1   0   UC-
 *     3     0   1   1   UC
 *     4     1   0   0   WB
 *     5     1   0   1   WP
 *     6     1   1   0   UC-
 *     7     1   1   1   WT
 */
const enum memtype pat_layout[PAT_NUM_ENTRIES] = {
	MEMTYPE_WB, MEMTYPE_WC, MEMTYPE_UC_MINUS, MEMTYPE_UC,
	MEMTYPE_WB, MEMTYPE_WP, MEMTYPE_UC_MINUS, MEMTYPE_WT,
};

uint64_t pat_layout_msr_value(void)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < PAT_NUM_ENTRIES; i++) {
		kassert(memtype_valid(pat_layout[i]));
		v |= (uint64_t)pat_layout[i] << (i * PAT_ENTRY_BITS);
	}
	return v;
}

bool pat_decode(uint64_t value, enum memtype out[PAT_NUM_ENTRIES])
{
	bool ok = true;
	unsigned int i;

	for (i = 0; i < PAT_NUM_ENTRIES; i++) {
		unsigned int byte = (value >> (i * PAT_ENTRY_BITS)) & 0xffu;

		if ((byte & PAT_ENTRY_RESERVED_MASK) ||
		    !memtype_valid(byte & PAT_ENTRY_TYPE_MASK)) {
			out[i] = MEMTYPE_UNDEFINED;
			ok = false;
		} else {
			out[i] = (enum memtype)byte;
		}
	}
	return ok;
}

int pat_check_layout(uint64_t value, char *msg, size_t msg_size)
{
	enum memtype got[PAT_NUM_ENTRIES];
	unsigned int i;

	pat_decode(value, got);
	for (i = 0; i < PAT_NUM_ENTRIES; i++) {
		unsigned int raw;

		if (got[i] == pat_layout[i])
			continue;
		raw = (value >> (i * PAT_ENTRY_BITS)) & 0xffu;
		if (msg && got[i] == MEMTYPE_UNDEFINED)
			ksnprintf(msg, msg_size,
				  "PAT%u is reserved 0x%02x, expected %s", i,
				  raw, memtype_name(pat_layout[i]));
		else if (msg)
			ksnprintf(msg, msg_size, "PAT%u is %s, expected %s",
				  i, memtype_name(got[i]),
				  memtype_name(pat_layout[i]));
		return (int)i;
	}
	if (msg && msg_size)
		msg[0] = '\0';
	return -1;
}

/* ---- Paging-entry bits -------------------------------------------------- */
uint64_t pte_pat_bit(enum page_size size)
{
	switch (size) {
	case PAGE_SIZE_4K:
		return PTE_PAT_4K;
	case PAGE_SIZE_2M:
	case PAGE_SIZE_1G:
		return PTE_PAT_LARGE;
	}
	kassert(!"bad page size");
	return 0;
}

uint64_t pte_memtype_mask(enum page_size size)
{
	return PTE_PWT | PTE_PCD | pte_pat_bit(size);
}

uint64_t memtype_to_pte_bits(enum memtype t, enum page_size size)
{
	uint64_t bits = 0;
	unsigned int i;

	kassert(memtype_valid(t));
	for (i = 0; i < PAT_NUM_ENTRIES; i++)
		if (pat_layout[i] == t)
			break;
	/* The layout must offer every type; a hole is a kernel bug. */
	kassert(i < PAT_NUM_ENTRIES);
	if (i & PAT_INDEX_PWT)
		bits |= PTE_PWT;
	if (i & PAT_INDEX_PCD)
		bits |= PTE_PCD;
	if (i & PAT_INDEX_PAT)
		bits |= pte_pat_bit(size);
	return bits;
}

unsigned int pte_pat_index(uint64_t pte, enum page_size size)
{
	unsigned int idx = 0;

	if (pte & PTE_PWT)
		idx |= PAT_INDEX_PWT;
	if (pte & PTE_PCD)
		idx |= PAT_INDEX_PCD;
	if (pte & pte_pat_bit(size))
		idx |= PAT_INDEX_PAT;
	return idx;
}

enum memtype pte_bits_to_memtype(uint64_t pte, enum page_size size)
{
	return pat_layout[pte_pat_index(pte, size)];
}
