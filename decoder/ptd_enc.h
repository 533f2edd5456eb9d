/* libptd encoder: writes packets byte-exact as a CPU writes them (reserved
 * bits and bytes zero), from the same table of packet kinds the decoder
 * uses (ptd_pkt_kinds[]). Freestanding, no allocation. */
#ifndef PTD_ENC_H
#define PTD_ENC_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_pkt.h"

/* Longest packet: PSB (16 bytes). */
#define PTD_PKT_MAX_SIZE 16

/* Encode one packet into out[0..cap). Returns the number of bytes written,
 * -PTD_ERR_NOSPC if it does not fit, -PTD_ERR_BAD_OPC for an unknown kind,
 * -PTD_ERR_BAD_PACKET if a field does not fit the packet (TNT bit count,
 * reserved IPBytes, payload wider than the packet's field, ...). */
int ptd_enc_packet(uint8_t *out, size_t cap, const struct ptd_pkt *p);

/* Sequential writer over a caller buffer. */
struct ptd_encoder {
    uint8_t *begin;
    uint8_t *end;
    uint8_t *pos;
};

/* buf must not be NULL (size may be 0). */
int ptd_enc_init(struct ptd_encoder *e, uint8_t *buf, size_t size);
/* Append one packet; returns its size or a negative error (nothing written). */
int ptd_enc_next(struct ptd_encoder *e, const struct ptd_pkt *p);
uint64_t ptd_enc_offset(const struct ptd_encoder *e);

/* IP compression as the CPU does it (SDM "IP Compression"): the shortest
 * IPBytes that reconstructs `ip` from the last IP. have_last = 0 (after a
 * PSB or at the start) forces a sign-extended or full IP. Returns the IPBytes
 * value and stores the payload to put into the packet. */
unsigned ptd_enc_ip_compress(uint64_t last_ip, int have_last, uint64_t ip, uint64_t *payload);

/* Helpers that fill a struct ptd_pkt. */
static inline struct ptd_pkt ptd_pkt_make(uint8_t kind, uint64_t payload, uint8_t a, uint32_t aux,
                                          uint8_t flags)
{
    struct ptd_pkt p;
    p.payload = payload;
    p.aux = aux;
    p.kind = kind;
    p.size = 0;
    p.a = a;
    p.flags = flags;
    return p;
}

#endif
