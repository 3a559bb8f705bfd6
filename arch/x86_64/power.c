/*
 * Ways to stop: QEMU's debug-exit device, a reset, or a halt loop.
 * A reset tries the ACPI reset register (FADT) first, when SMP set-up
 * found one in I/O space, then the keyboard controller, then a triple
 * fault.
 */
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/power.h"

#define QEMU_DEBUG_EXIT_PORT 0xf4
#define KBC_STATUS_PORT 0x64
#define KBC_STATUS_INPUT_FULL 0x02
#define KBC_CMD_PULSE_RESET 0xfe
#define KBC_WAIT_LIMIT 100000

static uint16_t acpi_reset_port;
static uint8_t acpi_reset_value;

void arch_set_acpi_reset(uint16_t port, uint8_t value)
{
	acpi_reset_port = port;
	acpi_reset_value = value;
}

void arch_qemu_exit(uint32_t status)
{
	outl(QEMU_DEBUG_EXIT_PORT, status);
}

void arch_halt(void)
{
	for (;;) {
		cpu_cli();
		cpu_hlt();
	}
}

void arch_reboot(void)
{
	if (acpi_reset_port) {
		outb(acpi_reset_port, acpi_reset_value);
		for (int i = 0; i < KBC_WAIT_LIMIT; i++)
			cpu_pause();
	}
	for (int i = 0; i < KBC_WAIT_LIMIT; i++)
		if (!(inb(KBC_STATUS_PORT) & KBC_STATUS_INPUT_FULL))
			break;
	outb(KBC_STATUS_PORT, KBC_CMD_PULSE_RESET);
	for (int i = 0; i < KBC_WAIT_LIMIT; i++)
		cpu_pause();
	/* Still here: reset the hard way. */
	arch_triple_fault();
}

void arch_triple_fault(void)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __packed empty_idt = {0, 0};

	/* With an empty IDT, #BP cannot be delivered, nor can the #GP and
	 * #DF that follow: the CPU shuts down and the machine resets. */
	__asm__ volatile("lidt %0; int3" : : "m"(empty_idt));
	arch_halt();
}
