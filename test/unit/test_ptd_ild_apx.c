/* Unit tests of the ILD for issue #12 category K: APX (REX2, JMPABS, EVEX
 * map 4), FRED (ERETS, ERETU, LKGS), UIRET, the VEX/EVEX maps 5-7, the
 * newer 0F 38 instructions, and the rules libipt master changed (3DNow!,
 * 0F 39/3B-3F, 0F 7A/7B, UD0/UD1, 9A/EA/CE in 64-bit mode, RSM, LOCK with a
 * branch). Every expected value is a fact of the APX/FRED specifications
 * and the SDM, as Intel XED 2026.07 decodes it (lengths, validity), or of
 * Intel PT (classes); docs/ild.md says where Zydis 4.0 or libipt master
 * read them otherwise. The check itself: ild_case.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "test/unit/ild_case.h"

#define REX2       PTD_INSN_REX2
#define ABS        PTD_INSN_ABS
#define ABS_TARGET 0x8877665544332211ull

static const struct ild_case cases[] = {
    /* ---- REX2 (D5, 64-bit mode): JMPABS ---- */
    { M64, "d500a1 1122334455667788", 11, IJMP, ABS_TARGET, REX2 | ABS },
    { M64, "2ed500a1 1122334455667788", 12, IJMP, ABS_TARGET, REX2 | ABS }, /* segment: allowed */
    { M64, "d577a1 1122334455667788", 11, IJMP, ABS_TARGET, REX2 | ABS },   /* R/X/B ignored */
    { M64, "d508a1 1122334455667788", BAD, 0, NO_TARGET, 0 },               /* W=1: row A */
    { M64, "66d500a1 1122334455667788", BAD, 0, NO_TARGET, 0 },             /* 66 */
    { M64, "67d500a1 1122334455667788", BAD, 0, NO_TARGET, 0 },             /* 67 */
    { M64, "f3d500a1 1122334455667788", BAD, 0, NO_TARGET, 0 },             /* F3 */
    { M64, "f0d500a1 1122334455667788", BAD, 0, NO_TARGET, 0 },             /* LOCK */
    { M64, "d580a1", 3, OTHER, NO_TARGET, REX2 },                           /* map 1: pop fs */
    /* ---- REX2: what it makes #UD ---- */
    { M64, "48d5000100", BAD, 0, NO_TARGET, 0 },     /* REX right before */
    { M64, "d5007400", BAD, 0, NO_TARGET, 0 },       /* Jcc rel8 */
    { M64, "d500e800000000", BAD, 0, NO_TARGET, 0 }, /* CALL rel32 */
    { M64, "d500e900000000", BAD, 0, NO_TARGET, 0 }, /* JMP rel32 */
    { M64, "d500eb00", BAD, 0, NO_TARGET, 0 },       /* JMP rel8 */
    { M64, "d500e300", BAD, 0, NO_TARGET, 0 },       /* JRCXZ */
    { M64, "d500e200", BAD, 0, NO_TARGET, 0 },       /* LOOP */
    { M64, "d500a0", BAD, 0, NO_TARGET, 0 },         /* MOV moffs */
    { M64, "d500a4", BAD, 0, NO_TARGET, 0 },         /* MOVSB */
    { M64, "d50040", BAD, 0, NO_TARGET, 0 },         /* REX after */
    { M64, "d5008400000000", 4, OTHER, NO_TARGET,
      REX2 },                                         /* TEST r/m8, r8: row 8 is fine in map 0 */
    { M64, "d58084 00000000", BAD, 0, NO_TARGET, 0 }, /* 0F 84: Jcc rel32 */
    { M64, "d58034", BAD, 0, NO_TARGET, 0 },          /* SYSENTER */
    { M64, "d58035", BAD, 0, NO_TARGET, 0 },          /* SYSEXIT */
    { M64, "d58031", BAD, 0, NO_TARGET, 0 },          /* RDTSC: row 3 */
    { M64, "d5000f05", BAD, 0, NO_TARGET, 0 },        /* 0F escape */
    { M64, "d5006690", BAD, 0, NO_TARGET, 0 },        /* prefix after */
    { M64, "d500d50090", BAD, 0, NO_TARGET, 0 },      /* REX2 after */
    { M64, "d500c5f877", BAD, 0, NO_TARGET, 0 },      /* VEX after */
    { M64, "d5008fc8", BAD, 0, NO_TARGET, 0 },        /* 8F /1: not XOP */
    { M64, "d580ae20", BAD, 0, NO_TARGET, 0 },        /* XSAVE [rax] */
    { M64, "d580c718", BAD, 0, NO_TARGET, 0 },        /* XRSTORS [rax] */
    { M64, "d5c022c0", BAD, 0, NO_TARGET, 0 },        /* MOV CR16 (R4) */
    { M64, "d58422d8", BAD, 0, NO_TARGET, 0 },        /* MOV CR11 (R3) */
    { M64, "d58421c0", BAD, 0, NO_TARGET, 0 },        /* MOV DR8 */
    /* ---- REX2: branches that keep their class ---- */
    { M64, "d500c3", 3, RET, NO_TARGET, REX2 },
    { M64, "d500c20800", 5, RET, NO_TARGET, REX2 },
    { M64, "d500ffd0", 4, ICALL, NO_TARGET, REX2 },
    { M64, "d511ffe0", 4, IJMP, NO_TARGET, REX2 }, /* jmp r24 */
    { M64, "d500ff18", 4, FAR, NO_TARGET, REX2 },  /* call far [rax] */
    { M64, "d500cb", 3, FAR, NO_TARGET, REX2 },
    { M64, "d508cf", 3, FAR, NO_TARGET, REX2 }, /* iretq */
    { M64, "d500cc", 3, FAR, NO_TARGET, REX2 },
    { M64, "d500cd80", 4, FAR, NO_TARGET, REX2 },
    { M64, "d500f1", 3, FAR, NO_TARGET, REX2 },
    { M64, "d58005", 3, FAR, NO_TARGET, REX2 },     /* syscall */
    { M64, "d58807", 3, FAR, NO_TARGET, REX2 },     /* sysretq */
    { M64, "d58001c1", 4, FAR, NO_TARGET, REX2 },   /* vmcall */
    { M64, "f3d58001ca", 5, FAR, NO_TARGET, REX2 }, /* eretu */
    /* ---- REX2: lengths ---- */
    { M64, "d508b8 1122334455667788", 11, OTHER, NO_TARGET, REX2 }, /* mov r64, imm64 */
    { M64, "d500b8 11223344", 7, OTHER, NO_TARGET, REX2 },
    { M64, "66d500b8 1122", 6, OTHER, NO_TARGET, REX2 },
    { M64, "d5188b0424", 5, OTHER, NO_TARGET, REX2 },       /* SIB, B4 */
    { M64, "d5008b0500000000", 8, OTHER, NO_TARGET, REX2 }, /* rip-relative */
    { M64, "d50081c0 11223344", 8, OTHER, NO_TARGET, REX2 },
    { M64, "d58cafc0", 4, OTHER, NO_TARGET, REX2 },    /* imul (0F AF) */
    { M64, "d580ba e001", 5, OTHER, NO_TARGET, REX2 }, /* bt ib (0F BA) */
    { M64, "d5008fc0", 4, OTHER, NO_TARGET, REX2 },    /* pop r/m */
    { M64, "f0d5000100", 5, OTHER, NO_TARGET, REX2 | PTD_INSN_LOCK },
    { M64, "4866d5000100", 6, OTHER, NO_TARGET, REX2 }, /* REX not last: ignored */
    { M64, "66d580ae30", 5, OTHER, NO_TARGET, REX2 },   /* clwb: not XSAVE */
    { M64, "f3d580aee0", 5, OTHER, NO_TARGET, REX2 | PTD_INSN_PTWRITE },
    { M64, "d58422c0", 4, OTHER, NO_TARGET, REX2 }, /* MOV CR8 (R3) */
    { M64, "d500d6", 3, OTHER, NO_TARGET, REX2 },   /* udb */
    /* ---- D5 outside 64-bit mode: AAD ib ---- */
    { M32, "d50a", 2, OTHER, NO_TARGET, 0 },
    { M16, "d50a", 2, OTHER, NO_TARGET, 0 },
    /* ---- FRED and user interrupts (64-bit mode only) ---- */
    { M64, "f30f01ca", 4, FAR, NO_TARGET, 0 }, /* eretu */
    { M64, "f20f01ca", 4, FAR, NO_TARGET, 0 }, /* erets */
    { M64, "66f30f01ca", 5, FAR, NO_TARGET, 0 },
    { M64, "f2f30f01ca", 5, FAR, NO_TARGET, 0 }, /* the last F2/F3 counts */
    { M64, "f3480f01ca", 5, FAR, NO_TARGET, 0 },
    { M64, "0f01ca", 3, OTHER, NO_TARGET, 0 }, /* clac */
    { M64, "f30f01ec", 4, FAR, NO_TARGET, 0 }, /* uiret */
    { M32, "f30f01ca", BAD, 0, NO_TARGET, 0 },
    { M32, "f20f01ca", BAD, 0, NO_TARGET, 0 },
    { M32, "f30f01ec", BAD, 0, NO_TARGET, 0 },
    { M32, "0f01ca", 3, OTHER, NO_TARGET, 0 },
    { M64, "f20f00f0", 4, OTHER, NO_TARGET, 0 }, /* lkgs ax */
    { M64, "f20f0030", 4, OTHER, NO_TARGET, 0 }, /* lkgs [rax] */
    { M64, "0f0030", BAD, 0, NO_TARGET, 0 },     /* 0F 00 /6 */
    { M32, "f20f00f0", BAD, 0, NO_TARGET, 0 },
    /* ---- EVEX: map field, APX bits, maps 4 and 7 ---- */
    { M64, "62f47c0800c0", 6, OTHER, NO_TARGET, PTD_INSN_VEX }, /* add (map 4) */
    { M64, "62f47c0880c001", 7, OTHER, NO_TARGET, 0 },          /* group 1 ib */
    { M64, "62f47c0881c0 11223344", 10, OTHER, NO_TARGET, 0 },  /* group 1 iz */
    { M64, "62f47d0881c0 1122", 8, OTHER, NO_TARGET, 0 },       /* pp=01: 16 bits */
    { M64, "62f4fc0881c0 11223344", 10, OTHER, NO_TARGET, 0 },  /* W=1: imm32 */
    { M64, "62f47c0883c001", 7, OTHER, NO_TARGET, 0 },
    { M64, "62f47c0869c0 11223344", 10, OTHER, NO_TARGET, 0 },  /* imul iz */
    { M64, "62f47c086bc001", 7, OTHER, NO_TARGET, 0 },          /* imul ib */
    { M64, "62f47c0824c001", 7, OTHER, NO_TARGET, 0 },          /* shld ib */
    { M64, "62f47c082cc001", 7, OTHER, NO_TARGET, 0 },          /* shrd ib */
    { M64, "62f47c08c1e001", 7, OTHER, NO_TARGET, 0 },          /* shl ib */
    { M64, "62f47c08d1e0", 6, OTHER, NO_TARGET, 0 },            /* shl 1 */
    { M64, "62f47c08f6c001", 7, OTHER, NO_TARGET, 0 },          /* F6 /0 ib */
    { M64, "62f47c08f6d8", 6, OTHER, NO_TARGET, 0 },            /* F6 /3 */
    { M64, "62f47c08f7c0 11223344", 10, OTHER, NO_TARGET, 0 },  /* F7 /0 iz */
    { M64, "62f47d08f7c8 1122", 8, OTHER, NO_TARGET, 0 },       /* F7 /1, 16 bits */
    { M64, "62f47c08f7d0", 6, OTHER, NO_TARGET, 0 },            /* F7 /2 */
    { M64, "62f474188fc0", 6, OTHER, NO_TARGET, 0 },            /* pop2 rcx, rax */
    { M64, "62f47c080044 2408", 8, OTHER, NO_TARGET, 0 },       /* SIB, disp8 */
    { M32, "62f47c0800c0", BAD, 0, NO_TARGET, 0 },              /* map 4: 64-bit only */
    { M64, "62f97c4858c0", 6, OTHER, NO_TARGET, PTD_INSN_VEX }, /* map 1 with B4 */
    { M32, "62f97c4858c0", BAD, 0, NO_TARGET, 0 },              /* no B4 outside 64 */
    { M64, "62f1780858 00", 6, OTHER, NO_TARGET, 0 },           /* P1[2] = 0: X4 */
    { M32, "62f1780858 00", BAD, 0, NO_TARGET, 0 },             /* no X4 outside 64 */
    { M32, "62f77f08f8c0 11223344", BAD, 0, NO_TARGET, 0 },     /* map 7: 64-bit only */
    { M64, "62f07c4858c0", BAD, 0, NO_TARGET, 0 },              /* EVEX map 0 */
    { M64, "62f77f08f8c0 11223344", 10, OTHER, NO_TARGET, 0 },  /* map 7: imm32 */
    /* ---- VEX maps 5 and 7; 0, 4 and 6 reserved ---- */
    { M64, "c4e578fdca", 5, OTHER, NO_TARGET, PTD_INSN_VEX }, /* tdpbf8ps (AMX) */
    { M32, "c4e578fdca", BAD, 0, NO_TARGET, 0 },              /* 64-bit only */
    { M64, "c4e67900c0", BAD, 0, NO_TARGET, 0 },              /* map 6 */
    { M64, "c4e77bf8c0 11223344", 9, OTHER, NO_TARGET, 0 },   /* urdmsr r, imm32 */
    { M64, "c4e77bf6c0 11223344", 9, OTHER, NO_TARGET, 0 },   /* rdmsr r, imm32 */
    { M32, "c4e77bf8c0 11223344", BAD, 0, NO_TARGET, 0 },     /* 64-bit only */
    { M64, "c4e47800c0", BAD, 0, NO_TARGET, 0 },              /* map 4 */
    { M64, "c4e07800c0", BAD, 0, NO_TARGET, 0 },              /* map 0 */
    /* ---- newer 0F 38 instructions ---- */
    { M64, "0f38fc00", 4, OTHER, NO_TARGET, 0 },   /* aadd */
    { M64, "660f38fc00", 5, OTHER, NO_TARGET, 0 }, /* aand */
    { M64, "f20f38fc00", 5, OTHER, NO_TARGET, 0 }, /* aor */
    { M64, "f30f38fc00", 5, OTHER, NO_TARGET, 0 }, /* axor */
    { M32, "0f38fc00", 4, OTHER, NO_TARGET, 0 },
    { M64, "0f38fcc0", BAD, 0, NO_TARGET, 0 },     /* memory only */
    { M64, "0f388a00", 4, OTHER, NO_TARGET, 0 },   /* movrs r8 */
    { M64, "480f388b00", 5, OTHER, NO_TARGET, 0 }, /* movrs r64 */
    { M64, "f30f388b00", BAD, 0, NO_TARGET, 0 },
    { M64, "0f388bc0", BAD, 0, NO_TARGET, 0 },     /* memory only */
    { M32, "0f388b00", BAD, 0, NO_TARGET, 0 },     /* 64-bit only */
    { M64, "f20f38f8c0", 5, OTHER, NO_TARGET, 0 }, /* urdmsr */
    { M64, "f30f38f8c0", 5, OTHER, NO_TARGET, 0 }, /* uwrmsr */
    { M32, "f20f38f8c0", BAD, 0, NO_TARGET, 0 },
    { M64, "660f38f800", 5, OTHER, NO_TARGET, 0 }, /* movdir64b */
    { M64, "660f38f8c0", BAD, 0, NO_TARGET, 0 },
    { M64, "f20f38f800", 5, OTHER, NO_TARGET, 0 },   /* enqcmd */
    { M64, "f30f3af0c001", 6, OTHER, NO_TARGET, 0 }, /* hreset 1 */
    { M32, "f30f3af0c001", 6, OTHER, NO_TARGET, 0 },
    { M64, "f30f3af0c101", BAD, 0, NO_TARGET, 0 }, /* ModRM C0 only */
    { M64, "0f3af0c001", BAD, 0, NO_TARGET, 0 },   /* F3 only */
    /* ---- what libipt master changed, as the SDM has it ---- */
    { M32, "0f0fc00c", BAD, 0, NO_TARGET, 0 }, /* 3DNow!: #UD on Intel */
    { M64, "0f0f00", BAD, 0, NO_TARGET, 0 },
    { M64, "0f3900", BAD, 0, NO_TARGET, 0 },
    { M64, "0f3b00", BAD, 0, NO_TARGET, 0 },
    { M64, "0f3c00", BAD, 0, NO_TARGET, 0 },
    { M64, "0f3d00", BAD, 0, NO_TARGET, 0 },
    { M64, "0f3e00", BAD, 0, NO_TARGET, 0 },
    { M64, "0f3f00", BAD, 0, NO_TARGET, 0 },
    { M64, "0f7a00", BAD, 0, NO_TARGET, 0 },
    { M64, "0f7b00", BAD, 0, NO_TARGET, 0 },
    { M64, "0fa7c0", 3, OTHER, NO_TARGET, PTD_INSN_MODRM },   /* xstore */
    { M64, "f30fa6c8", 4, OTHER, NO_TARGET, PTD_INSN_MODRM }, /* xsha1 */
    { M64, "0fb90424", 4, OTHER, NO_TARGET, PTD_INSN_MODRM }, /* ud1 eax, [rsp] */
    { M64, "0fff4010", 4, OTHER, NO_TARGET, PTD_INSN_MODRM }, /* ud0 eax, [rax+16] */
    { M64, "9a000000000800", BAD, 0, NO_TARGET, 0 },          /* #UD in 64-bit mode */
    { M64, "ea000000000800", BAD, 0, NO_TARGET, 0 },
    { M64, "ce", BAD, 0, NO_TARGET, 0 },
    { M64, "0faa", 2, FAR, NO_TARGET, 0 },           /* rsm */
    { M64, "f0e900000000", BAD, 0, NO_TARGET, 0 },   /* LOCK JMP */
    { M64, "f0ffd0", BAD, 0, NO_TARGET, 0 },         /* LOCK CALL r */
    { M64, "f0ff20", BAD, 0, NO_TARGET, 0 },         /* LOCK JMP [rax] */
    { M64, "f0c3", BAD, 0, NO_TARGET, 0 },           /* LOCK RET */
    { M64, "f00f8500000000", BAD, 0, NO_TARGET, 0 }, /* LOCK Jcc */
};

static void test_cases(void **state)
{
    (void)state;
    run_ild_cases(cases, sizeof cases / sizeof cases[0]);
}

/* The far-transfer kinds, and what the flow and Event Trace derive from
 * them (libipt's ptic_far_call and pt_insn_is_iret()). */
static void test_far_kinds(void **state)
{
    (void)state;
    static const struct {
        enum ptd_exec_mode mode;
        const char *hex;
        enum ptd_ild_far kind;
    } k[] = {
        { M32, "9a000000000800", PTD_FAR_CALL },
        { M64, "ff18", PTD_FAR_CALL },
        { M32, "ea000000000800", PTD_FAR_JUMP },
        { M64, "48ff28", PTD_FAR_JUMP },
        { M64, "cb", PTD_FAR_RET },
        { M64, "ca0800", PTD_FAR_RET },
        { M64, "cc", PTD_FAR_SWINT },
        { M64, "cd80", PTD_FAR_SWINT },
        { M32, "ce", PTD_FAR_SWINT },
        { M64, "f1", PTD_FAR_SWINT },
        { M64, "0f05", PTD_FAR_SYSCALL },
        { M64, "0f34", PTD_FAR_SYSCALL },
        { M64, "480f07", PTD_FAR_SYSRET },
        { M64, "0f35", PTD_FAR_SYSRET },
        { M64, "48cf", PTD_FAR_IRET },
        { M16, "cf", PTD_FAR_IRET },
        { M64, "f20f01ca", PTD_FAR_ERET },
        { M64, "f30f01ca", PTD_FAR_ERET },
        { M64, "f3d58001ca", PTD_FAR_ERET },
        { M64, "f30f01ec", PTD_FAR_UIRET },
        { M64, "0f01c1", PTD_FAR_VMCALL },
        { M64, "0f01d9", PTD_FAR_VMCALL },
        { M64, "0f01c2", PTD_FAR_VMENTRY },
        { M64, "0f01c3", PTD_FAR_VMENTRY },
        { M64, "0f01d8", PTD_FAR_VMENTRY },
        { M64, "0f01d4", PTD_FAR_VMFUNC },
        { M64, "0faa", PTD_FAR_RSM },
        { M64, "0f01ca", PTD_FAR_NONE }, /* clac */
        { M64, "c3", PTD_FAR_NONE },
        { M64, "d500a1 1122334455667788", PTD_FAR_NONE }, /* jmpabs */
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        uint8_t b[16];
        struct ptd_insn in;
        size_t n = unhex(k[i].hex, b, sizeof b);
        assert_true(ptd_ild_decode_at(&in, b, n, k[i].mode, 0) > 0);
        if (ptd_ild_far_kind(&in) != k[i].kind)
            print_error("far kind of %s: %d, want %d\n", k[i].hex, ptd_ild_far_kind(&in),
                        k[i].kind);
        assert_int_equal(ptd_ild_far_kind(&in), k[i].kind);
        /* far kinds exactly for far transfers */
        assert_int_equal(k[i].kind != PTD_FAR_NONE, in.iclass == PTD_ICLASS_FAR_TRANSFER);
    }
    /* libipt's ptic_far_call: back to the next instruction */
    assert_true(ptd_ild_far_is_call(PTD_FAR_CALL));
    assert_true(ptd_ild_far_is_call(PTD_FAR_SWINT));
    assert_true(ptd_ild_far_is_call(PTD_FAR_SYSCALL));
    assert_true(ptd_ild_far_is_call(PTD_FAR_VMCALL));
    assert_false(ptd_ild_far_is_call(PTD_FAR_ERET));
    assert_false(ptd_ild_far_is_call(PTD_FAR_UIRET));
    assert_false(ptd_ild_far_is_call(PTD_FAR_RET));
    /* pt_insn_is_iret(): IRET, SYSRET, SYSEXIT, ERETS, ERETU; not UIRET */
    for (int f = PTD_FAR_NONE; f < PTD_FAR_COUNT; f++)
        assert_int_equal(ptd_ild_far_is_iret((enum ptd_ild_far)f),
                         f == PTD_FAR_IRET || f == PTD_FAR_SYSRET || f == PTD_FAR_ERET);
    assert_int_equal(ptd_ild_far_kind(NULL), PTD_FAR_NONE);
}

/* REX2's payload is reported in insn.rex, its W and R bits where REX has
 * them. */
static void test_rex2_payload(void **state)
{
    (void)state;
    const uint8_t b[] = { 0xD5, 0x5D, 0x8B, 0x04, 0x24 }; /* M0=0 R4 B4 W R3 B3 */
    struct ptd_insn in;
    assert_int_equal(ptd_ild_decode_at(&in, b, sizeof b, M64, 0), 5);
    assert_int_equal(in.flags & (PTD_INSN_REX2 | PTD_INSN_REX), PTD_INSN_REX2);
    assert_int_equal(in.rex, 0x5D);
    assert_int_equal(in.map, PTD_ILD_MAP_PRIMARY);
    assert_int_equal(in.opcode, 0x8B);
    assert_int_equal(in.opsize, 64); /* W */
    assert_int_equal(in.prefix_len, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_far_kinds),
        cmocka_unit_test(test_rex2_payload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
