#include "arch/x86/rtit_stop_report.h"

#include <stdio.h>

#include "arch/x86/x86_fmt.h"

void rtit_stop_report(const struct rtit_stop_info *st, const struct rtit_output_summary *s,
                      void (*emit)(void *ctx, const char *line), void *ctx)
{
    char line[320], a[X86_FMT_DEC64_LEN], b[X86_FMT_DEC64_LEN], c[X86_FMT_DEC64_LEN],
        h1[X86_FMT_HEX64_LEN], h2[X86_FMT_HEX64_LEN], h3[X86_FMT_HEX64_LEN];

    snprintf(line, sizeof(line), "IA32_RTIT_STATUS %s, OUTPUT_BASE %s, OUTPUT_MASK_PTRS %s",
             x86_fmt_hex64(h1, st->status), x86_fmt_hex64(h2, st->output_base),
             x86_fmt_hex64(h3, st->mask_ptrs));
    emit(ctx, line);
    if (st->write_pos < 0) {
        emit(ctx, "trace: the output pointers are outside the configured "
                  "buffer; nothing can be said about its contents");
    } else if (s->stopped_full) {
        snprintf(line, sizeof(line),
                 "trace: %s bytes, the buffer filled and "
                 "tracing stopped (ToPA STOP)",
                 x86_fmt_dec64(a, s->bytes));
        emit(ctx, line);
    } else if (s->wrapped) {
        snprintf(line, sizeof(line),
                 "trace: %s bytes, the ring wrapped: the "
                 "oldest byte is at offset %s of %s; older trace was overwritten",
                 x86_fmt_dec64(a, s->bytes), x86_fmt_dec64(b, s->oldest),
                 x86_fmt_dec64(c, s->buffer_bytes));
        emit(ctx, line);
    } else {
        snprintf(line, sizeof(line), "trace: %s bytes of %s, not wrapped",
                 x86_fmt_dec64(a, s->bytes), x86_fmt_dec64(b, s->buffer_bytes));
        emit(ctx, line);
    }
    const char *why = rtit_status_explain(st->status);
    if (why)
        emit(ctx, why);
    snprintf(line, sizeof(line),
             "ptboot: trace bytes=%s buffer=%s oldest=%s wrapped=%d stopped=%d error=%d",
             x86_fmt_dec64(a, s->bytes), x86_fmt_dec64(b, s->buffer_bytes),
             x86_fmt_dec64(c, s->oldest), s->wrapped ? 1 : 0, st->stopped ? 1 : 0,
             st->error ? 1 : 0);
    emit(ctx, line);
}
