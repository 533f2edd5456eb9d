/* Console output of the UEFI app: buffered, to ConOut and, where the firmware
 * does not already mirror ConOut to a UART, to the serial port too. */
#ifndef PTBOOT_EFI_PLATFORM_CONSOLE_H
#define PTBOOT_EFI_PLATFORM_CONSOLE_H

#include <stddef.h>
#include <efi.h>

enum efi_serial_mode {
    PTB_SERIAL_AUTO, /* write to the UART only if ConOut does not reach one */
    PTB_SERIAL_ON,   /* always also write to the first Serial I/O device */
    PTB_SERIAL_OFF,  /* ConOut only */
};

void efi_con_init(EFI_SYSTEM_TABLE *st);
/* Chooses whether to write to Serial I/O as well; returns a short word
 * saying what was chosen ("conout-has-uart", "serialio", "none", "off"). */
const char *efi_con_set_serial(enum efi_serial_mode mode);
void efi_con_write(const char *s, size_t len);
void efi_con_puts(const char *s);
void efi_con_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Emits buffered output now; call before anything that may hang the CPU. */
void efi_con_flush(void);

#endif
