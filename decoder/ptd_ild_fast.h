/* libptd ILD: a lean step for the flow layer's hot loop.
 *
 * ptd_ild_step() gives only the length, the branch class and, for direct
 * near branches, the displacement of the common instructions: legacy/REX
 * prefixes without LOCK or F2/F3, the one-byte map and the 0F map outside
 * its SSE rows, groups decided by ModRM.reg, immediates up to rel16/32 (no
 * far pointers, ENTER, XBEGIN). Inlined into the caller, it costs no call
 * and fills only a small struct. For anything else (errors, vector
 * encodings, fewer than PTD_ILD_MAX_LEN bytes, ...) it returns 0 and the
 * caller decodes with ptd_ild_decode(), which then gives the answer. When
 * it returns n > 0, ptd_ild_decode() on the same bytes returns n with the
 * same iclass, PTD_INSN_REL exactly when s->rel, and then the same disp
 * (test/ild/ild_vs_zydis.c and ild_bounds.c check this).
 *
 * Internal to libptd (decoder/): it reads the ILD's tables directly. */
#ifndef PTD_ILD_FAST_H
#define PTD_ILD_FAST_H

#include "decoder/ptd_ild.h"
#include "decoder/ptd_hints.h"
#include "decoder/ptd_ild_tables.h"

struct ptd_ild_step {
    uint8_t iclass; /* enum ptd_iclass */
    uint8_t rel;    /* direct near branch (rel8/16/32): disp valid */
    int32_t disp;   /* the sign-extended displacement (rel), else 0 */
};

/* The step table (decoder/ptd_ild_step_table.c, generated ahead of time by
 * test/ild/gen_step_table.c from ptd_ild_decode()): for an instruction with
 * no legacy prefix (at most a REX), one entry per map (one-byte, 0F),
 * context (16-, 32-, 64-bit mode; 64-bit with REX.W) and opcode byte:
 *   bits 0-3   length without prefix and without what follows ModRM
 *              (opcode bytes, ModRM, immediate or displacement)
 *   bit  4     PTD_STEP_M: a ModRM byte follows (add its SIB/displacement)
 *   bits 5-7   enum ptd_iclass
 *   bits 8-9   direct near branch: 1 rel8, 2 rel16, 3 rel32 (its last bytes)
 *   bit  10    PTD_STEP_NOREG: ModRM.mod = 11 is not this instruction
 *   bit  11    PTD_STEP_ESC0F: 0F, look up the next byte in the 0F map
 *   bit  15    PTD_STEP_SLOW: anything else (prefixes, groups decided by
 *              ModRM.reg, vector encodings, invalid): the general path */
#define PTD_STEP_LEN         0x000Fu
#define PTD_STEP_M           0x0010u
#define PTD_STEP_CLASS_SHIFT 5
#define PTD_STEP_CLASS_OF(e) (((unsigned)(e) >> PTD_STEP_CLASS_SHIFT) & 7u)
#define PTD_STEP_REL_SHIFT   8
#define PTD_STEP_REL_OF(e)   (((unsigned)(e) >> PTD_STEP_REL_SHIFT) & 3u)
#define PTD_STEP_NOREG       0x0400u
#define PTD_STEP_ESC0F       0x0800u
#define PTD_STEP_SLOW        0x8000u
extern const uint16_t ptd_ild_step_table[2][4][256];

/* The table's answer, or 0 for the general path below. */
static PTD_ALWAYS_INLINE unsigned ptd_ild_step_tab(const uint8_t *bytes, unsigned mode,
                                                   struct ptd_ild_step *s)
{
    unsigned b0 = bytes[0];
    unsigned rex = 0, ctx = mode;
    const uint8_t *p = bytes;
    /* one REX prefix (64-bit mode), W selecting the context. A branch, not
     * arithmetic: code repeats its REX pattern, so the CPU predicts it and
     * loads the opcode's table entry at once; computed, the REX test sat
     * between the first byte's load and the table load on the chain that
     * bounds the decode (measured: a branch-free step, REX/0F/ModRM
     * selected arithmetically, was 10-25% slower) */
    if (mode == PTD_EXEC_MODE_64 && (b0 >> 4) == 4u) {
        rex = 1;
        ctx += (b0 >> 3) & 1u;
        p++;
    }
    unsigned e = ptd_ild_step_table[0][ctx][p[0]];
    if (e & PTD_STEP_ESC0F) {
        e = ptd_ild_step_table[1][ctx][p[1]];
        p++;
    }
    if (PTD_RARE(e & PTD_STEP_SLOW))
        return 0;
    unsigned len = rex + (e & PTD_STEP_LEN);
    if (e & PTD_STEP_M) {
        unsigned modrm = p[1];
        if (PTD_RARE((e & PTD_STEP_NOREG) && modrm >= 0xC0u))
            return 0;
        unsigned x = ptd_ild_modrm_extra[mode == PTD_EXEC_MODE_16][modrm];
        if (x & ILD_SIB0)
            x = (x & ~ILD_SIB0) + ((p[2] & 7u) == 5u ? 4 : 0);
        len += x;
    }
    s->iclass = (uint8_t)PTD_STEP_CLASS_OF(e);
    unsigned rk = PTD_STEP_REL_OF(e);
    s->rel = rk != 0;
    s->disp = 0;
    if (rk) {
        const uint8_t *d = bytes + len - (rk == 3 ? 4 : rk);
        s->disp = rk == 1   ? (int8_t)d[0]
                  : rk == 2 ? (int16_t)(uint16_t)(d[0] | (d[1] << 8))
                            : (int32_t)((uint32_t)d[0] | ((uint32_t)d[1] << 8) |
                                        ((uint32_t)d[2] << 16) | ((uint32_t)d[3] << 24));
    }
    return len;
}

static PTD_ALWAYS_INLINE unsigned ptd_ild_step(const uint8_t *bytes, size_t size, unsigned mode,
                                               struct ptd_ild_step *s)
{
    if (PTD_RARE(size < PTD_ILD_MAX_LEN || mode > PTD_EXEC_MODE_64))
        return 0;
    unsigned t = ptd_ild_step_tab(bytes, mode, s);
    if (t)
        return t;
    const uint8_t *pt = ptd_ild_prefix_bits[mode == PTD_EXEC_MODE_64];
    unsigned pos = 0, pf = 0, b = bytes[0], k;

    while (PTD_RARE((k = pt[b]) != 0)) {
        pf = (pf & ~(PF_REX | PF_W)) | k;
        if (++pos >= PTD_ILD_MAX_LEN)
            return 0;
        b = bytes[pos];
    }
    if (PTD_RARE(pf & (PF_LOCK | PF_REP)))
        return 0;
    unsigned map = PTD_ILD_MAP_PRIMARY, op = b;
    uint16_t e = ptd_ild_map_primary[b];
    pos++;
    if (e & ILD_ESC) {
        if (b != 0x0F || pos >= PTD_ILD_MAX_LEN) /* VEX, EVEX, XOP */
            return 0;
        op = bytes[pos++];
        if (op == 0x38 || op == 0x3A || ptd_ild_0f_sse[op])
            return 0;
        map = PTD_ILD_MAP_0F;
        e = ptd_ild_map_0f[op];
    }
    if (PTD_RARE(e & (ILD_INV | ILD_I64 | ILD_REGONLY)))
        return 0;
    if (e & ILD_M) {
        if (pos >= PTD_ILD_MAX_LEN)
            return 0;
        unsigned modrm = bytes[pos++];
        if (PTD_RARE(e & ILD_GRP)) {
            unsigned g = ptd_ild_group_of[map][op];
            uint16_t ge = ptd_ild_group_reg[g][(modrm >> 3) & 7u];
            if (g == GR_NONE || (ge & (ILD_GRP | ILD_INV | ILD_REGONLY)))
                return 0;
            e = ge;
        }
        if ((e & ILD_NOREG) && (modrm >> 6) == 3u)
            return 0;
        unsigned x = ptd_ild_modrm_extra[ptd_ild_addrsize[ILD_CTX_OF(mode, pf)] == 16][modrm];
        if (x & ILD_SIB0) {
            if (pos >= PTD_ILD_MAX_LEN)
                return 0;
            x = (x & ~ILD_SIB0) + ((bytes[pos] & 7u) == 5u ? 4 : 0);
        }
        pos += x;
    }
    unsigned kind = e & ILD_IMM_MASK;
    if (PTD_RARE(kind > I_RELZ))
        return 0;
    unsigned len = pos + ILD_IMM_SIZE(ILD_CTX_OF(mode, pf), kind);
    if (PTD_RARE(len > PTD_ILD_MAX_LEN))
        return 0;
    s->iclass = (uint8_t)ILD_CLASS_OF(e);
    s->rel = kind >= I_REL8;
    s->disp = 0;
    if (kind >= I_REL8) {
        const uint8_t *p = bytes + pos;
        s->disp = kind == I_REL8     ? (int8_t)p[0]
                  : (len - pos == 2) ? (int16_t)(uint16_t)(p[0] | (p[1] << 8))
                                     : (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) |
                                                 ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24));
    }
    return len;
}

#endif /* PTD_ILD_FAST_H */
