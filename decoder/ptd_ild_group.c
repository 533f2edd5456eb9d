/* libptd ILD: the opcodes whose validity, immediate or branch class depend
 * on ModRM or on the mandatory prefix (entries with ILD_GRP), finished off
 * the common path. See ptd_ild_full.h.
 *
 * Sources: SDM Vol. 2 instruction pages and Table A-6 (groups); the APX
 * specification (REX2 and the XSAVE family; EVEX map 4 Group 3); the FRED
 * specification (ERETS, ERETU, LKGS); AMD APM Vol. 3 (SVM) and Vol. 4
 * (EXTRQ/INSERTQ); the VIA PadLock Programming Guide. Where an instruction
 * is newer than the SDM revision at hand, Intel XED was the reference
 * (docs/ild.md). */
#include "decoder/ptd_ild_full.h"

/* Opcodes and ModRM bytes singled out below. */
#define OPC_GRP11_EB          0xC6 /* MOV r/m8, imm8; XABORT */
#define OPC_GRP11_EV          0xC7 /* MOV r/m, imm; XBEGIN */
#define MODRM_XABORT_XBEGIN   0xF8 /* C6 F8 ib, C7 F8 rel */
#define OPC_0F_GRP6           0x00
#define GRP6_LKGS             6 /* F2 0F 00 /6 */
#define OPC_0F_GRP7           0x01
#define MODRM_VMCALL          0xC1
#define MODRM_VMLAUNCH        0xC2
#define MODRM_VMRESUME        0xC3
#define MODRM_ERET            0xCA /* NP: CLAC; F2: ERETS; F3: ERETU */
#define MODRM_VMFUNC          0xD4
#define MODRM_VMRUN           0xD8
#define MODRM_VMMCALL         0xD9
#define MODRM_UIRET           0xEC /* F3 */
#define MODRM_SWAPGS          0xF8
#define OPC_0F_MOV_R_CR       0x20
#define OPC_0F_MOV_R_DR       0x21
#define OPC_0F_MOV_CR_R       0x22
#define OPC_0F_MOV_DR_R       0x23
#define OPC_0F_VMREAD         0x78 /* 66: EXTRQ ib, ib; F2: INSERTQ ib, ib */
#define OPC_0F_VMWRITE        0x79 /* 66: EXTRQ; F2: INSERTQ */
#define OPC_0F_PADLOCK_A6     0xA6
#define OPC_0F_PADLOCK_A7     0xA7
#define OPC_0F_GRP15          0xAE
#define GRP15_PTWRITE         4 /* ModRM.reg of F3 0F AE /4 */
#define GRP15_XSAVE_FIRST     4 /* 0F AE /4 /5 /6 (memory): XSAVE XRSTOR XSAVEOPT */
#define OPC_0F_POPCNT         0xB8
#define OPC_0F_GRP9           0xC7
#define GRP9_XSAVE_FIRST      3 /* 0F C7 /3 /4 /5 (memory): XRSTORS XSAVEC XSAVES */
#define OPC_0F38_MOVRS_B      0x8A
#define OPC_0F38_MOVRS_V      0x8B
#define OPC_0F38_KL_WIDE      0xD8 /* F3 0F 38 D8: Key Locker wide forms */
#define OPC_0F38_KL_FIRST_MEM 0xDD /* F3 0F 38 DD-DF: memory-only Key Locker */
#define OPC_0F38_USER_MSR     0xF8 /* F2/F3 with a register: URDMSR/UWRMSR */
#define OPC_0F3A_HRESET       0xF0 /* F3 0F 3A F0 C0 ib */
#define MODRM_HRESET          0xC0
#define OPC_MAP4_GRP3_EB      0xF6
#define MODRM_MONTMUL         0xC0 /* F3 0F A6 */
#define MODRM_XSHA1           0xC8
#define MODRM_XSHA256         0xD0
#define MODRM_XSTORE          0xC0 /* 0F A7 */
#define MODRM_XCRYPT_LAST     0xE8 /* F3 0F A7 C8..E8, step 8 */
#define MODRM_REG_FIRST       0xC0 /* first register form (mod=11) */
/* Control registers that exist, one bit per CRn: CR0 CR2 CR3 CR4 CR8. */
#define CR_VALID_MASK ((1u << 0) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 8))

#define FAR ILD_CLASS(PTD_ICLASS_FAR_TRANSFER)

/* 0F 01 (Group 7): the register forms name whole instructions. Those that
 * leave or enter a guest are far transfers for Intel PT (SDM Vol. 3C,
 * "Intel PT", VMX operation: VM exits and entries are far), as are FRED's
 * ERETS/ERETU and UIRET (64-bit mode only, #UD elsewhere). */
static uint16_t group7(unsigned modrm, unsigned mp, bool m64, uint16_t e)
{
    switch (modrm) {
    case MODRM_VMCALL:
    case MODRM_VMLAUNCH:
    case MODRM_VMRESUME:
    case MODRM_VMFUNC:
    case MODRM_VMRUN: /* AMD SVM */
    case MODRM_VMMCALL: /* AMD SVM */ return (uint16_t)(e | FAR);
    case MODRM_ERET: /* F2: ERETS, F3: ERETU (FRED); NP: CLAC */
        if (mp == PFX_REP || mp == PFX_REPNE)
            return m64 ? (uint16_t)(e | FAR) : 0;
        return e;
    case MODRM_UIRET: /* F3: UIRET (user interrupts) */
        if (mp == PFX_REP)
            return m64 ? (uint16_t)(e | FAR) : 0;
        return e;
    case MODRM_SWAPGS: /* 64-bit mode only */ return m64 ? e : 0;
    }
    return e;
}

/* The 0F map (SDM Table ). rx: ptd_ild_group()'s. */
static uint16_t group_0f(unsigned op, unsigned modrm, unsigned mp, unsigned rx, uint16_t e)
{
    unsigned mod = MODRM_MOD(modrm), reg = MODRM_REG(modrm);
    bool m64 = (rx & ILD_RX_M64) != 0;
    /* REX.R extends ModRM.reg to 4 bits, REX2.R4 to 5 (APX spec: a control
     * or debug register beyond those that exist is #UD) */
    unsigned ext = ((rx & REX_R) ? 8u : 0u) | (((rx & ILD_RX_REX2) && (rx & REX2_R4)) ? 16u : 0u);

    switch (op) {
    case OPC_0F_GRP6: /* F2 0F 00 /6: LKGS (FRED), 64-bit mode only */
        return (reg == GRP6_LKGS && mp == PFX_REPNE && m64) ? e : 0;
    case OPC_0F_GRP7: return group7(modrm, mp, m64, e);
    case OPC_0F_MOV_R_CR: /* CR0, CR2, CR3, CR4 and CR8 exist; others are */
    case OPC_0F_MOV_CR_R: /* #UD (SDM MOV-Move to/from Control Registers) */
        return ((CR_VALID_MASK >> (reg | ext)) & 1u) ? e : 0;
    case OPC_0F_MOV_R_DR: /* DR0-DR7; REX.R (REX2.R3/R4) is #UD (SDM */
    case OPC_0F_MOV_DR_R: /* MOV-Move to/from Debug Registers) */ return ext ? 0 : e;
    case OPC_0F_VMREAD: /* NP: VMREAD; 66: EXTRQ xmm, ib, ib (/0, mod=11);
                           F2: INSERTQ xmm, xmm, ib, ib (mod=11); F3: none
                           (SDM VMREAD; AMD APM Vol. 4, EXTRQ/INSERTQ) */
        if (mp == PFX_OSZ)
            return (mod == MOD_REG && reg == 0) ? (uint16_t)(e | I_BB) : 0;
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
    case OPC_0F_PADLOCK_A6: /* VIA PadLock, register forms only: F3 0F A6
                               C0/C8/D0 MONTMUL, XSHA1, XSHA256 */
        return (mp == PFX_REP &&
                (modrm == MODRM_MONTMUL || modrm == MODRM_XSHA1 || modrm == MODRM_XSHA256))
                   ? e
                   : 0;
    case OPC_0F_PADLOCK_A7:        /* 0F A7 C0 XSTORE; F3 0F A7 C8..E8 XCRYPTECB/
                                      CBC/CTR/CFB/OFB */
        if (modrm == MODRM_XSTORE) /* XSTORE, REP XSTORE; not F2 */
            return mp != PFX_REPNE ? e : 0;
        return (mp == PFX_REP && mod == MOD_REG && MODRM_RM(modrm) == 0 &&
                modrm <= MODRM_XCRYPT_LAST)
                   ? e
                   : 0;
    case OPC_0F_POPCNT: /* F3: POPCNT; otherwise undefined (JMPE of IA-64) */
        return mp == PFX_REP ? e : 0;
    }
    return e;
}

uint16_t ptd_ild_group(unsigned map, unsigned op, unsigned modrm, unsigned mp, unsigned rx,
                       uint16_t e)
{
    unsigned mod = MODRM_MOD(modrm), reg = MODRM_REG(modrm);
    unsigned g = map <= PTD_ILD_MAP_0F ? ptd_ild_group_of[map][op] : GR_NONE;

    /* APX: XSAVE, XRSTOR, XSAVEOPT (0F AE /4-/6) and XRSTORS, XSAVEC,
     * XSAVES (0F C7 /3-/5) are #UD with REX2 */
    if ((rx & ILD_RX_REX2) && map == PTD_ILD_MAP_0F && mp == 0 && mod != MOD_REG &&
        ((op == OPC_0F_GRP15 && reg - GRP15_XSAVE_FIRST <= 2u) ||
         (op == OPC_0F_GRP9 && reg - GRP9_XSAVE_FIRST <= 2u)))
        return 0;
    if (g != GR_NONE) {
        e = ptd_ild_group_reg[g][reg];
        if (e & ILD_INV)
            return 0;
        if (!(e & ILD_GRP))
            return e;
    }
    e &= (uint16_t)~ILD_GRP;
    switch (map) {
    case PTD_ILD_MAP_PRIMARY:
        if (op >= OPC_X87_FIRST && op <= OPC_X87_LAST) {
            unsigned i = op - OPC_X87_FIRST;
            bool ok = mod == MOD_REG ? (ptd_ild_x87_reg[i] >> (modrm - MODRM_REG_FIRST)) & 1u
                                     : (ptd_ild_x87_mem[i] >> reg) & 1u;
            return ok ? e : 0;
        }
        switch (op) {
        case OPC_GRP11_EB: /* C6 F8 ib: XABORT */
        case OPC_GRP11_EV: /* C7 F8 rel16/32: XBEGIN */ return modrm == MODRM_XABORT_XBEGIN ? e : 0;
        }
        return e;
    case PTD_ILD_MAP_0F: return group_0f(op, modrm, mp, rx, e);
    case PTD_ILD_MAP_0F38:
        switch (op) {
        case OPC_0F38_MOVRS_B: /* MOVRS: 64-bit mode only (Intel XED) */
        case OPC_0F38_MOVRS_V: return (rx & ILD_RX_M64) ? e : 0;
        case OPC_0F38_USER_MSR: /* with a register: F2 URDMSR, F3 UWRMSR
                                   (USER_MSR, 64-bit mode only) */
            if (mod == MOD_REG)
                return ((mp == PFX_REP || mp == PFX_REPNE) && (rx & ILD_RX_M64)) ? e : 0;
            return e;
        case OPC_0F38_KL_WIDE: /* AESENC/DECWIDE128/256KL are /0../3 */ return reg <= 3 ? e : 0;
        }
        /* F3 0F 38 DD-DF: AESDEC128KL, AESENC256KL, AESDEC256KL take m384/
           m512 (F3 DC with a register is LOADIWKEY); 66: AES* */
        if (op >= OPC_0F38_KL_FIRST_MEM && mp == PFX_REP && mod == MOD_REG)
            return 0;
        return e;
    case PTD_ILD_MAP_0F3A:
        if (op == OPC_0F3A_HRESET) /* HRESET: ModRM C0 only (SDM HRESET) */
            return modrm == MODRM_HRESET ? e : 0;
        return e;
    case PTD_ILD_MAP_EVEX_MAP4:
        /* Group 3 promoted by APX: TEST/CTEST r/m, imm are /0 and /1 */
        if (reg <= 1)
            return (uint16_t)(e | (op == OPC_MAP4_GRP3_EB ? I_B : I_Z));
        return e;
    }
    return e;
}
