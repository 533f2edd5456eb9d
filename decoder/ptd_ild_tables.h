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
 *   bits 8-14  flags below */
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
#define ILD_ESC        0x2000u  /* escape or vector prefix: 0F, C4, C5, 62, 8F */
#define ILD_PTW        0x4000u  /* PTWRITE */

/* Immediate kinds (SDM Vol. 2, A.2.2 operand type codes). */
enum {
    I_NONE = 0,
    I_B,            /* ib: 1 */
    I_W,            /* iw: 2 */
    I_Z,            /* iz: 2 with 16-bit operand size, else 4 */
    I_V,            /* iv: 2, 4 or 8 by operand size (MOV r, imm: B8+r) */
    I_MOFFS,        /* moffs (A0-A3): the address size */
    I_REL8,         /* rel8 */
    I_RELZ,         /* rel16/rel32 by operand size */
    I_RELZ_XBEGIN,  /* XBEGIN rel16/rel32: 66 applies in 64-bit mode too */
    I_PTR,          /* ptr16:16 / ptr16:32 (far CALL/JMP direct) */
    I_WB,           /* ENTER iw, ib: 3 */
    I_BB,           /* EXTRQ/INSERTQ ib, ib: 2 */
    I_D,            /* XOP map 0Ah: imm32 */
    I_3DNOW,        /* 3DNow!: the opcode suffix byte after ModRM/SIB/disp */
};

/* Prefix kinds (SDM Vol. 2, 2.1.1; REX 2.2.1). */
enum { PK_NONE = 0, PK_OSZ, PK_ASZ, PK_REP, PK_LOCK, PK_SEG, PK_REX };

/* 256 entries each (checked where they are defined), indexed by a byte. */
extern const uint8_t ptd_ild_prefix_kind[];
extern const uint16_t ptd_ild_map_primary[];
extern const uint16_t ptd_ild_map_0f[];
extern const uint16_t ptd_ild_map_0f38[];
extern const uint16_t ptd_ild_map_0f3a[];
extern const uint8_t ptd_ild_evex_map[];  /* 8 entries: EVEX.mmm */

/* The entry of a VEX/EVEX/XOP opcode (map: enum ptd_ild_map). */
uint16_t ptd_ild_vector_entry(unsigned map, unsigned op);
/* Whether a 3DNow! suffix byte names an instruction. */
bool ptd_ild_3dnow_valid(unsigned suffix);

#endif /* PTD_ILD_TABLES_H */
