/* libptd ILD: the complete decoder, for every encoding and any input size.
 * ptd_ild_decode() (ptd_ild.c) hands it whatever its fast path does not
 * take; the differential test keeps the two identical.
 *
 * An instruction is (SDM Vol. 2, 2.1, Figure 2-1):
 *   legacy prefixes | REX | opcode (1-3 bytes) | ModRM | SIB | disp | imm
 * or, for the other encodings, a prefix that carries the map in place of
 * the 0F escapes: REX2 (APX spec, "REX2 prefix": maps 0 and 1), VEX (SDM
 * 2.3), EVEX (2.7; APX: EVEX map 4) or XOP (AMD APM Vol. 3, 1.8). The
 * decoder walks those parts once, one stage each: prefixes, opcode and
 * map, ModRM, SIB and displacement, the prefix rules, the immediate. The
 * stages share one struct ild_dec; they are inlined into
 * ptd_ild_decode_full(), so its fields stay in registers. */
#include "decoder/ptd_ild_full.h"

/* VEX/EVEX/XOP payload fields (SDM Vol. 2, 2.3.5.1, 2.7.1; APX spec). */
#define VEX3_MAP_MASK 0x1F /* C4 byte 1: m-mmmm */
#define XOP_MAP_MIN   8    /* XOP map_select 8..0Ah; POP uses reg=0 */
#define EVEX_P0_MAP   0x07 /* P0[2:0]: mmm */
#define EVEX_P0_B4    0x08 /* P0[3]: APX's B4; reserved 0 outside 64-bit mode */
#define EVEX_P1_W     0x80 /* P1[7]: W */
#define EVEX_P1_U     0x04 /* P1[2]: APX's X4 (inverted); 1 outside 64-bit mode */
#define EVEX_P1_PP    0x03 /* P1[1:0]: pp; 01 = 66 */
#define VEX_PP_66     0x01

/* REX2 (APX spec): JMPABS is REX2 with M0=0 and W=0, opcode A1. */
#define OPC_JMPABS 0xA1

/* The maps whose every instruction is 64-bit-mode only: APX's EVEX map 4
 * and the AMX/USER_MSR/MSR_IMM maps (Intel XED: "mode64" throughout). */
#define ILD_MAPS_64_ONLY                                                                           \
    ((1u << PTD_ILD_MAP_VEX_MAP5) | (1u << PTD_ILD_MAP_VEX_MAP7) | (1u << PTD_ILD_MAP_EVEX_MAP4) | \
     (1u << PTD_ILD_MAP_EVEX_MAP7))

/* The immediate kinds that are a near-branch displacement. */
#define ILD_REL_KINDS ((1u << I_REL8) | (1u << I_RELZ) | (1u << I_RELZ_XBEGIN))

/* The decoder's state, stage to stage. It never leaves
 * ptd_ild_decode_full() (the rare parts, out of line, get the bytes and
 * hand back a struct ild_esc), so the compiler keeps it in registers. */
struct ild_dec {
    const uint8_t *bytes;
    size_t avail;      /* bytes that may be read: min(size, 15) */
    size_t pos;        /* the next byte */
    size_t prefix_len; /* legacy and REX prefix bytes (not REX2, VEX...) */
    unsigned pf;       /* PF_* prefix bits */
    unsigned rep;      /* the last F2/F3 byte */
    unsigned rex;      /* the last REX byte (PF_REX) or the REX2 payload */
    unsigned map, op;  /* enum ptd_ild_map, opcode byte in it */
    unsigned modrm;    /* when ILD_M */
    unsigned form;     /* ModRM as its addressing form: mod forced to 11
                          for ILD_REGONLY */
    unsigned flags;    /* PTD_INSN_* found on the way (VEX, REX2) */
    uint16_t e;        /* the opcode's entry (ptd_ild_tables.h) */
    bool m64;
};

/* Stage 1: legacy prefixes and REX (SDM Vol. 2, 2.1.1, 2.2.1): any
 * number, in any order, up to the 15-byte limit. A REX prefix counts only
 * when it is the last prefix before the opcode (2.2.1: "Other placements
 * are ignored"): every prefix clears the REX bits first. Of F2/F3 the last
 * one counts. */
ILD_STAGE int ild_prefixes(struct ild_dec *d)
{
    const uint8_t *pt = ptd_ild_prefix_bits[d->m64];
    unsigned b = d->bytes[0], k;

    while ((k = pt[b]) != 0) {
        d->pf = (d->pf & ~(PF_REX | PF_W)) | k;
        d->rep = (k & PF_REP) ? b : d->rep;
        d->rex = (k & PF_REX) ? b : d->rex;
        if (++d->pos >= d->avail)
            return ptd_ild_short(d->pos);
        b = d->bytes[d->pos];
    }
    d->prefix_len = d->pos;
    return 0;
}

/* Stage 2a: 0F, 0F 38, 0F 3A (SDM Vol. 2, A.2). */
ILD_STAGE int ild_escape_0f(struct ild_dec *d)
{
    if (d->pos >= d->avail)
        return ptd_ild_short(d->pos);
    unsigned op = d->bytes[d->pos++];
    d->map = PTD_ILD_MAP_0F;
    d->e = ptd_ild_map_0f[op];
    if (op == OPC_ESC_0F38 || op == OPC_ESC_0F3A) {
        if (d->pos >= d->avail)
            return ptd_ild_short(d->pos);
        d->map = op == OPC_ESC_0F38 ? PTD_ILD_MAP_0F38 : PTD_ILD_MAP_0F3A;
        op = d->bytes[d->pos++];
        d->e = (d->map == PTD_ILD_MAP_0F38 ? ptd_ild_map_0f38 : ptd_ild_map_0f3a)[op];
    }
    d->op = op;
    return 0;
}

/* What the out-of-line escapes below decoded: the opcode, its map and
 * entry, and what they add to the prefix bits, REX and flags. */
struct ild_esc {
    unsigned map, op, rex, pf, flags;
    uint16_t e;
};

/* Stage 2b: REX2 (D5 in 64-bit mode; APX spec, "REX2 prefix"): a payload
 * byte, M0 selecting map 0 or map 1 (0F), then the opcode. It is #UD after
 * a REX prefix, before another prefix or escape, and with the opcode rows
 * of ptd_ild_rex2_bad_rows; 8F after it is POP, never XOP. A1 with W=0
 * and no 66/67/F2/F3 is JMPABS: a 64-bit absolute target that the CPU
 * still reports with a TIP, so it is an INDIRECT_JUMP here. pos is after
 * the D5; returns the position after the opcode, or an error. */
PTD_NOINLINE static int ild_rex2(const uint8_t *bytes, size_t avail, size_t pos, unsigned pf,
                                 struct ild_esc *x)
{
    if (pf & PF_REX)
        return -PTD_ILD_ERR_BAD_INSN;
    if (pos + 1 >= avail)
        return ptd_ild_short(pos + 1);
    unsigned p = bytes[pos], op = bytes[pos + 1];
    unsigned map = (p & REX2_M0) ? PTD_ILD_MAP_0F : PTD_ILD_MAP_PRIMARY;
    uint16_t e = (map == PTD_ILD_MAP_0F ? ptd_ild_map_0f : ptd_ild_map_primary)[op];

    if (map == PTD_ILD_MAP_PRIMARY && op == OPC_JMPABS && !(p & REX_W) &&
        !(pf & (PF_OSZ | PF_ASZ | PF_REP)))
        e = I_ABS | ILD_CLASS(PTD_ICLASS_INDIRECT_JUMP);
    else if (((ptd_ild_rex2_bad_rows[map] >> (op >> 4)) & 1u) ||
             (map == PTD_ILD_MAP_PRIMARY && ptd_ild_prefix_bits[1][op] != 0) ||
             ((e & ILD_ESC) && op != OPC_XOP))
        return -PTD_ILD_ERR_BAD_INSN;
    x->map = map;
    x->op = op;
    x->e = (uint16_t)(e & ~ILD_ESC);
    x->rex = p;
    x->pf = (p & REX_W) ? PF_W : 0; /* no PF_W before: REX is #UD here */
    x->flags = PTD_INSN_REX2;
    return (int)pos + 2;
}

/* Stage 2c: C4/C5/62/8F: a VEX/EVEX/XOP prefix, or the legacy instruction
 * (LES, LDS, BOUND outside 64-bit mode when ModRM.mod != 11, SDM Vol. 2,
 * 2.3.5 and 2.7.1; POP r/m when XOP.map_select < 8, AMD APM Vol. 3, 1.8).
 * pos is after the C4/C5/62/8F byte; returns the position after the
 * opcode (x filled), pos itself for the legacy instruction, or an error. */
PTD_NOINLINE static int ild_vector(const uint8_t *bytes, size_t avail, size_t pos, unsigned pf,
                                   bool m64, struct ild_esc *x)
{
    size_t op_pos = pos - 1;
    unsigned b = bytes[op_pos];
    if (pos >= avail)
        return ptd_ild_short(pos);
    unsigned p0 = bytes[pos];
    bool is_vec =
        (b == OPC_XOP) ? (p0 & VEX3_MAP_MASK) >= XOP_MAP_MIN : (m64 || MODRM_MOD(p0) == MOD_REG);
    if (!is_vec)
        return (int)pos;
    /* 2.3.2, 2.7: a VEX/EVEX prefix after 66, F2, F3, F0 or REX is #UD
     * (AMD: the same for XOP). */
    if (pf & (PF_OSZ | PF_LOCK | PF_REP | PF_REX))
        return -PTD_ILD_ERR_BAD_INSN;
    unsigned n, map;
    x->pf = 0;
    if (b == OPC_VEX2) {
        n = 2;
        map = PTD_ILD_MAP_VEX_0F;
    } else if (b == OPC_EVEX) {
        /* 62 P0 P1 P2: the map is P0[2:0]. In 64-bit mode APX made P0[3]
         * B4 and P1[2] (formerly "must be 1") X4: neither changes the
         * length. Outside it both keep their old rule. */
        n = 4;
        if (pos + 1 >= avail)
            return ptd_ild_short(pos + 1);
        unsigned p1 = bytes[pos + 1];
        map = ptd_ild_evex_map[p0 & EVEX_P0_MAP];
        if (map == PTD_ILD_MAP_PRIMARY || (!m64 && ((p0 & EVEX_P0_B4) || !(p1 & EVEX_P1_U))))
            return -PTD_ILD_ERR_BAD_INSN;
        if (map == PTD_ILD_MAP_EVEX_MAP4) /* promoted integer instructions:
                                             W and pp=01 set the size */
            x->pf = ((p1 & EVEX_P1_W) ? PF_W : 0) | ((p1 & EVEX_P1_PP) == VEX_PP_66 ? PF_OSZ : 0);
    } else {
        unsigned mm = p0 & VEX3_MAP_MASK;
        n = 3;
        if (b == OPC_VEX3)
            map = ptd_ild_vex_map[mm];
        else
            map = mm <= XOP_MAP_MIN + 2 ? PTD_ILD_MAP_XOP8 + mm - XOP_MAP_MIN : 0;
        if (map == PTD_ILD_MAP_PRIMARY)
            return -PTD_ILD_ERR_BAD_INSN;
    }
    if (!m64 && ((ILD_MAPS_64_ONLY >> map) & 1u))
        return -PTD_ILD_ERR_BAD_INSN;
    pos = op_pos + n;
    if (pos >= avail)
        return ptd_ild_short(pos);
    x->map = map;
    x->op = bytes[pos];
    x->e = ptd_ild_vector_entry(map, x->op);
    x->rex = 0;
    x->flags = PTD_INSN_VEX;
    return (int)pos + 1;
}

/* Stage 2: the opcode, its map and its table entry. */
ILD_STAGE int ild_opcode(struct ild_dec *d)
{
    unsigned b = d->bytes[d->pos++];
    d->map = PTD_ILD_MAP_PRIMARY;
    d->op = b;
    d->e = ptd_ild_map_primary[b];
    if (d->e & ILD_ESC) {
        if (b == OPC_ESC_0F) {
            int r = ild_escape_0f(d);
            if (r < 0)
                return r;
        } else if (b != PFX_REX2 || d->m64) { /* D5: AAD ib outside 64-bit mode */
            struct ild_esc x;
            int r = b == PFX_REX2 ? ild_rex2(d->bytes, d->avail, d->pos, d->pf, &x)
                                  : ild_vector(d->bytes, d->avail, d->pos, d->pf, d->m64, &x);
            if (r < 0)
                return r;
            if ((size_t)r != d->pos) {
                d->pos = (size_t)r;
                d->map = x.map;
                d->op = x.op;
                d->e = x.e;
                d->rex = x.rex;
                d->pf |= x.pf;
                d->flags |= x.flags;
            }
        }
    }
    if (d->e & (ILD_INV | (d->m64 ? ILD_I64 : 0)))
        return -PTD_ILD_ERR_BAD_INSN;
    return 0;
}

/* Stage 3: ModRM, and the groups it decides (ptd_ild_group). */
ILD_STAGE int ild_modrm(struct ild_dec *d)
{
    if (!(d->e & ILD_M))
        return 0;
    if (d->pos >= d->avail)
        return ptd_ild_short(d->pos);
    d->modrm = d->bytes[d->pos++];
    d->form = d->modrm;
    if (d->e & (ILD_GRP | ILD_NOREG | ILD_REGONLY)) {
        if (d->e & ILD_GRP) {
            unsigned rx = (d->flags & PTD_INSN_REX2) ? (d->rex | ILD_RX_REX2)
                          : (d->pf & PF_REX)         ? d->rex
                                                     : 0;
            d->e = ptd_ild_group(d->map, d->op, d->modrm, ptd_ild_mandatory(d->pf, d->rep),
                                 rx | (d->m64 ? ILD_RX_M64 : 0), d->e);
            if (d->e == 0)
                return -PTD_ILD_ERR_BAD_INSN;
        }
        if ((d->e & ILD_NOREG) && MODRM_MOD(d->modrm) == MOD_REG)
            return -PTD_ILD_ERR_BAD_INSN;
        if (d->e & ILD_REGONLY)
            d->form |= MOD_REG << 6;
    }
    return 0;
}

/* Stage 4: SIB and displacement (SDM Vol. 2, Tables 2-1 to 2-3): the bytes
 * after ModRM by its addressing form; with SIB and mod=00, SIB.base=101
 * adds a disp32. */
ILD_STAGE int ild_sib_disp(struct ild_dec *d, unsigned ctx)
{
    if (!(d->e & ILD_M))
        return 0;
    unsigned x = ptd_ild_modrm_extra[ptd_ild_addrsize[ctx] == 16][d->form];
    if (x & ILD_SIB0) {
        if (d->pos >= d->avail)
            return ptd_ild_short(d->pos);
        x = (x & ~ILD_SIB0) + (MODRM_RM(d->bytes[d->pos]) == SIB_BASE_NONE ? 4 : 0);
    }
    d->pos += x;
    return 0;
}

/* Stage 5: the rules on prefixes: the mandatory prefixes of the SSE-era
 * opcodes (SDM Tables ), and LOCK only on the lockable
 * instructions with a memory destination (SDM LOCK: "#UD if ... not one of
 * the instructions listed, or the destination is a register"). */
ILD_STAGE int ild_prefix_rules(const struct ild_dec *d)
{
    if (d->map >= PTD_ILD_MAP_0F && d->map <= PTD_ILD_MAP_0F3A) {
        unsigned rule = (d->map == PTD_ILD_MAP_0F     ? ptd_ild_0f_sse
                         : d->map == PTD_ILD_MAP_0F38 ? ptd_ild_0f38_sse
                                                      : ptd_ild_0f3a_sse)[d->op];
        if (rule && !ptd_ild_sse_ok(rule, d->map == PTD_ILD_MAP_0F ? d->op : 0,
                                    ptd_ild_mandatory(d->pf, d->rep), d->modrm))
            return -PTD_ILD_ERR_BAD_INSN;
    }
    if ((d->pf & PF_LOCK) && (!(d->e & ILD_LK) || MODRM_MOD(d->modrm) == MOD_REG))
        return -PTD_ILD_ERR_BAD_INSN;
    return 0;
}

static inline uint64_t ild_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

/* Stage 6: the immediate (SDM Vol. 2, A.2.2: sizes by kind and context),
 * and what it means for a branch: a near displacement, a far pointer, or
 * JMPABS's absolute address. Returns the length. */
ILD_STAGE int ild_immediate(struct ild_dec *d, struct ptd_insn *insn, unsigned ctx, unsigned *opsz)
{
    const unsigned kind = d->e & ILD_IMM_MASK;
    const size_t len = d->pos + ILD_IMM_SIZE(ctx, kind);
    if (len > d->avail)
        return ptd_ild_short(len > PTD_ILD_MAX_LEN ? len : d->avail);
    if (kind < I_REL8)
        return (int)len;

    const uint8_t *p = d->bytes + d->pos;
    if ((1u << kind) & ILD_REL_KINDS) {
        int32_t disp = kind == I_REL8        ? (int8_t)p[0]
                       : (len - d->pos == 2) ? (int16_t)(uint16_t)ild_le(p, 2)
                                             : (int32_t)(uint32_t)ild_le(p, 4);
        uint64_t t = insn->ip + len + (uint64_t)(int64_t)disp;
        /* Near branches wrap to the operand size (SDM JMP/Jcc/CALL: "IF
         * OperandSize = 16 THEN EIP <- tempEIP AND 0000FFFFH"); XBEGIN does
         * not wrap to 16 bits (SDM XBEGIN); EIP is 32 bits wide. */
        unsigned wrap = d->m64 ? 64 : kind == I_RELZ_XBEGIN ? 32 : *opsz;
        insn->target = wrap == 64 ? t : wrap == 32 ? (t & 0xFFFFFFFFu) : (t & 0xFFFFu);
        insn->disp = disp;
        d->flags |= PTD_INSN_REL;
    } else if (kind == I_PTR) {
        /* ptr16:16 / ptr16:32: the offset, then the selector. */
        size_t o = len - d->pos - 2;
        insn->target = ild_le(p, (unsigned)o);
        insn->far_sel = (uint16_t)ild_le(p + o, 2);
        insn->disp = 0;
        d->flags |= PTD_INSN_FAR_PTR;
    } else if (kind == I_ABS) {
        insn->target = ild_le(p, 8);
        insn->disp = 0;
        d->flags |= PTD_INSN_ABS;
    }
    return (int)len;
}

_Static_assert(I_KINDS <= 16, "immediate kinds fit ILD_IMM_MASK");
_Static_assert(PF_LOCK == PTD_INSN_LOCK && PF_REP == PTD_INSN_REP && PF_REX == PTD_INSN_REX,
               "prefix bits double as insn flags");
_Static_assert((ILD_M >> 4) == PTD_INSN_MODRM && (ILD_PTW >> 11) == PTD_INSN_PTWRITE,
               "entry bits shift onto insn flags");

PTD_NOINLINE int ptd_ild_decode_full(struct ptd_insn *insn, const uint8_t *bytes, size_t size,
                                     enum ptd_exec_mode mode)
{
    if (!insn || (!bytes && size) || (unsigned)mode > PTD_EXEC_MODE_64)
        return -PTD_ILD_ERR_INVALID;
    if (size == 0)
        return -PTD_ILD_ERR_TRUNCATED;

    struct ild_dec d = {
        .bytes = bytes,
        .avail = size < PTD_ILD_MAX_LEN ? size : PTD_ILD_MAX_LEN,
        .m64 = mode == PTD_EXEC_MODE_64,
    };
    int r;
    if ((r = ild_prefixes(&d)) < 0 || (r = ild_opcode(&d)) < 0 || (r = ild_modrm(&d)) < 0)
        return r;
    const unsigned ctx = ILD_CTX_OF((unsigned)mode, d.pf);
    if ((r = ild_sib_disp(&d, ctx)) < 0 || (r = ild_prefix_rules(&d)) < 0)
        return r;

    unsigned iclass = ILD_CLASS_OF(d.e), opsz = ptd_ild_opsize[ctx];
    /* Near branches and returns use 64-bit operand size in 64-bit mode
     * (SDM Vol. 2, 2.2.1.7); Intel CPUs ignore 66 on them (docs/ild.md). */
    if (iclass != PTD_ICLASS_OTHER && iclass <= PTD_ICLASS_NEAR_RET && d.m64)
        opsz = 64;
    int len = ild_immediate(&d, insn, ctx, &opsz);
    if (len < 0)
        return len;

    /* Stage 7: the result. */
    bool rex2 = (d.flags & PTD_INSN_REX2) != 0;
    insn->length = (uint8_t)len;
    insn->iclass = (uint8_t)iclass;
    insn->map = (uint8_t)d.map;
    insn->opcode = (uint8_t)d.op;
    insn->modrm = (uint8_t)d.modrm;
    insn->opsize = (uint8_t)opsz;
    insn->addrsize = ptd_ild_addrsize[ctx];
    insn->prefix_len = (uint8_t)d.prefix_len;
    insn->rex = (uint8_t)(((d.pf & PF_REX) || rex2) ? d.rex : 0);
    insn->rep_byte = (uint8_t)((d.pf & PF_REP) ? d.rep : 0);
    insn->flags = (uint16_t)(d.flags | ((d.e & ILD_M) >> 4) | ((d.e & ILD_PTW) >> 11) |
                             (d.pf & (PF_LOCK | PF_REP | PF_REX)));
    return len;
}
