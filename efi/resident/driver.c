/* The resident boot tracer's driver side (efi/resident/resident.h has the story).
 * Entered from efi_main when the image was loaded as a boot-service driver
 * (a Driver#### option) or dispatched from a firmware volume
 * (efi/resident/early.h): reads its words from LoadOptions, its firmware
 * file's RAW section or PtbootEarly (efi/resident/words.h), allocates the header as EfiReservedMemoryType
 * and publishes it as a configuration table, reports the previous boot's
 * hang recorder (efi/resident/previous.h) and places its own
 * (efi/resident/recorder.h), starts the hardware unit (efi/resident/hw.h)
 * or holds #DB for the soft unit (efi/resident/soft.h), records every
 * image in memory (those already loaded, then each new one) and arms at
 * the --image, hooks ExitBootServices, starts the hang timeout's timer
 * (efi/capture/hang.h) and returns EFI_SUCCESS to stay resident. Its lines
 * go to COM1 directly (efi/platform/uart.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "efi/args.h"
#include "efi/capture/hang.h"
#include "efi/resident/previous.h"
#include "efi/resident/recorder.h"
#include "format/load_option.h"
#include "efi/capture/image_watch.h"
#include "efi/platform/msr_safe.h"
#include "format/sideband.h"
#include "efi/resident/resident.h"
#include "efi/resident/driver.h"
#include "efi/resident/early.h"
#include "efi/resident/hw.h"
#include "efi/resident/report.h"
#include "efi/resident/soft.h"
#include "efi/resident/words.h"
#include "efi/platform/uart.h"
#include "efi/capture/soft_step.h"
#include "efi/platform/cpu_arch.h"

#define PAGE_BYTES 4096ull
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
static EFI_EVENT ebs_event, load_event;
static void *load_registration;
static char words_text[RESIDENT_TEXT_BYTES];
/* the sideband, in reserved pages with its text (efi/resident/resident.h) */
static struct sideband *sb;
static uint32_t images_before; /* images recorded before tracing began */
static bool first_batch_done;
static char *words[PTB_ARGS_MAX_TOKENS];
/* The driver's words (efi/resident/words.h): --verbose (a COM1 line per
 * image as it loads; off, since at 115200 baud a hundred lines would add
 * most of a second to the boot being traced), --trace-stop (a TraceStop
 * address inside the --image, soft unit), the hang recorder's, and the
 * capture words for the hardware unit. */
static struct resident_words W;
/* the hang recorder (efi/resident/recorder.h, docs/hang.md) */
static struct resident_recorder rec;
/* Where the driver came from and where its words did (efi/resident/early.h). */
static struct early_start early;
/* The images loaded before this driver: their entry points have run, so
 * an --image among them cannot be traced (the first LoadedImage
 * notification reports them together with the first new one). */
static EFI_HANDLE loaded_before[RESIDENT_IMAGES_MAX];
static UINTN n_loaded_before;

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

static void publish_sideband(void);

/* The hardware unit traces every image: each one loaded while tracing
 * goes into the recorder's code area while room lasts (after a reset its
 * pages are gone), and the sideband is written again with it. */
static void record_hw_image(const struct resident_image *im)
{
    uint64_t lo = im->base & ~(PAGE_BYTES - 1);
    uint64_t pages = (im->base + im->size - lo + PAGE_BYTES - 1) / PAGE_BYTES;
    const uint8_t *addr = rec.mem + rec.fixed.addr_off;
    for (uint64_t i = 0; i < rec.code_pages; i++) {
        uint64_t a;
        memcpy(&a, addr + i * 8, 8);
        if (a >= lo && a < lo + pages * PAGE_BYTES)
            return; /* an image at the same place before: keep the first */
    }
    resident_recorder_add_code(&rec, (const void *)(uintptr_t)lo, lo, pages);
    publish_sideband();
}

/* The report's " traced" mark on a row of the image table. */
static void mark_traced(int row)
{
    if (row >= 0)
        hdr->traced[row / 32] |= 1u << (row % 32);
}

static bool was_loaded_before(EFI_HANDLE h)
{
    for (UINTN i = 0; i < n_loaded_before; i++)
        if (loaded_before[i] == h)
            return true;
    return false;
}

/* name (a file or module name) is one of the --image names (a
 * comma-separated list: efi/resident/words.h). */
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
    long n = li->FilePath ? device_path_file_text((const uint8_t *)li->FilePath, RESIDENT_DP_MAX,
                                                  path, sizeof path)
                          : 0;
    if (n <= 0)
        snprintf(path, sizeof path, "%s", d.name[0] && strcmp(d.name, "?") ? d.name : "?");
    const char *name = strrchr(path, '\\');
    name = name ? name + 1 : path;
    struct resident_image im = {
        .base = base, .size = size, .entry = entry, .cv = d.cv, .cv_age = d.cv_age
    };
    snprintf(im.name, sizeof im.name, "%s", name);
    memcpy(im.cv_guid, d.cv_guid,
           sizeof im.cv_guid < sizeof d.cv_guid ? sizeof im.cv_guid : sizeof d.cv_guid);
    snprintf(im.cv_path, sizeof im.cv_path, "%s", d.cv_path);
    int row = -1; /* its row in images[] */
    if (hdr->image_count == RESIDENT_IMAGES_MAX)
        hdr->images_dropped++;
    else
        hdr->images[row = (int)hdr->image_count++] = im;
    if (rec.on && hdr->unit == RESIDENT_UNIT_HW && hdr->state == RESIDENT_TRACING)
        record_hw_image(&im);
    if (W.verbose)
        efi_uart_printf("ptboot: resident image base=0x%llx size=0x%llx entry=0x%llx name=%s\n",
                        (unsigned long long)base, (unsigned long long)size,
                        (unsigned long long)entry, im.name);
    if (!hdr->image_filter[0] || !matches(im.name, d.name))
        return;
    if (hdr->unit == RESIDENT_UNIT_SOFT && hdr->has_target) {
        /* a later instance: after a session that returned, not inside one */
        if (hdr->state == RESIDENT_STOPPED && hdr->stop_reason == RESIDENT_STOP_RETURNED) {
            if (!was_loaded_before(handle) && resident_soft_arm_again(&im) == 0) {
                mark_traced(row);
                publish_sideband();
            }
        } else if (hdr->state == RESIDENT_TRACING || hdr->state == RESIDENT_ARMED)
            efi_uart_printf(
                "ptboot: resident note: %s loaded while another session is on: not traced\n",
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
        efi_uart_printf(
            "ptboot: resident note: %s was loaded before ptboot (its entry point has run): "
            "not traced; a later one is (docs/early-boot.md: dispatch ptboot earlier)\n",
            im.name);
        return;
    }
    images_before = hdr->image_count - 1;
    char err[PTB_ARGS_ERROR_BYTES];
    if (resident_soft_arm(&im, err, sizeof err)) {
        fail(err);
        return;
    }
    mark_traced(row);
    if (W.follow)
        efi_uart_printf("ptboot: resident armed image=%s entry=0x%llx follow=all max-insns=%llu\n",
                        im.name, (unsigned long long)entry, (unsigned long long)W.max_insns);
    else
        efi_uart_printf("ptboot: resident armed image=%s entry=0x%llx filter=0x%llx-0x%llx\n",
                        im.name, (unsigned long long)entry, (unsigned long long)hdr->filter_lo,
                        (unsigned long long)hdr->filter_hi);
    /* the recorder gets the names now: a reset may come before any stop */
    publish_sideband();
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
        int row = sideband_add_image(sb, im->base, im->size, im->entry, im->name, flags);
        if (row >= 0 && im->cv)
            sideband_set_debug(sb, row, im->cv, im->cv_guid, im->cv_age, im->cv_path);
    }
    sb->trace.bytes = hdr->write_pos;
    sb->trace.wrapped = hdr->wrapped;
    sb->trace.stopped = hdr->state == RESIDENT_STOPPED;
    size_t len = sideband_write(sb, (char *)(uintptr_t)hdr->sideband_text, hdr->sideband_text_cap);
    hdr->sideband_text_bytes = len < hdr->sideband_text_cap ? len : 0;
    if (rec.on && hdr->sideband_text == rec.phys + rec.fixed.sideband_off)
        resident_recorder_sideband(&rec, (size_t)hdr->sideband_text_bytes);
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
    efi_hang_quiesce();
    if (hdr->unit == RESIDENT_UNIT_HW) {
        resident_hw_stop(RESIDENT_STOP_EBS);
        resident_recorder_live(&rec, hdr, RECORDER_POS_STOPPED, true);
    } else if (hdr->state == RESIDENT_ARMED || hdr->state == RESIDENT_TRACING)
        resident_soft_stop(RESIDENT_STOP_EBS);
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
        resident_recorder_live(&rec, hdr, RECORDER_POS_STOPPED, true);
        publish_sideband();
        return;
    }
    /* the sideband is published where the state changes (on_end, or
     * soft_stop when nothing was armed), not again for a stopped one: the
     * images loaded since were not loaded while tracing */
    resident_soft_stop(RESIDENT_STOP_COMMAND);
    /* Called by an app in the same boot (boot services are up): give #DB
     * back, so that its own `trace --unit soft` can take it. */
    efi_soft_step_release();
}

/* ---- the hang timeout (efi/capture/hang.h) --------------------------------- */

static bool hang_tracing(void)
{
    return hdr->state == RESIDENT_TRACING;
}

/* hw: the write position into the recorder, every tick */
static void hang_save(void)
{
    uint64_t pos;
    if (hdr->unit == RESIDENT_UNIT_HW && resident_hw_save(&pos)) {
        hdr->write_pos = pos;
        resident_recorder_live(&rec, hdr, RECORDER_POS_SAVED, false);
    }
}

/* The unit stops for the report. With --hang-repeat the soft unit's #DB
 * session goes on (the next step starts the fresh trace with a PSB+);
 * without, the session ends as at ExitBootServices. */
static void hang_stop_unit(void)
{
    if (hdr->unit == RESIDENT_UNIT_HW) {
        resident_hw_stop(RESIDENT_STOP_HANG);
        resident_recorder_live(&rec, hdr, RECORDER_POS_STOPPED, true);
        publish_sideband();
        return;
    }
    if (!W.hang_repeat)
        resident_soft_stop(RESIDENT_STOP_HANG);
    else
        resident_soft_pause();
}

static void hang_report(unsigned n, uint32_t after_s, bool at_notify)
{
    efi_uart_printf(
        "ptboot: hang report begin n=%u after=%us unit=%s image=%s tpl=%s watchdog=%s\n", n,
        after_s, hdr->unit == RESIDENT_UNIT_HW ? "hw" : "soft",
        hdr->has_target        ? hdr->target.name
        : hdr->image_filter[0] ? hdr->image_filter
                               : "-",
        at_notify ? "notify" : "callback", at_notify ? "untouched" : "off");
    hang_stop_unit();
    hdr->hang_reports = n;
    resident_recorder_live(&rec, hdr, rec.live.pos_source, rec.live.linear);
    resident_report_hang(hdr, sum_arena, sum_arena ? EBS_REPORT_SUM_ARENA : 0, efi_uart_write);
    efi_uart_printf("ptboot: hang report end n=%u repeat=%u\n", n, W.hang_repeat ? 1u : 0u);
}

/* --hang-repeat: a fresh buffer, tracing on. */
static void hang_restart(void)
{
    if (hdr->unit == RESIDENT_UNIT_HW) {
        if (resident_hw_restart())
            return;
        resident_recorder_live(&rec, hdr, RECORDER_POS_SAVED, false);
        return;
    }
    resident_soft_restart();
}

static const struct efi_hang_ops hang_ops = {
    .tracing = hang_tracing,
    .save = hang_save,
    .report = hang_report,
    .restart = hang_restart,
};

/* The recorder's variable could not be written when the driver started
 * (dispatched from a firmware volume before the variable service): it is
 * written when the Variable Write Architectural Protocol comes, so that
 * the boot after a reset finds this boot's recorder. */
static void recorder_variable_when_up(void)
{
    char err[PTB_ARGS_ERROR_BYTES];
    if (!rec.on)
        return;
    if (resident_recorder_begin_variable(&rec, err, sizeof err)) {
        efi_uart_printf("ptboot: resident warning: %s\n", err);
        return;
    }
    hdr->recorder_generation = rec.generation;
    efi_uart_printf("ptboot: resident recorder variable written generation=%llu (Variable Write "
                    "Architectural Protocol)\n",
                    (unsigned long long)rec.generation);
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
    if (EFI_ERROR(
            BS->CreateEvent(EVT_NOTIFY_SIGNAL, TPL_CALLBACK, on_image_loaded, NULL, &load_event)) ||
        EFI_ERROR(BS->RegisterProtocolNotify(&LoadedImageProtocol, load_event, &load_registration)))
        efi_uart_printf("ptboot: resident warning: cannot watch image loads (no sideband)\n");
    /* the hang timeout, and the hardware unit's periodic save into the
     * recorder (efi/capture/hang.h) */
    if (W.hang_timeout_s || (rec.on && hdr->unit == RESIDENT_UNIT_HW)) {
        struct efi_hang_config hc = { .timeout_s = W.hang_timeout_s, .repeat = W.hang_repeat };
        if (efi_hang_start(&hc, &hang_ops))
            efi_uart_printf(
                "ptboot: resident warning: no timer event: no hang timeout, no periodic save\n");
    }
    if (rec.on && rec.variable_pending && early.from_fv) {
        EFI_GUID vw = PTB_VARIABLE_WRITE_ARCH_PROTOCOL_GUID;
        if (early_when_protocol(&vw, recorder_variable_when_up) == 0)
            efi_uart_printf(
                "ptboot: resident recorder variable waits for the Variable Write Architectural "
                "Protocol\n");
    }
    hdr->stop = stop_now;
    if (hdr->state != RESIDENT_TRACING)
        hdr->state = RESIDENT_ARMED;
    efi_uart_printf("ptboot: resident driver ready unit=%s image=%s buffer=0x%llx bytes=%llu "
                    "header=0x%llx\n",
                    hdr->unit == RESIDENT_UNIT_HW ? "hw" : "soft",
                    hdr->image_filter[0] ? hdr->image_filter : "-", (unsigned long long)hdr->buffer,
                    (unsigned long long)hdr->buffer_bytes, (unsigned long long)(uintptr_t)hdr);
    if (rec.on)
        efi_uart_printf(
            "ptboot: resident recorder at=0x%llx bytes=%llu generation=%llu place=%s trace=0x%llx "
            "sideband=0x%llx code=0x%llx hang_timeout=%u repeat=%u ring=%u\n",
            (unsigned long long)rec.phys, (unsigned long long)rec.bytes,
            (unsigned long long)rec.generation,
            rec.outside_map       ? "outside-map"
            : W.recorder_at_given ? "given"
                                  : "lowest-free",
            (unsigned long long)(rec.phys + rec.fixed.trace_off),
            (unsigned long long)(rec.phys + rec.fixed.sideband_off),
            (unsigned long long)(rec.phys + rec.fixed.code_off), W.hang_timeout_s,
            W.hang_repeat ? 1u : 0u, hdr->ring);
    return EFI_SUCCESS;
}

/* ---- the recorder's region (efi/resident/recorder.h) ------------------------- */

#define SIDEBAND_TEXT_BYTES ((uint64_t)SIDEBAND_MAX_IMAGES * SIDEBAND_LINE_MAX)

/* The sideband text in pages of its own (no recorder). */
static void use_own_text(void)
{
    EFI_PHYSICAL_ADDRESS a;
    UINTN text_pages = (SIDEBAND_TEXT_BYTES + PAGE_BYTES - 1) / PAGE_BYTES;
    if (hdr->sideband_text || !sb)
        return;
    if (!EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiReservedMemoryType, text_pages, &a))) {
        hdr->sideband_text = a;
        hdr->sideband_text_cap = text_pages * PAGE_BYTES;
    }
}

/* The recorder for trace_bytes of output aligned to align (the sideband
 * text goes into it). 0, or -1 with err: --recorder-at then fails the
 * driver, the default goes on without a recorder and says so. */
static int recorder_open(uint64_t trace_bytes, uint64_t align, char *err, size_t err_len)
{
    if (resident_recorder_open(&rec, hdr, sb != NULL, &W, trace_bytes, align, err, err_len)) {
        if (!W.recorder_at_given)
            efi_uart_printf(
                "ptboot: resident warning: %s; this boot is not recorded for after a reset\n", err);
        return -1;
    }
    return 0;
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

EFI_STATUS efi_resident_driver_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
    EFI_LOADED_IMAGE *li = NULL;
    BS->HandleProtocol(image, &LoadedImageProtocol, (void **)&li);
    /* LoadOptions, or the RAW section of our firmware file, or PtbootEarly */
    early_start_read(li, words_text, sizeof words_text, &early);
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

    /* The sideband: reserved too (read after the boot services, and by
     * `resident` later in the boot); its text goes into the recorder, or
     * into pages of its own (use_own_text). */
    UINTN sb_pages = (sizeof *sb + PAGE_BYTES - 1) / PAGE_BYTES;
    if (!EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiReservedMemoryType, sb_pages, &a))) {
        sb = (struct sideband *)(uintptr_t)a;
        sideband_init(sb);
    }
    efi_msr_init(BS); /* the #GP-safe path, for the CPU facts */

    /* From here on the driver stays: failures are told through the header. */
    char err[PTB_ARGS_ERROR_BYTES];
    int n = efi_args_split(words_text, words, PTB_ARGS_MAX_TOKENS, err, sizeof err);
    if (n < 0 || resident_words_parse(&W, words, n, err, sizeof err)) {
        use_own_text();
        fail(err);
        return EFI_SUCCESS;
    }
    snprintf(hdr->image_filter, sizeof hdr->image_filter, "%s", W.image);
    hdr->hang_timeout_s = W.hang_timeout_s;
    hdr->ring = W.ring;
    uint64_t buffer_bytes = W.buffer_bytes;
    enum resident_unit_choice unit = W.unit;
    struct resident_soft_ctx sc = {
        .h = hdr, .rec = &rec, .w = &W, .sb = sb, .publish_sideband = publish_sideband
    };
    if (li) {
        sc.self_lo = (uint64_t)(uintptr_t)li->ImageBase;
        sc.self_hi = sc.self_lo + li->ImageSize;
    }
    resident_soft_init(&sc);
    /* The summaries' tables, for the reports (the ExitBootServices notify
     * may not allocate), taken now: the previous boot's recorder is
     * reported first. */
    UINTN arena_pages = (EBS_REPORT_SUM_ARENA + PAGE_BYTES - 1) / PAGE_BYTES;
    if (!EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiBootServicesData, arena_pages, &a)))
        sum_arena = (void *)(uintptr_t)a;
    else
        efi_uart_printf(
            "ptboot: resident warning: no memory for the summaries' tables (no summaries)\n");
    /* before this boot's recorder takes the place (docs/hang.md) */
    resident_previous(sum_arena);
    if (unit == RESIDENT_CHOOSE_AUTO)
        unit = resident_hw_available() ? RESIDENT_CHOOSE_HW : RESIDENT_CHOOSE_SOFT;
    if (unit == RESIDENT_CHOOSE_HW) {
        hdr->unit = RESIDENT_UNIT_HW;
        uint64_t block_bytes;
        if (resident_hw_plan(W.plan_words, W.n_plan_words, &block_bytes, err, sizeof err)) {
            use_own_text();
            fail(err);
            return EFI_SUCCESS;
        }
        uint64_t block = 0;
        if (!W.no_recorder && recorder_open(block_bytes, PAGE_BYTES, err, sizeof err) == 0)
            block = rec.phys + rec.fixed.trace_off;
        else if (!W.no_recorder && W.recorder_at_given) {
            fail(err);
            return EFI_SUCCESS;
        }
        if (resident_hw_start(hdr, block, block_bytes, err, sizeof err)) {
            fail(err);
            return EFI_SUCCESS;
        }
        if (rec.on) {
            struct resident_hw_layout l;
            resident_hw_layout(&l);
            resident_recorder_begin_hw(&rec, hdr, &W, &l);
            resident_recorder_live(&rec, hdr, RECORDER_POS_SAVED, false);
        }
        if (sb)
            resident_hw_sideband(sb);
        return finish_setup();
    }
    if (W.n_plan_words > W.n_soft_words) {
        use_own_text();
        fail("capture words are for the hardware unit (the soft unit takes --buffer, no-mtc, "
             "mtc=N)");
        return EFI_SUCCESS;
    }
    if (W.have_trace_stop && W.trace_stop_offset >= 0x100000000ull) {
        use_own_text();
        fail("--trace-stop: the offset is beyond any image");
        return EFI_SUCCESS;
    }
    if (!hdr->image_filter[0]) {
        /* Single-stepping all of BDS in QEMU's TCG would take hours. */
        use_own_text();
        fail("the soft unit needs --image NAME (the image to trace)");
        return EFI_SUCCESS;
    }
    if (!W.no_recorder && recorder_open(buffer_bytes, buffer_bytes, err, sizeof err) == 0) {
        hdr->buffer = rec.phys + rec.fixed.trace_off;
        hdr->buffer_bytes = buffer_bytes;
        resident_recorder_begin_soft(&rec, hdr, &W);
    } else {
        if (!W.no_recorder && W.recorder_at_given) {
            use_own_text();
            fail(err);
            return EFI_SUCCESS;
        }
        /* Reserved, like the header: a reader later in this boot (or an OS)
         * must find it intact after the boot services are gone. */
        use_own_text();
        if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiReservedMemoryType,
                                        buffer_bytes / PAGE_BYTES, &a))) {
            fail("no memory for the trace buffer");
            return EFI_SUCCESS;
        }
        hdr->buffer = a;
        hdr->buffer_bytes = buffer_bytes;
    }
    if (W.follow && resident_soft_follow_pages(err, sizeof err)) {
        fail(err);
        return EFI_SUCCESS;
    }

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
