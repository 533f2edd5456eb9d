/* 64-bit number formatting without relying on printf's %ll support (the
 * UEFI app's newlib may be built without long long I/O). */
#ifndef PTBOOT_ARCH_X86_X86_FMT_H
#define PTBOOT_ARCH_X86_X86_FMT_H

#include <stdint.h>

#define X86_FMT_HEX64_LEN 19 /* "0x" + 16 digits + NUL */
#define X86_FMT_DEC64_LEN 21 /* 20 digits + NUL */

/* "0x" followed by the shortest lowercase hex form of v; returns buf. */
char *x86_fmt_hex64(char buf[X86_FMT_HEX64_LEN], uint64_t v);
/* Decimal form of v; returns buf. */
char *x86_fmt_dec64(char buf[X86_FMT_DEC64_LEN], uint64_t v);

#endif
