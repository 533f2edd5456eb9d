/* libptd encoder. Layouts: Intel SDM Vol. 3C, "Trace Packets and Data
 * Types"; the opcode bytes and sizes come from ptd_pkt_kinds[]. */
#include "decoder/ptd_enc.h"

static void st_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

static int fits(uint64_t v, unsigned bits)
{
    return bits >= 64 || (v >> bits) == 0;
}

/* The packet kinds by group, each into buf (the opcode bytes already
 * there): the packet's size, or -PTD_ERR_BAD_PACKET for fields that do not
 * fit, -PTD_ERR_BAD_OPC for a kind not of the group. */

/* TNT, TIP and FUP: the control flow. */
static int enc_flow(uint8_t *buf, const struct ptd_pkt_kind_info *k, const struct ptd_pkt *p)
{
    int n;
    switch (p->kind) {
    case PTD_PKT_TNT8:
        /* bits 7:1 hold the TNT bits below a stop bit; 1..6 bits */
        if (p->a < 1 || p->a > 6 || !fits(p->payload, p->a))
            return -PTD_ERR_BAD_PACKET;
        buf[0] = (uint8_t)(((p->payload | (1u << p->a)) << 1) & 0xfe);
        return k->size;
    case PTD_PKT_TNT64:
        if (p->a < 1 || p->a > 47 || !fits(p->payload, p->a))
            return -PTD_ERR_BAD_PACKET;
        st_le(buf + 2, p->payload | (1ull << p->a), 6);
        return k->size;
    case PTD_PKT_TIP:
    case PTD_PKT_TIP_PGE:
    case PTD_PKT_TIP_PGD:
    case PTD_PKT_FUP:
        n = ptd_ipc_size(p->a);
        if (n < 0 || !fits(p->payload, 8u * (unsigned)n))
            return -PTD_ERR_BAD_PACKET;
        buf[0] = (uint8_t)(k->opc | (p->a << 5));
        st_le(buf + 1, p->payload, (unsigned)n);
        return 1 + n;
    default: return -PTD_ERR_BAD_OPC;
    }
}

/* MODE, PIP, VMCS: the processor's state. */
static int enc_state(uint8_t *buf, const struct ptd_pkt_kind_info *k, const struct ptd_pkt *p)
{
    switch (p->kind) {
    case PTD_PKT_MODE_EXEC:
        if (p->flags & ~7u)
            return -PTD_ERR_BAD_PACKET;
        buf[1] = (uint8_t)(k->ext | p->flags);
        return k->size;
    case PTD_PKT_MODE_TSX:
        if (p->flags & ~3u)
            return -PTD_ERR_BAD_PACKET;
        buf[1] = (uint8_t)(k->ext | p->flags);
        return k->size;
    case PTD_PKT_PIP:
        /* CR3[51:5] in payload bits 47:1, NR in bit 0 */
        if ((p->payload & 0x1f) || !fits(p->payload, 52) || (p->flags & ~1u))
            return -PTD_ERR_BAD_PACKET;
        st_le(buf + 2, (p->payload >> 5) << 1 | (p->flags & 1u), 6);
        return k->size;
    case PTD_PKT_VMCS:
        if ((p->payload & 0xfff) || !fits(p->payload, 52))
            return -PTD_ERR_BAD_PACKET;
        st_le(buf + 2, p->payload >> 12, 5);
        return k->size;
    default: return -PTD_ERR_BAD_OPC;
    }
}

/* TSC, MTC, TMA, CYC, CBR: timing. */
static int enc_timing(uint8_t *buf, const struct ptd_pkt_kind_info *k, const struct ptd_pkt *p)
{
    uint64_t v;
    int size;
    switch (p->kind) {
    case PTD_PKT_TSC:
        if (!fits(p->payload, 56))
            return -PTD_ERR_BAD_PACKET;
        st_le(buf + 1, p->payload, 7);
        return k->size;
    case PTD_PKT_MTC:
        if (!fits(p->payload, 8))
            return -PTD_ERR_BAD_PACKET;
        buf[1] = (uint8_t)p->payload;
        return k->size;
    case PTD_PKT_TMA:
        /* CTC[15:0], a reserved byte, FastCounter[7:0], FC[8] in bit 0 */
        if (!fits(p->payload, 16) || !fits(p->aux, 9))
            return -PTD_ERR_BAD_PACKET;
        st_le(buf + 2, p->payload, 2);
        buf[5] = (uint8_t)p->aux;
        buf[6] = (uint8_t)(p->aux >> 8);
        return k->size;
    case PTD_PKT_CYC:
        /* 5 bits in the header, 7 bits per following byte, Exp bits */
        v = p->payload;
        if (!fits(v, 61))
            return -PTD_ERR_BAD_PACKET;
        buf[0] = (uint8_t)(PTD_OPC_CYC | ((v & 0x1f) << 3));
        v >>= 5;
        size = 1;
        if (v) {
            buf[0] |= 0x04;
            while (v) {
                buf[size] = (uint8_t)((v & 0x7f) << 1);
                v >>= 7;
                if (v)
                    buf[size] |= 1;
                size++;
            }
        }
        return size;
    case PTD_PKT_CBR:
        if (!fits(p->payload, 8))
            return -PTD_ERR_BAD_PACKET;
        buf[2] = (uint8_t)p->payload;
        return k->size;
    default: return -PTD_ERR_BAD_OPC;
    }
}

/* MWAIT, PWRE, PWRX, EXSTOP: power. */
static int enc_power(uint8_t *buf, const struct ptd_pkt_kind_info *k, const struct ptd_pkt *p)
{
    switch (p->kind) {
    case PTD_PKT_MWAIT:
        if (!fits(p->payload, 32))
            return -PTD_ERR_BAD_PACKET;
        st_le(buf + 2, p->payload, 4);
        st_le(buf + 6, p->aux, 4);
        return k->size;
    case PTD_PKT_PWRE:
        /* byte 2 bit 7: HW (bit 3 with PTD_PKTF_HW_BIT3, as libipt's
         * encoder writes it); byte 3: C-state[7:4], sub C-state[3:0] */
        if (p->a > 0xf || p->aux > 0xf || (p->flags & ~(unsigned)(PTD_PKTF_HW | PTD_PKTF_HW_BIT3)))
            return -PTD_ERR_BAD_PACKET;
        buf[2] = (p->flags & PTD_PKTF_HW) ? ((p->flags & PTD_PKTF_HW_BIT3) ? 0x08 : 0x80) : 0;
        buf[3] = (uint8_t)(p->a << 4 | p->aux);
        return k->size;
    case PTD_PKT_PWRX:
        /* byte 2: last[7:4], deepest[3:0]; byte 3: wake reason[3:0] */
        if (p->a > 0xf || p->aux > 0xf || (p->flags & ~0xfu))
            return -PTD_ERR_BAD_PACKET;
        buf[2] = (uint8_t)(p->a << 4 | p->aux);
        buf[3] = p->flags;
        return k->size;
    case PTD_PKT_EXSTOP:
        if (p->flags & ~1u)
            return -PTD_ERR_BAD_PACKET;
        buf[1] = (uint8_t)(k->ext | ((p->flags & PTD_PKTF_IP) ? PTD_EXT_IP_BIT : 0));
        return k->size;
    default: return -PTD_ERR_BAD_OPC;
    }
}

/* BBP, BIP, BEP: PEBS records. */
static int enc_pebs(uint8_t *buf, const struct ptd_pkt_kind_info *k, const struct ptd_pkt *p)
{
    int size;
    switch (p->kind) {
    case PTD_PKT_BEP:
        if (p->flags & ~1u)
            return -PTD_ERR_BAD_PACKET;
        buf[1] = (uint8_t)(k->ext | ((p->flags & PTD_PKTF_IP) ? PTD_EXT_IP_BIT : 0));
        return k->size;
    case PTD_PKT_BBP:
        if (p->a > 0x1f || (p->flags & ~1u))
            return -PTD_ERR_BAD_PACKET;
        buf[2] = (uint8_t)(p->a | ((p->flags & PTD_PKTF_SZ4) ? 0x80 : 0));
        return k->size;
    case PTD_PKT_BIP:
        /* size depends on the enclosing BBP: flags SZ4 selects 4 bytes */
        if (p->a > 0x1f || (p->flags & ~1u))
            return -PTD_ERR_BAD_PACKET;
        size = (p->flags & PTD_PKTF_SZ4) ? 5 : 9;
        if (!fits(p->payload, 8u * (unsigned)(size - 1)))
            return -PTD_ERR_BAD_PACKET;
        buf[0] = (uint8_t)(PTD_OPC_BIP | (p->a << 3));
        st_le(buf + 1, p->payload, (unsigned)size - 1);
        return size;
    default: return -PTD_ERR_BAD_OPC;
    }
}

/* PTW, CFE, EVD, MNT, TRIG: data and events. */
static int enc_data(uint8_t *buf, const struct ptd_pkt_kind_info *k, const struct ptd_pkt *p)
{
    int size;
    switch (p->kind) {
    case PTD_PKT_PTW:
        if (p->a > 1 || (p->flags & ~1u) || !fits(p->payload, p->a ? 64 : 32))
            return -PTD_ERR_BAD_PACKET;
        buf[1] = (uint8_t)(k->ext | (p->a << 5) | ((p->flags & PTD_PKTF_IP) ? PTD_EXT_IP_BIT : 0));
        size = p->a ? 10 : 6;
        st_le(buf + 2, p->payload, (unsigned)size - 2);
        return size;
    case PTD_PKT_CFE:
        if (p->a > 0x1f || p->aux > 0xff || (p->flags & ~1u))
            return -PTD_ERR_BAD_PACKET;
        buf[2] = (uint8_t)(p->a | ((p->flags & PTD_PKTF_IP) ? 0x80 : 0));
        buf[3] = (uint8_t)p->aux;
        return k->size;
    case PTD_PKT_EVD:
        if (p->a > 0x3f)
            return -PTD_ERR_BAD_PACKET;
        buf[2] = p->a;
        st_le(buf + 3, p->payload, 8);
        return k->size;
    case PTD_PKT_MNT: st_le(buf + 3, p->payload, 8); return k->size;
    case PTD_PKT_TRIG:
        /* byte 1: IP, ICNTV, MULT; byte 2: TRBV; bytes 3-4: ICNT (ICNTV) */
        if ((p->flags & ~(unsigned)(PTD_PKTF_IP | PTD_PKTF_ICNTV | PTD_PKTF_MULT)) ||
            p->aux > 0xffff || (p->aux && !(p->flags & PTD_PKTF_ICNTV)))
            return -PTD_ERR_BAD_PACKET;
        buf[1] = (uint8_t)(((p->flags & PTD_PKTF_IP) ? PTD_TRIG_IP_BIT : 0) |
                           ((p->flags & PTD_PKTF_ICNTV) ? PTD_TRIG_ICNTV_BIT : 0) |
                           ((p->flags & PTD_PKTF_MULT) ? PTD_TRIG_MULT_BIT : 0));
        buf[2] = p->a;
        if (!(p->flags & PTD_PKTF_ICNTV))
            return PTD_TRIG_SIZE;
        st_le(buf + PTD_TRIG_SIZE, p->aux, PTD_TRIG_ICNT_SIZE - PTD_TRIG_SIZE);
        return PTD_TRIG_ICNT_SIZE;
    default: return -PTD_ERR_BAD_OPC;
    }
}

int ptd_enc_packet(uint8_t *out, size_t cap, const struct ptd_pkt *p)
{
    static int (*const groups[])(uint8_t *, const struct ptd_pkt_kind_info *,
                                 const struct ptd_pkt *) = {
        enc_flow, enc_state, enc_timing, enc_power, enc_pebs, enc_data,
    };
    const struct ptd_pkt_kind_info *k;
    uint8_t buf[PTD_PKT_MAX_SIZE];
    unsigned i;
    int size;

    if (!out || !p)
        return -PTD_ERR_INVALID;
    if (p->kind == PTD_PKT_NONE || p->kind >= PTD_PKT_KIND_COUNT)
        return -PTD_ERR_BAD_OPC;
    k = &ptd_pkt_kinds[p->kind];

    /* opcode bytes from the table; variable bits are or-ed in by kind */
    for (i = 0; i < sizeof buf; i++)
        buf[i] = 0;
    buf[0] = k->opc;
    if (k->opc == PTD_OPC_EXT)
        buf[1] = k->ext;
    if (k->ext2)
        buf[2] = k->ext2;
    switch (p->kind) {
    case PTD_PKT_PAD:
    case PTD_PKT_PSBEND:
    case PTD_PKT_OVF:
    case PTD_PKT_STOP: size = k->size; break;
    case PTD_PKT_PSB:
        for (i = 0; i < PTD_PSB_SIZE; i += 2) {
            buf[i] = PTD_OPC_EXT;
            buf[i + 1] = PTD_EXT_PSB;
        }
        size = k->size;
        break;
    default:
        size = -PTD_ERR_BAD_OPC;
        for (i = 0; i < sizeof groups / sizeof groups[0] && size == -PTD_ERR_BAD_OPC; i++)
            size = groups[i](buf, k, p);
        break;
    }
    if (size < 0)
        return size;
    if (cap < (size_t)size)
        return -PTD_ERR_NOSPC;
    for (i = 0; i < (unsigned)size; i++)
        out[i] = buf[i];
    return size;
}

int ptd_enc_init(struct ptd_encoder *e, uint8_t *buf, size_t size)
{
    /* A buffer is required even when size is 0: no arithmetic on a null
     * pointer, and no writable static to stand in for one (decoder/ keeps
     * no mutable global state). */
    if (!e || !buf)
        return -PTD_ERR_INVALID;
    e->begin = buf;
    e->end = buf + size;
    e->pos = buf;
    return 0;
}

int ptd_enc_next(struct ptd_encoder *e, const struct ptd_pkt *p)
{
    int n;

    if (!e)
        return -PTD_ERR_INVALID;
    n = ptd_enc_packet(e->pos, (size_t)(e->end - e->pos), p);
    if (n > 0)
        e->pos += n;
    return n;
}

uint64_t ptd_enc_offset(const struct ptd_encoder *e)
{
    return (uint64_t)(e->pos - e->begin);
}

unsigned ptd_enc_ip_compress(uint64_t last_ip, int have_last, uint64_t ip, uint64_t *payload)
{
    if (have_last) {
        if ((last_ip >> 16) == (ip >> 16)) {
            *payload = ip & 0xffff;
            return PTD_IPC_UPDATE_16;
        }
        if ((last_ip >> 32) == (ip >> 32)) {
            *payload = ip & 0xffffffff;
            return PTD_IPC_UPDATE_32;
        }
    }
    if (ptd_sext48(ip) == ip) {
        *payload = ip & 0xffffffffffffull;
        return PTD_IPC_SEXT_48;
    }
    if (have_last && (last_ip >> 48) == (ip >> 48)) {
        *payload = ip & 0xffffffffffffull;
        return PTD_IPC_UPDATE_48;
    }
    *payload = ip;
    return PTD_IPC_FULL;
}
