/* The resident boot tracer's driver side (efi/resident/resident.h has the story).
 * Entered from efi_main when the image was loaded as a boot-service driver
 * (a Driver#### option): reads its words from LoadOptions, allocates the
 * header and the trace buffer as EfiReservedMemoryType, publishes the
 * header as a configuration table, records every image in memory (those
 * already loaded, then each new one), arms tracing for the --image it was given, hooks ExitBootServices
 * and returns EFI_SUCCESS to stay resident. Its lines go to COM1 directly
 * (efi/platform/uart.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/capture_plan.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/rtit_regs.h"
#include "arch/x86/soft_unit.h"
#include "efi/args.h"
#include "format/load_option.h"
#include "efi/capture/image_watch.h"
#include "efi/platform/msr_safe.h"
#include "format/sideband.h"
#include "efi/resident/resident.h"
#include "efi/resident/driver.h"
#include "efi/resident/early.h"
#include "efi/resident/touched.h"
#include "efi/resident/hw.h"
#include "efi/resident/report.h"
#include "efi/platform/uart.h"
#include "efi/capture/soft_step.h"
#include "efi/platform/cpu_arch.h"

#define PAGE_BYTES 4096ull
/* The software unit writes a few bytes per traced branch; 1 MiB holds
 * the stand-in loader's run many times over and stays cheap. Sizes are
 * powers of two: one ToPA region of 4 KiB << code (SDM 36.2.6.2). */
#define RESIDENT_DEFAULT_BUFFER (1ull << 20)
#define RESIDENT_MIN_BUFFER (1ull << 12)
#define RESIDENT_MAX_BUFFER (1ull << 30)
/* A device path this long is not one firmware made: stop reading there. */
#define RESIDENT_DP_MAX 4096

static struct resident_header *hdr;
/* The summaries' tables at ExitBootServices (efi/capture/ebs_report.h), taken at
 * load: the notify may not allocate. EfiBootServicesData, not reserved:
 * they are used only inside the notify, which runs before ExitBootServices
 * hands boot-services memory to the OS, like this driver's own code and
 * statics (EfiBootServicesCode), so reserving them would keep 1 MiB from
 * the OS for nothing. NULL: no summaries (said at load). */
static void *sum_arena;
static struct soft_unit unit_state;
static struct rtit_config unit_cfg;
static EFI_EVENT ebs_event, load_event;
static void *load_registration;
static char words_text[RESIDENT_TEXT_BYTES];
/* the sideband, in reserved pages with its text (efi/resident/resident.h) */
static struct sideband *sb;
static uint32_t images_before;     /* images recorded before tracing began */
static bool first_batch_done;
/* --trace-stop OFFSET: a TraceStop address inside the --image (soft unit) */
static uint64_t trace_stop_offset;
static bool have_trace_stop;
/* --verbose: a COM1 line per image as it loads (off: at 115200 baud a
 * hundred lines would add most of a second to the boot being traced) */
static bool verbose;
static char *words[PTB_ARGS_MAX_TOKENS];
/* Where the driver came from and where its words did (efi/resident/early.h). */
static struct early_start early;
/* This image, which a --follow session leaves out (its own notify
 * functions may run inside the traced call). */
static uint64_t self_lo, self_hi;
/* --follow: the soft unit traces everything the --image's entry point runs
 * (no FilterEn range: the DXE core, the protocols of other drivers), at
 * most --max-insns steps; the pages that ran are kept (touched.h). */
static bool follow;
static uint64_t max_insns;
static struct touched_pages touched;
/* The images loaded before this driver: their entry points have run, so
 * an --image among them cannot be traced (the first LoadedImage
 * notification reports them together with the first new one). */
static EFI_HANDLE loaded_before[RESIDENT_IMAGES_MAX];
static UINTN n_loaded_before;
/* Sessions of the soft unit: the first traced image is hdr->target; every
 * later image matching an --image name, one at a time, gets a session of
 * its own, its packets after the previous ones in the same buffer (a unit
 * started again at the next 4 KiB boundary: PSB+ first, the zero bytes in
 * between are PAD packets, so the buffer decodes as one trace), its code
 * in the page set (touched.h). The counters add up over the sessions. */
static uint32_t sessions;
static uint64_t session_base, bytes_before, insns_before, steps_before;
/* The default bound of a --follow session: under QEMU's TCG the soft unit
 * steps a few tens of thousands of instructions a second
 * (docs/early-boot.md), so minutes at most. */
#define FOLLOW_DEFAULT_MAX_INSNS 2000000ull
/* Code pages a --follow session keeps: the summary's and the serial dump's
 * bound (EBS_REPORT_CODE_PAGES_MAX, 4 MiB). */
#define FOLLOW_PAGES EBS_REPORT_CODE_PAGES_MAX
/* capture_plan.h words (name or name=value) for the hardware unit */
static const char *plan_words[PTB_ARGS_MAX_TOKENS];
static size_t n_plan_words;
enum unit_choice { UNIT_AUTO, UNIT_HW, UNIT_SOFT };

static void fail(const char *msg)
{
    snprintf(hdr->message, sizeof hdr->message, "%s", msg);
    hdr->state = RESIDENT_FAILED;
    efi_uart_printf("ptboot: resident error: %s\n", msg);
}

static int ascii_casecmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        int ca = (*a >= 'A' && *a <= 'Z') ? *a + 32 : *a;
        int cb = (*b >= 'A' && *b <= 'Z') ? *b + 32 : *b;
        if (ca != cb || !ca)
            return ca - cb;
    }
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
 * range would wrap, 36.2.6.1), branches and TSC on. */
static int soft_configure(uint64_t base, uint64_t size)
{
    memset(&unit_cfg, 0, sizeof unit_cfg);
    unit_cfg.output = RTIT_OUTPUT_TOPA;
    unit_cfg.when_full = RTIT_FULL_STOP;
    unit_cfg.regions = 1;
    unit_cfg.region_size_code = (unsigned)__builtin_ctzll(hdr->buffer_bytes / RESIDENT_MIN_BUFFER);
    unit_cfg.buffer_phys = hdr->buffer;
    if (sessions) {
        /* a later session: 4 KiB regions over what is left (SDM 36.2.6.2) */
        unit_cfg.regions = (unsigned)((hdr->buffer_bytes - session_base) / RESIDENT_MIN_BUFFER);
        unit_cfg.region_size_code = 0;
        unit_cfg.buffer_phys = hdr->buffer + session_base;
    }
    unit_cfg.os = true;
    unit_cfg.branch_en = true;
    unit_cfg.tsc_en = true;
    if (!follow) {
        unit_cfg.range[0].cfg = RTIT_ADDR_CFG_FILTER;
        unit_cfg.range[0].start = base;
        unit_cfg.range[0].end = base + size - 1;
    }
    if (have_trace_stop) {
        /* TraceStop (SDM 36.2.4.3): tracing stops when a taken branch
         * lands in the range; one address here (a function's entry). */
        unit_cfg.range[1].cfg = RTIT_ADDR_CFG_STOP;
        unit_cfg.range[1].start = base + trace_stop_offset;
        unit_cfg.range[1].end = base + trace_stop_offset;
    }
    hdr->rtit_ctl = rtit_config_ctl(&unit_cfg, true);
    /* one session: its filter; several: each had its own, so none is
     * the whole trace's (the packets say where tracing was on) */
    static struct rtit_config said;
    said = unit_cfg;
    if (sessions)
        for (unsigned i = 0; i < RTIT_MAX_RANGES; i++)
            said.range[i].cfg = RTIT_ADDR_CFG_OFF;
    if (sb) {
        struct rtit_caps caps;
        rtit_caps_read(&caps, x86_cpuid_native, NULL);
        efi_sideband_read_cpu(sb, &caps, &said, hdr->buffer_bytes);
        sb->unit = SIDEBAND_UNIT_SOFT;
    }
    hdr->filter_lo = follow || sessions ? 0 : base;
    hdr->filter_hi = follow || sessions ? 0 : base + size - 1;
    return soft_unit_init(&unit_state, &unit_cfg, (uint8_t *)(uintptr_t)hdr->buffer + session_base,
                          (size_t)(hdr->buffer_bytes - session_base), read_code, NULL);
}

/* ---- the soft unit's #DB session (efi/capture/soft_step.h) ------------------------ */

static struct efi_soft_step_config step_cfg;
static struct efi_soft_step_stats step_stats;
/* the reason efi_soft_step_end_now() is asked for (EBS or a command) */
static uint32_t caller_reason;

/* The unit's counters into the header, after every step: a reader later
 * in the boot (or after a crash) sees how far it got. */
static void publish(void)
{
    struct soft_unit_status s;
    soft_unit_get_status(&unit_state, &s);
    hdr->write_pos = session_base + s.write_pos;
    hdr->bytes = bytes_before + s.bytes;
    hdr->insns = insns_before + s.insns;
    hdr->steps = steps_before + s.steps;
    hdr->wrapped = s.wrapped;
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
}

static void publish_sideband(void);
static void arm_again(EFI_HANDLE handle, const struct resident_image *im, int row);

/* The report's " traced" mark on a row of the image table. */
static void mark_traced(int row)
{
    if (row >= 0)
        hdr->traced[row / 32] |= 1u << (row % 32);
}
static int follow_pages(void);

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

/* The session ended (exception context, or an end_now caller): no boot
 * services. The unit's packets close at ip if it ever started. */
static void on_end(void *ctx, uint64_t ip, uint64_t tsc, int why)
{
    (void)ctx;
    if (step_stats.entered) {
        soft_unit_stop(&unit_state, ip, tsc);
        if (!sessions)
            snapshot(); /* the first target's (later ones: the page set) */
        if (touched.cap) {
            hdr->code_pages = touched_copy(&touched, read_page, NULL);
            hdr->code_dropped = touched.dropped;
        }
    }
    hdr->stop_tsc = tsc;
    hdr->state = RESIDENT_STOPPED;
    hdr->stop_reason = why == PTB_SOFT_STEP_END_RETURNED ? RESIDENT_STOP_RETURNED
                       : why == PTB_SOFT_STEP_END_CALLER ? caller_reason
                       : why == PTB_SOFT_STEP_END_BOUNDED ? RESIDENT_STOP_BOUND
                                                          : RESIDENT_STOP_UNIT;
    publish();
    publish_sideband();
}

/* Ends the soft unit's session (ExitBootServices, `resident stop`). */
static void soft_stop(uint32_t reason)
{
    caller_reason = reason;
    if (!efi_soft_step_end_now() && hdr->state == RESIDENT_ARMED) {
        /* the --image never reached its entry: nothing was traced */
        hdr->state = RESIDENT_STOPPED;
        hdr->stop_reason = reason;
        publish_sideband();
    }
}

static bool was_loaded_before(EFI_HANDLE h)
{
    for (UINTN i = 0; i < n_loaded_before; i++)
        if (loaded_before[i] == h)
            return true;
    return false;
}

/* name (a file or module name) is one of the --image names. */
static bool one_of(const char *name, const char *list)
{
    char one[RESIDENT_NAME_BYTES];
    while (*list) {
        size_t k = strcspn(list, ",");
        snprintf(one, sizeof one, "%.*s", (int)k, list);
        if (!ascii_casecmp(name, one))
            return true;
        list += k + (list[k] == ',');
    }
    return false;
}

static bool matches(const char *name, const char *pe_name)
{
    return one_of(name, hdr->image_filter) || (pe_name[0] && one_of(pe_name, hdr->image_filter));
}

static void record_image(EFI_HANDLE handle)
{
    EFI_LOADED_IMAGE *li = NULL;
    if (EFI_ERROR(BS->HandleProtocol(handle, &LoadedImageProtocol, (void **)&li)) || !li)
        return;
    /* Base, size, entry point and the module's name (debug directory,
     * firmware-volume UI section or file path: efi/capture/image_watch.h). */
    static struct efi_image_desc d;
    if (efi_image_describe(handle, &d) < 0)
        return;
    uint64_t base = d.base, size = d.size, entry = d.entry;
    /* A file's name keeps its extension, as --image gives it. */
    char path[RESIDENT_NAME_BYTES * 2];
    long n = li->FilePath ? device_path_file_text((const uint8_t *)li->FilePath, RESIDENT_DP_MAX, path,
                                             sizeof path)
                          : 0;
    if (n <= 0)
        snprintf(path, sizeof path, "%s", d.name[0] && strcmp(d.name, "?") ? d.name : "?");
    const char *name = strrchr(path, '\\');
    name = name ? name + 1 : path;
    struct resident_image im = { .base = base, .size = size, .entry = entry };
    snprintf(im.name, sizeof im.name, "%s", name);
    int row = -1; /* its row in images[] */
    if (hdr->image_count == RESIDENT_IMAGES_MAX)
        hdr->images_dropped++;
    else
        hdr->images[row = (int)hdr->image_count++] = im;
    if (verbose)
        efi_uart_printf("ptboot: resident image base=0x%llx size=0x%llx entry=0x%llx name=%s\n",
                             (unsigned long long)base, (unsigned long long)size,
                             (unsigned long long)entry, im.name);
    if (!hdr->image_filter[0] || !matches(im.name, d.name))
        return;
    if (hdr->unit == RESIDENT_UNIT_SOFT && hdr->has_target) {
        /* a later instance: after a session that returned, not inside one */
        if (hdr->state == RESIDENT_STOPPED && hdr->stop_reason == RESIDENT_STOP_RETURNED)
            arm_again(handle, &im, row);
        else if (hdr->state == RESIDENT_TRACING || hdr->state == RESIDENT_ARMED)
            efi_uart_printf("ptboot: resident note: %s loaded while another session is on: not traced\n",
                            im.name);
        return;
    }
    if ((hdr->state != RESIDENT_ARMED && hdr->state != RESIDENT_TRACING) || hdr->has_target)
        return;
    if (hdr->unit == RESIDENT_UNIT_HW) {
        /* Intel PT traces everything already: the target is named so the
         * report can dump its code. */
        hdr->target = im;
        hdr->has_target = 1;
        mark_traced(row);
        efi_uart_printf("ptboot: resident target image=%s base=0x%llx\n", im.name,
                             (unsigned long long)base);
        return;
    }
    if (was_loaded_before(handle)) {
        efi_uart_printf("ptboot: resident note: %s was loaded before ptboot (its entry point has run): "
                        "not traced; a later one is (docs/early-boot.md: dispatch ptboot earlier)\n",
                        im.name);
        return;
    }
    if (!entry) {
        fail("the --image has no PE entry point");
        return;
    }
    int err = soft_configure(base, size);
    if (err) {
        char msg[96];
        snprintf(msg, sizeof msg, "soft unit: %s", soft_unit_strerror(err));
        fail(msg);
        return;
    }
    /* Room for the code snapshot taken when tracing ends (reserved: it
     * must outlive the image and the boot services). */
    EFI_PHYSICAL_ADDRESS snap;
    uint64_t snap_bytes = ((base & (PAGE_BYTES - 1)) + size + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
    if (!EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiReservedMemoryType,
                                     snap_bytes / PAGE_BYTES, &snap))) {
        hdr->snapshot = snap;
        hdr->snapshot_bytes = snap_bytes;
    }
    hdr->target = im;
    hdr->has_target = 1;
    hdr->sessions = 1;
    mark_traced(row);
    images_before = hdr->image_count - 1;
    step_cfg = (struct efi_soft_step_config){
        .step = on_step, .resume = on_resume, .end = on_end, .entry_ip = entry,
        .max_steps = max_insns, .self_lo = self_lo, .self_hi = self_hi,
    };
    int e = efi_soft_step_arm(&step_cfg, &step_stats);
    if (e) {
        char msg[96];
        snprintf(msg, sizeof msg, "cannot arm at the entry: %s", efi_soft_step_strerror(e));
        fail(msg);
        return;
    }
    if (follow)
        efi_uart_printf("ptboot: resident armed image=%s entry=0x%llx follow=all max-insns=%llu\n",
                        im.name, (unsigned long long)entry, (unsigned long long)max_insns);
    else
        efi_uart_printf("ptboot: resident armed image=%s entry=0x%llx filter=0x%llx-0x%llx\n",
                        im.name, (unsigned long long)entry, (unsigned long long)hdr->filter_lo,
                        (unsigned long long)hdr->filter_hi);
}

/* A later instance of an --image name (the first session returned): a new
 * session after the previous ones (see `sessions`). Boot services: this
 * runs in the LoadedImage notify. */
static void arm_again(EFI_HANDLE handle, const struct resident_image *im, int row)
{
    if (was_loaded_before(handle) || !im->entry)
        return;
    uint64_t next = (hdr->write_pos + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
    if (next + PAGE_BYTES > hdr->buffer_bytes) {
        efi_uart_printf("ptboot: resident note: %s: the buffer is full, not traced\n", im->name);
        return;
    }
    if (!touched.cap && follow_pages())
        return;
    /* the first session's code into the page set (its snapshot) */
    if (sessions == 0 && hdr->snapshot_taken && !follow)
        for (uint64_t off = 0; off < hdr->snapshot_bytes; off += PAGE_BYTES)
            touched_mark(&touched, (hdr->target.base & ~(PAGE_BYTES - 1)) + off);
    uint8_t *buf = (uint8_t *)(uintptr_t)hdr->buffer;
    memset(buf + hdr->write_pos, 0, (size_t)(next - hdr->write_pos)); /* PAD */
    bytes_before = hdr->bytes;
    insns_before = hdr->insns;
    steps_before = hdr->steps;
    session_base = next;
    sessions++;
    int err = soft_configure(im->base, im->size);
    if (err) {
        efi_uart_printf("ptboot: resident note: %s: soft unit: %s, not traced\n", im->name,
                        soft_unit_strerror(err));
        return;
    }
    hdr->state = RESIDENT_ARMED;
    hdr->stop_reason = RESIDENT_STOP_NONE;
    hdr->sessions = sessions + 1;
    mark_traced(row);
    memset(&step_stats, 0, sizeof step_stats);
    step_cfg.entry_ip = im->entry;
    int e = efi_soft_step_arm(&step_cfg, &step_stats);
    if (e) {
        efi_uart_printf("ptboot: resident note: %s: cannot arm at the entry: %s\n", im->name,
                        efi_soft_step_strerror(e));
        hdr->state = RESIDENT_STOPPED;
        hdr->stop_reason = RESIDENT_STOP_RETURNED;
        return;
    }
    efi_uart_printf("ptboot: resident armed image=%s entry=0x%llx session=%u\n", im->name,
                    (unsigned long long)im->entry, sessions + 1);
}

/* LoadImage reinstalls EFI_LOADED_IMAGE_PROTOCOL once the image is in
 * memory and relocated (UEFI 2.10 section 7.4.1), which signals this
 * event (RegisterProtocolNotify, section 7.3). */
static VOID EFIAPI on_image_loaded(EFI_EVENT e, VOID *ctx)
{
    (void)e;
    (void)ctx;
    for (;;) {
        EFI_HANDLE h;
        UINTN size = sizeof h;
        if (EFI_ERROR(BS->LocateHandle(ByRegisterNotify, NULL, load_registration, &size, &h)))
            break;
        record_image(h);
    }
    /* The first batch is every image loaded before the driver (see
     * struct resident_image): for the hardware unit, loaded before tracing. */
    if (!first_batch_done && hdr->unit == RESIDENT_UNIT_HW)
        images_before = hdr->image_count;
    first_batch_done = true;
}

/* The sideband text of the stopped capture into its reserved buffer. No
 * boot services: this runs at ExitBootServices and in the #DB handler. */
static void publish_sideband(void)
{
    if (!sb || !hdr->sideband_text)
        return;
    sb->nimages = 0;
    sb->images_dropped = hdr->images_dropped;
    uint32_t n = hdr->image_count < RESIDENT_IMAGES_MAX ? hdr->image_count : RESIDENT_IMAGES_MAX;
    /* Newest first: the driver sees loads, not unloads, so an image that
     * was unloaded and another loaded over its pages both stay in the
     * table; readers take the first row holding an address (host and
     * target alike), which then is the newer one. A base seen already is
     * an older image at the same place: left out (sideband_add_image would
     * overwrite the newer row with it). */
    for (uint32_t i = n; i-- > 0;) {
        const struct resident_image *im = &hdr->images[i];
        bool seen = false;
        for (uint32_t j = i + 1; j < n && !seen; j++)
            seen = hdr->images[j].base == im->base;
        if (seen)
            continue;
        uint32_t flags = i < images_before ? SIDEBAND_IMG_BEFORE : SIDEBAND_IMG_WHILE;
        if (hdr->has_target && im->base == hdr->target.base) {
            flags |= SIDEBAND_IMG_TARGET;
            if (hdr->snapshot_taken)
                flags |= SIDEBAND_IMG_SNAPSHOT;
        }
        sideband_add_image(sb, im->base, im->size, im->entry, im->name, flags);
    }
    sb->trace.bytes = hdr->write_pos;
    sb->trace.wrapped = hdr->wrapped;
    sb->trace.stopped = hdr->state == RESIDENT_STOPPED;
    size_t len = sideband_write(sb, (char *)(uintptr_t)hdr->sideband_text, hdr->sideband_text_cap);
    hdr->sideband_text_bytes = len < hdr->sideband_text_cap ? len : 0;
}

/* ExitBootServices notify (UEFI 2.10 section 7.4.6): may not allocate or
 * use any boot service. Tracing stops, the header says so, and the
 * results go out over COM1 with port writes (decoding uses only the
 * header, the reserved buffer and the images' code, all still mapped). */
static VOID EFIAPI on_exit_boot_services(EFI_EVENT e, VOID *ctx)
{
    (void)e;
    (void)ctx;
    hdr->stop = NULL;
    if (hdr->unit == RESIDENT_UNIT_HW)
        resident_hw_stop(RESIDENT_STOP_EBS);
    else if (hdr->state == RESIDENT_ARMED || hdr->state == RESIDENT_TRACING)
        soft_stop(RESIDENT_STOP_EBS);
    publish_sideband();
    efi_uart_printf("ptboot: resident exit-boot-services state=%s reason=%s\n",
                         resident_state_name(hdr->state), resident_stop_reason_name(hdr->stop_reason));
    if (early.from_fv)
        efi_uart_printf("ptboot: resident started from a firmware volume file=%s words=%s\n",
                        early.file, early_source_name(early.source));
    resident_report_summaries(hdr, sum_arena, sum_arena ? EBS_REPORT_SUM_ARENA : 0, efi_uart_write);
}

static void __attribute__((ms_abi)) stop_now(struct resident_header *h)
{
    if (h->unit == RESIDENT_UNIT_HW) {
        resident_hw_stop(RESIDENT_STOP_COMMAND);
        publish_sideband();
        return;
    }
    /* the sideband is published where the state changes (on_end, or
     * soft_stop when nothing was armed), not again for a stopped one: the
     * images loaded since were not loaded while tracing */
    soft_stop(RESIDENT_STOP_COMMAND);
    /* Called by an app in the same boot (boot services are up): give #DB
     * back, so that its own `trace --unit soft` can take it. */
    efi_soft_step_release();
}

static int parse_words(int n, uint64_t *buffer_bytes, enum unit_choice *unit, char *err,
                       size_t err_len)
{
    bool takes_value;
    for (int i = 0; i < n; i++) {
        const char *w = words[i];
        const char *v = i + 1 < n ? words[i + 1] : NULL;
        if (!strcmp(w, "--image") && v) {
            /* several: a comma-separated list */
            size_t len = strlen(hdr->image_filter);
            if (len + strlen(v) + 2 > sizeof hdr->image_filter) {
                snprintf(err, err_len, "--image %s: the names take more than %zu characters", v,
                         sizeof hdr->image_filter - 1);
                return -1;
            }
            snprintf(hdr->image_filter + len, sizeof hdr->image_filter - len, "%s%s", len ? "," : "", v);
            i++;
        } else if (!strcmp(w, "--unit") && v) {
            if (!strcmp(v, "hw"))
                *unit = UNIT_HW;
            else if (!strcmp(v, "soft"))
                *unit = UNIT_SOFT;
            else if (!strcmp(v, "auto"))
                *unit = UNIT_AUTO;
            else {
                snprintf(err, err_len, "--unit %s: hw, soft or auto", v);
                return -1;
            }
            i++;
        } else if (!strcmp(w, "--verbose")) {
            verbose = true;
        } else if (!strcmp(w, "--follow")) {
            follow = true;
        } else if (!strcmp(w, "--max-insns") && v) {
            char *end;
            unsigned long long m = strtoull(v, &end, 0);
            if (*end || !m) {
                snprintf(err, err_len, "--max-insns %s: a number of instructions (> 0)", v);
                return -1;
            }
            max_insns = m;
            i++;
        } else if (!strcmp(w, "--trace-stop") && v) {
            char *end;
            trace_stop_offset = strtoull(v, &end, 16);
            if (*end) {
                snprintf(err, err_len, "--trace-stop %s: a hex offset into the --image", v);
                return -1;
            }
            have_trace_stop = true;
            i++;
        } else if (!strcmp(w, "--buffer") && v) {
            char *end;
            unsigned long long b = strtoull(v, &end, 0);
            if (*end || b < RESIDENT_MIN_BUFFER || b > RESIDENT_MAX_BUFFER || (b & (b - 1))) {
                snprintf(err, err_len, "--buffer %s: a power of two from 4096 to 1 GiB", v);
                return -1;
            }
            *buffer_bytes = b;
            i++;
        } else if (w[0] != '-') {
            /* a capture word (buffer=8M, no-mtc, ...): checked by the plan */
            char name[32];
            size_t k = strcspn(w, "=");
            snprintf(name, sizeof name, "%.*s", (int)(k < sizeof name - 1 ? k : sizeof name - 1), w);
            if (!capture_word_known(name, &takes_value)) {
                snprintf(err, err_len, "unknown capture word '%s'", w);
                return -1;
            }
            plan_words[n_plan_words++] = w;
        } else {
            snprintf(err, err_len, "unknown word '%s'", w);
            return -1;
        }
    }
    return 0;
}

/* Both units: hook ExitBootServices, watch image loads, publish. */
static EFI_STATUS finish_setup(void)
{
    if (EFI_ERROR(BS->CreateEvent(EVT_SIGNAL_EXIT_BOOT_SERVICES, TPL_NOTIFY, on_exit_boot_services,
                                  NULL, &ebs_event))) {
        if (hdr->unit == RESIDENT_UNIT_HW)
            resident_hw_stop(RESIDENT_STOP_COMMAND); /* nobody would stop it */
        fail("cannot hook ExitBootServices");
        return EFI_SUCCESS;
    }
    if (EFI_ERROR(BS->CreateEvent(EVT_NOTIFY_SIGNAL, TPL_CALLBACK, on_image_loaded, NULL,
                                  &load_event)) ||
        EFI_ERROR(BS->RegisterProtocolNotify(&LoadedImageProtocol, load_event,
                                             &load_registration)))
        efi_uart_printf("ptboot: resident warning: cannot watch image loads (no sideband)\n");
    EFI_PHYSICAL_ADDRESS a;
    UINTN pages = (EBS_REPORT_SUM_ARENA + PAGE_BYTES - 1) / PAGE_BYTES;
    if (!EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiBootServicesData, pages, &a)))
        sum_arena = (void *)(uintptr_t)a;
    else
        efi_uart_printf("ptboot: resident warning: no memory for the summaries' tables (no summaries)\n");
    hdr->stop = stop_now;
    if (hdr->state != RESIDENT_TRACING)
        hdr->state = RESIDENT_ARMED;
    efi_uart_printf("ptboot: resident driver ready unit=%s image=%s buffer=0x%llx bytes=%llu "
                         "header=0x%llx\n",
                         hdr->unit == RESIDENT_UNIT_HW ? "hw" : "soft",
                         hdr->image_filter[0] ? hdr->image_filter : "-",
                         (unsigned long long)hdr->buffer, (unsigned long long)hdr->buffer_bytes,
                         (unsigned long long)(uintptr_t)hdr);
    return EFI_SUCCESS;
}

/* The CPU Architectural Protocol came (a driver dispatched before it):
 * the #GP-safe MSR path and the soft unit's #DB handler now. */
static void hold_when_cpu_arch(void)
{
    efi_msr_init(BS);
    int e = efi_soft_step_hold();
    if (e)
        fail(e == PTB_SOFT_STEP_BUSY ? "the #DB vector is taken (a debug agent?)"
                                     : "no CPU Architectural Protocol");
    else
        efi_uart_printf("ptboot: resident #DB handler registered (CPU Architectural Protocol)\n");
}

/* --follow: the set of pages and their dump, reserved (the dump is read
 * after ExitBootServices too). Non-zero: failed (said). */
static int follow_pages(void)
{
    if (!max_insns)
        max_insns = FOLLOW_DEFAULT_MAX_INSNS;
    uint64_t bytes = (uint64_t)FOLLOW_PAGES * (PAGE_BYTES + 8 + 2 * 8);
    EFI_PHYSICAL_ADDRESS a;
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiReservedMemoryType,
                                    (bytes + PAGE_BYTES - 1) / PAGE_BYTES, &a))) {
        fail("--follow: no memory for the code pages");
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

EFI_STATUS efi_resident_driver_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
    EFI_LOADED_IMAGE *li = NULL;
    BS->HandleProtocol(image, &LoadedImageProtocol, (void **)&li);
    /* LoadOptions, or the RAW section of our firmware file */
    early_start_read(li, words_text, sizeof words_text, &early);
    if (li) {
        self_lo = (uint64_t)(uintptr_t)li->ImageBase;
        self_hi = self_lo + li->ImageSize;
    }
    efi_uart_printf("ptboot: resident driver start base=0x%llx options='%s'\n",
                         li ? (unsigned long long)(uintptr_t)li->ImageBase : 0ull, words_text);
    if (early.from_fv)
        efi_uart_printf("ptboot: resident dispatched from a firmware volume file=%s words=%s\n",
                        early.file, early_source_name(early.source));
    if (early.variable_unavailable)
        efi_uart_printf("ptboot: resident note: %s (status 0x%llx): PtbootEarly (install --early) "
                        "cannot be read, the volume's words are used\n",
                        early.variable_status == EFI_BUFFER_TOO_SMALL
                            ? "the variable is longer than the driver's words"
                            : "the variable service is not up yet",
                        (unsigned long long)early.variable_status);

    /* The header first, so that every later failure is published. */
    EFI_PHYSICAL_ADDRESS a;
    UINTN hdr_pages = (sizeof *hdr + PAGE_BYTES - 1) / PAGE_BYTES;
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiReservedMemoryType, hdr_pages, &a))) {
        efi_uart_printf("ptboot: resident error: no memory for the header\n");
        return EFI_OUT_OF_RESOURCES;
    }
    hdr = (struct resident_header *)(uintptr_t)a;
    memset(hdr, 0, hdr_pages * PAGE_BYTES);
    hdr->magic = RESIDENT_MAGIC;
    hdr->version = RESIDENT_VERSION;
    hdr->header_bytes = sizeof *hdr;
    hdr->unit = RESIDENT_UNIT_SOFT;
    hdr->state = RESIDENT_STARTING;
    hdr->sideband = (uint64_t)(uintptr_t)hdr->images;
    snprintf(hdr->options, sizeof hdr->options, "%s", words_text);
    hdr->dispatched_from_fv = early.from_fv;
    n_loaded_before = sizeof loaded_before;
    if (EFI_ERROR(BS->LocateHandle(ByProtocol, &LoadedImageProtocol, NULL, &n_loaded_before,
                                   loaded_before)))
        n_loaded_before = 0;
    else
        n_loaded_before /= sizeof loaded_before[0];
    EFI_GUID guid = PTBOOT_RESIDENT_GUID_INIT;
    if (EFI_ERROR(st->BootServices->InstallConfigurationTable(&guid, hdr))) {
        efi_uart_printf("ptboot: resident error: InstallConfigurationTable failed\n");
        BS->FreePages(a, hdr_pages);
        return EFI_ABORTED;
    }

    /* The sideband and its text: reserved too (read after the boot
     * services, and by `resident` later in the boot). */
    UINTN sb_pages = (sizeof *sb + PAGE_BYTES - 1) / PAGE_BYTES;
    UINTN text_pages = (SIDEBAND_MAX_IMAGES * SIDEBAND_LINE_MAX + PAGE_BYTES - 1) / PAGE_BYTES;
    if (!EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiReservedMemoryType, sb_pages, &a))) {
        sb = (struct sideband *)(uintptr_t)a;
        sideband_init(sb);
        if (!EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiReservedMemoryType, text_pages, &a))) {
            hdr->sideband_text = a;
            hdr->sideband_text_cap = text_pages * PAGE_BYTES;
        }
    }
    efi_msr_init(BS); /* the #GP-safe path, for the CPU facts */

    /* From here on the driver stays: failures are told through the header. */
    char err[PTB_ARGS_ERROR_BYTES];
    uint64_t buffer_bytes = RESIDENT_DEFAULT_BUFFER;
    enum unit_choice unit = UNIT_AUTO;
    int n = efi_args_split(words_text, words, PTB_ARGS_MAX_TOKENS, err, sizeof err);
    if (n < 0 || parse_words(n, &buffer_bytes, &unit, err, sizeof err)) {
        fail(err);
        return EFI_SUCCESS;
    }
    if (unit == UNIT_AUTO)
        unit = resident_hw_available() ? UNIT_HW : UNIT_SOFT;
    if (unit == UNIT_HW) {
        hdr->unit = RESIDENT_UNIT_HW;
        if (resident_hw_start(hdr, plan_words, n_plan_words, err, sizeof err)) {
            fail(err);
            return EFI_SUCCESS;
        }
        if (sb)
            resident_hw_sideband(sb);
        return finish_setup();
    }
    if (n_plan_words) {
        fail("capture words are for the hardware unit (the soft unit takes --buffer)");
        return EFI_SUCCESS;
    }
    if (have_trace_stop && trace_stop_offset >= 0x100000000ull) {
        fail("--trace-stop: the offset is beyond any image");
        return EFI_SUCCESS;
    }
    if (!hdr->image_filter[0]) {
        /* Single-stepping all of BDS in QEMU's TCG would take hours. */
        fail("the soft unit needs --image NAME (the image to trace)");
        return EFI_SUCCESS;
    }
    /* Reserved, like the header: a reader later in this boot (or an OS)
     * must find it intact after the boot services are gone. */
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiReservedMemoryType,
                                    buffer_bytes / PAGE_BYTES, &a))) {
        fail("no memory for the trace buffer");
        return EFI_SUCCESS;
    }
    hdr->buffer = a;
    hdr->buffer_bytes = buffer_bytes;
    if (follow && follow_pages())
        return EFI_SUCCESS;

    int e = efi_soft_step_hold();
    if (e == PTB_SOFT_STEP_NO_CPU_ARCH && early.from_fv) {
        /* dispatched before the CPU driver (APRIORI, --after): the #DB
         * handler is registered when its protocol comes */
        EFI_GUID cpu = PTB_CPU_ARCH_PROTOCOL_GUID;
        if (early_when_protocol(&cpu, hold_when_cpu_arch) < 0) {
            fail("no CPU Architectural Protocol, and no way to wait for it");
            return EFI_SUCCESS;
        }
        efi_uart_printf("ptboot: resident waiting for the CPU Architectural Protocol (#DB)\n");
    } else if (e) {
        fail(e == PTB_SOFT_STEP_BUSY ? "the #DB vector is taken (a debug agent?)"
                                     : "no CPU Architectural Protocol");
        return EFI_SUCCESS;
    }
    return finish_setup();
}

BOOLEAN efi_resident_is_driver(EFI_HANDLE image)
{
    EFI_LOADED_IMAGE *li = NULL;
    if (EFI_ERROR(BS->HandleProtocol(image, &LoadedImageProtocol, (void **)&li)) || !li)
        return FALSE;
    return li->ImageCodeType == EfiBootServicesCode;
}
