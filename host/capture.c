/* A capture directory into the decoder's inputs: see capture.h and
 * docs/capture-files.md. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/code_image.h"
#include "host/capture.h"

static int failf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int failf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int path_in(char *out, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(out, cap, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void host_capture_free(struct host_capture *cap)
{
    free(cap->sb);
    free(cap->modules);
    cap->sb = NULL;
    cap->modules = NULL;
    cap->nmodules = 0;
}

const struct host_capture_module *host_capture_module_at(const struct host_capture *cap,
                                                         uint64_t addr)
{
    for (size_t i = 0; i < cap->nmodules; i++)
        if (addr >= cap->modules[i].base && addr - cap->modules[i].base < cap->modules[i].size)
            return &cap->modules[i];
    return NULL;
}

/* DIR/manifest.txt into cap->man, when there. */
static void load_manifest(const char *dir, struct host_capture *cap)
{
    char path[4096];
    uint8_t *text = NULL;
    size_t len = 0;
    char why[512];
    unsigned line;
    const char *msg;
    if (path_in(path, sizeof path, dir, MANIFEST_FILE_NAME) < 0 || !exists(path))
        return;
    if (flow_read_file(path, &text, &len, why, sizeof why) < 0) {
        snprintf(cap->manifest_error, sizeof cap->manifest_error, "%.150s", why);
        return;
    }
    if (manifest_parse(&cap->man, (const char *)text, len, &line, &msg) == MANIFEST_OK)
        cap->have_manifest = 1;
    else
        snprintf(cap->manifest_error, sizeof cap->manifest_error, "%s:%u: %s", MANIFEST_FILE_NAME,
                 line, msg);
    free(text);
}

/* The manifest's reason when it lists name as missing: " (missing: WHY)". */
static const char *missing_why(const struct host_capture *cap, const char *name, char *buf,
                               size_t cap_len)
{
    const struct manifest_file *f = cap->have_manifest ? manifest_find(&cap->man, name) : NULL;
    buf[0] = '\0';
    if (f && !f->present)
        snprintf(buf, cap_len, " (the capture is incomplete: %s missing: %s)", name, f->why);
    return buf;
}

int host_capture_warn(const char *dir, struct host_capture *cap, const char *prog, FILE *to)
{
    int n = 0;
    char path[4096];
    if (cap->manifest_error[0]) {
        fprintf(to, "%s: warning: %s/%s\n", prog, dir, cap->manifest_error);
        n++;
    } else if (!cap->have_manifest) {
        fprintf(to,
                "%s: warning: %s has no %s: the capture may be incomplete (the app writes it last) "
                "or come from an older ptboot\n",
                prog, dir, MANIFEST_FILE_NAME);
        n++;
    } else {
        for (uint32_t i = 0; i < cap->man.nfiles; i++) {
            const struct manifest_file *f = &cap->man.files[i];
            struct stat st;
            if (!f->present) {
                fprintf(to, "%s: warning: capture %s is incomplete: %s (%llu bytes) missing: %s\n",
                        prog, dir, f->name, (unsigned long long)f->bytes, f->why);
                cap->incomplete = 1;
                n++;
            } else if (path_in(path, sizeof path, dir, f->name) == 0 && stat(path, &st) != 0) {
                fprintf(to, "%s: warning: %s: missing, though %s lists it (%llu bytes)\n", prog,
                        path, MANIFEST_FILE_NAME, (unsigned long long)f->bytes);
                cap->incomplete = 1;
                n++;
            } else if ((uint64_t)st.st_size != f->bytes) {
                fprintf(to,
                        "%s: warning: %s: %llu bytes, %s says %llu: the file is not the one the "
                        "app wrote "
                        "(cut when copied?)\n",
                        prog, path, (unsigned long long)st.st_size, MANIFEST_FILE_NAME,
                        (unsigned long long)f->bytes);
                cap->incomplete = 1;
                n++;
            }
        }
    }
    if (!cap->have_code) {
        fprintf(
            to,
            "%s: warning: %s has no code snapshot (code.dump, code.addr): instructions cannot be "
            "decoded%s\n",
            prog, dir,
            cap->have_manifest && manifest_find(&cap->man, "code.dump") &&
                    !manifest_find(&cap->man, "code.dump")->present
                ? " (the app could not write it)"
                : "");
        n++;
    }
    return n;
}

/* Reads and parses DIR/sideband.txt into cap->sb. */
static int load_sideband(const char *dir, struct host_capture *cap, char *err, size_t errlen)
{
    char path[4096];
    uint8_t *text = NULL;
    size_t len = 0;
    char why[512];
    struct sideband_error se;

    if (path_in(path, sizeof path, dir, HOST_CAPTURE_SIDEBAND) < 0)
        return failf(err, errlen, "%s: path too long", dir);
    if (flow_read_file(path, &text, &len, why, sizeof why) < 0) {
        char m[MANIFEST_WHY_MAX + 80];
        return failf(err, errlen, "%s%s", why,
                     missing_why(cap, HOST_CAPTURE_SIDEBAND, m, sizeof m));
    }
    cap->sb = malloc(sizeof *cap->sb);
    if (!cap->sb) {
        free(text);
        return failf(err, errlen, "out of memory");
    }
    int r = sideband_parse(cap->sb, (const char *)text, len, &se);
    free(text);
    if (r < 0) {
        if (se.line)
            return failf(err, errlen, "%s:%u: %s", path, se.line, se.msg);
        return failf(err, errlen, "%s: %s", path, se.msg);
    }
    return 0;
}

int host_capture_load(const char *dir, struct host_capture *cap, struct flow_opts *fo,
                      struct ptd_time_config *tcfg, char *err, size_t errlen)
{
    char dump[sizeof cap->code_prefix + 8];
    memset(cap, 0, sizeof *cap);
    load_manifest(dir, cap);
    if (load_sideband(dir, cap, err, errlen) < 0) {
        host_capture_free(cap);
        return -1;
    }
    const struct sideband *sb = cap->sb;

    if (path_in(cap->trace_path, sizeof cap->trace_path, dir, HOST_CAPTURE_TRACE) < 0 ||
        path_in(cap->code_prefix, sizeof cap->code_prefix, dir, HOST_CAPTURE_CODE) < 0) {
        host_capture_free(cap);
        return failf(err, errlen, "%s: path too long", dir);
    }
    if (!exists(cap->trace_path)) {
        int e = errno;
        char m[MANIFEST_WHY_MAX + 80];
        missing_why(cap, HOST_CAPTURE_TRACE, m, sizeof m);
        host_capture_free(cap);
        return failf(err, errlen, "%s: %s%s", cap->trace_path, strerror(e), m);
    }
    fo->pt = cap->trace_path;

    /* The code snapshot is optional (a capture of code that stays in
     * memory may have none); when there, it must load. */
    snprintf(dump, sizeof dump, "%s.dump", cap->code_prefix);
    if (exists(dump)) {
        if (flow_image_add_pages(&fo->img, cap->code_prefix) < 0) {
            /* flow_image's messages name the file already */
            if (!strncmp(fo->img.err, cap->code_prefix, strlen(cap->code_prefix)))
                failf(err, errlen, "%s", fo->img.err);
            else
                failf(err, errlen, "%s: %s", cap->code_prefix, fo->img.err);
            host_capture_free(cap);
            return -1;
        }
        cap->have_code = 1;
    }

    /* Errata belong to the CPU that wrote the packets: the hardware's. The
     * software trace unit writes them with libptd's encoder, which has
     * none, so its captures decode with no CPU. */
    if (sb->unit == SIDEBAND_UNIT_HW && sb->cpu.family) {
        fo->have_cpu = 1;
        fo->family = sb->cpu.family;
        fo->model = sb->cpu.model;
    } else {
        fo->have_cpu = 0;
    }
    /* Filters as IA32_RTIT_CTL.ADDRn_CFG / ADDRn_A / ADDRn_B (the flow
     * layer uses the FilterEn ones; TraceStop only ends the trace). */
    for (uint32_t i = 0; i < sb->config.nfilter && i < 4; i++) {
        fo->have_addr[i] = 1;
        fo->addr_cfg[i] = sb->config.filter[i].kind;
        fo->addr_a[i] = sb->config.filter[i].a;
        fo->addr_b[i] = sb->config.filter[i].b;
    }
    if (tcfg)
        sideband_time_config(sb, tcfg);

    cap->modules = calloc(sb->nimages ? sb->nimages : 1, sizeof *cap->modules);
    if (!cap->modules) {
        host_capture_free(cap);
        return failf(err, errlen, "out of memory");
    }
    for (uint32_t i = 0; i < sb->nimages; i++) {
        cap->modules[i].base = sb->images[i].base;
        cap->modules[i].size = sb->images[i].size;
        cap->modules[i].name = sb->images[i].name;
    }
    cap->nmodules = sb->nimages;
    return 0;
}

/* code.addr as little-endian u64s; runs of adjacent pages become one
 * --raw each (ptxed: FILE:FROM-TO:BASE, TO exclusive). */
static int print_raw_args(const struct host_capture *cap, FILE *to, char *err, size_t errlen)
{
    char path[sizeof cap->code_prefix + 8], dump[sizeof cap->code_prefix + 8];
    uint8_t *addr = NULL;
    size_t len = 0;
    char why[512];
    snprintf(path, sizeof path, "%s.addr", cap->code_prefix);
    snprintf(dump, sizeof dump, "%s.dump", cap->code_prefix);
    if (flow_read_file(path, &addr, &len, why, sizeof why) < 0)
        return failf(err, errlen, "%s", why);
    if (len % 8) {
        free(addr);
        return failf(err, errlen, "%s: not a whole number of u64 addresses", path);
    }
    size_t n = len / 8, i = 0;
    while (i < n) {
        uint64_t base = code_dump_addr(addr, i);
        size_t j = i + 1;
        while (j < n && code_dump_addr(addr, j) == base + (uint64_t)(j - i) * CODE_PAGE_BYTES)
            j++;
        fprintf(to, " --raw %s:0x%zx-0x%zx:0x%llx", dump, i * CODE_PAGE_BYTES, j * CODE_PAGE_BYTES,
                (unsigned long long)base);
        i = j;
    }
    free(addr);
    return 0;
}

int host_capture_print_libipt_args(const char *dir, const struct host_capture *cap, FILE *to,
                                   char *err, size_t errlen)
{
    const struct sideband *sb = cap->sb;
    (void)dir;
    /* ptxed takes the configuration before --pt */
    const char *sep = "";
    if (sb->unit == SIDEBAND_UNIT_HW && sb->cpu.family) {
        fprintf(to, "--cpu %u/%u", (unsigned)sb->cpu.family, (unsigned)sb->cpu.model);
        sep = " ";
    }
    if (sb->config.mtc) {
        fprintf(to, "%s--mtc-freq %u", sep, (unsigned)sb->config.mtc_freq);
        sep = " ";
    }
    if (sb->cpu.nom_freq_valid) {
        fprintf(to, "%s--nom-freq %u", sep, (unsigned)sb->cpu.nom_freq);
        sep = " ";
    }
    if (sb->cpu.cpuid15_eax && sb->cpu.cpuid15_ebx) {
        fprintf(to, "%s--cpuid-0x15.eax %u --cpuid-0x15.ebx %u", sep, (unsigned)sb->cpu.cpuid15_eax,
                (unsigned)sb->cpu.cpuid15_ebx);
        sep = " ";
    }
    for (uint32_t i = 0; i < sb->config.nfilter && i < 4; i++) {
        fprintf(to, "%s--filter:addr%u_cfg %u --filter:addr%u_a 0x%llx --filter:addr%u_b 0x%llx",
                sep, (unsigned)i, (unsigned)sb->config.filter[i].kind, (unsigned)i,
                (unsigned long long)sb->config.filter[i].a, (unsigned)i,
                (unsigned long long)sb->config.filter[i].b);
        sep = " ";
    }
    fprintf(to, "%s--pt %s", sep, cap->trace_path);
    if (cap->have_code && print_raw_args(cap, to, err, errlen) < 0)
        return -1;
    fputc('\n', to);
    return 0;
}
