/* libptd ILD: the opcode tables (ptd_ild_tables.c) and their entry format.
 * Internal to decoder/ptd_ild*.c. */
#ifndef PTD_ILD_TABLES_H
#define PTD_ILD_TABLES_H

#include <stdbool.h>
#include <stdint.h>

/* One uint16_t per opcode:
 *   bits 0-3   immediate kind (I_*)
 *   bit  4     ILD_M: a ModRM byte follows the opcode
 *   bits 5-7   enum ptd_iclass
 *   bits 8-15  flags below */
/* clang-format off */
#define ILD_IMM_MASK   0x000Fu
#define ILD_M          0x0010u
#define ILD_CLASS(c)   ((unsigned)(c) << 5)
#define ILD_CLASS_OF(e) (((unsigned)(e) >> 5) & 7u)
#define ILD_I64        0x0100u  /* invalid in 64-bit mode */
#define ILD_INV        0x0200u  /* undefined opcode */
#define ILD_GRP        0x0400u  /* depends on ModRM or mandatory prefix:
                                   finished by ptd_ild_group() */
#define ILD_NOREG      0x0800u  /* memory operand only: mod=11 undefined */
#define ILD_REGONLY    0x1000u  /* mod is ignored and taken as 11 (MOV
                                   CR/DR, SDM "MOV-Move to/from Control
                                   Registers"): no SIB, no displacement */
#define ILD_ESC        0x2000u  /* escape, REX2 or vector prefix: 0F, D5, C4,
                                   C5, 62, 8F (each also an instruction in
                                   some modes or forms) */
#define ILD_PTW        0x4000u  /* PTWRITE */
#define ILD_LK         0x8000u  /* LOCK allowed with a memory operand (SDM
                                   LOCK: ADD ADC AND BTC BTR BTS CMPXCHG
                                   CMPXCHG8B/16B DEC INC NEG NOT OR SBB SUB
                                   XADD XCHG XOR); otherwise F0 is #UD */
/* clang-format on */

/* Immediate kinds (SDM Vol. 2, A.2.2 operand type codes). */
enum {
    I_NONE = 0,
    I_B,           /* ib: 1 */
    I_W,           /* iw: 2 */
    I_Z,           /* iz: 2 with 16-bit operand size, else 4 */
    I_V,           /* iv: 2, 4 or 8 by operand size (MOV r, imm: B8+r) */
    I_MOFFS,       /* moffs (A0-A3): the address size */
    I_REL8,        /* rel8 */
    I_RELZ,        /* rel16/rel32 by operand size */
    I_RELZ_XBEGIN, /* XBEGIN rel16/rel32: 66 applies in 64-bit mode too */
    I_PTR,         /* ptr16:16 / ptr16:32 (far CALL/JMP direct) */
    I_WB,          /* ENTER iw, ib: 3 */
    I_BB,          /* EXTRQ/INSERTQ ib, ib: 2 */
    I_D,           /* imm32 whatever the operand size: XOP map 0Ah,
                      VEX/EVEX map 7 */
    I_ABS,         /* JMPABS: a 64-bit absolute address */
    I_KINDS        /* at most 16: the kind is 4 bits of an entry */
};

/* Prefix bytes (SDM Vol. 2, 2.1.1; REX 2.2.1). */
#define PFX_ES      0x26
#define PFX_CS      0x2E /* also: branch not taken hint */
#define PFX_SS      0x36
#define PFX_DS      0x3E /* also: branch taken hint, NOTRACK */
#define PFX_FS      0x64
#define PFX_GS      0x65
#define PFX_OSZ     0x66
#define PFX_ASZ     0x67
#define PFX_LOCK    0xF0
#define PFX_REPNE   0xF2
#define PFX_REP     0xF3
#define PFX_REX_MIN 0x40 /* 40-4F: REX in 64-bit mode */
#define PFX_REX_W   0x48 /* 48-4F: REX with W=1 */
#define PFX_REX2    0xD5 /* REX2 in 64-bit mode (APX), AAD ib elsewhere */

/* Prefix bits (SDM Vol. 2, 2.1.1; REX 2.2.1): ptd_ild_prefix_bits gives
 * them per byte (0: not a prefix). The low three bits are the size context
 * (67, REX.W, 66, see ILD_CTX); LOCK, REP and REX are the PTD_INSN_* flags
 * of the same name, so the decoder copies them over. */
#define PF_ASZ  0x01u
#define PF_W    0x02u
#define PF_OSZ  0x04u
#define PF_SEG  0x08u
#define PF_LOCK 0x10u
#define PF_REP  0x20u
#define PF_REX  0x40u
#define PF_CTX  (PF_ASZ | PF_W | PF_OSZ)
extern const uint8_t ptd_ild_prefix_bits[2][256]; /* [64-bit mode][byte] */
/* Size context: mode, 66, REX.W, 67 in one index. */
#define ILD_CTX(mode, osz, w, asz) ((mode)*8u + (osz)*4u + (w)*2u + (asz))
#define ILD_CTX_OF(mode, pf)       ((mode)*8u + ((pf)&PF_CTX))
#define ILD_CTX_COUNT              24
extern const uint8_t ptd_ild_opsize[ILD_CTX_COUNT];   /* bits */
extern const uint8_t ptd_ild_addrsize[ILD_CTX_COUNT]; /* bits */
/* Immediate bytes of kind k in context c: ILD_IMM_SIZE(c, k). */
extern const uint64_t ptd_ild_imm_sizes[ILD_CTX_COUNT];
#define ILD_IMM_SIZE(c, k) ((unsigned)(ptd_ild_imm_sizes[c] >> (4u * (k))) & 15u)
#define ILD_SIB0           0x80u
extern const uint8_t ptd_ild_modrm_extra[2][256]; /* [16-bit addr][ModRM] */
extern const uint16_t ptd_ild_map_primary[];
extern const uint16_t ptd_ild_map_0f[];
extern const uint16_t ptd_ild_map_0f38[];
extern const uint16_t ptd_ild_map_0f3a[];
extern const uint8_t ptd_ild_evex_map[]; /* 8 entries: EVEX.mmm */
extern const uint8_t ptd_ild_vex_map[];  /* 32 entries: VEX.m-mmmm */

/* Groups (SDM Table A-6) whose entry follows from ModRM.reg alone, with
 * ILD_NOREG for memory-only forms. ptd_ild_group_of[map][opcode] names the
 * group (0: none) for the one-byte and 0F maps; ptd_ild_group_reg[g][reg]
 * replaces the opcode's entry. An entry that keeps ILD_GRP needs a closer
 * look (whole ModRM byte, mandatory prefix) in ptd_ild_group(). */
enum {
    GR_NONE = 0,
    GR_80,
    GR_81,
    GR_82,
    GR_83,
    GR_8C,
    GR_8E,
    GR_8F,
    GR_C6,
    GR_C7,
    GR_F6,
    GR_F7,
    GR_FE,
    GR_FF,
    GR_0F00,
    GR_0FBA,
    GR_0FC7,
    GR_COUNT
};
extern const uint8_t ptd_ild_group_of[2][256];
extern const uint16_t ptd_ild_group_reg[GR_COUNT][8];

/* SSE/MMX rows of the 0F map (SDM Table A-3): which mandatory prefixes
 * select an instruction, and ModRM.mod limits. 0: no rule (integer
 * opcodes, where F2/F3/66 are ignored or modify). */
#define SSE_NP     0x01u /* no prefix */
#define SSE_66     0x02u
#define SSE_F3     0x04u
#define SSE_F2     0x08u
#define SSE_REG    0x10u /* every form takes a register (mod=11) */
#define SSE_66MEM  0x20u /* the 66 form takes memory (MOVLPD, MOVHPD) */
#define SSE_REPREG 0x40u /* the F2/F3 forms take a register (MOVQ2DQ...) */
#define SSE_NPMEM  0x80u /* the NP form takes memory (MOVBE, WRSS) */
extern const uint8_t ptd_ild_0f_sse[256];
extern const uint8_t ptd_ild_0f38_sse[256]; /* the same for 0F 38 */
extern const uint8_t ptd_ild_0f3a_sse[256]; /* and 0F 3A */

/* x87 (D8-DF): memory forms by ModRM.reg, register forms by ModRM - C0. */
#define OPC_X87_FIRST 0xD8
#define OPC_X87_LAST  0xDF
extern const uint8_t ptd_ild_x87_mem[8];
extern const uint64_t ptd_ild_x87_reg[8];

/* The entry of a VEX/EVEX/XOP opcode (map: enum ptd_ild_map). */
uint16_t ptd_ild_vector_entry(unsigned map, unsigned op);

/* REX2 (APX spec, "REX2 prefix"): the opcode rows that are #UD after it.
 * Bit r of ptd_ild_rex2_bad_rows[map] (map PRIMARY or 0F) is row r
 * (opcodes r*16 .. r*16+15). */
extern const uint16_t ptd_ild_rex2_bad_rows[2];

#endif /* PTD_ILD_TABLES_H */
