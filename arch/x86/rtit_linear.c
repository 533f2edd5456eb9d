/* Oldest-first, PSB-first trace streams: see rtit_linear.h. */
#include "arch/x86/rtit_linear.h"

#include "decoder/ptd_pkt.h"

static bool summary_ok(const struct rtit_output_summary *s)
{
    return s->bytes <= s->buffer_bytes && s->oldest < (s->buffer_bytes ? s->buffer_bytes : 1) &&
           (s->oldest == 0 || s->bytes == s->buffer_bytes);
}

/* Where the stream starts in lin[0..n): the first complete PSB. */
static void find_psb(const uint8_t *lin, uint64_t n, struct rtit_linear *out)
{
    int64_t at = n ? ptd_psb_find(lin, (size_t)n, 0) : -PTD_ERR_EOS;
    out->have_psb = at >= 0;
    out->skipped = at >= 0 ? (uint64_t)at : n;
    out->bytes = n - out->skipped;
}

int rtit_trace_linearize(const uint8_t *buf, const struct rtit_output_summary *s, uint8_t *out,
                         uint64_t cap, struct rtit_linear *lin)
{
    if (!buf || !s || !out || !lin || !summary_ok(s) || cap < s->bytes)
        return -1;
    for (uint64_t i = 0; i < s->bytes; i++) {
        uint64_t at = s->oldest + i;
        if (at >= s->buffer_bytes)
            at -= s->buffer_bytes;
        out[i] = buf[at];
    }
    find_psb(out, s->bytes, lin);
    for (uint64_t i = 0; i < lin->bytes; i++)
        out[i] = out[lin->skipped + i];
    return 0;
}

static void reverse(uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0, j = n; i + 1 < j; i++, j--) {
        uint8_t t = p[i];
        p[i] = p[j - 1];
        p[j - 1] = t;
    }
}

int rtit_trace_linearize_in_place(uint8_t *buf, const struct rtit_output_summary *s,
                                  struct rtit_linear *lin)
{
    if (!buf || !s || !lin || !summary_ok(s))
        return -1;
    if (s->oldest) {
        /* rotate left by oldest: three reversals, O(n), no memory */
        reverse(buf, s->oldest);
        reverse(buf + s->oldest, s->buffer_bytes - s->oldest);
        reverse(buf, s->buffer_bytes);
    }
    find_psb(buf, s->bytes, lin);
    for (uint64_t i = 0; i < lin->bytes; i++)
        buf[i] = buf[lin->skipped + i];
    return 0;
}
