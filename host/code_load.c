/* --elf and --pe for the host decoders: see code_load.h. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoder/ptd_num.h"
#include "format/elf_info.h"
#include "format/pe_info.h"
#include "host/code_load.h"
#include "host/input_file.h"

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

void code_modules_free(struct code_modules *m)
{
    free(m->v);
    memset(m, 0, sizeof *m);
}

/* FILE[:BASE] into path and base (has_base 0 when none was given). */
static int split_spec(const char *spec, char *path, size_t cap, uint64_t *base, int *has_base)
{
    const char *colon = strrchr(spec, ':');
    *has_base = 0;
    *base = 0;
    if (colon && colon[1]) {
        uint64_t v;
        if (ptd_num_parse(colon + 1, PTD_NUM_AUTO, &v)) {
            *base = v;
            *has_base = 1;
        } else {
            colon = NULL; /* part of the file name */
        }
    } else if (colon) {
        return -1; /* "FILE:" */
    }
    size_t n = *has_base ? (size_t)(colon - spec) : strlen(spec);
    if (n == 0 || n >= cap)
        return -1;
    memcpy(path, spec, n);
    path[n] = '\0';
    return 0;
}

static struct code_module *add(struct code_modules *m)
{
    if (m->n == m->cap) {
        size_t nc = m->cap ? 2 * m->cap : 8;
        struct code_module *v = realloc(m->v, nc * sizeof *v);
        if (!v)
            return NULL;
        m->v = v;
        m->cap = nc;
    }
    memset(&m->v[m->n], 0, sizeof m->v[m->n]);
    return &m->v[m->n++];
}

static void set_name(struct code_module *cm, const char *path)
{
    snprintf(cm->path, sizeof cm->path, "%s", path);
    pe_info_basename(path, cm->name, sizeof cm->name);
}

int code_load_elf(struct flow_image *img, struct code_modules *m, const char *spec, char *err,
                  size_t errlen)
{
    char path[4096];
    uint64_t base;
    int has_base;
    if (split_spec(spec, path, sizeof path, &base, &has_base) < 0)
        return failf(err, errlen, "--elf %s: want FILE[:BASE]", spec);
    /* The file kept by the image, mapped: the segments are taken from it
     * in place, and only the pages the decode touches are read (a kernel
     * with its debug sections costs no more than its code). */
    const struct input_file *in = flow_image_keep_file(img, path);
    if (!in)
        return failf(err, errlen, "%s", img->err);
    const uint8_t *buf = in->data;
    size_t len = in->size;
    struct elf_info ei;
    int r = elf_info_parse(buf, len, &ei);
    if (r != ELF_INFO_OK)
        return failf(err, errlen, "--elf %s: %s", path, elf_info_strerror(r));
    /* the lowest and highest loadable address, for BASE and the module */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t i = 0; i < ei.phnum; i++) {
        struct elf_segment ph;
        elf_info_segment(&ei, buf, i, &ph);
        if (ph.type == ELF_PT_LOAD && ph.memsz) {
            if (ph.vaddr < lo)
                lo = ph.vaddr;
            if (ph.vaddr + ph.memsz > hi)
                hi = ph.vaddr + ph.memsz;
        }
    }
    if (lo == UINT64_MAX)
        return failf(err, errlen, "--elf %s: no loadable segment", path);
    uint64_t shift = has_base ? base - lo : 0;
    for (uint32_t i = 0; i < ei.phnum; i++) {
        struct elf_segment ph;
        elf_info_segment(&ei, buf, i, &ph);
        if (ph.type != ELF_PT_LOAD || !ph.filesz)
            continue;
        if (ph.offset > len || ph.filesz > len - ph.offset)
            return failf(err, errlen, "--elf %s: segment %" PRIu32 " beyond the end of the file",
                         path, i);
        /* the file's bytes, as ptxed loads them (p_filesz; the rest of
         * p_memsz is bss, never code) */
        if (flow_image_add_kept(img, ph.vaddr + shift, buf + ph.offset, (size_t)ph.filesz) < 0)
            return failf(err, errlen, "--elf %s: %s", path, img->err);
    }
    struct code_module *cm = add(m);
    if (!cm)
        return failf(err, errlen, "out of memory");
    cm->kind = CODE_ELF;
    set_name(cm, path);
    cm->base = lo + shift;
    cm->size = hi - lo;
    cm->bias = shift;
    return 0;
}

static uint32_t rd32(const uint8_t *p)
{
    return p[0] | p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int code_load_pe(struct flow_image *img, struct code_modules *m, const char *spec, char *err,
                 size_t errlen)
{
    char path[4096];
    uint64_t base;
    int has_base;
    struct input_file in;
    struct pe_info pi;
    if (split_spec(spec, path, sizeof path, &base, &has_base) < 0)
        return failf(err, errlen, "--pe %s: want FILE[:BASE]", spec);
    /* mapped while the image is laid out from it (the layout is a copy) */
    if (input_file_open(&in, path, input_file_how(), err, errlen) < 0)
        return -1;
    const uint8_t *buf = in.data;
    size_t len = in.size;
    int r = pe_info_parse(buf, len, PE_LAYOUT_FILE, &pi);
    if (r != PE_INFO_OK) {
        input_file_close(&in);
        return failf(err, errlen, "--pe %s: %s", path, pe_info_strerror(r));
    }
    if (!has_base)
        base = pi.image_base;
    /* The image as a UEFI loader lays it out (UEFI 2.10 2.1.1; PE Format,
     * "Section Table"): headers at the base, each section's raw data at
     * base + VirtualAddress, zero up to VirtualSize. pe_info checked that
     * the section table is inside the file. */
    uint8_t *mem = calloc(1, pi.size_of_image ? pi.size_of_image : 1);
    int rc = 0;
    if (!mem) {
        input_file_close(&in);
        return failf(err, errlen, "out of memory");
    }
    size_t hdrs = pi.size_of_headers < len ? pi.size_of_headers : len;
    if (hdrs > pi.size_of_image)
        hdrs = pi.size_of_image;
    memcpy(mem, buf, hdrs);
    uint32_t pe = rd32(buf + 0x3c);
    unsigned nsec = buf[pe + 6] | buf[pe + 7] << 8;
    unsigned optsize = buf[pe + 20] | buf[pe + 21] << 8;
    const uint8_t *sec = buf + pe + 24 + optsize;
    for (unsigned i = 0; i < nsec; i++, sec += 40) {
        uint32_t vsize = rd32(sec + 8), va = rd32(sec + 12), raw = rd32(sec + 16),
                 ptr = rd32(sec + 20);
        uint32_t n = raw < vsize || !vsize ? raw : vsize;
        if ((uint64_t)va + n > pi.size_of_image || (uint64_t)ptr + n > len) {
            rc = failf(err, errlen, "--pe %s: section %u outside the image or the file", path, i);
            break;
        }
        memcpy(mem + va, buf + ptr, n);
    }
    if (rc == 0 && flow_image_add_buf(img, base, mem, pi.size_of_image) < 0)
        rc = failf(err, errlen, "--pe %s: %s", path, img->err);
    if (rc == 0) {
        struct code_module *cm = add(m);
        if (!cm) {
            rc = failf(err, errlen, "out of memory");
        } else {
            cm->kind = CODE_PE;
            set_name(cm, path);
            cm->base = base;
            cm->size = pi.size_of_image;
            cm->bias = base;
        }
    }
    free(mem);
    input_file_close(&in);
    return rc;
}
