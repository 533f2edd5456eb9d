/* The previous boot's hang recorder, read back after a reset (docs/hang.md):
 * shared by the resident driver at the next installed boot (to COM1, no
 * files) and `ptboot.efi recover` (console, files, serial dump):
 *
 *   resident_recover_open    recorder_check() of the region (nothing is
 *                            used before it passes), then the trace, oldest
 *                            byte first: the soft unit's write position from
 *                            the live slot (exact); the hardware unit's from
 *                            arch/x86/rtit_recorder.h (the MSRs if they
 *                            survived, the saved position, its zero band,
 *                            the PSB+ time stamps); the sideband and the
 *                            code only when their CRCs hold
 *   resident_recover_report  what was found, the decode summaries
 *                            (decoder/ptd_sum.h, module+offset names from
 *                            the recorder's sideband, code from its pages),
 *                            and the counts for the final line
 *   resident_recover_final   the line every recovery ends with:
 *     ptboot: recover unit=<hw|soft> bytes=<n> insns=<n> errors=<n> reset=1 last=<module>+0x<off>
 *
 * Lines before it:
 *   ptboot: recover found generation=<g> unit=<u> region=0x<a>+0x<n> state=<s> reason=<r> image=<name> hang_reports=<n> saves=<n>
 *   ptboot: recover trace source=<unit|stopped|msr|zero-band|tsc> end=<exact|approx> bytes=<n> wrapped=<0|1>
 *   ptboot: recover sideband images=<n>          (or a warning: not used)
 *   ptboot: recover code pages=<n>               (or a warning: not used)
 *   ptboot: trace summary begin ... end          (docs/summary.md)
 *
 * No boot services and no allocation inside: the caller hands in the
 * buffers (the driver runs this before BDS connects the consoles). */
#ifndef PTBOOT_EFI_RESIDENT_RECOVER_H
#define PTBOOT_EFI_RESIDENT_RECOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "efi/capture/ebs_report.h"
#include "format/code_image.h"
#include "format/recorder.h"
#include "format/sideband.h"

struct resident_recover {
    /* in: the region as it can be read now (the original place or a copy) */
    const uint8_t *mem;
    uint64_t bytes;  /* readable at mem */
    uint64_t phys;   /* where it was written */
    int64_t msr_pos; /* hw: position from the RTIT MSRs now, -1 */
    /* out */
    int check; /* recorder_check()'s enum recorder_result */
    struct recorder_view v;
    const char *source; /* how the end was found */
    bool end_exact;
    const uint8_t *trace; /* linear from its first PSB */
    size_t trace_len;
    bool wrapped;
    struct sideband *sb; /* caller's; parsed when sb_ok */
    bool sb_ok;
    const uint8_t *code_dump, *code_addr;
    size_t pages;
    uint64_t insns, errors, last_ip;
    bool have_last;
};

/* Checks the region and finds the trace, linearised into out[0..cap)
 * (cap >= the trace area) with scratch[0..cap) for the hardware unit's
 * search. sb: storage for the parsed sideband. Returns 0, or -1 when the
 * region is not a good recorder (r->check says why). */
int resident_recover_open(struct resident_recover *r, uint8_t *out, size_t cap, uint8_t *scratch,
                          struct sideband *sb);
/* The found/trace/sideband/code lines and the summaries (arena: tables
 * of EBS_REPORT_SUM_ARENA bytes, NULL: none); fills insns, errors and
 * last_ip from a flow pass over the same trace. pages: storage for the
 * code image's index, at least r->pages entries. */
void resident_recover_report(struct resident_recover *r, ebs_report_sink out, void *arena,
                             struct code_page *pages);
/* The final line. */
void resident_recover_final(const struct resident_recover *r, ebs_report_sink out);
/* recover.txt of a capture directory: reset=1 and what the header said. */
size_t resident_recover_text(const struct resident_recover *r, char *buf, size_t cap);
/* hw: the RTIT output pointers' position now, if they survived the reset
 * (CPUID.(14h,0).EBX[2] keeps them across a warm reset, SDM 36.2.7.1),
 * nobody traces (TraceEn=0) and they point into the recorder's own ToPA
 * tables (f, checked); else -1. Reads MSRs only when CPUID enumerates PT,
 * through the #GP-safe path (efi_msr_init done). */
int64_t resident_recover_msr_pos(const struct recorder_fixed *f);
/* The stop reason's name (resident.h's and RECORDER_STOP_HANG). */
const char *resident_recover_reason_name(uint32_t reason);

#endif
