#include <stdio.h>
#include <string.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_linear.h"
#include "arch/x86/rtit_recorder.h"
#include "arch/x86/rtit_regs.h"
#include "arch/x86/rtit_topa.h"
#include "efi/platform/msr_safe.h"
#include "efi/resident/recover.h"
#include "efi/resident/resident.h"

#define PAGE_BYTES 4096ull

/* The summaries' modules: the images of the recorder's sideband. */
static struct ptd_sum_module mods[SIDEBAND_MAX_IMAGES];

const char *resident_recover_reason_name(uint32_t reason)
{
    return resident_stop_reason_name(reason);
}

/* The soft unit's trace: the live slot's position is exact. */
static int soft_trace(struct resident_recover *r, const uint8_t *area, uint8_t *out, size_t cap)
{
    const struct recorder_live *l = &r->v.live;
    struct rtit_output_summary s;
    memset(&s, 0, sizeof s);
    s.buffer_bytes = r->v.fixed.trace_bytes;
    if (l->linear || !l->wrapped) {
        s.bytes = l->write_pos;
    } else {
        s.wrapped = true;
        s.bytes = s.buffer_bytes;
        s.oldest = l->write_pos;
    }
    r->source = recorder_pos_source_name(l->pos_source);
    r->end_exact = true;
    r->wrapped = l->wrapped != 0;
    struct rtit_linear lin;
    if (rtit_trace_linearize(area, &s, out, cap, &lin))
        return -1;
    r->trace_len = (size_t)lin.bytes;
    return 0;
}

/* The hardware unit's: arch/x86/rtit_recorder.h finds the end. */
static int hw_trace(struct resident_recover *r, const uint8_t *area, uint8_t *out, size_t cap,
                    uint8_t *scratch)
{
    const struct recorder_live *l = &r->v.live;
    struct rtit_recorder_hint h = {
        .buffer_bytes = r->v.fixed.trace_bytes,
        .msr_pos = r->msr_pos,
        .saved_pos = l->pos_source >= RECORDER_POS_SAVED ? (int64_t)l->write_pos : -1,
        .saved_final = l->pos_source == RECORDER_POS_STOPPED || l->linear,
        .zero_band = RTIT_RECORDER_ZERO_BAND,
    };
    struct rtit_recorder_found f;
    if (l->linear) {
        /* linearised in place by a report: [0, write_pos) */
        memset(&f, 0, sizeof f);
        f.sum.buffer_bytes = h.buffer_bytes;
        f.sum.bytes = l->write_pos;
        f.source = RTIT_RECORDER_FROM_STOP;
        f.end_exact = true;
    } else if (rtit_recorder_find(area, &h, scratch, &f)) {
        r->source = "none";
        r->trace_len = 0;
        return 0;
    }
    r->source = rtit_recorder_source_name(f.source);
    r->end_exact = f.end_exact;
    r->wrapped = f.sum.wrapped || l->wrapped;
    struct rtit_linear lin;
    if (rtit_trace_linearize(area, &f.sum, out, cap, &lin))
        return -1;
    r->trace_len = (size_t)lin.bytes;
    return 0;
}

int resident_recover_open(struct resident_recover *r, uint8_t *out, size_t cap, uint8_t *scratch,
                          struct sideband *sb)
{
    r->trace = out;
    r->trace_len = 0;
    r->sb = sb;
    r->sb_ok = false;
    r->pages = 0;
    r->have_last = false;
    r->check = recorder_check(r->mem, r->bytes, r->phys, &r->v);
    if (r->check != RECORDER_OK)
        return -1;
    const struct recorder_fixed *f = &r->v.fixed;
    if (cap < f->trace_bytes)
        return -1;
    const uint8_t *area = r->mem + f->trace_off;
    int e = f->unit == RECORDER_UNIT_SOFT ? soft_trace(r, area, out, cap)
                                          : hw_trace(r, area, out, cap, scratch);
    if (e)
        return -1;
    size_t len;
    const char *text = recorder_sideband(r->mem, &r->v, &len);
    struct sideband_error se;
    r->sb_ok = text && !sideband_parse(sb, text, len, &se);
    if (!r->sb_ok) {
        sideband_init(sb);
        sb->unit = f->unit == RECORDER_UNIT_SOFT ? SIDEBAND_UNIT_SOFT : SIDEBAND_UNIT_HW;
    }
    sb->trace.bytes = r->trace_len;
    sb->trace.wrapped = r->wrapped;
    sb->trace.stopped = r->v.live.state == RECORDER_STOPPED;
    recorder_code(r->mem, &r->v, &r->code_dump, &r->code_addr, &r->pages);
    return 0;
}

/* The flow pass's sink: keeps the last IP line, prints nothing. */
static uint64_t quiet_last_ip;
static bool quiet_have_ip;
static void quiet_sink(const char *s, size_t len)
{
    if (len != 16)
        return;
    uint64_t v = 0;
    for (size_t i = 0; i < 16; i++) {
        char c = s[i];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                                            : 16;
        if (d == 16)
            return;
        v = v << 4 | d;
    }
    quiet_last_ip = v;
    quiet_have_ip = true;
}

void resident_recover_report(struct resident_recover *r, ebs_report_sink out, void *arena,
                             struct code_page *pages)
{
    static struct ebs_report rep;
    static struct code_image ci;
    const struct recorder_fixed *f = &r->v.fixed;
    const struct recorder_live *l = &r->v.live;
    ebs_report_say(
        out,
        "ptboot: recover found generation=%llu unit=%s region=0x%llx+0x%llx state=%s reason=%s "
        "image=%s hang_reports=%u saves=%llu\n",
        (unsigned long long)f->generation, f->unit == RECORDER_UNIT_SOFT ? "soft" : "hw",
        (unsigned long long)f->region_phys, (unsigned long long)f->region_bytes,
        recorder_state_name(l->state), resident_recover_reason_name(l->stop_reason),
        f->image[0] ? f->image : "-", l->hang_reports, (unsigned long long)l->saves);
    ebs_report_say(out, "ptboot: recover trace source=%s end=%s bytes=%llu wrapped=%u\n", r->source,
                   r->end_exact ? "exact" : "approx", (unsigned long long)r->trace_len,
                   r->wrapped ? 1u : 0u);
    if (r->sb_ok)
        ebs_report_say(out, "ptboot: recover sideband images=%u\n", r->sb->nimages);
    else
        ebs_report_say(
            out, "ptboot: recover warning: the sideband is damaged or missing (its CRC does not "
                 "hold): no module names\n");
    code_image_init(&ci, pages, r->pages);
    bool code = r->pages &&
                !code_image_add_dump(&ci, r->code_dump, r->pages * PAGE_BYTES, r->code_addr,
                                     r->pages * 8) &&
                !code_image_finish(&ci);
    if (code)
        ebs_report_say(out, "ptboot: recover code pages=%llu\n", (unsigned long long)r->pages);
    else
        ebs_report_say(out,
                       "ptboot: recover warning: no intact code pages (CRC or addresses): nothing "
                       "decodes past the trace's packets\n");
    memset(&rep, 0, sizeof rep);
    rep.unit = f->unit == RECORDER_UNIT_SOFT ? "soft" : "hw";
    rep.trace_name = "trace.pt";
    rep.trace = r->trace;
    rep.trace_bytes = r->trace_len;
    rep.read = code ? code_image_read : NULL;
    rep.ctx = &ci;
    if (!code) {
        code_image_init(&ci, pages, 0);
        rep.read = code_image_read;
    }
    /* the soft unit traced one image: its filter range, as it ran */
    for (uint32_t i = 0; r->sb_ok && i < r->sb->config.nfilter && rep.nfilter < EBS_REPORT_FILTERS;
         i++) {
        if (r->sb->config.filter[i].kind != SIDEBAND_FILTER_EN)
            continue;
        rep.filter_lo[rep.nfilter] = r->sb->config.filter[i].a;
        rep.filter_hi[rep.nfilter++] = r->sb->config.filter[i].b;
    }
    /* time as the host reads it from the same sideband (MTCFreq, the
     * soft unit's crystal clock): the two summaries agree */
    static struct ptd_time_config tcfg;
    memset(&tcfg, 0, sizeof tcfg);
    if (r->sb_ok) {
        sideband_time_config(r->sb, &tcfg);
        rep.time = &tcfg;
    }
    /* the counts and the last IP: a flow pass that prints nothing */
    quiet_have_ip = false;
    long e = ebs_report_flow(&rep, quiet_sink, &r->insns);
    r->errors = e < 0 ? 1 : (uint64_t)e;
    r->have_last = quiet_have_ip;
    r->last_ip = quiet_last_ip;
    if (arena) {
        uint32_t n = r->sb->nimages < SIDEBAND_MAX_IMAGES ? r->sb->nimages : SIDEBAND_MAX_IMAGES;
        for (uint32_t i = 0; i < n; i++) {
            mods[i].base = r->sb->images[i].base;
            mods[i].size = r->sb->images[i].size;
            mods[i].name = r->sb->images[i].name;
        }
        rep.sum_arena = arena;
        rep.sum_arena_bytes = EBS_REPORT_SUM_ARENA;
        rep.modules = mods;
        rep.nmodules = n;
        /* the tail: where the code went after the last packet (a spin) */
        rep.sum_tail = true;
        ebs_report_summary(&rep, out);
    }
}

void resident_recover_final(const struct resident_recover *r, ebs_report_sink out)
{
    char last[SIDEBAND_NAME_MAX + 24];
    const struct sideband_image *im =
        r->have_last && r->sb_ok ? sideband_find_image(r->sb, r->last_ip) : NULL;
    if (!r->have_last)
        snprintf(last, sizeof last, "none");
    else if (im)
        snprintf(last, sizeof last, "%s+0x%llx", im->name,
                 (unsigned long long)(r->last_ip - im->base));
    else
        snprintf(last, sizeof last, "0x%llx", (unsigned long long)r->last_ip);
    ebs_report_say(
        out, "ptboot: recover unit=%s bytes=%llu insns=%llu errors=%llu reset=1 last=%s\n",
        r->v.fixed.unit == RECORDER_UNIT_SOFT ? "soft" : "hw", (unsigned long long)r->trace_len,
        (unsigned long long)r->insns, (unsigned long long)r->errors, last);
}

size_t resident_recover_text(const struct resident_recover *r, char *buf, size_t cap)
{
    const struct recorder_fixed *f = &r->v.fixed;
    const struct recorder_live *l = &r->v.live;
    int n = snprintf(
        buf, cap,
        "ptboot-recover 1\nreset=1\ngeneration=%llu\nunit=%s\nregion=0x%llx+0x%llx\nstate=%s\n"
        "reason=%s\nimage=%s\noptions=%s\nsource=%s\nend=%s\nwrapped=%u\nhang_reports=%u\n"
        "saves=%llu\nsideband=%s\ncode_pages=%llu\n",
        (unsigned long long)f->generation, f->unit == RECORDER_UNIT_SOFT ? "soft" : "hw",
        (unsigned long long)f->region_phys, (unsigned long long)f->region_bytes,
        recorder_state_name(l->state), resident_recover_reason_name(l->stop_reason),
        f->image[0] ? f->image : "-", f->options, r->source, r->end_exact ? "exact" : "approx",
        r->wrapped ? 1u : 0u, l->hang_reports, (unsigned long long)l->saves,
        r->sb_ok ? "ok" : "damaged", (unsigned long long)r->pages);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

int64_t resident_recover_msr_pos(const struct recorder_fixed *f)
{
    struct rtit_caps caps;
    rtit_caps_read(&caps, x86_cpuid_native, NULL);
    if (!caps.pt || f->unit != RECORDER_UNIT_HW || !f->table_bytes)
        return -1;
    const struct rtit_msr_ops *ops = &efi_msr_safe_ops;
    uint64_t ctl, base, ptrs;
    if (ops->rd(ops->ctx, RTIT_MSR_CTL, &ctl) || (ctl & RTIT_CTL_TRACEEN) ||
        ops->rd(ops->ctx, RTIT_MSR_OUTPUT_BASE, &base) ||
        ops->rd(ops->ctx, RTIT_MSR_OUTPUT_MASK_PTRS, &ptrs))
        return -1;
    struct rtit_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.output = RTIT_OUTPUT_TOPA;
    cfg.when_full = RTIT_FULL_RING;
    cfg.regions = f->regions;
    cfg.region_size_code = f->region_code;
    cfg.buffer_phys = f->region_phys + f->trace_off;
    cfg.table_phys = f->region_phys + f->table_off;
    struct rtit_topa_layout l;
    if (rtit_topa_layout(&l, &cfg) != RTIT_TOPA_OK)
        return -1;
    return rtit_topa_position(&l, base, ptrs);
}
