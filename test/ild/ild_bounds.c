/* Bounds test of the ILD under AddressSanitizer/UBSan: random byte
 * sequences (a share of them led by prefixes and escapes) are copied into a
 * heap block of exactly `size` bytes, 0 to 17, and decoded in every mode.
 * ASan stops the run on any read past the block: ptd_ild_decode() must
 * never touch bytes[size] or beyond, whatever the input. Also checked: a
 * success never claims more than `size` or 15 bytes.
 * Usage: ild_bounds [N] [SEED] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_ild.h"
#include "decoder/ptd_ild_fast.h"

static uint64_t state;
static uint64_t rnd(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

int main(int argc, char **argv)
{
    static const uint8_t lead[] = { 0x66, 0x67, 0xF2, 0xF3, 0xF0, 0x2E, 0x48, 0x41,
                                    0x0F, 0x0F, 0xD5, 0xC4, 0xC5, 0x62, 0x8F, 0xD8 };
    long n = argc > 1 ? atol(argv[1]) : 300000;
    state = argc > 2 ? strtoull(argv[2], NULL, 0) : 88172645463325252ull;
    if (state == 0)
        state = 1;
    long decoded = 0;
    for (long i = 0; i < n; i++) {
        uint8_t t[32];
        for (size_t j = 0; j < sizeof t; j++)
            t[j] = (uint8_t)rnd();
        unsigned np = (unsigned)(rnd() % 4);
        for (unsigned j = 0; j < np; j++)
            t[j] = lead[rnd() % sizeof lead];
        size_t size = (size_t)(rnd() % 18);
        uint8_t *b = malloc(size ? size : 1);
        if (!b)
            return 2;
        memcpy(b, t, size);
        for (int m = PTD_EXEC_MODE_16; m <= PTD_EXEC_MODE_64; m++) {
            struct ptd_insn in;
            in.ip = rnd();
            int rc = ptd_ild_decode(&in, b, size, (enum ptd_exec_mode)m);
            struct ptd_ild_step stp;
            unsigned sl = ptd_ild_step(b, size, (unsigned)m, &stp);
            if (sl &&
                (rc != (int)sl || in.iclass != stp.iclass ||
                 !(in.flags & PTD_INSN_REL) != !stp.rel || (stp.rel && in.disp != stp.disp))) {
                printf("ild_bounds: FAILED: ptd_ild_step gives %u, ptd_ild_decode %d\n", sl, rc);
                return 1;
            }
            if (rc > 0) {
                decoded++;
                if ((size_t)rc > size || rc > PTD_ILD_MAX_LEN || in.length != rc) {
                    printf("ild_bounds: FAILED: length %d with %zu bytes given\n", rc, size);
                    return 1;
                }
            }
        }
        free(b);
    }
    printf("ild_bounds: ok (%ld inputs x 3 modes, %ld decoded, no read past the input)\n", n,
           decoded);
    return 0;
}
