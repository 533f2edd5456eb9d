/* A recorded CPUID dump in the raw format of Debian's `cpuid -r -1`:
 *
 *   CPU:
 *      0x00000014 0x00: eax=0x00000001 ebx=0x0000000f ecx=0x00000007 edx=0x00000000
 *
 * or in AIDA64's layout, as in InstLatx64's public collection (EAX-EBX-ECX-
 * EDX; subleaves in order, or numbered "[SL nn]"):
 *
 *   CPUID 00000014: 00000001-0000000F-00000007-00000000 [SL 00]
 *
 * parsed from a memory buffer into fixed storage (no allocation), and a
 * CPUID callback over it that answers like the recorded CPU would. */
#ifndef PTBOOT_ARCH_X86_CPUID_DUMP_H
#define PTBOOT_ARCH_X86_CPUID_DUMP_H

#include <stddef.h>
#include <stdint.h>
#include "arch/x86/cpuid.h"

#define X86_CPUID_DUMP_MAX 256 /* leaf/subleaf pairs; real dumps hold < 150 */

struct x86_cpuid_dump_entry {
    uint32_t leaf, subleaf;
    x86_cpuid_regs regs;
};

struct x86_cpuid_dump {
    size_t count;
    struct x86_cpuid_dump_entry entry[X86_CPUID_DUMP_MAX];
};

enum x86_cpuid_dump_error {
    X86_CPUID_DUMP_OK = 0,
    X86_CPUID_DUMP_E_SYNTAX = -1, /* a line starting "0x" is malformed */
    X86_CPUID_DUMP_E_FULL = -2,   /* more than X86_CPUID_DUMP_MAX leaves */
    X86_CPUID_DUMP_E_DUP = -3,    /* same leaf/subleaf twice for one CPU */
    X86_CPUID_DUMP_E_EMPTY = -4,  /* no leaf line at all */
    X86_CPUID_DUMP_E_ARG = -5,    /* NULL argument */
};

/* Parses buf[0..len). Lines other than "CPU...", "0x<leaf> 0x<sub>: ..."
 * and "CPUID <leaf>: ..." lines are ignored; CRLF is accepted; when the text
 * holds several CPUs ("CPU 0:", "CPU 1:", ..., or leaf 0 again in the AIDA64
 * layout) only the first is taken. Returns 0 or a negative
 * x86_cpuid_dump_error; *line (if not NULL) gets the 1-based line number of
 * the error (0 when it concerns the whole text). */
int x86_cpuid_dump_parse(struct x86_cpuid_dump *dump, const char *buf, size_t len, unsigned *line);

/* Short English text for an x86_cpuid_dump_error. */
const char *x86_cpuid_dump_strerror(int err);

/* The stored registers of (leaf, subleaf), or NULL. */
const x86_cpuid_regs *x86_cpuid_dump_find(const struct x86_cpuid_dump *dump, uint32_t leaf,
                                          uint32_t subleaf);

/* x86_cpuid_fn over a parsed dump (ctx = const struct x86_cpuid_dump *).
 * Like the recorded CPU:
 *  - on a GenuineIntel dump, a basic or extended leaf above the maximum
 *    returns the highest basic leaf (same subleaf) - Intel's documented
 *    behaviour (SDM Vol. 2A CPUID, "If a value entered for CPUID.EAX is
 *    higher than the maximum input value..."); this is why leaf 14h on a
 *    QEMU CPU with max leaf 0Dh returns XSAVE data that looks like PT caps;
 *    other vendors return zeros there;
 *  - a subleaf not recorded for a leaf that ignores ECX returns subleaf 0;
 *    for a subleaf-indexed leaf (4, 7, 0Bh, 0Dh, 0Fh, 10h, 12h, 14h, ...) it
 *    returns zeros;
 *  - any other missing leaf returns zeros. */
void x86_cpuid_dump_query(void *ctx, uint32_t leaf, uint32_t subleaf, x86_cpuid_regs *out);

#endif
