/* libptd errata: which Intel PT errata of which CPUs the decoder works
 * around, as one table (family, model) -> erratum bits that every layer
 * reads its own bits from (packets: SKD007, SKZ84; query: BDM70, SKD010,
 * APL11, APL12; flow: BDM64, SKL014, SKD022; time: SKL168).
 *
 * The errata are the processors' specification updates'; the CPU lists are
 * those of current libipt (pt_cpu_errata(), master 2026-01), so that a
 * trace decodes as libipt decodes it with the same --cpu. libipt 2.0.5's
 * older lists are kept beside them for the tools' --libipt-2.0 mode and the
 * tests that compare with Debian's libipt.
 *
 * Freestanding C11, no state. */
#ifndef PTD_ERRATA_H
#define PTD_ERRATA_H

#include <stdbool.h>
#include <stdint.h>

/* One bit per erratum (the names are the specification updates' IDs). */
enum {
    /* BDM70: a PSB+ written while PacketEn=0 just before tracing is
     * enabled may hold a FUP; a TIP.PGE then follows. */
    PTD_ERRATUM_BDM70 = 1u << 0,
    /* BDM64: a branch may leave the filter with a TIP.PGD whose IP is
     * suppressed; a TSX abort right after a branch may corrupt its trace. */
    PTD_ERRATUM_BDM64 = 1u << 1,
    /* SKD007: an OVF may come after the first byte of a multi-byte CYC. */
    PTD_ERRATUM_SKD007 = 1u << 2,
    /* SKD010: the FUP after an OVF may be dropped. */
    PTD_ERRATUM_SKD010 = 1u << 3,
    /* SKD022: a VM entry that clears TraceEn may send FUP + TIP.PGD. */
    PTD_ERRATUM_SKD022 = 1u << 4,
    /* SKL014: a direct jump/call out of the filter sends TIP.PGD with no
     * IP. */
    PTD_ERRATUM_SKL014 = 1u << 5,
    /* SKL168: a CYC (and an MTC) may be dropped right before a PSB. */
    PTD_ERRATUM_SKL168 = 1u << 6,
    /* APL11: an OVF may be followed by a TIP.PGD. */
    PTD_ERRATUM_APL11 = 1u << 7,
    /* APL12: an OVF may be followed by an unexpected FUP. */
    PTD_ERRATUM_APL12 = 1u << 8,
    /* SKZ84: with VMX TSC scaling or offsetting a TMA may be corrupted
     * and followed by a bogus byte. */
    PTD_ERRATUM_SKZ84 = 1u << 9,
};

/* The errata of a CPU (family and model as --cpu gives them: 6/85,
 * 19/1). Returns true and sets *errata for a CPU in the table; false (and
 * *errata = 0) for any other, which libipt reports as "unknown cpu"
 * (callers print that and decode without errata). libipt20: libipt
 * 2.0.5's lists instead of current libipt's. */
bool ptd_errata_of_cpu(unsigned family, unsigned model, bool libipt20, unsigned *errata);

/* Current libipt's errata of a CPU, 0 for a CPU not in the table. */
static inline unsigned ptd_errata_cpu(unsigned family, unsigned model)
{
    unsigned e;
    (void)ptd_errata_of_cpu(family, model, false, &e);
    return e;
}

#endif
