#include <string.h>

#include "arch/x86/capture_seq.h"
#include "arch/x86/rtit_recorder.h"
#include "decoder/ptd_pkt.h"

/* Packets of a PSB+ looked at for its TSC (PSB, TSC, TMA, CBR, VMCS, PIP,
 * MODE, FUP, PAD, PSBEND: a handful; SDM 36.3.7 "Packet generation"). */
#define PSB_PLUS_MAX_PACKETS 32

int rtit_recorder_save(const struct rtit_msr_ops *ops, const struct rtit_config *cfg, uint8_t *buf,
                       uint64_t zero_band, struct rtit_stop_info *info)
{
    int err = capture_seq_pause_read(ops, cfg, info);
    if (err != RTIT_SEQ_OK)
        return err;
    uint64_t size = rtit_config_buffer_bytes(cfg);
    if (buf && size && info->write_pos >= 0 && (uint64_t)info->write_pos < size) {
        uint64_t band = zero_band < size ? zero_band : size;
        uint64_t pos = (uint64_t)info->write_pos;
        uint64_t first = size - pos < band ? size - pos : band;
        memset(buf + pos, 0, (size_t)first);
        memset(buf, 0, (size_t)(band - first));
    }
    if (info->was_tracing && !info->stopped && !info->error)
        return capture_seq_resume(ops, cfg, NULL);
    return RTIT_SEQ_OK;
}

/* The ring from `from` on, oldest byte of the rotation first. */
static void rotate(const uint8_t *buf, uint64_t size, uint64_t from, uint8_t *out)
{
    memcpy(out, buf + from, (size_t)(size - from));
    memcpy(out + (size - from), buf, (size_t)from);
}

/* First offset in lin[from, limit) where RTIT_RECORDER_ZERO_RUN zero bytes
 * begin (the run may reach up to size), or -1. */
static int64_t zero_run(const uint8_t *lin, uint64_t size, uint64_t from, uint64_t limit)
{
    uint64_t run = 0;
    for (uint64_t i = from; i < size; i++) {
        if (lin[i]) {
            run = 0;
            if (i >= limit)
                return -1;
            continue;
        }
        if (++run == RTIT_RECORDER_ZERO_RUN)
            return (int64_t)(i + 1 - run);
    }
    /* zeros up to the end of the buffer, shorter than a run: the end too */
    return run && size - run < limit ? (int64_t)(size - run) : -1;
}

/* A zero run starts at lin[at] (or the zeros reach the end). */
static bool zeros_at(const uint8_t *lin, uint64_t size, uint64_t at)
{
    for (uint64_t i = at; i < size && i < at + RTIT_RECORDER_ZERO_RUN; i++)
        if (lin[i])
            return false;
    return true;
}

/* The TSC in the PSB+ at lin[psb], or false. */
static bool psb_tsc(const uint8_t *lin, uint64_t size, uint64_t psb, uint64_t *tsc)
{
    struct ptd_pkt_decoder d;
    struct ptd_pkt p;
    if (ptd_pkt_init(&d, lin, (size_t)size) || ptd_pkt_sync_set(&d, psb))
        return false;
    for (int i = 0; i < PSB_PLUS_MAX_PACKETS; i++) {
        if (ptd_pkt_next(&d, &p) <= 0)
            return false;
        if (p.kind == PTD_PKT_TSC) {
            *tsc = p.payload;
            return true;
        }
        if (p.kind == PTD_PKT_PSBEND)
            return false;
    }
    return false;
}

/* Where the newest data ends, decoding from the newest PSB at lin[from]:
 * the first bad packet, zero run, TSC older than tsc, or PSB after it. */
static uint64_t newest_end(const uint8_t *lin, uint64_t size, uint64_t from, uint64_t tsc)
{
    struct ptd_pkt_decoder d;
    struct ptd_pkt p;
    if (ptd_pkt_init(&d, lin, (size_t)size) || ptd_pkt_sync_set(&d, from))
        return from;
    bool first = true;
    for (;;) {
        uint64_t at = ptd_pkt_offset(&d);
        if (at >= size)
            return size;
        if (zeros_at(lin, size, at))
            return at;
        if (ptd_pkt_next(&d, &p) <= 0)
            return at;
        if (p.kind == PTD_PKT_PSB && !first)
            return at;
        if (p.kind == PTD_PKT_TSC && p.payload < tsc)
            return at;
        first = false;
    }
}

/* The summary of a ring whose newest byte ends at end: wrapped when any
 * non-zero byte follows (the buffer was zeroed when tracing started). */
static void summarize(const uint8_t *buf, uint64_t size, uint64_t end,
                      struct rtit_output_summary *s)
{
    memset(s, 0, sizeof *s);
    s->buffer_bytes = size;
    for (uint64_t i = end; i < size; i++)
        if (buf[i]) {
            s->wrapped = true;
            break;
        }
    s->bytes = s->wrapped ? size : end;
    s->oldest = s->wrapped ? end : 0;
}

/* Method 4: the PSB+ time stamps, going round from `from`. */
static int by_tsc(const uint8_t *buf, uint64_t size, uint64_t from, uint8_t *lin,
                  struct rtit_recorder_found *out)
{
    rotate(buf, size, from, lin);
    int64_t psb = ptd_psb_find(lin, (size_t)size, 0);
    if (psb < 0)
        return -1;
    uint64_t newest = (uint64_t)psb, newest_tsc = 0;
    bool have_tsc = psb_tsc(lin, size, newest, &newest_tsc);
    out->psbs = 1;
    for (;;) {
        int64_t next = ptd_psb_find(lin, (size_t)size, newest + 1);
        if (next < 0)
            break;
        uint64_t t = 0;
        bool ht = psb_tsc(lin, size, (uint64_t)next, &t);
        /* time goes backwards: the oldest data begins here */
        if (have_tsc && ht && t < newest_tsc)
            break;
        out->psbs++;
        newest = (uint64_t)next;
        if (ht) {
            newest_tsc = t;
            have_tsc = true;
        }
    }
    uint64_t end = newest_end(lin, size, newest, have_tsc ? newest_tsc : 0);
    out->newest_psb = (from + newest) % size;
    out->newest_tsc = newest_tsc;
    out->end = (from + end) % size;
    out->source = RTIT_RECORDER_FROM_TSC;
    out->end_exact = false;
    return 0;
}

int rtit_recorder_find(const uint8_t *buf, const struct rtit_recorder_hint *h, uint8_t *scratch,
                       struct rtit_recorder_found *out)
{
    memset(out, 0, sizeof *out);
    uint64_t size = h->buffer_bytes;
    if (!buf || !scratch || !size)
        return -1;
    if (h->msr_pos >= 0 && (uint64_t)h->msr_pos <= size) {
        out->source = RTIT_RECORDER_FROM_MSR;
        out->end = (uint64_t)h->msr_pos % size;
        out->end_exact = true;
    } else if (h->saved_final && h->saved_pos >= 0 && (uint64_t)h->saved_pos <= size) {
        out->source = RTIT_RECORDER_FROM_STOP;
        out->end = (uint64_t)h->saved_pos % size;
        out->end_exact = true;
    } else {
        uint64_t from =
            h->saved_pos >= 0 && (uint64_t)h->saved_pos < size ? (uint64_t)h->saved_pos : 0;
        int64_t z = -1;
        if (h->saved_pos >= 0 && h->zero_band) {
            rotate(buf, size, from, scratch);
            uint64_t band = h->zero_band < size ? h->zero_band : size;
            z = zero_run(scratch, size, 0,
                         band > RTIT_RECORDER_ZERO_RUN ? band - RTIT_RECORDER_ZERO_RUN + 1 : 1);
        }
        if (z >= 0) {
            out->source = RTIT_RECORDER_FROM_BAND;
            out->end = (from + (uint64_t)z) % size;
            out->end_exact = true;
        } else if (by_tsc(buf, size, from, scratch, out)) {
            return -1;
        }
    }
    summarize(buf, size, out->end, &out->sum);
    return 0;
}

const char *rtit_recorder_source_name(int source)
{
    switch (source) {
    case RTIT_RECORDER_FROM_NONE: return "none";
    case RTIT_RECORDER_FROM_MSR: return "msr";
    case RTIT_RECORDER_FROM_STOP: return "stopped";
    case RTIT_RECORDER_FROM_BAND: return "zero-band";
    case RTIT_RECORDER_FROM_TSC: return "tsc";
    }
    return "?";
}
