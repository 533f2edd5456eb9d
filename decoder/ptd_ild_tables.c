/* libptd ILD opcode tables, written from the opcode maps of the Intel SDM
 * Vol. 2, Appendix A (Tables A-2 one-byte, A-3 two-byte 0F, A-4 0F 38,
 * A-5 0F 3A, A-6 groups), the Intel APX Architecture Specification (REX2,
 * EVEX map 4) and AMD's APM Vol. 3 (XOP, SVM). Instructions newer than a
 * given SDM revision were checked against Intel XED (docs/ild.md).
 * Entry format: ptd_ild_tables.h. */
#include "decoder/ptd_ild.h"
#include "decoder/ptd_ild_tables.h"

/* Short names, local to this file, so that each row reads like a row of the
 * SDM's opcode map. */
#define M    ILD_M
#define Ib   I_B
#define Iw   I_W
#define Iz   I_Z
#define Iv   I_V
#define MO   I_MOFFS
#define X    ILD_INV
#define X64  ILD_I64
#define G    ILD_GRP
#define NR   ILD_NOREG
#define RO   ILD_REGONLY
#define ESC  ILD_ESC
#define CJ   (I_REL8 | ILD_CLASS(PTD_ICLASS_COND_JUMP))
#define CJZ  (I_RELZ | ILD_CLASS(PTD_ICLASS_COND_JUMP))
#define JMP8 (I_REL8 | ILD_CLASS(PTD_ICLASS_DIRECT_JUMP))
#define JMPZ (I_RELZ | ILD_CLASS(PTD_ICLASS_DIRECT_JUMP))
#define CALZ (I_RELZ | ILD_CLASS(PTD_ICLASS_DIRECT_CALL))
#define RET  ILD_CLASS(PTD_ICLASS_NEAR_RET)
#define FAR  ILD_CLASS(PTD_ICLASS_FAR_TRANSFER)
#define PTR  (I_PTR | FAR | X64)
#define PFX  0   /* a prefix byte: consumed before the table is read */
#define LK   ILD_LK
#define ALU  M | LK, M | LK, M, M, Ib, Iz  /* op r/m,r (8/z); op r,r/m (8/z); AL,ib; rAX,iz */
#define CMP  M, M, M, M, Ib, Iz             /* the same, not lockable */
#define R7(x)  x, x, x, x, x, x, x
#define R8(x)  R7(x), x
#define R16(x) R8(x), R8(x)

/* Prefix bits by [64-bit mode][byte]: 40-4F are REX prefixes in 64-bit
 * mode only, INC/DEC otherwise (SDM Vol. 2, 2.2.1); 48-4F carry REX.W. */
#define PF_LEGACY \
    [PFX_ES] = PF_SEG, [PFX_CS] = PF_SEG, [PFX_SS] = PF_SEG, [PFX_DS] = PF_SEG, \
    [PFX_FS] = PF_SEG, [PFX_GS] = PF_SEG, \
    [PFX_OSZ] = PF_OSZ, [PFX_ASZ] = PF_ASZ, \
    [PFX_LOCK] = PF_LOCK, [PFX_REPNE] = PF_REP, [PFX_REP] = PF_REP
#define REXW (PF_REX | PF_W)
#define REX8(first, v) [(first)] = (v), [(first) + 1] = (v), [(first) + 2] = (v), \
    [(first) + 3] = (v), [(first) + 4] = (v), [(first) + 5] = (v), \
    [(first) + 6] = (v), [(first) + 7] = (v)
const uint8_t ptd_ild_prefix_bits[2][256] = {
    { PF_LEGACY },
    { PF_LEGACY, REX8(PFX_REX_MIN, PF_REX), REX8(PFX_REX_W, REXW) },
};

/* Operand size in bits by [mode][66][REX.W] (SDM Vol. 1, 3.6.1, Table 3-4:
 * REX.W wins over 66) and address size by [mode][67] (Vol. 1, 3.6.1). */
#define OPSZ(m, o, w) ((m) == PTD_EXEC_MODE_64 ? ((w) ? 64 : (o) ? 16 : 32) \
                       : (m) == PTD_EXEC_MODE_32 ? ((o) ? 16 : 32) : ((o) ? 32 : 16))
#define ADSZ(m, a)    ((m) == PTD_EXEC_MODE_64 ? ((a) ? 32 : 64) \
                       : (m) == PTD_EXEC_MODE_32 ? ((a) ? 16 : 32) : ((a) ? 32 : 16))
/* The size context of an instruction, one index for mode, 66, REX.W and
 * 67: ILD_CTX(mode, osz, w, asz). */
#define CTX_ROWS(F, m) F(m, 0, 0, 0), F(m, 0, 0, 1), F(m, 0, 1, 0), F(m, 0, 1, 1), \
                       F(m, 1, 0, 0), F(m, 1, 0, 1), F(m, 1, 1, 0), F(m, 1, 1, 1)
#define CTX_ALL(F) CTX_ROWS(F, 0), CTX_ROWS(F, 1), CTX_ROWS(F, 2)
#define OS_OF(m, o, w, a) OPSZ(m, o, w)
#define AS_OF(m, o, w, a) ADSZ(m, a)
const uint8_t ptd_ild_opsize[ILD_CTX_COUNT] = { CTX_ALL(OS_OF) };
const uint8_t ptd_ild_addrsize[ILD_CTX_COUNT] = { CTX_ALL(AS_OF) };

/* Immediate bytes by context, one 4-bit field per kind (I_* * 4), so that
 * the decoder shifts instead of doing a second, dependent table load (SDM
 * Vol. 2, A.2.2 codes b, w, z, v; moffs by address size; near branches in
 * 64-bit mode keep rel32 whatever 66 says, as Intel CPUs do (SDM Vol. 2,
 * 2.2.1.7 and the JMP/Jcc/CALL pages; docs/ild.md)). */
#define IZ(os) ((os) == 16 ? 2 : 4)
#define IMMF(kind, n) ((uint64_t)(n) << (4 * (kind)))
#define IMMPACK(m, o, w, a) ( \
    IMMF(I_B, 1) | IMMF(I_W, 2) | IMMF(I_Z, IZ(OPSZ(m, o, w))) | \
    IMMF(I_V, OPSZ(m, o, w) / 8) | IMMF(I_MOFFS, ADSZ(m, a) / 8) | IMMF(I_REL8, 1) | \
    IMMF(I_RELZ, (m) == PTD_EXEC_MODE_64 ? 4 : IZ(OPSZ(m, o, w))) | \
    IMMF(I_RELZ_XBEGIN, IZ(OPSZ(m, o, w))) | IMMF(I_PTR, IZ(OPSZ(m, o, w)) + 2) | \
    IMMF(I_WB, 3) | IMMF(I_BB, 2) | IMMF(I_D, 4) | IMMF(I_ABS, 8))
const uint64_t ptd_ild_imm_sizes[ILD_CTX_COUNT] = { CTX_ALL(IMMPACK) };

/* Bytes after ModRM (SIB and displacement) by [16-bit addressing][ModRM]
 * (SDM Vol. 2, Tables 2-1, 2-2, 2-3). ILD_SIB0 marks SIB with mod=00, where
 * SIB.base=101 adds a disp32. */
#define A32_MOD0 0, 0, 0, 0, 1 | ILD_SIB0, 4, 0, 0
#define A32_MOD1 1, 1, 1, 1, 2, 1, 1, 1
#define A32_MOD2 4, 4, 4, 4, 5, 4, 4, 4
#define A16_MOD0 0, 0, 0, 0, 0, 0, 2, 0
#define A16_MOD1 1, 1, 1, 1, 1, 1, 1, 1
#define A16_MOD2 2, 2, 2, 2, 2, 2, 2, 2
#define MOD3     0, 0, 0, 0, 0, 0, 0, 0
#define X8(row)  row, row, row, row, row, row, row, row
const uint8_t ptd_ild_modrm_extra[2][256] = {
    { X8(A32_MOD0), X8(A32_MOD1), X8(A32_MOD2), X8(MOD3) },
    { X8(A16_MOD0), X8(A16_MOD1), X8(A16_MOD2), X8(MOD3) },
};

/* SDM Table A-2, one-byte opcodes. */
const uint16_t ptd_ild_map_primary[] = {
    /* 00 ADD; 06/07 PUSH/POP ES; 08 OR; 0E PUSH CS; 0F escape */
    ALU, X64, X64, ALU, X64, ESC,
    /* 10 ADC; 16/17 PUSH/POP SS; 18 SBB; 1E/1F PUSH/POP DS */
    ALU, X64, X64, ALU, X64, X64,
    /* 20 AND; 26 ES:; 27 DAA; 28 SUB; 2E CS:; 2F DAS */
    ALU, PFX, X64, ALU, PFX, X64,
    /* 30 XOR; 36 SS:; 37 AAA; 38 CMP; 3E DS:; 3F AAS */
    ALU, PFX, X64, CMP, PFX, X64,
    /* 40 INC/DEC (REX in 64-bit mode) */
    R16(0),
    /* 50 PUSH/POP r */
    R16(0),
    /* 60 PUSHA POPA BOUND(EVEX) ARPL/MOVSXD FS: GS: 66 67
       PUSH iz, IMUL r,r/m,iz, PUSH ib, IMUL r,r/m,ib, INS/OUTS */
    X64, X64, ESC | M | NR, M, PFX, PFX, PFX, PFX,
    Iz, M | Iz, Ib, M | Ib, 0, 0, 0, 0,
    /* 70 Jcc rel8 */
    R16(CJ),
    /* 80 Group 1 (82: an alias of 80, not in 64-bit mode); TEST; XCHG
       (lockable); MOV;
       8C MOV r/m,Sreg; 8D LEA; 8E MOV Sreg,r/m; 8F Group 1A POP / XOP */
    M | Ib | G, M | Iz | G, M | Ib | X64 | G, M | Ib | G, M, M, M | LK, M | LK,
    M, M, M, M, M | G, M | NR, M | G, ESC | M | G,
    /* 90 NOP/XCHG; CBW CWD; 9A CALL ptr16:z; FWAIT PUSHF POPF SAHF LAHF */
    R8(0), 0, 0, PTR, 0, 0, 0, 0, 0,
    /* A0 MOV AL/rAX <-> moffs; MOVS CMPS; TEST AL,ib; TEST rAX,iz; STOS LODS SCAS */
    MO, MO, MO, MO, 0, 0, 0, 0, Ib, Iz, 0, 0, 0, 0, 0, 0,
    /* B0 MOV r8, ib; B8 MOV r, iv */
    R8(Ib), R8(Iv),
    /* C0 Group 2 ib; RET iw; RET; C4 LES(VEX3) C5 LDS(VEX2); Group 11;
       ENTER iw,ib; LEAVE; RETF iw; RETF; INT3; INT ib; INTO; IRET */
    M | Ib, M | Ib, Iw | RET, RET, ESC | M | NR, ESC | M | NR, M | Ib | G, M | Iz | G,
    I_WB, 0, Iw | FAR, FAR, FAR, Ib | FAR, FAR | X64, FAR,
    /* D0 Group 2; AAM ib; AAD ib, REX2 in 64-bit mode (APX); D6 SALC
       (SDM "undefined opcodes"), in 64-bit mode UDB, a one-byte #UD (Intel
       XED; AMD: invalid); XLAT; D8-DF x87 escapes (ptd_ild_x87_*) */
    M, M, M, M, Ib | X64, ESC | Ib, 0, 0, R8(M | G),
    /* E0 LOOPNE LOOPE LOOP JrCXZ; IN/OUT ib; CALL relz; JMP relz;
       EA JMP ptr16:z; JMP rel8; IN/OUT DX */
    CJ, CJ, CJ, CJ, Ib, Ib, Ib, Ib, CALZ, JMPZ, PTR, JMP8, 0, 0, 0, 0,
    /* F0 LOCK; F1 INT1; REPNE REP; HLT CMC; Group 3; CLC STC CLI STI CLD
       STD; Group 4; Group 5 */
    PFX, FAR, PFX, PFX, 0, 0, M | G, M | G, 0, 0, 0, 0, 0, 0, M | G, M | G,
};

/* SDM Table A-3, two-byte opcodes 0F xx. */
const uint16_t ptd_ild_map_0f[] = {
    /* 00 Group 6; Group 7; LAR; LSL; -; SYSCALL; CLTS; SYSRET;
       INVD; WBINVD; -; UD2; -; PREFETCH(W) (Group P); FEMMS; 0F 0F:
       AMD's 3DNow!, #UD on every Intel CPU (blank in SDM Table A-3) */
    M | G, M | G, M, M, X, FAR, 0, FAR,
    0, 0, X, 0, X, M, 0, X,
    /* 10 SSE moves (13/17 MOVLPS/MOVHPS store: memory only);
       18 Group 16 prefetch / hint NOPs to 1F */
    M, M, M, M | NR, M, M, M, M | NR, R8(M),
    /* 20 MOV r,CR/DR, MOV CR/DR,r; 24-27 -; 28 SSE (2B MOVNTPS/PD: memory) */
    M | RO | G, M | RO | G, M | RO | G, M | RO | G, X, X, X, X,
    M, M, M, M | NR, M, M, M, M,
    /* 30 WRMSR RDTSC RDMSR RDPMC SYSENTER SYSEXIT - GETSEC
       38 (escape) - 3A (escape) - - - - - */
    0, 0, 0, 0, FAR, FAR, X, 0, 0, X, 0, X, X, X, X, X,
    /* 40 CMOVcc */
    R16(M),
    /* 50, 60 SSE/MMX */
    R16(M), R16(M),
    /* 70 PSHUF* ib, Groups 12-14 ib; PCMPEQ*; EMMS; VMREAD/EXTRQ/INSERTQ;
       VMWRITE/EXTRQ/INSERTQ; -; -; 7C-7F SSE */
    M | Ib, M | Ib, M | Ib, M | Ib, M, M, M, 0,
    M | G, M | G, X, X, M, M, M, M,
    /* 80 Jcc relz */
    R16(CJZ),
    /* 90 SETcc */
    R16(M),
    /* A0 PUSH FS, POP FS, CPUID, BT, SHLD ib, SHLD CL, -, -,
       PUSH GS, POP GS, RSM, BTS, SHRD ib, SHRD CL, Group 15, IMUL;
       A6/A7: VIA PadLock (XSTORE, XCRYPT*, MONTMUL, XSHA*), which Zydis
       decodes by default; ModRM names the instruction */
    0, 0, 0, M, M | Ib, M, M | G, M | G, 0, 0, FAR, M | LK, M | Ib, M, M | G, M,
    /* B0 CMPXCHG (lockable); LSS (memory); BTR; LFS, LGS (memory); MOVZX;
       B8 POPCNT (F3); UD1; Group 8 ib; BTC; BSF; BSR; MOVSX */
    M | LK, M | LK, M | NR, M | LK, M | NR, M | NR, M, M,
    M | G, M, M | Ib | G, M | LK, M, M, M, M,
    /* C0 XADD (lockable); CMPPS ib; MOVNTI (memory); PINSRW ib; PEXTRW ib;
       SHUFPS ib; Group 9; C8 BSWAP */
    M | LK, M | LK, M | Ib, M | NR, M | Ib, M | Ib, M | Ib, M | G, R8(0),
    /* D0 SSE/MMX */
    R16(M),
    /* E0 SSE/MMX; E7 MOVNTQ/MOVNTDQ (memory) */
    M, M, M, M, M, M, M, M | NR, R8(M),
    /* F0 LDDQU (memory); SSE/MMX; FF UD0 */
    M | NR, M, M, M, M, M, M, M, R8(M),
};

/* SDM Table A-4, three-byte opcodes 0F 38 xx: all take ModRM, none an
 * immediate; opcodes no prefix combination defines are undefined. */
#define U  (M | X)
const uint16_t ptd_ild_map_0f38[] = {
    /* 00-0B SSSE3 (PSHUFB..PMULHRSW); 10 PBLENDVB; 14/15 BLENDVPS/PD;
       17 PTEST; 1C-1E PABS* */
    M, M, M, M, M, M, M, M, M, M, M, M, U, U, U, U,
    M, U, U, U, M, M, U, M, U, U, U, U, M, M, M, U,
    /* 20-25 PMOVSX*; 28-2B PMULDQ PCMPEQQ MOVNTDQA(memory) PACKUSDW */
    M, M, M, M, M, M, U, U, M, M, M | NR, M, U, U, U, U,
    /* 30-35 PMOVZX*; 37-3F PCMPGTQ PMINSB.. */
    M, M, M, M, M, M, U, M, M, M, M, M, M, M, M, M,
    /* 40 PMULLD; 41 PHMINPOSUW */
    M, M, U, U, U, U, U, U, U, U, U, U, U, U, U, U,
    R16(U), R16(U), R16(U),
    /* 80 INVEPT 81 INVVPID 82 INVPCID (memory operands); 8A/8B MOVRS
       (memory, 64-bit mode: ptd_ild_group) */
    M | NR, M | NR, M | NR, U, U, U, U, U, U, U, M | NR | G, M | NR | G, U, U, U, U,
    R16(U), R16(U), R16(U),
    /* C8-CD SHA*; CF GF2P8MULB */
    U, U, U, U, U, U, U, U, M, M, M, M, M, M, U, M,
    /* D8 AESENC/DECWIDE*KL (Key Locker); DB AESIMC; DC-DF AESENC..AESDECLAST (and the
       F3 Key Locker forms) */
    U, U, U, U, U, U, U, U, M | NR | G, U, U, M, M, M | G, M | G, M | G,
    R16(U),
    /* F0/F1 MOVBE / CRC32; F5 WRUSS (memory); F6 ADCX/ADOX/WRSS; F8
       MOVDIR64B/ENQCMD(S) (memory), URDMSR/UWRMSR (register, 64-bit
       mode: ptd_ild_group); F9 MOVDIRI (memory); FA/FB ENCODEKEY128/256;
       FC AADD/AAND/AOR/AXOR (RAO-INT, memory) */
    M, M, U, U, U, M | NR, M, U, M | G, M | NR, M, M, M | NR, U, U, U,
};

/* SDM Table A-5, three-byte opcodes 0F 3A xx: ModRM and imm8 each. */
#define V3 (M | Ib)
#define U3 (M | Ib | X)
const uint16_t ptd_ild_map_0f3a[] = {
    /* 08-0F ROUND* BLEND* PALIGNR */
    U3, U3, U3, U3, U3, U3, U3, U3, V3, V3, V3, V3, V3, V3, V3, V3,
    /* 14-17 PEXTRB/W/D EXTRACTPS; 20-22 PINSRB INSERTPS PINSRD */
    U3, U3, U3, U3, V3, V3, V3, V3, U3, U3, U3, U3, U3, U3, U3, U3,
    V3, V3, V3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3,
    R16(U3),
    /* 40-42 DPPS DPPD MPSADBW; 44 PCLMULQDQ */
    V3, V3, V3, U3, V3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3,
    R16(U3),
    /* 60-63 PCMPESTRM PCMPESTRI PCMPISTRM PCMPISTRI */
    V3, V3, V3, V3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3,
    R16(U3), R16(U3), R16(U3), R16(U3), R16(U3),
    /* CC SHA1RNDS4; CE/CF GF2P8AFFINE(INV)QB */
    U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, V3, U3, V3, V3,
    /* DF AESKEYGENASSIST */
    U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, V3,
    R16(U3),
    /* F0 HRESET (F3, ModRM C0: ptd_ild_group) */
    V3 | G, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3,
};

/* Groups decided by ModRM.reg (SDM Table A-6 and the instruction pages). */
const uint8_t ptd_ild_group_of[2][256] = {
    [PTD_ILD_MAP_PRIMARY] = {
        [0x80] = GR_80, [0x81] = GR_81, [0x82] = GR_82, [0x83] = GR_83,
        [0x8C] = GR_8C, [0x8E] = GR_8E, [0x8F] = GR_8F, [0xC6] = GR_C6,
        [0xC7] = GR_C7, [0xF6] = GR_F6, [0xF7] = GR_F7, [0xFE] = GR_FE,
        [0xFF] = GR_FF,
    },
    [PTD_ILD_MAP_0F] = { [0x00] = GR_0F00, [0xBA] = GR_0FBA, [0xC7] = GR_0FC7 },
};

const uint16_t ptd_ild_group_reg[GR_COUNT][8] = {
    /* Group 1: ADD OR ADC SBB AND SUB XOR (lockable) CMP */
    [GR_80] = { R7(M | Ib | LK), M | Ib },
    [GR_81] = { R7(M | Iz | LK), M | Iz },
    [GR_82] = { R7(M | Ib | LK), M | Ib },
    [GR_83] = { R7(M | Ib | LK), M | Ib },
    /* MOV r/m, Sreg: ES CS SS DS FS GS; 6 and 7 name no register */
    [GR_8C] = { M, M, M, M, M, M, X, X },
    /* MOV Sreg, r/m: loading CS is undefined (SDM MOV) */
    [GR_8E] = { M, X, M, M, M, M, X, X },
    /* Group 1A: POP r/m is /0 only (XOP was told apart before) */
    [GR_8F] = { M, X, X, X, X, X, X, X },
    /* Group 11: MOV r/m8, imm8 /0; C6 F8 ib is XABORT (whole ModRM) */
    [GR_C6] = { M | Ib, X, X, X, X, X, X, M | Ib | G },
    /* Group 11: MOV r/m, imm /0; C7 F8 is XBEGIN rel16/32 (whole ModRM) */
    [GR_C7] = { M | Iz, X, X, X, X, X, X, M | I_RELZ_XBEGIN | G },
    /* Group 3: TEST imm is /0 and its alias /1; NOT NEG (lockable) MUL IMUL
       DIV IDIV */
    [GR_F6] = { M | Ib, M | Ib, M | LK, M | LK, M, M, M, M },
    [GR_F7] = { M | Iz, M | Iz, M | LK, M | LK, M, M, M, M },
    /* Group 4: INC/DEC r/m8 */
    [GR_FE] = { M | LK, M | LK, X, X, X, X, X, X },
    /* Group 5: INC DEC CALL CALLF JMP JMPF PUSH -; far forms take m16:xx */
    [GR_FF] = { M | LK, M | LK, M | ILD_CLASS(PTD_ICLASS_INDIRECT_CALL), M | NR | FAR,
                M | ILD_CLASS(PTD_ICLASS_INDIRECT_JUMP), M | NR | FAR, M, X },
    /* Group 6: SLDT STR LLDT LTR VERR VERW; /6 with F2 in 64-bit mode is
       FRED's LKGS (ptd_ild_group); /7 undefined */
    [GR_0F00] = { M, M, M, M, M, M, M | G, X },
    /* Group 8: BT BTS BTR BTC r/m, imm8 are /4../7 (BTS BTR BTC lockable) */
    [GR_0FBA] = { X, X, X, X, M | Ib, M | Ib | LK, M | Ib | LK, M | Ib | LK },
    /* Group 9: CMPXCHG8B/16B /1 (lockable); the other forms (RDRAND,
       RDSEED, VMPTRLD, XRSTORS...) are told apart by prefix and mod */
    [GR_0FC7] = { M, M | LK, M, M, M, M, M, M },
};

/* Mandatory prefixes of the 0F map's SSE/MMX opcodes (SDM Table A-3: the
 * rows whose cells list NP/66/F3/F2 forms; EXTRQ/INSERTQ at 78/79 are in
 * ptd_ild_group()). */
#define A4   (SSE_NP | SSE_66 | SSE_F3 | SSE_F2)
#define NP66 (SSE_NP | SSE_66)
const uint8_t ptd_ild_0f_sse[256] = {
    /* 10/11 MOVUPS/PD/SS/SD; 12 MOVLPS MOVLPD(m) MOVSLDUP MOVDDUP; 13 MOVLPS/PD
       store; 14/15 UNPCK; 16 MOVHPS MOVHPD(m) MOVSHDUP; 17 MOVHPS/PD store */
    [0x10] = A4, [0x11] = A4, [0x12] = A4 | SSE_66MEM, [0x13] = NP66,
    [0x14] = NP66, [0x15] = NP66, [0x16] = NP66 | SSE_F3 | SSE_66MEM, [0x17] = NP66,
    /* 28/29 MOVAPS/PD; 2A CVT*2PS/PD/SS/SD; 2B MOVNTPS/PD (and AMD SSE4a
       MOVNTSS/SD with F3/F2); 2C/2D CVT(T)*; 2E/2F (U)COMISS/SD; 37 GETSEC */
    [0x28] = NP66, [0x29] = NP66, [0x2A] = A4, [0x2B] = A4, [0x2C] = A4,
    [0x2D] = A4, [0x2E] = NP66, [0x2F] = NP66, [0x37] = SSE_NP,
    /* 50 MOVMSKPS/PD (register); 51 SQRT; 52 RSQRT; 53 RCP; 54-57 AND ANDN
       OR XOR; 58-5F arithmetic, CVT; 5B CVTDQ2PS CVTPS2DQ CVTTPS2DQ */
    [0x50] = NP66 | SSE_REG, [0x51] = A4, [0x52] = SSE_NP | SSE_F3,
    [0x53] = SSE_NP | SSE_F3, [0x54] = NP66, [0x55] = NP66, [0x56] = NP66,
    [0x57] = NP66, [0x58] = A4, [0x59] = A4, [0x5A] = A4,
    [0x5B] = NP66 | SSE_F3, [0x5C] = A4, [0x5D] = A4, [0x5E] = A4, [0x5F] = A4,
    /* 60-6B MMX/SSE2 unpack/pack/compare; 6C/6D PUNPCKL/HQDQ (66); 6E MOVD/Q;
       6F MOVQ MOVDQA MOVDQU */
    [0x60] = NP66, [0x61] = NP66, [0x62] = NP66, [0x63] = NP66, [0x64] = NP66,
    [0x65] = NP66, [0x66] = NP66, [0x67] = NP66, [0x68] = NP66, [0x69] = NP66,
    [0x6A] = NP66, [0x6B] = NP66, [0x6C] = SSE_66, [0x6D] = SSE_66,
    [0x6E] = NP66, [0x6F] = NP66 | SSE_F3,
    /* 70 PSHUFW/D/HW/LW; 71-73 shift groups (register); 74-76 PCMPEQ; 77 EMMS;
       7C/7D HADD/HSUB; 7E MOVD/Q, MOVQ; 7F MOVQ MOVDQA MOVDQU */
    [0x70] = A4, [0x71] = NP66 | SSE_REG, [0x72] = NP66 | SSE_REG,
    [0x73] = NP66 | SSE_REG, [0x74] = NP66, [0x75] = NP66, [0x76] = NP66,
    [0x77] = SSE_NP, [0x7C] = SSE_66 | SSE_F2, [0x7D] = SSE_66 | SSE_F2,
    [0x7E] = NP66 | SSE_F3, [0x7F] = NP66 | SSE_F3,
    /* C2 CMPPS/PD/SS/SD; C3 MOVNTI; C4 PINSRW; C5 PEXTRW (register); C6
       SHUFPS/PD */
    [0xC2] = A4, [0xC3] = SSE_NP, [0xC4] = NP66, [0xC5] = NP66 | SSE_REG, [0xC6] = NP66,
    /* D0 ADDSUBPD/PS; D1-D5; D6 MOVQ, MOVQ2DQ, MOVDQ2Q (register); D7
       PMOVMSKB (register); D8-DF */
    [0xD0] = SSE_66 | SSE_F2, [0xD1] = NP66, [0xD2] = NP66, [0xD3] = NP66,
    [0xD4] = NP66, [0xD5] = NP66, [0xD6] = SSE_66 | SSE_F3 | SSE_F2 | SSE_REPREG,
    [0xD7] = NP66 | SSE_REG, [0xD8] = NP66, [0xD9] = NP66, [0xDA] = NP66,
    [0xDB] = NP66, [0xDC] = NP66, [0xDD] = NP66, [0xDE] = NP66, [0xDF] = NP66,
    /* E0-E5; E6 CVTTPD2DQ CVTDQ2PD CVTPD2DQ; E7 MOVNTQ/DQ; E8-EF */
    [0xE0] = NP66, [0xE1] = NP66, [0xE2] = NP66, [0xE3] = NP66, [0xE4] = NP66,
    [0xE5] = NP66, [0xE6] = SSE_66 | SSE_F3 | SSE_F2, [0xE7] = NP66,
    [0xE8] = NP66, [0xE9] = NP66, [0xEA] = NP66, [0xEB] = NP66, [0xEC] = NP66,
    [0xED] = NP66, [0xEE] = NP66, [0xEF] = NP66,
    /* F0 LDDQU (F2, memory); F1-FE; F7 MASKMOVQ/MASKMOVDQU (register) */
    [0xF0] = SSE_F2, [0xF1] = NP66, [0xF2] = NP66, [0xF3] = NP66, [0xF4] = NP66,
    [0xF5] = NP66, [0xF6] = NP66, [0xF7] = NP66 | SSE_REG, [0xF8] = NP66,
    [0xF9] = NP66, [0xFA] = NP66, [0xFB] = NP66, [0xFC] = NP66, [0xFD] = NP66,
    [0xFE] = NP66,
};

/* Mandatory prefixes in 0F 38 (SDM Table A-4). */
#define R4(x) x, x, x, x
const uint8_t ptd_ild_0f38_sse[256] = {
    /* 00-0B SSSE3: MMX (NP) and XMM (66) forms; 10 PBLENDVB, 14/15
       BLENDVPS/PD, 17 PTEST (66); 1C-1E PABSB/W/D (NP, 66) */
    R4(NP66), R4(NP66), R4(NP66),
    [0x10] = SSE_66, [0x14] = SSE_66, [0x15] = SSE_66, [0x17] = SSE_66,
    [0x1C] = NP66, [0x1D] = NP66, [0x1E] = NP66,
    /* 20-25 PMOVSX; 28-2B PMULDQ PCMPEQQ MOVNTDQA PACKUSDW; 30-35 PMOVZX;
       37-41 PCMPGTQ .. PHMINPOSUW; 80-82 INVEPT INVVPID INVPCID: all 66 */
    [0x20] = SSE_66, [0x21] = SSE_66, [0x22] = SSE_66, [0x23] = SSE_66,
    [0x24] = SSE_66, [0x25] = SSE_66, [0x28] = SSE_66, [0x29] = SSE_66,
    [0x2A] = SSE_66, [0x2B] = SSE_66, [0x30] = SSE_66, [0x31] = SSE_66,
    [0x32] = SSE_66, [0x33] = SSE_66, [0x34] = SSE_66, [0x35] = SSE_66,
    [0x37] = SSE_66, [0x38] = SSE_66, [0x39] = SSE_66, [0x3A] = SSE_66,
    [0x3B] = SSE_66, [0x3C] = SSE_66, [0x3D] = SSE_66, [0x3E] = SSE_66,
    [0x3F] = SSE_66, [0x40] = SSE_66, [0x41] = SSE_66,
    [0x80] = SSE_66, [0x81] = SSE_66, [0x82] = SSE_66,
    /* 8A/8B MOVRS r8, m8 / r, m (NP; 66: ignored on 8A, 16-bit on 8B) */
    [0x8A] = NP66, [0x8B] = NP66,
    /* C8-CD SHA (NP); CF GF2P8MULB (66); DB-DF AESIMC AESENC.. (66), with
       the Key Locker forms under F3 at D8 and DC-DF */
    [0xC8] = SSE_NP, [0xC9] = SSE_NP, [0xCA] = SSE_NP, [0xCB] = SSE_NP,
    [0xCC] = SSE_NP, [0xCD] = SSE_NP, [0xCF] = SSE_66,
    [0xD8] = SSE_F3, [0xDB] = SSE_66, [0xDC] = SSE_66 | SSE_F3,
    [0xDD] = SSE_66 | SSE_F3, [0xDE] = SSE_66 | SSE_F3, [0xDF] = SSE_66 | SSE_F3,
    /* F0/F1 MOVBE (NP, 66), CRC32 (F2); F5 WRUSS (66); F6 WRSS (NP), ADCX
       (66), ADOX (F3); F8 MOVDIR64B (66, memory), ENQCMDS/UWRMSR (F3),
       ENQCMD/URDMSR (F2); F9 MOVDIRI (NP); FA/FB ENCODEKEY128/256 (F3);
       FC AADD (NP), AAND (66), AOR (F2), AXOR (F3) */
    [0xF0] = NP66 | SSE_F2 | SSE_NPMEM | SSE_66MEM,
    [0xF1] = NP66 | SSE_F2 | SSE_NPMEM | SSE_66MEM, [0xF5] = SSE_66,
    [0xF6] = NP66 | SSE_F3 | SSE_NPMEM, [0xF8] = SSE_66 | SSE_F3 | SSE_F2 | SSE_66MEM,
    [0xF9] = SSE_NP, [0xFA] = SSE_F3 | SSE_REG, [0xFB] = SSE_F3 | SSE_REG,
    [0xFC] = SSE_NP | SSE_66 | SSE_F3 | SSE_F2,
};

/* Mandatory prefixes in 0F 3A (SDM Table A-5): all 66 but PALIGNR's MMX
 * form (0F 3A 0F), SHA1RNDS4 (CC, NP) and HRESET (F3 0F 3A F0 C0 ib). */
const uint8_t ptd_ild_0f3a_sse[256] = {
    [0x08] = SSE_66, [0x09] = SSE_66, [0x0A] = SSE_66, [0x0B] = SSE_66,
    [0x0C] = SSE_66, [0x0D] = SSE_66, [0x0E] = SSE_66, [0x0F] = NP66,
    [0x14] = SSE_66, [0x15] = SSE_66, [0x16] = SSE_66, [0x17] = SSE_66,
    [0x20] = SSE_66, [0x21] = SSE_66, [0x22] = SSE_66,
    [0x40] = SSE_66, [0x41] = SSE_66, [0x42] = SSE_66, [0x44] = SSE_66,
    [0x60] = SSE_66, [0x61] = SSE_66, [0x62] = SSE_66, [0x63] = SSE_66,
    [0xCC] = SSE_NP, [0xCE] = SSE_66, [0xCF] = SSE_66, [0xDF] = SSE_66,
    [0xF0] = SSE_F3 | SSE_REG,
};

/* x87 escapes D8-DF (SDM Vol. 2, A.4, Tables ): which ModRM.reg
 * values name an instruction with a memory operand, bit per reg; and which
 * register forms C0-FF exist, bit (ModRM - C0). Beside the documented forms
 * the register maps hold the aliases every x87 since the 8087 executes and
 * disassemblers decode (FSTP1 D9 D8-DF, FCOM2/FCOMP3 DC D0-DF, FXCH4 DD
 * C8-CF, FCOMP5 DE D0-D7, FFREEP/FXCH7/FSTP8/FSTP9 DF C0-DF) and the 287
 * controls kept as no-ops (FENI, FDISI, FSETPM: DB E0, E1, E4). */
#define XR(lo, hi) ((~0ull >> (63 - ((hi) - 0xC0))) & ~((1ull << ((lo) - 0xC0)) - 1))
const uint8_t ptd_ild_x87_mem[8] = {
    0xFF,   /* D8: FADD FMUL FCOM FCOMP FSUB FSUBR FDIV FDIVR m32fp */
    0xFD,   /* D9: FLD - FST FSTP FLDENV FLDCW FNSTENV FNSTCW */
    0xFF,   /* DA: FIADD .. FIDIVR m32int */
    0xAF,   /* DB: FILD FISTTP FIST FISTP - FLD m80 - FSTP m80 */
    0xFF,   /* DC: m64fp arithmetic */
    0xDF,   /* DD: FLD FISTTP FST FSTP FRSTOR - FNSAVE FNSTSW */
    0xFF,   /* DE: m16int arithmetic */
    0xFF,   /* DF: FILD FISTTP FIST FISTP FBLD FILD FBSTP FISTP */
};
const uint64_t ptd_ild_x87_reg[8] = {
    XR(0xC0, 0xFF),
    XR(0xC0, 0xD0) | XR(0xD8, 0xE1) | XR(0xE4, 0xE5) | XR(0xE8, 0xEE) | XR(0xF0, 0xFF),
    XR(0xC0, 0xDF) | XR(0xE9, 0xE9),
    XR(0xC0, 0xE4) | XR(0xE8, 0xF7),
    XR(0xC0, 0xFF),
    XR(0xC0, 0xEF),
    XR(0xC0, 0xD7) | XR(0xD9, 0xD9) | XR(0xE0, 0xFF),
    XR(0xC0, 0xE0) | XR(0xE8, 0xF7),
};

/* Each map has exactly one entry per opcode byte. */
#define PTD_ILD_MAP_SIZE_OK(t) (sizeof(t) / sizeof((t)[0]) == 256)
_Static_assert(PTD_ILD_MAP_SIZE_OK(ptd_ild_map_primary), "one-byte map: 256 entries");
_Static_assert(PTD_ILD_MAP_SIZE_OK(ptd_ild_map_0f), "0F map: 256 entries");
_Static_assert(PTD_ILD_MAP_SIZE_OK(ptd_ild_map_0f38), "0F 38 map: 256 entries");
_Static_assert(PTD_ILD_MAP_SIZE_OK(ptd_ild_map_0f3a), "0F 3A map: 256 entries");

/* EVEX.mmm to map (SDM Vol. 2, 2.7.1; APX: the map field is 3 bits, P0[3]
 * is B4; map 4: APX-promoted legacy instructions; maps 5 and 6:
 * AVX512-FP16; map 7: USER_MSR and MSR_IMM forms with imm32). 0 marks a
 * reserved map. */
const uint8_t ptd_ild_evex_map[8] = {
    0, PTD_ILD_MAP_EVEX_0F, PTD_ILD_MAP_EVEX_0F38, PTD_ILD_MAP_EVEX_0F3A,
    PTD_ILD_MAP_EVEX_MAP4, PTD_ILD_MAP_EVEX_MAP5, PTD_ILD_MAP_EVEX_MAP6, PTD_ILD_MAP_EVEX_MAP7,
};

/* VEX.m-mmmm to map (SDM Vol. 2, 2.3.6.1: 1-3; map 5: AMX forms; map 7:
 * USER_MSR/MSR_IMM with imm32; as Intel XED 2026.07 decodes them). 0 marks
 * a reserved map (0, 4, 6, 8-31; VEX map 0 was Knights Corner's). */
const uint8_t ptd_ild_vex_map[32] = {
    [1] = PTD_ILD_MAP_VEX_0F, [2] = PTD_ILD_MAP_VEX_0F38, [3] = PTD_ILD_MAP_VEX_0F3A,
    [5] = PTD_ILD_MAP_VEX_MAP5, [7] = PTD_ILD_MAP_VEX_MAP7,
};

/* VEX/EVEX map 0F: the opcodes with an imm8 (PSHUF*, Groups 12-14 shifts,
 * CMPPS, PINSRW, PEXTRW, SHUFPS), one bit per opcode. */
static const uint32_t ptd_ild_vex0f_imm8[8] = {
    [0x70 / 32] = 0xFu << (0x70 % 32),
    [0xC2 / 32] = (1u << (0xC2 % 32)) | (7u << (0xC4 % 32)),
};

/* EVEX map 4 (APX spec, the promoted legacy instructions; every one has a
 * ModRM): imm8 for SHLD/SHRD ib (24, 2C), IMUL ib (6B), Group 1 ib (80,
 * 83), Group 2 ib (C0, C1); imm16/32 for IMUL iz (69), Group 1 iz (81);
 * F6/F7 (Group 3) carry one only for /0 and /1 (TEST, CTEST), decided in
 * ptd_ild_group(). The operand size comes from EVEX.W and pp=01 (66). */
static const uint32_t ptd_ild_map4_imm8[8] = {
    [0x24 / 32] = (1u << (0x24 % 32)) | (1u << (0x2C % 32)),
    [0x6B / 32] = 1u << (0x6B % 32),
    [0x80 / 32] = (1u << (0x80 % 32)) | (1u << (0x83 % 32)),
    [0xC0 / 32] = (1u << (0xC0 % 32)) | (1u << (0xC1 % 32)),
};
static const uint32_t ptd_ild_map4_immz[8] = {
    [0x69 / 32] = 1u << (0x69 % 32),
    [0x81 / 32] = 1u << (0x81 % 32),
};
#define OPC_MAP4_GRP3_EB 0xF6
#define OPC_MAP4_GRP3_EV 0xF7

/* VEX.0F 77 is VZEROUPPER/VZEROALL: no ModRM (SDM VZEROUPPER). */
#define OPC_VZERO 0x77

#define OP_BIT(tab, op) (((tab)[(op) / 32] >> ((op) % 32)) & 1u)

uint16_t ptd_ild_vector_entry(unsigned map, unsigned op)
{
    switch (map) {
    case PTD_ILD_MAP_VEX_0F:
        if (op == OPC_VZERO)
            return 0;
        /* fall through */
    case PTD_ILD_MAP_EVEX_0F:
        return (uint16_t)(M | (OP_BIT(ptd_ild_vex0f_imm8, op) ? Ib : 0));
    case PTD_ILD_MAP_VEX_0F3A:
    case PTD_ILD_MAP_EVEX_0F3A:
    case PTD_ILD_MAP_XOP8:      /* APM Vol. 3, XOP map 8: all imm8 */
        return M | Ib;
    case PTD_ILD_MAP_EVEX_MAP4:
        if (op == OPC_MAP4_GRP3_EB || op == OPC_MAP4_GRP3_EV)
            return M | G;
        return (uint16_t)(M | (OP_BIT(ptd_ild_map4_imm8, op) ? Ib
                               : OP_BIT(ptd_ild_map4_immz, op) ? Iz : 0));
    case PTD_ILD_MAP_VEX_MAP7:  /* URDMSR/UWRMSR/RDMSR/WRMSRNS imm32 */
    case PTD_ILD_MAP_EVEX_MAP7:
    case PTD_ILD_MAP_XOPA:      /* XOP map 0Ah: BEXTR, LWPINS, LWPVAL imm32 */
        return M | I_D;
    default:                    /* 0F38, maps 5/6, XOP map 9 */
        return M;
    }
}

/* REX2 (APX spec, "REX2 prefix"): #UD with these opcode rows. Map 0: row
 * 4 (40-4F: REX after REX2), row 7 (Jcc rel8), row A (MOV moffs, string
 * instructions, TEST imm; A1 with W=0 is JMPABS instead), row E (LOOP,
 * JrCXZ, IN/OUT, CALL/JMP rel). Map 1 (0F): row 3 (WRMSR..GETSEC and the
 * 0F 38/0F 3A escapes), row 8 (Jcc rel32). Checked against Intel XED. */
const uint16_t ptd_ild_rex2_bad_rows[2] = {
    (1u << 0x4) | (1u << 0x7) | (1u << 0xA) | (1u << 0xE),
    (1u << 0x3) | (1u << 0x8),
};
