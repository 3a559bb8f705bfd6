/*
 * acpi_init() and the parse result it keeps (see acpi_boot.h).
 */
#include "arch/x86_64/cpufeature.h"
#include "arch/x86_64/power.h"
#include "kernel/acpi_boot.h"
#include "kernel/multiboot2.h"
#include "lib/compiler.h"
#include "mm/page_alloc.h"
#include "mm/vm.h"

static struct acpi_info acpi;
static bool acpi_ok;

const struct acpi_info *acpi_tables(void)
{
	return acpi_ok ? &acpi : NULL;
}

/* ACPI tables are ordinary write-back memory; phys_map() adds them to
 * the direct map when they lie outside RAM. Only ranges the guard
 * (acpi_guarded_map()) let through get here. */
static const void *acpi_map(uint64_t phys, size_t len, void *arg __unused)
{
	if (len == 0 || phys + len < phys)
		return NULL;
	return phys_map(phys, len, MEMTYPE_WB);
}

void acpi_init(void)
{
	struct acpi_rsdp_src src = {0};
	struct acpi_guard guard = {
		.map = page_alloc_fwmap(),
		.phys_bits = cpu_info.phys_addr_bits,
		.inner = acpi_map,
	};

	if (boot_info.rsdp_version >= 2) {
		src.mb2_new = boot_info.rsdp;
		src.mb2_new_len = boot_info.rsdp_len;
	} else if (boot_info.rsdp_version == 1) {
		src.mb2_old = boot_info.rsdp;
		src.mb2_old_len = boot_info.rsdp_len;
	}
	src.bios_scan = true;
	acpi_ok = acpi_parse(&acpi, &src, acpi_guarded_map, &guard) == 0;
	acpi_print(&acpi);
	if (acpi_ok && acpi.reset_supported &&
	    acpi.reset_reg.space_id == ACPI_GAS_IO &&
	    acpi.reset_reg.address && acpi.reset_reg.address <= UINT16_MAX)
		arch_set_acpi_reset((uint16_t)acpi.reset_reg.address,
				    acpi.reset_value);
}
