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
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/acpi.h"
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

struct acpi_header {
	char signature[ACPI_SIG_LEN];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum;
	char oem_id[ACPI_OEM_ID_LEN];
	char oem_table_id[8];
	uint32_t oem_revision;
	uint32_t creator_id;
	uint32_t creator_revision;
} __packed;
#define ACPI_HEADER_LEN		36
BUILD_ASSERT(sizeof(struct acpi_header) == ACPI_HEADER_LEN);

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

/* MADT (ACPI 5.2.12): header, LAPIC address, flags, then entries. */
struct acpi_madt {
	struct acpi_header h;
	uint32_t lapic_addr;
	uint32_t flags;
} __packed;
#define MADT_ENTRIES_OFF	sizeof(struct acpi_madt)
BUILD_ASSERT(sizeof(struct acpi_madt) == 44);

#define MADT_LAPIC		0
#define MADT_IOAPIC		1
#define MADT_OVERRIDE		2
#define MADT_LAPIC_NMI		4
#define MADT_LAPIC_ADDR		5
#define MADT_X2APIC		9
#define MADT_X2APIC_NMI		0xa

struct madt_entry {
	uint8_t type;
	uint8_t length;
} __packed;

struct madt_lapic {
	struct madt_entry e;
	uint8_t acpi_uid;
	uint8_t apic_id;
	uint32_t flags;
} __packed;

struct madt_ioapic {
	struct madt_entry e;
	uint8_t id;
	uint8_t reserved;
	uint32_t address;
	uint32_t gsi_base;
} __packed;

struct madt_override {
	struct madt_entry e;
	uint8_t bus;
	uint8_t source;
	uint32_t gsi;
	uint16_t flags;
} __packed;

struct madt_lapic_nmi {
	struct madt_entry e;
	uint8_t acpi_uid;
	uint16_t flags;
	uint8_t lint;
} __packed;

struct madt_lapic_addr {
	struct madt_entry e;
	uint16_t reserved;
	uint64_t address;
} __packed;

struct madt_x2apic {
	struct madt_entry e;
	uint16_t reserved;
	uint32_t x2apic_id;
	uint32_t flags;
	uint32_t acpi_uid;
} __packed;

struct madt_x2apic_nmi {
	struct madt_entry e;
	uint16_t flags;
	uint32_t acpi_uid;
	uint8_t lint;
	uint8_t reserved[3];
} __packed;

BUILD_ASSERT(sizeof(struct madt_lapic) == 8);
BUILD_ASSERT(sizeof(struct madt_ioapic) == 12);
BUILD_ASSERT(sizeof(struct madt_override) == 10);
BUILD_ASSERT(sizeof(struct madt_lapic_nmi) == 6);
BUILD_ASSERT(sizeof(struct madt_lapic_addr) == 12);
BUILD_ASSERT(sizeof(struct madt_x2apic) == 16);
BUILD_ASSERT(sizeof(struct madt_x2apic_nmi) == 12);

#define XAPIC_ID_INVALID	0xffu		/* broadcast, never a CPU */
#define X2APIC_ID_INVALID	0xffffffffu

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

__printf(2, 3) static void problem(struct acpi_info *info, const char *fmt,
				   ...)
{
	char buf[160];
	va_list ap;

	va_start(ap, fmt);
	kvsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	kprintf("acpi: %s\n", buf);
	info->problems++;
}

static const char *rsdp_source_name(enum acpi_rsdp_source s)
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
		problem(info, "%s at %#llx: cannot map header, skipped", what,
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
		problem(info, "%s at %#llx: bad signature \"%s\", skipped",
			what, (unsigned long long)phys, t->sig);
		return NULL;
	}
	if (expect && memcmp(h->signature, expect, ACPI_SIG_LEN) != 0) {
		t->status = "unexpected signature";
		problem(info, "%s at %#llx: signature %s, expected %s, skipped",
			what, (unsigned long long)phys, t->sig, expect);
		return NULL;
	}
	if (len < ACPI_HEADER_LEN) {
		t->status = "length below header size";
		problem(info, "%s at %#llx: length %u < header %u, skipped",
			t->sig, (unsigned long long)phys, len,
			ACPI_HEADER_LEN);
		return NULL;
	}
	if (len > ACPI_MAX_TABLE_LEN) {
		t->status = "length too large";
		problem(info, "%s at %#llx: length %#x too large, skipped",
			t->sig, (unsigned long long)phys, len);
		return NULL;
	}
	h = map_range(map, arg, phys, len);
	if (!h) {
		t->status = "body unmapped";
		problem(info, "%s at %#llx: cannot map %u bytes, skipped",
			t->sig, (unsigned long long)phys, len);
		return NULL;
	}
	/* Re-check: the full mapping must show the same length we checked. */
	if (h->length != len) {
		t->status = "length changed";
		problem(info, "%s at %#llx: length changed while mapping, "
			"skipped", t->sig, (unsigned long long)phys);
		return NULL;
	}
	sum = sum_bytes(h, len);
	if (sum != 0) {
		t->status = "bad checksum";
		problem(info, "%s at %#llx: bad checksum (sum %#x), skipped",
			t->sig, (unsigned long long)phys, sum);
		return NULL;
	}
	t->valid = true;
	t->status = "ok";
	return h;
}

/* Mark the last recorded table (the one just loaded) with a new status. */
static void set_last_status(struct acpi_info *info, uint64_t phys,
			    const char *status)
{
	if (info->ntables &&
	    info->tables[info->ntables - 1].phys == phys)
		info->tables[info->ntables - 1].status = status;
}

/* ---- MADT --------------------------------------------------------------- */

static bool cpu_known(const struct acpi_info *info, uint32_t apic_id)
{
	for (unsigned int i = 0; i < info->ncpus; i++)
		if (info->cpus[i].apic_id == apic_id)
			return true;
	return false;
}

static void add_cpu(struct acpi_info *info, uint32_t apic_id, uint32_t uid,
		    uint32_t flags, bool x2apic)
{
	struct acpi_cpu *c;

	if (!(flags & (ACPI_CPU_ENABLED | ACPI_CPU_ONLINE_CAPABLE))) {
		info->cpus_disabled++;
		return;
	}
	if (cpu_known(info, apic_id)) {
		/* Firmware may list a CPU as both xAPIC and x2APIC. */
		return;
	}
	info->cpus_found++;
	if (info->ncpus >= ACPI_MAX_CPUS)
		return;
	c = &info->cpus[info->ncpus++];
	c->apic_id = apic_id;
	c->acpi_uid = uid;
	c->flags = flags & (ACPI_CPU_ENABLED | ACPI_CPU_ONLINE_CAPABLE);
	c->x2apic = x2apic;
}

static void add_nmi(struct acpi_info *info, uint32_t uid, uint16_t flags,
		    uint8_t lint, bool x2apic)
{
	struct acpi_nmi *n;

	if (info->nnmis >= ACPI_MAX_NMIS) {
		info->madt_dropped++;
		return;
	}
	n = &info->nmis[info->nnmis++];
	n->acpi_uid = uid;
	n->flags = flags;
	n->lint = lint;
	n->x2apic = x2apic;
}

/* Smallest valid length of each MADT entry type we parse; 2 for others. */
static size_t madt_min_len(uint8_t type)
{
	switch (type) {
	case MADT_LAPIC:
		return sizeof(struct madt_lapic);
	case MADT_IOAPIC:
		return sizeof(struct madt_ioapic);
	case MADT_OVERRIDE:
		return sizeof(struct madt_override);
	case MADT_LAPIC_NMI:
		return sizeof(struct madt_lapic_nmi);
	case MADT_LAPIC_ADDR:
		return sizeof(struct madt_lapic_addr);
	case MADT_X2APIC:
		return sizeof(struct madt_x2apic);
	case MADT_X2APIC_NMI:
		return sizeof(struct madt_x2apic_nmi);
	default:
		return sizeof(struct madt_entry);
	}
}

/* Decode one entry whose length has been checked against madt_min_len(). */
static void madt_entry(struct acpi_info *info, const struct madt_entry *e,
		       uint64_t phys)
{
	switch (e->type) {
	case MADT_LAPIC: {
		const struct madt_lapic *l = (const void *)e;

		if (l->apic_id == XAPIC_ID_INVALID)
			problem(info, "MADT: local APIC id 0xff ignored");
		else
			add_cpu(info, l->apic_id, l->acpi_uid, l->flags,
				false);
		break;
	}
	case MADT_X2APIC: {
		const struct madt_x2apic *x = (const void *)e;

		if (x->x2apic_id == X2APIC_ID_INVALID)
			problem(info, "MADT: x2APIC id 0xffffffff ignored");
		else
			add_cpu(info, x->x2apic_id, x->acpi_uid, x->flags,
				true);
		break;
	}
	case MADT_IOAPIC: {
		const struct madt_ioapic *io = (const void *)e;
		struct acpi_ioapic *d;

		if (info->nioapics >= ACPI_MAX_IOAPICS) {
			info->madt_dropped++;
			break;
		}
		d = &info->ioapics[info->nioapics++];
		d->id = io->id;
		d->address = io->address;
		d->gsi_base = io->gsi_base;
		break;
	}
	case MADT_OVERRIDE: {
		const struct madt_override *o = (const void *)e;
		struct acpi_override *d;

		if (info->noverrides >= ACPI_MAX_OVERRIDES) {
			info->madt_dropped++;
			break;
		}
		d = &info->overrides[info->noverrides++];
		d->bus = o->bus;
		d->source_irq = o->source;
		d->gsi = o->gsi;
		d->flags = o->flags;
		break;
	}
	case MADT_LAPIC_NMI: {
		const struct madt_lapic_nmi *n = (const void *)e;
		uint32_t uid = n->acpi_uid;

		/* Widen "all" so one test covers both entry kinds. */
		if (uid == ACPI_UID_ALL_XAPIC)
			uid = ACPI_UID_ALL_X2APIC;
		add_nmi(info, uid, n->flags, n->lint, false);
		break;
	}
	case MADT_X2APIC_NMI: {
		const struct madt_x2apic_nmi *n = (const void *)e;

		add_nmi(info, n->acpi_uid, n->flags, n->lint, true);
		break;
	}
	case MADT_LAPIC_ADDR: {
		const struct madt_lapic_addr *a = (const void *)e;

		if (a->address == 0) {
			problem(info, "MADT at %#llx: zero LAPIC address "
				"override ignored", (unsigned long long)phys);
			break;
		}
		info->lapic_addr = a->address;
		info->lapic_addr_overridden = true;
		break;
	}
	default:
		break;	/* types we do not need; already length-checked */
	}
}

/*
 * Walk the MADT's entries. A malformed entry (zero length, shorter than its
 * type needs, or running past the table) stops the walk: its successors
 * cannot be located reliably. What was decoded before it stays.
 */
static void parse_madt(struct acpi_info *info, const struct acpi_header *h,
		       uint64_t phys)
{
	const struct acpi_madt *m = (const void *)h;
	const uint8_t *base = (const uint8_t *)h;
	uint32_t len = h->length;
	size_t off;

	if (len < MADT_ENTRIES_OFF) {
		set_last_status(info, phys, "too short for MADT");
		problem(info, "APIC at %#llx: length %u too short for a MADT, "
			"skipped", (unsigned long long)phys, len);
		return;
	}
	info->madt_found = true;
	if (!info->lapic_addr_overridden)
		info->lapic_addr = m->lapic_addr;
	info->madt_flags = m->flags;

	for (off = MADT_ENTRIES_OFF; off < len;) {
		const struct madt_entry *e = (const void *)(base + off);
		size_t min;

		if (len - off < sizeof(struct madt_entry)) {
			set_last_status(info, phys, "ok, truncated entry");
			problem(info, "APIC at %#llx: %u stray byte(s) at "
				"offset %zu, walk stopped",
				(unsigned long long)phys,
				(unsigned int)(len - off), off);
			return;
		}
		if (e->length == 0) {
			set_last_status(info, phys, "ok, zero-length entry");
			problem(info, "APIC at %#llx: zero-length entry "
				"(type %u) at offset %zu, walk stopped",
				(unsigned long long)phys, e->type, off);
			return;
		}
		if (e->length > len - off) {
			set_last_status(info, phys, "ok, entry past end");
			problem(info, "APIC at %#llx: entry type %u at offset "
				"%zu length %u runs past end (%u), walk "
				"stopped",
				(unsigned long long)phys, e->type, off,
				e->length, len);
			return;
		}
		min = madt_min_len(e->type);
		if (e->length < min) {
			set_last_status(info, phys, "ok, short entry");
			problem(info, "APIC at %#llx: entry type %u at offset "
				"%zu length %u < %zu, walk stopped",
				(unsigned long long)phys, e->type, off,
				e->length, min);
			return;
		}
		madt_entry(info, e, phys);
		off += e->length;
	}
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
			problem(info, "FACP at %#llx: X_PM_TMR_BLK space %u "
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
			problem(info, "FACP at %#llx: reset register space %u "
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
		set_last_status(info, phys, "too short for HPET");
		problem(info, "HPET at %#llx: length %u < %zu, skipped",
			(unsigned long long)phys, h->length,
			sizeof(struct acpi_hpet));
		return;
	}
	if (t->base.space_id != ACPI_GAS_MEMORY || t->base.address == 0) {
		set_last_status(info, phys, "unusable base address");
		problem(info, "HPET at %#llx: base space %u addr %#llx "
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
			set_last_status(info, phys, "ok, duplicate ignored");
		else
			parse_madt(info, h, phys);
	} else if (memcmp(h->signature, "FACP", ACPI_SIG_LEN) == 0) {
		if (info->fadt_found)
			set_last_status(info, phys, "ok, duplicate ignored");
		else
			parse_fadt(info, h, map, arg, phys);
	} else if (memcmp(h->signature, "HPET", ACPI_SIG_LEN) == 0) {
		if (info->hpet_found)
			set_last_status(info, phys, "ok, extra HPET ignored");
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
		problem(info, "%s: %zu trailing byte(s) ignored", name,
			body % entry_len);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *ep = base + ACPI_HEADER_LEN + i * entry_len;
		const struct acpi_header *h;
		uint64_t phys = 0;
		char what[16];

		memcpy(&phys, ep, entry_len);	/* little-endian x86 */
		ksnprintf(what, sizeof(what), "%s[%zu]", name, i);
		if (phys == 0) {
			problem(info, "%s: null entry, skipped", what);
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
		problem(info, "RSDP from %s: %s, ignored",
			rsdp_source_name(source), why);
		return false;
	}
	info->rsdp_source = source;
	info->rsdp_phys = phys;
	info->rsdp_revision = rsdp->revision;
	copy_printable(info->rsdp_oem_id, rsdp->oem_id, ACPI_OEM_ID_LEN);
	/* A 20-byte copy of a 2.0 RSDP (tag 14) is normal, not a problem. */
	if (rsdp->revision >= RSDP_REV_XSDT && !xsdt_ok && len >= RSDP_V2_LEN)
		problem(info, "RSDP from %s: %s, using the RSDT",
			rsdp_source_name(source), why);

	if (xsdt_ok && try_root(info, rsdp->xsdt_address, true, map, arg))
		return true;
	if (xsdt_ok)
		problem(info, "XSDT unusable, falling back to the RSDT");
	if (try_root(info, rsdp->rsdt_address, false, map, arg))
		return true;
	problem(info, "RSDP from %s: no usable root table",
		rsdp_source_name(source));
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
		problem(info, "MADT lists %u CPUs, kept the first %u",
			info->cpus_found, (unsigned int)ACPI_MAX_CPUS);
	if (info->tables_dropped)
		problem(info, "%u table(s) beyond the first %u not recorded",
			info->tables_dropped, (unsigned int)ACPI_MAX_TABLES);
	if (info->madt_dropped)
		problem(info, "MADT: %u IOAPIC/override/NMI entries dropped",
			info->madt_dropped);
	return 0;
}

/* ---- Report ------------------------------------------------------------- */

#define CPUS_PER_LINE	16

static const char *gas_space_name(uint8_t id)
{
	switch (id) {
	case ACPI_GAS_MEMORY:
		return "mem";
	case ACPI_GAS_IO:
		return "io";
	case ACPI_GAS_PCI_CONFIG:
		return "pci";
	default:
		return "?";
	}
}

static void print_cpus(const struct acpi_info *info)
{
	unsigned int enabled = 0;

	for (unsigned int i = 0; i < info->ncpus; i++)
		if (info->cpus[i].flags & ACPI_CPU_ENABLED)
			enabled++;
	kprintf("acpi: %u CPU(s) (%u enabled, %u listed, %u disabled), "
		"LAPIC at %#llx%s\n", info->ncpus, enabled, info->cpus_found,
		info->cpus_disabled, (unsigned long long)info->lapic_addr,
		info->lapic_addr_overridden ? " (override)" : "");
	for (unsigned int i = 0; i < info->ncpus; i += CPUS_PER_LINE) {
		char line[CPUS_PER_LINE * 14 + 1];
		size_t pos = 0;

		for (unsigned int j = i;
		     j < info->ncpus && j < i + CPUS_PER_LINE; j++) {
			const struct acpi_cpu *c = &info->cpus[j];
			/* x: from an x2APIC entry, -: online-capable only */
			const char *x = c->x2apic ? "x" : "";
			const char *off = (c->flags & ACPI_CPU_ENABLED) ? "" : "-";

			pos += ksnprintf(line + pos, sizeof(line) - pos,
					 " %u%s%s", c->apic_id, x, off);
			if (pos >= sizeof(line))
				break;
		}
		kprintf("acpi:   apic ids%s\n", line);
	}
}

void acpi_print(const struct acpi_info *info)
{
	if (info->rsdp_source == ACPI_RSDP_NONE) {
		kprintf("acpi: no RSDP\n");
		return;
	}
	kprintf("acpi: RSDP rev %u OEM %s from %s", info->rsdp_revision,
		info->rsdp_oem_id, rsdp_source_name(info->rsdp_source));
	if (info->rsdp_phys)
		kprintf(" at %#llx", (unsigned long long)info->rsdp_phys);
	kprintf(", using %s at %#llx\n", info->use_xsdt ? "XSDT" : "RSDT",
		(unsigned long long)info->root_phys);
	for (unsigned int i = 0; i < info->ntables; i++) {
		const struct acpi_table *t = &info->tables[i];

		kprintf("acpi:   %-4s %#12llx len %6u rev %3u OEM %-6s %s\n",
			t->sig, (unsigned long long)t->phys, t->length,
			t->revision, t->oem_id, t->status);
	}
	if (info->tables_dropped)
		kprintf("acpi:   (%u more not recorded)\n",
			info->tables_dropped);

	if (info->madt_found) {
		print_cpus(info);
		for (unsigned int i = 0; i < info->nioapics; i++)
			kprintf("acpi: IOAPIC id %u at %#x gsi base %u\n",
				info->ioapics[i].id, info->ioapics[i].address,
				info->ioapics[i].gsi_base);
		for (unsigned int i = 0; i < info->noverrides; i++)
			kprintf("acpi: override bus %u irq %u -> gsi %u "
				"flags %#x\n", info->overrides[i].bus,
				info->overrides[i].source_irq,
				info->overrides[i].gsi,
				info->overrides[i].flags);
		for (unsigned int i = 0; i < info->nnmis; i++) {
			const struct acpi_nmi *n = &info->nmis[i];

			if (n->acpi_uid == ACPI_UID_ALL_X2APIC)
				kprintf("acpi: NMI all cpus LINT%u flags %#x\n",
					n->lint, n->flags);
			else
				kprintf("acpi: NMI uid %u LINT%u flags %#x\n",
					n->acpi_uid, n->lint, n->flags);
		}
	} else {
		kprintf("acpi: no MADT\n");
	}

	if (info->fadt_found) {
		if (info->pm_timer_port)
			kprintf("acpi: PM timer port %#x (%s)\n",
				info->pm_timer_port,
				info->pm_timer_32bit ? "32-bit" : "24-bit");
		else
			kprintf("acpi: no PM timer\n");
		if (info->reset_supported)
			kprintf("acpi: reset register %s %#llx value %#x\n",
				gas_space_name(info->reset_reg.space_id),
				(unsigned long long)info->reset_reg.address,
				info->reset_value);
		else
			kprintf("acpi: no reset register\n");
		kprintf("acpi: FADT rev %u len %u century %#x boot arch "
			"%#x%s\n",
			info->fadt_revision, info->fadt_length, info->century,
			info->iapc_boot_arch,
			info->hw_reduced ? " hw-reduced" : "");
	} else {
		kprintf("acpi: no FADT\n");
	}

	if (info->hpet_found)
		kprintf("acpi: HPET at %#llx, %u comparators, %s counter, "
			"min tick %u\n", (unsigned long long)info->hpet_base,
			info->hpet_comparators,
			info->hpet_64bit ? "64-bit" : "32-bit",
			info->hpet_min_tick);
	else
		kprintf("acpi: no HPET\n");
	if (info->problems)
		kprintf("acpi: %u problem(s) reported above\n",
			info->problems);
}
