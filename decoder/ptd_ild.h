/* libptd instruction-length decoder (ILD): the length of one x86
 * instruction, its branch class and, for direct branches, the target, in
 * 16-, 32- and 64-bit mode. It is the flow layer's view of the code: how far
 * to step, and whether the step consumes a TNT bit, a TIP, or nothing.
 *
 * Sources of truth are the Intel SDM Vol. 2, chapter 2 (instruction format:
 * prefixes, REX, VEX, EVEX, ModRM/SIB, displacement and immediate sizes) and
 * Appendix A (opcode maps); the Intel APX Architecture Specification for
 * REX2, JMPABS and EVEX map 4; the FRED specification for ERETS/ERETU;
 * AMD's APM Vol. 3 for XOP. docs/ild.md lists the choices made where
 * vendors, disassemblers or libipt disagree.
 *
 * Freestanding C11: only <stdint.h>, <stddef.h>, <stdbool.h>; no state.
 *
 * Usage:
 *     struct ptd_insn insn;
 *     insn.ip = ip;                        // the only input field
 *     int n = ptd_ild_decode(&insn, code, avail, PTD_EXEC_MODE_64);
 *     if (n == -PTD_ILD_ERR_TRUNCATED) ... // read more bytes, try again
 *     else if (n < 0) ...                  // not an instruction
 *     else ip += n;                        // insn.iclass, insn.target, ...
 */
#ifndef PTD_ILD_H
#define PTD_ILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SDM Vol. 2, 2.3.11: "The maximum length of an Intel 64 and IA-32
 * instruction remains 15 bytes"; a longer one raises #GP. */
#define PTD_ILD_MAX_LEN 15

/* Errors, returned negated. The numbers follow libptd's enum ptd_error
 * (decoder/ptd_pkt.h), itself numbered after libipt's pt_error_code. */
enum ptd_ild_error {
    PTD_ILD_ERR_INVALID = 2,    /* bad argument (NULL, unknown mode) */
    PTD_ILD_ERR_BAD_INSN = 14,  /* undefined opcode, or not valid in this mode
                                   (libipt's pte_bad_insn) */
    PTD_ILD_ERR_TRUNCATED = 32, /* the bytes end inside the instruction:
                                   give more and decode again */
    PTD_ILD_ERR_TOO_LONG = 34,  /* more than PTD_ILD_MAX_LEN bytes */
};

/* The code segment's default sizes (CS.L, CS.D; Intel PT's MODE.Exec). */
enum ptd_exec_mode {
    PTD_EXEC_MODE_16 = 0,
    PTD_EXEC_MODE_32 = 1,
    PTD_EXEC_MODE_64 = 2,
};

/* What an instruction does to control flow, as far as the flow layer cares
 * (SDM Vol. 3C, "Intel Processor Trace", which packets each branch type
 * generates). */
enum ptd_iclass {
    PTD_ICLASS_OTHER = 0,     /* falls through (including UD0/1/2, XBEGIN) */
    PTD_ICLASS_COND_JUMP,     /* Jcc, JCXZ/JECXZ/JRCXZ, LOOP/LOOPE/LOOPNE: TNT */
    PTD_ICLASS_DIRECT_JUMP,   /* JMP rel8/rel16/rel32: no packet */
    PTD_ICLASS_DIRECT_CALL,   /* CALL rel16/rel32: no packet, pushes */
    PTD_ICLASS_INDIRECT_JUMP, /* JMP r/m (FF /4); JMPABS (REX2 A1, its
                                 target in the instruction but traced
                                 with a TIP, PTD_INSN_ABS): TIP */
    PTD_ICLASS_INDIRECT_CALL, /* CALL r/m (FF /2): TIP, pushes */
    PTD_ICLASS_NEAR_RET,      /* RET, RET imm16: TNT (compressed) or TIP */
    PTD_ICLASS_FAR_TRANSFER,  /* far CALL/JMP/RET, INT n/INT3/INT1/INTO,
                                 IRET, SYSCALL/SYSRET/SYSENTER/SYSEXIT,
                                 ERETS/ERETU, UIRET, VMLAUNCH/VMRESUME/
                                 VMCALL/VMFUNC/VMMCALL/VMRUN, RSM: TIP,
                                 possibly FUP/MODE; ptd_ild_far_kind()
                                 tells them apart */
    PTD_ICLASS_COUNT
};

/* Opcode maps (SDM Vol. 2 Appendix A; APX for EVEX map 4; AMD APM Vol. 3
 * for XOP). REX2 selects PRIMARY or 0F (PTD_INSN_REX2). */
enum ptd_ild_map {
    PTD_ILD_MAP_PRIMARY = 0, /* one-byte opcodes */
    PTD_ILD_MAP_0F,
    PTD_ILD_MAP_0F38,
    PTD_ILD_MAP_0F3A,
    PTD_ILD_MAP_VEX_0F, /* VEX.mmmmm 1..3 */
    PTD_ILD_MAP_VEX_0F38,
    PTD_ILD_MAP_VEX_0F3A,
    PTD_ILD_MAP_VEX_MAP5, /* VEX.mmmmm 5 (AMX), 7 (USER_MSR, MSR_IMM) */
    PTD_ILD_MAP_VEX_MAP7,
    PTD_ILD_MAP_EVEX_0F, /* EVEX.mmm 1..7 */
    PTD_ILD_MAP_EVEX_0F38,
    PTD_ILD_MAP_EVEX_0F3A,
    PTD_ILD_MAP_EVEX_MAP4, /* APX-promoted legacy instructions */
    PTD_ILD_MAP_EVEX_MAP5,
    PTD_ILD_MAP_EVEX_MAP6,
    PTD_ILD_MAP_EVEX_MAP7,
    PTD_ILD_MAP_XOP8, /* XOP.map_select 8, 9, 0Ah */
    PTD_ILD_MAP_XOP9,
    PTD_ILD_MAP_XOPA,
    PTD_ILD_MAP_COUNT
};

/* insn->flags */
/* clang-format off */
#define PTD_INSN_MODRM    0x0001u  /* has a ModRM byte (insn->modrm) */
#define PTD_INSN_REL      0x0002u  /* direct near branch: disp and target valid */
#define PTD_INSN_FAR_PTR  0x0004u  /* CALL/JMP ptr16:16/32: target = offset,
                                      far_sel = selector */
#define PTD_INSN_PTWRITE  0x0008u  /* PTWRITE: emits a PTW packet */
#define PTD_INSN_LOCK     0x0010u  /* F0 prefix */
#define PTD_INSN_REP      0x0020u  /* F2 or F3 prefix (last one in rep_byte) */
#define PTD_INSN_REX      0x0040u  /* an effective REX prefix (in rex) */
#define PTD_INSN_VEX      0x0080u  /* VEX, EVEX or XOP encoded */
#define PTD_INSN_REX2     0x0100u  /* a REX2 prefix (APX; its payload in rex) */
#define PTD_INSN_ABS      0x0200u  /* JMPABS: target = the absolute 64-bit
                                      address in the instruction; the CPU
                                      still sends a TIP (INDIRECT_JUMP) */
/* clang-format on */

struct ptd_insn {
    uint64_t ip;        /* in: the instruction's address (for target) */
    uint64_t target;    /* REL: ip + length + disp, wrapped to the operand
                           size (SDM JMP/Jcc: "IF OperandSize = 16 THEN EIP
                           AND 0000FFFFH"); FAR_PTR: the offset; ABS: the
                           absolute address */
    int32_t disp;       /* REL: the sign-extended displacement */
    uint16_t far_sel;   /* FAR_PTR: the selector */
    uint16_t flags;     /* PTD_INSN_* */
    uint8_t length;     /* 1..15 */
    uint8_t iclass;     /* enum ptd_iclass */
    uint8_t map;        /* enum ptd_ild_map */
    uint8_t opcode;     /* opcode byte within the map */
    uint8_t modrm;      /* when PTD_INSN_MODRM */
    uint8_t opsize;     /* operand-size attribute in bits (16, 32, 64) from
                           mode, 66 and REX.W (REX2.W; EVEX map 4: EVEX.W
                           and pp=01); 64 for near branches in 64-bit
                           mode (PUSH/POP defaults not modelled) */
    uint8_t addrsize;   /* address-size attribute in bits: 16, 32, 64 */
    uint8_t prefix_len; /* bytes before the opcode (legacy, REX, VEX...) */
    uint8_t rex;        /* PTD_INSN_REX: the REX byte (0100WRXB);
                           PTD_INSN_REX2: the REX2 payload (M0 R4 X4 B4 W R3
                           X3 B3: W R X B in the same bits as REX) */
    uint8_t rep_byte;   /* when PTD_INSN_REP: 0xF2 or 0xF3 */
};

/* Decodes the instruction at bytes[0..size) in the given mode. Reads
 * insn->ip and fills the rest of *insn (left unspecified on error). Returns
 * the length (1..15) or a negative -PTD_ILD_ERR_*. Never reads past
 * bytes[size-1] nor past byte 15. */
int ptd_ild_decode(struct ptd_insn *insn, const uint8_t *bytes, size_t size,
                   enum ptd_exec_mode mode);

/* Same, with ip as an argument (sets insn->ip). */
int ptd_ild_decode_at(struct ptd_insn *insn, const uint8_t *bytes, size_t size,
                      enum ptd_exec_mode mode, uint64_t ip);

/* A static message for a (positive or negative) -PTD_ILD_ERR_* code, or
 * NULL for a code the ILD does not return. */
const char *ptd_ild_errstr(int code);

/* Static names for logs and tests: "cond_jump", "far_transfer"... */
const char *ptd_ild_iclass_name(enum ptd_iclass iclass);

/* What a PTD_ICLASS_FAR_TRANSFER does, for the layers that treat far
 * transfers differently (a far call returns to the next instruction; Event
 * Trace binds its events to IRET-like, UIRET, VM-entry, software-interrupt
 * and SYSCALL-like instructions, SDM Vol. 3C "Event Trace"). */
enum ptd_ild_far {
    PTD_FAR_NONE = 0, /* not a far transfer */
    PTD_FAR_CALL,     /* CALL far: 9A (not in 64-bit mode), FF /3 */
    PTD_FAR_JUMP,     /* JMP far: EA (not in 64-bit mode), FF /5 */
    PTD_FAR_RET,      /* RETF: CA, CB */
    PTD_FAR_SWINT,    /* INT n, INT3, INT1, INTO */
    PTD_FAR_SYSCALL,  /* SYSCALL, SYSENTER */
    PTD_FAR_SYSRET,   /* SYSRET, SYSEXIT */
    PTD_FAR_IRET,     /* IRET, IRETD, IRETQ */
    PTD_FAR_ERET,     /* FRED: ERETS (F2 0F 01 CA), ERETU (F3 0F 01 CA) */
    PTD_FAR_UIRET,    /* UIRET (F3 0F 01 EC) */
    PTD_FAR_VMCALL,   /* VMCALL, VMMCALL (leave the guest) */
    PTD_FAR_VMENTRY,  /* VMLAUNCH, VMRESUME, VMRUN (enter a guest) */
    PTD_FAR_VMFUNC,   /* VMFUNC */
    PTD_FAR_RSM,      /* RSM */
    PTD_FAR_COUNT
};

/* The far-transfer kind of a decoded instruction (PTD_FAR_NONE for every
 * other class). Derived from map, opcode, ModRM and the mandatory prefix:
 * it costs nothing on the decode path. */
enum ptd_ild_far ptd_ild_far_kind(const struct ptd_insn *insn);

/* A far transfer that returns to the instruction after it, as a near
 * call does (far CALL, INT n/INT3/INT1/INTO, SYSCALL/SYSENTER, VMCALL;
 * libipt's ptic_far_call). */
static inline bool ptd_ild_far_is_call(enum ptd_ild_far k)
{
    return k == PTD_FAR_CALL || k == PTD_FAR_SWINT || k == PTD_FAR_SYSCALL || k == PTD_FAR_VMCALL;
}

/* An IRET-like return (IRET, SYSRET, SYSEXIT, ERETS, ERETU): the
 * instructions Event Trace's iret event binds to (libipt's
 * pt_insn_is_iret()). */
static inline bool ptd_ild_far_is_iret(enum ptd_ild_far k)
{
    return k == PTD_FAR_IRET || k == PTD_FAR_SYSRET || k == PTD_FAR_ERET;
}

/* True for the classes that change control flow. */
static inline bool ptd_ild_is_branch(enum ptd_iclass iclass)
{
    return iclass != PTD_ICLASS_OTHER;
}

#endif /* PTD_ILD_H */
