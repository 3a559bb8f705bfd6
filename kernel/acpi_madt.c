/*
 * The MADT (ACPI 6.5, 5.2.12, "Multiple APIC Description Table"): the
 * CPUs' local APICs and x2APICs, the I/O APICs, interrupt source
 * overrides, NMI wiring and a 64-bit local APIC address, as entries of
 * varying type and length after a fixed part. Every entry's length is
 * checked against its type and the table before it is read (see
 * kernel/acpi.c for how the table itself was checked).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/acpi_info.h"
#include "kernel/acpi_table.h"
#include "lib/assert.h"
#include "lib/compiler.h"

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
			acpi_problem(info, "MADT: local APIC id 0xff ignored");
		else
			add_cpu(info, l->apic_id, l->acpi_uid, l->flags,
				false);
		break;
	}
	case MADT_X2APIC: {
		const struct madt_x2apic *x = (const void *)e;

		if (x->x2apic_id == X2APIC_ID_INVALID)
			acpi_problem(info,
				"MADT: x2APIC id 0xffffffff ignored");
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
			acpi_problem(info, "MADT at %#llx: zero LAPIC address "
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
 * cannot be located reliably.
 */
void acpi_parse_madt(struct acpi_info *info, const struct acpi_header *h,
		     uint64_t phys)
{
	const struct acpi_madt *m = (const void *)h;
	const uint8_t *base = (const uint8_t *)h;
	uint32_t len = h->length;
	size_t off;

	if (len < MADT_ENTRIES_OFF) {
		acpi_set_table_status(info, phys, "too short for MADT");
		acpi_problem(info,
			"APIC at %#llx: length %u too short for a MADT, "
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
			acpi_set_table_status(info, phys,
				"ok, truncated entry");
			acpi_problem(info, "APIC at %#llx: %u stray byte(s) at "
				"offset %zu, walk stopped",
				(unsigned long long)phys,
				(unsigned int)(len - off), off);
			return;
		}
		if (e->length == 0) {
			acpi_set_table_status(info, phys,
				"ok, zero-length entry");
			acpi_problem(info, "APIC at %#llx: zero-length entry "
				"(type %u) at offset %zu, walk stopped",
				(unsigned long long)phys, e->type, off);
			return;
		}
		if (e->length > len - off) {
			acpi_set_table_status(info, phys, "ok, entry past end");
			acpi_problem(info,
				"APIC at %#llx: entry type %u at offset "
				"%zu length %u runs past end (%u), walk "
				"stopped",
				(unsigned long long)phys, e->type, off,
				e->length, len);
			return;
		}
		min = madt_min_len(e->type);
		if (e->length < min) {
			acpi_set_table_status(info, phys, "ok, short entry");
			acpi_problem(info,
				"APIC at %#llx: entry type %u at offset "
				"%zu length %u < %zu, walk stopped",
				(unsigned long long)phys, e->type, off,
				e->length, min);
			return;
		}
		madt_entry(info, e, phys);
		off += e->length;
	}
}
