/* A flow's code for the unit tests of the flow layer: 64 bytes at BASE,
 * handed out by a read callback (copied) and a map callback (in place, the
 * first `mapped` bytes; 0: not mapped), each counting its calls. */
#ifndef TEST_UNIT_CODE_IMAGE_CB_H
#define TEST_UNIT_CODE_IMAGE_CB_H

#include <stdint.h>
#include <string.h>

#define BASE 0x401000u

struct image {
    uint8_t bytes[64];
    size_t mapped; /* bytes the map callback hands out (0: no map) */
    int reads, maps;
};

static int read_cb(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    struct image *im = ctx;
    im->reads++;
    if (ip < BASE || ip - BASE >= sizeof im->bytes)
        return 0;
    size_t n = sizeof im->bytes - (size_t)(ip - BASE);
    if (n > size)
        n = size;
    memcpy(buf, im->bytes + (ip - BASE), n);
    return (int)n;
}

static const uint8_t *map_cb(void *ctx, uint64_t ip, uint64_t *base, size_t *size)
{
    struct image *im = ctx;
    im->maps++;
    if (!im->mapped || ip < BASE || ip - BASE >= im->mapped)
        return NULL;
    *base = BASE;
    *size = im->mapped;
    return im->bytes;
}

#endif
