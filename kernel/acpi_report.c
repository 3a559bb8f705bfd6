/*
 * What the ACPI parser found, printed for the boot log (acpi_print(),
 * kernel/acpi.h): the RSDP and its source, every table with its status,
 * the CPUs, I/O APICs, overrides and NMIs of the MADT, the FADT's PM
 * timer and reset register, the HPET, and the problems met.
 */
#include <stdbool.h>
#include <stdint.h>
#include "kernel/acpi.h"
#include "lib/kprintf.h"

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
		info->rsdp_oem_id, acpi_rsdp_source_name(info->rsdp_source));
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
