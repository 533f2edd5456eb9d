/* Decoding a capture on the target: the flow decoder (decoder/ptd_flow.h)
 * over the linearised trace, reading code from the capture's snapshots,
 * with a short summary printed between
 *   ptboot: trace decode begin
 *   ptboot: trace decode end insns=<n> errors=<n> calls=<n> returns=<n>
 * Lines in between:
 *   call <module>+0x<off> count=<n>     each call target, in the order of
 *                                       its first call
 *   branch <from> -> <to> <class>       the last N branches, oldest first
 *   error offset=0x<h> ip=0x<h> <text>  decode errors (first few)
 * Module names are the capture's image names; addresses outside every
 * image print as 0x<address>. */
#ifndef PTBOOT_EFI_CAPTURE_DECODE_H
#define PTBOOT_EFI_CAPTURE_DECODE_H

#include <stdint.h>

#include "efi/capture/capture.h"

#define PTB_CAPTURE_LAST_DEFAULT 16
#define PTB_CAPTURE_LAST_MAX     256

struct efi_capture_totals {
    uint64_t insns, errors, calls, returns, enables, disables;
};

/* Decodes c->trace (after efi_capture_run and efi_capture_code); last:
 * how many of the last branches to print (0: none). Returns 0, or -1 when
 * there was nothing to decode (said why). */
int efi_capture_decode(struct efi_capture *c, unsigned last, struct efi_capture_totals *t);

/* The decode summaries of decoder/ptd_sum.h (call tree with module+offset
 * names, instructions per image and function, hot blocks and edges, the
 * last transitions, errors) between
 *   ptboot: trace summary begin
 *   ptboot: trace summary end lines=<n> insns=<n> errors=<n>
 * the same lines as the host's `ptboot summary --pt trace.pt --pages code
 * --mode 64 --module BASE:SIZE:NAME...` on the dumped files. Returns 0 or -1
 * (no memory for the tables, said). */
int efi_capture_summary(struct efi_capture *c, unsigned last, struct efi_capture_totals *t);
/* The same with PTD_SUM_F_* flags (PTD_SUM_F_TAIL: `decode --tail`). */
int efi_capture_summary_flags(struct efi_capture *c, unsigned last, unsigned flags,
                              struct efi_capture_totals *t);

#endif
