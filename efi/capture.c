#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/capture_seq.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/rtit_decode_params.h"
#include "arch/x86/rtit_topa.h"
#include "efi/capture.h"
#include "efi/console.h"
#include "efi/msr_safe.h"
#include "efi/serial_dump.h"

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
        snprintf(c->why, sizeof c->why, "Intel PT enumerated (CPUID.(7,0):EBX[25], leaf 14h), MSR path ready");
    } else {
        c->unit = CAPTURE_UNIT_SOFT;
        if (!c->caps.pt)
            snprintf(c->why, sizeof c->why, "no usable Intel PT (%s)%s", rtit_pt_reason_name(c->caps.reason),
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

int efi_capture_plan(struct efi_capture *c, const char *const *words, size_t n_words)
{
    struct capture_image ranges[EFI_CAPTURE_MAX_IMAGES];
    for (unsigned i = 0; i < c->nimages; i++) {
        ranges[i].base = c->images[i].base;
        ranges[i].size = c->images[i].size;
    }
    struct capture_request req = {
        .mode = CAPTURE_TRACE, .unit = c->unit,
        .images = ranges, .n_images = c->nimages,
        .words = words, .n_words = n_words, .cpus = 1,
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
    uint64_t bytes = c->unit == CAPTURE_UNIT_HW ? c->plan.need.block_bytes : c->plan.buffer_bytes;
    c->block_pages = pages_for(bytes);
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, c->block_pages, &c->block))) {
        efi_con_printf("ptboot: error: trace: no memory for a %llu-byte trace buffer\n",
                       (unsigned long long)bytes);
        c->block_pages = 0;
        return -1;
    }
    if (c->unit == CAPTURE_UNIT_HW) {
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
    if (c->unit == CAPTURE_UNIT_HW && c->plan.cfg.output == RTIT_OUTPUT_TOPA) {
        struct rtit_topa_layout l;
        size_t tables = (size_t)(c->plan.need.table_bytes / PAGE_BYTES);
        if (rtit_topa_build(&l, &c->plan.cfg, (uint64_t *)(UINTN)c->plan.cfg.table_phys, tables)) {
            efi_con_puts("ptboot: error: trace: ToPA tables do not fit\n");
            return -1;
        }
    }
    return 0;
}

int efi_capture_add_image(struct efi_capture *c, uint64_t base, uint64_t size, uint64_t entry,
                          const char *name, bool snapshot)
{
    if (c->nimages == EFI_CAPTURE_MAX_IMAGES || !size)
        return -1;
    struct efi_capture_image *im = &c->images[c->nimages];
    memset(im, 0, sizeof *im);
    im->base = base;
    im->size = size;
    im->entry = entry;
    snprintf(im->name, sizeof im->name, "%s", name ? name : "?");
    if (snapshot) {
        uint64_t lo = base & ~(PAGE_BYTES - 1);
        uint64_t hi = (base + size + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
        im->snapshot_pages = pages_for(hi - lo);
        if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, im->snapshot_pages, &im->snapshot))) {
            im->snapshot_pages = 0;
            return -1;
        }
        im->snap_base = lo;
        /* Whole pages: the image's first and last pages are the loader's
         * (images are section-aligned, UEFI 2.10 2.1.1), so the bytes
         * around the image on them are readable too. */
        memcpy((void *)(UINTN)im->snapshot, (const void *)(UINTN)lo, (size_t)(hi - lo));
    }
    return (int)c->nimages++;
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

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* ---- hw unit glue ---------------------------------------------------------- */

static int msr_rd(void *ctx, uint32_t msr, uint64_t *v)
{
    (void)ctx;
    return efi_msr_read(msr, v) != EFI_MSR_OK;
}

static int msr_wr(void *ctx, uint32_t msr, uint64_t v)
{
    (void)ctx;
    return efi_msr_write(msr, v) != EFI_MSR_OK;
}

static const struct rtit_msr_ops msr_ops = { msr_rd, msr_wr, NULL };

/* ExitBootServices while tracing (an OS loader as the target): stop the
 * unit while the firmware still runs, so the buffer is final. */
static struct efi_capture *ebs_capture;
static bool ebs_seen;

static VOID EFIAPI on_exit_boot_services(EFI_EVENT ev, VOID *ctx)
{
    (void)ev;
    (void)ctx;
    struct efi_capture *c = ebs_capture;
    ebs_seen = true;
    if (!c)
        return;
    if (c->unit == CAPTURE_UNIT_HW)
        capture_seq_finish(&msr_ops, &c->plan.cfg, c->buffer, &c->hw_stop, &c->sum);
    else
        soft_unit_stop(&c->soft, 0, rdtsc());
}

int efi_capture_run(struct efi_capture *c, efi_soft_call_fn call, void *arg,
                    EFI_STATUS *call_status, uint64_t self_lo, uint64_t self_hi, uint64_t entry_ip)
{
    EFI_EVENT ev = NULL;
    ebs_capture = c;
    ebs_seen = false;
    if (EFI_ERROR(BS->CreateEvent(EVT_SIGNAL_EXIT_BOOT_SERVICES, TPL_NOTIFY, on_exit_boot_services,
                                  NULL, &ev)))
        ev = NULL;
    int ret = -1;
    if (c->unit == CAPTURE_UNIT_SOFT) {
        int e = soft_unit_init(&c->soft, &c->plan.cfg, c->buffer, (size_t)c->buffer_bytes, read_live, c);
        if (e) {
            efi_con_printf("ptboot: error: trace: soft unit: %s\n", soft_unit_strerror(e));
            goto out;
        }
        c->step_cfg = (struct efi_soft_step_config){
            .step = soft_step, .resume = soft_resume, .ctx = c,
            .self_lo = self_lo, .self_hi = self_hi, .step_all = c->step_all,
            .max_steps = c->max_steps, .entry_ip = entry_ip,
        };
        e = efi_soft_step_run(&c->step_cfg, call, arg, call_status, &c->step);
        if (e) {
            efi_con_printf("ptboot: error: trace: soft unit: %s\n", efi_soft_step_strerror(e));
            goto out;
        }
        if (!ebs_seen)
            soft_unit_stop(&c->soft, c->step.returned ? c->step.return_ip : c->step.last_ip, rdtsc());
        struct soft_unit_status s;
        soft_unit_get_status(&c->soft, &s);
        soft_unit_summarize(&c->soft, &c->sum);
        c->bytes = s.bytes;
        c->stopped = s.stopped;
        if (s.error)
            efi_con_printf("ptboot: trace: soft unit error: %s\n", soft_unit_strerror(s.error));
        efi_con_printf("ptboot: trace: soft unit steps=%llu insns=%llu skips=%llu gaps=%llu "
                       "undecodable=%llu entered=%d returned=%d bounded=%d traps=%llu breakpoints=%llu free_runs=%llu unexpected=%llu self=%llu\n",
                       (unsigned long long)s.steps, (unsigned long long)s.insns,
                       (unsigned long long)s.skips, (unsigned long long)s.gaps,
                       (unsigned long long)s.undecodable, c->step.entered, c->step.returned,
                       c->step.bounded, (unsigned long long)c->step.traps,
                       (unsigned long long)c->step.breakpoints, (unsigned long long)c->step.skips,
                       (unsigned long long)c->step.unexpected, (unsigned long long)c->step.skipped_self);
    } else {
        int e = rtit_start(&msr_ops, &c->plan.cfg, &c->caps, false, &c->hw_start);
        if (e) {
            efi_con_printf("ptboot: error: trace: Intel PT start failed (%d%s)\n", e,
                           c->hw_start.was_tracing ? ", someone else is tracing" : "");
            goto out;
        }
        *call_status = call(arg);
        if (!ebs_seen)
            capture_seq_finish(&msr_ops, &c->plan.cfg, c->buffer, &c->hw_stop, &c->sum);
        c->bytes = c->sum.bytes;
        c->stopped = c->hw_stop.stopped;
        if (c->hw_stop.error)
            efi_con_printf("ptboot: trace: STATUS.Error: %s\n", rtit_status_explain(c->hw_stop.status));
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
    ret = 0;
out:
    if (ev)
        BS->CloseEvent(ev);
    ebs_capture = NULL;
    return ret;
}

int efi_capture_code(struct efi_capture *c)
{
    size_t n = 0;
    for (unsigned i = 0; i < c->nimages; i++)
        n += c->images[i].snapshot_pages;
    c->page_table_pages = pages_for(n * sizeof(struct code_page) + 1);
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, c->page_table_pages, &c->page_table))) {
        c->page_table_pages = 0;
        return -1;
    }
    code_image_init(&c->code, (struct code_page *)(UINTN)c->page_table, n);
    struct code_page *p = c->code.pages;
    for (unsigned i = 0; i < c->nimages; i++) {
        const struct efi_capture_image *im = &c->images[i];
        for (UINTN k = 0; k < im->snapshot_pages; k++) {
            p->addr = im->snap_base + k * PAGE_BYTES;
            p->data = (const uint8_t *)(UINTN)(im->snapshot + k * PAGE_BYTES);
            p++;
        }
    }
    c->code.count = n;
    return code_image_finish(&c->code) ? -1 : 0;
}

void efi_capture_sideband(const struct efi_capture *c, struct sideband *sb)
{
    struct rtit_decode_params p;
    sideband_init(sb);
    sb->unit = c->unit == CAPTURE_UNIT_HW ? SIDEBAND_UNIT_HW : SIDEBAND_UNIT_SOFT;
    rtit_decode_params_fill(&p, &c->caps, &c->plan.cfg, c->msr_safe && c->caps.pt ? &msr_ops : NULL);
    sideband_set_cpu(sb, &c->caps, &p);
    sideband_set_config(sb, &c->plan.cfg, c->buffer_bytes);
    sb->trace.bytes = c->trace_bytes;
    sb->trace.wrapped = c->wrapped;
    sb->trace.stopped = c->stopped;
    for (unsigned i = 0; i < c->nimages; i++) {
        const struct efi_capture_image *im = &c->images[i];
        sideband_add_image(sb, im->base, im->size, im->entry, im->name,
                           SIDEBAND_IMG_BEFORE | SIDEBAND_IMG_UNLOADED | SIDEBAND_IMG_TARGET |
                           (im->snapshot_pages ? SIDEBAND_IMG_SNAPSHOT : 0));
    }
}

int efi_capture_page_dump(struct efi_capture *c, const uint8_t **dump, size_t *dump_len,
                          const uint8_t **addr, size_t *addr_len)
{
    uint64_t pages = 0;
    for (unsigned i = 0; i < c->nimages; i++)
        pages += c->images[i].snapshot_pages;
    if (!c->page_dump_pages) {
        c->page_dump_pages = pages_for(pages * PAGE_BYTES + pages * 8);
        if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, c->page_dump_pages, &c->page_dump))) {
            c->page_dump_pages = 0;
            return -1;
        }
        uint8_t *d = (uint8_t *)(UINTN)c->page_dump, *a = d + pages * PAGE_BYTES;
        for (unsigned i = 0; i < c->nimages; i++) {
            const struct efi_capture_image *im = &c->images[i];
            memcpy(d, (const void *)(UINTN)im->snapshot, im->snapshot_pages * PAGE_BYTES);
            d += im->snapshot_pages * PAGE_BYTES;
            for (UINTN k = 0; k < im->snapshot_pages; k++) {
                uint64_t v = im->snap_base + k * PAGE_BYTES;
                for (int b = 0; b < 8; b++)
                    *a++ = (uint8_t)(v >> (8 * b));
            }
        }
    }
    *dump = (const uint8_t *)(UINTN)c->page_dump;
    *dump_len = (size_t)(pages * PAGE_BYTES);
    *addr = *dump + pages * PAGE_BYTES;
    *addr_len = (size_t)(pages * 8);
    return 0;
}

int efi_capture_serial_dump(struct efi_capture *c)
{
    static struct sideband sb;
    static char text[SIDEBAND_MAX_IMAGES * SIDEBAND_LINE_MAX / 8];
    const uint8_t *dump = NULL, *addr = NULL;
    size_t dump_len = 0, addr_len = 0;
    if (efi_capture_page_dump(c, &dump, &dump_len, &addr, &addr_len)) {
        efi_con_puts("ptboot: error: trace: no memory for the code dump\n");
        return -1;
    }
    efi_capture_sideband(c, &sb);
    size_t tlen = sideband_write(&sb, text, sizeof text);
    if (tlen >= sizeof text)
        tlen = strlen(text);
    struct efi_dump_file files[] = {
        { "trace.pt", c->trace, (size_t)c->trace_bytes, PTD_FRAME_KIND_PT },
        { "code.dump", dump, dump_len, PTD_FRAME_KIND_RAW },
        { "code.addr", addr, addr_len, PTD_FRAME_KIND_RAW },
        { "sideband.txt", text, tlen, PTD_FRAME_KIND_RAW },
    };
    struct efi_dump_stats st;
    size_t n = efi_serial_dump(files, sizeof files / sizeof files[0], 0, &st);
    return n == sizeof files / sizeof files[0] ? 0 : -1;
}

void efi_capture_final_line(const struct efi_capture *c, uint64_t insns, uint64_t errors)
{
    efi_con_printf("ptboot: trace unit=%s cpu=0 bytes=%llu wrapped=%d stopped=%d insns=%llu errors=%llu images=%u\n",
                   capture_unit_name(c->unit), (unsigned long long)c->trace_bytes, c->wrapped ? 1 : 0,
                   c->stopped ? 1 : 0, (unsigned long long)insns, (unsigned long long)errors, c->nimages);
}

void efi_capture_free(struct efi_capture *c)
{
    for (unsigned i = 0; i < c->nimages; i++)
        if (c->images[i].snapshot_pages)
            BS->FreePages(c->images[i].snapshot, c->images[i].snapshot_pages);
    if (c->page_table_pages)
        BS->FreePages(c->page_table, c->page_table_pages);
    if (c->page_dump_pages)
        BS->FreePages(c->page_dump, c->page_dump_pages);
    c->page_dump_pages = 0;
    if (c->block_pages)
        BS->FreePages(c->block, c->block_pages);
    c->nimages = 0;
    c->page_table_pages = c->block_pages = 0;
}
