/*
 * Portable ACPI table parser (ACPI 6.5 spec, chapter 5.2: RSDP, RSDT/XSDT,
 * MADT, FADT; IA-PC HPET spec 1.0a for the HPET table).
 *
 * It never touches physical memory itself: every read goes through a map
 * callback supplied by the caller (the kernel's direct map, or a fake
 * physical address space in the host tests). Every table is checked for
 * signature, length and checksum, and every MADT entry for length, before
 * it is trusted; a broken table is reported by name and skipped, so a bad
 * firmware can cost us a table but never a hang or a crash.
 *
 * The result is one plain struct acpi_info: no pointers into firmware
 * memory survive the parse.
 */
#ifndef KERNEL_ACPI_H
#define KERNEL_ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/acpi_info.h"

/*
 * Return a pointer to len readable bytes at physical address phys, or NULL
 * if that range is not accessible. The pointer must stay valid until
 * acpi_parse() returns.
 */
typedef const void *(*acpi_map_fn)(uint64_t phys, size_t len, void *arg);

struct fwmap;

/*
 * A guard in front of a map callback: every physical range the parser
 * follows (RSDP, RSDT/XSDT entries, the RSDP's XSDT address, the FADT's
 * DSDT and FACS) is checked against the CPU's physical address width and
 * the memory map (fwmap_check_range()) before inner sees it. A range
 * beyond the width, wrapping, or overlapping the kernel is refused with
 * an "acpi: ..." line (the parser then skips that table only); one in
 * usable RAM is suspicious but legal: noted once, then mapped.
 */
struct acpi_guard {
	const struct fwmap *map;	/* sanitised, with the kernel's ranges */
	unsigned int phys_bits;		/* CPUID MAXPHYADDR */
	acpi_map_fn inner;
	void *inner_arg;
	uint64_t last_noted;		/* base of the last range reported */
	unsigned int refused, suspicious;
};

/* An acpi_map_fn: arg is a struct acpi_guard. NULL for a refused range,
 * else whatever guard->inner returns. */
const void *acpi_guarded_map(uint64_t phys, size_t len, void *arg);


/*
 * Find the RSDP (tags first, then the BIOS scan if src->bios_scan) and parse
 * every table it leads to into *info (which is cleared first). Problems are
 * printed as "acpi: ..." lines and counted in info->problems. Returns 0 if
 * a valid RSDP and root table were found, -1 otherwise.
 */
int acpi_parse(struct acpi_info *info, const struct acpi_rsdp_src *src,
	       acpi_map_fn map, void *arg);

/*
 * Legacy BIOS search: the first KiB of the EBDA (segment at 0x40E), then
 * 0xE0000-0xFFFFF, on 16-byte boundaries. Returns true and sets *phys to
 * the first candidate with the right signature and a good checksum.
 */
bool acpi_scan_bios(acpi_map_fn map, void *arg, uint64_t *phys);

/*
 * Check an RSDP image of len bytes: signature and 20-byte checksum. On
 * success *xsdt_ok says whether the ACPI 2.0 part (length, extended
 * checksum) is also good. On failure *why says what was wrong.
 */
bool acpi_rsdp_valid(const void *rsdp, size_t len, bool *xsdt_ok,
		     const char **why);

/* Print the boot-report block for a parse result (kernel/acpi_report.c). */
void acpi_print(const struct acpi_info *info);
/* Where an RSDP came from, in words. */
const char *acpi_rsdp_source_name(enum acpi_rsdp_source s);

#endif
