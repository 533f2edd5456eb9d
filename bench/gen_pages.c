/* build/bench/gen_pages: a large page dump for `make bench-big` (and its
 * test, test/cli/big_inputs.sh) from a small real one:
 *
 *   gen_pages FROM_PREFIX BYTES OUT_PREFIX [--run PAGES] [--shuffle SEED]
 *
 * OUT_PREFIX.dump/.addr (format/code_image.h) hold FROM's pages at their
 * addresses, then filler pages up to BYTES in all: FROM's bytes over and
 * over, at addresses far above FROM's (from FILLER_BASE), in runs of
 * --run PAGES consecutive pages (default 64: images of 256 KiB) with a
 * one-page hole between runs. --shuffle writes the pages in a random file
 * order (the worst case for a dump's reader: no run follows in the file).
 * A trace of FROM decodes over OUT alike (the filler is never reached). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_num.h"
#include "format/code_image.h"

#define PAGE CODE_PAGE_BYTES
/* far from any code of the real traces (user space below 0x8000_0000_0000) */
#define FILLER_BASE 0x7e0000000000ull

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t *b = NULL;
    long len;
    if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) ||
        !(b = malloc((size_t)len)) || fread(b, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "gen_pages: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    *n = (size_t)len;
    return b;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int main(int argc, char **argv)
{
    uint64_t bytes, run = 64, seed = 0;
    char path[4096];
    if (argc < 4 || !ptd_num_parse(argv[2], PTD_NUM_AUTO, &bytes)) {
        fprintf(stderr,
                "usage: gen_pages FROM_PREFIX BYTES OUT_PREFIX [--run PAGES] [--shuffle SEED]\n");
        return 2;
    }
    for (int i = 4; i + 1 < argc; i += 2) {
        uint64_t *v = !strcmp(argv[i], "--run")       ? &run
                      : !strcmp(argv[i], "--shuffle") ? &seed
                                                      : NULL;
        if (!v || !ptd_num_parse(argv[i + 1], PTD_NUM_AUTO, v) || (v == &run && !run)) {
            fprintf(stderr, "gen_pages: bad option %s\n", argv[i]);
            return 2;
        }
    }
    size_t dn, an;
    snprintf(path, sizeof path, "%s.dump", argv[1]);
    uint8_t *dump = slurp(path, &dn);
    snprintf(path, sizeof path, "%s.addr", argv[1]);
    uint8_t *addr = slurp(path, &an);
    size_t from = an / 8, total = (size_t)(bytes / PAGE);
    if (from == 0 || dn != from * PAGE) {
        fprintf(stderr, "gen_pages: %s is no page dump\n", argv[1]);
        return 1;
    }
    if (total < from)
        total = from;
    /* page k of the output: its address, and which source page fills it */
    uint64_t *a = malloc(total * sizeof *a);
    size_t *order = malloc(total * sizeof *order);
    if (!a || !order)
        return 1;
    for (size_t k = 0; k < total; k++) {
        size_t f = k - from;
        a[k] = k < from ? code_dump_addr(addr, k)
                        : FILLER_BASE + (f / run) * (run + 1) * PAGE + (f % run) * PAGE;
        order[k] = k;
    }
    if (seed) {
        uint64_t s = seed;
        for (size_t k = total; k > 1; k--) {
            size_t j = (size_t)(rnd(&s) % k);
            size_t t = order[k - 1];
            order[k - 1] = order[j];
            order[j] = t;
        }
    }
    snprintf(path, sizeof path, "%s.dump", argv[3]);
    FILE *d = fopen(path, "wb");
    snprintf(path, sizeof path, "%s.addr", argv[3]);
    FILE *ad = fopen(path, "wb");
    if (!d || !ad) {
        fprintf(stderr, "gen_pages: cannot write %s\n", argv[3]);
        return 1;
    }
    for (size_t i = 0; i < total; i++) {
        size_t k = order[i];
        uint8_t le[8];
        code_dump_set_addr(le, 0, a[k]);
        if (fwrite(dump + (k % from) * PAGE, 1, PAGE, d) != PAGE || fwrite(le, 1, 8, ad) != 8) {
            fprintf(stderr, "gen_pages: write error (disk full?)\n");
            return 1;
        }
    }
    if (fclose(d) || fclose(ad)) {
        fprintf(stderr, "gen_pages: write error (disk full?)\n");
        return 1;
    }
    printf("gen_pages: %zu pages (%zu from %s), runs of %llu, %s\n", total, from, argv[1],
           (unsigned long long)run, seed ? "shuffled" : "in address order");
    return 0;
}
