/* libptd ILD: what the fast path (ptd_ild.c), the complete decoder
 * (ptd_ild_full.c) and the ModRM/prefix rules (ptd_ild_group.c) share.
 * Internal to decoder/ptd_ild*.c. */
#ifndef PTD_ILD_FULL_H
#define PTD_ILD_FULL_H

#include "decoder/ptd_ild.h"
#include "decoder/ptd_hints.h"
#include "decoder/ptd_ild_tables.h"

/* A stage of the complete decode: inlined into it */
#define ILD_STAGE static PTD_ALWAYS_INLINE

/* REX bits (SDM Vol. 2, 2.2.1.2); REX2 payload bits (APX spec, "REX2
 * prefix": M0 R4 X4 B4 W R3 X3 B3, the low four as in REX). */
#define REX_W   0x08 /* REX.W / REX2.W: 64-bit operand size */
#define REX_R   0x04 /* REX.R / REX2.R3: extends ModRM.reg */
#define REX2_M0 0x80 /* map 0 (one-byte) or map 1 (0F) */
#define REX2_R4 0x40 /* ModRM.reg bit 4 */

/* Escape and vector-prefix bytes (SDM Vol. 2, A.2, 2.3.5, 2.7.1; APM 1.8). */
#define OPC_ESC_0F   0x0F
#define OPC_ESC_0F38 0x38 /* after 0F */
#define OPC_ESC_0F3A 0x3A /* after 0F */
#define OPC_EVEX     0x62 /* BOUND outside 64-bit mode unless ModRM.mod=11 */
#define OPC_VEX3     0xC4 /* LES outside 64-bit mode unless ModRM.mod=11 */
#define OPC_VEX2     0xC5 /* LDS outside 64-bit mode unless ModRM.mod=11 */
#define OPC_XOP      0x8F /* POP r/m unless map_select >= 8 */

/* ModRM fields (SDM Vol. 2, 2.1.5). */
#define MODRM_MOD(m)  ((unsigned)(m) >> 6)
#define MODRM_REG(m)  (((unsigned)(m) >> 3) & 7u)
#define MODRM_RM(m)   ((unsigned)(m)&7u)
#define MOD_REG       3u /* mod=11: register operand, no memory */
#define SIB_BASE_NONE 5u /* SIB.base=101 with mod=00: disp32, no base */

/* The error for a byte at index pos that the caller did not give: past the
 * architectural limit, too long; otherwise, truncated input. */
static inline int ptd_ild_short(size_t pos)
{
    return pos >= PTD_ILD_MAX_LEN ? -PTD_ILD_ERR_TOO_LONG : -PTD_ILD_ERR_TRUNCATED;
}

/* The mandatory prefix of an SSE-era or group opcode: F2/F3 if present
 * (the last of them), else 66 if present, else 0 (SDM Vol. 2, 2.1.2). */
static inline unsigned ptd_ild_mandatory(unsigned pf, unsigned rep)
{
    return (pf & PF_REP) ? rep : ((pf & PF_OSZ) ? PFX_OSZ : 0);
}

/* Whether an SSE-era opcode (rule from ptd_ild_0f*_sse; op: the 0F opcode,
 * 0 for 0F 38/0F 3A) is defined under mandatory prefix mp with this ModRM
 * (SDM Table A-3; the shift groups 0F 71-73 by ModRM.reg, Table A-6
 * groups 12-14). */
#define OPC_0F_GRP12 0x71 /* MMX/SSE shift groups (imm8) */
#define OPC_0F_GRP13 0x72
#define OPC_0F_GRP14 0x73
static inline bool ptd_ild_sse_ok(unsigned rule, unsigned op, unsigned mp, unsigned modrm)
{
    unsigned mod = MODRM_MOD(modrm), reg = MODRM_REG(modrm);
    unsigned want = mp == PFX_OSZ     ? SSE_66
                    : mp == PFX_REP   ? SSE_F3
                    : mp == PFX_REPNE ? SSE_F2
                                      : SSE_NP;
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
    case OPC_0F_GRP12: /* PSRLW /2, PSRAW /4, PSLLW /6 */
    case OPC_0F_GRP13: /* PSRLD /2, PSRAD /4, PSLLD /6 */ return reg == 2 || reg == 4 || reg == 6;
    case OPC_0F_GRP14: /* PSRLQ /2, PSLLQ /6; 66 only: PSRLDQ /3, PSLLDQ /7 */
        return reg == 2 || reg == 6 || (want == SSE_66 && (reg == 3 || reg == 7));
    }
    return true;
}

/* Finishes the ILD_GRP opcodes: those whose validity, immediate or class
 * depend on ModRM or on the mandatory prefix (ptd_ild_group.c). mp: the
 * mandatory prefix (ptd_ild_mandatory); rx: the effective REX byte or REX2
 * payload (else 0) with the ILD_RX_* bits. Returns the updated entry, or 0
 * (never a valid entry: every valid entry with ILD_GRP keeps ILD_M) when
 * the encoding is undefined. Scalars, not a struct: they travel in
 * registers. */
#define ILD_RX_REX2 0x100u /* rx holds a REX2 payload */
#define ILD_RX_M64  0x200u /* 64-bit mode */
uint16_t ptd_ild_group(unsigned map, unsigned op, unsigned modrm, unsigned mp, unsigned rx,
                       uint16_t e);

/* The complete decoder: any input size, every encoding, every check
 * (ptd_ild_full.c). ptd_ild_decode() takes the common cases itself and
 * leaves the rest to it. */
int ptd_ild_decode_full(struct ptd_insn *insn, const uint8_t *bytes, size_t size,
                        enum ptd_exec_mode mode);

#endif /* PTD_ILD_FULL_H */
