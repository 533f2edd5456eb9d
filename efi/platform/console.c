/* Buffered console: bytes collect in a fixed buffer and leave in one
 * OutputString call per flush (ConOut costs per call, not per byte: about
 * 4,500 calls/s under OVMF). "\n" becomes "\r\n" as UEFI consoles expect.
 *
 * Serial: OVMF, and firmware with console redirection, already put ConOut on
 * the UART (the ConOut variable then holds a UART device-path node); writing
 * to Serial I/O as well would double every line. Otherwise, on boards whose
 * ConOut is only the screen, the serial log is what a test lab reads, so we
 * write to the Serial I/O protocol ourselves. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "efi/platform/console.h"

#define CON_BUF_BYTES 2048
/* UEFI spec 10.3.4.1 (Messaging device path, UART): type 3, subtype 14. */
#define DP_TYPE_MESSAGING 3
#define DP_SUBTYPE_UART   14

static struct {
    EFI_SYSTEM_TABLE *st;
    SERIAL_IO_INTERFACE *serial;
    char buf[CON_BUF_BYTES];
    size_t len;
} con;

void efi_con_init(EFI_SYSTEM_TABLE *st)
{
    con.st = st;
    con.serial = NULL;
    con.len = 0;
}

static BOOLEAN conout_reaches_uart(void)
{
    UINTN size = 0;
    /* The ConOut variable: a multi-instance device path of the consoles. */
    void *paths = LibGetVariableAndSize(L"ConOut", &gEfiGlobalVariableGuid, &size);
    BOOLEAN found = FALSE;
    if (!paths)
        return FALSE;
    UINT8 *p = paths, *end = p + size;
    while (p + 4 <= end) {
        UINT8 type = p[0] & 0x7f, subtype = p[1];
        UINT16 len = (UINT16)(p[2] | (p[3] << 8));
        if (type == DP_TYPE_MESSAGING && subtype == DP_SUBTYPE_UART)
            found = TRUE;
        if (len < 4)
            break;
        p += len;
    }
    FreePool(paths);
    return found;
}

const char *efi_con_set_serial(enum efi_serial_mode mode)
{
    con.serial = NULL;
    if (mode == PTB_SERIAL_OFF)
        return "off";
    if (mode == PTB_SERIAL_AUTO && conout_reaches_uart())
        return "conout-has-uart";
    SERIAL_IO_INTERFACE *sio = NULL;
    EFI_STATUS s = con.st->BootServices->LocateProtocol(&SerialIoProtocol, NULL, (void **)&sio);
    if (EFI_ERROR(s) || !sio)
        return "none";
    con.serial = sio;
    return "serialio";
}

static void emit_conout(const char *s, size_t len)
{
    CHAR16 wide[257];
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\n')
            wide[n++] = L'\r';
        wide[n++] = (CHAR16)(unsigned char)s[i];
        if (n >= 255 || i + 1 == len) {
            wide[n] = 0;
            con.st->ConOut->OutputString(con.st->ConOut, wide);
            n = 0;
        }
    }
}

static void emit_serial(const char *s, size_t len)
{
    char out[512];
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\n')
            out[n++] = '\r';
        out[n++] = s[i];
        if (n >= sizeof out - 2 || i + 1 == len) {
            UINTN size = n;
            con.serial->Write(con.serial, &size, out);
            n = 0;
        }
    }
}

void efi_con_flush(void)
{
    if (!con.len || !con.st)
        return;
    emit_conout(con.buf, con.len);
    if (con.serial)
        emit_serial(con.buf, con.len);
    con.len = 0;
}

void efi_con_write(const char *s, size_t len)
{
    while (len) {
        size_t room = CON_BUF_BYTES - con.len;
        size_t n = len < room ? len : room;
        memcpy(con.buf + con.len, s, n);
        con.len += n;
        s += n;
        len -= n;
        if (con.len == CON_BUF_BYTES)
            efi_con_flush();
    }
}

void efi_con_puts(const char *s)
{
    efi_con_write(s, strlen(s));
}

void efi_con_printf(const char *fmt, ...)
{
    /* Integer formats only: newlib's vsnprintf then never touches the heap. */
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    efi_con_write(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}
