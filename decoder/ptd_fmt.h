/* libptd text formatting: packet dumps in the exact line format of libipt's
 * ptdump, into caller buffers, without libc. Used by the host CLI
 * (`ptboot dump`) and by the UEFI app (`ptboot.efi dump`), so both print the
 * same lines for the same trace.
 *
 * On-target use (no allocation; everything lives in struct ptd_dump):
 *
 *     struct ptd_dump dump;
 *     struct ptd_fmt_options opt = { .flags = 0 };   // ptdump's defaults
 *     char line[PTD_FMT_LINE_MAX];
 *     int n;
 *     ptd_dump_init(&dump, &opt);
 *     ptd_dump_feed(&dump, trace, trace_size);
 *     while ((n = ptd_dump_line(&dump, line, sizeof line)) > 0)
 *         print(line);                   // NUL-terminated, no newline
 *     // n == 0: done; n < 0: -PTD_ERR_NOSPC (line buffer too small)
 */
#ifndef PTD_FMT_H
#define PTD_FMT_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_pkt.h"
#include "decoder/ptd_time.h"

/* Longest line the dumper writes, NUL included. */
#define PTD_FMT_LINE_MAX 192
/* Diagnostics before one packet's line, at most (NUL included). */
#define PTD_FMT_DIAG_MAX 384

/* ptdump's options (same names, `--no-offset` -> PTD_FMT_NO_OFFSET, ...). */
enum {
    PTD_FMT_NO_OFFSET = 1u << 0, /* no offset column */
    PTD_FMT_RAW = 1u << 1,       /* raw packet bytes column */
    PTD_FMT_LASTIP = 1u << 2,    /* last IP on packets with IP payloads */
    PTD_FMT_EXEC_MODE = 1u << 3, /* execution mode on mode.exec */
    PTD_FMT_NO_PAD = 1u << 4,    /* skip PAD */
    PTD_FMT_NO_TIMING = 1u << 5, /* skip TSC, CBR, TMA, MTC, CYC */
    PTD_FMT_NO_CYC = 1u << 6,    /* skip CYC */
    PTD_FMT_QUIET = 1u << 7,     /* only error lines */
    PTD_FMT_NO_SYNC = 1u << 8,   /* decode from offset 0, no PSB search */
    PTD_FMT_LIBIPT20 = 1u << 9,  /* only libipt 2.0's packets (ptd_pkt_set_libipt20) */
    /* Time tracking (decoder/ptd_time.h), ptdump's timing options: */
    PTD_FMT_TIME = 1u << 10,          /* --time: estimated TSC on timing packets ("tsc" column) */
    PTD_FMT_TCAL = 1u << 11,          /* --tcal: calibration on TSC/CBR/MTC ("fcr" column) */
    PTD_FMT_TIME_DELTA = 1u << 12,    /* --time-delta: both as differences to the last shown */
    PTD_FMT_NO_TCAL = 1u << 13,       /* --no-tcal: no calibration (CYCs are lost) */
    PTD_FMT_NO_WALL_CLOCK = 1u << 14, /* --no-wall-clock: time before the first TSC is relative */
    PTD_FMT_KEEP_TCAL_ON_OVF = 1u << 15, /* --keep-tcal-on-ovf */
    /* PWRE's HW flag from byte 2 bit 3, as libipt reads it (the SDM has
     * it in bit 7; ptd_pkt_set_pwre_bit3) */
    PTD_FMT_LIBIPT_PWRE = 1u << 16,
};

struct ptd_fmt_options {
    uint32_t flags;
    uint32_t errata; /* PTD_ERRATUM_* for the decoder, without a CPU */
    /* ptdump's --cpu f/m (ptd_opts_dump_cpu): the dump takes that CPU's
     * errata (libipt 2.0.5's lists with PTD_FMT_LIBIPT20) for the decoder
     * and the time, and starts with "[0: failed to determine errata:
     * unknown cpu]" for a CPU not in the table, as ptdump does */
    uint8_t has_cpu;
    uint8_t cpu_model;
    uint16_t cpu_family;
    /* --mtc-freq, --nom-freq, --cpuid-0x15.eax/.ebx and the timing errata of
     * --cpu (PTD_ERRATUM_*). Its flags are set from PTD_FMT_NO_TCAL and
     * PTD_FMT_KEEP_TCAL_ON_OVF. Used with PTD_FMT_TIME or PTD_FMT_TCAL. */
    struct ptd_time_config time;
};

/* State the packet formatter keeps between packets (ptdump's "tracking"). */
struct ptd_fmt_state {
    struct ptd_last_ip last_ip;
    struct ptd_time time; /* with PTD_FMT_TIME/PTD_FMT_TCAL */
    uint64_t shown_tsc;   /* the last time shown (for --time-delta) */
    uint64_t shown_fcr;   /* the last calibration shown (for --time-delta) */
};

/* Initialise for ptdump's default options (no time configuration). */
void ptd_fmt_state_init(struct ptd_fmt_state *st);
/* Initialise for these options (the time configuration of opt). */
void ptd_fmt_state_setup(struct ptd_fmt_state *st, const struct ptd_fmt_options *opt);

/* Format one packet as ptdump prints it (no newline), NUL-terminated.
 * raw: the packet's bytes (for PTD_FMT_RAW), may be NULL otherwise.
 * If formatting needs diagnostics first (--lastip before any IP: ptdump
 * prints "[<off>: error tracking last-ip: no ip]" before the packet; --time
 * on a CYC before calibration: "[<off>: calibration error: no timing
 * information]" and "[<off>: error updating time: no calibration]"), they
 * are written to diag, one line each, separated by '\n', NUL-terminated,
 * when diag is not NULL (PTD_FMT_DIAG_MAX bytes suffice), else dropped.
 * Returns the line length, 0 if the packet is not shown (--no-pad, ...),
 * or -PTD_ERR_NOSPC. */
int ptd_fmt_packet(char *line, size_t cap, const struct ptd_fmt_options *opt,
                   struct ptd_fmt_state *st, uint64_t offset, const struct ptd_pkt *p,
                   const uint8_t *raw, char *diag, size_t diag_cap);

/* ptdump's error line: "[<offset hex>: <what>: <error string>]". */
int ptd_fmt_error(char *line, size_t cap, uint64_t offset, const char *what, int err);

/* The whole dump: sync, decode, format, resync after errors, as ptdump
 * does. */
struct ptd_dump {
    struct ptd_pkt_decoder dec;
    struct ptd_fmt_options opt;
    struct ptd_fmt_state st;
    uint8_t phase;        /* internal */
    uint8_t have_pending; /* a packet line waits behind diagnostics */
    uint8_t cpu_unknown;  /* the --cpu diagnostic is still to print */
    uint16_t pending_len;
    uint16_t diag_pos; /* diagnostics still to print: diag[diag_pos..] */
    uint16_t diag_len;
    uint64_t packets; /* packets decoded */
    uint64_t errors;  /* decode errors (each followed by a resync) */
    uint64_t skipped; /* bytes skipped: before the first PSB and by resyncs */
    uint8_t no_psb;   /* the trace holds no PSB (nothing decoded: all skipped) */
    char pending[PTD_FMT_LINE_MAX];
    char diag[PTD_FMT_DIAG_MAX];
};

void ptd_dump_init(struct ptd_dump *d, const struct ptd_fmt_options *opt);
/* The trace, one contiguous buffer (offsets are relative to it). */
int ptd_dump_feed(struct ptd_dump *d, const uint8_t *buf, size_t size);
/* The next line into line[0..cap), cap >= PTD_FMT_LINE_MAX: returns its
 * length (> 0), 0 at the end, or a negative error (-PTD_ERR_NOSPC when cap
 * is smaller). */
int ptd_dump_line(struct ptd_dump *d, char *line, size_t cap);

#endif
