/* A trace buffer as one stream a decoder can read: the valid bytes oldest
 * first (a wrapped ring (ToPA END back to the first table, or a single
 * range) continues at the write position, SDM 36.2.6), starting at the
 * first PSB, since a decoder cannot synchronise on the bytes before it
 * (the oldest packets of a wrapped ring are cut anywhere). The same for the
 * hardware path (rtit_output_summarize) and the software unit
 * (soft_unit_summarize). */
#ifndef PTBOOT_ARCH_X86_RTIT_LINEAR_H
#define PTBOOT_ARCH_X86_RTIT_LINEAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/x86/rtit_seq.h"

struct rtit_linear {
    uint64_t bytes;   /* bytes of the stream, from the first PSB */
    uint64_t skipped; /* valid bytes before the first PSB, left out */
    bool have_psb;    /* false: no PSB at all, bytes = 0 */
};

/* Copies the stream into out[0..cap) (cap >= s->bytes is enough). Returns
 * 0, or -1 when cap is too small or s does not fit the buffer. */
int rtit_trace_linearize(const uint8_t *buf, const struct rtit_output_summary *s, uint8_t *out,
                         uint64_t cap, struct rtit_linear *lin);

/* The same in place, without a second buffer (on the target): rotates buf
 * so the oldest byte comes first, then moves the stream to offset 0.
 * Returns 0 or -1 (s does not fit). buf keeps s->buffer_bytes bytes. */
int rtit_trace_linearize_in_place(uint8_t *buf, const struct rtit_output_summary *s,
                                  struct rtit_linear *lin);

#endif
