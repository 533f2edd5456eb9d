/* libptd packet layer: every Intel PT packet (Intel SDM Vol. 3C, chapter
 * "Intel Processor Trace", section "Trace Packets and Data Types"), decoded
 * from a caller's buffer without allocation, plus PSB synchronisation and
 * last-IP reconstruction.
 *
 * Freestanding C11: only <stdint.h>, <stddef.h>, <stdbool.h>.
 *
 * Usage:
 *     struct ptd_pkt_decoder d;
 *     struct ptd_pkt p;
 *     ptd_pkt_init(&d, buf, size);
 *     ptd_pkt_sync_forward(&d);                 // or ptd_pkt_sync_set(&d, 0)
 *     for (;;) {
 *         uint64_t off = ptd_pkt_offset(&d);
 *         int n = ptd_pkt_next(&d, &p);
 *         if (n == -PTD_ERR_EOS) break;         // clean end of the buffer
 *         if (n < 0) {                          // error at `off`
 *             uint64_t skipped;
 *             if (ptd_pkt_resync(&d, &skipped) < 0) break;
 *             continue;
 *         }
 *         ...                                   // p.kind, p.payload, ...
 *     }
 */
#ifndef PTD_PKT_H
#define PTD_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_err.h"
#include "decoder/ptd_errata.h"
#include "decoder/ptd_hints.h"

/* Packet kinds. One entry each in ptd_pkt_kinds[] below. */
enum ptd_pkt_kind {
    PTD_PKT_NONE = 0,
    PTD_PKT_PAD,
    PTD_PKT_PSB,
    PTD_PKT_PSBEND,
    PTD_PKT_TNT8,
    PTD_PKT_TNT64,
    PTD_PKT_TIP,
    PTD_PKT_TIP_PGE,
    PTD_PKT_TIP_PGD,
    PTD_PKT_FUP,
    PTD_PKT_MODE_EXEC,
    PTD_PKT_MODE_TSX,
    PTD_PKT_PIP,
    PTD_PKT_TSC,
    PTD_PKT_MTC,
    PTD_PKT_TMA,
    PTD_PKT_CYC,
    PTD_PKT_VMCS,
    PTD_PKT_OVF,
    PTD_PKT_CBR,
    PTD_PKT_STOP, /* TraceStop */
    PTD_PKT_PTW,
    PTD_PKT_MWAIT,
    PTD_PKT_PWRE,
    PTD_PKT_PWRX,
    PTD_PKT_EXSTOP,
    PTD_PKT_BBP,
    PTD_PKT_BIP,
    PTD_PKT_BEP,
    PTD_PKT_CFE,
    PTD_PKT_EVD,
    PTD_PKT_MNT,
    PTD_PKT_INVALID, /* a packet an erratum corrupted (SKZ84 TMA) */
    PTD_PKT_TRIG,    /* Trigger Tracing (after INVALID: the kinds before it
                        are libipt 2.0's, which random tests draw from) */
    PTD_PKT_KIND_COUNT
};

/* Architectural opcode bytes (SDM "Trace Packets and Data Types"). */
enum {
    PTD_OPC_PAD = 0x00,
    PTD_OPC_EXT = 0x02,     /* first byte of every 2-byte opcode */
    PTD_OPC_TIP_PGD = 0x01, /* low 5 bits; IPBytes in bits 7:5 */
    PTD_OPC_TIP = 0x0d,
    PTD_OPC_TIP_PGE = 0x11,
    PTD_OPC_FUP = 0x1d,
    PTD_OPC_IP_MASK = 0x1f,
    PTD_OPC_TSC = 0x19,
    PTD_OPC_MTC = 0x59,
    PTD_OPC_MODE = 0x99,
    PTD_OPC_CYC = 0x03, /* bits 1:0 = 11 */
    PTD_OPC_CYC_MASK = 0x03,
    PTD_OPC_BIP = 0x04, /* bits 2:0 = 100, inside a BBP block only */
    PTD_OPC_BIP_MASK = 0x07,
    PTD_OPC_TRIG = 0xd9,

    PTD_EXT_PSB = 0x82,
    PTD_EXT_PSBEND = 0x23,
    PTD_EXT_OVF = 0xf3,
    PTD_EXT_TNT64 = 0xa3,
    PTD_EXT_PIP = 0x43,
    PTD_EXT_CBR = 0x03,
    PTD_EXT_TMA = 0x73,
    PTD_EXT_VMCS = 0xc8,
    PTD_EXT_STOP = 0x83,
    PTD_EXT_MNT = 0xc3, /* followed by PTD_EXT2_MNT */
    PTD_EXT2_MNT = 0x88,
    PTD_EXT_EXSTOP = 0x62, /* bit 7: IP */
    PTD_EXT_MWAIT = 0xc2,
    PTD_EXT_PWRE = 0x22,
    PTD_EXT_PWRX = 0xa2,
    PTD_EXT_PTW = 0x12, /* low 5 bits; bits 6:5 PayloadBytes, bit 7 IP */
    PTD_EXT_PTW_MASK = 0x1f,
    PTD_EXT_BBP = 0x63,
    PTD_EXT_BEP = 0x33, /* bit 7: IP */
    PTD_EXT_CFE = 0x13,
    PTD_EXT_EVD = 0x53,
    PTD_EXT_IP_BIT = 0x80, /* EXSTOP, BEP, PTW */
};

/* CFE types (SDM "Control Flow Event (CFE) Packet"; FRED added software
 * interrupts and system calls). */
enum ptd_cfe_type {
    PTD_CFE_INTR = 1, /* interrupt or exception; vector */
    PTD_CFE_IRET = 2,
    PTD_CFE_SMI = 3,
    PTD_CFE_RSM = 4,
    PTD_CFE_SIPI = 5, /* vector */
    PTD_CFE_INIT = 6,
    PTD_CFE_VMENTRY = 7,
    PTD_CFE_VMEXIT = 8,
    PTD_CFE_VMEXIT_INTR = 9, /* a VM exit caused by an interrupt; vector */
    PTD_CFE_SHUTDOWN = 10,
    PTD_CFE_UINTR = 12, /* user interrupt; vector */
    PTD_CFE_UIRET = 13,
    PTD_CFE_SWINTR = 14,  /* INT n, INT3, INT1, INTO; vector */
    PTD_CFE_SYSCALL = 15, /* SYSCALL, SYSENTER */
};

/* EVD types (SDM "Event Data (EVD) Packet"): what the data is. */
enum ptd_evd_type {
    PTD_EVD_CR2 = 0,  /* page-fault linear address */
    PTD_EVD_VMXQ = 1, /* VM-exit qualification */
    PTD_EVD_VMXR = 2, /* VM-exit reason */
};

/* TRIG (SDM "Trigger Tracing"): byte 1 flags, byte 2 the trigger bit
 * vector (TRBV), bytes 3-4 the instruction count when ICNTV is set. */
enum {
    PTD_TRIG_IP_BIT = 0x80,    /* a FUP follows with the trigger's IP */
    PTD_TRIG_ICNTV_BIT = 0x40, /* ICNT is valid (and present) */
    PTD_TRIG_MULT_BIT = 0x20,  /* more triggers fired than TRBV reports */
    PTD_TRIG_SIZE = 3,
    PTD_TRIG_ICNT_SIZE = 5,
};

/* IPBytes values (SDM table "Compressed IP Payload Format"). */
enum ptd_ipc {
    PTD_IPC_SUPPRESSED = 0,
    PTD_IPC_UPDATE_16 = 1,
    PTD_IPC_UPDATE_32 = 2,
    PTD_IPC_SEXT_48 = 3,
    PTD_IPC_UPDATE_48 = 4,
    PTD_IPC_FULL = 6,
};

/* Sizes of the fixed-size packets, in bytes. */
enum {
    PTD_PSB_SIZE = 16,
    PTD_PSB_REPEAT = 8, /* PSB = 8 x (0x02 0x82) */
};

/* Flag bits of struct ptd_pkt.flags. */
enum {
    PTD_PKTF_IP = 0x01,      /* EXSTOP, PTW, BEP, CFE, TRIG: FUP follows */
    PTD_PKTF_CSL = 0x01,     /* MODE.Exec CS.L (and LMA) */
    PTD_PKTF_CSD = 0x02,     /* MODE.Exec CS.D */
    PTD_PKTF_IF = 0x04,      /* MODE.Exec RFLAGS.IF (newer CPUs) */
    PTD_PKTF_INTX = 0x01,    /* MODE.TSX InTX */
    PTD_PKTF_ABRT = 0x02,    /* MODE.TSX TXAbort */
    PTD_PKTF_NR = 0x01,      /* PIP: non-root */
    PTD_PKTF_HW = 0x01,      /* PWRE: hardware-initiated */
    PTD_PKTF_HW_BIT3 = 0x02, /* PWRE, encoder only: HW in bit 3 (libipt) */
    PTD_PKTF_SZ4 = 0x01,     /* BBP: BIP payloads are 4 bytes */
    PTD_PKTF_ICNTV = 0x02,   /* TRIG: aux holds a valid ICNT */
    PTD_PKTF_MULT = 0x04,    /* TRIG: other triggers fired too */
    /* PWRX wake reasons, as in the packet (byte 3, bits 3:0) */
    PTD_PKTF_WR_INT = 0x01,
    PTD_PKTF_WR_TIMER = 0x02,
    PTD_PKTF_WR_STORE = 0x04,
    PTD_PKTF_WR_HW = 0x08,
};

/* One decoded packet. Field use per kind:
 *   TNT8/TNT64  payload: the bits, oldest in bit (a-1); a: number of bits
 *   TIP/TIP.PGE/TIP.PGD/FUP  payload: the IP bytes as in the packet,
 *               zero-extended; a: IPBytes (enum ptd_ipc)
 *   MODE.Exec   flags: CSL/CSD/IF      MODE.TSX  flags: INTX/ABRT
 *   PIP         payload: CR3 (bits 51:5); flags: NR
 *   TSC         payload: TSC[55:0]     MTC      payload: CTC byte
 *   TMA         payload: CTC[15:0]; aux: FastCounter[8:0]
 *   CYC         payload: cycle count   VMCS     payload: VMCS base
 *   CBR         payload: core:bus ratio
 *   PTW         payload; a: PayloadBytes (0: 4 bytes, 1: 8 bytes); flags: IP
 *   MWAIT       payload: hints (32 bits of the packet); aux: extensions
 *   PWRE        a: resolved C-state; aux: sub C-state; flags: HW
 *   PWRX        a: last core C-state; aux: deepest; flags: PTD_PKTF_WR_*
 *   EXSTOP      flags: IP              BEP      flags: IP
 *   BBP         a: type; flags: SZ4    BIP      a: ID; payload
 *   CFE         a: type; aux: vector; flags: IP
 *   EVD         a: type; payload       MNT      payload
 *   TRIG        a: TRBV; aux: ICNT; flags: IP, ICNTV, MULT
 */
struct ptd_pkt {
    uint64_t payload;
    union {
        struct {
            uint32_t aux;
            uint8_t kind; /* enum ptd_pkt_kind */
            uint8_t size; /* bytes in the trace */
            uint8_t a;
            uint8_t flags;
        };
        uint64_t meta; /* the fields above as one word (fast path) */
    };
};

/* The value of ptd_pkt.meta for given fields (little-endian layout). */
#define PTD_PKT_META(aux, kind, size, a, flags)                       \
    ((uint64_t)(uint32_t)(aux) | (uint64_t)(uint8_t)(kind) << 32 |    \
     (uint64_t)(uint8_t)(size) << 40 | (uint64_t)(uint8_t)(a) << 48 | \
     (uint64_t)(uint8_t)(flags) << 56)

/* How the payload of a kind is laid out in the packet. */
enum ptd_pkt_layout {
    PTD_LAYOUT_NONE,    /* opcode only */
    PTD_LAYOUT_TNT8,    /* bits in the opcode byte, stop bit */
    PTD_LAYOUT_IP,      /* IPBytes in opcode bits 7:5, 0..8 bytes */
    PTD_LAYOUT_VALUE,   /* little-endian value of plsize bytes */
    PTD_LAYOUT_CYC,     /* variable-length, Exp bits */
    PTD_LAYOUT_SPECIAL, /* own bit fields (see ptd_pkt.c) */
};

/* One row of the table of packet kinds, shared by decoder, encoder and
 * formatter. */
struct ptd_pkt_kind_info {
    const char *name; /* ptdump's opcode column */
    uint8_t opc;      /* first byte (fixed bits) */
    uint8_t opc_mask; /* which bits of the first byte are fixed */
    uint8_t ext;      /* second byte (fixed bits), 2-byte opcodes */
    uint8_t ext_mask; /* 0 for 1-byte opcodes */
    uint8_t ext2;     /* third opcode byte (MNT) or 0 */
    uint8_t hdr;      /* opcode bytes before the payload */
    uint8_t plsize;   /* payload bytes (0: depends on the packet) */
    uint8_t size;     /* total size, 0 if variable */
    uint8_t layout;   /* enum ptd_pkt_layout */
};

extern const struct ptd_pkt_kind_info ptd_pkt_kinds[PTD_PKT_KIND_COUNT];

/* Size of an IP payload for an IPBytes value, or -1 if reserved. */
int ptd_ipc_size(unsigned ipc);

/* The decoder. Plain data; the caller owns it (stack or static). */
struct ptd_pkt_decoder {
    const uint8_t *begin;
    const uint8_t *end;
    const uint8_t *pos;  /* next packet */
    const uint8_t *sync; /* last synchronisation point, or NULL */
    uint8_t in_block;    /* between BBP and BEP: BIP packets possible */
    uint8_t block_sz4;   /* BIP payload is 4 bytes (else 8) */
    uint16_t errata;     /* PTD_ERRATUM_* workarounds in effect */
    uint8_t libipt20;    /* decode only the packets libipt 2.0 knows */
    uint8_t pwre_bit3;   /* PWRE's HW flag from bit 3 (libipt), not bit 7 */
    uint8_t no_pebs;     /* BBP, BIP, BEP are unknown opcodes */
};

int ptd_pkt_init(struct ptd_pkt_decoder *d, const uint8_t *buf, size_t size);

/* Errata workarounds (decoder/ptd_errata.h; libipt applies them for
 * ptdump's --cpu f/m):
 * SKZ84: a TMA with reserved bits set decodes as a PTD_PKT_INVALID packet
 *        of 8 bytes (the TMA and the bogus byte after it), not an error;
 * SKD007: a 2-byte CYC whose second byte is OVF's first, followed by OVF's
 *        second byte, decodes as that OVF: reported at the CYC's offset,
 *        3 bytes long in the trace (the return value), size 2 (as current
 *        libipt; 2.0 left it to the query layer: not in libipt20 mode). */
void ptd_pkt_set_errata(struct ptd_pkt_decoder *d, unsigned errata);

/* Decode as libipt 2.0 does: CFE, EVD, BBP, BEP and TRIG (newer than
 * libipt 2.0) are unknown opcodes, SKD007 is left to the layers above, and
 * PWRE's HW flag is read from byte 2 bit 3. For byte-identical dumps with
 * libipt 2.0's ptdump. */
void ptd_pkt_set_libipt20(struct ptd_pkt_decoder *d, int on);

/* BBP, BIP and BEP (PEBS records in the trace, SDM "PEBS via Intel PT")
 * as unknown opcodes, as libipt (current and 2.0) decodes them: for the
 * flow, which follows libipt there (the dump decodes them). */
void ptd_pkt_set_pebs(struct ptd_pkt_decoder *d, int on);

/* Read PWRE's HW flag from byte 2 bit 3, as libipt does (and its encoder
 * writes it), instead of bit 7 where the SDM's PWRE table puts it. */
void ptd_pkt_set_pwre_bit3(struct ptd_pkt_decoder *d, int on);

/* Decode the packet at the current position into *p and move past it.
 * Returns the bytes it took (> 0; p->size but for SKD007's OVF); -PTD_ERR_EOS at the end of the buffer; or another
 * negative error, the position staying at the bad packet (its offset is
 * ptd_pkt_offset()). */
int ptd_pkt_next(struct ptd_pkt_decoder *d, struct ptd_pkt *p);

/* ptd_pkt_next's fast path, inline for the query layer's packet loop: the
 * packet at pos into *p, returning its size; 0 when the general decode
 * must handle it (not a fast packet, inside a BBP block, or too close to
 * the end of the buffer for the 8-byte payload load). Its tables (the
 * packet, payload mask and size per first byte) are in ptd_pkt.c. */
extern const struct ptd_pkt ptd_pkt_fast_pkt[256];
/* Little-endian load of 8 bytes (the caller checked the bounds): plain
 * loads once the compiler has merged them. */
static inline uint64_t ptd_pkt_ld_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}
extern const uint64_t ptd_pkt_fast_mask[256];
extern const uint8_t ptd_pkt_fast_size[256];
/* The bytes the fast path needs from the packet on: the opcode and the
 * 8-byte payload load. */
#define PTD_PKT_FAST_BYTES 9u
static PTD_ALWAYS_INLINE unsigned ptd_pkt_decode_fast(const uint8_t *pos, const uint8_t *end,
                                                      uint8_t in_block, struct ptd_pkt *p)
{
    unsigned b, n;

    if ((size_t)(end - pos) < PTD_PKT_FAST_BYTES || in_block)
        return 0;
    b = pos[0];
    n = ptd_pkt_fast_size[b];
    if (!n)
        return 0;
    p->payload = ptd_pkt_fast_pkt[b].payload | (ptd_pkt_ld_le64(pos + 1) & ptd_pkt_fast_mask[b]);
    p->meta = ptd_pkt_fast_pkt[b].meta;
    return n;
}

/* Decode up to max packets into out[]. Returns how many were decoded (>= 0)
 * and stores 0 or the error that stopped it (negative, -PTD_ERR_EOS at the
 * end) in *status. offsets, when not NULL, receives each packet's offset.
 * The fast path of the decoder: no call per packet. It may write scratch
 * into out[] and offsets[] past the count it returns (up to max). */
size_t ptd_pkt_next_batch(struct ptd_pkt_decoder *d, struct ptd_pkt *out, uint64_t *offsets,
                          size_t max, int *status);

uint64_t ptd_pkt_offset(const struct ptd_pkt_decoder *d);

/* Synchronise at the next PSB after the current position (after the last
 * sync point), as libipt's pt_pkt_sync_forward() does, so both agree on
 * where decoding resumes: within a run of the PSB pattern it takes the last
 * complete PSB. Returns 0 or -PTD_ERR_EOS when there is none. */
int ptd_pkt_sync_forward(struct ptd_pkt_decoder *d);

/* Set the position (and sync point) to an offset without checking for PSB. */
int ptd_pkt_sync_set(struct ptd_pkt_decoder *d, uint64_t offset);

/* After an error: ptd_pkt_sync_forward(), reporting in *skipped how many
 * bytes from the failed packet to the PSB were not decoded. */
int ptd_pkt_resync(struct ptd_pkt_decoder *d, uint64_t *skipped);

/* Plain search: offset of the first complete PSB at or after `from`, or
 * -PTD_ERR_EOS. */
int64_t ptd_psb_find(const uint8_t *buf, size_t size, size_t from);

/* Last-IP reconstruction (SDM "IP Compression"). */
struct ptd_last_ip {
    uint64_t ip;
    uint8_t have_ip;
    uint8_t suppressed;
};

void ptd_last_ip_init(struct ptd_last_ip *l);
/* Apply an IP packet. Returns 0, or -PTD_ERR_BAD_PACKET for a reserved
 * IPBytes (101, 111). */
int ptd_last_ip_update(struct ptd_last_ip *l, unsigned ipc, uint64_t payload);
/* The current IP: 0, -PTD_ERR_NOIP or -PTD_ERR_IP_SUPPRESSED. */
int ptd_last_ip_query(const struct ptd_last_ip *l, uint64_t *ip);

/* Sign-extend bit 47 (IPBytes 011). */
static inline uint64_t ptd_sext48(uint64_t v)
{
    return (v & (1ull << 47)) ? (v | 0xffff000000000000ull) : (v & 0x0000ffffffffffffull);
}

#endif
