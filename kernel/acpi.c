/*
 * Portable ACPI table parser: RSDP -> XSDT/RSDT -> MADT, FADT, HPET, DSDT.
 * Layouts follow ACPI 6.5 chapter 5.2 (5.2.5 RSDP, 5.2.6 header, 5.2.7
 * RSDT, 5.2.8 XSDT, 5.2.9 FADT, 5.2.12 MADT) and the IA-PC HPET spec 1.0a.
 *
 * Firmware tables are untrusted input: each read is preceded by a check
 * that it lies inside what was mapped and inside the table's own length,
 * so a lying length or a truncated entry ends one walk with a message
 * instead of reading past the end. All reads go through the caller's map
 * callback; the packed structs below are only ever overlaid on mapped
 * bytes whose size has been checked first.
 *
 * This file finds the RSDP, walks the root table and loads and checks
 * every table it lists; the MADT's entries are decoded in
 * kernel/acpi_madt.c, the result printed by kernel/acpi_report.c
 * (kernel/acpi_table.h is what this file and acpi_madt.c share; the
 * parsed result's types are kernel/acpi_info.h).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/acpi.h"
#include "kernel/acpi_table.h"
#include "lib/assert.h"
#include "lib/compiler.h"
#include "lib/kprintf.h"
#include "mm/fwmap.h"
#include "lib/string.h"

/* ---- On-disk layouts ---------------------------------------------------- */

#define RSDP_SIG		"RSD PTR "
#define RSDP_SIG_LEN		8
#define RSDP_V1_LEN		20	/* bytes the first checksum covers */
#define RSDP_V2_LEN		36
#define RSDP_MAX_LEN		4096	/* anything larger is corrupt */
#define RSDP_REV_XSDT		2	/* revision from which XSDT exists */

struct acpi_rsdp {
	char signature[RSDP_SIG_LEN];
	uint8_t checksum;
	char oem_id[ACPI_OEM_ID_LEN];
	uint8_t revision;
	uint32_t rsdt_address;
	/* ACPI 2.0+ */
	uint32_t length;
	uint64_t xsdt_address;
	uint8_t ext_checksum;
	uint8_t reserved[3];
} __packed;
BUILD_ASSERT(offsetof(struct acpi_rsdp, length) == RSDP_V1_LEN);
BUILD_ASSERT(sizeof(struct acpi_rsdp) == RSDP_V2_LEN);

#define RSDT_ENTRY_LEN		4
#define XSDT_ENTRY_LEN		8

struct acpi_gas_raw {
	uint8_t space_id;
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size;
	uint64_t address;
} __packed;
BUILD_ASSERT(sizeof(struct acpi_gas_raw) == 12);

/* FADT: only the fields we read; offsets checked against the spec table. */
struct acpi_fadt {
	struct acpi_header h;
	uint32_t firmware_ctrl;
	uint32_t dsdt;
	uint8_t reserved0;
	uint8_t preferred_pm_profile;
	uint16_t sci_int;
	uint32_t smi_cmd;
	uint8_t acpi_enable;
	uint8_t acpi_disable;
	uint8_t s4bios_req;
	uint8_t pstate_cnt;
	uint32_t pm1a_evt_blk;
	uint32_t pm1b_evt_blk;
	uint32_t pm1a_cnt_blk;
	uint32_t pm1b_cnt_blk;
	uint32_t pm2_cnt_blk;
	uint32_t pm_tmr_blk;
	uint32_t gpe0_blk;
	uint32_t gpe1_blk;
	uint8_t pm1_evt_len;
	uint8_t pm1_cnt_len;
	uint8_t pm2_cnt_len;
	uint8_t pm_tmr_len;
	uint8_t gpe0_blk_len;
	uint8_t gpe1_blk_len;
	uint8_t gpe1_base;
	uint8_t cst_cnt;
	uint16_t p_lvl2_lat;
	uint16_t p_lvl3_lat;
	uint16_t flush_size;
	uint16_t flush_stride;
	uint8_t duty_offset;
	uint8_t duty_width;
	uint8_t day_alrm;
	uint8_t mon_alrm;
	uint8_t century;
	uint16_t iapc_boot_arch;
	uint8_t reserved1;
	uint32_t flags;
	struct acpi_gas_raw reset_reg;
	uint8_t reset_value;
	uint16_t arm_boot_arch;
	uint8_t minor_version;
	uint64_t x_firmware_ctrl;
	uint64_t x_dsdt;
	struct acpi_gas_raw x_pm1a_evt_blk;
	struct acpi_gas_raw x_pm1b_evt_blk;
	struct acpi_gas_raw x_pm1a_cnt_blk;
	struct acpi_gas_raw x_pm1b_cnt_blk;
	struct acpi_gas_raw x_pm2_cnt_blk;
	struct acpi_gas_raw x_pm_tmr_blk;
} __packed;
BUILD_ASSERT(offsetof(struct acpi_fadt, pm_tmr_blk) == 76);
BUILD_ASSERT(offsetof(struct acpi_fadt, century) == 108);
BUILD_ASSERT(offsetof(struct acpi_fadt, flags) == 112);
BUILD_ASSERT(offsetof(struct acpi_fadt, reset_reg) == 116);
BUILD_ASSERT(offsetof(struct acpi_fadt, reset_value) == 128);
BUILD_ASSERT(offsetof(struct acpi_fadt, x_dsdt) == 140);
BUILD_ASSERT(offsetof(struct acpi_fadt, x_pm_tmr_blk) == 208);

/* True when a FADT of length len is long enough to hold field. */
#define FADT_HAS(len, field)                                                \
	(offsetof(struct acpi_fadt, field) +                                \
		 sizeof(((struct acpi_fadt *)0)->field) <= (len))

#define FADT_TMR_VAL_EXT	(1u << 8)
#define FADT_RESET_REG_SUP	(1u << 10)
#define FADT_HW_REDUCED_ACPI	(1u << 20)
#define PM_TMR_LEN		4	/* the PM timer block is one dword */
#define IO_PORT_MAX		0xffffu

/* HPET description table (IA-PC HPET 1.0a, section 3.2.4). */
struct acpi_hpet {
	struct acpi_header h;
	uint32_t block_id;
	struct acpi_gas_raw base;
	uint8_t number;
	uint16_t min_tick;
	uint8_t page_protection;
} __packed;
BUILD_ASSERT(sizeof(struct acpi_hpet) == 56);

#define HPET_ID_COMPARATORS_SHIFT	8	/* bits 8-12: count minus one */
#define HPET_ID_COMPARATORS_MASK	0x1fu
#define HPET_ID_COUNTER_64BIT		(1u << 13)
#define HPET_ID_VENDOR_SHIFT		16

/* Legacy BIOS areas searched for the RSDP (ACPI 5.2.5.1). */
#define BDA_EBDA_SEG_PHYS	0x40eu	/* real-mode segment of the EBDA */
#define BDA_END			0x500u
#define EBDA_SCAN_LEN		1024u
#define CONV_MEM_END		0xa0000u	/* EBDA lies below 640 KiB */
#define BIOS_ROM_START		0xe0000u
#define BIOS_ROM_END		0x100000u
#define RSDP_ALIGN		16u
#define REAL_MODE_SEG_SHIFT	4

/* ---- Helpers ------------------------------------------------------------ */

static uint8_t sum_bytes(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	while (len--)
		sum += *b++;
	return sum;
}

/* Map [phys, phys+len) or return NULL, refusing ranges that wrap. */
static const void *map_range(acpi_map_fn map, void *arg, uint64_t phys,
			     size_t len)
{
	if (len == 0 || phys + len < phys)
		return NULL;
	return map(phys, len, arg);
}

const void *acpi_guarded_map(uint64_t phys, size_t len, void *arg)
{
	struct acpi_guard *g = arg;
	enum fwmap_range_verdict v =
		fwmap_check_range(g->map, phys, len, g->phys_bits);
	bool noted = g->last_noted == phys && (g->refused || g->suspicious);

	if (fwmap_range_refused(v)) {
		if (!noted)
			kprintf("acpi: [%#llx +%#zx) refused: %s (%u-bit "
				"physical addresses)\n",
				(unsigned long long)phys, len,
				fwmap_range_verdict_name(v), g->phys_bits);
		g->refused++;
		g->last_noted = phys;
		return NULL;
	}
	if (v == FWMAP_RANGE_USABLE) {
		if (!noted)
			kprintf("acpi: [%#llx +%#zx) lies in usable RAM: "
				"suspicious (firmware should reserve its "
				"tables), used\n",
				(unsigned long long)phys, len);
		g->suspicious++;
		g->last_noted = phys;
	}
	return g->inner(phys, len, g->inner_arg);
}

/* Copy n chars, replacing anything unprintable by '?', and terminate. */
static void copy_printable(char *dst, const char *src, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = src[i];

		dst[i] = (c >= 0x20 && c < 0x7f) ? c : '?';
	}
	dst[n] = '\0';
}

static bool sig_printable(const char *sig)
{
	for (int i = 0; i < ACPI_SIG_LEN; i++)
		if (sig[i] < 0x20 || sig[i] >= 0x7f)
			return false;
	return true;
}

void acpi_problem(struct acpi_info *info, const char *fmt, ...)
{
	char buf[160];
	va_list ap;

	va_start(ap, fmt);
	kvsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	kprintf("acpi: %s\n", buf);
	info->problems++;
}

const char *acpi_rsdp_source_name(enum acpi_rsdp_source s)
{
	switch (s) {
	case ACPI_RSDP_MB2_NEW:
		return "multiboot2 new tag";
	case ACPI_RSDP_MB2_OLD:
		return "multiboot2 old tag";
	case ACPI_RSDP_BIOS_SCAN:
		return "BIOS scan";
	default:
		return "none";
	}
}

/* ---- RSDP --------------------------------------------------------------- */

bool acpi_rsdp_valid(const void *p, size_t len, bool *xsdt_ok,
		     const char **why)
{
	const struct acpi_rsdp *r = p;
	const char *dummy;

	if (!why)
		why = &dummy;
	*xsdt_ok = false;
	if (!p || len < RSDP_V1_LEN) {
		*why = "too short";
		return false;
	}
	if (memcmp(r->signature, RSDP_SIG, RSDP_SIG_LEN) != 0) {
		*why = "bad signature";
		return false;
	}
	if (sum_bytes(r, RSDP_V1_LEN) != 0) {
		*why = "bad checksum";
		return false;
	}
	*why = "ok";
	if (r->revision < RSDP_REV_XSDT)
		return true;
	/* The 2.0 part is optional for us: without it we use the RSDT. */
	if (len < RSDP_V2_LEN)
		*why = "revision 2 but only 20 bytes";
	else if (r->length < RSDP_V2_LEN || r->length > len)
		*why = "bad extended length";
	else if (sum_bytes(r, r->length) != 0)
		*why = "bad extended checksum";
	else if (r->xsdt_address == 0)
		*why = "no XSDT address";
	else
		*xsdt_ok = true;
	return true;
}

/*
 * Validate the RSDP candidate at phys: map the 20-byte part, then its full
 * length when it claims revision 2. Used by the BIOS scan.
 */
static bool rsdp_at(acpi_map_fn map, void *arg, uint64_t phys)
{
	const struct acpi_rsdp *r = map_range(map, arg, phys, RSDP_V1_LEN);
	bool xsdt_ok;

	if (!r || memcmp(r->signature, RSDP_SIG, RSDP_SIG_LEN) != 0)
		return false;
	return acpi_rsdp_valid(r, RSDP_V1_LEN, &xsdt_ok, NULL);
}

static bool scan_area(acpi_map_fn map, void *arg, uint64_t start,
		      uint64_t len, uint64_t *phys)
{
	const uint8_t *area = map_range(map, arg, start, len);

	if (!area)
		return false;
	for (uint64_t off = 0; off + RSDP_V1_LEN <= len; off += RSDP_ALIGN) {
		if (memcmp(area + off, RSDP_SIG, RSDP_SIG_LEN) != 0)
			continue;
		if (rsdp_at(map, arg, start + off)) {
			*phys = start + off;
			return true;
		}
	}
	return false;
}

bool acpi_scan_bios(acpi_map_fn map, void *arg, uint64_t *phys)
{
	const uint16_t *segp = map_range(map, arg, BDA_EBDA_SEG_PHYS,
					 sizeof(uint16_t));

	if (segp) {
		uint16_t seg;
		uint64_t ebda;

		memcpy(&seg, segp, sizeof(seg));
		ebda = (uint64_t)seg << REAL_MODE_SEG_SHIFT;
		if (ebda >= BDA_END && ebda + EBDA_SCAN_LEN <= CONV_MEM_END &&
		    scan_area(map, arg, ebda, EBDA_SCAN_LEN, phys))
			return true;
	}
	return scan_area(map, arg, BIOS_ROM_START,
			 BIOS_ROM_END - BIOS_ROM_START, phys);
}

/*
 * Map the RSDP at phys (found by the scan) at its full length, so that the
 * extended checksum can be checked like that of a multiboot2 copy.
 */
static const void *map_rsdp(acpi_map_fn map, void *arg, uint64_t phys,
			    size_t *len)
{
	const struct acpi_rsdp *r = map_range(map, arg, phys, RSDP_V1_LEN);
	const void *full;
	uint32_t rlen;

	*len = RSDP_V1_LEN;
	if (!r || r->revision < RSDP_REV_XSDT)
		return r;
	r = map_range(map, arg, phys, RSDP_V2_LEN);
	if (!r)
		return map_range(map, arg, phys, RSDP_V1_LEN);
	rlen = r->length;
	if (rlen < RSDP_V2_LEN || rlen > RSDP_MAX_LEN) {
		*len = RSDP_V2_LEN;
		return r;
	}
	full = map_range(map, arg, phys, rlen);
	if (!full) {
		*len = RSDP_V2_LEN;
		return r;
	}
	*len = rlen;
	return full;
}

/* ---- Tables ------------------------------------------------------------- */

/* Append a record for the table at phys; NULL (and counted) when full. */
static struct acpi_table *new_record(struct acpi_info *info, uint64_t phys)
{
	struct acpi_table *t;

	if (info->ntables >= ACPI_MAX_TABLES) {
		info->tables_dropped++;
		return NULL;
	}
	t = &info->tables[info->ntables++];
	memset(t, 0, sizeof(*t));
	copy_printable(t->sig, "????", ACPI_SIG_LEN);
	t->phys = phys;
	t->status = "unmapped";
	return t;
}

/*
 * Map and check the table at phys (reached through what, e.g. "XSDT[3]"):
 * header mapped, signature printable (and equal to expect if not NULL),
 * ACPI_HEADER_LEN <= length <= ACPI_MAX_TABLE_LEN, whole table mapped,
 * checksum zero. Records it in info->tables either way. Returns the whole
 * table, or NULL after printing why it was skipped.
 */
static const struct acpi_header *load_table(struct acpi_info *info,
					    acpi_map_fn map, void *arg,
					    uint64_t phys, const char *expect,
					    const char *what)
{
	struct acpi_table scratch, *t = new_record(info, phys);
	const struct acpi_header *h;
	uint32_t len;
	uint8_t sum;

	if (!t) {
		t = &scratch;	/* still validate, just don't keep it */
		memset(t, 0, sizeof(*t));
	}
	h = map_range(map, arg, phys, ACPI_HEADER_LEN);
	if (!h) {
		t->status = "unmapped";
		acpi_problem(info,
			"%s at %#llx: cannot map header, skipped", what,
			(unsigned long long)phys);
		return NULL;
	}
	copy_printable(t->sig, h->signature, ACPI_SIG_LEN);
	copy_printable(t->oem_id, h->oem_id, ACPI_OEM_ID_LEN);
	len = h->length;
	t->length = len;
	t->revision = h->revision;

	if (!sig_printable(h->signature)) {
		t->status = "bad signature";
		acpi_problem(info, "%s at %#llx: bad signature \"%s\", skipped",
			what, (unsigned long long)phys, t->sig);
		return NULL;
	}
	if (expect && memcmp(h->signature, expect, ACPI_SIG_LEN) != 0) {
		t->status = "unexpected signature";
		acpi_problem(info,
			"%s at %#llx: signature %s, expected %s, skipped",
			what, (unsigned long long)phys, t->sig, expect);
		return NULL;
	}
	if (len < ACPI_HEADER_LEN) {
		t->status = "length below header size";
		acpi_problem(info,
			"%s at %#llx: length %u < header %u, skipped",
			t->sig, (unsigned long long)phys, len,
			ACPI_HEADER_LEN);
		return NULL;
	}
	if (len > ACPI_MAX_TABLE_LEN) {
		t->status = "length too large";
		acpi_problem(info, "%s at %#llx: length %#x too large, skipped",
			t->sig, (unsigned long long)phys, len);
		return NULL;
	}
	h = map_range(map, arg, phys, len);
	if (!h) {
		t->status = "body unmapped";
		acpi_problem(info, "%s at %#llx: cannot map %u bytes, skipped",
			t->sig, (unsigned long long)phys, len);
		return NULL;
	}
	/* Re-check: the full mapping must show the same length we checked. */
	if (h->length != len) {
		t->status = "length changed";
		acpi_problem(info, "%s at %#llx: length changed while mapping, "
			"skipped", t->sig, (unsigned long long)phys);
		return NULL;
	}
	sum = sum_bytes(h, len);
	if (sum != 0) {
		t->status = "bad checksum";
		acpi_problem(info,
			"%s at %#llx: bad checksum (sum %#x), skipped",
			t->sig, (unsigned long long)phys, sum);
		return NULL;
	}
	t->valid = true;
	t->status = "ok";
	return h;
}

void acpi_set_table_status(struct acpi_info *info, uint64_t phys,
			   const char *status)
{
	if (info->ntables &&
	    info->tables[info->ntables - 1].phys == phys)
		info->tables[info->ntables - 1].status = status;
}

/* ---- FADT --------------------------------------------------------------- */

static void gas_copy(struct acpi_gas *d, const struct acpi_gas_raw *s)
{
	d->space_id = s->space_id;
	d->bit_width = s->bit_width;
	d->bit_offset = s->bit_offset;
	d->access_size = s->access_size;
	d->address = s->address;
}

/* Every field is read only after FADT_HAS() shows the table reaches it. */
static void parse_fadt(struct acpi_info *info, const struct acpi_header *h,
		       acpi_map_fn map, void *arg, uint64_t phys)
{
	const struct acpi_fadt *f = (const void *)h;
	uint32_t len = h->length;
	uint64_t dsdt = 0;

	info->fadt_found = true;
	info->fadt_revision = h->revision;
	info->fadt_length = len;

	if (FADT_HAS(len, flags))
		info->fadt_flags = f->flags;
	info->hw_reduced = info->fadt_flags & FADT_HW_REDUCED_ACPI;

	/* PM timer: the 64-bit GAS wins when it names an I/O port. */
	if (FADT_HAS(len, x_pm_tmr_blk) && f->x_pm_tmr_blk.address != 0) {
		if (f->x_pm_tmr_blk.space_id == ACPI_GAS_IO &&
		    f->x_pm_tmr_blk.address <= IO_PORT_MAX)
			info->pm_timer_port =
				(uint16_t)f->x_pm_tmr_blk.address;
		else
			acpi_problem(info,
				"FACP at %#llx: X_PM_TMR_BLK space %u "
				"addr %#llx unsupported, using PM_TMR_BLK",
				(unsigned long long)phys,
				f->x_pm_tmr_blk.space_id,
				(unsigned long long)f->x_pm_tmr_blk.address);
	}
	if (!info->pm_timer_port && FADT_HAS(len, pm_tmr_len) &&
	    f->pm_tmr_blk != 0 && f->pm_tmr_blk <= IO_PORT_MAX &&
	    f->pm_tmr_len >= PM_TMR_LEN)
		info->pm_timer_port = (uint16_t)f->pm_tmr_blk;
	if (info->hw_reduced)
		info->pm_timer_port = 0;
	if (info->pm_timer_port)
		info->pm_timer_32bit = info->fadt_flags & FADT_TMR_VAL_EXT;

	if ((info->fadt_flags & FADT_RESET_REG_SUP) &&
	    FADT_HAS(len, reset_value)) {
		gas_copy(&info->reset_reg, &f->reset_reg);
		info->reset_value = f->reset_value;
		if (f->reset_reg.address != 0 &&
		    f->reset_reg.space_id <= ACPI_GAS_PCI_CONFIG)
			info->reset_supported = true;
		else
			acpi_problem(info,
				"FACP at %#llx: reset register space %u "
				"addr %#llx unusable",
				(unsigned long long)phys,
				f->reset_reg.space_id,
				(unsigned long long)f->reset_reg.address);
	}

	if (FADT_HAS(len, century))
		info->century = f->century;
	/* IAPC_BOOT_ARCH was a reserved byte before ACPI 2.0 (revision 2). */
	if (FADT_HAS(len, iapc_boot_arch) && h->revision >= 2)
		info->iapc_boot_arch = f->iapc_boot_arch;

	if (FADT_HAS(len, x_dsdt))
		dsdt = f->x_dsdt;
	if (!dsdt && FADT_HAS(len, dsdt))
		dsdt = f->dsdt;
	if (dsdt) {
		info->dsdt_phys = dsdt;
		load_table(info, map, arg, dsdt, "DSDT", "DSDT");
	}
}

/* ---- HPET --------------------------------------------------------------- */

static void parse_hpet(struct acpi_info *info, const struct acpi_header *h,
		       uint64_t phys)
{
	const struct acpi_hpet *t = (const void *)h;

	if (h->length < sizeof(struct acpi_hpet)) {
		acpi_set_table_status(info, phys, "too short for HPET");
		acpi_problem(info, "HPET at %#llx: length %u < %zu, skipped",
			(unsigned long long)phys, h->length,
			sizeof(struct acpi_hpet));
		return;
	}
	if (t->base.space_id != ACPI_GAS_MEMORY || t->base.address == 0) {
		acpi_set_table_status(info, phys, "unusable base address");
		acpi_problem(info, "HPET at %#llx: base space %u addr %#llx "
			"unusable, skipped", (unsigned long long)phys,
			t->base.space_id,
			(unsigned long long)t->base.address);
		return;
	}
	info->hpet_found = true;
	info->hpet_base = t->base.address;
	info->hpet_comparators = ((t->block_id >> HPET_ID_COMPARATORS_SHIFT) &
				  HPET_ID_COMPARATORS_MASK) + 1;
	info->hpet_64bit = t->block_id & HPET_ID_COUNTER_64BIT;
	info->hpet_pci_vendor = (uint16_t)(t->block_id >> HPET_ID_VENDOR_SHIFT);
	info->hpet_number = t->number;
	info->hpet_min_tick = t->min_tick;
}

/* ---- Root table --------------------------------------------------------- */

static void parse_table(struct acpi_info *info, const struct acpi_header *h,
			acpi_map_fn map, void *arg, uint64_t phys)
{
	/* The first of each kind wins, as in Linux; later ones are noted. */
	if (memcmp(h->signature, "APIC", ACPI_SIG_LEN) == 0) {
		if (info->madt_found)
			acpi_set_table_status(info, phys,
				"ok, duplicate ignored");
		else
			acpi_parse_madt(info, h, phys);
	} else if (memcmp(h->signature, "FACP", ACPI_SIG_LEN) == 0) {
		if (info->fadt_found)
			acpi_set_table_status(info, phys,
				"ok, duplicate ignored");
		else
			parse_fadt(info, h, map, arg, phys);
	} else if (memcmp(h->signature, "HPET", ACPI_SIG_LEN) == 0) {
		if (info->hpet_found)
			acpi_set_table_status(info, phys,
				"ok, extra HPET ignored");
		else
			parse_hpet(info, h, phys);
	}
}

/* Walk a validated RSDT (entry_len 4) or XSDT (entry_len 8). */
static void walk_root(struct acpi_info *info, const struct acpi_header *root,
		      size_t entry_len, acpi_map_fn map, void *arg)
{
	const uint8_t *base = (const uint8_t *)root;
	const char *name = entry_len == XSDT_ENTRY_LEN ? "XSDT" : "RSDT";
	size_t body = root->length - ACPI_HEADER_LEN;
	size_t n = body / entry_len;

	if (body % entry_len)
		acpi_problem(info, "%s: %zu trailing byte(s) ignored", name,
			body % entry_len);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *ep = base + ACPI_HEADER_LEN + i * entry_len;
		const struct acpi_header *h;
		uint64_t phys = 0;
		char what[16];

		memcpy(&phys, ep, entry_len);	/* little-endian x86 */
		ksnprintf(what, sizeof(what), "%s[%zu]", name, i);
		if (phys == 0) {
			acpi_problem(info, "%s: null entry, skipped", what);
			continue;
		}
		h = load_table(info, map, arg, phys, NULL, what);
		if (h)
			parse_table(info, h, map, arg, phys);
	}
}

/* Try the root table at phys; true if it was valid and walked. */
static bool try_root(struct acpi_info *info, uint64_t phys, bool xsdt,
		     acpi_map_fn map, void *arg)
{
	const char *sig = xsdt ? "XSDT" : "RSDT";
	const struct acpi_header *h;

	if (phys == 0)
		return false;
	h = load_table(info, map, arg, phys, sig, sig);
	if (!h)
		return false;
	info->use_xsdt = xsdt;
	info->root_phys = phys;
	walk_root(info, h, xsdt ? XSDT_ENTRY_LEN : RSDT_ENTRY_LEN, map, arg);
	return true;
}

/* Accept the RSDP image r (len bytes) from source; false if invalid. */
static bool use_rsdp(struct acpi_info *info, const void *r, size_t len,
		     enum acpi_rsdp_source source, uint64_t phys,
		     acpi_map_fn map, void *arg)
{
	const struct acpi_rsdp *rsdp = r;
	const char *why;
	bool xsdt_ok;

	if (!acpi_rsdp_valid(r, len, &xsdt_ok, &why)) {
		acpi_problem(info, "RSDP from %s: %s, ignored",
			acpi_rsdp_source_name(source), why);
		return false;
	}
	info->rsdp_source = source;
	info->rsdp_phys = phys;
	info->rsdp_revision = rsdp->revision;
	copy_printable(info->rsdp_oem_id, rsdp->oem_id, ACPI_OEM_ID_LEN);
	/* A 20-byte copy of a 2.0 RSDP (tag 14) is normal, not a problem. */
	if (rsdp->revision >= RSDP_REV_XSDT && !xsdt_ok && len >= RSDP_V2_LEN)
		acpi_problem(info, "RSDP from %s: %s, using the RSDT",
			acpi_rsdp_source_name(source), why);

	if (xsdt_ok && try_root(info, rsdp->xsdt_address, true, map, arg))
		return true;
	if (xsdt_ok)
		acpi_problem(info, "XSDT unusable, falling back to the RSDT");
	if (try_root(info, rsdp->rsdt_address, false, map, arg))
		return true;
	acpi_problem(info, "RSDP from %s: no usable root table",
		acpi_rsdp_source_name(source));
	return false;
}

int acpi_parse(struct acpi_info *info, const struct acpi_rsdp_src *src,
	       acpi_map_fn map, void *arg)
{
	uint64_t phys;

	kassert(info && src && map);
	memset(info, 0, sizeof(*info));

	if (src->mb2_new && use_rsdp(info, src->mb2_new, src->mb2_new_len,
				     ACPI_RSDP_MB2_NEW, 0, map, arg))
		goto done;
	if (src->mb2_old && use_rsdp(info, src->mb2_old, src->mb2_old_len,
				     ACPI_RSDP_MB2_OLD, 0, map, arg))
		goto done;
	if (src->bios_scan && acpi_scan_bios(map, arg, &phys)) {
		size_t len;
		const void *r = map_rsdp(map, arg, phys, &len);

		if (r && use_rsdp(info, r, len, ACPI_RSDP_BIOS_SCAN, phys,
				  map, arg))
			goto done;
	}
	info->rsdp_source = ACPI_RSDP_NONE;
	kprintf("acpi: no usable RSDP found\n");
	return -1;
done:
	if (info->cpus_found > info->ncpus)
		acpi_problem(info, "MADT lists %u CPUs, kept the first %u",
			info->cpus_found, (unsigned int)ACPI_MAX_CPUS);
	if (info->tables_dropped)
		acpi_problem(info,
			"%u table(s) beyond the first %u not recorded",
			info->tables_dropped, (unsigned int)ACPI_MAX_TABLES);
	if (info->madt_dropped)
		acpi_problem(info,
			"MADT: %u IOAPIC/override/NMI entries dropped",
			info->madt_dropped);
	return 0;
}
