/* libptd instruction-length decoder: see ptd_ild.h.
 *
 * An instruction is (SDM Vol. 2, 2.1, Figure 2-1):
 *   legacy prefixes | REX | opcode (1-3 bytes) | ModRM | SIB | disp | imm
 * or, for the vector encodings, a VEX/EVEX/XOP prefix that carries the map
 * in place of the 0F escapes (2.3 VEX, 2.7 EVEX; AMD APM Vol. 3, 1.8 XOP).
 *
 * The decoder walks those parts once. What an opcode needs (ModRM, immediate
 * kind, branch class, validity) comes from one 16-bit entry per opcode in a
 * 256-entry table per legacy map (ptd_ild_tables.c). Sizes that depend on
 * the mode and on 66/REX.W/67 come from one "size context" index. Opcodes
 * whose entry depends on ModRM.reg take it from a group table; the few that
 * depend on the whole ModRM byte or on the mandatory prefix carry ILD_GRP
 * and are finished in ptd_ild_group(), off the common path.
 *
 * Two entry points share the tables: ptd_ild_decode() is a fast path for
 * the common encodings with at least 15 bytes available; it hands anything
 * else to ptd_ild_decode_full(), which handles every case and every input
 * size. The differential test checks that both give the same results.
 */
#include "decoder/ptd_ild.h"
#include "decoder/ptd_ild_tables.h"

/* Branch hints for the fast path's rare cases (GCC and Clang). */
#if defined(__GNUC__)
#define ILD_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define ILD_UNLIKELY(x) (x)
#endif

/* REX bits (SDM Vol. 2, 2.2.1.2). Prefix bytes: ptd_ild_tables.h. */
#define REX_W     0x08  /* REX.W: 64-bit operand size */
#define REX_R     0x04  /* REX.R: extends ModRM.reg */

/* Escape and vector-prefix bytes (SDM Vol. 2, A.2, 2.3.5, 2.7.1; APM 1.8). */
#define OPC_ESC_0F   0x0F
#define OPC_ESC_0F38 0x38   /* after 0F */
#define OPC_ESC_0F3A 0x3A   /* after 0F */
#define OPC_EVEX     0x62   /* BOUND outside 64-bit mode unless ModRM.mod=11 */
#define OPC_VEX3     0xC4   /* LES outside 64-bit mode unless ModRM.mod=11 */
#define OPC_VEX2     0xC5   /* LDS outside 64-bit mode unless ModRM.mod=11 */
#define OPC_XOP      0x8F   /* POP r/m unless map_select >= 8 */

/* Opcodes and ModRM bytes that ptd_ild_group() singles out (SDM Vol. 2
 * instruction pages and Table A-6; AMD APM Vol. 3 for SVM, EXTRQ/INSERTQ;
 * VIA PadLock Programming Guide). */
#define OPC_GRP11_EB        0xC6  /* MOV r/m8, imm8; XABORT */
#define OPC_GRP11_EV        0xC7  /* MOV r/m, imm; XBEGIN */
#define MODRM_XABORT_XBEGIN 0xF8  /* C6 F8 ib, C7 F8 rel */
#define OPC_0F_GRP7         0x01
#define MODRM_VMCALL        0xC1
#define MODRM_VMLAUNCH      0xC2
#define MODRM_VMRESUME      0xC3
#define MODRM_VMFUNC        0xD4
#define MODRM_VMRUN         0xD8
#define MODRM_VMMCALL       0xD9
#define MODRM_SWAPGS        0xF8
#define OPC_0F_MOV_R_CR     0x20
#define OPC_0F_MOV_R_DR     0x21
#define OPC_0F_MOV_CR_R     0x22
#define OPC_0F_MOV_DR_R     0x23
#define OPC_0F_GRP12        0x71  /* MMX/SSE shift groups (imm8) */
#define OPC_0F_GRP13        0x72
#define OPC_0F_GRP14        0x73
#define OPC_0F_VMREAD       0x78  /* 66: EXTRQ ib, ib; F2: INSERTQ ib, ib */
#define OPC_0F_VMWRITE      0x79  /* 66: EXTRQ; F2: INSERTQ */
#define OPC_0F_PADLOCK_A6   0xA6
#define OPC_0F_PADLOCK_A7   0xA7
#define OPC_0F_GRP15        0xAE
#define OPC_0F_POPCNT       0xB8
#define OPC_0F38_KL_WIDE    0xD8  /* F3 0F 38 D8: Key Locker wide forms */
#define OPC_0F38_KL_FIRST_MEM 0xDD /* F3 0F 38 DD-DF: memory-only Key Locker */
#define GRP15_PTWRITE       4     /* ModRM.reg of F3 0F AE /4 */
#define MODRM_MONTMUL       0xC0  /* F3 0F A6 */
#define MODRM_XSHA1         0xC8
#define MODRM_XSHA256       0xD0
#define MODRM_XSTORE        0xC0  /* 0F A7 */
#define MODRM_XCRYPT_LAST   0xE8  /* F3 0F A7 C8..E8, step 8 */
#define MODRM_REG_FIRST     0xC0  /* first register form (mod=11) */
/* Control registers that exist, one bit per CRn: CR0 CR2 CR3 CR4 CR8. */
#define CR_VALID_MASK       ((1u << 0) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 8))

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

/* The error for a byte at index pos that the caller did not give: past the
 * architectural limit, too long; otherwise, truncated input. */
static inline int ptd_ild_short(size_t pos)
{
    return pos >= PTD_ILD_MAX_LEN ? -PTD_ILD_ERR_TOO_LONG : -PTD_ILD_ERR_TRUNCATED;
}

/* Whether an SSE-era opcode (rule from ptd_ild_0f*_sse; op: the 0F opcode,
 * 0 for 0F 38/0F 3A) is
 * defined under mandatory prefix mp with this ModRM (SDM Table A-3; the
 * shift groups 0F 71-73 by ModRM.reg, Table A-6 groups 12-14). */
static bool ptd_ild_sse_ok(unsigned rule, unsigned op, unsigned mp, unsigned modrm)
{
    unsigned mod = MODRM_MOD(modrm), reg = MODRM_REG(modrm);
    unsigned want = mp == PFX_OSZ ? SSE_66 : mp == PFX_REP ? SSE_F3
                  : mp == PFX_REPNE ? SSE_F2 : SSE_NP;
    if (!(rule & want))
        return false;
    if ((rule & SSE_REG) && mod != MOD_REG)
        return false;
    if ((rule & SSE_66MEM) && want == SSE_66 && mod == MOD_REG)
        return false;
    if ((rule & SSE_NPMEM) && want == SSE_NP && mod == MOD_REG)
        return false;
    if ((rule & SSE_REPREG) && (want & (SSE_F3 | SSE_F2)) && mod != MOD_REG)
        return false;
    switch (op) {
    case OPC_0F_GRP12:  /* PSRLW /2, PSRAW /4, PSLLW /6 */
    case OPC_0F_GRP13:  /* PSRLD /2, PSRAD /4, PSLLD /6 */
        return reg == 2 || reg == 4 || reg == 6;
    case OPC_0F_GRP14:  /* PSRLQ /2, PSLLQ /6; 66 only: PSRLDQ /3, PSLLDQ /7 */
        return reg == 2 || reg == 6 || (want == SSE_66 && (reg == 3 || reg == 7));
    }
    return true;
}

/* Finishes the ILD_GRP opcodes: those whose validity, immediate or class
 * depend on ModRM or on the mandatory prefix. Returns the updated entry, or
 * 0 (never a valid entry: every valid entry with ILD_GRP keeps ILD_M or
 * ILD_GRP set) when the encoding is undefined. `mp` is the mandatory prefix
 * (F2/F3 if present, the last of them; else 66 if present; else 0); rex
 * the effective REX byte or 0. */
__attribute__((noinline))
static uint16_t ptd_ild_group(unsigned map, unsigned op, unsigned modrm,
                              unsigned mp, unsigned rex, unsigned mode, uint16_t e)
{
    unsigned mod = MODRM_MOD(modrm), reg = MODRM_REG(modrm);
    unsigned g = map <= PTD_ILD_MAP_0F ? ptd_ild_group_of[map][op] : GR_NONE;

    if (g != GR_NONE) {
        e = ptd_ild_group_reg[g][reg];
        if (e & ILD_INV)
            return 0;
        if (!(e & ILD_GRP))
            return e;
    }
    e &= (uint16_t)~ILD_GRP;
    if (map == PTD_ILD_MAP_PRIMARY) {
        if (op >= OPC_X87_FIRST && op <= OPC_X87_LAST) {
            unsigned i = op - OPC_X87_FIRST;
            bool ok = mod == MOD_REG ? (ptd_ild_x87_reg[i] >> (modrm - MODRM_REG_FIRST)) & 1u
                                     : (ptd_ild_x87_mem[i] >> reg) & 1u;
            return ok ? e : 0;
        }
        switch (op) {
        case OPC_GRP11_EB: /* C6 F8 ib: XABORT */
        case OPC_GRP11_EV: /* C7 F8 rel16/32: XBEGIN */
            return modrm == MODRM_XABORT_XBEGIN ? e : 0;
        }
        return e;
    }
    if (map == PTD_ILD_MAP_0F) {
        switch (op) {
        case OPC_0F_GRP7: /* Group 7: the register forms name whole instructions;
                      the VMX/SVM ones that leave the guest or enter it are
                      far transfers for Intel PT (SDM Vol. 3C, "Intel PT",
                      VMX operation: VM exits and entries are far). */
            switch (modrm) {
            case MODRM_VMCALL:
            case MODRM_VMLAUNCH:
            case MODRM_VMRESUME:
            case MODRM_VMFUNC:
            case MODRM_VMRUN:    /* AMD SVM */
            case MODRM_VMMCALL:  /* AMD SVM */
                return (uint16_t)(e | ILD_CLASS(PTD_ICLASS_FAR_TRANSFER));
            case MODRM_SWAPGS: /* 64-bit mode only */
                return mode == PTD_EXEC_MODE_64 ? e : 0;
            }
            return e;
        case OPC_0F_MOV_R_CR: /* CR0, CR2, CR3, CR4 and CR8 exist (REX.R */
        case OPC_0F_MOV_CR_R: /* extends reg); others are #UD (SDM MOV-Move
                                 to/from Control Registers) */
            return ((CR_VALID_MASK >> (reg | ((rex & REX_R) ? 8 : 0))) & 1u) ? e : 0;
        case OPC_0F_MOV_R_DR: /* DR0-DR7; REX.R is #UD (SDM MOV-Move */
        case OPC_0F_MOV_DR_R: /* to/from Debug Registers) */
            return (rex & REX_R) ? 0 : e;
        case OPC_0F_VMREAD: /* NP: VMREAD; 66: EXTRQ xmm, ib, ib (/0, mod=11);
                      F2: INSERTQ xmm, xmm, ib, ib (mod=11); F3: none
                      (SDM VMREAD; AMD APM Vol. 4, EXTRQ/INSERTQ) */
            if (mp == PFX_OSZ)
                return (mod == MOD_REG && reg == 0)
                     ? (uint16_t)(e | I_BB) : 0;
            if (mp == PFX_REPNE)
                return mod == MOD_REG ? (uint16_t)(e | I_BB) : 0;
            return mp == PFX_REP ? 0 : e;
        case OPC_0F_VMWRITE: /* NP: VMWRITE; 66: EXTRQ xmm, xmm; F2: INSERTQ xmm, xmm */
            if (mp == PFX_OSZ || mp == PFX_REPNE)
                return mod == MOD_REG ? e : 0;
            return mp == PFX_REP ? 0 : e;
        case OPC_0F_GRP15: /* Group 15: F3 0F AE /4 is PTWRITE r/m32/64 (SDM
                      PTWRITE); the rest are fences/xsave/fxsave forms */
            if (mp == PFX_REP && reg == GRP15_PTWRITE)
                return (uint16_t)(e | ILD_PTW);
            return e;
        case OPC_0F_PADLOCK_A6: /* VIA PadLock, register forms only: F3 0F A6 C0/C8/D0
                      MONTMUL, XSHA1, XSHA256 */
            return (mp == PFX_REP && (modrm == MODRM_MONTMUL || modrm == MODRM_XSHA1 ||
                                     modrm == MODRM_XSHA256))
                 ? e : 0;
        case OPC_0F_PADLOCK_A7: /* 0F A7 C0 XSTORE; F3 0F A7 C8..E8 XCRYPTECB/CBC/CTR/CFB/OFB */
            if (modrm == MODRM_XSTORE)  /* XSTORE, REP XSTORE; not F2 */
                return mp != PFX_REPNE ? e : 0;
            return (mp == PFX_REP && mod == MOD_REG && MODRM_RM(modrm) == 0 &&
                    modrm <= MODRM_XCRYPT_LAST)
                 ? e : 0;
        case OPC_0F_POPCNT: /* F3: POPCNT; otherwise undefined (JMPE of IA-64) */
            return mp == PFX_REP ? e : 0;
        }
        return e;
    }
    if (map == PTD_ILD_MAP_0F38) {
        if (op == OPC_0F38_KL_WIDE)
            return reg <= 3 ? e : 0;   /* AESENC/DECWIDE128/256KL are /0../3 */
        /* F3 0F 38 DD-DF: AESDEC128KL, AESENC256KL, AESDEC256KL take m384/
           m512 (F3 DC with a register is LOADIWKEY); 66: AES* */
        if (op >= OPC_0F38_KL_FIRST_MEM && mp == PFX_REP && mod == MOD_REG)
            return 0;
    }
    return e;
}

/* The immediate kinds that are a near-branch displacement. */
#define ILD_REL_KINDS ((1u << I_REL8) | (1u << I_RELZ) | (1u << I_RELZ_XBEGIN))

/* C4/C5/62/8F at bytes[op_pos]: a VEX/EVEX/XOP prefix, or the legacy
 * instruction (LES, LDS, BOUND outside 64-bit mode when ModRM.mod != 11,
 * SDM Vol. 2, 2.3.5 and 2.7.1; POP r/m when XOP.map_select < 8, AMD APM
 * Vol. 3, 1.8). Returns the index after the opcode and sets *map, *op, *e
 * for a vector instruction; returns op_pos + 1 with *e untouched for the
 * legacy one; or a negative error. */
__attribute__((noinline))
static int ptd_ild_vector(const uint8_t *bytes, size_t avail, size_t op_pos,
                          bool m64, bool legacy_pfx, unsigned *map,
                          unsigned *op, uint16_t *e)
{
    size_t pos = op_pos + 1;
    unsigned b = bytes[op_pos];
    if (pos >= avail)
        return ptd_ild_short(pos);
    unsigned p0 = bytes[pos];
    bool is_vec = (b == OPC_XOP) ? (p0 & VEX3_MAP_MASK) >= XOP_MAP_MIN
                                 : (m64 || MODRM_MOD(p0) == MOD_REG);
    if (!is_vec)
        return (int)pos;
    /* 2.3.2, 2.7: a VEX/EVEX prefix after 66, F2, F3, F0 or REX is #UD
     * (AMD: the same for XOP). */
    if (legacy_pfx)
        return -PTD_ILD_ERR_BAD_INSN;
    unsigned n;
    if (b == OPC_VEX2) {
        n = 2;
        *map = PTD_ILD_MAP_VEX_0F;
    } else if (b == OPC_EVEX) {
        n = 4;
        if (pos + 1 >= avail)
            return ptd_ild_short(pos + 1);
        if ((p0 & EVEX_P0_RSVD) || !(bytes[pos + 1] & EVEX_P1_ONE))
            return -PTD_ILD_ERR_BAD_INSN;
        *map = ptd_ild_evex_map[p0 & EVEX_P0_MAP];
        if (*map == PTD_ILD_MAP_PRIMARY)
            return -PTD_ILD_ERR_BAD_INSN;
    } else {
        unsigned mm = p0 & VEX3_MAP_MASK;
        n = 3;
        if (b == OPC_VEX3 && mm >= 1 && mm <= 3)
            *map = PTD_ILD_MAP_VEX_0F + mm - 1;
        else if (b == OPC_XOP && mm <= XOP_MAP_MIN + 2)
            *map = PTD_ILD_MAP_XOP8 + mm - XOP_MAP_MIN;
        else
            return -PTD_ILD_ERR_BAD_INSN;
    }
    pos = op_pos + n;
    if (pos >= avail)
        return ptd_ild_short(pos);
    *op = bytes[pos];
    *e = ptd_ild_vector_entry(*map, *op);
    return (int)pos + 1;
}

_Static_assert(I_KINDS <= 16, "immediate kinds fit ILD_IMM_MASK");
_Static_assert(PF_LOCK == PTD_INSN_LOCK && PF_REP == PTD_INSN_REP && PF_REX == PTD_INSN_REX,
               "prefix bits double as insn flags");
_Static_assert((ILD_M >> 4) == PTD_INSN_MODRM && (ILD_PTW >> 11) == PTD_INSN_PTWRITE,
               "entry bits shift onto insn flags");

/* The complete decoder: any input size, every check. ptd_ild_decode()
 * below takes the common cases itself and leaves the rest to this. */
__attribute__((noinline))
static int ptd_ild_decode_full(struct ptd_insn *insn, const uint8_t *bytes,
                               size_t size, enum ptd_exec_mode mode)
{
    if (!insn || (!bytes && size) || (unsigned)mode > PTD_EXEC_MODE_64)
        return -PTD_ILD_ERR_INVALID;

    const bool m64 = mode == PTD_EXEC_MODE_64;
    const size_t avail = size < PTD_ILD_MAX_LEN ? size : PTD_ILD_MAX_LEN;
    const uint8_t *pt = ptd_ild_prefix_bits[m64];
    size_t pos = 0;
    unsigned pf = 0, rep = 0, rex = 0, b, k;

    if (avail == 0)
        return -PTD_ILD_ERR_TRUNCATED;
    b = bytes[0];
    /* Prefixes (SDM Vol. 2, 2.1.1): any number, in any order, up to the
     * 15-byte limit. A REX prefix counts only when it is the last prefix
     * before the opcode (2.2.1: "Other placements are ignored"): every
     * prefix clears the REX bits first. Of F2/F3 the last one counts. */
    while ((k = pt[b]) != 0) {
        pf = (pf & ~(PF_REX | PF_W)) | k;
        rep = (k & PF_REP) ? b : rep;
        rex = (k & PF_REX) ? b : rex;
        if (++pos >= avail)
            return ptd_ild_short(pos);
        b = bytes[pos];
    }

    const size_t prefix_len = pos;
    unsigned map = PTD_ILD_MAP_PRIMARY, op = b, flags = 0;
    uint16_t e = ptd_ild_map_primary[b];
    pos++;

    if (e & ILD_ESC) {
        if (b == OPC_ESC_0F) {
            if (pos >= avail)
                return ptd_ild_short(pos);
            op = bytes[pos++];
            map = PTD_ILD_MAP_0F;
            e = ptd_ild_map_0f[op];
            if (op == OPC_ESC_0F38 || op == OPC_ESC_0F3A) {
                if (pos >= avail)
                    return ptd_ild_short(pos);
                map = op == OPC_ESC_0F38 ? PTD_ILD_MAP_0F38 : PTD_ILD_MAP_0F3A;
                e = (op == OPC_ESC_0F38 ? ptd_ild_map_0f38 : ptd_ild_map_0f3a)[bytes[pos]];
                op = bytes[pos++];
            }
        } else {
            /* Locals, so that map/op/e themselves stay in registers. */
            unsigned vmap = map, vop = op;
            uint16_t ve = e;
            int r = ptd_ild_vector(bytes, avail, prefix_len, m64,
                                   (pf & (PF_OSZ | PF_LOCK | PF_REP | PF_REX)) != 0,
                                   &vmap, &vop, &ve);
            if (r < 0)
                return r;
            pos = (size_t)r;
            map = vmap;
            op = vop;
            e = ve;
            flags = map != PTD_ILD_MAP_PRIMARY ? PTD_INSN_VEX : 0;
        }
    }

    if (e & (ILD_INV | (m64 ? ILD_I64 : 0)))
        return -PTD_ILD_ERR_BAD_INSN;

    const unsigned ctx = ILD_CTX_OF((unsigned)mode, pf);
    unsigned modrm = 0;

    if (e & ILD_M) {
        if (pos >= avail)
            return ptd_ild_short(pos);
        modrm = bytes[pos++];
        unsigned form = modrm;
        if (e & (ILD_GRP | ILD_NOREG | ILD_REGONLY)) {
            if (e & ILD_GRP) {
                unsigned mp = (pf & PF_REP) ? rep : ((pf & PF_OSZ) ? PFX_OSZ : 0);
                e = ptd_ild_group(map, op, modrm, mp, (pf & PF_REX) ? rex : 0, mode, e);
                if (e == 0)
                    return -PTD_ILD_ERR_BAD_INSN;
            }
            if ((e & ILD_NOREG) && MODRM_MOD(modrm) == MOD_REG)
                return -PTD_ILD_ERR_BAD_INSN;
            if (e & ILD_REGONLY)
                form |= MOD_REG << 6;
        }
        /* SIB and displacement: SDM Vol. 2, Tables 2-1 to 2-3. */
        unsigned x = ptd_ild_modrm_extra[ptd_ild_addrsize[ctx] == 16][form];
        if (x & ILD_SIB0) {
            if (pos >= avail)
                return ptd_ild_short(pos);
            x = (x & ~ILD_SIB0) + (MODRM_RM(bytes[pos]) == SIB_BASE_NONE ? 4 : 0);
        }
        pos += x;
    }

    /* Mandatory prefixes of the SSE-era opcodes (SDM Tables ). */
    if (map >= PTD_ILD_MAP_0F && map <= PTD_ILD_MAP_0F3A) {
        unsigned rule = (map == PTD_ILD_MAP_0F ? ptd_ild_0f_sse
                         : map == PTD_ILD_MAP_0F38 ? ptd_ild_0f38_sse : ptd_ild_0f3a_sse)[op];
        unsigned mp = (pf & PF_REP) ? rep : ((pf & PF_OSZ) ? PFX_OSZ : 0);
        if (rule && !ptd_ild_sse_ok(rule, map == PTD_ILD_MAP_0F ? op : 0, mp, modrm))
            return -PTD_ILD_ERR_BAD_INSN;
    }

    /* LOCK only on the lockable instructions with a memory destination
     * (SDM LOCK: "#UD if ... not one of the instructions listed, or the
     * destination is a register"). */
    if ((pf & PF_LOCK) && (!(e & ILD_LK) || MODRM_MOD(modrm) == MOD_REG))
        return -PTD_ILD_ERR_BAD_INSN;

    const unsigned kind = e & ILD_IMM_MASK;
    const size_t len = pos + ILD_IMM_SIZE(ctx, kind);
    if (len > avail)
        return ptd_ild_short(len > PTD_ILD_MAX_LEN ? len : avail);

    unsigned iclass = ILD_CLASS_OF(e), opsz = ptd_ild_opsize[ctx];
    /* Near branches and returns use 64-bit operand size in 64-bit mode
     * (SDM Vol. 2, 2.2.1.7); Intel CPUs ignore 66 on them (docs/ild.md). */
    if (iclass != PTD_ICLASS_OTHER && iclass <= PTD_ICLASS_NEAR_RET && m64)
        opsz = 64;

    if (kind >= I_REL8) {
        const uint8_t *p = bytes + pos;
        if ((1u << kind) & ILD_REL_KINDS) {
            int32_t d = kind == I_REL8 ? (int8_t)p[0]
                      : (len - pos == 2) ? (int16_t)(uint16_t)(p[0] | (p[1] << 8))
                      : (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) |
                                  ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24));
            uint64_t t = insn->ip + len + (uint64_t)(int64_t)d;
            /* Near branches wrap to the operand size (SDM JMP/Jcc/CALL:
             * "IF OperandSize = 16 THEN EIP <- tempEIP AND 0000FFFFH");
             * XBEGIN does not wrap to 16 bits (SDM XBEGIN); EIP is 32
             * bits wide. */
            unsigned wrap = m64 ? 64 : kind == I_RELZ_XBEGIN ? 32 : opsz;
            insn->target = wrap == 64 ? t : wrap == 32 ? (t & 0xFFFFFFFFu) : (t & 0xFFFFu);
            insn->disp = d;
            flags |= PTD_INSN_REL;
        } else if (kind == I_PTR) {
            /* ptr16:16 / ptr16:32: the offset, then the selector. */
            size_t o = len - pos - 2;
            uint64_t off = (uint64_t)p[0] | ((uint64_t)p[1] << 8);
            if (o == 4)
                off |= ((uint64_t)p[2] << 16) | ((uint64_t)p[3] << 24);
            insn->target = off;
            insn->far_sel = (uint16_t)(p[o] | (p[o + 1] << 8));
            insn->disp = 0;
            flags |= PTD_INSN_FAR_PTR;
        } else if (kind == I_3DNOW) {
            /* 0F 0F ModRM [SIB] [disp] suffix: the suffix is the opcode
             * (AMD 3DNow! Technology Manual, instruction format). */
            op = p[0];
            map = PTD_ILD_MAP_3DNOW;
            if (!ptd_ild_3dnow_valid(op))
                return -PTD_ILD_ERR_BAD_INSN;
        }
    }

    flags |= ((e & ILD_M) >> 4) | ((e & ILD_PTW) >> 11) | (pf & (PF_LOCK | PF_REP | PF_REX));
    insn->length = (uint8_t)len;
    insn->iclass = (uint8_t)iclass;
    insn->map = (uint8_t)map;
    insn->opcode = (uint8_t)op;
    insn->modrm = (uint8_t)modrm;
    insn->opsize = (uint8_t)opsz;
    insn->addrsize = ptd_ild_addrsize[ctx];
    insn->prefix_len = (uint8_t)prefix_len;
    insn->rex = (uint8_t)((pf & PF_REX) ? rex : 0);
    insn->rep_byte = (uint8_t)((pf & PF_REP) ? rep : 0);
    insn->flags = (uint16_t)flags;
    return (int)len;
}

/* The fast path: at least PTD_ILD_MAX_LEN bytes given (so no truncation),
 * one-byte and 0F maps, groups decided by ModRM.reg. Anything else, and
 * every error but BAD_INSN on a ModRM form, goes to ptd_ild_decode_full(),
 * which gives the same result for what this path takes (the differential
 * test checks both paths against each other and Zydis). */
int ptd_ild_decode(struct ptd_insn *insn, const uint8_t *bytes, size_t size,
                   enum ptd_exec_mode mode)
{
    if (ILD_UNLIKELY(size < PTD_ILD_MAX_LEN || !insn || !bytes || (unsigned)mode > PTD_EXEC_MODE_64))
        return ptd_ild_decode_full(insn, bytes, size, mode);

    const bool m64 = mode == PTD_EXEC_MODE_64;
    const uint8_t *pt = ptd_ild_prefix_bits[m64];
    size_t pos = 0;
    unsigned pf = 0, rep = 0, b = bytes[0], k;

    while ((k = pt[b]) != 0) {
        pf = (pf & ~(PF_REX | PF_W)) | k;
        rep = (k & PF_REP) ? b : rep;
        if (ILD_UNLIKELY(++pos >= PTD_ILD_MAX_LEN))
            return -PTD_ILD_ERR_TOO_LONG;
        b = bytes[pos];
    }

    const size_t prefix_len = pos;
    unsigned map = PTD_ILD_MAP_PRIMARY, op = b;
    uint16_t e = ptd_ild_map_primary[b];
    pos++;
    if (ILD_UNLIKELY(e & ILD_ESC)) {
        if (b != OPC_ESC_0F || pos >= PTD_ILD_MAX_LEN)
            return ptd_ild_decode_full(insn, bytes, size, mode);
        op = bytes[pos++];
        if (op == OPC_ESC_0F38 || op == OPC_ESC_0F3A)
            return ptd_ild_decode_full(insn, bytes, size, mode);
        map = PTD_ILD_MAP_0F;
        e = ptd_ild_map_0f[op];
    }
    if (ILD_UNLIKELY(e & (ILD_INV | ILD_I64 | ILD_REGONLY)))
        return ptd_ild_decode_full(insn, bytes, size, mode);

    const unsigned ctx = ILD_CTX_OF((unsigned)mode, pf);
    unsigned modrm = 0;
    if (e & ILD_M) {
        if (ILD_UNLIKELY(pos >= PTD_ILD_MAX_LEN))
            return -PTD_ILD_ERR_TOO_LONG;
        modrm = bytes[pos++];
        if (ILD_UNLIKELY(e & ILD_GRP)) {
            unsigned g = ptd_ild_group_of[map][op];
            uint16_t ge = ptd_ild_group_reg[g][MODRM_REG(modrm)];
            if (g == GR_NONE || (ge & (ILD_GRP | ILD_INV)))
                return ptd_ild_decode_full(insn, bytes, size, mode);
            e = ge;
        }
        if (ILD_UNLIKELY((e & ILD_NOREG) && MODRM_MOD(modrm) == MOD_REG))
            return -PTD_ILD_ERR_BAD_INSN;
        unsigned x = ptd_ild_modrm_extra[ptd_ild_addrsize[ctx] == 16][modrm];
        if (x & ILD_SIB0) {
            if (pos >= PTD_ILD_MAX_LEN)
                return -PTD_ILD_ERR_TOO_LONG;
            x = (x & ~ILD_SIB0) + (MODRM_RM(bytes[pos]) == SIB_BASE_NONE ? 4 : 0);
        }
        pos += x;
    }

    if (map == PTD_ILD_MAP_0F && ptd_ild_0f_sse[op]) {
        unsigned mp = (pf & PF_REP) ? rep : ((pf & PF_OSZ) ? PFX_OSZ : 0);
        if (!ptd_ild_sse_ok(ptd_ild_0f_sse[op], op, mp, modrm))
            return -PTD_ILD_ERR_BAD_INSN;
    }
    if (ILD_UNLIKELY((pf & PF_LOCK) && (!(e & ILD_LK) || MODRM_MOD(modrm) == MOD_REG)))
        return -PTD_ILD_ERR_BAD_INSN;   /* SDM LOCK; see ptd_ild_decode_full() */

    const unsigned kind = e & ILD_IMM_MASK;
    if (ILD_UNLIKELY(kind > I_RELZ))
        return ptd_ild_decode_full(insn, bytes, size, mode);
    const size_t len = pos + ILD_IMM_SIZE(ctx, kind);
    if (ILD_UNLIKELY(len > PTD_ILD_MAX_LEN))
        return -PTD_ILD_ERR_TOO_LONG;

    unsigned iclass = ILD_CLASS_OF(e), opsz = ptd_ild_opsize[ctx];
    unsigned flags = ((e & ILD_M) >> 4) | (pf & (PF_LOCK | PF_REP | PF_REX));
    if (iclass != PTD_ICLASS_OTHER && iclass <= PTD_ICLASS_NEAR_RET && m64)
        opsz = 64;   /* SDM Vol. 2, 2.2.1.7; see ptd_ild_decode_full() */
    if (kind >= I_REL8) {
        const uint8_t *p = bytes + pos;
        int32_t d = kind == I_REL8 ? (int8_t)p[0]
                  : (len - pos == 2) ? (int16_t)(uint16_t)(p[0] | (p[1] << 8))
                  : (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) |
                              ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24));
        uint64_t t = insn->ip + len + (uint64_t)(int64_t)d;
        insn->target = m64 ? t : opsz == 32 ? (t & 0xFFFFFFFFu) : (t & 0xFFFFu);
        insn->disp = d;
        flags |= PTD_INSN_REL;
    }
    insn->length = (uint8_t)len;
    insn->iclass = (uint8_t)iclass;
    insn->map = (uint8_t)map;
    insn->opcode = (uint8_t)op;
    insn->modrm = (uint8_t)modrm;
    insn->opsize = (uint8_t)opsz;
    insn->addrsize = ptd_ild_addrsize[ctx];
    insn->prefix_len = (uint8_t)prefix_len;
    insn->rex = (uint8_t)((pf & PF_REX) ? bytes[prefix_len - 1] : 0);
    insn->rep_byte = (uint8_t)((pf & PF_REP) ? rep : 0);
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

const char *ptd_ild_errstr(int code)
{
    switch (code < 0 ? -code : code) {
    case PTD_ILD_ERR_INVALID: return "invalid argument";
    case PTD_ILD_ERR_BAD_INSN: return "bad instruction";
    case PTD_ILD_ERR_TRUNCATED: return "instruction truncated";
    case PTD_ILD_ERR_TOO_LONG: return "instruction longer than 15 bytes";
    default: return NULL;
    }
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
