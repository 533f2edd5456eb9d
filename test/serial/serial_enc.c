/* build/test/serial_enc: the target's serial-dump encoder (decoder/
 * ptd_frame.c, the code efi/capture/serial_dump.c runs) on the host, for the tests
 * and the benchmark.
 *
 *   serial_enc [--line-bytes N] FILE...   the dump's frame lines on stdout,
 *                                         one file after the other, ids 1..n
 *                                         ("*.pt" files cut at PSBs)
 *   serial_enc --bench [--line-bytes N] [--baud B] FILE
 *                                         encoder throughput and the dump's
 *                                         fraction of the serial line rate */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decoder/ptd_frame.h"

static int load(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    long n;
    if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
        fprintf(stderr, "serial_enc: cannot read %s\n", path);
        return -1;
    }
    *data = malloc((size_t)n + 1);
    if (!*data || fread(*data, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "serial_enc: cannot read %s\n", path);
        return -1;
    }
    fclose(f);
    *size = (size_t)n;
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static enum ptd_frame_kind kind_of(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && !strcmp(name + n - 3, ".pt") ? PTD_FRAME_KIND_PT : PTD_FRAME_KIND_RAW;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One encoding of data into a 16 KiB buffer (as efi/capture/serial_dump.c does);
 * returns the wire bytes: the text plus the CR the console adds per line. */
static unsigned long long encode(const char *name, const uint8_t *data, size_t size,
                                 uint32_t payload, FILE *out, unsigned long long *lines)
{
    static char buf[16 << 10];
    struct ptd_frame_enc e;
    size_t n;
    unsigned long long wire = 0;
    if (ptd_frame_enc_init(&e, 1, name, data, size, kind_of(name), payload) < 0) {
        fprintf(stderr, "serial_enc: %s: bad name or line size\n", name);
        exit(2);
    }
    while ((n = ptd_frame_enc_lines(&e, buf, sizeof buf)) > 0) {
        if (out)
            fwrite(buf, 1, n, out);
        wire += n;
    }
    *lines = e.seq + 2ull;
    return wire + *lines;
}

int main(int argc, char **argv)
{
    uint64_t payload = 0, baud = 115200;
    int bench = 0, first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--bench"))
            bench = 1;
        else if (!strcmp(argv[first], "--line-bytes") && first + 1 < argc)
            payload = strtoull(argv[++first], NULL, 0);
        else if (!strcmp(argv[first], "--baud") && first + 1 < argc)
            baud = strtoull(argv[++first], NULL, 0);
        else {
            fprintf(stderr, "usage: serial_enc [--bench] [--line-bytes N] [--baud B] FILE...\n");
            return 2;
        }
    }
    if (first == argc) {
        fprintf(stderr, "serial_enc: no file\n");
        return 2;
    }
    for (int i = first; i < argc; i++) {
        uint8_t *data;
        size_t size;
        unsigned long long lines;
        if (load(argv[i], &data, &size) < 0)
            return 1;
        if (!bench) {
            static char buf[16 << 10];
            struct ptd_frame_enc e;
            size_t n;
            if (ptd_frame_enc_init(&e, (uint32_t)(i - first + 1), base_name(argv[i]), data, size,
                                   kind_of(argv[i]), (uint32_t)payload) < 0) {
                fprintf(stderr, "serial_enc: %s: bad name or line size\n", argv[i]);
                return 2;
            }
            while ((n = ptd_frame_enc_lines(&e, buf, sizeof buf)) > 0)
                fwrite(buf, 1, n, stdout);
            free(data);
            continue;
        }
        /* the benchmark: encode repeatedly for at least 0.5 s (CRC pass included) */
        unsigned long long wire = 0, rounds = 0;
        double t0 = now(), t;
        do {
            wire = encode(base_name(argv[i]), data, size, (uint32_t)payload, NULL, &lines);
            rounds++;
            t = now() - t0;
        } while (t < 0.5);
        double enc_s = t / (double)rounds;
        /* 8N1: 10 bit times per byte on the wire */
        double wire_s = (double)wire * 10.0 / (double)baud;
        printf("bench: serial %s: %zu bytes -> %llu wire bytes in %llu lines, payload/wire %.3f; "
               "encoder %.1f MB/s of payload (host build, CRC pass included); at %llu baud 8N1 the "
               "wire "
               "takes %.2f s, encoding %.4f s: dump at %.2f%% of the line rate (goal >= 95%%)\n",
               base_name(argv[i]), size, wire, lines, (double)size / (double)wire,
               (double)size / enc_s / 1e6, (unsigned long long)baud, wire_s, enc_s,
               100.0 * wire_s / (wire_s + enc_s));
        free(data);
    }
    return 0;
}
