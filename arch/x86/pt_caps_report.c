#include "arch/x86/pt_caps_report.h"

#include <stdio.h>
#include <string.h>

#include "arch/x86/cpuid_bits.h"
#include "arch/x86/rtit_regs.h"
#include "arch/x86/x86_fmt.h"

/* A line being built with snprintf pieces (no vsnprintf: stdarg is not in
 * arch/'s header budget). */
struct line {
    char buf[256];
    size_t len;
};

static void line_adv(struct line *l, int n)
{
    if (n < 0)
        return;
    l->len += (size_t)n;
    if (l->len >= sizeof(l->buf))
        l->len = sizeof(l->buf) - 1;
}

#define LPUT(l, ...) \
    line_adv((l), snprintf((l)->buf + (l)->len, sizeof((l)->buf) - (l)->len, __VA_ARGS__))

struct out {
    void (*emit)(void *ctx, const char *line);
    void *ctx;
};

static void line_start(struct line *l)
{
    l->len = 0;
    l->buf[0] = '\0';
}

static void line_emit(const struct out *o, struct line *l)
{
    o->emit(o->ctx, l->buf);
    line_start(l);
}

/* Vendor string for the machine line: printable, no spaces. */
static void vendor_word(const struct rtit_caps *c, char out[13])
{
    size_t n = 0;
    for (size_t i = 0; i < 12 && c->vendor[i]; i++) {
        char ch = c->vendor[i];
        out[n++] = (ch > ' ' && ch < 0x7f) ? ch : '_';
    }
    out[n] = '\0';
    if (n == 0)
        memcpy(out, "unknown", 8);
}

int rtit_caps_machine_line(const struct rtit_caps *c, char *buf, size_t size)
{
    char vendor[13];
    vendor_word(c, vendor);
    return snprintf(buf, size,
                    "ptboot: info pt=%s reason=%s vendor=%s family=0x%x "
                    "model=0x%x stepping=0x%x hypervisor=%d maxleaf=0x%x "
                    "ranges=%u topa=%d mentry=%d single=%d",
                    c->pt ? "yes" : "no", rtit_pt_reason_name(c->reason), vendor,
                    (unsigned)c->family, (unsigned)c->model, (unsigned)c->stepping,
                    c->hypervisor ? 1 : 0, (unsigned)c->max_basic_leaf, c->pt ? c->num_ranges : 0u,
                    c->pt && c->topa ? 1 : 0, c->pt && c->topa_multi_entry ? 1 : 0,
                    c->pt && c->single_range ? 1 : 0);
}

static const char *reason_text(enum rtit_pt_reason r)
{
    switch (r) {
    case RTIT_PT_OK: return "supported";
    case RTIT_PT_NO_LEAF7: return "max basic leaf < 7, no structured extended features";
    case RTIT_PT_NO_PT_BIT: return "CPUID.(7,0).EBX[25]=0: no Intel PT (or hidden by a hypervisor)";
    case RTIT_PT_NO_LEAF14:
        return "max basic leaf < 14h: leaf 14h would return the highest "
               "basic leaf's data, not PT capabilities";
    case RTIT_PT_NO_OUTPUT: return "neither ToPA nor single-range output (Trace Transport only)";
    }
    return "?";
}

struct capbit {
    int reg; /* 0 = EBX, 1 = ECX */
    unsigned bit;
    const char *name, *what;
};

/* Every capability bit of CPUID.(14h,0) (SDM 36.3.1, Table 36-12; newer
 * bits per rtit.md 0.4). */
static const struct capbit capbits[] = {
    { 0, 0, "cr3_filter", "CR3 filtering, IA32_RTIT_CR3_MATCH" },
    { 0, 1, "psb_cyc", "configurable PSB frequency, cycle-accurate mode (CYC)" },
    { 0, 2, "ip_filter", "IP filtering, TraceStop, MSRs kept on warm reset" },
    { 0, 3, "mtc", "MTC timing packets, COFI suppression (BranchEn=0)" },
    { 0, 4, "ptwrite", "PTWRITE (PTWEn, FUPonPTW)" },
    { 0, 5, "power_events", "power event trace (PwrEvtEn)" },
    { 0, 6, "psb_pmi_preserve", "PSB and PMI preservation (InjectPsbPmiOnEnable)" },
    { 0, 7, "event_trace", "event trace (EventEn)" },
    { 0, 8, "tnt_disable", "TNT disable (DisTNT)" },
    { 1, 0, "topa", "ToPA output" },
    { 1, 1, "topa_multi_entry", "ToPA tables with multiple output entries" },
    { 1, 2, "single_range", "single-range output" },
    { 1, 3, "trace_transport", "output to Trace Transport subsystem (FabricEn)" },
    { 1, 31, "lip", "IP payloads are LIP (CS base included), not RIP" },
};

static void list_bitmap(const struct out *o, struct line *l, const char *name, unsigned bitmap,
                        const char *meaning)
{
    LPUT(l, "  %s encodings: 0x%04x ->", name, bitmap);
    if (!bitmap)
        LPUT(l, " none");
    for (unsigned n = 0; n < 16; n++)
        if (bitmap & (1u << n))
            LPUT(l, " %u", n);
    LPUT(l, " (%s)", meaning);
    line_emit(o, l);
}

static void report_leaf14(const struct rtit_caps *c, const struct out *o, struct line *l)
{
    const x86_cpuid_regs *r = &c->leaf14_0;

    if (!c->has_leaf14) {
        LPUT(l, "leaf 14h: not read (%s)", reason_text(c->reason));
        line_emit(o, l);
        return;
    }
    LPUT(l,
         "leaf 14h.0: eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x "
         "(max subleaf %u)",
         (unsigned)r->eax, (unsigned)r->ebx, (unsigned)r->ecx, (unsigned)r->edx, (unsigned)r->eax);
    line_emit(o, l);
    for (size_t i = 0; i < sizeof(capbits) / sizeof(capbits[0]); i++) {
        const struct capbit *b = &capbits[i];
        uint32_t v = b->reg ? r->ecx : r->ebx;
        char tag[12];
        snprintf(tag, sizeof(tag), "%s[%u]", b->reg ? "ECX" : "EBX", b->bit);
        LPUT(l, "  %-7s %-17s %d  %s", tag, b->name, (int)((v >> b->bit) & 1), b->what);
        line_emit(o, l);
    }
    if (!c->has_leaf14_1) {
        LPUT(l, "leaf 14h.1: absent (14h.0.EAX=0): no address ranges, "
                "no MTC/CYC/PSB encodings");
        line_emit(o, l);
        return;
    }
    r = &c->leaf14_1;
    LPUT(l, "leaf 14h.1: eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x", (unsigned)r->eax,
         (unsigned)r->ebx, (unsigned)r->ecx, (unsigned)r->edx);
    line_emit(o, l);
    LPUT(l, "  address ranges: %u (EAX[2:0])", c->num_ranges);
    line_emit(o, l);
    list_bitmap(o, l, "MTCFreq", c->mtc_periods, "MTC every 2^n crystal clocks");
    list_bitmap(o, l, "CycThresh", c->cyc_thresholds, "CYC after 2^(n-1) cycles, 0 = every");
    list_bitmap(o, l, "PSBFreq", c->psb_periods, "PSB every 2K<<n output bytes");
}

static void report_leaf15(const struct rtit_caps *c, const struct out *o, struct line *l)
{
    char a[X86_FMT_DEC64_LEN], b[X86_FMT_DEC64_LEN];

    if (!c->has_leaf15) {
        LPUT(l, "leaf 15h: %s",
             c->max_basic_leaf < X86_CPUID_LEAF_TSC ? "absent (max basic leaf < 15h)"
                                                    : "TSC/crystal ratio not enumerated");
        line_emit(o, l);
        return;
    }
    LPUT(l, "leaf 15h: TSC/crystal ratio %u/%u", (unsigned)c->tsc_numerator,
         (unsigned)c->tsc_denominator);
    if (c->crystal_hz) {
        /* < 2^64: both factors are 32-bit */
        uint64_t tsc = (uint64_t)c->crystal_hz * c->tsc_numerator / c->tsc_denominator;
        LPUT(l, ", crystal %s Hz, TSC %s Hz", x86_fmt_dec64(a, c->crystal_hz),
             x86_fmt_dec64(b, tsc));
    } else {
        LPUT(l, ", crystal frequency not enumerated (ECX=0)");
    }
    line_emit(o, l);
}

struct field {
    unsigned shift, width;
    const char *name;
};

/* IA32_RTIT_CTL bits and fields (36.2.7.2, Table 36-6). */
static const struct field ctl_fields[] = {
    /* clang-format off */
    { 0, 1, "TraceEn" },     { 1, 1, "CYCEn" },          { 2, 1, "OS" },
    { 3, 1, "User" },        { 4, 1, "PwrEvtEn" },       { 5, 1, "FUPonPTW" },
    { 6, 1, "FabricEn" },    { 7, 1, "CR3Filter" },      { 8, 1, "ToPA" },
    { 9, 1, "MTCEn" },       { 10, 1, "TSCEn" },         { 11, 1, "DisRETC" },
    { 12, 1, "PTWEn" },      { 13, 1, "BranchEn" },      { 14, 4, "MTCFreq" },
    { 19, 4, "CycThresh" },  { 24, 4, "PSBFreq" },       { 31, 1, "EventEn" },
    { 32, 4, "ADDR0_CFG" },  { 36, 4, "ADDR1_CFG" },     { 40, 4, "ADDR2_CFG" },
    { 44, 4, "ADDR3_CFG" },  { 55, 1, "DisTNT" },        { 56, 1, "InjectPsbPmiOnEnable" },
    /* clang-format on */
};

/* IA32_RTIT_STATUS (36.2.7.4, Table 36-7). */
static const struct field status_fields[] = {
    { 0, 1, "FilterEn" },    { 1, 1, "ContextEn" },       { 2, 1, "TriggerEn" },
    { 4, 1, "Error" },       { 5, 1, "Stopped" },         { 6, 1, "PendPSB" },
    { 7, 1, "PendTopaPMI" }, { 32, 17, "PacketByteCnt" },
};

static void put_fields(struct line *l, uint64_t v, const struct field *f, size_t n)
{
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = (v >> f[i].shift) & (((uint64_t)1 << f[i].width) - 1);
        if (!x)
            continue;
        if (f[i].width == 1)
            LPUT(l, " %s", f[i].name);
        else
            LPUT(l, " %s=%u", f[i].name, (unsigned)x);
        any = 1;
    }
    if (!any)
        LPUT(l, " (all clear)");
}

static int msr_head(const struct out *o, struct line *l, const char *name, unsigned addr,
                    const struct rtit_msr_value *v)
{
    char h[X86_FMT_HEX64_LEN];

    LPUT(l, "%s (0x%x): ", name, addr);
    if (v->fault) {
        LPUT(l, "read failed (error %d: #GP, or no #GP-safe path)", v->err);
        line_emit(o, l);
        return 0;
    }
    if (!v->ok) {
        LPUT(l, "not read (not enumerated by CPUID)");
        line_emit(o, l);
        return 0;
    }
    LPUT(l, "%s", x86_fmt_hex64(h, v->value));
    return 1;
}

static void report_msrs(const struct rtit_msr_snapshot *m, const struct out *o, struct line *l)
{
    if (msr_head(o, l, "IA32_RTIT_CTL", RTIT_MSR_CTL, &m->ctl)) {
        put_fields(l, m->ctl.value, ctl_fields, sizeof(ctl_fields) / sizeof(ctl_fields[0]));
        line_emit(o, l);
    }
    if (msr_head(o, l, "IA32_RTIT_STATUS", RTIT_MSR_STATUS, &m->status)) {
        put_fields(l, m->status.value, status_fields,
                   sizeof(status_fields) / sizeof(status_fields[0]));
        line_emit(o, l);
    }
    if (msr_head(o, l, "IA32_RTIT_OUTPUT_BASE", RTIT_MSR_OUTPUT_BASE, &m->output_base))
        line_emit(o, l);
    if (msr_head(o, l, "IA32_RTIT_OUTPUT_MASK_PTRS", RTIT_MSR_OUTPUT_MASK_PTRS,
                 &m->output_mask_ptrs)) {
        uint64_t v = m->output_mask_ptrs.value;
        LPUT(l, " MaskOrTableOffset=0x%x OutputOffset=0x%x",
             (unsigned)((v & RTIT_MASK_TABLE_MASK) >> RTIT_MASK_TABLE_SHIFT),
             (unsigned)(v >> RTIT_MASK_OFFSET_SHIFT));
        line_emit(o, l);
    }
    if (rtit_msr_snapshot_tracing(m)) {
        LPUT(l, "NOTE: IA32_RTIT_CTL.TraceEn=1: firmware (EDK2 ProcTrace, "
                "FSP or a debugger) already owns Intel PT on this CPU");
        line_emit(o, l);
        LPUT(l, "NOTE: ptboot does not take over unless asked to");
        line_emit(o, l);
    }
}

void rtit_caps_report(const struct rtit_caps *c, const struct rtit_msr_snapshot *msrs,
                      void (*emit)(void *ctx, const char *line), void *ctx)
{
    struct out o = { emit, ctx };
    struct line l;

    if (!c || !emit)
        return;
    line_start(&l);

    LPUT(&l, "vendor: %s", c->vendor[0] ? c->vendor : "(none)");
    line_emit(&o, &l);
    LPUT(&l,
         "cpu: family 0x%x (%u) model 0x%x (%u) stepping 0x%x (%u), "
         "CPUID.1:EAX=0x%08x",
         (unsigned)c->family, (unsigned)c->family, (unsigned)c->model, (unsigned)c->model,
         (unsigned)c->stepping, (unsigned)c->stepping, (unsigned)c->signature);
    line_emit(&o, &l);
    LPUT(&l, "hypervisor: %s (CPUID.1:ECX[31]=%d)", c->hypervisor ? "yes" : "no",
         c->hypervisor ? 1 : 0);
    line_emit(&o, &l);
    if (c->hybrid) {
        LPUT(&l, "hybrid: yes (CPUID.(7,0).EDX[15]): P-cores and E-cores "
                 "enumerate different leaf 14h; this is the core that ran it");
        line_emit(&o, &l);
    }
    LPUT(&l, "max basic leaf: 0x%x, max extended leaf: ", (unsigned)c->max_basic_leaf);
    if (c->max_ext_leaf)
        LPUT(&l, "0x%x", (unsigned)c->max_ext_leaf);
    else
        LPUT(&l, "none");
    line_emit(&o, &l);
    if (c->max_basic_leaf >= X86_CPUID_LEAF_EXT_FEATURES)
        LPUT(&l, "CPUID.(7,0).EBX[25] (Intel PT): %d", c->leaf7_pt ? 1 : 0);
    else
        LPUT(&l, "CPUID.(7,0).EBX[25] (Intel PT): leaf 7 absent");
    line_emit(&o, &l);
    LPUT(&l, "Intel PT: %s (%s: %s)", c->pt ? "yes" : "no", rtit_pt_reason_name(c->reason),
         reason_text(c->reason));
    line_emit(&o, &l);
    report_leaf14(c, &o, &l);
    LPUT(&l, "MAXPHYADDR: %u bits (%s)", c->maxphyaddr,
         c->maxphyaddr_enumerated ? "CPUID.80000008h:EAX[7:0]" : "default; leaf 80000008h absent");
    line_emit(&o, &l);
    report_leaf15(c, &o, &l);
    if (c->la57) {
        LPUT(&l,
             "5-level paging: supported (CPUID.(7,0).ECX[16]); IP filters "
             "take 57-bit addresses when CR4.LA57=1 (here: %s)",
             c->paging_la57 ? "CR4.LA57=1" : "CR4.LA57=0 or not known");
        line_emit(&o, &l);
    }
    if (c->quirks) {
        LPUT(&l, "quirks:");
        if (c->quirks & RTIT_QUIRK_BRANCHEN_REQUIRED)
            LPUT(&l, " branchen-required (Broadwell, BDM106)");
        if (c->quirks & RTIT_QUIRK_CORE_SCOPED_MSRS)
            LPUT(&l, " core-scoped-msrs (Goldmont/Goldmont Plus)");
        if (c->quirks & RTIT_QUIRK_SINGLE_RANGE_4K)
            LPUT(&l, " single-range-max-4k (%s)", rtit_single_range_4k_reason(c->family, c->model));
        line_emit(&o, &l);
    }
    if (msrs)
        report_msrs(msrs, &o, &l);

    rtit_caps_machine_line(c, l.buf, sizeof(l.buf));
    emit(ctx, l.buf);
}
