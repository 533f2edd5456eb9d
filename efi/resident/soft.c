#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/rtit_linear.h"
#include "arch/x86/rtit_regs.h"
#include "arch/x86/soft_unit.h"
#include "efi/capture/ebs_report.h"
#include "efi/capture/image_watch.h"
#include "efi/capture/sideband_cpu.h"
#include "efi/capture/soft_step.h"
#include "efi/platform/uart.h"
#include "efi/resident/soft.h"
#include "efi/resident/touched.h"

#define PAGE_BYTES 4096ull

static struct resident_soft_ctx drv; /* the driver's state */
/* the header (drv.h), as every function here uses it */
static struct resident_header *hdr;
static struct soft_unit unit_state;
static struct rtit_config unit_cfg;
/* --follow: the pages the sessions ran (touched.h), kept in reserved pages
 * (the report after ExitBootServices reads them). */
static struct touched_pages touched;
/* Sessions (docs/early-boot.md): the first traced image is hdr->target;
 * every later image matching an --image name, one at a time, gets a
 * session of its own, its packets after the previous ones in the same
 * buffer (a unit started again at the next 4 KiB boundary: PSB+ first, the
 * zero bytes in between are PAD packets, so the buffer decodes as one
 * trace), its code in the page set. The counters add up over them. */
static uint32_t sessions; /* later sessions so far */
static uint64_t session_base, bytes_before, insns_before, steps_before;
/* Code pages --follow keeps: the summary's and the serial dump's bound. */
#define FOLLOW_PAGES EBS_REPORT_CODE_PAGES_MAX

void resident_soft_init(const struct resident_soft_ctx *c)
{
    drv = *c;
    hdr = c->h;
}

/* The soft unit reads code where the CPU is about to execute it: mapped. */
static int read_code(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    (void)ctx;
    memcpy(buf, (const void *)(uintptr_t)ip, size);
    return (int)size;
}

/* Configures the soft unit for [base, base + size) (FilterEn range 0) over
 * the reserved buffer: one ToPA region as large as the buffer, marked STOP
 * so the start of the run is kept when it fills (SDM 36.2.6.2; a single
 * range would wrap, 36.2.6.1), branches, TSC and MTC on. */
static int soft_configure(uint64_t base, uint64_t size)
{
    memset(&unit_cfg, 0, sizeof unit_cfg);
    unit_cfg.output = RTIT_OUTPUT_TOPA;
    /* stop when full keeps the start of the run; a ring (--ring, and
     * with --hang-timeout) the newest trace, what a hang report needs */
    unit_cfg.when_full = drv.w->ring ? RTIT_FULL_RING : RTIT_FULL_STOP;
    unit_cfg.regions = 1;
    unit_cfg.region_size_code = (unsigned)__builtin_ctzll(hdr->buffer_bytes / RESIDENT_BUFFER_MIN);
    unit_cfg.buffer_phys = hdr->buffer;
    if (sessions) {
        /* a later session: 4 KiB regions over what is left (SDM 36.2.6.2) */
        unit_cfg.regions = (unsigned)((hdr->buffer_bytes - session_base) / RESIDENT_BUFFER_MIN);
        unit_cfg.region_size_code = 0;
        unit_cfg.buffer_phys = hdr->buffer + session_base;
    }
    unit_cfg.os = true;
    unit_cfg.branch_en = true;
    unit_cfg.tsc_en = true;
    /* time as a CPU writes it, on the soft unit's clock (soft_unit.h) */
    unit_cfg.mtc_en = !drv.w->no_mtc;
    unit_cfg.mtc_freq =
        drv.w->mtc_freq >= 0 ? (unsigned)drv.w->mtc_freq : SOFT_UNIT_MTC_FREQ_DEFAULT;
    if (!drv.w->follow) {
        /* --follow: no FilterEn range, all the entry point runs */
        unit_cfg.range[0].cfg = RTIT_ADDR_CFG_FILTER;
        unit_cfg.range[0].start = base;
        unit_cfg.range[0].end = base + size - 1;
    }
    if (drv.w->have_trace_stop) {
        /* TraceStop (SDM 36.2.4.3): tracing stops when a taken branch
         * lands in the range; one address here (a function's entry). */
        unit_cfg.range[1].cfg = RTIT_ADDR_CFG_STOP;
        unit_cfg.range[1].start = base + drv.w->trace_stop_offset;
        unit_cfg.range[1].end = base + drv.w->trace_stop_offset;
    }
    hdr->rtit_ctl = rtit_config_ctl(&unit_cfg, true);
    /* one session: its filter; several: each had its own, so none is
     * the whole trace's (the packets say where tracing was on) */
    static struct rtit_config said;
    said = unit_cfg;
    if (sessions)
        for (unsigned i = 0; i < RTIT_MAX_RANGES; i++)
            said.range[i].cfg = RTIT_ADDR_CFG_OFF;
    if (drv.sb) {
        struct rtit_caps caps;
        rtit_caps_read(&caps, x86_cpuid_native, NULL);
        efi_sideband_read_cpu(drv.sb, &caps, &said, hdr->buffer_bytes);
        sideband_set_soft_unit(drv.sb);
    }
    bool filtered = !drv.w->follow && !sessions;
    hdr->filter_lo = filtered ? base : 0;
    hdr->filter_hi = filtered ? base + size - 1 : 0;
    return soft_unit_init(&unit_state, &unit_cfg, (uint8_t *)(uintptr_t)hdr->buffer + session_base,
                          (size_t)(hdr->buffer_bytes - session_base), read_code, NULL);
}

/* ---- the soft unit's #DB session (efi/capture/soft_step.h) ------------------------ */

static struct efi_soft_step_config step_cfg;
static struct efi_soft_step_stats step_stats;
/* the reason efi_soft_step_end_now() is asked for (EBS or a command) */
static uint32_t caller_reason;

/* The unit's counters into the header and the recorder's live slot,
 * after every step: a reader later in the boot, or after a reset, sees how
 * far it got. */
static void publish(void)
{
    struct soft_unit_status s;
    soft_unit_get_status(&unit_state, &s);
    hdr->write_pos = session_base + s.write_pos;
    hdr->bytes = bytes_before + s.bytes;
    hdr->insns = insns_before + s.insns;
    hdr->steps = steps_before + s.steps;
    hdr->wrapped = s.wrapped;
    resident_recorder_live(drv.rec, hdr, RECORDER_POS_UNIT, false);
}

/* A ring after its unit stopped: oldest byte first from the buffer's
 * start (arch/x86/rtit_linear.h), so that every reader (the reports, `resident`,
 * the recorder) takes [0, write_pos). */
static void linearise_ring(void)
{
    if (!drv.w->ring)
        return;
    struct rtit_output_summary sum;
    struct rtit_linear lin;
    soft_unit_summarize(&unit_state, &sum);
    /* this session's part of the buffer (the earlier ones come before) */
    if (rtit_trace_linearize_in_place((uint8_t *)(uintptr_t)hdr->buffer + session_base, &sum, &lin))
        lin.bytes = 0;
    hdr->write_pos = session_base + lin.bytes;
    resident_recorder_live(drv.rec, hdr, RECORDER_POS_UNIT, true);
}

/* In the #DB handler: the first step is the entry point. */
static int on_step(void *ctx, uint64_t ip, unsigned mode, uint64_t tsc)
{
    (void)ctx;
    if (hdr->state == RESIDENT_ARMED) {
        hdr->state = RESIDENT_TRACING;
        hdr->start_tsc = tsc;
    }
    int action = soft_unit_step(&unit_state, ip, mode, tsc);
    if (touched.cap)
        touched_mark(&touched, ip);
    publish();
    return action;
}

static uint64_t on_resume(void *ctx)
{
    (void)ctx;
    return soft_unit_resume_ip(&unit_state);
}

/* An interrupt or exception at a traced instruction; code run unseen. */
static int on_interrupt(void *ctx, uint64_t handler, unsigned mode, uint64_t tsc)
{
    (void)ctx;
    int action = soft_unit_interrupt(&unit_state, handler, mode, tsc);
    publish();
    return action;
}

static int on_unseen(void *ctx, uint64_t tsc)
{
    (void)ctx;
    return soft_unit_unseen(&unit_state, tsc);
}

/* The traced image is still in memory whenever tracing ends (at its
 * entry's return address, inside one of its calls at ExitBootServices, or
 * at the unit's stop): keep its code for later decoding. */
static void snapshot(void)
{
    if (!hdr->snapshot || !hdr->has_target)
        return;
    memcpy((void *)(uintptr_t)hdr->snapshot,
           (const void *)(uintptr_t)(hdr->target.base & ~(PAGE_BYTES - 1)), hdr->snapshot_bytes);
    hdr->snapshot_taken = 1;
    if (drv.rec->on && hdr->snapshot == drv.rec->phys + drv.rec->fixed.code_off)
        resident_recorder_code_changed(drv.rec);
}

/* A code page as it is now (still mapped: the session just ran it). */
static int read_page(void *ctx, uint64_t page, uint8_t *out)
{
    (void)ctx;
    /* the first target's pages from its snapshot: it may be gone by now */
    uint64_t lo = hdr->target.base & ~(PAGE_BYTES - 1);
    if (hdr->snapshot_taken && page >= lo && page - lo < hdr->snapshot_bytes)
        memcpy(out, (const uint8_t *)(uintptr_t)hdr->snapshot + (page - lo), TOUCHED_PAGE_BYTES);
    else
        memcpy(out, (const void *)(uintptr_t)page, TOUCHED_PAGE_BYTES);
    return 0;
}

/* The pages the sessions ran into their dump (the reports read it), and
 * into the recorder's code area while room lasts (after a reset the pages
 * are gone). No boot services. */
static void keep_touched(void)
{
    if (!touched.cap)
        return;
    hdr->code_pages = touched_copy(&touched, read_page, NULL);
    hdr->code_dropped = touched.dropped;
    struct resident_recorder *rec = drv.rec;
    if (!rec->on)
        return;
    const uint8_t *have = rec->mem + rec->fixed.addr_off;
    uint64_t had = rec->code_pages;
    for (uint32_t i = 0; i < hdr->code_pages; i++) {
        uint64_t a = touched.addr[i];
        bool dup = false;
        for (uint64_t k = 0; k < had && !dup; k++) {
            uint64_t b;
            memcpy(&b, have + k * 8, 8);
            dup = a == b;
        }
        if (!dup &&
            !resident_recorder_add_code(rec, touched.pages + (uint64_t)i * PAGE_BYTES, a, 1))
            break; /* full */
    }
}

/* The session ended (exception context, or an end_now caller): no boot
 * services. The unit's packets close at ip if it ever started. */
static void on_end(void *ctx, uint64_t ip, uint64_t tsc, int why)
{
    (void)ctx;
    if (step_stats.entered) {
        soft_unit_stop(&unit_state, ip, tsc);
        if (!sessions)
            snapshot(); /* the first target's (later ones: the page set) */
        keep_touched();
    }
    hdr->stop_tsc = tsc;
    hdr->state = RESIDENT_STOPPED;
    hdr->stop_reason = why == PTB_SOFT_STEP_END_RETURNED  ? RESIDENT_STOP_RETURNED
                       : why == PTB_SOFT_STEP_END_CALLER  ? caller_reason
                       : why == PTB_SOFT_STEP_END_BOUNDED ? RESIDENT_STOP_BOUND
                                                          : RESIDENT_STOP_UNIT;
    publish();
    if (step_stats.entered)
        linearise_ring();
    drv.publish_sideband();
}

/* Ends the soft unit's session (ExitBootServices, `resident stop`, a hang
 * report without --hang-repeat). */
void resident_soft_stop(uint32_t reason)
{
    caller_reason = reason;
    if (!efi_soft_step_end_now() && hdr->state == RESIDENT_ARMED) {
        /* the --image never reached its entry: nothing was traced */
        hdr->state = RESIDENT_STOPPED;
        hdr->stop_reason = reason;
        drv.publish_sideband();
    }
}

static uint64_t rdtsc_now(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

int resident_soft_arm(const struct resident_image *im, char *err, size_t err_len)
{
    uint64_t base = im->base, size = im->size, entry = im->entry;
    if (!entry) {
        snprintf(err, err_len, "the --image has no PE entry point");
        return -1;
    }
    int e = soft_configure(base, size);
    if (e) {
        snprintf(err, err_len, "soft unit: %s", soft_unit_strerror(e));
        return -1;
    }
    /* Room for the code snapshot taken when tracing ends (reserved: it
     * must outlive the image and the boot services). */
    struct resident_recorder *rec = drv.rec;
    EFI_PHYSICAL_ADDRESS snap;
    uint64_t snap_bytes = ((base & (PAGE_BYTES - 1)) + size + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
    if (rec->on && !rec->code_pages && snap_bytes <= rec->fixed.code_cap) {
        /* in the recorder, copied now too: after a reset it is all the
         * next boot has of the image's code */
        hdr->snapshot = rec->phys + rec->fixed.code_off;
        hdr->snapshot_bytes = snap_bytes;
        resident_recorder_add_code(rec, (const void *)(uintptr_t)(base & ~(PAGE_BYTES - 1)),
                                   base & ~(PAGE_BYTES - 1), snap_bytes / PAGE_BYTES);
    } else if (!EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiReservedMemoryType,
                                            snap_bytes / PAGE_BYTES, &snap))) {
        if (rec->on)
            efi_uart_printf(
                "ptboot: resident warning: %s (%llu bytes) does not fit the recorder's code area "
                "(--recorder-code): a reset loses its code\n",
                im->name, (unsigned long long)snap_bytes);
        hdr->snapshot = snap;
        hdr->snapshot_bytes = snap_bytes;
    }
    hdr->target = *im;
    hdr->has_target = 1;
    hdr->sessions = 1;
    step_cfg = (struct efi_soft_step_config){
        .step = on_step,
        .resume = on_resume,
        .end = on_end,
        .entry_ip = entry,
        .interrupt = on_interrupt,
        .unseen = on_unseen,
        .max_steps = drv.w->max_insns,
        .self_lo = drv.self_lo,
        .self_hi = drv.self_hi,
    };
    efi_soft_step_watch_ranges(&step_cfg, &unit_cfg);
    e = efi_soft_step_arm(&step_cfg, &step_stats);
    if (e) {
        snprintf(err, err_len, "cannot arm at the entry: %s", efi_soft_step_strerror(e));
        return -1;
    }
    return 0;
}

void resident_soft_pause(void)
{
    soft_unit_stop(&unit_state, 0, rdtsc_now());
    publish();
    linearise_ring();
    if (!sessions)
        snapshot();
    keep_touched();
    drv.publish_sideband();
}

void resident_soft_restart(void)
{
    /* this session's part of the buffer (earlier sessions stay) */
    memset((uint8_t *)(uintptr_t)hdr->buffer + session_base, 0,
           (size_t)(hdr->buffer_bytes - session_base));
    soft_unit_init(&unit_state, &unit_cfg, (uint8_t *)(uintptr_t)hdr->buffer + session_base,
                   (size_t)(hdr->buffer_bytes - session_base), read_code, NULL);
    hdr->state = RESIDENT_TRACING;
    publish();
}

int resident_soft_follow_pages(char *err, size_t err_len)
{
    if (touched.cap)
        return 0;
    uint64_t bytes = (uint64_t)FOLLOW_PAGES * (PAGE_BYTES + 8 + 2 * 8);
    EFI_PHYSICAL_ADDRESS a;
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiReservedMemoryType,
                                    (bytes + PAGE_BYTES - 1) / PAGE_BYTES, &a))) {
        snprintf(err, err_len, "no memory for the code pages (%llu bytes)",
                 (unsigned long long)bytes);
        return -1;
    }
    uint8_t *pages = (uint8_t *)(uintptr_t)a;
    uint64_t *addr = (uint64_t *)(pages + (uint64_t)FOLLOW_PAGES * PAGE_BYTES);
    uint64_t *slots = addr + FOLLOW_PAGES;
    touched_init(&touched, slots, addr, pages, FOLLOW_PAGES);
    hdr->code_dump = (uint64_t)(uintptr_t)pages;
    hdr->code_addr = (uint64_t)(uintptr_t)addr;
    return 0;
}

int resident_soft_arm_again(const struct resident_image *im)
{
    uint64_t next = (hdr->write_pos + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
    if (!im->entry)
        return -1;
    if (next + PAGE_BYTES > hdr->buffer_bytes) {
        efi_uart_printf("ptboot: resident note: %s: the buffer is full, not traced\n", im->name);
        return -1;
    }
    char err[96];
    if (resident_soft_follow_pages(err, sizeof err)) {
        efi_uart_printf("ptboot: resident note: %s: %s, not traced\n", im->name, err);
        return -1;
    }
    /* the first session's code into the page set (its snapshot) */
    if (sessions == 0 && hdr->snapshot_taken && !drv.w->follow)
        for (uint64_t off = 0; off < hdr->snapshot_bytes; off += PAGE_BYTES)
            touched_mark(&touched, (hdr->target.base & ~(PAGE_BYTES - 1)) + off);
    uint8_t *buf = (uint8_t *)(uintptr_t)hdr->buffer;
    memset(buf + hdr->write_pos, 0, (size_t)(next - hdr->write_pos)); /* PAD */
    bytes_before = hdr->bytes;
    insns_before = hdr->insns;
    steps_before = hdr->steps;
    session_base = next;
    sessions++;
    int e = soft_configure(im->base, im->size);
    if (e) {
        efi_uart_printf("ptboot: resident note: %s: soft unit: %s, not traced\n", im->name,
                        soft_unit_strerror(e));
        return -1;
    }
    hdr->state = RESIDENT_ARMED;
    hdr->stop_reason = RESIDENT_STOP_NONE;
    hdr->sessions = sessions + 1;
    memset(&step_stats, 0, sizeof step_stats);
    step_cfg.entry_ip = im->entry;
    efi_soft_step_watch_ranges(&step_cfg, &unit_cfg);
    e = efi_soft_step_arm(&step_cfg, &step_stats);
    if (e) {
        efi_uart_printf("ptboot: resident note: %s: cannot arm at the entry: %s\n", im->name,
                        efi_soft_step_strerror(e));
        hdr->state = RESIDENT_STOPPED;
        hdr->stop_reason = RESIDENT_STOP_RETURNED;
        return -1;
    }
    efi_uart_printf("ptboot: resident armed image=%s entry=0x%llx session=%u\n", im->name,
                    (unsigned long long)im->entry, sessions + 1);
    return 0;
}
