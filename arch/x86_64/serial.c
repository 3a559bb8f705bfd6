/*
 * Polled 16550 UART driver for COM1 (115200 8N1). No interrupts: the
 * console must work from the first line of kmain() to the last line of a
 * panic. A loopback self-test tells whether a UART is there at all, so a
 * machine without COM1 does not spin forever on a status bit.
 */
#include <stdint.h>
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/serial.h"

#define COM1_BASE 0x3f8
#define UART_THR 0 /* transmit holding (write) */
#define UART_RBR 0 /* receive buffer (read) */
#define UART_DLL 0 /* divisor low, with DLAB */
#define UART_IER 1
#define UART_DLM 1 /* divisor high, with DLAB */
#define UART_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5

#define UART_LCR_8N1 0x03
#define UART_LCR_DLAB 0x80
#define UART_FCR_ENABLE_CLEAR 0x07 /* enable FIFOs, clear both */
#define UART_MCR_DTR_RTS_OUT2 0x0b
#define UART_MCR_LOOPBACK 0x10
#define UART_LSR_DATA_READY 0x01
#define UART_LSR_THR_EMPTY 0x20

#define UART_CLOCK_HZ 115200
#define SERIAL_BAUD 115200
#define LOOPBACK_PATTERN 0xae
/* Bounded waits: a UART that stops answering must not hang the kernel. */
#define TX_SPIN_LIMIT 1000000

static bool present;

bool serial_init(void)
{
	uint16_t div = UART_CLOCK_HZ / SERIAL_BAUD;

	outb(COM1_BASE + UART_IER, 0);
	outb(COM1_BASE + UART_LCR, UART_LCR_DLAB);
	outb(COM1_BASE + UART_DLL, div & 0xff);
	outb(COM1_BASE + UART_DLM, div >> 8);
	outb(COM1_BASE + UART_LCR, UART_LCR_8N1);
	outb(COM1_BASE + UART_FCR, UART_FCR_ENABLE_CLEAR);

	/* Loopback: what we send must come back, else there is no UART. */
	outb(COM1_BASE + UART_MCR, UART_MCR_LOOPBACK | UART_MCR_DTR_RTS_OUT2);
	outb(COM1_BASE + UART_THR, LOOPBACK_PATTERN);
	for (int i = 0; i < TX_SPIN_LIMIT; i++)
		if (inb(COM1_BASE + UART_LSR) & UART_LSR_DATA_READY)
			break;
	present = inb(COM1_BASE + UART_RBR) == LOOPBACK_PATTERN;
	outb(COM1_BASE + UART_MCR, UART_MCR_DTR_RTS_OUT2);
	return present;
}

bool serial_present(void)
{
	return present;
}

static void serial_putc(char c)
{
	for (int i = 0; i < TX_SPIN_LIMIT; i++)
		if (inb(COM1_BASE + UART_LSR) & UART_LSR_THR_EMPTY)
			break;
	outb(COM1_BASE + UART_THR, (uint8_t)c);
}

void serial_write(const char *s, size_t n)
{
	if (!present)
		return;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			serial_putc('\r');
		serial_putc(s[i]);
	}
}

int serial_getc(void)
{
	if (!present || !(inb(COM1_BASE + UART_LSR) & UART_LSR_DATA_READY))
		return -1;
	return inb(COM1_BASE + UART_RBR);
}
