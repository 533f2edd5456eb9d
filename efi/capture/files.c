/* A capture as files on the boot volume: see files.h. */
#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "decoder/ptd_frame.h"
#include "efi/capture/files.h"
#include "efi/platform/console.h"
#include "format/code_image.h"
#include "format/manifest.h"

#define PAGE      4096
#define FILES_MAX (4 + MANIFEST_MAX_FILES)

/* Finds the first unused \ptboot\capNNN and creates it. */
static enum efi_volume_result new_dir(EFI_HANDLE image, char dir[CAPTURE_FILES_DIR_MAX])
{
    enum efi_volume_result r = efi_volume_mkdir(image, CAPTURE_FILES_ROOT);
    if (r != PTB_VOLUME_OK)
        return r;
    for (unsigned n = 1; n <= CAPTURE_FILES_MAX; n++) {
        snprintf(dir, CAPTURE_FILES_DIR_MAX, "%s\\cap%03u", CAPTURE_FILES_ROOT, n);
        int e = efi_volume_exists(image, dir);
        if (e < 0)
            return PTB_VOLUME_IO;
        if (e == 0)
            return efi_volume_mkdir(image, dir);
    }
    return PTB_VOLUME_IO; /* 999 captures on the stick: make room */
}

const char *efi_capture_size_text(unsigned long long bytes, bool up, char *buf, size_t cap)
{
    static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
    if (bytes < 1024) {
        snprintf(buf, cap, "%llu bytes", bytes);
        return buf;
    }
    unsigned u = 0;
    unsigned long long scale = 1024;
    while (u + 1 < sizeof unit / sizeof unit[0] && bytes / scale >= 1024)
        scale *= 1024, u++;
    if (u == 0) {
        snprintf(buf, cap, "%llu KiB", up ? (bytes + 1023) / 1024 : bytes / 1024);
        return buf;
    }
    /* one decimal: tenths of the unit, rounded the asked way */
    unsigned long long tenths = up ? (bytes * 10 + scale - 1) / scale : bytes * 10 / scale;
    snprintf(buf, cap, "%llu.%llu %s", tenths / 10, tenths % 10, unit[u]);
    return buf;
}

unsigned long long efi_capture_files_overhead(const struct efi_volume_space *sp)
{
    /* the directory's own cluster, manifest.txt, last.txt */
    return 3 * efi_volume_file_cost(sp, 1);
}

/* One file (or two that belong together) to write, in order. */
struct job {
    const char *name;
    const void *data;
    size_t len;
    int group;     /* jobs of one group are written or left out together */
    bool done;     /* written and read back */
    bool left_out; /* missing (why said) */
};

static void crc_chunk(void *ctx, const void *data, size_t len)
{
    uint32_t *crc = ctx;
    *crc = ptd_crc32(*crc, data, len);
}

/* Writes one file and reads it back; "" or why it failed into why. */
static enum efi_volume_result put_checked(EFI_HANDLE image, const char *path, const void *data,
                                          size_t len, char *why, size_t why_cap)
{
    why[0] = '\0';
    enum efi_volume_result r = efi_volume_write(image, path, data, len);
    if (r == PTB_VOLUME_FULL) {
        struct efi_volume_space sp;
        char f[24], n[24];
        efi_volume_delete(image, path); /* a cut file must not look whole */
        if (efi_volume_space(image, &sp) == PTB_VOLUME_OK)
            snprintf(why, why_cap, "volume full: %s free, %s needed",
                     efi_capture_size_text(sp.free_bytes, false, f, sizeof f),
                     efi_capture_size_text(efi_volume_file_cost(&sp, len), true, n, sizeof n));
        else
            snprintf(why, why_cap, "volume full");
        return r;
    }
    if (r != PTB_VOLUME_OK) {
        efi_volume_delete(image, path);
        snprintf(why, why_cap, "write: %s", efi_volume_result_name(r));
        return r;
    }
    uint32_t want = ptd_crc32(0, data, len), got = 0;
    unsigned long long size = 0;
    r = efi_volume_read_each(image, path, crc_chunk, &got, &size);
    if (r != PTB_VOLUME_OK)
        snprintf(why, why_cap, "read back: %s", efi_volume_result_name(r));
    else if (size != len)
        snprintf(why, why_cap, "read back: %llu of %llu bytes", size, (unsigned long long)len);
    else if (got != want)
        snprintf(why, why_cap, "read back: crc32 %08x, written %08x", (unsigned)got,
                 (unsigned)want);
    else
        return PTB_VOLUME_OK;
    efi_volume_delete(image, path);
    return r != PTB_VOLUME_OK ? r : PTB_VOLUME_MISMATCH;
}

/* The jobs in order of importance: the traces, the sideband, the rest
 * (cpus.txt), the code snapshot's two files together. */
static size_t make_jobs(const struct capture_files_in *in, const char *sb_text, size_t sb_len,
                        struct job *jobs)
{
    size_t n = 0;
    int g = 0;
    jobs[n++] = (struct job){ "trace.pt", in->trace, in->trace_len, g++, false, false };
    for (size_t i = 0; i < in->nextra && n + 3 < FILES_MAX; i++)
        if (in->extra[i].is_trace)
            jobs[n++] = (struct job){
                in->extra[i].name, in->extra[i].data, in->extra[i].len, g++, false, false
            };
    jobs[n++] = (struct job){ "sideband.txt", sb_text, sb_len, g++, false, false };
    for (size_t i = 0; i < in->nextra && n + 2 < FILES_MAX; i++)
        if (!in->extra[i].is_trace)
            jobs[n++] = (struct job){
                in->extra[i].name, in->extra[i].data, in->extra[i].len, g++, false, false
            };
    jobs[n++] = (struct job){ "code.dump", in->code_dump, in->code_dump_len, g, false, false };
    jobs[n++] = (struct job){ "code.addr", in->code_addr, in->code_addr_len, g, false, false };
    return n;
}

/* Leaves out every job of group g, each with why. */
static void leave_out(struct job *jobs, size_t n, int g, const char *why, const char *who,
                      const char *dir, struct manifest *m)
{
    char sz[24];
    for (size_t i = 0; i < n; i++) {
        if (jobs[i].group != g || jobs[i].left_out || jobs[i].done)
            continue;
        jobs[i].left_out = true;
        manifest_add_missing(m, jobs[i].name, jobs[i].len, why);
        efi_con_printf("ptboot: error: %s: %s\\%s (%s) not written: %s\n", who, dir, jobs[i].name,
                       efi_capture_size_text(jobs[i].len, true, sz, sizeof sz), why);
    }
}

static unsigned long long group_cost(const struct job *jobs, size_t n, int g,
                                     const struct efi_volume_space *sp)
{
    unsigned long long c = 0;
    for (size_t i = 0; i < n; i++)
        if (jobs[i].group == g)
            c += efi_volume_file_cost(sp, jobs[i].len);
    return c;
}

/* Writes the jobs, the groups that do not fit the free space left out
 * (the caller's space check: sp, have_space). */
static void write_jobs(EFI_HANDLE image, struct job *jobs, size_t n, const char *who,
                       const char *dir, struct manifest *m, const struct efi_volume_space *sp,
                       bool have_space)
{
    char path[CAPTURE_FILES_DIR_MAX + MANIFEST_NAME_MAX + 2], why[MANIFEST_WHY_MAX], f[24],
        need[24];
    unsigned long long left = have_space && sp->free_bytes > efi_capture_files_overhead(sp)
                                  ? sp->free_bytes - efi_capture_files_overhead(sp)
                                  : 0;
    unsigned long long total = 0;
    for (size_t i = 0; i < n; i++)
        total += efi_volume_file_cost(sp, jobs[i].len);
    total += efi_capture_files_overhead(sp);
    if (have_space && total > sp->free_bytes)
        efi_con_printf(
            "ptboot: error: %s: volume full: %s free, %s needed for %s: writing what fits, "
            "the trace first\n",
            who, efi_capture_size_text(sp->free_bytes, false, f, sizeof f),
            efi_capture_size_text(total, true, need, sizeof need), dir);
    for (size_t i = 0; i < n; i++) {
        struct job *j = &jobs[i];
        if (j->left_out || j->done)
            continue;
        if (have_space && i + 1 < n && jobs[i + 1].group == j->group) {
            /* a group (code.dump + code.addr): both fit or neither goes */
            unsigned long long c = group_cost(jobs, n, j->group, sp);
            if (c > left) {
                snprintf(why, sizeof why, "volume full: %s free, %s needed",
                         efi_capture_size_text(sp->free_bytes, false, f, sizeof f),
                         efi_capture_size_text(total, true, need, sizeof need));
                leave_out(jobs, n, j->group, why, who, dir, m);
                continue;
            }
        } else if (have_space && efi_volume_file_cost(sp, j->len) > left) {
            snprintf(why, sizeof why, "volume full: %s free, %s needed",
                     efi_capture_size_text(sp->free_bytes, false, f, sizeof f),
                     efi_capture_size_text(total, true, need, sizeof need));
            leave_out(jobs, n, j->group, why, who, dir, m);
            continue;
        }
        snprintf(path, sizeof path, "%s\\%s", dir, j->name);
        if (put_checked(image, path, j->data, j->len, why, sizeof why) != PTB_VOLUME_OK) {
            /* the other file of its group goes too (deleted if written) */
            for (size_t k = 0; k < n; k++)
                if (jobs[k].group == j->group && jobs[k].done) {
                    snprintf(path, sizeof path, "%s\\%s", dir, jobs[k].name);
                    efi_volume_delete(image, path);
                    jobs[k].done = false;
                    for (uint32_t e = 0; e < m->nfiles; e++)
                        if (!strcmp(m->files[e].name, jobs[k].name))
                            m->files[e] = m->files[--m->nfiles];
                }
            leave_out(jobs, n, j->group, why, who, dir, m);
            continue;
        }
        j->done = true;
        left -= left >= efi_volume_file_cost(sp, j->len) ? efi_volume_file_cost(sp, j->len) : left;
        manifest_add_file(m, j->name, j->len, ptd_crc32(0, j->data, j->len));
    }
}

int efi_capture_files_write(EFI_HANDLE image, const struct capture_files_in *in, const char *who,
                            char dir[CAPTURE_FILES_DIR_MAX])
{
    static struct manifest man;
    static char man_text[MANIFEST_MAX_FILES * (MANIFEST_NAME_MAX + MANIFEST_WHY_MAX + 40) + 64];
    struct efi_volume_space sp;
    char f[24];
    dir[0] = '\0';
    manifest_init(&man);

    /* pages and addresses must pair up, or the host refuses both */
    if (in->code_addr_len % 8 || in->code_dump_len != in->code_addr_len / 8 * CODE_PAGE_BYTES) {
        efi_con_printf("ptboot: error: %s: code.dump and code.addr do not pair up\n", who);
        return -1;
    }
    bool have_space = efi_volume_space(image, &sp) == PTB_VOLUME_OK;
    enum efi_volume_result r = new_dir(image, dir);
    if (r != PTB_VOLUME_OK) {
        efi_con_printf("ptboot: error: %s: no capture directory %s: %s%s%s%s\n", who,
                       dir[0] ? dir : CAPTURE_FILES_ROOT, efi_volume_result_name(r),
                       have_space ? " (" : "",
                       have_space ? efi_capture_size_text(sp.free_bytes, false, f, sizeof f) : "",
                       have_space ? " free)" : "");
        dir[0] = '\0';
        return -1;
    }
    if (have_space)
        efi_volume_space(image, &sp); /* the directory took a block */

    /* The sideband's text: its size first, then pages from the firmware
     * for it (never newlib's heap), freed right after writing. */
    size_t need = sideband_write(in->sb, NULL, 0) + 1;
    UINTN pages = (need + PAGE - 1) / PAGE;
    EFI_PHYSICAL_ADDRESS mem = 0;
    char *text = NULL;
    size_t text_len = 0;
    if (!EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, pages, &mem))) {
        text = (char *)(UINTN)mem;
        text_len = sideband_write(in->sb, text, need);
    }

    static struct job jobs[FILES_MAX];
    size_t n = make_jobs(in, text, text_len, jobs);
    if (!text)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(jobs[i].name, "sideband.txt"))
                leave_out(jobs, n, jobs[i].group, "no memory for its text", who, dir, &man);
    write_jobs(image, jobs, n, who, dir, &man, &sp, have_space);
    if (text)
        BS->FreePages(mem, pages);

    /* last.txt names the newest capture, whole or not (its manifest says) */
    char last[CAPTURE_FILES_DIR_MAX + 1], path[CAPTURE_FILES_DIR_MAX + 16];
    int ln = snprintf(last, sizeof last, "%s\n", dir + sizeof CAPTURE_FILES_ROOT);
    snprintf(path, sizeof path, "%s\\last.txt", CAPTURE_FILES_ROOT);
    r = efi_volume_write(image, path, last, (size_t)ln);
    if (r != PTB_VOLUME_OK)
        efi_con_printf("ptboot: error: %s: %s: %s\n", who, path, efi_volume_result_name(r));

    /* the manifest last: a directory without one was never finished */
    size_t mlen = manifest_write(&man, man_text, sizeof man_text);
    char why[MANIFEST_WHY_MAX];
    snprintf(path, sizeof path, "%s\\%s", dir, MANIFEST_FILE_NAME);
    bool complete = manifest_is_complete(&man);
    if (mlen >= sizeof man_text ||
        put_checked(image, path, man_text, mlen, why, sizeof why) != PTB_VOLUME_OK) {
        efi_con_printf("ptboot: error: %s: %s not written: %s\n", who, path,
                       mlen >= sizeof man_text ? "too long" : why);
        complete = false;
    }
    if (!complete) {
        char list[160];
        size_t k = 0;
        list[0] = '\0';
        for (uint32_t i = 0; i < man.nfiles; i++)
            if (!man.files[i].present && k < sizeof list)
                k += (size_t)snprintf(list + k, sizeof list - k, " %s", man.files[i].name);
        efi_con_printf("ptboot: error: %s: capture %s is incomplete:%s%s\n", who, dir,
                       list[0] ? " missing" : " its manifest.txt was not written", list);
        return -1;
    }
    return 0;
}
