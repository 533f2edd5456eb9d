/* Benchmark: libptd's ILD against Zydis (minimal decoder mode, no operands)
 * on the real code pages of ../shared/traces/real: each decoder sweeps every
 * page linearly (decode, step by the length, step by one byte on an error),
 * best of several rounds, one core.
 *
 * Prints: bench: ild ptboot_minsn_s=<x> zydis_minsn_s=<y> ratio=<x/y>
 * Usage: ild_bench [DIR] [--rounds N]  (DIR defaults to ../shared/traces/real;
 * without the pages it measures a synthetic buffer of common instructions). */
#include <Zydis/Zydis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decoder/ptd_ild.h"

#define PAGE 4096

struct image {
    uint8_t *code;
    size_t size;
    enum ptd_exec_mode mode;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t sweep_ptd(const struct image *im, unsigned long *ninsn)
{
    struct ptd_insn in;
    size_t branches = 0;
    unsigned long n = 0;
    for (size_t pg = 0; pg < im->size; pg += PAGE) {
        const uint8_t *p = im->code + pg, *end = p + PAGE;
        uint64_t ip = pg;
        while (p < end) {
            in.ip = ip;
            int len = ptd_ild_decode(&in, p, (size_t)(end - p), im->mode);
            if (len <= 0)
                len = 1;
            else {
                n++;
                branches += in.iclass != PTD_ICLASS_OTHER;
            }
            p += len;
            ip += (unsigned)len;
        }
    }
    *ninsn = n;
    return branches;
}

static ZydisDecoder zd[3];

static size_t sweep_zydis(const struct image *im, unsigned long *ninsn)
{
    ZydisDecodedInstruction z;
    size_t branches = 0;
    unsigned long n = 0;
    for (size_t pg = 0; pg < im->size; pg += PAGE) {
        const uint8_t *p = im->code + pg, *end = p + PAGE;
        while (p < end) {
            size_t len = 1;
            if (ZYAN_SUCCESS(
                    ZydisDecoderDecodeInstruction(&zd[im->mode], NULL, p, (size_t)(end - p), &z))) {
                len = z.length;
                n++;
                branches += z.meta.branch_type != ZYDIS_BRANCH_TYPE_NONE;
            }
            p += len;
        }
    }
    *ninsn = n;
    return branches;
}

static int load(const char *path, enum ptd_exec_mode mode, struct image *im)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    sz -= sz % PAGE;
    im->code = malloc((size_t)sz);
    if (!im->code || fread(im->code, 1, (size_t)sz, f) != (size_t)sz) {
        fclose(f);
        return 0;
    }
    fclose(f);
    im->size = (size_t)sz;
    im->mode = mode;
    return 1;
}

int main(int argc, char **argv)
{
    const char *dir = "../shared/traces/real";
    int rounds = 7;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else
            dir = argv[i];
    }
    ZydisDecoderInit(&zd[PTD_EXEC_MODE_16], ZYDIS_MACHINE_MODE_LEGACY_16, ZYDIS_STACK_WIDTH_16);
    ZydisDecoderInit(&zd[PTD_EXEC_MODE_32], ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32);
    ZydisDecoderInit(&zd[PTD_EXEC_MODE_64], ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
    for (int m = 0; m < 3; m++)
        ZydisDecoderEnableMode(&zd[m], ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);

    static const char *const names[] = { "Unzip", "foo", "mruby", "avscript_32" };
    struct image ims[4];
    size_t nim = 0;
    for (size_t t = 0; t < 4; t++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s/pages.dump", dir, names[t]);
        if (load(path, strstr(names[t], "_32") ? PTD_EXEC_MODE_32 : PTD_EXEC_MODE_64, &ims[nim]))
            nim++;
    }
    const char *input = "real-pages";
    if (nim == 0) {
        /* Synthetic: common 64-bit instructions repeated (mov, lea, add,
         * cmp/jcc, call, ret, push/pop), 1 MiB. */
        static const uint8_t pat[] = {
            0x48, 0x89, 0xE5, 0x48, 0x8B, 0x45, 0xF8, 0x48, 0x8D, 0x04, 0x24, 0x83, 0xC0,
            0x01, 0x39, 0xC8, 0x74, 0x05, 0xE8, 0x00, 0x00, 0x00, 0x00, 0x55, 0x5D, 0xC3,
        };
        input = "synthetic";
        ims[0].size = 1u << 20;
        ims[0].code = malloc(ims[0].size);
        for (size_t i = 0; i < ims[0].size; i++)
            ims[0].code[i] = pat[i % sizeof pat];
        ims[0].mode = PTD_EXEC_MODE_64;
        nim = 1;
        printf("ild_bench: no pages.dump under %s: synthetic code instead\n", dir);
    }

    double best_p = 1e30, best_z = 1e30;
    unsigned long np = 0, nz = 0;
    volatile size_t sink = 0;
    for (int r = 0; r < rounds; r++) {
        double t0 = now();
        unsigned long n = 0, k;
        for (size_t i = 0; i < nim; i++) {
            sink += sweep_ptd(&ims[i], &k);
            n += k;
        }
        double t1 = now();
        if (t1 - t0 < best_p)
            best_p = t1 - t0;
        np = n;
        n = 0;
        t0 = now();
        for (size_t i = 0; i < nim; i++) {
            sink += sweep_zydis(&ims[i], &k);
            n += k;
        }
        t1 = now();
        if (t1 - t0 < best_z)
            best_z = t1 - t0;
        nz = n;
    }
    double xp = np / best_p / 1e6, xz = nz / best_z / 1e6;
    printf("ild_bench: input=%s ptboot_insns=%lu zydis_insns=%lu rounds=%d\n", input, np, nz,
           rounds);
    printf("bench: ild ptboot_minsn_s=%.1f zydis_minsn_s=%.1f ratio=%.2f\n", xp, xz, xp / xz);
    (void)sink;
    return 0;
}
