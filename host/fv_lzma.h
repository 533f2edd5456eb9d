/* The LZMA encoding of EDK2's GUID-defined sections (PI_GUID_LZMA,
 * format/pi_guid.h), through Debian's liblzma: 5 bytes of LZMA
 * properties (lc/lp/pb in one byte, the dictionary size), the
 * uncompressed size as a little-endian u64, then the raw LZMA stream.
 * EDK2's decoder (LzmaCustomDecompressLib) decodes in one call into an
 * output buffer of that size, so the stream is written without an end
 * marker; either is accepted when reading.
 *
 * Host only (the target never packs firmware). */
#ifndef PTBOOT_HOST_FV_LZMA_H
#define PTBOOT_HOST_FV_LZMA_H

#include <stddef.h>
#include <stdint.h>

#define FV_LZMA_PROPS_BYTES  5
#define FV_LZMA_HEADER_BYTES 13

/* Decodes a section's data; *out (malloc'd, the caller frees) gets the
 * uncompressed bytes. max_out bounds what a section may claim to unpack
 * to. 0 or -1 with a reason in err. */
int fv_lzma_decode(const uint8_t *in, size_t len, size_t max_out, uint8_t **out, size_t *out_len,
                   char *err, size_t err_len);
/* Encodes in with the properties of props (the 5 bytes of the section
 * being replaced, so the firmware's decoder sees what it saw before; NULL:
 * EDK2's defaults, lc=3 lp=0 pb=2 and a 16 MiB dictionary). */
int fv_lzma_encode(const uint8_t *props, const uint8_t *in, size_t len, uint8_t **out,
                   size_t *out_len, char *err, size_t err_len);

#endif
