/* Output of the resident driver: straight to the first 16550 UART (COM1,
 * I/O port 0x3f8) with port I/O. Two reasons not to use ConOut: the driver
 * runs before BDS connects the consoles (ConOut reaches no device yet), and
 * at ExitBootServices no boot service may be used, while a port write
 * still works (the UART belongs to nobody then). On a machine whose
 * console is not COM1 these lines go nowhere; the results stay in the
 * resident buffer for `ptboot.efi resident` either way. `trace` writes
 * its ExitBootServices report here too (efi/capture/capture.c), for the second
 * reason. */
#ifndef PTBOOT_EFI_PLATFORM_UART_H
#define PTBOOT_EFI_PLATFORM_UART_H

#include <stddef.h>

void efi_uart_write(const char *s, size_t len);
void efi_uart_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
