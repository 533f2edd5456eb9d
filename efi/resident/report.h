/* What the resident tracer reports, the same from the driver at
 * ExitBootServices (to COM1, no boot services) and from `ptboot.efi
 * resident` later in the same boot (to the console):
 *
 *   ptboot: resident status state=<s> reason=<r> unit=soft image=<name>
 *           buffer=0x<a> size=<n> bytes=<n> steps=<n> insns=<n> images=<n>
 *   ptboot: resident image <i> base=0x.. size=0x.. entry=0x.. name=<n>   (sideband)
 *   ptboot: flow begin trace=resident bytes=<n> pages=0 live=1
 *   <ptxed --no-inst lines of the trace, code read from the images above>
 *   ptboot: flow end insns=<n> errors=<n>
 *   ptboot: trace summary begin      (with an arena: the driver at EBS)
 *   <decoder/ptd_sum.h's summaries, images named as in the sideband>
 *   ptboot: trace summary end lines=<n> insns=<n> errors=<n>
 *   ptboot: serial-dump begin files=4
 *   @PTF1 ...  the capture files of docs/capture-files.md (decoder/ptd_frame.h):
 *              trace.pt, code.dump + code.addr (the traced image's pages,
 *              the --pages format), sideband.txt
 *   ptboot: serial-dump end files=4
 *   ptboot: trace unit=soft cpu=0 bytes=<n> wrapped=<0|1> stopped=<0|1>
 *           insns=<n> errors=<n> images=<n>
 *
 * Code is read from the traced image's snapshot (efi/resident/resident.h) and
 * otherwise only inside the images the driver recorded (a corrupt trace
 * cannot steer the decoder into MMIO). Nothing here allocates: the flow,
 * the serial dump and the trace line are efi/capture/ebs_report.h's, shared with
 * `trace` of an OS loader. */
#ifndef PTBOOT_EFI_RESIDENT_REPORT_H
#define PTBOOT_EFI_RESIDENT_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "efi/capture/ebs_report.h"
#include "efi/resident/resident.h"

typedef ebs_report_sink resident_sink;

void resident_report_status(const struct resident_header *h, resident_sink out);
/* The status, the images, the flow, the serial dump and the trace line. */
void resident_report(const struct resident_header *h, resident_sink out);
/* The same with the decode summaries (efi/capture/ebs_report.h: bounded) in
 * arena (arena_bytes: EBS_REPORT_SUM_ARENA), which the caller allocated
 * beforehand (the driver, at load: the notify may not allocate). The
 * summaries are of the soft unit's trace of its --image, or the hardware
 * unit's whole trace; NULL arena: resident_report. */
void resident_report_summaries(const struct resident_header *h, void *arena, size_t arena_bytes,
                               resident_sink out);
/* A hang report (efi/capture/hang.h): the same without the flow lines
 * (the summaries' last transitions show where it spins; the flow of a
 * spinning loop is thousands of identical lines). */
void resident_report_hang(const struct resident_header *h, void *arena, size_t arena_bytes,
                          resident_sink out);
/* The flow lines alone (between the begin/end markers); returns the
 * decode errors, or -1 when the trace could not be decoded at all. */
long resident_report_flow(const struct resident_header *h, resident_sink out);
/* The trace bytes to decode: [*data, *data + *len). */
void resident_trace_bytes(const struct resident_header *h, const uint8_t **data, size_t *len);

#endif
