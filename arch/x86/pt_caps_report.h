/* Human-readable report of the Intel PT capabilities (and, when given, the
 * RTIT MSRs as found), ending with exactly one machine-readable line:
 *
 * ptboot: info pt=<yes|no> reason=<word> vendor=<id> family=0x<h> model=0x<h>
 *   stepping=0x<h> hypervisor=<0|1> maxleaf=0x<h> ranges=<n> topa=<0|1>
 *   mentry=<0|1> single=<0|1>          (all on one line)
 *
 * Lines go to emit() one at a time, without a trailing newline. */
#ifndef PTBOOT_ARCH_X86_PT_CAPS_REPORT_H
#define PTBOOT_ARCH_X86_PT_CAPS_REPORT_H

#include <stddef.h>
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_msr_snapshot.h"

typedef void (*rtit_emit_fn)(void *ctx, const char *line);

/* msrs may be NULL (nothing read, e.g. a recorded dump or the host). */
void rtit_caps_report(const struct rtit_caps *caps, const struct rtit_msr_snapshot *msrs,
                      void (*emit)(void *ctx, const char *line), void *ctx);

/* Only the machine-readable line, into buf (always NUL-terminated).
 * Returns the length snprintf would have written. */
int rtit_caps_machine_line(const struct rtit_caps *caps, char *buf, size_t size);

#endif
