/* libptd packet layer: decoding, synchronisation, last-IP.
 *
 * The decode loop dispatches on the first byte through a 256-entry const
 * table (and on the second byte of 2-byte opcodes through another), then
 * reads the payload in place. Packet encodings: Intel SDM Vol. 3C,
 * "Intel Processor Trace" > "Trace Packets and Data Types". */
#include "decoder/ptd_pkt.h"

/* ---- the table of packet kinds ------------------------------------------- */

#define PTD_KIND(n, o, om, e, em, e2, h, pl, sz, lay) \
    {                                                 \
        n, o, om, e, em, e2, h, pl, sz, lay           \
    }

const struct ptd_pkt_kind_info ptd_pkt_kinds[PTD_PKT_KIND_COUNT] = {
    /* clang-format off */
    [PTD_PKT_NONE]      = PTD_KIND("<none>", 0, 0, 0, 0, 0, 0, 0, 0, PTD_LAYOUT_NONE),
    [PTD_PKT_PAD]       = PTD_KIND("pad", PTD_OPC_PAD, 0xff, 0, 0, 0, 1, 0, 1, PTD_LAYOUT_NONE),
    [PTD_PKT_PSB]       = PTD_KIND("psb", PTD_OPC_EXT, 0xff, PTD_EXT_PSB, 0xff, 0, 2, 14, 16, PTD_LAYOUT_NONE),
    [PTD_PKT_PSBEND]    = PTD_KIND("psbend", PTD_OPC_EXT, 0xff, PTD_EXT_PSBEND, 0xff, 0, 2, 0, 2, PTD_LAYOUT_NONE),
    [PTD_PKT_TNT8]      = PTD_KIND("tnt.8", 0x00, 0x01, 0, 0, 0, 1, 0, 1, PTD_LAYOUT_TNT8),
    [PTD_PKT_TNT64]     = PTD_KIND("tnt.64", PTD_OPC_EXT, 0xff, PTD_EXT_TNT64, 0xff, 0, 2, 6, 8, PTD_LAYOUT_VALUE),
    [PTD_PKT_TIP]       = PTD_KIND("tip", PTD_OPC_TIP, PTD_OPC_IP_MASK, 0, 0, 0, 1, 0, 0, PTD_LAYOUT_IP),
    [PTD_PKT_TIP_PGE]   = PTD_KIND("tip.pge", PTD_OPC_TIP_PGE, PTD_OPC_IP_MASK, 0, 0, 0, 1, 0, 0, PTD_LAYOUT_IP),
    [PTD_PKT_TIP_PGD]   = PTD_KIND("tip.pgd", PTD_OPC_TIP_PGD, PTD_OPC_IP_MASK, 0, 0, 0, 1, 0, 0, PTD_LAYOUT_IP),
    [PTD_PKT_FUP]       = PTD_KIND("fup", PTD_OPC_FUP, PTD_OPC_IP_MASK, 0, 0, 0, 1, 0, 0, PTD_LAYOUT_IP),
    /* clang-format on */
    [PTD_PKT_MODE_EXEC] =
        PTD_KIND("mode.exec", PTD_OPC_MODE, 0xff, 0x00, 0xe0, 0, 1, 1, 2, PTD_LAYOUT_SPECIAL),
    /* clang-format off */
    [PTD_PKT_MODE_TSX]  = PTD_KIND("mode.tsx", PTD_OPC_MODE, 0xff, 0x20, 0xe0, 0, 1, 1, 2, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_PIP]       = PTD_KIND("pip", PTD_OPC_EXT, 0xff, PTD_EXT_PIP, 0xff, 0, 2, 6, 8, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_TSC]       = PTD_KIND("tsc", PTD_OPC_TSC, 0xff, 0, 0, 0, 1, 7, 8, PTD_LAYOUT_VALUE),
    [PTD_PKT_MTC]       = PTD_KIND("mtc", PTD_OPC_MTC, 0xff, 0, 0, 0, 1, 1, 2, PTD_LAYOUT_VALUE),
    [PTD_PKT_TMA]       = PTD_KIND("tma", PTD_OPC_EXT, 0xff, PTD_EXT_TMA, 0xff, 0, 2, 5, 7, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_CYC]       = PTD_KIND("cyc", PTD_OPC_CYC, PTD_OPC_CYC_MASK, 0, 0, 0, 1, 0, 0, PTD_LAYOUT_CYC),
    [PTD_PKT_VMCS]      = PTD_KIND("vmcs", PTD_OPC_EXT, 0xff, PTD_EXT_VMCS, 0xff, 0, 2, 5, 7, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_OVF]       = PTD_KIND("ovf", PTD_OPC_EXT, 0xff, PTD_EXT_OVF, 0xff, 0, 2, 0, 2, PTD_LAYOUT_NONE),
    [PTD_PKT_CBR]       = PTD_KIND("cbr", PTD_OPC_EXT, 0xff, PTD_EXT_CBR, 0xff, 0, 2, 2, 4, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_STOP]      = PTD_KIND("stop", PTD_OPC_EXT, 0xff, PTD_EXT_STOP, 0xff, 0, 2, 0, 2, PTD_LAYOUT_NONE),
    [PTD_PKT_PTW]       = PTD_KIND("ptw", PTD_OPC_EXT, 0xff, PTD_EXT_PTW, PTD_EXT_PTW_MASK, 0, 2, 0, 0, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_MWAIT]     = PTD_KIND("mwait", PTD_OPC_EXT, 0xff, PTD_EXT_MWAIT, 0xff, 0, 2, 8, 10, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_PWRE]      = PTD_KIND("pwre", PTD_OPC_EXT, 0xff, PTD_EXT_PWRE, 0xff, 0, 2, 2, 4, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_PWRX]      = PTD_KIND("pwrx", PTD_OPC_EXT, 0xff, PTD_EXT_PWRX, 0xff, 0, 2, 5, 7, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_EXSTOP]    = PTD_KIND("exstop", PTD_OPC_EXT, 0xff, PTD_EXT_EXSTOP, 0x7f, 0, 2, 0, 2, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_BBP]       = PTD_KIND("bbp", PTD_OPC_EXT, 0xff, PTD_EXT_BBP, 0xff, 0, 2, 1, 3, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_BIP]       = PTD_KIND("bip", PTD_OPC_BIP, PTD_OPC_BIP_MASK, 0, 0, 0, 1, 0, 0, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_BEP]       = PTD_KIND("bep", PTD_OPC_EXT, 0xff, PTD_EXT_BEP, 0x7f, 0, 2, 0, 2, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_CFE]       = PTD_KIND("cfe", PTD_OPC_EXT, 0xff, PTD_EXT_CFE, 0xff, 0, 2, 2, 4, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_EVD]       = PTD_KIND("evd", PTD_OPC_EXT, 0xff, PTD_EXT_EVD, 0xff, 0, 2, 9, 11, PTD_LAYOUT_SPECIAL),
    [PTD_PKT_MNT]       = PTD_KIND("mnt", PTD_OPC_EXT, 0xff, PTD_EXT_MNT, 0xff, PTD_EXT2_MNT, 3, 8, 11, PTD_LAYOUT_VALUE),
    [PTD_PKT_INVALID]   = PTD_KIND("<invalid>", 0, 0, 0, 0, 0, 0, 0, 0, PTD_LAYOUT_NONE),
    [PTD_PKT_TRIG]      = PTD_KIND("trig", PTD_OPC_TRIG, 0xff, 0, 0, 0, 1, 0, 0, PTD_LAYOUT_SPECIAL),
    /* clang-format on */
};

void ptd_pkt_set_errata(struct ptd_pkt_decoder *d, unsigned errata)
{
    d->errata = (uint16_t)errata;
}

int ptd_ipc_size(unsigned ipc)
{
    switch (ipc) {
    case PTD_IPC_SUPPRESSED: return 0;
    case PTD_IPC_UPDATE_16: return 2;
    case PTD_IPC_UPDATE_32: return 4;
    case PTD_IPC_SEXT_48:
    case PTD_IPC_UPDATE_48: return 6;
    case PTD_IPC_FULL: return 8;
    default: return -1;
    }
}

/* ---- dispatch tables ------------------------------------------------------- */

/* Classes of the first byte. */
enum {
    FB_BAD = 0,
    FB_PAD,
    FB_EXT,
    FB_TNT8,
    FB_CYC,
    FB_TIP,
    FB_PGE,
    FB_PGD,
    FB_FUP,
    FB_TSC,
    FB_MTC,
    FB_MODE,
    FB_TRIG,
};

/* Computed at compile time from the opcode definitions: 0x00 PAD, 0x02 EXT,
 * other even bytes TNT-8 (bit 0 = 0), xxxxxx11 CYC, and the IP family and
 * 1-byte opcodes by their fixed bits. */
#define FB_OF(b)                                          \
    ((b) == PTD_OPC_PAD                         ? FB_PAD  \
     : (b) == PTD_OPC_EXT                       ? FB_EXT  \
     : ((b)&1) == 0                             ? FB_TNT8 \
     : ((b)&PTD_OPC_CYC_MASK) == PTD_OPC_CYC    ? FB_CYC  \
     : ((b)&PTD_OPC_IP_MASK) == PTD_OPC_TIP     ? FB_TIP  \
     : ((b)&PTD_OPC_IP_MASK) == PTD_OPC_TIP_PGE ? FB_PGE  \
     : ((b)&PTD_OPC_IP_MASK) == PTD_OPC_TIP_PGD ? FB_PGD  \
     : ((b)&PTD_OPC_IP_MASK) == PTD_OPC_FUP     ? FB_FUP  \
     : (b) == PTD_OPC_TSC                       ? FB_TSC  \
     : (b) == PTD_OPC_MTC                       ? FB_MTC  \
     : (b) == PTD_OPC_MODE                      ? FB_MODE \
     : (b) == PTD_OPC_TRIG                      ? FB_TRIG \
                                                : FB_BAD)

/* Classes of the second byte of a 2-byte opcode. */
enum {
    EB_BAD = 0,
    EB_PSB,
    EB_PSBEND,
    EB_OVF,
    EB_TNT64,
    EB_PIP,
    EB_CBR,
    EB_TMA,
    EB_VMCS,
    EB_STOP,
    EB_MNT,
    EB_EXSTOP,
    EB_MWAIT,
    EB_PWRE,
    EB_PWRX,
    EB_PTW,
    EB_BBP,
    EB_BEP,
    EB_CFE,
    EB_EVD,
};

#define EB_OF(b)                                         \
    ((b) == PTD_EXT_PSB                      ? EB_PSB    \
     : (b) == PTD_EXT_PSBEND                 ? EB_PSBEND \
     : (b) == PTD_EXT_OVF                    ? EB_OVF    \
     : (b) == PTD_EXT_TNT64                  ? EB_TNT64  \
     : (b) == PTD_EXT_PIP                    ? EB_PIP    \
     : (b) == PTD_EXT_CBR                    ? EB_CBR    \
     : (b) == PTD_EXT_TMA                    ? EB_TMA    \
     : (b) == PTD_EXT_VMCS                   ? EB_VMCS   \
     : (b) == PTD_EXT_STOP                   ? EB_STOP   \
     : (b) == PTD_EXT_MNT                    ? EB_MNT    \
     : ((b)&0x7f) == PTD_EXT_EXSTOP          ? EB_EXSTOP \
     : (b) == PTD_EXT_MWAIT                  ? EB_MWAIT  \
     : (b) == PTD_EXT_PWRE                   ? EB_PWRE   \
     : (b) == PTD_EXT_PWRX                   ? EB_PWRX   \
     : ((b)&PTD_EXT_PTW_MASK) == PTD_EXT_PTW ? EB_PTW    \
     : (b) == PTD_EXT_BBP                    ? EB_BBP    \
     : ((b)&0x7f) == PTD_EXT_BEP             ? EB_BEP    \
     : (b) == PTD_EXT_CFE                    ? EB_CFE    \
     : (b) == PTD_EXT_EVD                    ? EB_EVD    \
                                             : EB_BAD)

#define R4(M, b)  M(b), M((b) + 1), M((b) + 2), M((b) + 3)
#define R16(M, b) R4(M, b), R4(M, (b) + 4), R4(M, (b) + 8), R4(M, (b) + 12)
#define R64(M, b) R16(M, b), R16(M, (b) + 16), R16(M, (b) + 32), R16(M, (b) + 48)
#define R256(M)   R64(M, 0), R64(M, 64), R64(M, 128), R64(M, 192)

static const uint8_t ptd_fb_class[256] = { R256(FB_OF) };
static const uint8_t ptd_eb_class[256] = { R256(EB_OF) };

/* Payload bytes of an IP packet per IPBytes; 0xff: reserved. */
static const uint8_t ptd_ipc_bytes[8] = { 0, 2, 4, 6, 6, 0xff, 8, 0xff };

/* The fast path: for every first byte whose packet is complete in itself
 * (PAD, TNT-8, TIP/TIP.PGE/TIP.PGD/FUP, TSC, MTC, CYC without extension),
 * everything but the payload bytes is known from that byte alone. Three
 * tables, indexed by the first byte:
 *   ptd_pkt_fast_pkt   the packet as far as that byte tells: meta complete,
 *                      and the payload bits the byte itself holds (TNT-8,
 *                      short CYC); for PAD and TNT-8 (the 1-byte packets)
 *                      the whole packet
 *   ptd_pkt_fast_mask  which bits of the 8 bytes after the opcode are payload
 *   ptd_pkt_fast_size  the packet's size; 0: not a fast packet (decode_one())
 * Inside a BBP block an even byte may be a BIP: no fast path there. */
#define MSB7(v) \
    ((v) >= 64 ? 6 : (v) >= 32 ? 5 : (v) >= 16 ? 4 : (v) >= 8 ? 3 : (v) >= 4 ? 2 : (v) >= 2 ? 1 : 0)
#define IPN(b) \
    (((b) >> 5) == 0 ? 0 : ((b) >> 5) == 1 ? 2 : ((b) >> 5) == 2 ? 4 : ((b) >> 5) == 6 ? 8 : 6)
#define IPMASK(b) (((1ull << (4 * IPN(b))) << (4 * IPN(b))) - 1) /* 8*IPN low bits */
#define IPOK(b)   (((b) >> 5) != 5 && ((b) >> 5) != 7)
#define FB_ISIP(b) \
    (FB_OF(b) == FB_TIP || FB_OF(b) == FB_PGE || FB_OF(b) == FB_PGD || FB_OF(b) == FB_FUP)
#define FB_SHORTCYC(b) (FB_OF(b) == FB_CYC && !((b)&4))
#define FAST_MASK(b)                              \
    (FB_ISIP(b)           ? IPMASK(b)             \
     : FB_OF(b) == FB_TSC ? 0x00ffffffffffffffull \
     : FB_OF(b) == FB_MTC ? 0xffull               \
                          : 0ull)
#define FAST_BASE(b) \
    (FB_OF(b) == FB_TNT8 ? (((b) >> 1) & ~(1u << MSB7((b) >> 1))) : FB_SHORTCYC(b) ? ((b) >> 3) : 0)
#define FAST_KIND(b)                         \
    (FB_OF(b) == FB_PAD    ? PTD_PKT_PAD     \
     : FB_OF(b) == FB_TNT8 ? PTD_PKT_TNT8    \
     : FB_OF(b) == FB_TIP  ? PTD_PKT_TIP     \
     : FB_OF(b) == FB_PGE  ? PTD_PKT_TIP_PGE \
     : FB_OF(b) == FB_PGD  ? PTD_PKT_TIP_PGD \
     : FB_OF(b) == FB_FUP  ? PTD_PKT_FUP     \
     : FB_OF(b) == FB_TSC  ? PTD_PKT_TSC     \
     : FB_OF(b) == FB_MTC  ? PTD_PKT_MTC     \
     : FB_SHORTCYC(b)      ? PTD_PKT_CYC     \
                           : PTD_PKT_NONE)
#define FAST_SIZE(b)                                                                          \
    (FB_OF(b) == FB_PAD || FB_OF(b) == FB_TNT8 || FB_SHORTCYC(b) ? 1                          \
     : FB_ISIP(b)                                                ? (IPOK(b) ? 1 + IPN(b) : 0) \
     : FB_OF(b) == FB_TSC                                        ? 8                          \
     : FB_OF(b) == FB_MTC                                        ? 2                          \
                                                                 : 0)
#define FAST_A(b) (FB_OF(b) == FB_TNT8 ? MSB7((b) >> 1) : FB_ISIP(b) ? ((b) >> 5) : 0)
#define FAST_PKT(b)                                                                            \
    {                                                                                          \
        .payload = FAST_BASE(b),                                                               \
        .meta = (FAST_SIZE(b) ? PTD_PKT_META(0, FAST_KIND(b), FAST_SIZE(b), FAST_A(b), 0) : 0) \
    }
#define FAST_SIZE8(b) ((uint8_t)FAST_SIZE(b))

/* exported for ptd_pkt_decode_fast (ptd_pkt.h), inline in the query layer */
const struct ptd_pkt ptd_pkt_fast_pkt[256] = { R256(FAST_PKT) };
const uint64_t ptd_pkt_fast_mask[256] = { R256(FAST_MASK) };
const uint8_t ptd_pkt_fast_size[256] = { R256(FAST_SIZE8) };

/* Little-endian load of n bytes (the caller checked the bounds). With a
 * constant n the compiler merges this into plain loads. */
static inline uint64_t ld_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

/* Index of the most significant set bit (v != 0). */
static inline unsigned msb64(uint64_t v)
{
    return 63u - (unsigned)__builtin_clzll(v);
}

int ptd_pkt_init(struct ptd_pkt_decoder *d, const uint8_t *buf, size_t size)
{
    static const uint8_t empty[1];

    if (!d || (!buf && size))
        return -PTD_ERR_INVALID;
    if (!buf)
        buf = empty; /* no arithmetic on a null pointer */
    d->begin = buf;
    d->end = buf + size;
    d->pos = buf;
    d->sync = 0;
    d->in_block = 0;
    d->block_sz4 = 0;
    d->errata = 0;
    d->libipt20 = 0;
    d->pwre_bit3 = 0;
    d->no_pebs = 0;
    return 0;
}

void ptd_pkt_set_pebs(struct ptd_pkt_decoder *d, int on)
{
    d->no_pebs = on ? 0 : 1;
}

void ptd_pkt_set_libipt20(struct ptd_pkt_decoder *d, int on)
{
    d->libipt20 = on ? 1 : 0;
    d->pwre_bit3 = d->libipt20;
}

void ptd_pkt_set_pwre_bit3(struct ptd_pkt_decoder *d, int on)
{
    d->pwre_bit3 = on ? 1 : 0;
}

uint64_t ptd_pkt_offset(const struct ptd_pkt_decoder *d)
{
    return (uint64_t)(d->pos - d->begin);
}

/* Is there a complete PSB at pos? 1 yes, 0 no (pattern broken), -1 the
 * buffer ends first. */
static int psb_at(const uint8_t *pos, const uint8_t *end)
{
    if ((size_t)(end - pos) < PTD_PSB_SIZE)
        return -1;
    for (unsigned i = 0; i < PTD_PSB_SIZE; i += 2)
        if (pos[i] != PTD_OPC_EXT || pos[i + 1] != PTD_EXT_PSB)
            return 0;
    return 1;
}

/* ---- one packet, by kind ------------------------------------------------------
 * Each reader gets the packet's first byte at pos, with left > 0 bytes
 * from there to the end of the buffer, fills *p and returns the size, or
 * a negative error. Only the fields its kind uses are set besides kind,
 * size, a, flags, aux and payload, which every reader sets. */

#define PKT_INLINE static PTD_ALWAYS_INLINE

PKT_INLINE void set_pkt(struct ptd_pkt *p, uint8_t kind, unsigned size, unsigned a, unsigned flags,
                        uint32_t aux, uint64_t payload)
{
    p->kind = kind;
    p->size = (uint8_t)size;
    p->a = (uint8_t)a;
    p->flags = (uint8_t)flags;
    p->aux = aux;
    p->payload = payload;
}

/* BIP (inside a BBP block): a 4- or 8-byte payload after its ID. */
PKT_INLINE int read_bip(const struct ptd_pkt_decoder *d, const uint8_t *pos, size_t left,
                        struct ptd_pkt *p)
{
    unsigned n = d->block_sz4 ? 5u : 9u;
    if (left < n)
        return -PTD_ERR_TRUNCATED;
    set_pkt(p, PTD_PKT_BIP, n, pos[0] >> 3, 0, 0, ld_le(pos + 1, n - 1));
    return (int)n;
}

/* TNT-8: the bits below the stop bit, oldest highest. */
PKT_INLINE int read_tnt8(const uint8_t *pos, struct ptd_pkt *p)
{
    unsigned v = (unsigned)pos[0] >> 1;
    unsigned bits = 31u - (unsigned)__builtin_clz(v);
    set_pkt(p, PTD_PKT_TNT8, 1, bits, 0, 0, v & ~(1u << bits));
    return 1;
}

/* TIP, TIP.PGE, TIP.PGD, FUP: IPBytes in bits 7:5, then 0..8 bytes. */
PKT_INLINE int read_ip(uint8_t kind, const uint8_t *pos, size_t left, struct ptd_pkt *p)
{
    unsigned ipc = (unsigned)pos[0] >> 5, n = ptd_ipc_bytes[ipc];
    if (n == 0xff) {
        p->kind = PTD_PKT_NONE;
        return -PTD_ERR_BAD_PACKET;
    }
    if (left < n + 1) {
        p->kind = PTD_PKT_NONE;
        return -PTD_ERR_TRUNCATED;
    }
    set_pkt(p, kind, n + 1, ipc, 0, 0,
            left >= 9 ? (n ? ptd_pkt_ld_le64(pos + 1) & (~0ull >> (64 - 8 * n)) : 0)
                      : ld_le(pos + 1, n));
    return (int)(n + 1);
}

/* The OVF after a CYC's first byte (SKD007, ptd_errata.h): the 2-byte CYC
 * at pos whose second byte reads as OVF's 0x02 (a value of 0x20..0x3f) and
 * is followed by OVF's 0xf3. Two short CYCs in a row only come when the
 * counter wraps, with a full payload: so this is an OVF that cut the CYC
 * short. The CYC is dropped; the OVF is the packet, at the CYC's offset,
 * 3 bytes long in the trace (its size field stays OVF's 2), as current
 * libipt's packet decoder does. */
PKT_INLINE bool skd007_ovf(const uint8_t *pos, size_t left, uint64_t cyc)
{
    enum {
        CYC_LOW_BITS = 5,
        CYC_AS_EXT = 0x20,
        SKD007_CYC_SIZE = 2
    };
    return (cyc & ~(uint64_t)((1u << CYC_LOW_BITS) - 1)) == CYC_AS_EXT && left > SKD007_CYC_SIZE &&
           pos[SKD007_CYC_SIZE] == PTD_EXT_OVF;
}

/* CYC: 5 value bits in byte 0, 7 in each extension byte while bit 0 says
 * more follow. */
PKT_INLINE int read_cyc(const struct ptd_pkt_decoder *d, const uint8_t *pos, size_t left,
                        struct ptd_pkt *p)
{
    uint64_t v = (uint64_t)(pos[0] >> 3);
    unsigned shl = 5, n = 1;
    if (pos[0] & 0x04) {
        for (;;) {
            uint8_t x;
            if (n >= left)
                return -PTD_ERR_TRUNCATED;
            x = pos[n++];
            /* A 64-bit counter needs at most 5 + 8 * 7 bits. */
            if (shl + 7 > 64)
                return -PTD_ERR_BAD_PACKET;
            v |= (uint64_t)(x >> 1) << shl;
            shl += 7;
            if (!(x & 1))
                break;
        }
    }
    if (n == 2 && (d->errata & PTD_ERRATUM_SKD007) && !d->libipt20 && skd007_ovf(pos, left, v)) {
        set_pkt(p, PTD_PKT_OVF, 2, 0, 0, 0, 0);
        return 3;
    }
    set_pkt(p, PTD_PKT_CYC, n, 0, 0, 0, v);
    return (int)n;
}

PKT_INLINE int read_tsc(const uint8_t *pos, size_t left, struct ptd_pkt *p)
{
    if (left < 8)
        return -PTD_ERR_TRUNCATED;
    set_pkt(p, PTD_PKT_TSC, 8, 0, 0, 0, ptd_pkt_ld_le64(pos) >> 8);
    return 8;
}

PKT_INLINE int read_mtc(const uint8_t *pos, size_t left, struct ptd_pkt *p)
{
    if (left < 2)
        return -PTD_ERR_TRUNCATED;
    set_pkt(p, PTD_PKT_MTC, 2, 0, 0, 0, pos[1]);
    return 2;
}

/* MODE: the leaf in bits 7:5 of byte 1 (Exec: IF, CS.D, CS.L; TSX:
 * TXAbort, InTX). */
PKT_INLINE int read_mode(const uint8_t *pos, size_t left, struct ptd_pkt *p)
{
    enum {
        LEAF_EXEC = 0,
        LEAF_TSX = 1,
        EXEC_BITS = 0x07,
        TSX_BITS = 0x03
    };
    uint8_t m;
    if (left < 2)
        return -PTD_ERR_TRUNCATED;
    m = pos[1];
    switch (m >> 5) {
    case LEAF_EXEC: set_pkt(p, PTD_PKT_MODE_EXEC, 2, 0, m & EXEC_BITS, 0, 0); return 2;
    case LEAF_TSX: set_pkt(p, PTD_PKT_MODE_TSX, 2, 0, m & TSX_BITS, 0, 0); return 2;
    default: return -PTD_ERR_BAD_PACKET;
    }
}

/* TRIG (Trigger Tracing): byte 1 IP/ICNTV/MULT, byte 2 the trigger bit
 * vector, then the 16-bit instruction count when ICNTV says it is valid.
 * Newer than libipt 2.0: an unknown opcode in that mode. */
PKT_INLINE int read_trig(const struct ptd_pkt_decoder *d, const uint8_t *pos, size_t left,
                         struct ptd_pkt *p)
{
    unsigned flags = 0, n = PTD_TRIG_SIZE;
    uint32_t icnt = 0;
    if (d->libipt20)
        return -PTD_ERR_BAD_OPC;
    if (left < PTD_TRIG_SIZE)
        return -PTD_ERR_TRUNCATED;
    if (pos[1] & PTD_TRIG_ICNTV_BIT) {
        n = PTD_TRIG_ICNT_SIZE;
        if (left < n)
            return -PTD_ERR_TRUNCATED;
        icnt = (uint32_t)ld_le(pos + PTD_TRIG_SIZE, n - PTD_TRIG_SIZE);
        flags |= PTD_PKTF_ICNTV;
    }
    if (pos[1] & PTD_TRIG_IP_BIT)
        flags |= PTD_PKTF_IP;
    if (pos[1] & PTD_TRIG_MULT_BIT)
        flags |= PTD_PKTF_MULT;
    set_pkt(p, PTD_PKT_TRIG, n, pos[2], flags, icnt, 0);
    return (int)n;
}

/* ---- 2-byte opcodes (first byte 0x02) ----------------------------------------- */

PKT_INLINE int read_psb(struct ptd_pkt_decoder *d, const uint8_t *pos, const uint8_t *end,
                        struct ptd_pkt *p)
{
    int r = psb_at(pos, end);
    if (r < 0)
        return -PTD_ERR_TRUNCATED;
    if (r == 0)
        return -PTD_ERR_BAD_PACKET;
    d->in_block = 0;
    /* a synchronisation point, also when met while decoding (libipt
     * 9bbdc7f3): a resync can go back to the start of this PSB+ */
    d->sync = pos;
    set_pkt(p, PTD_PKT_PSB, PTD_PSB_SIZE, 0, 0, 0, 0);
    return PTD_PSB_SIZE;
}

PKT_INLINE int read_tnt64(const uint8_t *pos, size_t left, struct ptd_pkt *p)
{
    uint64_t v;
    unsigned n;
    if (left < 8)
        return -PTD_ERR_TRUNCATED;
    v = ld_le(pos + 2, 6);
    /* a stop bit and at least one TNT bit */
    if (v < 2)
        return -PTD_ERR_BAD_PACKET;
    n = msb64(v);
    set_pkt(p, PTD_PKT_TNT64, 8, n, 0, 0, v & ~(1ull << n));
    return 8;
}

/* PIP: bit 0 NR, CR3[51:5] above it. */
PKT_INLINE int read_pip(const uint8_t *pos, size_t left, struct ptd_pkt *p)
{
    uint64_t v;
    if (left < 8)
        return -PTD_ERR_TRUNCATED;
    v = ld_le(pos + 2, 6);
    set_pkt(p, PTD_PKT_PIP, 8, 0, (unsigned)(v & 1), 0, (v >> 1) << 5);
    return 8;
}

PKT_INLINE int read_cbr(const uint8_t *pos, size_t left, struct ptd_pkt *p)
{
    if (left < 4)
        return -PTD_ERR_TRUNCATED;
    set_pkt(p, PTD_PKT_CBR, 4, 0, 0, 0, pos[2]);
    return 4;
}

/* TMA: CTC[15:0], then FastCounter[8:0]. Byte 4 and byte 6 bits 7:1 are
 * reserved (SDM TMA packet definition); set, they mean corruption (erratum
 * SKZ84): with the erratum, a corrupted TMA and the bogus byte after it
 * are one invalid packet. */
PKT_INLINE int read_tma(const struct ptd_pkt_decoder *d, const uint8_t *pos, size_t left,
                        struct ptd_pkt *p)
{
    enum {
        SKZ84_SIZE = 8
    };
    if (left < 7)
        return -PTD_ERR_TRUNCATED;
    if (pos[4] || (pos[6] & 0xfe)) {
        unsigned n;
        if (!(d->errata & PTD_ERRATUM_SKZ84))
            return -PTD_ERR_BAD_PACKET;
        n = left < SKZ84_SIZE ? (unsigned)left : (unsigned)SKZ84_SIZE;
        set_pkt(p, PTD_PKT_INVALID, n, 0, 0, 0, 0);
        return (int)n;
    }
    set_pkt(p, PTD_PKT_TMA, 7, 0, 0, (uint32_t)pos[5] | (uint32_t)(pos[6] & 1) << 8,
            ld_le(pos + 2, 2));
    return 7;
}

PKT_INLINE int read_vmcs(const uint8_t *pos, size_t left, struct ptd_pkt *p)
{
    if (left < 7)
        return -PTD_ERR_TRUNCATED;
    set_pkt(p, PTD_PKT_VMCS, 7, 0, 0, 0, ld_le(pos + 2, 5) << 12);
    return 7;
}

PKT_INLINE int read_mnt(const uint8_t *pos, size_t left, struct ptd_pkt *p)
{
    if (left < 3)
        return -PTD_ERR_TRUNCATED;
    if (pos[2] != PTD_EXT2_MNT)
        return -PTD_ERR_BAD_OPC;
    if (left < 11)
        return -PTD_ERR_TRUNCATED;
    set_pkt(p, PTD_PKT_MNT, 11, 0, 0, 0, ptd_pkt_ld_le64(pos + 3));
    return 11;
}

PKT_INLINE int read_mwait(const uint8_t *pos, size_t left, struct ptd_pkt *p)
{
    if (left < 10)
        return -PTD_ERR_TRUNCATED;
    set_pkt(p, PTD_PKT_MWAIT, 10, 0, 0, (uint32_t)ld_le(pos + 6, 4), ld_le(pos + 2, 4));
    return 10;
}

/* PWRE: byte 2 HW, byte 3 the resolved C-state and sub-state. The SDM's
 * table has HW in bit 7 of byte 2; libipt reads bit 3 (ptd_pkt_set_pwre_bit3). */
PKT_INLINE int read_pwre(const struct ptd_pkt_decoder *d, const uint8_t *pos, size_t left,
                         struct ptd_pkt *p)
{
    enum {
        PWRE_HW_SDM = 0x80,
        PWRE_HW_LIBIPT = 0x08
    };
    if (left < 4)
        return -PTD_ERR_TRUNCATED;
    set_pkt(p, PTD_PKT_PWRE, 4, pos[3] >> 4,
            (pos[2] & (d->pwre_bit3 ? PWRE_HW_LIBIPT : PWRE_HW_SDM)) ? PTD_PKTF_HW : 0,
            pos[3] & 0xf, 0);
    return 4;
}

/* PWRX: byte 2 last and deepest core C-state, byte 3 the wake reasons. */
PKT_INLINE int read_pwrx(const uint8_t *pos, size_t left, struct ptd_pkt *p)
{
    if (left < 7)
        return -PTD_ERR_TRUNCATED;
    set_pkt(p, PTD_PKT_PWRX, 7, pos[2] >> 4, pos[3] & 0xf, pos[2] & 0xf, 0);
    return 7;
}

/* PTW: PayloadBytes in bits 6:5 of byte 1 (4 or 8 bytes), IP in bit 7. */
PKT_INLINE int read_ptw(uint8_t e, const uint8_t *pos, size_t left, struct ptd_pkt *p)
{
    unsigned plc = (e >> 5) & 3, n;
    if (plc > 1)
        return -PTD_ERR_BAD_PACKET;
    n = plc ? 10u : 6u;
    if (left < n)
        return -PTD_ERR_TRUNCATED;
    set_pkt(p, PTD_PKT_PTW, n, plc, (e & PTD_EXT_IP_BIT) ? PTD_PKTF_IP : 0, 0,
            ld_le(pos + 2, n - 2));
    return (int)n;
}

/* BBP opens a block of BIPs (BIP payloads 4 or 8 bytes). */
PKT_INLINE int read_bbp(struct ptd_pkt_decoder *d, const uint8_t *pos, size_t left,
                        struct ptd_pkt *p)
{
    if (d->libipt20 || d->no_pebs)
        return -PTD_ERR_BAD_OPC;
    if (left < 3)
        return -PTD_ERR_TRUNCATED;
    set_pkt(p, PTD_PKT_BBP, 3, pos[2] & 0x1f, (pos[2] & 0x80) ? PTD_PKTF_SZ4 : 0, 0, 0);
    d->in_block = 1;
    d->block_sz4 = p->flags & PTD_PKTF_SZ4;
    return 3;
}

PKT_INLINE int read_bep(struct ptd_pkt_decoder *d, uint8_t e, struct ptd_pkt *p)
{
    if (d->libipt20 || d->no_pebs)
        return -PTD_ERR_BAD_OPC;
    set_pkt(p, PTD_PKT_BEP, 2, 0, (e & PTD_EXT_IP_BIT) ? PTD_PKTF_IP : 0, 0, 0);
    d->in_block = 0;
    return 2;
}

/* CFE: byte 2 the type (bits 4:0) and IP (bit 7), byte 3 the vector. */
PKT_INLINE int read_cfe(const struct ptd_pkt_decoder *d, const uint8_t *pos, size_t left,
                        struct ptd_pkt *p)
{
    if (d->libipt20)
        return -PTD_ERR_BAD_OPC;
    if (left < 4)
        return -PTD_ERR_TRUNCATED;
    set_pkt(p, PTD_PKT_CFE, 4, pos[2] & 0x1f, (pos[2] & 0x80) ? PTD_PKTF_IP : 0, pos[3], 0);
    return 4;
}

/* EVD: byte 2 the type (bits 5:0), then 8 bytes of data. */
PKT_INLINE int read_evd(const struct ptd_pkt_decoder *d, const uint8_t *pos, size_t left,
                        struct ptd_pkt *p)
{
    if (d->libipt20)
        return -PTD_ERR_BAD_OPC;
    if (left < 11)
        return -PTD_ERR_TRUNCATED;
    set_pkt(p, PTD_PKT_EVD, 11, pos[2] & 0x3f, 0, 0, ptd_pkt_ld_le64(pos + 3));
    return 11;
}

/* A 2-byte opcode: the second byte says which. */
PKT_INLINE int read_ext(struct ptd_pkt_decoder *d, const uint8_t *pos, const uint8_t *end,
                        struct ptd_pkt *p)
{
    const size_t left = (size_t)(end - pos);
    uint8_t e;
    if (left < 2)
        return -PTD_ERR_TRUNCATED;
    e = pos[1];
    switch (ptd_eb_class[e]) {
    case EB_PSB: return read_psb(d, pos, end, p);
    case EB_PSBEND: set_pkt(p, PTD_PKT_PSBEND, 2, 0, 0, 0, 0); return 2;
    case EB_OVF:
        d->in_block = 0;
        set_pkt(p, PTD_PKT_OVF, 2, 0, 0, 0, 0);
        return 2;
    case EB_STOP: set_pkt(p, PTD_PKT_STOP, 2, 0, 0, 0, 0); return 2;
    case EB_TNT64: return read_tnt64(pos, left, p);
    case EB_PIP: return read_pip(pos, left, p);
    case EB_CBR: return read_cbr(pos, left, p);
    case EB_TMA: return read_tma(d, pos, left, p);
    case EB_VMCS: return read_vmcs(pos, left, p);
    case EB_MNT: return read_mnt(pos, left, p);
    case EB_EXSTOP:
        set_pkt(p, PTD_PKT_EXSTOP, 2, 0, (e & PTD_EXT_IP_BIT) ? PTD_PKTF_IP : 0, 0, 0);
        return 2;
    case EB_MWAIT: return read_mwait(pos, left, p);
    case EB_PWRE: return read_pwre(d, pos, left, p);
    case EB_PWRX: return read_pwrx(pos, left, p);
    case EB_PTW: return read_ptw(e, pos, left, p);
    case EB_BBP: return read_bbp(d, pos, left, p);
    case EB_BEP: return read_bep(d, e, p);
    case EB_CFE: return read_cfe(d, pos, left, p);
    case EB_EVD: return read_evd(d, pos, left, p);
    default: return -PTD_ERR_BAD_OPC;
    }
}

/* Decode one packet at pos (pos < end). Returns the bytes it takes in the
 * trace or a negative error. Updates the block state in *d. Inlined into
 * both entry points. */
PKT_INLINE int decode_one(struct ptd_pkt_decoder *d, const uint8_t *pos, const uint8_t *end,
                          struct ptd_pkt *p)
{
    const size_t left = (size_t)(end - pos);
    const uint8_t b = pos[0];

    switch (ptd_fb_class[b]) {
    case FB_TNT8:
        if (PTD_RARE(d->in_block) && (b & PTD_OPC_BIP_MASK) == PTD_OPC_BIP)
            return read_bip(d, pos, left, p);
        return read_tnt8(pos, p);
    case FB_TIP: return read_ip(PTD_PKT_TIP, pos, left, p);
    case FB_PGE: return read_ip(PTD_PKT_TIP_PGE, pos, left, p);
    case FB_PGD: return read_ip(PTD_PKT_TIP_PGD, pos, left, p);
    case FB_FUP: return read_ip(PTD_PKT_FUP, pos, left, p);
    case FB_PAD: set_pkt(p, PTD_PKT_PAD, 1, 0, 0, 0, 0); return 1;
    case FB_CYC: return read_cyc(d, pos, left, p);
    case FB_TSC: return read_tsc(pos, left, p);
    case FB_MTC: return read_mtc(pos, left, p);
    case FB_MODE: return read_mode(pos, left, p);
    case FB_TRIG: return read_trig(d, pos, left, p);
    case FB_EXT: return read_ext(d, pos, end, p);
    default: return -PTD_ERR_BAD_OPC;
    }
}

int ptd_pkt_next(struct ptd_pkt_decoder *d, struct ptd_pkt *p)
{
    const uint8_t *pos = d->pos, *end = d->end;
    int n;

    n = (int)ptd_pkt_decode_fast(pos, end, d->in_block, p);
    if (n) {
        d->pos = pos + n;
        return n;
    }
    if (pos >= end)
        return -PTD_ERR_EOS;
    n = decode_one(d, pos, end, p);
    if (n > 0)
        d->pos = pos + n;
    else
        p->kind = PTD_PKT_NONE;
    return n;
}

/* One packet the general way, for the batch decoder: out of line, so the
 * batch loop keeps its state in registers. */
static PTD_NOINLINE int decode_slow(struct ptd_pkt_decoder *d, const uint8_t *pos,
                                    const uint8_t *end, struct ptd_pkt *p)
{
    int n = (int)ptd_pkt_decode_fast(pos, end, d->in_block, p);

    if (n)
        return n;
    if (pos >= end)
        return -PTD_ERR_EOS;
    return decode_one(d, pos, end, p);
}

#define BYTES_01 0x0101010101010101ull
#define BYTES_80 0x8080808080808080ull

/* The batch decoder. Its fast loop takes a run of 1-byte packets and the
 * packet after it per round without a branch that depends on the data:
 * runs of PAD and TNT-8 and the IP packets between them come in patterns
 * no branch predictor learns. Each round loads 8 bytes, writes out[i..i+7]
 * from the table as if all were 1-byte packets (the entries after the run
 * are scratch, overwritten later or past the count returned), then
 * completes the packet that ends the run. A round reads at most 16 bytes
 * (the 8, and a 9-byte packet at the 8th) and writes 8 packets: the loop
 * runs as many rounds as both bounds allow at least, then counts again.
 * Near the end of out[] and of the buffer, one fast packet at a time;
 * inside a BBP block and for the other packets, decode_slow(). */
static PTD_ALWAYS_INLINE size_t next_batch(struct ptd_pkt_decoder *d, struct ptd_pkt *out,
                                           uint64_t *offsets, const bool with_offsets, size_t max,
                                           int *status)
{
    const uint8_t *pos = d->pos, *end = d->end, *begin = d->begin;
    size_t i = 0;
    int st = 0;

    while (i < max) {
        int n;

        if (!d->in_block) {
            for (;;) {
                size_t left = (size_t)(end - pos), rounds;

                if (left < 16 || max - i < 8)
                    break;
                rounds = (left - 16) / 16 + 1;
                if (rounds > (max - i - 8) / 8 + 1)
                    rounds = (max - i - 8) / 8 + 1;
                for (; rounds; rounds--) {
                    const uint64_t w = ptd_pkt_ld_le64(pos);
                    /* 8 x the index of the first odd byte, at most 8 x 7 */
                    const unsigned k8 = (unsigned)__builtin_ctzll((w & BYTES_01) | 1ull << 56);
                    /* 0x02 bytes before it (bit 7 of the zero-byte test on
                     * w ^ 0x02..02; ~x & 0x80..80 is ~w's) */
                    const uint64_t x = w ^ (BYTES_01 * PTD_OPC_EXT);
                    const uint64_t ext = (x - BYTES_01) & ~w & BYTES_80 & ((1ull << k8) - 1);
                    unsigned k, b, size;

#define RUN_PKT(j)                                            \
    do {                                                      \
        out[i + (j)] = ptd_pkt_fast_pkt[pos[j]];              \
        if (with_offsets)                                     \
            offsets[i + (j)] = (uint64_t)(pos - begin) + (j); \
    } while (0)
                    RUN_PKT(0);
                    RUN_PKT(1);
                    RUN_PKT(2);
                    RUN_PKT(3);
                    RUN_PKT(4);
                    RUN_PKT(5);
                    RUN_PKT(6);
                    RUN_PKT(7);
#undef RUN_PKT
                    if (PTD_RARE(ext != 0)) {
                        /* a 2-byte opcode ends the run */
                        k = (unsigned)__builtin_ctzll(ext) >> 3;
                        pos += k;
                        i += k;
                        goto slow;
                    }
                    k = k8 >> 3;
                    pos += k;
                    i += k;
                    /* out[i] and offsets[i] hold the packet at pos, but
                     * for the payload bytes after its first */
                    b = (uint8_t)(w >> k8);
                    size = ptd_pkt_fast_size[b];
                    if (!size)
                        goto slow;
                    out[i].payload = ptd_pkt_fast_pkt[b].payload |
                                     (ptd_pkt_ld_le64(pos + 1) & ptd_pkt_fast_mask[b]);
                    pos += size;
                    i++;
                }
            }
            /* the last few packets out[] takes */
            while (i < max) {
                const unsigned size = ptd_pkt_decode_fast(pos, end, 0, &out[i]);

                if (!size)
                    goto slow;
                if (with_offsets)
                    offsets[i] = (uint64_t)(pos - begin);
                pos += size;
                i++;
            }
            if (i >= max)
                break;
        }
    slow:
        n = decode_slow(d, pos, end, &out[i]);
        if (n < 0) {
            st = n;
            break;
        }
        if (with_offsets)
            offsets[i] = (uint64_t)(pos - begin);
        pos += n;
        i++;
    }
    d->pos = pos;
    if (status)
        *status = st;
    return i;
}

size_t ptd_pkt_next_batch(struct ptd_pkt_decoder *d, struct ptd_pkt *out, uint64_t *offsets,
                          size_t max, int *status)
{
    if (offsets)
        return next_batch(d, out, offsets, true, max, status);
    return next_batch(d, out, 0, false, max, status);
}

/* ---- synchronisation --------------------------------------------------------- */

/* The PSB pattern as a little-endian 64-bit word, in both phases. */
#define PSB_WORD_LOHI 0x8202820282028202ull
#define PSB_WORD_HILO 0x0282028202820282ull

/* Given a position inside a run of PSB pattern bytes, find the PSB that ends
 * the run: walk to the end of the 02 82 pairs, step back one PSB, check.
 * Returns its offset or -1; *run_end receives where the run stopped. */
static int64_t psb_from_pattern(const uint8_t *begin, const uint8_t *end, const uint8_t *pos,
                                const uint8_t **run_end)
{
    const uint8_t *start;

    if (*pos != PTD_OPC_EXT)
        pos++;
    for (; pos + 1 < end; pos += 2)
        if (pos[0] != PTD_OPC_EXT || pos[1] != PTD_EXT_PSB)
            break;
    *run_end = pos;
    if ((size_t)(pos - begin) < PTD_PSB_SIZE)
        return -1;
    start = pos - PTD_PSB_SIZE;
    if (psb_at(start, end) != 1)
        return -1;
    return (int64_t)(start - begin);
}

/* Search aligned 8-byte words (aligned relative to the buffer start) from
 * `from` for the PSB pattern; accept a PSB at or after `min`. */
static int64_t psb_search(const uint8_t *begin, const uint8_t *end, size_t from, size_t min)
{
    size_t size = (size_t)(end - begin);
    size_t w = (from + 7) & ~(size_t)7;

    while (w + 8 <= size) {
        uint64_t v = ptd_pkt_ld_le64(begin + w);
        const uint8_t *run_end;
        int64_t psb;

        if (v != PSB_WORD_LOHI && v != PSB_WORD_HILO) {
            w += 8;
            continue;
        }
        psb = psb_from_pattern(begin, end, begin + w, &run_end);
        if (psb >= 0 && (size_t)psb >= min)
            return psb;
        /* Every word inside this run leads to the same answer: skip it. */
        {
            size_t next = (size_t)(run_end - begin);
            next = (next + 7) & ~(size_t)7;
            w = next > w + 8 ? next : w + 8;
        }
    }
    return -PTD_ERR_EOS;
}

int ptd_pkt_sync_forward(struct ptd_pkt_decoder *d)
{
    size_t pos;
    int64_t psb;

    if (!d)
        return -PTD_ERR_INVALID;
    pos = (size_t)(d->pos - d->begin);
    /* From a sync point, look past its PSB. */
    if (d->sync && d->pos == d->sync)
        pos += PTD_PSB_SIZE;
    /* Like libipt: start a little earlier so a PSB partly consumed by the
     * preceding (bad) packet is found again. */
    pos -= pos < PTD_PSB_SIZE - 1 ? pos : PTD_PSB_SIZE - 1;
    psb = psb_search(d->begin, d->end, pos, pos);
    if (psb < 0)
        return (int)psb;
    d->sync = d->begin + psb;
    d->pos = d->sync;
    d->in_block = 0;
    return 0;
}

int ptd_pkt_sync_set(struct ptd_pkt_decoder *d, uint64_t offset)
{
    if (!d)
        return -PTD_ERR_INVALID;
    if (offset > (uint64_t)(d->end - d->begin))
        return -PTD_ERR_EOS;
    d->pos = d->begin + offset;
    d->sync = d->pos;
    d->in_block = 0;
    return 0;
}

int ptd_pkt_resync(struct ptd_pkt_decoder *d, uint64_t *skipped)
{
    const uint8_t *from;
    int r;

    if (!d)
        return -PTD_ERR_INVALID;
    from = d->pos;
    r = ptd_pkt_sync_forward(d);
    if (skipped) {
        if (r < 0)
            *skipped = (uint64_t)(d->end - from);
        else
            *skipped = d->pos > from ? (uint64_t)(d->pos - from) : 0;
    }
    if (r < 0)
        d->pos = d->end;
    return r;
}

int64_t ptd_psb_find(const uint8_t *buf, size_t size, size_t from)
{
    const uint8_t *end = buf + size;

    if (!buf)
        return -PTD_ERR_INVALID;
    for (size_t i = from; i + PTD_PSB_SIZE <= size; i++) {
        if (buf[i] != PTD_OPC_EXT || buf[i + 1] != PTD_EXT_PSB)
            continue;
        if (psb_at(buf + i, end) == 1)
            return (int64_t)i;
    }
    return -PTD_ERR_EOS;
}

/* ---- last IP ------------------------------------------------------------------ */

void ptd_last_ip_init(struct ptd_last_ip *l)
{
    l->ip = 0;
    l->have_ip = 0;
    l->suppressed = 0;
}

int ptd_last_ip_update(struct ptd_last_ip *l, unsigned ipc, uint64_t payload)
{
    switch (ipc) {
    case PTD_IPC_SUPPRESSED: l->suppressed = 1; return 0;
    case PTD_IPC_UPDATE_16: l->ip = (l->ip & ~0xffffull) | (payload & 0xffffull); break;
    case PTD_IPC_UPDATE_32: l->ip = (l->ip & ~0xffffffffull) | (payload & 0xffffffffull); break;
    case PTD_IPC_SEXT_48: l->ip = ptd_sext48(payload); break;
    case PTD_IPC_UPDATE_48:
        l->ip = (l->ip & ~0xffffffffffffull) | (payload & 0xffffffffffffull);
        break;
    case PTD_IPC_FULL: l->ip = payload; break;
    default: return -PTD_ERR_BAD_PACKET;
    }
    l->have_ip = 1;
    l->suppressed = 0;
    return 0;
}

int ptd_last_ip_query(const struct ptd_last_ip *l, uint64_t *ip)
{
    if (!l->have_ip)
        return -PTD_ERR_NOIP;
    if (l->suppressed)
        return -PTD_ERR_IP_SUPPRESSED;
    if (ip)
        *ip = l->ip;
    return 0;
}
