/* mkcapture: writes a capture directory as the UEFI app does
 * (docs/capture-files.md), from a trace and raw code files made on the
 * host (test/flow/flowgen's --write): trace.pt copied, code.dump/code.addr
 * in 4 KiB pages (addresses through format/code_image.h's writer), sideband.txt through the app's own writer
 * (format/sideband.c). For test/capture/capture_dir.sh.
 *
 *   mkcapture DIR --pt FILE [--raw FILE:BASE]... [--filter LO-HI]...
 *             [--stop LO-HI] [--unit hw|soft] [--cpu F/M] [--mtc-freq N]
 *             [--nom-freq N] [--cpuid-0x15 EAX/EBX]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decoder/ptd_frame.h"
#include "format/code_image.h"
#include "format/manifest.h"
#include "format/pe_info.h"
#include "format/sideband.h"

static struct sideband sb;

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + CODE_PAGE_BYTES);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "mkcapture: %s: read failed\n", path);
        exit(1);
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static FILE *create(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f) {
        perror(p);
        exit(1);
    }
    return f;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: mkcapture DIR --pt FILE [--raw FILE:BASE]... [options]\n");
        return 2;
    }
    const char *dir = argv[1];
    mkdir(dir, 0755);
    FILE *dump = create(dir, "code.dump"), *addr = create(dir, "code.addr");
    sideband_init(&sb);
    sb.unit = SIDEBAND_UNIT_SOFT;
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        unsigned long long x, y;
        if (!strcmp(a, "--pt")) {
            size_t n;
            unsigned char *t = slurp(v, &n);
            FILE *f = create(dir, "trace.pt");
            fwrite(t, 1, n, f);
            fclose(f);
            free(t);
            sb.trace.bytes = n;
        } else if (!strcmp(a, "--raw")) {
            char file[4096], *colon;
            snprintf(file, sizeof file, "%s", v);
            colon = strrchr(file, ':');
            if (!colon || sscanf(colon + 1, "%llx", &x) != 1 || x % CODE_PAGE_BYTES) {
                fprintf(stderr, "mkcapture: --raw %s: want FILE:BASE (page aligned)\n", v);
                return 2;
            }
            *colon = '\0';
            size_t n;
            unsigned char *b = slurp(file, &n);
            size_t pages = (n + CODE_PAGE_BYTES - 1) / CODE_PAGE_BYTES;
            memset(b + n, 0, pages * CODE_PAGE_BYTES - n);
            fwrite(b, 1, pages * CODE_PAGE_BYTES, dump);
            for (size_t p = 0; p < pages; p++) {
                uint8_t le[8];
                code_dump_set_addr(le, 0, x + p * CODE_PAGE_BYTES);
                fwrite(le, 1, sizeof le, addr);
            }
            char name[PE_INFO_NAME_MAX];
            sideband_add_image(&sb, x, n, 0, pe_info_basename(file, name, sizeof name),
                               SIDEBAND_IMG_BEFORE | SIDEBAND_IMG_SNAPSHOT);
            free(b);
        } else if (!strcmp(a, "--filter") || !strcmp(a, "--stop")) {
            if (sscanf(v, "%llx-%llx", &x, &y) != 2 || sb.config.nfilter >= SIDEBAND_MAX_FILTERS) {
                fprintf(stderr, "mkcapture: %s %s: want LO-HI (hex)\n", a, v);
                return 2;
            }
            struct sideband_filter *f = &sb.config.filter[sb.config.nfilter++];
            f->kind = !strcmp(a, "--filter") ? SIDEBAND_FILTER_EN : SIDEBAND_FILTER_STOP;
            f->a = x;
            f->b = y;
        } else if (!strcmp(a, "--unit")) {
            sb.unit = !strcmp(v, "hw") ? SIDEBAND_UNIT_HW : SIDEBAND_UNIT_SOFT;
        } else if (!strcmp(a, "--cpu")) {
            unsigned f, m;
            if (sscanf(v, "%u/%u", &f, &m) != 2)
                return 2;
            strcpy(sb.cpu.vendor, "GenuineIntel");
            sb.cpu.family = f;
            sb.cpu.model = m;
        } else if (!strcmp(a, "--mtc-freq")) {
            sb.config.mtc = true;
            sb.config.mtc_freq = (uint32_t)strtoul(v, NULL, 0);
        } else if (!strcmp(a, "--nom-freq")) {
            sb.cpu.nom_freq_valid = true;
            sb.cpu.nom_freq = (uint32_t)strtoul(v, NULL, 0);
        } else if (!strcmp(a, "--cpuid-0x15")) {
            unsigned e, b;
            if (sscanf(v, "%u/%u", &e, &b) != 2)
                return 2;
            sb.cpu.cpuid15_eax = e;
            sb.cpu.cpuid15_ebx = b;
        } else {
            fprintf(stderr, "mkcapture: unknown option %s\n", a);
            return 2;
        }
    }
    fclose(dump);
    fclose(addr);
    static char text[1 << 16];
    size_t n = sideband_write(&sb, text, sizeof text);
    if (n >= sizeof text)
        return 1;
    FILE *f = create(dir, "sideband.txt");
    fwrite(text, 1, n, f);
    fclose(f);
    /* manifest.txt last, as the app writes it (format/manifest.h) */
    static struct manifest man;
    static const char *const files[] = { "trace.pt", "sideband.txt", "code.dump", "code.addr" };
    manifest_init(&man);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[4096];
        size_t len;
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unsigned char *b = slurp(p, &len);
        manifest_add_file(&man, files[i], len, ptd_crc32(0, b, len));
        free(b);
    }
    n = manifest_write(&man, text, sizeof text);
    f = create(dir, MANIFEST_FILE_NAME);
    fwrite(text, 1, n, f);
    fclose(f);
    return 0;
}
