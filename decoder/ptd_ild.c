/* libptd instruction-length decoder: see ptd_ild.h.
 *
 * An instruction is (SDM Vol. 2, 2.1, Figure 2-1):
 *   legacy prefixes | REX | opcode (1-3 bytes) | ModRM | SIB | disp | imm
 * or, for the vector encodings, a VEX/EVEX/XOP prefix that carries the map
 * in place of the 0F escapes (2.3 VEX, 2.7 EVEX; AMD APM Vol. 3, 1.8 XOP).
 *
 * The decoder walks those parts once. What an opcode needs (ModRM, immediate
 * kind, branch class, validity) comes from one 16-bit entry per opcode in a
 * 256-entry table per legacy map (ptd_ild_tables.c). The few opcodes whose
 * length or class depend on ModRM.reg or on a mandatory prefix carry
 * ILD_GRP and are finished in ptd_ild_group(), off the common path.
 */
#include "decoder/ptd_ild.h"
#include "decoder/ptd_ild_tables.h"

/* Legacy prefix bytes (SDM Vol. 2, 2.1.1) and REX (2.2.1). */
#define PFX_LOCK  0xF0
#define PFX_REPNE 0xF2
#define PFX_REP   0xF3
#define PFX_OSZ   0x66
#define PFX_ASZ   0x67
#define REX_W     0x08  /* REX.W: 64-bit operand size */

/* Escape and vector-prefix bytes (SDM Vol. 2, A.2, 2.3.5, 2.7.1; APM 1.8). */
#define OPC_ESC_0F   0x0F
#define OPC_ESC_0F38 0x38   /* after 0F */
#define OPC_ESC_0F3A 0x3A   /* after 0F */
#define OPC_3DNOW    0x0F   /* after 0F */
#define OPC_EVEX     0x62   /* BOUND outside 64-bit mode unless ModRM.mod=11 */
#define OPC_VEX3     0xC4   /* LES outside 64-bit mode unless ModRM.mod=11 */
#define OPC_VEX2     0xC5   /* LDS outside 64-bit mode unless ModRM.mod=11 */
#define OPC_XOP      0x8F   /* POP r/m unless map_select >= 8 */

/* ModRM fields (SDM Vol. 2, 2.1.5). */
#define MODRM_MOD(m) ((unsigned)(m) >> 6)
#define MODRM_REG(m) (((unsigned)(m) >> 3) & 7u)
#define MODRM_RM(m)  ((unsigned)(m) & 7u)
#define MOD_REG      3u     /* mod=11: register operand, no memory */
#define RM_SIB       4u     /* rm=100 with mod!=11: a SIB byte follows */
#define RM_DISP32    5u     /* rm=101 with mod=00: disp32 (RIP-rel in 64) */
#define RM16_DISP16  6u     /* 16-bit addressing, rm=110 with mod=00: disp16 */
#define SIB_BASE_NONE 5u    /* SIB.base=101 with mod=00: disp32, no base */

/* VEX/EVEX/XOP payload fields (SDM Vol. 2, 2.3.5.1, 2.7.1). */
#define VEX3_MAP_MASK   0x1F  /* C4 byte 1: m-mmmm */
#define XOP_MAP_MIN     8     /* XOP map_select 8..0Ah; POP uses reg=0 */
#define EVEX_P0_MAP     0x07  /* P0[2:0]: mmm */
#define EVEX_P0_RSVD    0x08  /* P0[3]: must be 0 */
#define EVEX_P1_ONE     0x04  /* P1[2]: must be 1 */

static inline int ptd_ild_need(size_t pos, size_t size)
{
    /* pos is the index of a byte we need and do not have. */
    return (pos >= PTD_ILD_MAX_LEN) ? -PTD_ILD_ERR_TOO_LONG
         : (pos >= size) ? -PTD_ILD_ERR_TRUNCATED : 0;
}

/* Finishes the ILD_GRP opcodes: those whose validity, immediate or class
 * depend on ModRM or on the mandatory prefix. Returns the updated entry, or
 * 0 (never a valid entry: every valid entry with ILD_GRP keeps ILD_M or
 * ILD_GRP set) when the encoding is undefined. `mp` is the mandatory prefix
 * (F2/F3 if present, the last of them; else 66 if present; else 0). */
static uint16_t ptd_ild_group(unsigned map, unsigned op, unsigned modrm,
                              unsigned mp, unsigned mode, uint16_t e)
{
    unsigned mod = MODRM_MOD(modrm), reg = MODRM_REG(modrm);

    e &= (uint16_t)~ILD_GRP;
    if (map == PTD_ILD_MAP_PRIMARY) {
        switch (op) {
        case 0x8C: /* MOV r/m, Sreg: Sreg 0..5 (ES CS SS DS FS GS) */
            return reg <= 5 ? e : 0;
        case 0x8E: /* MOV Sreg, r/m: loading CS is undefined (SDM MOV) */
            return (reg <= 5 && reg != 1) ? e : 0;
        case 0x8F: /* Group 1A: POP r/m is /0 only (XOP handled earlier) */
            return reg == 0 ? e : 0;
        case 0xC6: /* Group 11: MOV r/m8, imm8 /0; XABORT imm8 is C6 F8 */
            if (reg == 0)
                return e;
            return modrm == 0xF8 ? e : 0;
        case 0xC7: /* Group 11: MOV r/m, imm /0; XBEGIN rel16/32 is C7 F8 */
            if (reg == 0)
                return e;
            if (modrm == 0xF8)
                return (uint16_t)((e & ~ILD_IMM_MASK) | I_RELZ_XBEGIN);
            return 0;
        case 0xF6: /* Group 3: TEST r/m8, imm8 is /0 (and its alias /1) */
            return (uint16_t)(reg <= 1 ? e | I_B : e);
        case 0xF7: /* TEST r/m, imm16/32 is /0 (and /1) */
            return (uint16_t)(reg <= 1 ? e | I_Z : e);
        case 0xFE: /* Group 4: INC/DEC r/m8 only */
            return reg <= 1 ? e : 0;
        case 0xFF: /* Group 5 (SDM Table A-6) */
            switch (reg) {
            case 2: return (uint16_t)(e | ILD_CLASS(PTD_ICLASS_INDIRECT_CALL));
            case 3: /* CALL m16:16/32/64: memory only */
                return mod == MOD_REG ? 0
                     : (uint16_t)(e | ILD_CLASS(PTD_ICLASS_FAR_TRANSFER));
            case 4: return (uint16_t)(e | ILD_CLASS(PTD_ICLASS_INDIRECT_JUMP));
            case 5: /* JMP m16:16/32/64: memory only */
                return mod == MOD_REG ? 0
                     : (uint16_t)(e | ILD_CLASS(PTD_ICLASS_FAR_TRANSFER));
            case 7: return 0;
            default: return e;
            }
        }
        return e;
    }
    if (map == PTD_ILD_MAP_0F) {
        switch (op) {
        case 0x00: /* Group 6: SLDT STR LLDT LTR VERR VERW; /6 /7 undefined */
            return reg <= 5 ? e : 0;
        case 0x01: /* Group 7: the register forms name whole instructions;
                      the VMX/SVM ones that leave the guest or enter it are
                      far transfers for Intel PT (SDM Vol. 3C, "Intel PT",
                      VMX operation: VM exits and entries are far). */
            switch (modrm) {
            case 0xC1: /* VMCALL */
            case 0xC2: /* VMLAUNCH */
            case 0xC3: /* VMRESUME */
            case 0xD4: /* VMFUNC */
            case 0xD8: /* VMRUN (AMD SVM) */
            case 0xD9: /* VMMCALL (AMD SVM) */
                return (uint16_t)(e | ILD_CLASS(PTD_ICLASS_FAR_TRANSFER));
            case 0xF8: /* SWAPGS: 64-bit mode only */
                return mode == PTD_EXEC_MODE_64 ? e : 0;
            }
            return e;
        case 0x78: /* NP: VMREAD; 66: EXTRQ xmm, ib, ib (/0, mod=11);
                      F2: INSERTQ xmm, xmm, ib, ib (mod=11); F3: none
                      (SDM VMREAD; AMD APM Vol. 4, EXTRQ/INSERTQ) */
            if (mp == PFX_OSZ)
                return (mod == MOD_REG && reg == 0)
                     ? (uint16_t)(e | I_BB) : 0;
            if (mp == PFX_REPNE)
                return mod == MOD_REG ? (uint16_t)(e | I_BB) : 0;
            return mp == PFX_REP ? 0 : e;
        case 0x79: /* NP: VMWRITE; 66: EXTRQ xmm, xmm; F2: INSERTQ xmm, xmm */
            if (mp == PFX_OSZ || mp == PFX_REPNE)
                return mod == MOD_REG ? e : 0;
            return mp == PFX_REP ? 0 : e;
        case 0xAE: /* Group 15: F3 0F AE /4 is PTWRITE r/m32/64 (SDM
                      PTWRITE); the rest are fences/xsave/fxsave forms */
            if (mp == PFX_REP && reg == 4)
                return (uint16_t)(e | ILD_PTW);
            return e;
        case 0xA6: /* VIA PadLock, register forms only: F3 0F A6 C0/C8/D0
                      MONTMUL, XSHA1, XSHA256 */
            return (mp == PFX_REP && (modrm == 0xC0 || modrm == 0xC8 || modrm == 0xD0))
                 ? e : 0;
        case 0xA7: /* 0F A7 C0 XSTORE; F3 0F A7 C8..E8 XCRYPTECB/CBC/CTR/CFB/OFB */
            if (modrm == 0xC0)
                return e;
            return (mp == PFX_REP && mod == MOD_REG && (modrm & 7) == 0 && modrm <= 0xE8)
                 ? e : 0;
        case 0xB8: /* F3: POPCNT; otherwise undefined (JMPE of IA-64) */
            return mp == PFX_REP ? e : 0;
        case 0xBA: /* Group 8: BT/BTS/BTR/BTC r/m, imm8 are /4../7 */
            return reg >= 4 ? e : 0;
        }
        return e;
    }
    return e;
}

static inline uint64_t ptd_ild_wrap(uint64_t v, unsigned opsize)
{
    return opsize == 64 ? v : opsize == 32 ? (v & 0xFFFFFFFFu) : (v & 0xFFFFu);
}

static inline int64_t ptd_ild_sext(const uint8_t *p, unsigned n)
{
    switch (n) {
    case 1: return (int8_t)p[0];
    case 2: return (int16_t)(uint16_t)(p[0] | (p[1] << 8));
    default:
        return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) |
                         ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24));
    }
}

int ptd_ild_decode(struct ptd_insn *insn, const uint8_t *bytes, size_t size,
                   enum ptd_exec_mode mode)
{
    if (!insn || (!bytes && size) || (unsigned)mode > PTD_EXEC_MODE_64)
        return -PTD_ILD_ERR_INVALID;

    const bool m64 = mode == PTD_EXEC_MODE_64;
    size_t pos = 0;
    unsigned osz = 0, asz = 0, rep = 0, lock = 0, rex = 0, vex = 0;
    unsigned b;
    int err;

    /* Prefixes (SDM Vol. 2, 2.1.1): any number, in any order, up to the
     * 15-byte limit. A REX prefix counts only when it is the last prefix
     * before the opcode (2.2.1: "Other placements are ignored"). */
    for (;;) {
        if ((err = ptd_ild_need(pos, size)) != 0)
            return err;
        b = bytes[pos];
        unsigned k = ptd_ild_prefix_kind[b];
        if (k == PK_NONE || (k == PK_REX && !m64))
            break;
        pos++;
        if (k == PK_REX) {
            rex = b;
            continue;
        }
        rex = 0;
        if (k == PK_OSZ)
            osz = 1;
        else if (k == PK_ASZ)
            asz = 1;
        else if (k == PK_REP)
            rep = b;
        else if (k == PK_LOCK)
            lock = 1;
    }

    unsigned map = PTD_ILD_MAP_PRIMARY, op = b, modrm = 0, mp;
    uint16_t e = ptd_ild_map_primary[b];
    size_t prefix_len = pos;
    pos++;

    if (e & ILD_ESC) {
        if (b == OPC_ESC_0F) {
            if ((err = ptd_ild_need(pos, size)) != 0)
                return err;
            op = bytes[pos++];
            map = PTD_ILD_MAP_0F;
            e = ptd_ild_map_0f[op];
            if (op == OPC_ESC_0F38 || op == OPC_ESC_0F3A) {
                if ((err = ptd_ild_need(pos, size)) != 0)
                    return err;
                map = op == OPC_ESC_0F38 ? PTD_ILD_MAP_0F38 : PTD_ILD_MAP_0F3A;
                op = bytes[pos++];
                e = (map == PTD_ILD_MAP_0F38 ? ptd_ild_map_0f38 : ptd_ild_map_0f3a)[op];
            }
        } else {
            /* C4/C5/62/8F: a vector prefix, or the legacy instruction. */
            if ((err = ptd_ild_need(pos, size)) != 0)
                return err;
            unsigned p0 = bytes[pos];
            bool is_vec;
            if (b == OPC_XOP)
                is_vec = (p0 & VEX3_MAP_MASK) >= XOP_MAP_MIN;
            else
                is_vec = m64 || MODRM_MOD(p0) == MOD_REG;
            if (is_vec) {
                /* 2.3.2/2.7: a VEX/EVEX (and XOP) prefix after 66, F2, F3,
                 * F0 or REX is #UD. */
                if (osz || rep || lock || rex)
                    return -PTD_ILD_ERR_BAD_INSN;
                unsigned n;
                if (b == OPC_VEX2) {
                    n = 2;
                    map = PTD_ILD_MAP_VEX_0F;
                } else if (b == OPC_VEX3 || b == OPC_XOP) {
                    unsigned mm = p0 & VEX3_MAP_MASK;
                    n = 3;
                    if (b == OPC_VEX3 && mm >= 1 && mm <= 3)
                        map = PTD_ILD_MAP_VEX_0F + mm - 1;
                    else if (b == OPC_XOP && mm >= XOP_MAP_MIN && mm <= XOP_MAP_MIN + 2)
                        map = PTD_ILD_MAP_XOP8 + mm - XOP_MAP_MIN;
                    else
                        return -PTD_ILD_ERR_BAD_INSN;
                } else {
                    n = 4;
                    if ((err = ptd_ild_need(pos + 1, size)) != 0)
                        return err;
                    unsigned mm = p0 & EVEX_P0_MAP;
                    if ((p0 & EVEX_P0_RSVD) || !(bytes[pos + 1] & EVEX_P1_ONE))
                        return -PTD_ILD_ERR_BAD_INSN;
                    map = ptd_ild_evex_map[mm];
                    if (map == 0)
                        return -PTD_ILD_ERR_BAD_INSN;
                }
                pos = prefix_len + n;
                if ((err = ptd_ild_need(pos, size)) != 0)
                    return err;
                op = bytes[pos++];
                e = ptd_ild_vector_entry(map, op);
                vex = 1;
            }
        }
    }

    if (e & (ILD_INV | (m64 ? ILD_I64 : 0)))
        return -PTD_ILD_ERR_BAD_INSN;

    /* Address size (2.1.1, Table 2-? and 3.6.1 of Vol. 1). */
    unsigned addr = m64 ? (asz ? 32 : 64)
                  : (mode == PTD_EXEC_MODE_32) ? (asz ? 16 : 32)
                  : (asz ? 32 : 16);

    if (e & ILD_M) {
        if ((err = ptd_ild_need(pos, size)) != 0)
            return err;
        modrm = bytes[pos++];
        unsigned mod = MODRM_MOD(modrm), rm = MODRM_RM(modrm);
        if (e & ILD_GRP) {
            mp = rep ? rep : (osz ? PFX_OSZ : 0);
            e = ptd_ild_group(map, op, modrm, mp, mode, e);
            if (e == 0)
                return -PTD_ILD_ERR_BAD_INSN;
        }
        if (mod == MOD_REG) {
            if (e & ILD_NOREG)
                return -PTD_ILD_ERR_BAD_INSN;
        } else if (!(e & ILD_REGONLY)) {
            /* ModRM/SIB addressing forms: SDM Vol. 2, Tables 2-1 (16-bit)
             * and 2-2, 2-3 (32/64-bit). */
            if (addr == 16) {
                pos += mod == 1 ? 1 : (mod == 2 || rm == RM16_DISP16) ? 2 : 0;
            } else {
                if (rm == RM_SIB) {
                    if ((err = ptd_ild_need(pos, size)) != 0)
                        return err;
                    unsigned sib = bytes[pos++];
                    if (mod == 0 && MODRM_RM(sib) == SIB_BASE_NONE)
                        pos += 4;
                }
                pos += mod == 1 ? 1 : (mod == 2 || rm == RM_DISP32) ? 4 : 0;
            }
        }
    } else if (e & ILD_GRP) {
        mp = rep ? rep : (osz ? PFX_OSZ : 0);
        e = ptd_ild_group(map, op, 0, mp, mode, e);
        if (e == 0)
            return -PTD_ILD_ERR_BAD_INSN;
    }

    /* Operand size (Vol. 1, 3.6.1, Table 3-4): REX.W wins over 66. */
    unsigned opsz = (m64 && (rex & REX_W)) ? 64
                  : (mode == PTD_EXEC_MODE_16) ? (osz ? 32 : 16)
                  : (osz ? 16 : 32);
    unsigned iclass = ILD_CLASS_OF(e);
    if (iclass >= PTD_ICLASS_COND_JUMP && iclass <= PTD_ICLASS_NEAR_RET && m64)
        opsz = 64;   /* near branches: 64-bit operand size (2.2.1.7), 66 is
                        ignored by Intel CPUs; see docs/ild.md */

    unsigned imm = e & ILD_IMM_MASK;
    size_t ipos = pos, isz = 0;
    unsigned flags = 0;
    switch (imm) {
    case I_NONE: break;
    case I_B: isz = 1; break;
    case I_W: isz = 2; break;
    case I_Z: isz = opsz == 16 ? 2 : 4; break;
    case I_V: isz = opsz / 8; break;
    case I_MOFFS: isz = addr / 8; break;
    case I_REL8: isz = 1; flags = PTD_INSN_REL; break;
    case I_RELZ: isz = opsz == 16 ? 2 : 4; flags = PTD_INSN_REL; break;
    case I_RELZ_XBEGIN:
        /* XBEGIN is no near branch: its operand size follows 66 in 64-bit
         * mode too, and the target is not wrapped to 16 bits (SDM XBEGIN). */
        isz = opsz == 16 ? 2 : 4; flags = PTD_INSN_REL; break;
    case I_PTR: isz = (opsz == 16 ? 2 : 4) + 2; flags = PTD_INSN_FAR_PTR; break;
    case I_WB: isz = 3; break;
    case I_BB: isz = 2; break;
    case I_D: isz = 4; break;
    case I_3DNOW: isz = 1; break;
    }
    size_t len = ipos + isz;
    if (len > PTD_ILD_MAX_LEN)
        return -PTD_ILD_ERR_TOO_LONG;
    if (len > size)
        return -PTD_ILD_ERR_TRUNCATED;

    if (imm == I_3DNOW) {
        /* 0F 0F ModRM [SIB] [disp] suffix: the suffix is the opcode
         * (AMD APM Vol. 5, 3DNow! instruction format). */
        op = bytes[ipos];
        map = PTD_ILD_MAP_3DNOW;
        if (!ptd_ild_3dnow_valid(op))
            return -PTD_ILD_ERR_BAD_INSN;
    }

    insn->length = (uint8_t)len;
    insn->iclass = (uint8_t)iclass;
    insn->map = (uint8_t)map;
    insn->opcode = (uint8_t)op;
    insn->modrm = (uint8_t)modrm;
    insn->opsize = (uint8_t)opsz;
    insn->addrsize = (uint8_t)addr;
    insn->prefix_len = (uint8_t)prefix_len;
    insn->rex = (uint8_t)rex;
    insn->rep_byte = (uint8_t)rep;
    flags |= (e & ILD_M) ? PTD_INSN_MODRM : 0;
    flags |= (e & ILD_PTW) ? PTD_INSN_PTWRITE : 0;
    flags |= lock ? PTD_INSN_LOCK : 0;
    flags |= rep ? PTD_INSN_REP : 0;
    flags |= rex ? PTD_INSN_REX : 0;
    flags |= vex ? PTD_INSN_VEX : 0;
    if (flags & PTD_INSN_REL) {
        int64_t d = ptd_ild_sext(bytes + ipos, (unsigned)isz);
        uint64_t t = insn->ip + len + (uint64_t)d;
        insn->disp = (int32_t)d;
        insn->target = imm == I_RELZ_XBEGIN ? ptd_ild_wrap(t, m64 ? 64 : 32)
                                            : ptd_ild_wrap(t, opsz);
    } else if (flags & PTD_INSN_FAR_PTR) {
        const uint8_t *p = bytes + ipos;
        size_t o = isz - 2;
        uint64_t off = 0;
        for (size_t i = 0; i < o; i++)
            off |= (uint64_t)p[i] << (8 * i);
        insn->target = off;
        insn->far_sel = (uint16_t)(p[o] | (p[o + 1] << 8));
        insn->disp = 0;
    }
    insn->flags = (uint16_t)flags;
    return (int)len;
}

int ptd_ild_decode_at(struct ptd_insn *insn, const uint8_t *bytes,
                      size_t size, enum ptd_exec_mode mode, uint64_t ip)
{
    if (!insn)
        return -PTD_ILD_ERR_INVALID;
    insn->ip = ip;
    return ptd_ild_decode(insn, bytes, size, mode);
}

const char *ptd_ild_iclass_name(enum ptd_iclass iclass)
{
    static const char *const names[PTD_ICLASS_COUNT] = {
        [PTD_ICLASS_OTHER] = "other",
        [PTD_ICLASS_COND_JUMP] = "cond_jump",
        [PTD_ICLASS_DIRECT_JUMP] = "direct_jump",
        [PTD_ICLASS_DIRECT_CALL] = "direct_call",
        [PTD_ICLASS_INDIRECT_JUMP] = "indirect_jump",
        [PTD_ICLASS_INDIRECT_CALL] = "indirect_call",
        [PTD_ICLASS_NEAR_RET] = "near_ret",
        [PTD_ICLASS_FAR_TRANSFER] = "far_transfer",
    };
    return (unsigned)iclass < PTD_ICLASS_COUNT ? names[iclass] : "?";
}
