#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "efi/platform/uart.h"

/* PC COM1 and the 16550 registers used (National Semiconductor PC16550D
 * data sheet: THR at offset 0, LSR at offset 5, LSR bit 5 = THR empty). */
#define UART_BASE     0x3f8
#define UART_THR      0
#define UART_LSR      5
#define UART_LSR_THRE 0x20
/* Polls before a byte is written anyway: a missing or wedged UART must
 * not hang the boot (at 115200 baud one byte takes ~87 us). */
#define UART_POLLS 100000

static inline uint8_t inb(uint16_t port)
{
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

static inline void outb(uint16_t port, uint8_t v)
{
    __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static void put_byte(uint8_t c)
{
    for (unsigned i = 0; i < UART_POLLS && !(inb(UART_BASE + UART_LSR) & UART_LSR_THRE); i++)
        ;
    outb(UART_BASE + UART_THR, c);
}

void efi_uart_write(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\n')
            put_byte('\r');
        put_byte((uint8_t)s[i]);
    }
}

void efi_uart_printf(const char *fmt, ...)
{
    /* static: the EBS notify runs on the caller's stack, keep it small;
     * integer formats only, so vsnprintf never reaches the heap */
    static char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    efi_uart_write(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}
