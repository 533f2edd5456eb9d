/* `decode [--last N] [--no-summary] [--tail] [--resident | DIR]`: the decode
 * summaries `trace` prints on the target (efi/capture/decode.h: call
 * targets with counts, the last N branches, then decoder/ptd_sum.h's
 * summaries), for a capture made earlier:
 *   --resident  the resident tracer's capture of this boot (its trace,
 *               sideband and code snapshot, efi/resident/capture.h;
 *               tracing stopped first, as `resident` does)
 *   DIR         a capture directory on the boot volume, e.g.
 *               \ptboot\cap001: trace.pt, sideband.txt, code.dump,
 *               code.addr (docs/capture-files.md)
 *   neither     the resident capture if this boot has one, else the
 *               newest capture named in \ptboot\last.txt
 *   --tail      the summary's last transitions go on past the trace's end
 *               along the static path (decoder/ptd_tail.h, PTD_SUM_F_TAIL)
 * Lines:
 *   ptboot: decode source=<resident|DIR> bytes=<n> pages=<n> images=<n>
 *   ptboot: trace decode begin ... end      (as `trace`)
 *   ptboot: trace summary begin ... end     (unless --no-summary)
 *   ptboot: decode end insns=<n> errors=<n> */
#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "decoder/ptd_opts.h"
#include "decoder/ptd_sum.h"
#include "efi/app.h"
#include "efi/capture/decode.h"
#include "efi/capture/files.h"
#include "efi/platform/console.h"
#include "efi/resident/capture.h"
#include "efi/platform/volume.h"
#include "format/manifest.h"

#define DECODE_MAX_TRACE_BYTES (512ull << 20)
#define DECODE_MAX_DUMP_BYTES  (1ull << 30)
#define DECODE_MAX_TEXT_BYTES  (1ull << 20)
#define DECODE_PATH_MAX        96

/* The capture's parts: files loaded from DIR, or the resident tracer's
 * (its trace and sideband stay where the driver left them; rc holds a copy
 * of the code). code/addr point at one or the other. */
struct decode_src {
    struct resident_capture rc;
    void *trace, *sideband, *dump, *addr;
    size_t trace_len, sideband_len, dump_len, addr_len;
    const uint8_t *code, *code_addr;
    size_t code_len, code_addr_len;
};

static void src_free(struct decode_src *s)
{
    resident_capture_close(&s->rc);
    efi_volume_free(s->trace, s->trace_len);
    efi_volume_free(s->sideband, s->sideband_len);
    efi_volume_free(s->dump, s->dump_len);
    efi_volume_free(s->addr, s->addr_len);
    memset(s, 0, sizeof *s);
}

/* The capture's manifest.txt (format/manifest.h), when it has one. */
static struct manifest man;
static bool have_man;

/* " (not written: WHY)" when the manifest lists name as missing. */
static const char *missing_why(const char *name, char *buf, size_t cap)
{
    const struct manifest_file *f = have_man ? manifest_find(&man, name) : NULL;
    buf[0] = 0;
    if (f && !f->present)
        snprintf(buf, cap, " (the capture is incomplete: missing: %s)", f->why);
    return buf;
}

static int load(struct efi_app *app, const char *dir, const char *name, uint64_t max, void **data,
                size_t *len)
{
    char path[DECODE_PATH_MAX + 16], why[MANIFEST_WHY_MAX + 48];
    snprintf(path, sizeof path, "%s\\%s", dir, name);
    enum efi_volume_result r = efi_volume_load(app->image, path, max, data, len);
    if (r != PTB_VOLUME_OK) {
        efi_con_printf("ptboot: error: decode: %s: %s%s\n", path, efi_volume_result_name(r),
                       missing_why(name, why, sizeof why));
        return -1;
    }
    return 0;
}

/* Reads DIR's manifest and says what it tells of the capture: a capture
 * without one was never finished (or is older than manifests), one with
 * `missing` lines is incomplete. Returns true when code.dump is missing by
 * the manifest (decoded without code then). */
static bool check_manifest(struct efi_app *app, const char *dir)
{
    void *text = NULL;
    size_t len = 0;
    char path[DECODE_PATH_MAX + 16];
    unsigned line;
    const char *msg;
    have_man = false;
    snprintf(path, sizeof path, "%s\\%s", dir, MANIFEST_FILE_NAME);
    enum efi_volume_result r =
        efi_volume_load(app->image, path, DECODE_MAX_TEXT_BYTES, &text, &len);
    if (r == PTB_VOLUME_NOT_FOUND) {
        efi_con_printf(
            "ptboot: decode: warning: %s has no %s: the capture may be incomplete (written "
            "last) or come from an older ptboot\n",
            dir, MANIFEST_FILE_NAME);
        return false;
    }
    if (r != PTB_VOLUME_OK) {
        efi_con_printf("ptboot: decode: warning: %s: %s\n", path, efi_volume_result_name(r));
        return false;
    }
    if (manifest_parse(&man, text, len, &line, &msg)) {
        efi_con_printf("ptboot: decode: warning: %s:%u: %s\n", path, line, msg);
        efi_volume_free(text, len);
        return false;
    }
    efi_volume_free(text, len);
    have_man = true;
    for (uint32_t i = 0; i < man.nfiles; i++)
        if (!man.files[i].present)
            efi_con_printf(
                "ptboot: decode: warning: capture %s is incomplete: %s (%llu bytes) missing: "
                "%s\n",
                dir, man.files[i].name, (unsigned long long)man.files[i].bytes, man.files[i].why);
    const struct manifest_file *code = manifest_find(&man, "code.dump");
    return code && !code->present;
}

/* DIR's four files into c (trace, sideband, code). */
static int from_dir(struct efi_app *app, const char *dir, struct decode_src *s,
                    struct efi_capture *c)
{
    struct sideband_error serr;
    bool no_code = check_manifest(app, dir);
    if (load(app, dir, "trace.pt", DECODE_MAX_TRACE_BYTES, &s->trace, &s->trace_len) ||
        load(app, dir, "sideband.txt", DECODE_MAX_TEXT_BYTES, &s->sideband, &s->sideband_len))
        return -1;
    if (no_code)
        efi_con_printf(
            "ptboot: decode: warning: %s: no code snapshot: decoded without code (only what "
            "needs none)\n",
            dir);
    else if (load(app, dir, "code.dump", DECODE_MAX_DUMP_BYTES, &s->dump, &s->dump_len) ||
             load(app, dir, "code.addr", DECODE_MAX_DUMP_BYTES / CODE_PAGE_BYTES * 8, &s->addr,
                  &s->addr_len))
        return -1;
    if (sideband_parse(&c->sb, s->sideband, s->sideband_len, &serr)) {
        efi_con_printf("ptboot: error: decode: %s\\sideband.txt line %u: %s\n", dir, serr.line,
                       serr.msg);
        return -1;
    }
    c->trace = s->trace;
    c->trace_bytes = s->trace_len;
    s->code = s->dump;
    s->code_len = s->dump_len;
    s->code_addr = s->addr;
    s->code_addr_len = s->addr_len;
    return 0;
}

static int from_resident(struct resident_header *h, struct decode_src *s, struct efi_capture *c)
{
    resident_stop_if_tracing(h);
    if (resident_capture_sideband(h, &c->sb, "decode") ||
        resident_capture_open(&s->rc, h, "decode"))
        return -1;
    c->trace = s->rc.trace;
    c->trace_bytes = s->rc.trace_len;
    s->code = s->rc.code_dump;
    s->code_len = s->rc.pages * CODE_PAGE_BYTES;
    s->code_addr = (const uint8_t *)s->rc.code_addr;
    s->code_addr_len = s->rc.pages * sizeof *s->rc.code_addr;
    return 0;
}

/* \ptboot\last.txt's capNNN as a directory path. */
static int newest(struct efi_app *app, char *dir, size_t cap)
{
    void *text = NULL;
    size_t len = 0;
    if (load(app, CAPTURE_FILES_ROOT, "last.txt", CAPTURE_FILES_DIR_MAX, &text, &len))
        return -1;
    size_t n = 0;
    const char *t = text;
    while (n < len && t[n] != '\n' && t[n] != '\r')
        n++;
    int w = snprintf(dir, cap, "%s\\%.*s", CAPTURE_FILES_ROOT, (int)n, t);
    efi_volume_free(text, len);
    if (!n || w < 0 || (size_t)w >= cap) {
        efi_con_puts("ptboot: error: decode: \\ptboot\\last.txt names no capture\n");
        return -1;
    }
    return 0;
}

int efi_cmd_decode(struct efi_app *app, int argc, char **argv)
{
    static struct efi_capture c;
    static struct decode_src s;
    static char dir[DECODE_PATH_MAX];
    unsigned last = PTB_CAPTURE_LAST_DEFAULT;
    bool no_summary = false, resident = false;
    unsigned sum_flags = 0;
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        uint64_t n;
        if (!strcmp(argv[i], "--resident")) {
            resident = true;
        } else if (!strcmp(argv[i], "--no-summary")) {
            no_summary = true;
        } else if (!strcmp(argv[i], "--tail")) {
            sum_flags |= PTD_SUM_F_TAIL;
        } else if (!strcmp(argv[i], "--last") && i + 1 < argc) {
            if (!ptd_opts_parse_u64(argv[++i], &n) || n > PTB_CAPTURE_LAST_MAX) {
                efi_con_printf("ptboot: error: decode: --last wants 0..%u, not %s\n",
                               PTB_CAPTURE_LAST_MAX, argv[i]);
                return PTB_APP_USAGE;
            }
            last = (unsigned)n;
        } else if (argv[i][0] != '-' && !path && strlen(argv[i]) < sizeof dir) {
            path = argv[i];
        } else {
            efi_con_printf(
                "ptboot: error: decode: unexpected '%s'\n"
                "usage: ptboot.efi decode [--last N] [--no-summary] [--tail] [--resident | DIR]\n",
                argv[i]);
            return PTB_APP_USAGE;
        }
    }
    if (resident && path) {
        efi_con_puts("ptboot: error: decode: --resident or DIR, not both\n");
        return PTB_APP_USAGE;
    }
    memset(&c, 0, sizeof c);
    memset(&s, 0, sizeof s);
    int status = PTB_APP_FAILED;
    EFI_PHYSICAL_ADDRESS table = 0;
    UINTN table_pages = 0;
    struct resident_header *h = path ? NULL : resident_find(app->st);
    if (h && !h->buffer_bytes && !resident)
        h = NULL; /* a driver that never had a buffer (it failed): no capture */
    const char *source;
    if (resident || h) {
        if (!h) {
            efi_con_puts("ptboot: error: decode: --resident: no resident tracer in this boot\n");
            return PTB_APP_FAILED;
        }
        source = "resident";
        if (from_resident(h, &s, &c))
            goto out;
    } else {
        if (path)
            snprintf(dir, sizeof dir, "%s", path);
        else if (newest(app, dir, sizeof dir))
            goto out;
        source = dir;
        if (from_dir(app, dir, &s, &c))
            goto out;
    }
    /* the code image the decoder reads: the capture's page dump */
    size_t pages = s.code_addr_len / sizeof(uint64_t);
    table_pages = (pages * sizeof(struct code_page) + 4095) / 4096 + 1;
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, table_pages, &table))) {
        efi_con_printf("ptboot: error: decode: no memory for %llu pages\n",
                       (unsigned long long)pages);
        table_pages = 0;
        goto out;
    }
    code_image_init(&c.code, (struct code_page *)(UINTN)table, pages);
    int err =
        pages ? code_image_add_dump(&c.code, s.code, s.code_len, s.code_addr, s.code_addr_len) : 0;
    if (!err)
        err = code_image_finish(&c.code);
    if (err) {
        efi_con_printf("ptboot: error: decode: %s: code: %s\n", source, code_image_strerror(err));
        goto out;
    }
    efi_con_printf("ptboot: decode source=%s bytes=%llu pages=%llu images=%u\n", source,
                   (unsigned long long)c.trace_bytes, (unsigned long long)pages,
                   (unsigned)c.sb.nimages);
    struct efi_capture_totals t;
    efi_capture_decode(&c, last, &t);
    if (!no_summary) {
        struct efi_capture_totals st;
        if (!efi_capture_summary_flags(&c, last, sum_flags, &st) &&
            (st.insns != t.insns || st.errors != t.errors))
            efi_con_printf("ptboot: decode: the summary counted insns=%llu errors=%llu\n",
                           (unsigned long long)st.insns, (unsigned long long)st.errors);
    }
    efi_con_printf("ptboot: decode end insns=%llu errors=%llu\n", (unsigned long long)t.insns,
                   (unsigned long long)t.errors);
    /* decode errors are reported, never fatal (as `trace`) */
    status = PTB_APP_OK;
out:
    if (table_pages)
        BS->FreePages(table, table_pages);
    src_free(&s);
    return status;
}
