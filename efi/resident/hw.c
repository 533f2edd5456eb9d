#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/capture_plan.h"
#include "arch/x86/capture_seq.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/rtit_linear.h"
#include "arch/x86/rtit_recorder.h"
#include "arch/x86/rtit_topa.h"
#include "efi/capture/image_watch.h"
#include "efi/platform/msr_safe.h"
#include "efi/resident/hw.h"

#define PAGE_BYTES 4096ull

static struct {
    struct resident_header *h;
    struct rtit_caps caps;
    struct capture_plan plan;
    bool msr_ready;
    bool running;
} hw;

bool resident_hw_available(void)
{
    rtit_caps_read(&hw.caps, x86_cpuid_native, NULL);
    hw.msr_ready = !strcmp(efi_msr_init(BS), "ready");
    return hw.caps.pt && hw.msr_ready;
}

int resident_hw_plan(const char *const *words, size_t n, uint64_t *block_bytes, char *err,
                     size_t err_len)
{
    if (!resident_hw_available()) {
        snprintf(err, err_len, "--unit hw: %s",
                 !hw.caps.pt ? "no usable Intel PT on this CPU"
                             : "the #GP-safe MSR path is not ready");
        return -1;
    }
    struct capture_request req = {
        .mode = CAPTURE_RESIDENT,
        .unit = CAPTURE_UNIT_HW,
        .words = words,
        .n_words = n,
        .cpus = 1,
    };
    int st = capture_plan_make(&hw.plan, &hw.caps, &req);
    if (st != CAPTURE_PLAN_OK) {
        if (st == CAPTURE_PLAN_E_RULE)
            snprintf(err, err_len, "refused %s: %s", hw.plan.rule_name, hw.plan.rule_text);
        else
            snprintf(err, err_len, "%s", st == CAPTURE_PLAN_E_WORD ? hw.plan.error : "no plan");
        return -1;
    }
    if (hw.plan.unit != CAPTURE_UNIT_HW) {
        snprintf(err, err_len, "the words chose the soft unit: use --unit soft");
        return -1;
    }
    *block_bytes = (hw.plan.need.block_bytes + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
    return 0;
}

/* Zeroed output and fresh ToPA tables. */
static int prepare_output(char *err, size_t err_len)
{
    /* zeroed: a non-zero byte past the write position is how a wrap shows */
    memset((void *)(uintptr_t)hw.plan.cfg.buffer_phys, 0, hw.plan.buffer_bytes);
    if (hw.plan.cfg.output == RTIT_OUTPUT_TOPA) {
        struct rtit_topa_layout l;
        if (rtit_topa_build(&l, &hw.plan.cfg, (uint64_t *)(uintptr_t)hw.plan.cfg.table_phys,
                            (size_t)(hw.plan.need.table_bytes / PAGE_BYTES))) {
            snprintf(err, err_len, "ToPA tables do not fit");
            return -1;
        }
    }
    return 0;
}

/* ops: the #GP-safe path at the first start; the raw one for a restart
 * from the hang report's timer event (the first start proved the MSRs). */
static int start_now(const struct rtit_msr_ops *ops, char *err, size_t err_len)
{
    struct rtit_start_info info;
    memset(&info, 0, sizeof info);
    int r = rtit_start(ops, &hw.plan.cfg, &hw.caps, false, &info);
    if (r != RTIT_SEQ_OK) {
        snprintf(err, err_len, "start failed (%d%s%s)", r,
                 r == RTIT_SEQ_E_BUSY ? ": someone else is tracing" : "",
                 r == RTIT_SEQ_E_STATUS ? ": STATUS.Error" : "");
        return -1;
    }
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    hw.h->start_tsc = ((uint64_t)hi << 32) | lo;
    hw.h->state = RESIDENT_TRACING;
    hw.running = true;
    return 0;
}

int resident_hw_start(struct resident_header *h, uint64_t block, uint64_t block_bytes, char *err,
                      size_t err_len)
{
    hw.h = h;
    UINTN pages = (UINTN)(block_bytes / PAGE_BYTES);
    if (!block) {
        EFI_PHYSICAL_ADDRESS b;
        if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiReservedMemoryType, pages, &b))) {
            snprintf(err, err_len, "no memory for a %llu-byte trace block",
                     (unsigned long long)block_bytes);
            return -1;
        }
        block = b;
    }
    if (capture_plan_place(&hw.plan, &hw.caps, block, (uint64_t)pages * PAGE_BYTES)) {
        snprintf(err, err_len, "cannot place the buffer and tables");
        return -1;
    }
    if (prepare_output(err, err_len))
        return -1;
    h->unit = RESIDENT_UNIT_HW;
    h->buffer = hw.plan.cfg.buffer_phys;
    h->buffer_bytes = hw.plan.buffer_bytes;
    h->rtit_ctl = rtit_config_ctl(&hw.plan.cfg, true);
    return start_now(&efi_msr_safe_ops, err, err_len);
}

void resident_hw_layout(struct resident_hw_layout *l)
{
    const struct rtit_config *c = &hw.plan.cfg;
    l->buffer = c->buffer_phys;
    l->buffer_bytes = hw.plan.buffer_bytes;
    l->tables = c->output == RTIT_OUTPUT_TOPA ? c->table_phys : 0;
    l->table_bytes = c->output == RTIT_OUTPUT_TOPA ? hw.plan.need.table_bytes : 0;
    if (c->output == RTIT_OUTPUT_TOPA) {
        l->regions = c->regions;
        l->region_code = c->region_size_code;
    } else {
        /* a single range as one region (when it is a whole number of pages) */
        l->regions = 1;
        l->region_code = 0;
        while ((PAGE_BYTES << l->region_code) < c->single_size && l->region_code < 15)
            l->region_code++;
    }
    l->psb_freq = c->psb_freq;
    l->ctl = rtit_config_ctl(c, true);
}

bool resident_hw_save(uint64_t *pos)
{
    if (!hw.running)
        return false;
    /* the raw MSR path: the start has shown the MSRs exist, and this runs
     * in a timer event, where no protocol should be called */
    struct rtit_stop_info info;
    if (rtit_recorder_save(&efi_msr_raw_ops, &hw.plan.cfg,
                           (uint8_t *)(uintptr_t)hw.plan.cfg.buffer_phys, RTIT_RECORDER_ZERO_BAND,
                           &info) != RTIT_SEQ_OK ||
        info.write_pos < 0)
        return false;
    if (info.stopped || info.error)
        hw.running = false; /* stays off: TraceStop, STOP region or an error */
    *pos = (uint64_t)info.write_pos;
    return true;
}

int resident_hw_restart(void)
{
    char err[64];
    if (hw.running || !hw.h || prepare_output(err, sizeof err))
        return -1;
    return start_now(&efi_msr_raw_ops, err, sizeof err);
}

void resident_hw_sideband(struct sideband *sb)
{
    efi_sideband_read_cpu(sb, &hw.caps, &hw.plan.cfg, hw.plan.buffer_bytes);
    sb->unit = SIDEBAND_UNIT_HW;
}

void resident_hw_stop(uint32_t reason)
{
    struct resident_header *h = hw.h;
    if (!hw.running || !h)
        return;
    hw.running = false;
    struct rtit_stop_info stop;
    struct rtit_output_summary sum;
    struct rtit_linear lin;
    uint8_t *buf = (uint8_t *)(uintptr_t)h->buffer;
    memset(&stop, 0, sizeof stop);
    memset(&sum, 0, sizeof sum);
    memset(&lin, 0, sizeof lin);
    /* the raw instructions (efi/platform/msr_safe.h): the start has shown the MSRs
     * exist, and at ExitBootServices no protocol may be called */
    capture_seq_finish(&efi_msr_raw_ops, &hw.plan.cfg, buf, &stop, &sum);
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    h->stop_tsc = ((uint64_t)hi << 32) | lo;
    h->bytes = sum.bytes;
    h->wrapped = sum.wrapped;
    if (rtit_trace_linearize_in_place(buf, &sum, &lin) == 0)
        h->write_pos = lin.bytes;
    else
        h->write_pos = 0;
    h->state = RESIDENT_STOPPED;
    h->stop_reason = stop.stopped ? RESIDENT_STOP_UNIT : reason;
}
