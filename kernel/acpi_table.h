/*
 * acpi_table: what the ACPI parser's files share (kernel/acpi.c reads the
 * RSDP, the root table and the tables it lists; kernel/acpi_madt.c walks
 * the MADT; kernel/acpi_report.c prints the result): every table's
 * header (ACPI 6.5, 5.2.6) and the parser's ways of recording what it
 * found wrong. Not for other callers: they use kernel/acpi.h. It
 * includes kernel/acpi_info.h, never kernel/acpi.h, so that acpi.c may
 * include it without a cycle.
 */
#ifndef KERNEL_ACPI_TABLE_H
#define KERNEL_ACPI_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include "kernel/acpi_info.h"
#include "lib/assert.h"
#include "lib/compiler.h"

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

/* Prints "acpi: " and the message, and counts it in info->problems. */
__printf(2, 3) void acpi_problem(struct acpi_info *info, const char *fmt,
				 ...);
/* Gives the last recorded table (the one just loaded) a new status, if
 * it is the one at phys; status is a string constant. */
void acpi_set_table_status(struct acpi_info *info, uint64_t phys,
			   const char *status);
/* Decodes the MADT h (checked: signature, length, checksum; mapped in
 * full) found at phys into info's CPUs, I/O APICs, overrides and NMIs.
 * A malformed entry stops the walk, with a problem; what was decoded
 * before it stays. */
void acpi_parse_madt(struct acpi_info *info, const struct acpi_header *h,
		     uint64_t phys);

#endif
