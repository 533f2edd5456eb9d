/* The code half of the flow fuzzers' input (test/fuzz/fuzz_flow.c,
 * fuzz_sum.c): up to FUZZ_CODE_MAX bytes of the input are the code, mapped
 * at 0x1000 and again at 0x400000 (where generated traces point), read
 * through fuzz_code_read (decoder/'s read callback shape); the rest is the
 * trace. Selector bits 0-1 give the mode before MODE.Exec. */
#ifndef PTBOOT_TEST_FUZZ_CODE_H
#define PTBOOT_TEST_FUZZ_CODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "decoder/ptd_flow.h"

#define FUZZ_CODE_MAX 1024

struct fuzz_code {
    const uint8_t *bytes;
    size_t size;
};

static inline int fuzz_code_read(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    const struct fuzz_code *c = ctx;
    static const uint64_t bases[] = { 0x1000, 0x400000 };
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

/* Splits data[0..size) into code (half of it, at most FUZZ_CODE_MAX bytes)
 * and trace, and sets up a flow over them in *cfg. */
static inline void fuzz_code_flow_config(struct ptd_flow_config *cfg, struct fuzz_code *code,
                                         const uint8_t *data, size_t size, unsigned sel)
{
    size_t csize = size < FUZZ_CODE_MAX ? size / 2 : FUZZ_CODE_MAX;
    code->bytes = data;
    code->size = csize;
    memset(cfg, 0, sizeof(*cfg));
    cfg->trace = data + csize;
    cfg->size = size - csize;
    cfg->read = fuzz_code_read;
    cfg->ctx = code;
    cfg->mode = (uint8_t)((sel & 3) == 1 ? 16 : (sel & 3) == 2 ? 32 : (sel & 3) == 3 ? 64 : 0);
}

#endif
