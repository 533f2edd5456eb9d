/* `trace [options] [PATH | --boot-next]`: load an image, trace it running,
 * decode on the target.
 *
 *   PATH          \dir\file.efi on the boot volume, or fsN:\dir\file.efi on
 *                 the N-th file system (the UEFI shell's numbering is the
 *                 firmware's handle order, as here)
 *   --boot-next   the boot option the firmware would take next: BootNext,
 *                 else the first active, not hidden option of BootOrder
 *                 that is not the one running now (BootCurrent); a
 *                 short-form device path is expanded as the boot
 *                 manager does ("--boot-next" below)
 *   --unit auto|hw|soft  trace unit (auto: Intel PT when CPUID offers it
 *                 and the MSR path is #GP-safe, else the software unit)
 *   --cpus [N|all] trace N processors (default with --cpus: all), the
 *                 word cpus=N|all likewise: the hardware unit runs on
 *                 every one through MP services, one buffer per CPU (the
 *                 BSP's trace.pt, trace-cpuN.pt for APs, cpus.txt); the
 *                 soft unit traces the BSP only and lists the APs as not
 *                 traced, with the reason
 *   --step-all    soft unit: step (and report) ptboot's own glue too
 *   --stop-at OFF a TraceStop range on the one byte at target+OFF (the
 *                 word trace-stop=1:A:A with the loaded address): tracing
 *                 stops for good when the code gets there
 *   --max-steps N soft unit: stop single-stepping after N steps
 *   --last N      print the last N branches (default 16, 0: none)
 *   --no-decode   capture only
 *   --no-summary  no decode summaries (decoder/ptd_sum.h), only the counts
 *   --serial-dump send trace.pt, code.dump/.addr and sideband.txt over
 *                 serial (framed; `ptboot serial LOG` recovers them)
 *   --line-bytes N  payload bytes per serial-dump data line (1..192, as
 *                 the serial-dump command's; default 96)
 *   --no-files    do not write them to \ptboot\capNNN on the boot volume
 *   --snapshot SIZE  memory reserved for code snapshots (default 8M)
 *   WORD          capture option words (arch/x86/capture_plan.h and
 *                 rtit_options.h): buffer=SIZE mode=ring|stop
 *                 filter=N:START:END trace-stop=N:START:END no-filter ...
 *
 * Steps: LoadImage; record the image (base, size, entry, name) and
 * snapshot its code (an application's pages are freed when it exits, so
 * the decoder reads the snapshot, never live memory); plan the capture
 * with the image range as the default filter; StartImage under the trace
 * unit; stop when it returns (or at ExitBootServices, TraceStop, a full
 * stop-mode buffer); linearise; decode; and end with (at ExitBootServices
 * all of this happens in the notify, over COM1: efi/capture/capture.c)
 *   ptboot: trace unit=<hw|soft> cpu=<n> bytes=<n> wrapped=<0|1>
 *           stopped=<0|1> insns=<n> errors=<n> images=<n>
 * (one line). A missing feature gives a clear error, never a hang. */
#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/capture_plan.h"
#include "arch/x86/rtit_options.h"
#include "decoder/ptd_frame.h"
#include "efi/app.h"
#include "efi/capture/capture.h"
#include "efi/capture/decode.h"
#include "efi/capture/fit_volume.h"
#include "efi/capture/soft_step.h"
#include "efi/platform/console.h"
#include "efi/platform/status.h"
#include "efi/resident/capture.h"
#include "format/load_option.h"

#define TRACE_MAX_WORDS 32
#define PATH_CHARS      256
#define OPTION_BYTES    4096
#define ORDER_MAX       128

struct trace_args {
    const char *path;
    bool boot_next, no_decode, no_summary, serial_dump, no_files;
    uint32_t line_bytes;
    uint64_t snapshot;
    bool have_stop_at;
    uint64_t stop_at;
    const char *unit;
    unsigned last;
    uint64_t max_steps;
    bool step_all;
    unsigned cpus;           /* 0: not given (the BSP); CAPTURE_CPUS_ALL */
    uint32_t hang_timeout_s; /* --hang-timeout (docs/hang.md), 0: none */
    bool hang_repeat;
    const char *words[TRACE_MAX_WORDS];
    size_t nwords;
};

static void trace_usage(void)
{
    efi_con_puts(
        "usage: ptboot.efi trace [--unit auto|hw|soft] [--cpus [N|all]] [--last N] [--step-all]\n"
        "                        [--max-steps N] [--stop-at OFFSET] [--no-decode]\n"
        "                        [--no-summary]\n"
        "                        [--serial-dump [--line-bytes N]] [--no-files] [--snapshot SIZE]\n"
        "                        [--hang-timeout SECONDS [--hang-repeat]]\n"
        "                        [WORD...]\n"
        "                        (PATH | fsN:PATH | --boot-next)\n"
        "  WORD: buffer=SIZE mode=ring|stop filter=N:START:END trace-stop=N:START:END\n"
        "        no-filter no-tsc psb=N ... (see docs/trace.md)\n");
}

static int usage_error(const char *what, const char *arg)
{
    efi_con_printf("ptboot: error: trace: %s%s%s\n", what, arg ? " " : "", arg ? arg : "");
    trace_usage();
    return PTB_APP_USAGE;
}

static int parse(struct trace_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->unit = "auto";
    a->last = PTB_CAPTURE_LAST_DEFAULT;
    a->snapshot = PTB_CAPTURE_SNAPSHOT_DEFAULT;
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t n;
        if (!strcmp(o, "--boot-next")) {
            a->boot_next = true;
        } else if (!strcmp(o, "--no-decode")) {
            a->no_decode = true;
        } else if (!strcmp(o, "--no-summary")) {
            a->no_summary = true;
        } else if (!strcmp(o, "--serial-dump")) {
            a->serial_dump = true;
        } else if (!strcmp(o, "--no-files")) {
            a->no_files = true;
        } else if (!strcmp(o, "--line-bytes")) {
            if (!v || rtit_parse_u64(v, &n, false) || n == 0 || n > PTD_FRAME_PAYLOAD_MAX)
                return usage_error("--line-bytes wants 1..192, not", v ? v : "nothing");
            a->line_bytes = (uint32_t)n;
            i++;
        } else if (!strcmp(o, "--snapshot")) {
            if (!v || rtit_parse_u64(v, &a->snapshot, true) || a->snapshot < 4096 ||
                a->snapshot > (1ull << 30))
                return usage_error("--snapshot wants 4K..1G, not", v ? v : "nothing");
            i++;
        } else if (!strcmp(o, "--cpus")) {
            /* an optional count: "all" or digits (a path is neither) */
            a->cpus = CAPTURE_CPUS_ALL;
            if (v && !strcmp(v, "all")) {
                i++;
            } else if (v && v[0] >= '0' && v[0] <= '9') {
                if (rtit_parse_u64(v, &n, false) || n == 0 || n >= CAPTURE_CPUS_ALL)
                    return usage_error("--cpus wants N >= 1 or all, not", v);
                a->cpus = (unsigned)n;
                i++;
            }
        } else if (!strcmp(o, "--step-all")) {
            a->step_all = true;
        } else if (!strcmp(o, "--hang-repeat")) {
            a->hang_repeat = true;
        } else if (!strcmp(o, "--hang-timeout")) {
            if (!v || rtit_parse_u64(v, &n, false) || n == 0 || n > PTB_CAPTURE_HANG_MAX_S)
                return usage_error("--hang-timeout wants seconds, 1 to 86400, not",
                                   v ? v : "nothing");
            a->hang_timeout_s = (uint32_t)n;
            i++;
        } else if (!strcmp(o, "--unit")) {
            if (!v || (strcmp(v, "auto") && strcmp(v, "hw") && strcmp(v, "soft")))
                return usage_error("--unit wants auto, hw or soft, not", v ? v : "nothing");
            a->unit = v, i++;
        } else if (!strcmp(o, "--stop-at")) {
            if (!v || rtit_parse_u64(v, &a->stop_at, false))
                return usage_error("--stop-at wants an offset into the target, not",
                                   v ? v : "nothing");
            a->have_stop_at = true;
            i++;
        } else if (!strcmp(o, "--last") || !strcmp(o, "--max-steps")) {
            if (!v || rtit_parse_u64(v, &n, false))
                return usage_error("bad number for", o);
            if (o[2] == 'l') {
                if (n > PTB_CAPTURE_LAST_MAX)
                    return usage_error("--last is at most 256, not", v);
                a->last = (unsigned)n;
            } else {
                a->max_steps = n;
            }
            i++;
        } else if (o[0] == '-') {
            return usage_error("unknown option", o);
        } else {
            /* a capture word (name or name=value), else the path */
            char name[48];
            size_t len = strcspn(o, "=");
            bool takes = false;
            if (len < sizeof name) {
                memcpy(name, o, len);
                name[len] = 0;
            } else {
                name[0] = 0;
            }
            if (name[0] && capture_word_known(name, &takes)) {
                if (a->nwords == TRACE_MAX_WORDS)
                    return usage_error("too many option words", NULL);
                a->words[a->nwords++] = o;
            } else if (!a->path && !strchr(o, '=')) {
                a->path = o;
            } else {
                return usage_error(strchr(o, '=') ? "unknown option word" : "unexpected word", o);
            }
        }
    }
    if (!a->path == !a->boot_next)
        return usage_error("give one target: PATH or --boot-next", NULL);
    if (a->hang_repeat && !a->hang_timeout_s)
        return usage_error("--hang-repeat needs --hang-timeout", NULL);
    if (a->hang_timeout_s && a->cpus)
        return usage_error("--hang-timeout traces one CPU: not with --cpus", NULL);
    return PTB_APP_OK;
}

/* ---- finding the target ------------------------------------------------- */

/* "fsN:\path" -> the N-th Simple File System handle; plain paths -> the
 * boot volume (the device ptboot was loaded from). */
static EFI_DEVICE_PATH *path_device_path(struct efi_app *app, const char *path)
{
    EFI_LOADED_IMAGE *self = NULL;
    EFI_HANDLE dev = NULL;
    if (EFI_ERROR(BS->HandleProtocol(app->image, &LoadedImageProtocol, (void **)&self)) || !self)
        return NULL;
    dev = self->DeviceHandle;
    const char *colon = strchr(path, ':');
    if (colon) {
        unsigned idx = 0;
        const char *p = path;
        if ((p[0] | 0x20) != 'f' || (p[1] | 0x20) != 's' || p + 2 == colon) {
            efi_con_printf("ptboot: error: trace: %s: only fsN: prefixes are understood\n", path);
            return NULL;
        }
        for (p += 2; p < colon; p++) {
            if (*p < '0' || *p > '9') {
                efi_con_printf("ptboot: error: trace: %s: bad file system number\n", path);
                return NULL;
            }
            idx = idx * 10 + (unsigned)(*p - '0');
        }
        UINTN count = 0;
        EFI_HANDLE *handles = NULL;
        EFI_GUID fs = SIMPLE_FILE_SYSTEM_PROTOCOL;
        if (EFI_ERROR(BS->LocateHandleBuffer(ByProtocol, &fs, NULL, &count, &handles)) ||
            idx >= count) {
            efi_con_printf("ptboot: error: trace: %s: no file system %u (%llu found)\n", path, idx,
                           (unsigned long long)count);
            if (handles)
                FreePool(handles);
            return NULL;
        }
        dev = handles[idx];
        FreePool(handles);
        path = colon + 1;
    }
    CHAR16 w[PATH_CHARS];
    size_t n = 0;
    for (; path[n] && n + 1 < PATH_CHARS; n++)
        w[n] = (CHAR16)(path[n] == '/' ? '\\' : path[n]);
    w[n] = 0;
    return FileDevicePath(dev, w);
}

static int read_var(const char *name, void *buf, UINTN *size)
{
    CHAR16 w[16];
    size_t n = 0;
    for (; name[n] && n < 15; n++)
        w[n] = (CHAR16)name[n];
    w[n] = 0;
    EFI_GUID g = EFI_GLOBAL_VARIABLE;
    return EFI_ERROR(RT->GetVariable(w, &g, NULL, size, buf)) ? -1 : 0;
}

/* ---- --boot-next ---------------------------------------------------------
 *
 * Which option (UEFI 2.10 section 3.1.2 "Load Option Processing"): the boot
 * manager takes BootNext once, if set, else the options of BootOrder in
 * order, skipping those whose LOAD_OPTION_ACTIVE attribute is clear
 * (section 3.1.3 "Load Options"; LOAD_OPTION_HIDDEN ones are not shown in
 * menus, so a "next OS" is not one of them either: OVMF's UiApp is
 * hidden). BootCurrent, the option that booted ptboot, is skipped too: it
 * is us. The firmware deletes BootNext before it boots it, so when
 * ptboot was itself booted as BootNext that variable is gone already.
 *
 * How it loads (section 3.1.2 again): an option's FilePathList[0] is
 * either a full device path (from the root: PciRoot()/.../file) or a
 * "short form" the boot manager has to expand first. LoadImage only takes
 * full ones, so this does what the boot manager does for the forms a
 * disk-boot option uses:
 *   - a Hard Drive media node first (HD(): section 10.3.5.1; partition
 *     number, start, size, signature): the partition on any block device
 *     whose device path ends in the same HD() node, then the rest;
 *   - a File Path media node first (section 10.3.5.4): the file on every
 *     file system, removable media first, then fixed ones (BlockIo
 *     Media->RemovableMedia; section 3.1.2 says the order within each
 *     group is the platform's, here the handle order);
 *   - a full path to a device with no file (what OVMF writes for a disk:
 *     PciRoot()/Pci()/USB()): the removable-media default path
 *     \EFI\BOOT\BOOTX64.EFI on its file system (section 3.5.1.1).
 * USB WWID/Class and URI short forms are refused with a message. */

#define BOOT_DEFAULT_FILE L"\\EFI\\BOOT\\BOOTX64.EFI" /* 3.5.1.1, x64 */
#define DP_TEXT_CHARS     160

/* The device path as UEFI text (gnu-efi's DevicePathToStr), narrowed to
 * ASCII for the console; "?" if it cannot be made. */
static void dp_text(EFI_DEVICE_PATH *dp, char *out, size_t cap)
{
    CHAR16 *w = dp ? DevicePathToStr(dp) : NULL;
    size_t n = 0;
    if (w) {
        for (; w[n] && n + 1 < cap; n++)
            out[n] = w[n] >= 0x20 && w[n] < 0x7f ? (char)w[n] : '?';
        FreePool(w);
    }
    if (!n)
        out[n++] = '?';
    out[n] = 0;
}

/* The file name of one or more consecutive File Path nodes at dp, joined
 * with '\' (section 10.3.5.4 allows a path split over nodes). */
static bool file_nodes_text(EFI_DEVICE_PATH *dp, CHAR16 *out, size_t cap)
{
    size_t n = 0;
    for (; !IsDevicePathEnd(dp) && DevicePathType(dp) == MEDIA_DEVICE_PATH &&
           DevicePathSubType(dp) == MEDIA_FILEPATH_DP;
         dp = NextDevicePathNode(dp)) {
        size_t chars = (DevicePathNodeLength(dp) - PTB_DP_HEADER_BYTES) / sizeof(CHAR16);
        const CHAR16 *name = ((FILEPATH_DEVICE_PATH *)dp)->PathName;
        if (n && out[n - 1] != L'\\' && chars && name[0] != L'\\' && n + 1 < cap)
            out[n++] = L'\\';
        for (size_t i = 0; i < chars && name[i] && n + 1 < cap; i++)
            out[n++] = name[i];
    }
    out[n] = 0;
    return n > 0;
}

/* The file exists on the file system of handle fs (opened read-only, then
 * closed): a cheap probe before LoadImage, which would also record a
 * failed load in nothing but a status. */
static bool file_on(EFI_HANDLE fs, const CHAR16 *path)
{
    EFI_FILE_IO_INTERFACE *io = NULL;
    EFI_FILE_HANDLE root = NULL, f = NULL;
    EFI_GUID g = SIMPLE_FILE_SYSTEM_PROTOCOL;
    if (EFI_ERROR(BS->HandleProtocol(fs, &g, (void **)&io)) || !io ||
        EFI_ERROR(io->OpenVolume(io, &root)) || !root)
        return false;
    bool ok = !EFI_ERROR(root->Open(root, &f, (CHAR16 *)path, EFI_FILE_MODE_READ, 0)) && f;
    if (f)
        f->Close(f);
    root->Close(root);
    return ok;
}

/* Short-form File Path: the first file system that has the file,
 * removable media first. Returns a full path (pool) or NULL. */
static EFI_DEVICE_PATH *expand_file_path(EFI_DEVICE_PATH *dp)
{
    CHAR16 path[PATH_CHARS];
    if (!file_nodes_text(dp, path, PATH_CHARS))
        return NULL;
    UINTN count = 0;
    EFI_HANDLE *h = NULL;
    EFI_GUID fs = SIMPLE_FILE_SYSTEM_PROTOCOL;
    if (EFI_ERROR(BS->LocateHandleBuffer(ByProtocol, &fs, NULL, &count, &h)))
        return NULL;
    EFI_DEVICE_PATH *full = NULL;
    for (int removable = 1; removable >= 0 && !full; removable--)
        for (UINTN i = 0; i < count && !full; i++) {
            EFI_BLOCK_IO *bio = NULL;
            bool rm = !EFI_ERROR(BS->HandleProtocol(h[i], &BlockIoProtocol, (void **)&bio)) &&
                      bio && bio->Media && bio->Media->RemovableMedia;
            EFI_DEVICE_PATH *dev = DevicePathFromHandle(h[i]);
            if (rm == (removable == 1) && dev && file_on(h[i], path))
                full = AppendDevicePath(dev, dp);
        }
    FreePool(h);
    return full;
}

/* Short-form Hard Drive: the block device whose path ends in the same
 * HD() node (every field: number, start, size, signature, format). */
static EFI_DEVICE_PATH *expand_hard_drive(EFI_DEVICE_PATH *dp)
{
    UINTN count = 0;
    EFI_HANDLE *h = NULL;
    if (EFI_ERROR(BS->LocateHandleBuffer(ByProtocol, &BlockIoProtocol, NULL, &count, &h)))
        return NULL;
    EFI_DEVICE_PATH *full = NULL;
    UINTN len = DevicePathNodeLength(dp);
    for (UINTN i = 0; i < count && !full; i++) {
        EFI_DEVICE_PATH *n = DevicePathFromHandle(h[i]), *last = NULL;
        for (; n && !IsDevicePathEnd(n); n = NextDevicePathNode(n))
            last = n;
        if (last && (UINTN)DevicePathNodeLength(last) == len && !memcmp(last, dp, len))
            full = AppendDevicePath(DevicePathFromHandle(h[i]), NextDevicePathNode(dp));
    }
    FreePool(h);
    return full;
}

/* The option's path made full (a pool allocation), its form in *form. */
static EFI_DEVICE_PATH *boot_full_path(EFI_DEVICE_PATH *dp, const char **form)
{
    if (DevicePathType(dp) == MEDIA_DEVICE_PATH && DevicePathSubType(dp) == MEDIA_FILEPATH_DP) {
        *form = "short-form file path";
        return expand_file_path(dp);
    }
    if (DevicePathType(dp) == MEDIA_DEVICE_PATH && DevicePathSubType(dp) == MEDIA_HARDDRIVE_DP) {
        *form = "short-form hard drive";
        return expand_hard_drive(dp);
    }
    if (DevicePathType(dp) == MESSAGING_DEVICE_PATH &&
        (DevicePathSubType(dp) == MSG_USB_WWID_DP || DevicePathSubType(dp) == MSG_USB_CLASS_DP ||
         DevicePathSubType(dp) == MSG_URI_DP)) {
        *form = "short-form USB WWID/Class or URI (not expanded here)";
        return NULL;
    }
    /* a full path: to a file, or to a device with a file system and no
     * file node (the default boot file then) */
    EFI_DEVICE_PATH *rest = dp;
    EFI_HANDLE dev = NULL;
    EFI_GUID fs = SIMPLE_FILE_SYSTEM_PROTOCOL;
    if (!EFI_ERROR(BS->LocateDevicePath(&fs, &rest, &dev)) && IsDevicePathEnd(rest)) {
        *form = "device (default boot file)";
        return FileDevicePath(dev, BOOT_DEFAULT_FILE);
    }
    *form = "full path";
    return DuplicateDevicePath(dp);
}

static void order_text(const uint16_t *order, size_t count, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (size_t i = 0; i < count && n + 6 < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%04X", i ? "," : "", order[i]);
    if (!count)
        snprintf(out, cap, "-");
}

/* The boot option to trace (above): its full device path (a pool
 * allocation) or NULL after a message; its description in desc. */
static EFI_DEVICE_PATH *boot_next_path(char *desc, size_t desc_cap, unsigned *number)
{
    static uint8_t opt[OPTION_BYTES];
    uint16_t order[ORDER_MAX], current = 0xffff, next;
    char order_s[ORDER_MAX * 5 + 8], cur_s[8] = "-";
    UINTN size = sizeof current;
    bool have_current = !read_var("BootCurrent", &current, &size);
    size_t count = 0;
    const char *from = "BootOrder";
    if (have_current)
        snprintf(cur_s, sizeof cur_s, "%04X", current);
    size = sizeof next;
    if (!read_var("BootNext", &next, &size) && size == sizeof next &&
        (!have_current || next != current)) {
        order[0] = next;
        count = 1;
        from = "BootNext";
    } else {
        size = sizeof order;
        if (read_var("BootOrder", order, &size)) {
            efi_con_puts(
                "ptboot: error: trace: --boot-next: no BootNext and no BootOrder variable\n");
            return NULL;
        }
        count = size / sizeof order[0];
    }
    order_text(order, count, order_s, sizeof order_s);
    efi_con_printf("ptboot: trace: --boot-next: %s %s, BootCurrent %s\n", from, order_s, cur_s);
    for (size_t i = 0; i < count; i++) {
        char name[16];
        load_option_name(name, sizeof name, "Boot", order[i]);
        if (have_current && order[i] == current) {
            efi_con_printf(
                "ptboot: trace: --boot-next: %s skipped: BootCurrent (it started ptboot)\n", name);
            continue;
        }
        size = sizeof opt;
        struct load_option lo;
        size_t off;
        int r;
        if (read_var(name, opt, &size)) {
            efi_con_printf("ptboot: trace: --boot-next: %s skipped: no such variable\n", name);
            continue;
        }
        if ((r = load_option_decode(opt, size, &lo, &off))) {
            efi_con_printf("ptboot: trace: --boot-next: %s skipped: %s at byte %llu\n", name,
                           load_option_strerror(r), (unsigned long long)off);
            continue;
        }
        if (!(lo.attributes & PTB_LO_ACTIVE) || (lo.attributes & PTB_LO_HIDDEN)) {
            efi_con_printf("ptboot: trace: --boot-next: %s skipped: %s\n", name,
                           lo.attributes & PTB_LO_ACTIVE ? "hidden" : "not active");
            continue;
        }
        if (ucs2_to_ascii(lo.description, lo.desc_chars * 2, desc, desc_cap) < 0)
            snprintf(desc, desc_cap, "?");
        *number = order[i];
        long dpsize = device_path_size(lo.file_path, lo.file_path_len);
        if (dpsize <= 0) {
            efi_con_printf("ptboot: error: trace: --boot-next: %s: bad device path (%s)\n", name,
                           load_option_strerror((int)dpsize));
            return NULL;
        }
        /* the option is what the firmware would boot: it is the target,
         * and a path that cannot be expanded is an error, not a reason to
         * take the one after it (the firmware would try that, but then
         * the trace would be of something else than asked) */
        EFI_DEVICE_PATH *dp = AllocatePool((UINTN)dpsize);
        if (!dp)
            return NULL;
        memcpy(dp, lo.file_path, (size_t)dpsize);
        const char *form = "";
        char text[DP_TEXT_CHARS], full_text[DP_TEXT_CHARS];
        dp_text(dp, text, sizeof text);
        EFI_DEVICE_PATH *full = boot_full_path(dp, &form);
        FreePool(dp);
        if (!full) {
            efi_con_printf(
                "ptboot: error: trace: --boot-next: %s \"%s\" path %s (%s): no device has it\n",
                name, desc, text, form);
            return NULL;
        }
        dp_text(full, full_text, sizeof full_text);
        efi_con_printf("ptboot: trace: --boot-next: %s \"%s\" path %s (%s) -> %s\n", name, desc,
                       text, form, full_text);
        return full;
    }
    efi_con_printf(
        "ptboot: error: trace: --boot-next: no active, visible boot option in %s %s other than "
        "BootCurrent %s\n",
        from, order_s, cur_s);
    return NULL;
}

/* AddressOfEntryPoint from the loaded image's PE header (PE Format spec:
 * e_lfanew at 0x3c; the optional header follows the 4-byte signature and
 * the 20-byte COFF header; AddressOfEntryPoint is its 16th byte). Every
 * offset is checked against the image size. */
static uint64_t entry_point(const uint8_t *base, uint64_t size)
{
    if (size < 0x40 || base[0] != 'M' || base[1] != 'Z')
        return 0;
    uint32_t lfanew;
    memcpy(&lfanew, base + 0x3c, 4);
    if ((uint64_t)lfanew + 0x2c > size || memcmp(base + lfanew, "PE\0\0", 4))
        return 0;
    uint32_t rva;
    memcpy(&rva, base + lfanew + 0x28, 4);
    return rva && rva < size ? (uint64_t)(uintptr_t)base + rva : 0;
}

/* The module name for module+offset: the file name without its extension. */
static void module_name(const char *path, char *out, size_t cap)
{
    const char *b = path;
    for (const char *p = path; *p; p++)
        if (*p == '\\' || *p == '/' || *p == ':')
            b = p + 1;
    size_t n = strcspn(b, ".");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, b, n);
    out[n] = 0;
    if (!n)
        snprintf(out, cap, "target");
}

struct start_arg {
    EFI_HANDLE h;
    UINTN exit_size;
    CHAR16 *exit_data;
};

static EFI_STATUS start_image(void *p)
{
    struct start_arg *a = p;
    return BS->StartImage(a->h, &a->exit_size, &a->exit_data);
}

/* The on-target decode (and summary) of the trace in use. */
static void decode_one(struct efi_capture *c, const struct trace_args *a,
                       struct efi_capture_totals *t)
{
    efi_capture_decode(c, a->last, t);
    if (!a->no_summary) {
        struct efi_capture_totals st;
        if (!efi_capture_summary(c, a->last, &st) &&
            (st.insns != t->insns || st.errors != t->errors))
            efi_con_printf("ptboot: trace: the summary counted insns=%llu errors=%llu\n",
                           (unsigned long long)st.insns, (unsigned long long)st.errors);
    }
}

/* The target as the command names it: what its lines call it (target),
 * its module name for module+offset (name) and its device path, or NULL
 * after saying why. */
struct target {
    char text[PATH_CHARS];
    char name[SIDEBAND_NAME_MAX];
    EFI_DEVICE_PATH *dp;
};

static int find_target(struct efi_app *app, const struct trace_args *a, struct target *t)
{
    if (a->boot_next) {
        unsigned number = 0;
        char desc[96] = "";
        t->dp = boot_next_path(desc, sizeof desc, &number);
        if (!t->dp)
            return -1;
        snprintf(t->text, sizeof t->text, "Boot%04X \"%s\"", number, desc);
        snprintf(t->name, sizeof t->name, "Boot%04X", number);
    } else {
        t->dp = path_device_path(app, a->path);
        if (!t->dp)
            return -1;
        snprintf(t->text, sizeof t->text, "%s", a->path);
        module_name(a->path, t->name, sizeof t->name);
    }
    return 0;
}

/* Stage 1: the capture set up as the options say. */
static int setup(struct efi_capture *cap, const struct trace_args *a, const struct efi_app *app)
{
    if (efi_capture_init(cap, a->unit, app->msr_state))
        return -1;
    efi_con_printf("ptboot: trace: unit=%s (%s)\n", capture_unit_name(cap->unit), cap->why);
    cap->db_release = resident_release_db;
    cap->step_all = a->step_all;
    cap->max_steps = a->max_steps;
    cap->cpus_req = a->cpus;
    /* At ExitBootServices (an OS loader) the flow unless --no-decode, and
     * the files that could not be written any more (or were asked for on
     * serial) go over COM1: docs/trace.md "Tracing an OS loader". */
    cap->ebs_decode = !a->no_decode;
    cap->ebs_files = a->serial_dump || !a->no_files;
    cap->ebs_no_summary = a->no_summary;
    cap->ebs_last = a->last;
    cap->hang_timeout_s = a->hang_timeout_s;
    cap->hang_repeat = a->hang_repeat;
    cap->serial_line_bytes = a->line_bytes;
    return 0;
}

/* Stage 2: the target loaded (not started) with the images watched from
 * before its load, so it is the first one recorded; *h, *li its handle
 * and loaded image, *self the app's. Frees t->dp. On failure the capture
 * is freed. */
static int load_target(struct efi_app *app, struct efi_capture *cap, const struct trace_args *a,
                       struct target *t, EFI_HANDLE *h, EFI_LOADED_IMAGE **li,
                       EFI_LOADED_IMAGE **self)
{
    if (efi_capture_watch(cap, (size_t)a->snapshot)) {
        FreePool(t->dp);
        return -1;
    }
    EFI_STATUS s = BS->LoadImage(FALSE, app->image, t->dp, NULL, 0, h);
    FreePool(t->dp);
    t->dp = NULL;
    if (EFI_ERROR(s)) {
        char sn[32];
        const char *hint = efi_load_image_hint(s);
        efi_con_printf("ptboot: error: trace: LoadImage %s: %s%s%s%s\n", t->text,
                       efi_status_name(s, sn, sizeof sn), hint[0] ? " (" : "", hint,
                       hint[0] ? ")" : "");
        efi_capture_free(cap);
        return -1;
    }
    *li = NULL;
    *self = NULL;
    BS->HandleProtocol(*h, &LoadedImageProtocol, (void **)li);
    BS->HandleProtocol(app->image, &LoadedImageProtocol, (void **)self);
    if (!*li || !*self) {
        efi_con_puts("ptboot: error: trace: no EFI_LOADED_IMAGE_PROTOCOL on the images\n");
        BS->UnloadImage(*h);
        efi_capture_free(cap);
        return -1;
    }
    return 0;
}

/* Stage 3: the loaded target as the capture's target (filters, snapshot)
 * and the plan for it, --stop-at's TraceStop word added, the buffer fitted
 * to the volume. */
static int plan_target(struct efi_app *app, struct efi_capture *cap, struct trace_args *a,
                       const struct target *t, uint64_t base, uint64_t size, uint64_t entry)
{
    if (efi_capture_add_target(cap, base, size) < 0)
        return -1;
    const struct sideband_image *row = efi_capture_module(cap, base);
    efi_con_printf("ptboot: trace: target %s loaded at 0x%llx size 0x%llx entry 0x%llx as %s\n",
                   t->text, (unsigned long long)base, (unsigned long long)size,
                   (unsigned long long)entry, row ? row->name : t->name);
    if (a->have_stop_at) {
        static char stop_word[64];
        if (a->stop_at >= size || a->nwords == TRACE_MAX_WORDS) {
            efi_con_printf(
                "ptboot: error: trace: --stop-at 0x%llx is outside the target (size 0x%llx)\n",
                (unsigned long long)a->stop_at, (unsigned long long)size);
            return -1;
        }
        snprintf(stop_word, sizeof stop_word, "trace-stop=1:0x%llx:0x%llx",
                 (unsigned long long)(base + a->stop_at), (unsigned long long)(base + a->stop_at));
        a->words[a->nwords++] = stop_word;
    }
    /* Stage 3a: the files must fit the volume (efi/capture/fit_volume.h) */
    if (!a->no_files &&
        efi_capture_fit_volume(app->image, cap, a->words, &a->nwords, TRACE_MAX_WORDS))
        return -1;
    if (efi_capture_plan(cap, a->words, a->nwords))
        return -1;
    efi_con_printf("ptboot: trace: buffer=%llu mode=%s filter=%s\n",
                   (unsigned long long)cap->buffer_bytes,
                   cap->plan.cfg.when_full == RTIT_FULL_STOP ? "stop" : "ring",
                   cap->plan.filtered ? "image" : "words/off");
    efi_con_flush();
    return 0;
}

/* Stage 5: the on-target decode of every CPU's trace: the APs' first
 * (--cpus), each between its own decode lines, the BSP's last, as
 * without --cpus; t: the BSP's totals. */
static void decode_all(struct efi_capture *cap, const struct trace_args *a,
                       struct efi_capture_totals *t)
{
    if (efi_capture_code(cap))
        efi_con_puts("ptboot: trace: no memory for the code table; decoding without code\n");
    for (unsigned i = 1; i < cap->ncpus; i++) {
        if (efi_capture_use_cpu(cap, i))
            continue;
        efi_con_printf("ptboot: trace: cpu %u:\n", cap->cpu[i].n);
        decode_one(cap, a, t);
        cap->cpu[i].insns = t->insns;
        cap->cpu[i].errors = t->errors;
    }
    efi_capture_use_cpu(cap, 0);
    if (cap->ncpus > 1)
        efi_con_printf("ptboot: trace: cpu %u (BSP):\n", cap->cpu[0].n);
    decode_one(cap, a, t);
}

int efi_cmd_trace(struct efi_app *app, int argc, char **argv)
{
    static struct trace_args a;
    static struct efi_capture cap;
    struct target t;
    int status = parse(&a, argc, argv);
    if (status != PTB_APP_OK)
        return status;
    if (setup(&cap, &a, app) || find_target(app, &a, &t))
        return PTB_APP_FAILED;
    EFI_HANDLE h = NULL;
    EFI_LOADED_IMAGE *li, *self;
    if (load_target(app, &cap, &a, &t, &h, &li, &self))
        return PTB_APP_FAILED;
    uint64_t base = (uint64_t)(UINTN)li->ImageBase, size = li->ImageSize;
    uint64_t entry = entry_point(li->ImageBase, size);
    status = PTB_APP_FAILED;
    if (plan_target(app, &cap, &a, &t, base, size, entry)) {
        BS->UnloadImage(h);
        goto out;
    }

    /* Stage 4: the target runs, traced. */
    struct start_arg sa = { h, 0, NULL };
    EFI_STATUS target_status = EFI_SUCCESS;
    uint64_t self_lo = (uint64_t)(UINTN)self->ImageBase;
    if (efi_capture_run(&cap, start_image, &sa, &target_status, self_lo, self_lo + self->ImageSize,
                        cap.unit == CAPTURE_UNIT_SOFT ? entry : 0)) {
        BS->UnloadImage(h);
        goto out;
    }
    if (cap.ebs_reported)
        /* the target exited boot services and came back anyway: the
         * report went out from the notify; no console, no memory
         * services now */
        return PTB_APP_OK;
    if (sa.exit_data)
        FreePool(sa.exit_data);
    efi_con_printf("ptboot: trace: target returned status 0x%llx\n",
                   (unsigned long long)target_status);

    /* Stages 5 and 6: decode, then files, serial dump, the CPUs' lines. */
    struct efi_capture_totals tot = { 0 };
    if (!a.no_decode)
        decode_all(&cap, &a, &tot);
    /* a capture not fully written (or sent) is a failure: the status
     * says so, after every line the capture has */
    status = PTB_APP_OK;
    if (!a.no_files && efi_capture_write_files(&cap, app->image))
        status = PTB_APP_FAILED;
    if (a.serial_dump && efi_capture_serial_dump(&cap))
        status = PTB_APP_FAILED;
    efi_capture_cpu_lines(&cap, tot.insns, tot.errors);
out:
    efi_capture_free(&cap);
    return status;
}
