/*
 * acpi_info: what the ACPI parser (kernel/acpi.h) finds, as plain data:
 * struct acpi_info with its CPUs, I/O APICs, overrides, NMIs, tables,
 * FADT and HPET facts, the capacities that bound them, and where the
 * RSDP may come from. No functions: the parser's files and its readers
 * share these types without sharing the parser.
 */
#ifndef KERNEL_ACPI_INFO_H
#define KERNEL_ACPI_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Capacity of struct acpi_info; entries beyond these are counted, not kept. */
#define ACPI_MAX_CPUS		256
#define ACPI_MAX_IOAPICS	16
#define ACPI_MAX_OVERRIDES	32
#define ACPI_MAX_NMIS		32
#define ACPI_MAX_TABLES		64

/* Largest table we accept; real ones are at most a few hundred KiB. */
#define ACPI_MAX_TABLE_LEN	(16u << 20)

#define ACPI_SIG_LEN		4
#define ACPI_OEM_ID_LEN		6

/* MADT processor flags (type 0 and 9 entries). */
#define ACPI_CPU_ENABLED	(1u << 0)
#define ACPI_CPU_ONLINE_CAPABLE	(1u << 1)

/* "All processors" in a local (x2)APIC NMI entry. */
#define ACPI_UID_ALL_XAPIC	0xffu
#define ACPI_UID_ALL_X2APIC	0xffffffffu

/* Generic address structure address spaces (ACPI 5.2.3.2). */
#define ACPI_GAS_MEMORY		0
#define ACPI_GAS_IO		1
#define ACPI_GAS_PCI_CONFIG	2

/* Where the RSDP came from. */
enum acpi_rsdp_source {
	ACPI_RSDP_NONE,
	ACPI_RSDP_MB2_NEW,	/* multiboot2 tag 15 (ACPI 2.0+ RSDP copy) */
	ACPI_RSDP_MB2_OLD,	/* multiboot2 tag 14 (ACPI 1.0 RSDP copy) */
	ACPI_RSDP_BIOS_SCAN,	/* EBDA or 0xE0000-0xFFFFF */
};

/* What the caller knows about the RSDP before parsing. */
struct acpi_rsdp_src {
	const void *mb2_new;	/* payload of multiboot2 tag 15, or NULL */
	size_t mb2_new_len;
	const void *mb2_old;	/* payload of multiboot2 tag 14, or NULL */
	size_t mb2_old_len;
	bool bios_scan;		/* try the legacy scan if no tag is usable */
};

struct acpi_gas {
	uint8_t space_id;	/* ACPI_GAS_* */
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size;
	uint64_t address;
};

struct acpi_cpu {
	uint32_t apic_id;	/* x2APIC ids may exceed 255 */
	uint32_t acpi_uid;	/* ACPI processor UID, matches NMI entries */
	uint32_t flags;		/* ACPI_CPU_* */
	bool x2apic;		/* came from a type 9 entry */
};

struct acpi_ioapic {
	uint8_t id;
	uint32_t address;
	uint32_t gsi_base;
};

/* An ISA IRQ routed to another GSI or with non-default polarity/trigger. */
struct acpi_override {
	uint8_t bus;
	uint8_t source_irq;
	uint32_t gsi;
	uint16_t flags;		/* MPS INTI: polarity bits 0-1, trigger 2-3 */
};

struct acpi_nmi {
	uint32_t acpi_uid;	/* ACPI_UID_ALL_X(2)APIC for every processor */
	uint16_t flags;
	uint8_t lint;		/* LINT0 or LINT1 */
	bool x2apic;
};

/* One table seen while walking the RSDT/XSDT (and the DSDT). */
struct acpi_table {
	char sig[ACPI_SIG_LEN + 1];	/* sanitised, NUL-terminated */
	char oem_id[ACPI_OEM_ID_LEN + 1];
	uint64_t phys;
	uint32_t length;
	uint8_t revision;
	bool valid;		/* signature, length and checksum all good */
	const char *status;	/* "ok" or why it was skipped (static text) */
};

struct acpi_info {
	/* RSDP */
	enum acpi_rsdp_source rsdp_source;
	uint64_t rsdp_phys;	/* 0 when it came from a multiboot2 copy */
	uint8_t rsdp_revision;
	char rsdp_oem_id[ACPI_OEM_ID_LEN + 1];
	bool use_xsdt;		/* the root table actually used */
	uint64_t root_phys;

	/* Every table seen, in order. */
	struct acpi_table tables[ACPI_MAX_TABLES];
	unsigned int ntables;
	unsigned int tables_dropped;	/* seen but beyond ACPI_MAX_TABLES */

	/* MADT */
	bool madt_found;
	uint64_t lapic_addr;
	bool lapic_addr_overridden;	/* from a type 5 entry */
	uint32_t madt_flags;		/* bit 0: PC-AT 8259 pair present */
	struct acpi_cpu cpus[ACPI_MAX_CPUS];
	unsigned int ncpus;		/* kept in cpus[] */
	unsigned int cpus_found;	/* usable CPUs listed, kept or not */
	unsigned int cpus_disabled;	/* neither enabled nor online-capable */
	struct acpi_ioapic ioapics[ACPI_MAX_IOAPICS];
	unsigned int nioapics;
	struct acpi_override overrides[ACPI_MAX_OVERRIDES];
	unsigned int noverrides;
	struct acpi_nmi nmis[ACPI_MAX_NMIS];
	unsigned int nnmis;
	unsigned int madt_dropped;	/* IOAPIC/override/NMI over capacity */

	/* FADT */
	bool fadt_found;
	uint8_t fadt_revision;
	uint32_t fadt_length;
	uint32_t fadt_flags;
	uint16_t pm_timer_port;		/* 0: no PM timer */
	bool pm_timer_32bit;		/* TMR_VAL_EXT */
	bool reset_supported;		/* RESET_REG_SUP, usable register */
	struct acpi_gas reset_reg;
	uint8_t reset_value;
	uint8_t century;		/* CMOS index of the century, 0: none */
	uint16_t iapc_boot_arch;	/* ACPI_BOOT_* */
	bool hw_reduced;		/* HW_REDUCED_ACPI: no PM timer etc. */
	uint64_t dsdt_phys;

	/* HPET */
	bool hpet_found;
	uint64_t hpet_base;
	uint8_t hpet_comparators;
	uint8_t hpet_number;
	uint16_t hpet_min_tick;
	bool hpet_64bit;
	uint16_t hpet_pci_vendor;

	unsigned int problems;		/* messages printed about bad data */
};

/* FADT IAPC_BOOT_ARCH bits (ACPI 5.2.9.3). */
#define ACPI_BOOT_LEGACY_DEVICES	(1u << 0)
#define ACPI_BOOT_8042			(1u << 1)
#define ACPI_BOOT_NO_VGA		(1u << 2)
#define ACPI_BOOT_NO_MSI		(1u << 3)
#define ACPI_BOOT_NO_CMOS_RTC		(1u << 5)

#endif
