/* `recover [--serial-dump] [--no-files] [--keep]`: the hang recorder of
 * the boot before a reset (docs/hang.md). Where it looks, in order:
 *   1. the copy this boot's resident driver kept (the configuration table
 *      under PTBOOT_RECORDER_KEPT_GUID: an installed boot reports the
 *      previous recorder over COM1 at its start and keeps a copy, since its
 *      own recorder takes the place);
 *   2. the region the variable PtbootRecorder names, unless it is this
 *      boot's own live recorder. Free memory there is taken first
 *      (AllocatePages(AllocateAddress)), so nothing overwrites it while it
 *      is read; memory the firmware holds now is read, not written.
 * It checks the region (efi/resident/recover.h: nothing before the checks
 * pass), prints what it found and the decode summaries, writes the capture
 * to \ptboot\capNNN (trace.pt, sideband.txt, code.dump, code.addr and
 * recover.txt with reset=1; docs/capture-files.md), sends the same files
 * over serial with --serial-dump, releases the region (the header's magic
 * cleared, the variable deleted, the memory or the copy freed; --keep
 * leaves all of it) and ends with
 *   ptboot: recover unit=<hw|soft> bytes=<n> insns=<n> errors=<n> reset=1 last=<module>+0x<off>
 * Nothing found: `ptboot: recover none reason=<why>` and status 1.
 *
 * efi_recover_auto runs the same at the start of every ptboot run that
 * finds a recorder (quietly when there is none), unless a command of the
 * run is `recover` itself. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "efi/app.h"
#include "efi/capture/files.h"
#include "efi/capture/serial_dump.h"
#include "efi/cmd/recover.h"
#include "efi/platform/console.h"
#include "efi/platform/nvvar.h"
#include "efi/platform/volume.h"
#include "efi/resident/capture.h"
#include "efi/resident/previous.h"
#include "efi/resident/recover.h"

#define PAGE_BYTES       4096ull
#define RECOVER_TEXT_MAX 1024

struct recover_opts {
    bool serial_dump, no_files, keep, quiet_none;
};

/* Where the recorder is and what may be done with it. */
struct recover_source {
    struct resident_kept *kept; /* 1: the driver's copy */
    struct recorder_var var;    /* 2: the variable's region */
    bool have_var;
    const uint8_t *mem;
    uint64_t phys, bytes;
    EFI_PHYSICAL_ADDRESS taken; /* pages we allocated over it, 0: none */
    bool writable;              /* ours to clear (taken, or outside the map) */
};

static struct sideband sb;

static UINTN pages_of(uint64_t bytes)
{
    return (UINTN)((bytes + PAGE_BYTES - 1) / PAGE_BYTES);
}

static void *alloc(uint64_t bytes)
{
    EFI_PHYSICAL_ADDRESS a;
    if (!bytes ||
        EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, pages_of(bytes), &a)))
        return NULL;
    return (void *)(UINTN)a;
}

static void release(void *p, uint64_t bytes)
{
    if (p)
        BS->FreePages((EFI_PHYSICAL_ADDRESS)(UINTN)p, pages_of(bytes));
}

static void say_none(const struct recover_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say_none(const struct recover_opts *o, const char *fmt, ...)
{
    if (o->quiet_none)
        return;
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    efi_con_printf("ptboot: recover none reason=%s\n", text);
}

/* Finds the recorder. Returns 0, or -1 after saying why (unless quiet). */
static int find_source(struct efi_app *app, const struct recover_opts *o, struct recover_source *s)
{
    memset(s, 0, sizeof *s);
    s->kept = resident_kept_find(app->st);
    if (s->kept) {
        s->mem = (const uint8_t *)(UINTN)s->kept->copy;
        s->phys = s->kept->phys;
        s->bytes = s->kept->bytes;
        return 0;
    }
    uint8_t raw[sizeof s->var];
    size_t len;
    if (EFI_ERROR(efi_nvvar_get(RECORDER_VAR_NAME, raw, sizeof raw, &len))) {
        say_none(o, "no recorder variable (%s): nothing was recorded, or it was recovered already",
                 RECORDER_VAR_NAME);
        return -1;
    }
    if (recorder_var_decode(raw, len, &s->var)) {
        say_none(o, "the variable %s is damaged (magic, version, CRC or alignment)",
                 RECORDER_VAR_NAME);
        return -1;
    }
    s->have_var = true;
    s->phys = s->var.region_phys;
    s->bytes = s->var.region_bytes;
    const struct resident_header *live = resident_find(app->st);
    if (live && live->recorder == s->phys) {
        /* this boot's own recorder, still being written */
        say_none(o, "the recorder at 0x%llx is this boot's own (the resident tracer is using it)",
                 (unsigned long long)s->phys);
        return -1;
    }
    int where = resident_region_readable(s->phys, s->bytes);
    if (where < 0) {
        say_none(o, "the region 0x%llx+0x%llx is not RAM in this boot's memory map",
                 (unsigned long long)s->phys, (unsigned long long)s->bytes);
        return -1;
    }
    s->mem = (const uint8_t *)(UINTN)s->phys;
    if (where == 0) {
        s->writable = true; /* outside the map: nobody else's */
        return 0;
    }
    EFI_PHYSICAL_ADDRESS a = s->phys;
    if (!EFI_ERROR(BS->AllocatePages(AllocateAddress, EfiLoaderData, pages_of(s->bytes), &a))) {
        s->taken = a;
        s->writable = true;
    } else if (!o->quiet_none) {
        efi_con_printf(
            "ptboot: recover warning: the firmware uses part of 0x%llx+0x%llx in this boot: "
            "what it wrote there is not ours (it is read, not written)\n",
            (unsigned long long)s->phys, (unsigned long long)s->bytes);
    }
    return 0;
}

/* Gives the region back: the header's magic cleared (so nothing finds it
 * again), the variable deleted, our pages freed; or the driver's copy. */
static void release_source(struct recover_source *s, bool keep)
{
    if (s->kept) {
        if (!keep)
            resident_kept_release(s->kept);
        return;
    }
    if (!keep) {
        if (s->writable)
            *(volatile uint64_t *)(UINTN)s->phys = 0;
        if (s->have_var)
            efi_nvvar_set(RECORDER_VAR_NAME, NULL, 0);
    }
    if (s->taken)
        BS->FreePages(s->taken, pages_of(s->bytes));
    s->taken = 0;
}

static int write_files(struct efi_app *app, const struct resident_recover *r)
{
    static char text[RECOVER_TEXT_MAX];
    struct capture_files_in in = {
        .sb = r->sb,
        .trace = r->trace,
        .trace_len = r->trace_len,
        .code_dump = r->pages ? r->code_dump : NULL,
        .code_dump_len = r->pages * PAGE_BYTES,
        .code_addr = r->pages ? r->code_addr : NULL,
        .code_addr_len = r->pages * 8,
    };
    char dir[CAPTURE_FILES_DIR_MAX];
    /* the capture's files, each read back; what is missing is said there */
    int incomplete = efi_capture_files_write(app->image, &in, "recover", dir);
    if (incomplete && !dir[0])
        return -1;
    char path[CAPTURE_FILES_DIR_MAX + 16];
    size_t len = resident_recover_text(r, text, sizeof text);
    snprintf(path, sizeof path, "%s\\recover.txt", dir);
    enum efi_volume_result v = efi_volume_write(app->image, path, text, len);
    if (v != PTB_VOLUME_OK) {
        efi_con_printf("ptboot: error: recover: recover.txt: %s\n", efi_volume_result_name(v));
        return -1;
    }
    efi_con_printf("ptboot: recover files dir=%s trace=%llu code-pages=%llu\n", dir,
                   (unsigned long long)r->trace_len, (unsigned long long)r->pages);
    return incomplete ? -1 : 0;
}

static void serial_files(const struct resident_recover *r)
{
    static char text[RECOVER_TEXT_MAX];
    static char sb_text[SIDEBAND_MAX_IMAGES * SIDEBAND_LINE_MAX];
    size_t sb_len = sideband_write(r->sb, sb_text, sizeof sb_text);
    size_t len = resident_recover_text(r, text, sizeof text);
    struct efi_dump_file files[5];
    size_t n = 0;
    files[n++] = (struct efi_dump_file){ "trace.pt", r->trace, r->trace_len, PTD_FRAME_KIND_PT };
    if (r->pages) {
        files[n++] = (struct efi_dump_file){ "code.dump", r->code_dump, r->pages * PAGE_BYTES,
                                             PTD_FRAME_KIND_RAW };
        files[n++] =
            (struct efi_dump_file){ "code.addr", r->code_addr, r->pages * 8, PTD_FRAME_KIND_RAW };
    }
    if (sb_len < sizeof sb_text)
        files[n++] = (struct efi_dump_file){ "sideband.txt", sb_text, sb_len, PTD_FRAME_KIND_RAW };
    files[n++] = (struct efi_dump_file){ "recover.txt", text, len, PTD_FRAME_KIND_RAW };
    efi_serial_dump(files, n, 0, NULL);
}

static int run_recover(struct efi_app *app, const struct recover_opts *o)
{
    struct recover_source src;
    if (find_source(app, o, &src))
        return PTB_APP_FAILED;
    struct resident_recover r;
    memset(&r, 0, sizeof r);
    r.mem = src.mem;
    r.bytes = src.bytes;
    r.phys = src.phys;
    r.msr_pos = -1;
    struct recorder_view pre;
    if (recorder_check(r.mem, r.bytes, r.phys, &pre) == RECORDER_OK)
        /* the driver read the pointers before its own start changed them */
        r.msr_pos = src.kept ? src.kept->msr_pos : resident_recover_msr_pos(&pre.fixed);
    uint64_t cap = pre.fixed.trace_bytes;
    uint8_t *out = alloc(cap), *scratch = alloc(cap);
    void *arena = alloc(EBS_REPORT_SUM_ARENA);
    int status = PTB_APP_OK;
    if (resident_recover_open(&r, out, out ? (size_t)cap : 0, scratch, &sb)) {
        say_none(o, "at 0x%llx: %s", (unsigned long long)src.phys,
                 r.check != RECORDER_OK ? recorder_strerror(r.check) : "no memory for the trace");
        if (!o->keep && r.check != RECORDER_OK && src.have_var) {
            /* nothing to keep: the variable names memory without a recorder */
            efi_nvvar_set(RECORDER_VAR_NAME, NULL, 0);
        }
        if (src.kept && !o->keep)
            resident_kept_release(src.kept);
        else
            release_source(&src, true);
        status = PTB_APP_FAILED;
        goto out;
    }
    uint64_t index_bytes = (r.pages + 1) * sizeof(struct code_page);
    struct code_page *pages = alloc(index_bytes);
    if (!pages)
        r.pages = 0;
    resident_recover_report(&r, efi_con_write, arena, pages);
    release(pages, index_bytes);
    if (!o->no_files && write_files(app, &r))
        status = PTB_APP_FAILED;
    if (o->serial_dump)
        serial_files(&r);
    release_source(&src, o->keep);
    resident_recover_final(&r, efi_con_write);
out:
    release(out, cap);
    release(scratch, cap);
    release(arena, EBS_REPORT_SUM_ARENA);
    return status;
}

int efi_cmd_recover(struct efi_app *app, int argc, char **argv)
{
    struct recover_opts o = { 0 };
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--serial-dump"))
            o.serial_dump = true;
        else if (!strcmp(argv[i], "--no-files"))
            o.no_files = true;
        else if (!strcmp(argv[i], "--keep"))
            o.keep = true;
        else {
            efi_con_printf(
                "ptboot: error: recover: unknown argument '%s' (usage: recover [--serial-dump] "
                "[--no-files] [--keep])\n",
                argv[i]);
            return PTB_APP_USAGE;
        }
    }
    return run_recover(app, &o);
}

void efi_recover_auto(struct efi_app *app)
{
    for (int i = 0; i < app->args.ncommands; i++)
        if (app->args.cmd[i].command && !strcmp(app->args.cmd[i].command, "recover"))
            return;
    if (app->args.ncommands == 0 && app->args.command && !strcmp(app->args.command, "recover"))
        return;
    struct recover_opts quiet = { .quiet_none = true };
    struct recover_source src;
    if (find_source(app, &quiet, &src))
        return;
    /* only a region that holds a recorder header is worth a word */
    struct recorder_view v;
    bool found = recorder_check(src.mem, src.bytes, src.phys, &v) != RECORDER_E_NONE;
    release_source(&src, true);
    if (!found) {
        if (src.have_var && !src.kept) {
            efi_con_printf(
                "ptboot: recover none reason=no recorder header at 0x%llx (a power cycle or the "
                "firmware cleared it); the variable %s is deleted\n",
                (unsigned long long)src.phys, RECORDER_VAR_NAME);
            efi_nvvar_set(RECORDER_VAR_NAME, NULL, 0);
        }
        return;
    }
    efi_con_printf("ptboot: recover auto (a recorder from before a reset was found)\n");
    struct recover_opts o = { 0 };
    run_recover(app, &o);
}
