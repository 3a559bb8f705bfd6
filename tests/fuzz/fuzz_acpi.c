/*
 * libFuzzer harness for the ACPI table parser (kernel/acpi.c): RSDP,
 * RSDT/XSDT, MADT, FADT (and the DSDT it points to), HPET.
 *
 * Input layout (little-endian):
 *   0      flags: FLAG_FIX_SUMS, FLAG_TAG_NEW, FLAG_TAG_OLD, FLAG_SCAN
 *   1      length of the multiboot2 "new" RSDP tag's payload (max 64)
 *   2      length of the "old" RSDP tag's payload (max 64)
 *   3      BIOS scan slot: the RSDP sits at 0xE0000 + 16 * slot
 *   8..15  phys_base: where the whole input lies in physical memory
 *   16..   the RSDP image (the tags' payload and the scan's target), then
 *          anything: the tables, at phys_base + their offset here.
 *
 * Physical memory is the input at phys_base, the BIOS area 0xE0000-
 * 0xFFFFF (zeros, with the RSDP image at its slot when FLAG_SCAN is set)
 * and the BIOS data area (zeros: no EBDA); everything else is unmapped.
 * Each map request gets a fresh heap copy of exactly the bytes asked for,
 * so ASan flags any read beyond what the parser mapped.
 *
 * A fuzzer cannot guess checksums. With FLAG_FIX_SUMS the harness makes
 * them right: the RSDP image's two checksums, and the checksum byte of
 * every mapping whose length field equals the length mapped (how the
 * parser maps a whole table after its header). Without it, checksums are
 * left as they are, so the rejection paths are fuzzed too.
 *
 * Every request goes through the kernel's address guard
 * (acpi_guarded_map()) over a fixed sanitised map with a kernel image at
 * 2 MiB and 40-bit physical addresses, as on QEMU; the map behind it
 * asserts that no range the guard must refuse gets through.
 */
// HOST_SRCS: kernel/acpi.c kernel/acpi_madt.c kernel/acpi_report.c mm/fwmap.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/acpi.h"
#include "lib/assert.h"
#include "mm/fwmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FLAG_FIX_SUMS	0x01
#define FLAG_TAG_NEW	0x02
#define FLAG_TAG_OLD	0x04
#define FLAG_SCAN	0x08

#define OFF_FLAGS	0
#define OFF_NEW_LEN	1
#define OFF_OLD_LEN	2
#define OFF_SLOT	3
#define OFF_PHYS_BASE	8
#define OFF_RSDP	16
#define RSDP_MAX	64
#define HEADER_LEN	OFF_RSDP

/* From the ACPI specification (5.2.5.3, 5.2.6). */
#define RSDP_V1_LEN		20
#define RSDP_CHECKSUM		8
#define RSDP_LENGTH		20
#define RSDP_V2_LEN		36
#define RSDP_EXT_CHECKSUM	32
#define TABLE_LENGTH		4
#define TABLE_CHECKSUM		9
#define TABLE_HEADER_LEN	36

#define BDA_END		0x500u
#define BIOS_AREA	0xe0000u
#define BIOS_AREA_LEN	0x20000u
#define SLOT_SIZE	16u

/* Mappings per input before the fake memory says no more. */
#define MAX_MAPS	4096

struct phys {
	const uint8_t *input;
	size_t size;
	uint64_t base;
	uint8_t *bios;		/* BIOS_AREA_LEN bytes, or NULL */
	bool fix;
	void *maps[MAX_MAPS];
	size_t nmaps;
};

static uint8_t sum(const uint8_t *p, size_t len)
{
	uint8_t s = 0;

	while (len--)
		s += *p++;
	return s;
}

static void fix_rsdp(uint8_t *r, size_t len)
{
	uint32_t rlen;

	if (len < RSDP_V1_LEN)
		return;
	r[RSDP_CHECKSUM] = 0;
	r[RSDP_CHECKSUM] = (uint8_t)-sum(r, RSDP_V1_LEN);
	if (len < RSDP_V2_LEN)
		return;
	memcpy(&rlen, r + RSDP_LENGTH, sizeof(rlen));
	if (rlen < RSDP_V2_LEN || rlen > len)
		return;
	r[RSDP_EXT_CHECKSUM] = 0;
	r[RSDP_EXT_CHECKSUM] = (uint8_t)-sum(r, rlen);
}

/* Copy [phys, phys + len) of region [rbase, rbase + rlen) into dst. */
static bool from_region(uint64_t phys, size_t len, uint64_t rbase,
			const uint8_t *r, size_t rlen, uint8_t *dst)
{
	if (phys < rbase || phys - rbase > rlen || len > rlen - (phys - rbase))
		return false;
	if (r)
		memcpy(dst, r + (phys - rbase), len);
	else
		memset(dst, 0, len);
	return true;
}

#define GUARD_PHYS_BITS	40
#define GUARD_KERNEL	0x200000ull
#define GUARD_KERNEL_LEN	0x200000ull
static struct fwmap_entry guard_storage[16];
static struct fwmap guard_map;

/* QEMU's memory as the kernel sees it: RAM, the BIOS areas, ACPI data,
 * the kernel image carved out, nothing at or above 2^40. */
static void guard_map_init(void)
{
	static const struct fwmap_entry raw[] = {
		{ 0x0, 0x9fc00, FWMAP_AVAILABLE },
		{ 0x9fc00, 0x400, FWMAP_RESERVED },
		{ 0xf0000, 0x10000, FWMAP_RESERVED },
		{ 0x100000, 0x1fee0000, FWMAP_AVAILABLE },
		{ 0x1ffe0000, 0x20000, FWMAP_ACPI_RECLAIMABLE },
	};

	if (guard_map.cap)
		return;
	fwmap_init(&guard_map, guard_storage, 16);
	guard_map.quiet = true;
	fwmap_sanitize(&guard_map, raw, sizeof(raw) / sizeof(raw[0]));
	fwmap_reserve(&guard_map, 0, 0x100000, FWMAP_LOWMEM);
	fwmap_reserve(&guard_map, GUARD_KERNEL, GUARD_KERNEL_LEN,
		      FWMAP_KERNEL);
	fwmap_reserve(&guard_map, 1ull << GUARD_PHYS_BITS,
		      UINT64_MAX - (1ull << GUARD_PHYS_BITS),
		      FWMAP_BEYOND_WIDTH);
}

static const void *map(uint64_t phys, size_t len, void *arg)
{
	struct phys *m = arg;
	uint8_t *copy;
	uint32_t tlen;

	kassert(len > 0);
	kassert(!fwmap_range_refused(fwmap_check_range(&guard_map, phys, len,
						       GUARD_PHYS_BITS)));
	if (m->nmaps == MAX_MAPS)
		return NULL;
	copy = malloc(len);
	if (!copy)
		return NULL;
	if (!from_region(phys, len, m->base, m->input, m->size, copy) &&
	    !(m->bios && from_region(phys, len, BIOS_AREA, m->bios,
				     BIOS_AREA_LEN, copy)) &&
	    !from_region(phys, len, 0, NULL, BDA_END, copy)) {
		free(copy);
		return NULL;
	}
	if (m->fix && len >= TABLE_HEADER_LEN) {
		memcpy(&tlen, copy + TABLE_LENGTH, sizeof(tlen));
		if (tlen == len) {
			copy[TABLE_CHECKSUM] = 0;
			copy[TABLE_CHECKSUM] = (uint8_t)-sum(copy, len);
		}
	}
	m->maps[m->nmaps++] = copy;
	return copy;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct phys m;
	static struct acpi_info info;
	static struct acpi_guard guard;
	uint8_t rsdp_new[RSDP_MAX], rsdp_old[RSDP_MAX];
	struct acpi_rsdp_src src = {0};
	size_t avail, n;
	uint8_t flags;

	if (size < HEADER_LEN)
		return 0;
	flags = data[OFF_FLAGS];
	memset(&m, 0, sizeof(m));
	m.input = data;
	m.size = size;
	memcpy(&m.base, data + OFF_PHYS_BASE, sizeof(m.base));
	m.fix = flags & FLAG_FIX_SUMS;
	avail = size - OFF_RSDP;
	if (avail > RSDP_MAX)
		avail = RSDP_MAX;

	if (flags & FLAG_TAG_NEW) {
		n = data[OFF_NEW_LEN] < avail ? data[OFF_NEW_LEN] : avail;
		memcpy(rsdp_new, data + OFF_RSDP, n);
		if (m.fix)
			fix_rsdp(rsdp_new, n);
		src.mb2_new = rsdp_new;
		src.mb2_new_len = n;
	}
	if (flags & FLAG_TAG_OLD) {
		n = data[OFF_OLD_LEN] < avail ? data[OFF_OLD_LEN] : avail;
		memcpy(rsdp_old, data + OFF_RSDP, n);
		if (m.fix)
			fix_rsdp(rsdp_old, n);
		src.mb2_old = rsdp_old;
		src.mb2_old_len = n;
	}
	if (flags & FLAG_SCAN) {
		size_t at = (size_t)data[OFF_SLOT] * SLOT_SIZE;

		m.bios = calloc(1, BIOS_AREA_LEN);
		if (!m.bios)
			return 0;
		memcpy(m.bios + at, data + OFF_RSDP, avail);
		if (m.fix)
			fix_rsdp(m.bios + at, avail);
		src.bios_scan = true;
	}

	guard_map_init();
	guard.map = &guard_map;
	guard.phys_bits = GUARD_PHYS_BITS;
	guard.inner = map;
	guard.inner_arg = &m;
	guard.last_noted = 0;
	guard.refused = guard.suspicious = 0;
	if (acpi_parse(&info, &src, acpi_guarded_map, &guard) == 0) {
		kassert(info.ncpus <= ACPI_MAX_CPUS);
		kassert(info.ntables <= ACPI_MAX_TABLES);
		kassert(info.nioapics <= ACPI_MAX_IOAPICS);
		kassert(info.noverrides <= ACPI_MAX_OVERRIDES);
		kassert(info.nnmis <= ACPI_MAX_NMIS);
		kassert(info.rsdp_source != ACPI_RSDP_NONE);
	}
	acpi_print(&info);

	for (size_t i = 0; i < m.nmaps; i++)
		free(m.maps[i]);
	free(m.bios);
	return 0;
}
