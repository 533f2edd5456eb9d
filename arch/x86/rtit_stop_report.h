/* What a capture left, as text lines after rtit_stop(), ending with one
 * machine-readable line:
 *
 *   ptboot: trace bytes=<n> buffer=<n> oldest=<n> wrapped=<0|1>
 *           stopped=<0|1> error=<0|1>          (one line)
 *
 * bytes: valid trace bytes; oldest: buffer offset where they start (the
 * trace is [oldest, buffer) followed by [0, oldest) when wrapped). */
#ifndef PTBOOT_ARCH_X86_RTIT_STOP_REPORT_H
#define PTBOOT_ARCH_X86_RTIT_STOP_REPORT_H

#include "arch/x86/rtit_seq.h"

void rtit_stop_report(const struct rtit_stop_info *stop, const struct rtit_output_summary *sum,
                      void (*emit)(void *ctx, const char *line), void *ctx);

#endif
