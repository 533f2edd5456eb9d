/* The code half of the flow fuzzers' input (test/fuzz/fuzz_flow.c,
 * fuzz_sum.c): up to FUZZ_CODE_MAX bytes of the input are the code, mapped
 * at 0x1000 and again at 0x400000 (where generated traces point), read
 * through fuzz_code_read (decoder/'s read callback shape). */
#ifndef PTBOOT_TEST_FUZZ_CODE_H
#define PTBOOT_TEST_FUZZ_CODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FUZZ_CODE_MAX 1024

struct fuzz_code {
    const uint8_t *bytes;
    size_t size;
};

static inline int fuzz_code_read(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    const struct fuzz_code *c = ctx;
    static const uint64_t bases[] = {0x1000, 0x400000};
    for (unsigned i = 0; i < 2; i++) {
        if (ip >= bases[i] && ip - bases[i] < c->size) {
            size_t off = (size_t)(ip - bases[i]), n = c->size - off;
            if (n > size)
                n = size;
            memcpy(buf, c->bytes + off, n);
            return (int)n;
        }
    }
    return 0;
}

#endif
