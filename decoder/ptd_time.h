/* libptd time tracking: the TSC estimate at any point of a trace, from the
 * timing packets (Intel SDM Vol. 3C, chapter "Intel Processor Trace",
 * sections "Timing Packets" and "Decoder guidance: computing time").
 *
 *   TSC   the full timestamp (bits 55:0): time is exact here.
 *   TMA   follows a TSC when MTC is on: the CTC (crystal clock counter, low
 *         16 bits) and the FastCounter (in TSC ticks) at that TSC, which tie
 *         the TSC to the MTC grid.
 *   MTC   the CTC bits [MTCFreq+7 : MTCFreq] every 2^MTCFreq crystal clocks;
 *         CTC ticks become TSC ticks by CPUID 0x15: TSC = CTC * EBX / EAX.
 *   CYC   core clocks since the last CYC-eligible packet; core clocks become
 *         TSC ticks by a ratio ("FCR", fixed point) measured from the trace:
 *         TSC ticks over cycles between two MTCs (or two PSB+ TSCs), or
 *         nominal frequency / core:bus ratio when the nominal frequency is
 *         known (CBR packets). This is "calibration" (ptdump's tcal).
 *   CBR   the core:bus ratio; outside PSB+ a frequency change, which
 *         throws away the calibration.
 *
 * The arithmetic is libipt's (pt_time.c), integer only, so that times agree
 * to the tick with libipt's decoders and ptdump's --time/--tcal columns:
 * CTC deltas correct one wrap of the MTC range; the first MTC after a TMA
 * takes the CTC bits TMA does not carry from the MTC itself; a CYC that
 * spans MTCs has the part before the last MTC taken off by the calibration;
 * FCR = (TSC ticks << PTD_TIME_FCR_SHIFT) / cycles; CYC adds
 * (cycles * FCR) >> PTD_TIME_FCR_SHIFT.
 *
 * Freestanding (stdint/stddef/stdbool only), no allocation, no globals: a
 * struct ptd_time is plain data the caller owns.
 *
 * Usage (a packet walker, the dumper or the flow decoder):
 *
 *     struct ptd_time_config cfg = { .mtc_freq = 3, .cpuid_0x15_eax = 2,
 *                                    .cpuid_0x15_ebx = 168 };
 *     struct ptd_time t;
 *     ptd_time_init(&t, &cfg);
 *     for each packet p (in trace order):
 *         ptd_time_packet(&t, &p);        // timing packets, PSB, PSBEND, OVF
 *         ...
 *         uint64_t tsc;
 *         if (ptd_time_now(&t, &tsc, NULL, NULL) == 0)
 *             ...                          // TSC at this point of the trace
 *     after a resync (the decoder skipped bytes): ptd_time_reset(&t);
 *
 * ptd_time_packet() is the one call most users need. The per-packet calls
 * below it return the errors separately for the time estimate and for the
 * calibration, as ptdump reports them.
 *
 * Attaching time to instructions (the flow layer) as libipt does: libipt's
 * query decoder applies timing packets while it reads ahead, but its
 * pt_qry_time()/pt_insn_time() report the time as of the last TNT or TIP
 * packet (or event) it handed out: the time after every packet before that
 * one. So take ptd_time_now() when a TNT/TIP packet is taken from the trace
 * (not when later bits of a cached TNT are used, and not after reading
 * ahead). Events carry the time at their packet. Walking with SKD007
 * (ptd_time_skd007_cyc) and resetting at each resync (libipt resets time and
 * calibration when it syncs) keep the two in step; test/time/diff_time.c
 * drives libipt's query decoder that way and compares at every such point.
 * An OVF keeps the time (libipt's decoders do too) and, by default, drops
 * the calibration. */
#ifndef PTD_TIME_H
#define PTD_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_pkt.h"

/* FCR (TSC ticks per core cycle) is fixed point with this many fraction
 * bits. */
#define PTD_TIME_FCR_SHIFT 8

/* Bits of struct ptd_time_config.flags. */
enum {
    /* Do not calibrate: CYC packets cannot be used (each counts as lost),
     * as ptdump's --no-tcal. */
    PTD_TIME_NO_TCAL = 1u << 0,
    /* On OVF keep the calibration (FCR) and only drop the measurement in
     * progress, as ptdump's --keep-tcal-on-ovf (libipt's keep_tcal_on_ovf
     * decoder flag). By default OVF throws the calibration away, as libipt
     * 2.0's decoders and ptdump do. */
    PTD_TIME_KEEP_TCAL_ON_OVF = 1u << 1,
};

/* SKD007 (Skylake and Kaby Lake clients; ptd_pkt.h's PTD_ERRATUM_SKD007):
 * an OVF can come after the first byte of a multi-byte CYC instead of the
 * rest of it. A 2-byte CYC whose second byte is OVF's 0x02 (a CYC value of
 * 0x20..0x3f) followed by OVF's 0xf3 is taken for that case, as libipt's
 * decoders do: the CYC is dropped and decoding goes on one byte after its
 * start, at the OVF. cyc: the decoded CYC; at: its first byte; end: the end
 * of the trace buffer. For the layers that walk packets with that erratum
 * (the query layer); the packet layer decodes the bytes as they are. */
bool ptd_time_skd007_cyc(const struct ptd_pkt *cyc, const uint8_t *at, const uint8_t *end);

/* What the decoder must know about the capture (ptdump's options of the same
 * names). All zero is valid: TSC packets alone then give time; MTC needs
 * cpuid_0x15_eax/ebx (else each MTC is reported as -PTD_ERR_BAD_CONFIG
 * and time stays at the last TSC), and mtc_freq as programmed. */
struct ptd_time_config {
    uint8_t mtc_freq;        /* IA32_RTIT_CTL.MTCFreq (bits 17:14), 0..15 */
    uint8_t nom_freq;        /* MSR_PLATFORM_INFO[15:8]; 0: unknown, CBR does not calibrate */
    uint32_t cpuid_0x15_eax; /* CPUID 0x15 EAX: TSC/crystal ratio denominator */
    uint32_t cpuid_0x15_ebx; /* CPUID 0x15 EBX: TSC/crystal ratio numerator */
    uint32_t flags;          /* PTD_TIME_* */
    uint32_t errata;         /* PTD_ERRATUM_* */
};

/* Largest accepted mtc_freq (a 4-bit field of IA32_RTIT_CTL). */
#define PTD_TIME_MTC_FREQ_MAX 15

/* Calibration state (ptdump's "tcal"). Internal; read it through
 * ptd_time_fcr(). */
struct ptd_time_cal {
    uint64_t fcr;     /* last FCR */
    uint64_t min_fcr; /* smallest FCR since reset (> max_fcr: none yet) */
    uint64_t max_fcr;
    uint64_t tsc;      /* last TSC, for TSC-to-TSC calibration in PSB+ */
    uint64_t cyc_tsc;  /* cycles since that TSC */
    uint64_t cyc_mtc;  /* cycles since the last MTC */
    uint32_t ctc;      /* CTC of the last MTC */
    uint32_t lost_mtc; /* MTCs that could not calibrate */
    uint8_t have_mtc;
    uint8_t check_skl168; /* the next MTC is the first after a PSB */
};

/* The time state. Plain data; initialise with ptd_time_init(). */
struct ptd_time {
    struct ptd_time_config cfg;
    uint64_t tsc;      /* the current estimate */
    uint64_t base;     /* TSC at the last MTC (or TSC, less TMA's FastCounter) */
    uint64_t fc;       /* TSC ticks since base from TMA's FastCounter and CYCs */
    uint32_t ctc;      /* CTC at the last MTC/TMA, bits below MTCFreq+8 */
    uint32_t ctc_cyc;  /* CTC at the MTC where the current CYC count started */
    uint32_t lost_mtc; /* MTCs that could not be used since the last TSC */
    uint32_t lost_cyc; /* CYCs that could not be used since the last TSC/MTC */
    uint8_t cbr;       /* last core:bus ratio */
    uint8_t have_tsc;
    uint8_t have_tma;
    uint8_t have_mtc;
    uint8_t have_cbr;
    uint8_t in_psb; /* between PSB and PSBEND */
    struct ptd_time_cal cal;
};

/* Start with no time. cfg may be NULL (all zero); it is copied. */
void ptd_time_init(struct ptd_time *t, const struct ptd_time_config *cfg);
/* Forget everything but the configuration (after a resync). */
void ptd_time_reset(struct ptd_time *t);

/* Apply one packet in trace order: TSC, TMA, MTC, CYC, CBR update time and
 * calibration; PSB/PSBEND mark the PSB+ header (where TSC and CBR are
 * calibration points); OVF drops the calibration (see
 * PTD_TIME_KEEP_TCAL_ON_OVF); other packets are ignored. Returns 0 or the
 * first negative error (the state is updated as far as it can be; decoding
 * may go on). */
int ptd_time_packet(struct ptd_time *t, const struct ptd_pkt *p);

/* The time now: *tsc receives the estimate and 0 is returned, or
 * -PTD_ERR_NO_TIME before the first TSC, when *tsc still receives the
 * time relative to the start (MTC/CYC since synchronisation; ptdump's
 * --no-wall-clock prints it). lost_mtc/lost_cyc (may be NULL) receive how
 * many MTC/CYC packets could not be used since the last TSC/MTC: a measure
 * of how rough the estimate is. */
int ptd_time_now(const struct ptd_time *t, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc);
/* The core:bus ratio of the last CBR, or -PTD_ERR_NO_CBR. */
int ptd_time_cbr(const struct ptd_time *t, uint32_t *cbr);
/* The calibration: TSC ticks per core cycle << PTD_TIME_FCR_SHIFT, or
 * -PTD_ERR_NO_TIME when not calibrated (yet, or since a CBR/OVF). */
int ptd_time_fcr(const struct ptd_time *t, uint64_t *fcr);

/* Per-packet updates, for callers that report errors as ptdump does. Each
 * returns the error of the time estimate (0 or negative) and stores the
 * calibration's in *cal_err (0 or negative; may be NULL). With
 * PTD_TIME_NO_TCAL the calibration is never touched. */
int ptd_time_tsc(struct ptd_time *t, uint64_t tsc, int *cal_err);
int ptd_time_tma(struct ptd_time *t, uint32_t ctc, uint32_t fc, int *cal_err);
int ptd_time_mtc(struct ptd_time *t, uint8_t ctc, int *cal_err);
/* A CYC without calibration (no FCR) counts as lost; the time does not
 * move. *used (may be NULL) tells whether it moved the time. */
int ptd_time_cyc(struct ptd_time *t, uint64_t cycles, int *cal_err, bool *used);
int ptd_time_cbr_update(struct ptd_time *t, uint8_t ratio, int *cal_err);
/* PSB (start of PSB+), PSBEND, OVF. Return the calibration error (OVF and
 * PSBEND cannot fail). */
int ptd_time_psb(struct ptd_time *t);
void ptd_time_psbend(struct ptd_time *t);
void ptd_time_ovf(struct ptd_time *t);

#endif
