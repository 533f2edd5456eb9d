/* Intel PT as a flight recorder across a reset (docs/hang.md): the two
 * things the hardware unit needs beyond start/stop, over struct
 * rtit_msr_ops so the target and the RTIT model run the same code.
 *
 * The write position lives only in IA32_RTIT_OUTPUT_BASE/MASK_PTRS, which
 * a warm reset clears unless CPUID.(14h,0).EBX[2] says the RTIT MSRs are
 * kept (SDM 36.2.7.1; TraceEn is cleared either way), and which are only
 * stable while TraceEn=0 (36.2.7.7). So:
 *
 *   rtit_recorder_save  (a periodic timer event, and every report) pauses
 *       the unit (TraceEn 1 -> 0), reads the position, writes zero_band
 *       zero bytes after it (wrapping at the buffer's end) and resumes
 *       (TraceEn 0 -> 1, the other CTL bits as they were). The caller
 *       keeps the position in the recorder's header. A resume with
 *       STATUS.PacketByteCnt != 0 writes no PSB+, only timing packets and
 *       a TIP.PGE (36.2.7.3): the decoder goes on.
 *   rtit_recorder_find  (the next boot) finds the newest data in the ring:
 *       1. the position from the MSRs, if they survived and still point
 *          into our tables (exact);
 *       2. the position saved when tracing stopped for good (exact);
 *       3. the saved position plus the zero band: the newest data runs
 *          from the saved position to the first run of RTIT_RECORDER_ZERO_RUN
 *          zero bytes inside the band (exact, unless the unit wrote more
 *          than the band since the last save);
 *       4. the PSB+ time stamps: every PSB+ carries a TSC packet (TSCEn),
 *          so going round the ring from the saved position the TSC rises
 *          until the wrap point, where the oldest data begins and time goes
 *          backwards. The newest data ends after the last PSB before that
 *          point: decoded packet by packet from it, it ends at the first
 *          packet error, zero run, TSC that goes back, or the next (older)
 *          PSB. Known to within one PSB period (2 KiB << CTL.PSBFreq), so
 *          end_exact is false.
 *       The result is an rtit_output_summary for rtit_trace_linearize():
 *       oldest byte and count, wrapped when any non-zero byte follows the
 *       end (the buffer was zeroed at start, 36.2.6.2 gives no wrap flag).
 *
 * No allocation: rtit_recorder_find takes a scratch buffer as large as the
 * trace buffer. Bounded by the buffer's size. */
#ifndef PTBOOT_ARCH_X86_RTIT_RECORDER_H
#define PTBOOT_ARCH_X86_RTIT_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_msr.h"
#include "arch/x86/rtit_seq.h"

/* Zero bytes written after the position at every save: more than the unit
 * writes between two saves in most boots (a 100 ms period), so that the end
 * of the newest data shows. */
#define RTIT_RECORDER_ZERO_BAND (64u << 10)
/* A run of this many zero bytes ends the newest data (PAD packets are
 * single zero bytes a CPU writes rarely, never this many in a row). */
#define RTIT_RECORDER_ZERO_RUN 32u

/* Pause, position, zero band, resume. info as capture_seq_snapshot's;
 * buf: the output buffer as the CPU writes it (regions back to back).
 * Returns an enum rtit_seq_result; a stopped or failed unit stays off. */
int rtit_recorder_save(const struct rtit_msr_ops *ops, const struct rtit_config *cfg, uint8_t *buf,
                       uint64_t zero_band, struct rtit_stop_info *info);

struct rtit_recorder_hint {
    uint64_t buffer_bytes; /* the ring's size (regions back to back) */
    int64_t msr_pos;       /* position from the MSRs read now, -1: none */
    int64_t saved_pos;     /* position kept by the last save, -1: none */
    bool saved_final;      /* saved when tracing stopped for good */
    uint64_t zero_band;    /* the band each save zeroed (0: none) */
};

enum rtit_recorder_source {
    RTIT_RECORDER_FROM_NONE = 0, /* nothing found: no PSB */
    RTIT_RECORDER_FROM_MSR = 1,
    RTIT_RECORDER_FROM_STOP = 2,
    RTIT_RECORDER_FROM_BAND = 3,
    RTIT_RECORDER_FROM_TSC = 4,
};

struct rtit_recorder_found {
    struct rtit_output_summary sum; /* for rtit_trace_linearize() */
    int source;                     /* enum rtit_recorder_source */
    bool end_exact;
    uint64_t end;        /* buffer offset just past the newest byte */
    uint64_t psbs;       /* PSBs in the buffer (TSC method) */
    uint64_t newest_psb; /* buffer offset of the newest PSB (TSC method) */
    uint64_t newest_tsc;
};

/* buf: the ring (hint->buffer_bytes bytes); scratch: as many bytes, any
 * content. Returns 0, or -1 (bad hint, or no PSB at all: source NONE). */
int rtit_recorder_find(const uint8_t *buf, const struct rtit_recorder_hint *hint, uint8_t *scratch,
                       struct rtit_recorder_found *out);

const char *rtit_recorder_source_name(int source);

#endif
