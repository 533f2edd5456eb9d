/* libptd instruction-length decoder: see ptd_ild.h.
 *
 * What an opcode needs (ModRM, immediate kind, branch class, validity)
 * comes from one 16-bit entry per opcode in a 256-entry table per legacy
 * map (ptd_ild_tables.c). Sizes that depend on the mode and on 66/REX.W/67
 * come from one "size context" index. Opcodes whose entry depends on
 * ModRM.reg take it from a group table; the few that depend on the whole
 * ModRM byte or on the mandatory prefix carry ILD_GRP and are finished in
 * ptd_ild_group() (ptd_ild_group.c), off the common path.
 *
 * Two entry points share the tables: ptd_ild_decode() below is a fast path
 * for the common encodings with at least 15 bytes available; it hands
 * anything else to ptd_ild_decode_full() (ptd_ild_full.c), which handles
 * every encoding and every input size. The differential test checks that
 * both give the same results. This file also holds the small API
 * functions (names, errors, far-transfer kinds).
 */
#include "decoder/ptd_ild_full.h"

/* The fast path: at least PTD_ILD_MAX_LEN bytes given (so no truncation),
 * one-byte and 0F maps, groups decided by ModRM.reg. Anything else, and
 * every error but BAD_INSN on a ModRM form, goes to ptd_ild_decode_full(),
 * which gives the same result for what this path takes (the differential
 * test checks both paths against each other and Zydis). */
int ptd_ild_decode(struct ptd_insn *insn, const uint8_t *bytes, size_t size,
                   enum ptd_exec_mode mode)
{
    if (PTD_RARE(size < PTD_ILD_MAX_LEN || !insn || !bytes || (unsigned)mode > PTD_EXEC_MODE_64))
        return ptd_ild_decode_full(insn, bytes, size, mode);

    const bool m64 = mode == PTD_EXEC_MODE_64;
    const uint8_t *pt = ptd_ild_prefix_bits[m64];
    size_t pos = 0;
    unsigned pf = 0, rep = 0, b = bytes[0], k;

    while ((k = pt[b]) != 0) {
        pf = (pf & ~(PF_REX | PF_W)) | k;
        rep = (k & PF_REP) ? b : rep;
        if (PTD_RARE(++pos >= PTD_ILD_MAX_LEN))
            return -PTD_ILD_ERR_TOO_LONG;
        b = bytes[pos];
    }

    const size_t prefix_len = pos;
    unsigned map = PTD_ILD_MAP_PRIMARY, op = b;
    uint16_t e = ptd_ild_map_primary[b];
    pos++;
    if (PTD_RARE(e & ILD_ESC)) {
        if (b != OPC_ESC_0F || pos >= PTD_ILD_MAX_LEN)
            return ptd_ild_decode_full(insn, bytes, size, mode);
        op = bytes[pos++];
        if (op == OPC_ESC_0F38 || op == OPC_ESC_0F3A)
            return ptd_ild_decode_full(insn, bytes, size, mode);
        map = PTD_ILD_MAP_0F;
        e = ptd_ild_map_0f[op];
    }
    if (PTD_RARE(e & (ILD_INV | ILD_I64 | ILD_REGONLY)))
        return ptd_ild_decode_full(insn, bytes, size, mode);

    const unsigned ctx = ILD_CTX_OF((unsigned)mode, pf);
    unsigned modrm = 0;
    if (e & ILD_M) {
        if (PTD_RARE(pos >= PTD_ILD_MAX_LEN))
            return -PTD_ILD_ERR_TOO_LONG;
        modrm = bytes[pos++];
        if (PTD_RARE(e & ILD_GRP)) {
            unsigned g = ptd_ild_group_of[map][op];
            uint16_t ge = ptd_ild_group_reg[g][MODRM_REG(modrm)];
            if (g == GR_NONE || (ge & (ILD_GRP | ILD_INV)))
                return ptd_ild_decode_full(insn, bytes, size, mode);
            e = ge;
        }
        if (PTD_RARE((e & ILD_NOREG) && MODRM_MOD(modrm) == MOD_REG))
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
        if (!ptd_ild_sse_ok(ptd_ild_0f_sse[op], op, ptd_ild_mandatory(pf, rep), modrm))
            return -PTD_ILD_ERR_BAD_INSN;
    }
    if (PTD_RARE((pf & PF_LOCK) && (!(e & ILD_LK) || MODRM_MOD(modrm) == MOD_REG)))
        return -PTD_ILD_ERR_BAD_INSN; /* SDM LOCK; see ild_prefix_rules() */

    const unsigned kind = e & ILD_IMM_MASK;
    if (PTD_RARE(kind > I_RELZ))
        return ptd_ild_decode_full(insn, bytes, size, mode);
    const size_t len = pos + ILD_IMM_SIZE(ctx, kind);
    if (PTD_RARE(len > PTD_ILD_MAX_LEN))
        return -PTD_ILD_ERR_TOO_LONG;

    unsigned iclass = ILD_CLASS_OF(e), opsz = ptd_ild_opsize[ctx];
    unsigned flags = ((e & ILD_M) >> 4) | (pf & (PF_LOCK | PF_REP | PF_REX));
    if (iclass != PTD_ICLASS_OTHER && iclass <= PTD_ICLASS_NEAR_RET && m64)
        opsz = 64; /* SDM Vol. 2, 2.2.1.7; see ptd_ild_decode_full() */
    if (kind >= I_REL8) {
        const uint8_t *p = bytes + pos;
        int32_t d = kind == I_REL8     ? (int8_t)p[0]
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

int ptd_ild_decode_at(struct ptd_insn *insn, const uint8_t *bytes, size_t size,
                      enum ptd_exec_mode mode, uint64_t ip)
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

/* The far transfers by opcode (SDM Vol. 2 instruction pages; FRED for
 * ERETS/ERETU; AMD APM Vol. 3 for VMRUN/VMMCALL). */
#define OPC_CALLF_PTR   0x9A
#define OPC_RETF_IW     0xCA
#define OPC_RETF        0xCB
#define OPC_INT3        0xCC
#define OPC_INT         0xCD
#define OPC_INTO        0xCE
#define OPC_IRET        0xCF
#define OPC_JMPF_PTR    0xEA
#define OPC_INT1        0xF1
#define OPC_GRP5        0xFF
#define GRP5_CALLF      3
#define GRP5_JMPF       5
#define OPC_0F_GRP7     0x01
#define OPC_0F_SYSCALL  0x05
#define OPC_0F_SYSRET   0x07
#define OPC_0F_SYSENTER 0x34
#define OPC_0F_SYSEXIT  0x35
#define OPC_0F_RSM      0xAA
#define MODRM_VMCALL    0xC1
#define MODRM_VMLAUNCH  0xC2
#define MODRM_VMRESUME  0xC3
#define MODRM_ERET      0xCA
#define MODRM_VMFUNC    0xD4
#define MODRM_VMRUN     0xD8
#define MODRM_VMMCALL   0xD9
#define MODRM_UIRET     0xEC

enum ptd_ild_far ptd_ild_far_kind(const struct ptd_insn *insn)
{
    if (!insn || insn->iclass != PTD_ICLASS_FAR_TRANSFER)
        return PTD_FAR_NONE;
    if (insn->map == PTD_ILD_MAP_PRIMARY) {
        switch (insn->opcode) {
        case OPC_CALLF_PTR: return PTD_FAR_CALL;
        case OPC_JMPF_PTR: return PTD_FAR_JUMP;
        case OPC_RETF_IW:
        case OPC_RETF: return PTD_FAR_RET;
        case OPC_INT3:
        case OPC_INT:
        case OPC_INTO:
        case OPC_INT1: return PTD_FAR_SWINT;
        case OPC_IRET: return PTD_FAR_IRET;
        case OPC_GRP5: return MODRM_REG(insn->modrm) == GRP5_CALLF ? PTD_FAR_CALL : PTD_FAR_JUMP;
        }
    } else if (insn->map == PTD_ILD_MAP_0F) {
        switch (insn->opcode) {
        case OPC_0F_SYSCALL:
        case OPC_0F_SYSENTER: return PTD_FAR_SYSCALL;
        case OPC_0F_SYSRET:
        case OPC_0F_SYSEXIT: return PTD_FAR_SYSRET;
        case OPC_0F_RSM: return PTD_FAR_RSM;
        case OPC_0F_GRP7:
            switch (insn->modrm) {
            case MODRM_VMCALL:
            case MODRM_VMMCALL: return PTD_FAR_VMCALL;
            case MODRM_VMLAUNCH:
            case MODRM_VMRESUME:
            case MODRM_VMRUN: return PTD_FAR_VMENTRY;
            case MODRM_VMFUNC: return PTD_FAR_VMFUNC;
            case MODRM_ERET: return PTD_FAR_ERET;
            case MODRM_UIRET: return PTD_FAR_UIRET;
            }
        }
    }
    return PTD_FAR_NONE; /* not reached for what the ILD classes far */
}
