#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/capture_seq.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/rtit_decode_params.h"
#include "arch/x86/rtit_options.h"
#include "arch/x86/rtit_topa.h"
#include "efi/capture/capture.h"
#include "efi/platform/console.h"
#include "efi/platform/msr_safe.h"
#include "efi/capture/files.h"
#include "efi/capture/ebs_report.h"
#include "efi/capture/hang.h"
#include "efi/platform/uart.h"
#include "efi/platform/watchdog.h"
#include "efi/capture/serial_dump.h"
#include "efi/capture/sideband_cpu.h"

#define PAGE_BYTES 4096ull

static UINTN pages_for(uint64_t bytes)
{
    return (UINTN)((bytes + PAGE_BYTES - 1) / PAGE_BYTES);
}

int efi_capture_init(struct efi_capture *c, const char *want, const char *msr_state)
{
    memset(c, 0, sizeof *c);
    rtit_caps_read(&c->caps, x86_cpuid_native, NULL);
    c->msr_safe = msr_state && !strcmp(msr_state, "ready");
    bool hw_ok = c->caps.pt && c->msr_safe;
    if (!strcmp(want, "soft")) {
        c->unit = CAPTURE_UNIT_SOFT;
        snprintf(c->why, sizeof c->why, "asked for (--unit soft)");
        return 0;
    }
    if (!strcmp(want, "hw")) {
        if (!hw_ok) {
            efi_con_printf("ptboot: error: trace: --unit hw: %s\n",
                           !c->caps.pt ? "this CPU has no usable Intel PT (see `info`)"
                                       : "the #GP-safe MSR path is not ready");
            return -1;
        }
        c->unit = CAPTURE_UNIT_HW;
        snprintf(c->why, sizeof c->why, "asked for (--unit hw)");
        return 0;
    }
    if (hw_ok) {
        c->unit = CAPTURE_UNIT_HW;
        snprintf(c->why, sizeof c->why,
                 "Intel PT enumerated (CPUID.(7,0):EBX[25], leaf 14h), MSR path ready");
    } else {
        c->unit = CAPTURE_UNIT_SOFT;
        if (!c->caps.pt)
            snprintf(c->why, sizeof c->why, "no usable Intel PT (%s)%s",
                     rtit_pt_reason_name(c->caps.reason),
                     c->caps.hypervisor ? ", under a hypervisor (CPUID.1:ECX[31])" : "");
        else
            snprintf(c->why, sizeof c->why, "Intel PT present but the MSR path is %s", msr_state);
    }
    return 0;
}

static void emit_note(const char *what, const char *text)
{
    efi_con_printf("ptboot: trace: %s%s\n", what, text);
}

/* ---- processors (--cpus) -------------------------------------------------- */

/* The per-CPU hardware capture (efi/capture/mp.h): large, so static, like c. */
static struct efi_mp_trace mp_trace;

/* Why the soft unit leaves an AP alone: the #DB handler and the trap flag
 * single-step the code the BSP runs (StartImage runs there); the APs sit
 * in the firmware's idle loop, and the PI spec lets them call no boot
 * services, so nothing could register a handler on them. */
#define WHY_SOFT_BSP_ONLY "soft-unit-steps-the-bsp-only"

/* The processors asked for: the last word cpus=N|all (capture_plan's
 * reading; "--cpus=" accepted as there), else --cpus (c->cpus_req). */
static unsigned cpus_requested(const struct efi_capture *c, const char *const *words, size_t n)
{
    unsigned r = c->cpus_req;
    for (size_t i = 0; i < n; i++) {
        const char *w = words[i];
        uint64_t v;
        if (!strncmp(w, "--", 2))
            w += 2;
        if (strncmp(w, "cpus=", 5))
            continue;
        w += 5;
        if (!strcmp(w, "all"))
            r = CAPTURE_CPUS_ALL;
        else if (!rtit_parse_u64(w, &v, false) && v && v < CAPTURE_CPUS_ALL)
            r = (unsigned)v;
    }
    return r <= 1 ? 1 : r;
}

static struct efi_capture_cpu *add_cpu(struct efi_capture *c, unsigned n, bool bsp, bool traced,
                                       const char *why)
{
    struct efi_capture_cpu *k = &c->cpu[c->ncpus++];
    memset(k, 0, sizeof *k);
    k->n = n;
    k->bsp = bsp;
    k->traced = traced;
    snprintf(k->why, sizeof k->why, "%s", why);
    return k;
}

/* The soft unit with more than one CPU asked for: the BSP is traced, every
 * other processor asked for is listed as not traced, with the reason. */
static void soft_cpus(struct efi_capture *c, unsigned want)
{
    struct efi_mp mp;
    c->mp_result = efi_mp_init(&mp, BS);
    unsigned have = mp.count < PTB_MP_MAX_CPUS ? mp.count : PTB_MP_MAX_CPUS;
    unsigned n_want = want == CAPTURE_CPUS_ALL || want > have ? have : want;
    add_cpu(c, mp.bsp, true, true, "");
    for (unsigned n = 0; n < have && c->ncpus < n_want; n++)
        if (n != mp.bsp)
            add_cpu(c, n, false, false, WHY_SOFT_BSP_ONLY);
    efi_con_printf(
        "ptboot: trace: note: cpus: %u processor(s) here (mp=%s); the soft unit single-steps "
        "the BSP (cpu %u) only, %u AP(s) not traced\n",
        mp.count, efi_mp_result_name(c->mp_result), mp.bsp, c->ncpus - 1);
    if (want != CAPTURE_CPUS_ALL && want > have)
        efi_con_printf("ptboot: trace: note: cpus: %u asked for, %u here\n", want, have);
}

/* The hardware unit on every processor asked for: efi/capture/mp.h reads each
 * CPU's own CPUID, checks the plan against it and gives each its own
 * buffer (and ToPA tables). The BSP must take the plan: it runs the
 * target. */
static int hw_cpus(struct efi_capture *c, unsigned want)
{
    EFI_STATUS s = efi_mp_trace_prepare(&mp_trace, BS, &c->plan);
    if (EFI_ERROR(s)) {
        efi_con_printf("ptboot: error: trace: --cpus: no memory for one %llu-byte buffer per CPU "
                       "(status 0x%llx)\n",
                       (unsigned long long)c->plan.need.block_bytes, (unsigned long long)s);
        return -1;
    }
    c->multi = true;
    const struct efi_mp *mp = &mp_trace.mp;
    const struct efi_mp_trace_cpu *b = &mp_trace.cpu[mp->bsp];
    if (!b->used) {
        efi_con_printf("ptboot: error: trace: --cpus: the BSP (cpu %u) cannot take the plan: %s\n",
                       mp->bsp, rtit_rule_name(b->rule));
        return -1;
    }
    /* the BSP's buffer and tables are the capture's own from here on */
    c->plan.cfg = b->cfg;
    c->buffer = (uint8_t *)(UINTN)b->cfg.buffer_phys;
    /* the order efi_mp_trace_prepare takes them: the BSP, then the APs */
    add_cpu(c, mp->bsp, true, true, "");
    unsigned taken = 1; /* CPUs that reported, as efi_mp_trace_prepare counts them */
    for (unsigned n = 0; n < mp->count && n < PTB_MP_MAX_CPUS && taken < mp_trace.cpus; n++) {
        const struct efi_mp_trace_cpu *k = &mp_trace.cpu[n];
        if (n == mp->bsp)
            continue;
        if (!k->seen) {
            /* disabled, or did not run the CPUID function in time */
            add_cpu(c, n, false, false, "did-not-report");
            continue;
        }
        taken++;
        add_cpu(c, n, false, k->used, k->used ? "" : rtit_rule_name(k->rule));
    }
    unsigned used = 0;
    for (unsigned i = 0; i < c->ncpus; i++)
        used += c->cpu[i].traced;
    efi_con_printf(
        "ptboot: trace: cpus: %u processor(s) here (mp=%s), %u listed, %u take the plan: "
        "one %llu-byte buffer each\n",
        mp->count, efi_mp_result_name(mp->proto ? PTB_MP_OK : PTB_MP_E_NONE), c->ncpus, used,
        (unsigned long long)c->plan.buffer_bytes);
    if (want != CAPTURE_CPUS_ALL && want > mp->count)
        efi_con_printf("ptboot: trace: note: cpus: %u asked for, %u here\n", want, mp->count);
    return 0;
}

int efi_capture_plan_bytes(const struct efi_capture *c, const char *const *words, size_t n_words,
                           uint64_t *trace_bytes)
{
    static struct capture_plan trial; /* large: off the stack */
    struct capture_request req = {
        .mode = CAPTURE_TRACE,
        .unit = c->unit,
        .images = c->targets,
        .n_images = c->ntargets,
        .words = words,
        .n_words = n_words,
        .cpus = c->cpus_req <= 1 ? 1 : c->cpus_req,
    };
    if (capture_plan_make(&trial, &c->caps, &req) != CAPTURE_PLAN_OK)
        return -1;
    unsigned want = cpus_requested(c, words, n_words);
    /* the soft unit traces the BSP only; every processor has its own
     * buffer with the hardware unit (all: as many as MP services could
     * count, which is not known before asking it) */
    unsigned n = trial.unit == CAPTURE_UNIT_HW && want > 1
                     ? (want == CAPTURE_CPUS_ALL ? PTB_MP_MAX_CPUS : want)
                     : 1;
    *trace_bytes = trial.buffer_bytes * n;
    return 0;
}

int efi_capture_plan(struct efi_capture *c, const char *const *words, size_t n_words)
{
    struct capture_request req = {
        .mode = CAPTURE_TRACE,
        .unit = c->unit,
        .images = c->targets,
        .n_images = c->ntargets,
        .words = words,
        .n_words = n_words,
        .cpus = c->cpus_req <= 1 ? 1 : c->cpus_req,
    };
    int st = capture_plan_make(&c->plan, &c->caps, &req);
    for (size_t i = 0; i < c->plan.n_notes; i++)
        emit_note("note: ", c->plan.notes[i]);
    if (st != CAPTURE_PLAN_OK) {
        if (st == CAPTURE_PLAN_E_WORD)
            efi_con_printf("ptboot: error: trace: %s\n", c->plan.error);
        else if (st == CAPTURE_PLAN_E_RULE)
            efi_con_printf("ptboot: error: trace: refused %s kind=%s: %s\n", c->plan.rule_name,
                           c->plan.rule_kind, c->plan.rule_text);
        else
            efi_con_printf("ptboot: error: trace: no plan (status %d)\n", st);
        return -1;
    }
    /* a unit=... word may have changed the unit */
    c->unit = c->plan.unit;
    unsigned want = cpus_requested(c, words, n_words);
    c->ncpus = c->cur = 0;
    if (want > 1 && c->unit == CAPTURE_UNIT_SOFT)
        soft_cpus(c, want);
    uint64_t bytes = c->unit == CAPTURE_UNIT_HW ? c->plan.need.block_bytes : c->plan.buffer_bytes;
    if (want > 1 && c->unit == CAPTURE_UNIT_HW) {
        if (hw_cpus(c, want))
            return -1;
    } else {
        c->block_pages = pages_for(bytes);
        if (EFI_ERROR(
                BS->AllocatePages(AllocateAnyPages, EfiLoaderData, c->block_pages, &c->block))) {
            efi_con_printf("ptboot: error: trace: no memory for a %llu-byte trace buffer\n",
                           (unsigned long long)bytes);
            c->block_pages = 0;
            return -1;
        }
    }
    if (c->multi) {
        /* placed, tables built and zeroed by efi_mp_trace_prepare */
    } else if (c->unit == CAPTURE_UNIT_HW) {
        struct rtit_caps soft;
        int e = capture_plan_place(&c->plan, capture_plan_caps(&c->plan, &c->caps, &soft), c->block,
                                   (uint64_t)c->block_pages * PAGE_BYTES);
        if (e) {
            efi_con_printf("ptboot: error: trace: cannot place the buffer (%d)\n", e);
            return -1;
        }
        c->buffer = (uint8_t *)(UINTN)c->plan.cfg.buffer_phys;
    } else {
        c->buffer = (uint8_t *)(UINTN)c->block;
    }
    c->buffer_bytes = c->plan.buffer_bytes;
    /* zeroed: on hardware a non-zero byte past the write position is how a
     * wrap shows (rtit_seq.h) */
    memset(c->buffer, 0, c->buffer_bytes);
    efi_sideband_read_cpu(&c->sb, &c->caps, &c->plan.cfg, c->buffer_bytes);
    c->sb.unit = c->unit == CAPTURE_UNIT_HW ? SIDEBAND_UNIT_HW : SIDEBAND_UNIT_SOFT;
    if (c->unit == CAPTURE_UNIT_SOFT)
        sideband_set_soft_unit(&c->sb);
    if (!c->multi && c->unit == CAPTURE_UNIT_HW && c->plan.cfg.output == RTIT_OUTPUT_TOPA) {
        struct rtit_topa_layout l;
        size_t tables = (size_t)(c->plan.need.table_bytes / PAGE_BYTES);
        if (rtit_topa_build(&l, &c->plan.cfg, (uint64_t *)(UINTN)c->plan.cfg.table_phys, tables)) {
            efi_con_puts("ptboot: error: trace: ToPA tables do not fit\n");
            return -1;
        }
    }
    return 0;
}

int efi_capture_watch(struct efi_capture *c, size_t snapshot_bytes)
{
    sideband_init(&c->sb);
    c->sb.unit = c->unit == CAPTURE_UNIT_HW ? SIDEBAND_UNIT_HW : SIDEBAND_UNIT_SOFT;
    if (efi_image_watch_start(&c->watch, &c->sb, snapshot_bytes, PTB_IMAGE_WATCH_SNAPSHOT_NEW,
                              EfiLoaderData) < 0) {
        efi_con_printf("ptboot: error: trace: cannot record image loads (no event or no %llu bytes "
                       "for snapshots)\n",
                       (unsigned long long)snapshot_bytes);
        return -1;
    }
    c->watching = true;
    return 0;
}

int efi_capture_add_target(struct efi_capture *c, uint64_t base, uint64_t size)
{
    if (c->ntargets == PTB_CAPTURE_MAX_TARGETS || !size) {
        efi_con_puts("ptboot: error: trace: too many targets\n");
        return -1;
    }
    c->targets[c->ntargets].base = base;
    c->targets[c->ntargets++].size = size;
    if (!c->watching || efi_image_watch_snapshot(&c->watch, base, size, SIDEBAND_IMG_TARGET) < 0) {
        efi_con_printf("ptboot: error: trace: no room to snapshot the target's %llu bytes\n",
                       (unsigned long long)size);
        return -1;
    }
    return 0;
}

/* ---- soft unit glue -------------------------------------------------------- */

/* The unit reads the instruction that just executed: live code. */
static int read_live(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    (void)ctx;
    memcpy(buf, (const void *)(UINTN)ip, size);
    return (int)size;
}

static int soft_step(void *ctx, uint64_t ip, unsigned mode, uint64_t tsc)
{
    struct efi_capture *c = ctx;
    return soft_unit_step(&c->soft, ip, mode, tsc);
}

static uint64_t soft_resume(void *ctx)
{
    struct efi_capture *c = ctx;
    return soft_unit_resume_ip(&c->soft);
}

static int soft_interrupt(void *ctx, uint64_t handler, unsigned mode, uint64_t tsc)
{
    struct efi_capture *c = ctx;
    return soft_unit_interrupt(&c->soft, handler, mode, tsc);
}

static int soft_unseen(void *ctx, uint64_t tsc)
{
    struct efi_capture *c = ctx;
    return soft_unit_unseen(&c->soft, tsc);
}

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* The #DB vector is taken: whoever holds it (c->db_release, the resident
 * tracer of this boot as `trace` sets it) may give it back, and then the
 * step runs again; or it keeps it, and *said tells whether it said why.
 * Returns the step's result. */
static int step_shared(struct efi_capture *c, efi_soft_call_fn call, void *arg,
                       EFI_STATUS *call_status, bool *said)
{
    *said = false;
    int e = efi_soft_step_run(&c->step_cfg, call, arg, call_status, &c->step);
    if (e != PTB_SOFT_STEP_BUSY || !c->db_release || !c->db_release(said))
        return e;
    return efi_soft_step_run(&c->step_cfg, call, arg, call_status, &c->step);
}

/* ---- ExitBootServices while tracing ---------------------------------------- */

/* An OS loader as the target calls ExitBootServices and never returns to
 * us (it jumps to its OS, or, like test/resident/osloader.c, shuts the
 * machine down): the EVT_SIGNAL_EXIT_BOOT_SERVICES notify is the last
 * time this app runs. It stops the unit while the firmware still runs,
 * so the buffer is final, and reports the capture over COM1 the way the
 * resident driver does (efi/capture/ebs_report.h: flow, framed files, trace line).
 *
 * Why this is safe there (UEFI 2.10 section 7.4.6: a notify function of
 * this event may not allocate memory or use boot services; ConOut and the
 * file system protocols are boot-service protocols): everything below
 * works on memory taken before the target ran, with no firmware call.
 * The unit stops with MSR writes (hw) or by disarming the debug
 * registers (soft: efi_soft_step_end_now); the buffer is linearised in
 * place; the sideband text goes into a static buffer; the decoder reads
 * code from the snapshots (ebs_read_code), never live memory; the lines
 * go to COM1 by port I/O (efi/platform/uart.h). The exception is the
 * hardware unit with --cpus, which stops the APs through MP services as
 * it always did (docs/trace.md says so).
 *
 * Why the memory is still valid: the trace buffer (efi_capture_plan), the
 * snapshots and their addresses (efi_capture_watch) and the summaries'
 * arena (efi_capture_run, before the target starts) are EfiLoaderData and
 * the capture itself is in this app's image (EfiLoaderCode). After
 * ExitBootServices returns, loader memory belongs to the OS, which may
 * reuse it; but the notify runs inside ExitBootServices, before the
 * loader gets control back, so nobody has touched it yet, and nothing
 * here reads it after the notify returns. */
static struct efi_capture *ebs_capture;
static bool ebs_seen;
/* the hardware unit runs (started, not yet stopped); a hang report stopped
 * the unit for good */
static bool hw_tracing, hang_stopped;
/* sideband.txt of the capture (the serial dump and the EBS report) */
static char sideband_text[SIDEBAND_MAX_IMAGES * SIDEBAND_LINE_MAX];

/* The decoder's code after ExitBootServices: the snapshot pages (found by
 * address, the last page found tried first), nothing else. */
static int ebs_read_code(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    const struct efi_image_watch *w = &((const struct efi_capture *)ctx)->watch;
    static size_t hint;
    size_t done = 0;
    while (done < size) {
        uint64_t a = ip + done, page = a & ~(PAGE_BYTES - 1);
        size_t i = hint;
        if (i >= w->snap.count || code_dump_addr(w->snap.addr, i) != page)
            i = code_dump_find(&w->snap, page);
        if (i == w->snap.count)
            break;
        hint = i;
        size_t off = (size_t)(a - page), take = (size_t)PAGE_BYTES - off;
        if (take > size - done)
            take = size - done;
        memcpy(buf + done, w->snap.pages + i * PAGE_BYTES + off, take);
        done += take;
    }
    return (int)done;
}

/* The stopped capture as the shared report sees it, and the report:
 * at ExitBootServices, or for a hang report (hang: no first line, no
 * flow; boot services remain). */
static void com1_report(struct efi_capture *c, bool hang)
{
    static struct ebs_report r;
    /* the images as the summaries' modules (static: no allocation here) */
    static struct ptd_sum_module mods[SIDEBAND_MAX_IMAGES];
    const char *target = "-";
    if (c->ntargets) {
        const struct sideband_image *im = sideband_find_image(&c->sb, c->targets[0].base);
        if (im)
            target = im->name;
    }
    if (c->unit == CAPTURE_UNIT_SOFT) {
        struct soft_unit_status st;
        soft_unit_get_status(&c->soft, &st);
        soft_unit_summarize(&c->soft, &c->sum);
        c->bytes = st.bytes;
        if (!hang)
            ebs_report_say(efi_uart_write,
                           "ptboot: trace exit-boot-services unit=soft target=%s steps=%llu "
                           "insns=%llu bytes=%llu entered=%d\n",
                           target, (unsigned long long)st.steps, (unsigned long long)st.insns,
                           (unsigned long long)st.bytes, c->step.entered);
    } else {
        c->bytes = c->sum.bytes;
        if (!hang)
            ebs_report_say(efi_uart_write,
                           "ptboot: trace exit-boot-services unit=hw target=%s bytes=%llu "
                           "error=%d\n",
                           target, (unsigned long long)c->sum.bytes, c->hw_stop.error ? 1 : 0);
    }
    c->ran = true;
    c->wrapped = c->sum.wrapped;
    c->stopped = true; /* by ExitBootServices: docs/trace.md */
    if (rtit_trace_linearize_in_place(c->buffer, &c->sum, &c->lin))
        c->lin.bytes = 0;
    c->trace = c->buffer;
    c->trace_bytes = c->lin.bytes;
    c->sb.trace.bytes = c->trace_bytes;
    c->sb.trace.wrapped = c->wrapped;
    c->sb.trace.stopped = true;
    size_t tlen = sideband_write(&c->sb, sideband_text, sizeof sideband_text);

    static struct ptd_time_config tcfg;
    memset(&r, 0, sizeof r);
    memset(&tcfg, 0, sizeof tcfg);
    sideband_time_config(&c->sb, &tcfg);
    r.time = &tcfg;
    r.unit = capture_unit_name(c->unit);
    r.trace_name = "trace.pt";
    r.trace = c->trace;
    r.trace_bytes = (size_t)c->trace_bytes;
    r.decode = c->ebs_decode && !hang;
    r.read = ebs_read_code;
    r.ctx = c;
    for (unsigned i = 0; i < RTIT_MAX_RANGES && r.nfilter < EBS_REPORT_FILTERS; i++) {
        const struct rtit_addr_range *g = &c->plan.cfg.range[i];
        if (g->cfg != RTIT_ADDR_CFG_FILTER)
            continue;
        r.filter_lo[r.nfilter] = g->start;
        r.filter_hi[r.nfilter++] = g->end;
    }
    size_t pages = c->watching ? c->watch.snap.count : 0;
    r.pages = pages;
    r.files = c->ebs_files;
    r.payload = c->serial_line_bytes;
    r.code = pages ? c->watch.snap.pages : NULL;
    r.code_addr = pages ? c->watch.snap.addr : NULL;
    r.code_pages = pages;
    if (tlen < sizeof sideband_text) {
        r.sideband = sideband_text;
        r.sideband_bytes = tlen;
    }
    bool sum = hang || (c->ebs_decode && !c->ebs_no_summary);
    if (sum && !c->ebs_arena)
        ebs_report_say(efi_uart_write,
                       "ptboot: trace: no memory was free for the summaries' tables "
                       "(%u bytes); no summaries\n",
                       (unsigned)EBS_REPORT_SUM_ARENA);
    if (sum && c->ebs_arena) {
        uint32_t n = c->sb.nimages < SIDEBAND_MAX_IMAGES ? c->sb.nimages : SIDEBAND_MAX_IMAGES;
        for (uint32_t i = 0; i < n; i++) {
            mods[i].base = c->sb.images[i].base;
            mods[i].size = c->sb.images[i].size;
            mods[i].name = c->sb.images[i].name;
        }
        r.sum_arena = (void *)(UINTN)c->ebs_arena;
        r.sum_arena_bytes = EBS_REPORT_SUM_ARENA;
        r.sum_tail = hang; /* a hang report: where it spins after the last packet */
        r.modules = mods;
        r.nmodules = n;
        r.sum_last = c->ebs_last;
    }
    r.bytes = c->trace_bytes;
    /* a hang report has no flow: the soft unit's own count (the hardware
     * unit counts nothing; the summary has its window's) */
    r.decoded_insns = !hang;
    if (hang && c->unit == CAPTURE_UNIT_SOFT) {
        struct soft_unit_status st;
        soft_unit_get_status(&c->soft, &st);
        r.insns = st.insns;
    }
    r.wrapped = c->wrapped;
    r.stopped = true;
    r.images = c->sb.nimages;
    ebs_report_write(&r, efi_uart_write);
    if (!hang)
        c->ebs_reported = true;
    /* the buffer is linear now: should the target still return, the
     * capture's own end finds it so */
    memset(&c->sum, 0, sizeof c->sum);
    c->sum.buffer_bytes = c->buffer_bytes;
    c->sum.bytes = c->trace_bytes;
}

/* The soft unit's session ended by efi_soft_step_end_now() (the notify):
 * the packets close where the target was (the return address of its
 * ExitBootServices call). Other ends are handled after the call. */
static void soft_end(void *ctx, uint64_t ip, uint64_t tsc, int why)
{
    struct efi_capture *c = ctx;
    if (why != PTB_SOFT_STEP_END_CALLER || (c->step_cfg.entry_ip && !c->step.entered))
        return;
    soft_unit_stop(&c->soft, ip, tsc);
}

static VOID EFIAPI on_exit_boot_services(EFI_EVENT ev, VOID *ctx)
{
    (void)ev;
    (void)ctx;
    struct efi_capture *c = ebs_capture;
    if (!c || ebs_seen)
        return;
    ebs_seen = true;
    efi_hang_quiesce();
    if (c->multi) {
        /* every CPU: the APs through MP services, still there until the
         * firmware's own ExitBootServices handlers park them; the report
         * is the BSP's trace */
        c->mp_result = efi_mp_trace_stop(&mp_trace);
        c->hw_stop = mp_trace.cpu[mp_trace.mp.bsp].stop;
        c->sum = mp_trace.cpu[mp_trace.mp.bsp].sum;
    } else if (c->unit == CAPTURE_UNIT_HW) {
        if (hw_tracing)
            capture_seq_finish(&efi_msr_safe_ops, &c->plan.cfg, c->buffer, &c->hw_stop, &c->sum);
        hw_tracing = false;
    } else if (!efi_soft_step_end_now() && !hang_stopped) {
        soft_unit_stop(&c->soft, c->step.last_ip, rdtsc());
    }
    com1_report(c, false);
}

/* ---- --hang-timeout (efi/capture/hang.h, docs/hang.md) ---------------------- */

static bool cap_tracing(void)
{
    struct efi_capture *c = ebs_capture;
    if (!c || ebs_seen || hang_stopped)
        return false;
    if (c->unit == CAPTURE_UNIT_HW)
        return hw_tracing;
    return c->step.entered && !c->step.returned && !c->step.stopped;
}

/* The unit stops (for good without --hang-repeat), the report goes to COM1. */
static void cap_hang_report(unsigned n, uint32_t after_s, bool at_notify)
{
    struct efi_capture *c = ebs_capture;
    const char *target = "-";
    if (c->ntargets) {
        const struct sideband_image *im = sideband_find_image(&c->sb, c->targets[0].base);
        if (im)
            target = im->name;
    }
    ebs_report_say(efi_uart_write,
                   "ptboot: hang report begin n=%u after=%us unit=%s target=%s tpl=%s "
                   "watchdog=%s\n",
                   n, after_s, capture_unit_name(c->unit), target,
                   at_notify ? "notify" : "callback", at_notify ? "untouched" : "off");
    if (c->unit == CAPTURE_UNIT_HW) {
        /* the raw MSR path: the start proved these MSRs exist, and the
         * safe path's guard calls the console and a protocol, which a
         * timer notify at TPL_NOTIFY should not */
        capture_seq_finish(&efi_msr_raw_ops, &c->plan.cfg, c->buffer, &c->hw_stop, &c->sum);
        hw_tracing = false;
    } else if (!c->hang_repeat) {
        /* the session ends (soft_end closes the packets where it was);
         * the target runs on untraced */
        efi_soft_step_end_now();
        hang_stopped = true;
    } else {
        soft_unit_stop(&c->soft, 0, rdtsc());
    }
    if (!c->hang_repeat)
        hang_stopped = true;
    com1_report(c, true);
    ebs_report_say(efi_uart_write, "ptboot: hang report end n=%u repeat=%u\n", n,
                   c->hang_repeat ? 1u : 0u);
}

/* --hang-repeat: the zeroed buffer from its start, tracing on. */
static void cap_hang_restart(void)
{
    struct efi_capture *c = ebs_capture;
    memset(c->buffer, 0, (size_t)c->buffer_bytes);
    if (c->unit == CAPTURE_UNIT_SOFT) {
        soft_unit_init(&c->soft, &c->plan.cfg, c->buffer, (size_t)c->buffer_bytes, read_live, c);
        return;
    }
    if (c->plan.cfg.output == RTIT_OUTPUT_TOPA) {
        struct rtit_topa_layout l;
        if (rtit_topa_build(&l, &c->plan.cfg, (uint64_t *)(UINTN)c->plan.cfg.table_phys,
                            (size_t)(c->plan.need.table_bytes / PAGE_BYTES)))
            return;
    }
    hw_tracing =
        rtit_start(&efi_msr_raw_ops, &c->plan.cfg, &c->caps, false, &c->hw_start) == RTIT_SEQ_OK;
}

static const struct efi_hang_ops cap_hang_ops = {
    .tracing = cap_tracing,
    .report = cap_hang_report,
    .restart = cap_hang_restart,
};

/* The hardware unit on every CPU of the plan (efi/capture/mp.h): started on the
 * APs first, the BSP last; the BSP's results become the capture's. */
static int run_hw_multi(struct efi_capture *c, efi_soft_call_fn call, void *arg,
                        EFI_STATUS *call_status)
{
    struct efi_mp_trace_cpu *b = &mp_trace.cpu[mp_trace.mp.bsp];
    c->mp_result = efi_mp_trace_start(&mp_trace);
    if (b->start_rc != RTIT_SEQ_OK) {
        efi_con_printf("ptboot: error: trace: Intel PT start failed on the BSP (%d%s)\n",
                       b->start_rc, b->start.was_tracing ? ", someone else is tracing" : "");
        efi_mp_trace_stop(&mp_trace); /* the APs that did start */
        return -1;
    }
    c->hw_start = b->start;
    *call_status = call(arg);
    if (c->ebs_reported)
        return 0;
    c->mp_result = efi_mp_trace_stop(&mp_trace);
    c->hw_stop = b->stop;
    c->sum = b->sum;
    return 0;
}

/* Each traced AP's buffer linearised in place, its entry filled; an AP
 * whose start failed, or that did not stop (MP services timed out), is
 * not traced, with the reason. */
static void finish_aps(struct efi_capture *c)
{
    for (unsigned i = 1; i < c->ncpus; i++) {
        struct efi_capture_cpu *k = &c->cpu[i];
        if (!k->traced)
            continue;
        struct efi_mp_trace_cpu *m = &mp_trace.cpu[k->n];
        if (m->start_rc != RTIT_SEQ_OK) {
            k->traced = false;
            snprintf(k->why, sizeof k->why, "start-failed-%d", m->start_rc);
            continue;
        }
        uint8_t *buf = (uint8_t *)(UINTN)m->cfg.buffer_phys;
        struct rtit_linear lin;
        if (rtit_trace_linearize_in_place(buf, &m->sum, &lin))
            lin.bytes = 0;
        k->trace = buf;
        k->trace_bytes = lin.bytes;
        k->wrapped = m->sum.wrapped;
        k->stopped = m->stop.stopped || m->sum.stopped_full;
        if (m->stop.error)
            efi_con_printf("ptboot: trace: cpu %u: STATUS.Error: %s\n", k->n,
                           rtit_status_explain(m->stop.status));
    }
}

int efi_capture_run(struct efi_capture *c, efi_soft_call_fn call, void *arg,
                    EFI_STATUS *call_status, uint64_t self_lo, uint64_t self_hi, uint64_t entry_ip)
{
    EFI_EVENT ev = NULL;
    ebs_capture = c;
    ebs_seen = false;
    hw_tracing = hang_stopped = false;
    c->ebs_reported = false;
    /* The summaries' tables, should the target exit boot services: taken
     * now, because the notify may not allocate (EfiLoaderData, like the
     * buffer: intact while the notify runs, see above). Without them the
     * report has no summaries, nothing else changes. */
    c->ebs_arena = 0;
    c->ebs_arena_pages = 0;
    if ((c->ebs_decode && !c->ebs_no_summary) || c->hang_timeout_s) {
        UINTN pages = pages_for(EBS_REPORT_SUM_ARENA);
        if (!EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, pages, &c->ebs_arena)))
            c->ebs_arena_pages = pages;
        else
            c->ebs_arena = 0;
    }
    if (EFI_ERROR(BS->CreateEvent(EVT_SIGNAL_EXIT_BOOT_SERVICES, TPL_NOTIFY, on_exit_boot_services,
                                  NULL, &ev)))
        ev = NULL;
    bool hang_timer = false;
    if (c->hang_timeout_s) {
        struct efi_hang_config hc = { .timeout_s = c->hang_timeout_s, .repeat = c->hang_repeat };
        hang_timer = !efi_hang_start(&hc, &cap_hang_ops);
        if (!hang_timer)
            efi_con_puts(
                "ptboot: trace: warning: no timer event: --hang-timeout will not report\n");
    }
    /* the target runs as the boot manager runs an image: under its
     * 5-minute watchdog (efi/platform/watchdog.h); ptboot's own work after
     * it does not */
    efi_watchdog_boot_manager();
    int ret = -1;
    if (c->unit == CAPTURE_UNIT_SOFT) {
        int e = soft_unit_init(&c->soft, &c->plan.cfg, c->buffer, (size_t)c->buffer_bytes,
                               read_live, c);
        if (e) {
            efi_con_printf("ptboot: error: trace: soft unit: %s\n", soft_unit_strerror(e));
            goto out;
        }
        c->step_cfg = (struct efi_soft_step_config){
            .step = soft_step,
            .resume = soft_resume,
            .end = soft_end,
            .ctx = c,
            .self_lo = self_lo,
            .self_hi = self_hi,
            .step_all = c->step_all,
            .max_steps = c->max_steps,
            .entry_ip = entry_ip,
            .interrupt = soft_interrupt,
            .unseen = soft_unseen,
        };
        efi_soft_step_watch_ranges(&c->step_cfg, &c->plan.cfg);
        bool said;
        e = step_shared(c, call, arg, call_status, &said);
        if (c->ebs_reported)
            goto gone;
        if (e) {
            if (!said)
                efi_con_printf("ptboot: error: trace: soft unit: %s\n", efi_soft_step_strerror(e));
            goto out;
        }
        if (!ebs_seen && !hang_stopped)
            soft_unit_stop(&c->soft, c->step.returned ? c->step.return_ip : c->step.last_ip,
                           rdtsc());
        struct soft_unit_status s;
        soft_unit_get_status(&c->soft, &s);
        if (!hang_stopped) /* else the report linearised it: c->sum says so */
            soft_unit_summarize(&c->soft, &c->sum);
        c->bytes = s.bytes;
        c->stopped = s.stopped;
        if (s.error)
            efi_con_printf("ptboot: trace: soft unit error: %s\n", soft_unit_strerror(s.error));
        efi_con_printf(
            "ptboot: trace: soft unit steps=%llu insns=%llu skips=%llu gaps=%llu "
            "undecodable=%llu entered=%d returned=%d bounded=%d traps=%llu breakpoints=%llu "
            "free_runs=%llu unexpected=%llu self=%llu\n",
            (unsigned long long)s.steps, (unsigned long long)s.insns, (unsigned long long)s.skips,
            (unsigned long long)s.gaps, (unsigned long long)s.undecodable, c->step.entered,
            c->step.returned, c->step.bounded, (unsigned long long)c->step.traps,
            (unsigned long long)c->step.breakpoints, (unsigned long long)c->step.skips,
            (unsigned long long)c->step.unexpected, (unsigned long long)c->step.skipped_self);
        efi_soft_step_say_events(&c->step, efi_con_printf);
    } else if (c->multi) {
        if (run_hw_multi(c, call, arg, call_status))
            goto out;
        if (c->ebs_reported)
            goto gone;
        c->bytes = c->sum.bytes;
        c->stopped = c->hw_stop.stopped;
        if (c->hw_stop.error)
            efi_con_printf("ptboot: trace: STATUS.Error: %s\n",
                           rtit_status_explain(c->hw_stop.status));
        finish_aps(c);
    } else {
        int e = rtit_start(&efi_msr_safe_ops, &c->plan.cfg, &c->caps, false, &c->hw_start);
        if (e) {
            efi_con_printf("ptboot: error: trace: Intel PT start failed (%d%s)\n", e,
                           c->hw_start.was_tracing ? ", someone else is tracing" : "");
            goto out;
        }
        hw_tracing = true;
        *call_status = call(arg);
        if (c->ebs_reported)
            goto gone;
        if (hw_tracing)
            capture_seq_finish(&efi_msr_safe_ops, &c->plan.cfg, c->buffer, &c->hw_stop, &c->sum);
        hw_tracing = false;
        c->bytes = c->sum.bytes;
        c->stopped = c->hw_stop.stopped;
        if (c->hw_stop.error)
            efi_con_printf("ptboot: trace: STATUS.Error: %s\n",
                           rtit_status_explain(c->hw_stop.status));
    }
    c->ran = true;
    c->wrapped = c->sum.wrapped;
    c->stopped = c->stopped || c->sum.stopped_full;
    if (rtit_trace_linearize_in_place(c->buffer, &c->sum, &c->lin)) {
        efi_con_puts("ptboot: trace: the buffer's state does not fit it; nothing to decode\n");
        c->lin.bytes = 0;
    }
    c->trace = c->buffer;
    c->trace_bytes = c->lin.bytes;
    if (c->wrapped && !c->lin.bytes && c->unit == CAPTURE_UNIT_SOFT)
        /* a decoder synchronises only at a PSB; the soft unit, like the CPU
         * (IA32_RTIT_CTL.PSBFreq, SDM 36.2.7.2), writes one every 2K << PSBFreq bytes */
        efi_con_printf(
            "ptboot: trace: note: the %llu-byte ring wrapped and kept no PSB: nothing to decode "
            "(buffer= above %llu bytes, the PSB period, keeps one)\n",
            (unsigned long long)c->buffer_bytes,
            (unsigned long long)(2048ull << c->plan.cfg.psb_freq));
    else if (c->wrapped && !c->lin.bytes)
        efi_con_printf(
            "ptboot: trace: note: the %llu-byte ring wrapped and kept no PSB: nothing to decode\n",
            (unsigned long long)c->buffer_bytes);
    c->sb.trace.bytes = c->trace_bytes;
    c->sb.trace.wrapped = c->wrapped;
    c->sb.trace.stopped = c->stopped;
    if (c->ncpus) {
        struct efi_capture_cpu *b = &c->cpu[0];
        b->trace = c->trace;
        b->trace_bytes = c->trace_bytes;
        b->wrapped = c->wrapped;
        b->stopped = c->stopped;
    }
    ret = 0;
out:
    if (hang_timer)
        efi_hang_stop();
    efi_watchdog_off();
    if (ev)
        BS->CloseEvent(ev);
    ebs_capture = NULL;
    if (c->ebs_arena_pages)
        BS->FreePages(c->ebs_arena, c->ebs_arena_pages);
    c->ebs_arena = 0;
    c->ebs_arena_pages = 0;
    /* images gone now (the target, after it returned) are flagged */
    if (c->watching)
        efi_image_watch_stop(&c->watch);
    return ret;
gone:
    /* the call came back after ExitBootServices: no boot service now */
    ebs_capture = NULL;
    return 0;
}

int efi_capture_code(struct efi_capture *c)
{
    const struct efi_image_watch *w = &c->watch;
    size_t n = c->watching ? w->snap.count : 0;
    c->page_table_pages = pages_for(n * sizeof(struct code_page) + 1);
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, c->page_table_pages,
                                    &c->page_table))) {
        c->page_table_pages = 0;
        return -1;
    }
    code_image_init(&c->code, (struct code_page *)(UINTN)c->page_table, n);
    if (n && code_image_add_dump(&c->code, w->snap.pages, n * CODE_PAGE_BYTES,
                                 (const uint8_t *)w->snap.addr, n * sizeof(uint64_t)))
        return -1;
    return code_image_finish(&c->code) ? -1 : 0;
}

const struct sideband_image *efi_capture_module(const struct efi_capture *c, uint64_t ip)
{
    return sideband_find_image(&c->sb, ip);
}

/* cpus.txt: one line per processor asked for (docs/trace.md):
 *   cpu n=<n> bsp=<0|1> traced=1 file=<trace.pt|trace-cpuN.pt> bytes=<n>
 *       wrapped=<0|1> stopped=<0|1>
 *   cpu n=<n> bsp=<0|1> traced=0 reason=<word>
 * Returns the length (text is cut to cap, NUL-terminated). */
static size_t cpus_text(const struct efi_capture *c, char *text, size_t cap)
{
    size_t len = 0;
    for (unsigned i = 0; i < c->ncpus && len < cap; i++) {
        const struct efi_capture_cpu *k = &c->cpu[i];
        char file[32];
        if (k->bsp)
            snprintf(file, sizeof file, "trace.pt");
        else
            snprintf(file, sizeof file, "trace-cpu%u.pt", k->n);
        int w;
        if (k->traced)
            w = snprintf(text + len, cap - len,
                         "cpu n=%u bsp=%d traced=1 file=%s bytes=%llu wrapped=%d stopped=%d\n",
                         k->n, k->bsp, file, (unsigned long long)k->trace_bytes, k->wrapped,
                         k->stopped);
        else
            w = snprintf(text + len, cap - len, "cpu n=%u bsp=%d traced=0 reason=%s\n", k->n,
                         k->bsp, k->why);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return len < cap ? len : cap - 1;
}

int efi_capture_write_files(struct efi_capture *c, EFI_HANDLE image)
{
    char dir[CAPTURE_FILES_DIR_MAX] = "";
    size_t pages = c->watching ? c->watch.snap.count : 0;
    /* --cpus: each traced AP's trace beside the BSP's trace.pt, and
     * cpus.txt listing every processor asked for */
    static struct capture_files_extra extra[PTB_MP_MAX_CPUS + 1];
    static char names[PTB_MP_MAX_CPUS][24];
    static char text[PTB_MP_MAX_CPUS * 160];
    size_t nextra = 0;
    for (unsigned i = 1; i < c->ncpus; i++) {
        const struct efi_capture_cpu *k = &c->cpu[i];
        if (!k->traced)
            continue;
        snprintf(names[i], sizeof names[i], "trace-cpu%u.pt", k->n);
        extra[nextra++] =
            (struct capture_files_extra){ names[i], k->trace, (size_t)k->trace_bytes, true };
    }
    if (c->ncpus)
        extra[nextra++] = (struct capture_files_extra){ "cpus.txt", text,
                                                        cpus_text(c, text, sizeof text), false };
    struct capture_files_in in = {
        .sb = &c->sb,
        .trace = c->trace,
        .trace_len = (size_t)c->trace_bytes,
        .code_dump = pages ? c->watch.snap.pages : NULL,
        .code_dump_len = pages * CODE_PAGE_BYTES,
        .code_addr = pages ? (const uint8_t *)c->watch.snap.addr : NULL,
        .code_addr_len = pages * sizeof(uint64_t),
        .extra = extra,
        .nextra = nextra,
    };
    if (efi_capture_files_write(image, &in, "trace", dir))
        return -1;
    efi_con_printf(
        "ptboot: trace: files %s (trace.pt sideband.txt code.dump code.addr%s manifest.txt)\n", dir,
        c->ncpus ? " cpus.txt trace-cpuN.pt" : "");
    return 0;
}

int efi_capture_serial_dump(struct efi_capture *c)
{
    char *text = sideband_text;
    size_t tlen = sideband_write(&c->sb, text, sizeof sideband_text);
    if (tlen >= sizeof sideband_text) {
        efi_con_puts("ptboot: error: trace: the sideband text does not fit its buffer\n");
        return -1;
    }
    size_t pages = c->watching ? c->watch.snap.count : 0;
    static struct efi_dump_file files[4 + PTB_MP_MAX_CPUS + 1];
    static char names[PTB_MP_MAX_CPUS][24];
    static char cpus[PTB_MP_MAX_CPUS * 160];
    size_t nf = 0;
    files[nf++] =
        (struct efi_dump_file){ "trace.pt", c->trace, (size_t)c->trace_bytes, PTD_FRAME_KIND_PT };
    files[nf++] = (struct efi_dump_file){ "code.dump", c->watching ? c->watch.snap.pages : NULL,
                                          pages * CODE_PAGE_BYTES, PTD_FRAME_KIND_RAW };
    files[nf++] =
        (struct efi_dump_file){ "code.addr", c->watching ? (const void *)c->watch.snap.addr : NULL,
                                pages * sizeof(uint64_t), PTD_FRAME_KIND_RAW };
    files[nf++] = (struct efi_dump_file){ "sideband.txt", text, tlen, PTD_FRAME_KIND_RAW };
    /* --cpus: the same extra files as on the stick */
    for (unsigned i = 1; i < c->ncpus; i++) {
        const struct efi_capture_cpu *k = &c->cpu[i];
        if (!k->traced)
            continue;
        snprintf(names[i], sizeof names[i], "trace-cpu%u.pt", k->n);
        files[nf++] =
            (struct efi_dump_file){ names[i], k->trace, (size_t)k->trace_bytes, PTD_FRAME_KIND_PT };
    }
    if (c->ncpus)
        files[nf++] = (struct efi_dump_file){ "cpus.txt", cpus, cpus_text(c, cpus, sizeof cpus),
                                              PTD_FRAME_KIND_RAW };
    struct efi_dump_stats st;
    size_t n = efi_serial_dump(files, nf, c->serial_line_bytes, &st);
    return n == nf ? 0 : -1;
}

int efi_capture_use_cpu(struct efi_capture *c, unsigned i)
{
    if (!c->ncpus)
        return i == 0 ? 0 : -1;
    if (i >= c->ncpus || !c->cpu[i].traced)
        return -1;
    const struct efi_capture_cpu *k = &c->cpu[i];
    c->cur = i;
    c->trace = k->trace;
    c->trace_bytes = k->trace_bytes;
    c->wrapped = k->wrapped;
    c->stopped = k->stopped;
    return 0;
}

void efi_capture_cpu_lines(struct efi_capture *c, uint64_t insns, uint64_t errors)
{
    for (unsigned i = 1; i < c->ncpus; i++) {
        const struct efi_capture_cpu *k = &c->cpu[i];
        if (efi_capture_use_cpu(c, i) == 0)
            efi_capture_final_line(c, k->insns, k->errors);
        else
            efi_con_printf("ptboot: trace unit=%s cpu=%u traced=0 reason=%s\n",
                           capture_unit_name(c->unit), k->n, k->why);
    }
    efi_capture_use_cpu(c, 0);
    efi_capture_final_line(c, insns, errors);
}

void efi_capture_final_line(const struct efi_capture *c, uint64_t insns, uint64_t errors)
{
    efi_con_printf("ptboot: trace unit=%s cpu=%u bytes=%llu wrapped=%d stopped=%d insns=%llu "
                   "errors=%llu images=%u\n",
                   capture_unit_name(c->unit), c->ncpus ? c->cpu[c->cur].n : 0u,
                   (unsigned long long)c->trace_bytes, c->wrapped ? 1 : 0, c->stopped ? 1 : 0,
                   (unsigned long long)insns, (unsigned long long)errors, (unsigned)c->sb.nimages);
}

void efi_capture_free(struct efi_capture *c)
{
    if (c->watching)
        efi_image_watch_free(&c->watch);
    c->watching = false;
    if (c->page_table_pages)
        BS->FreePages(c->page_table, c->page_table_pages);
    if (c->block_pages)
        BS->FreePages(c->block, c->block_pages);
    if (c->multi)
        efi_mp_trace_free(&mp_trace, BS);
    c->multi = false;
    c->ncpus = c->cur = 0;
    c->ntargets = 0;
    c->page_table_pages = c->block_pages = 0;
}
