/* Unit tests of the instruction-length decoder (decoder/ptd_ild.c):
 * hand-picked encodings per branch class, mode, prefix and addressing form,
 * each checked for length, class, target and flags, and every proper prefix
 * of each for -PTD_ILD_ERR_TRUNCATED. Encodings follow the SDM Vol. 2
 * instruction pages (and AMD APM for XOP, SVM). APX, FRED and the other
 * encodings of issue #12 K: test_ptd_ild_apx.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "test/unit/ild_case.h"

static const struct ild_case cases[] = {
    /* ---- 64-bit: classes ---- */
    { M64, "90", 1, OTHER, NO_TARGET, 0 },
    { M64, "c3", 1, RET, NO_TARGET, 0 },
    { M64, "c20800", 3, RET, NO_TARGET, 0 },
    { M64, "f3c3", 2, RET, NO_TARGET, PTD_INSN_REP }, /* rep ret */
    { M64, "cb", 1, FAR, NO_TARGET, 0 },
    { M64, "ca0800", 3, FAR, NO_TARGET, 0 },
    { M64, "48cb", 2, FAR, NO_TARGET, PTD_INSN_REX },
    { M64, "cf", 1, FAR, NO_TARGET, 0 },
    { M64, "48cf", 2, FAR, NO_TARGET, 0 }, /* iretq */
    { M64, "e800000000", 5, CALL, IP64 + 5, PTD_INSN_REL },
    { M64, "e8fbffffff", 5, CALL, IP64, PTD_INSN_REL },
    { M64, "e910000000", 5, JMP, IP64 + 5 + 16, PTD_INSN_REL },
    { M64, "ebfe", 2, JMP, IP64, PTD_INSN_REL },
    { M64, "66e900000000", 6, JMP, IP64 + 6, PTD_INSN_REL }, /* Intel: 66 ignored */
    { M64, "66e800010000", 6, CALL, IP64 + 6 + 0x100, PTD_INSN_REL },
    { M64, "7405", 2, COND, IP64 + 7, PTD_INSN_REL },
    { M64, "0f8400010000", 6, COND, IP64 + 6 + 0x100, PTD_INSN_REL },
    { M64, "0f8ffaffffff", 6, COND, IP64, PTD_INSN_REL },
    { M64, "e300", 2, COND, IP64 + 2, PTD_INSN_REL },   /* jrcxz */
    { M64, "67e300", 3, COND, IP64 + 3, PTD_INSN_REL }, /* jecxz */
    { M64, "e2fe", 2, COND, IP64, PTD_INSN_REL },       /* loop */
    { M64, "e0fe", 2, COND, IP64, PTD_INSN_REL },       /* loopne */
    { M64, "e1fe", 2, COND, IP64, PTD_INSN_REL },       /* loope */
    { M64, "2e7400", 3, COND, IP64 + 3, PTD_INSN_REL }, /* branch hint */
    { M64, "ffd0", 2, ICALL, NO_TARGET, PTD_INSN_MODRM },
    { M64, "ff1500000000", 6, ICALL, NO_TARGET, 0 }, /* call [rip] */
    { M64, "41ffe3", 3, IJMP, NO_TARGET, PTD_INSN_REX },
    { M64, "ff242500000000", 7, IJMP, NO_TARGET, 0 },
    { M64, "3effe0", 3, IJMP, NO_TARGET, 0 }, /* notrack jmp */
    { M64, "ff18", 2, FAR, NO_TARGET, 0 },    /* call far [rax] */
    { M64, "48ff28", 3, FAR, NO_TARGET, 0 },  /* jmp far m16:64 */
    { M64, "ffd8", BAD, 0, NO_TARGET, 0 },    /* FF /3 needs memory */
    { M64, "ffe8", BAD, 0, NO_TARGET, 0 },    /* FF /5 needs memory */
    { M64, "ff38", BAD, 0, NO_TARGET, 0 },    /* FF /7 undefined */
    { M64, "ff30", 2, OTHER, NO_TARGET, 0 },  /* push [rax] */
    { M64, "cd80", 2, FAR, NO_TARGET, 0 },
    { M64, "cc", 1, FAR, NO_TARGET, 0 },
    { M64, "f1", 1, FAR, NO_TARGET, 0 },
    { M64, "ce", BAD, 0, NO_TARGET, 0 }, /* into: not in 64 */
    { M64, "0f05", 2, FAR, NO_TARGET, 0 },
    { M64, "480f07", 3, FAR, NO_TARGET, 0 },
    { M64, "0f34", 2, FAR, NO_TARGET, 0 },
    { M64, "0f35", 2, FAR, NO_TARGET, 0 },
    { M64, "0f01c1", 3, FAR, NO_TARGET, 0 },                    /* vmcall */
    { M64, "0f01c2", 3, FAR, NO_TARGET, 0 },                    /* vmlaunch */
    { M64, "0f01c3", 3, FAR, NO_TARGET, 0 },                    /* vmresume */
    { M64, "0f01d4", 3, FAR, NO_TARGET, 0 },                    /* vmfunc */
    { M64, "0f01d9", 3, FAR, NO_TARGET, 0 },                    /* vmmcall */
    { M64, "0f01d8", 3, FAR, NO_TARGET, 0 },                    /* vmrun */
    { M64, "0f01d0", 3, OTHER, NO_TARGET, 0 },                  /* xgetbv */
    { M64, "0f01f8", 3, OTHER, NO_TARGET, 0 },                  /* swapgs */
    { M64, "0f0138", 3, OTHER, NO_TARGET, 0 },                  /* invlpg [rax] */
    { M64, "0faa", 2, FAR, NO_TARGET, 0 },                      /* rsm */
    { M64, "0f0b", 2, OTHER, NO_TARGET, 0 },                    /* ud2 */
    { M64, "0fb900", 3, OTHER, NO_TARGET, 0 },                  /* ud1 */
    { M64, "0fff00", 3, OTHER, NO_TARGET, 0 },                  /* ud0 */
    { M64, "f30faee0", 4, OTHER, NO_TARGET, PTD_INSN_PTWRITE }, /* ptwrite eax */
    { M64, "f3480fae20", 5, OTHER, NO_TARGET, PTD_INSN_PTWRITE },
    { M64, "0fae20", 3, OTHER, NO_TARGET, 0 },                 /* xsave [rax] */
    { M64, "f30f1efa", 4, OTHER, NO_TARGET, 0 },               /* endbr64 */
    { M64, "c7f800000000", 6, OTHER, IP64 + 6, PTD_INSN_REL }, /* xbegin */
    { M64, "66c7f80000", 5, OTHER, IP64 + 5, PTD_INSN_REL },   /* xbegin rel16 */
    { M64, "c6f801", 3, OTHER, NO_TARGET, 0 },                 /* xabort */
    { M64, "0f01d5", 3, OTHER, NO_TARGET, 0 },                 /* xend */
    /* ---- 64-bit: immediates and prefixes ---- */
    { M64, "b878563412", 5, OTHER, NO_TARGET, 0 },
    { M64, "66b83412", 4, OTHER, NO_TARGET, 0 },
    { M64, "48b8efcdab8967452301", 10, OTHER, NO_TARGET, PTD_INSN_REX },
    { M64, "6648b8efcdab8967452301", 11, OTHER, NO_TARGET, 0 }, /* REX.W wins */
    { M64, "4866b83412", 5, OTHER, NO_TARGET, 0 },              /* REX not last: ignored */
    { M64, "48c7c001000000", 7, OTHER, NO_TARGET, 0 },          /* mov rax, imm32 */
    { M64, "a1efcdab8967452301", 9, OTHER, NO_TARGET, 0 },      /* moffs64 */
    { M64, "67a178563412", 6, OTHER, NO_TARGET, 0 },            /* moffs32 */
    { M64, "66a1efcdab8967452301", 10, OTHER, NO_TARGET, 0 },   /* 66: data size only */
    { M64, "6878563412", 5, OTHER, NO_TARGET, 0 },              /* push imm32 */
    { M64, "666a01", 3, OTHER, NO_TARGET, 0 },
    { M64, "f6c001", 3, OTHER, NO_TARGET, 0 }, /* test al, 1 */
    { M64, "f6c801", 3, OTHER, NO_TARGET, 0 }, /* test /1 alias */
    { M64, "f7c001000000", 6, OTHER, NO_TARGET, 0 },
    { M64, "66f7c00100", 5, OTHER, NO_TARGET, 0 },
    { M64, "48f7c001000000", 7, OTHER, NO_TARGET, 0 },
    { M64, "f6d0", 2, OTHER, NO_TARGET, 0 },           /* not al */
    { M64, "f7d8", 2, OTHER, NO_TARGET, 0 },           /* neg eax */
    { M64, "f7402001000000", 7, OTHER, NO_TARGET, 0 }, /* test [rax+32], imm */
    { M64, "c8100000", 4, OTHER, NO_TARGET, 0 },       /* enter */
    { M64, "6b c0 05", 3, OTHER, NO_TARGET, 0 },
    { M64, "69c000010000", 6, OTHER, NO_TARGET, 0 },
    { M64, "0fa4c001", 4, OTHER, NO_TARGET, 0 },             /* shld ib */
    { M64, "0fbae001", 4, OTHER, NO_TARGET, 0 },             /* bt ib */
    { M64, "0fbac001", BAD, 0, NO_TARGET, 0 },               /* 0F BA /0 */
    { M64, "660f3a0fc108", 6, OTHER, NO_TARGET, 0 },         /* palignr */
    { M64, "660f3800c1", 5, OTHER, NO_TARGET, 0 },           /* pshufb */
    { M64, "660f78c00102", 6, OTHER, NO_TARGET, 0 },         /* extrq ib, ib */
    { M64, "f20f78c10102", 6, OTHER, NO_TARGET, 0 },         /* insertq ib, ib */
    { M64, "0f78c0", 3, OTHER, NO_TARGET, 0 },               /* vmread */
    { M64, "0f20c0", 3, OTHER, NO_TARGET, 0 },               /* mov rax, cr0 */
    { M64, "0f2000", 3, OTHER, NO_TARGET, 0 },               /* mod ignored */
    { M64, "0f2305", 3, OTHER, NO_TARGET, 0 },               /* mov dr0, rbp */
    { M64, "f00fb10a", 4, OTHER, NO_TARGET, PTD_INSN_LOCK }, /* lock cmpxchg */
    { M64, "f3a4", 2, OTHER, NO_TARGET, PTD_INSN_REP },      /* rep movsb */
    { M64, "40c3", 2, RET, NO_TARGET, 0 },
    /* LOCK: lockable instructions with a memory destination only */
    { M64, "f0870a", 3, OTHER, NO_TARGET, PTD_INSN_LOCK },     /* lock xchg [rdx] */
    { M64, "f0800000", 4, OTHER, NO_TARGET, PTD_INSN_LOCK },   /* lock add byte [rax], 0 */
    { M64, "f00fba2800", 5, OTHER, NO_TARGET, PTD_INSN_LOCK }, /* lock bts [rax], 0 */
    { M64, "f00fc708", 4, OTHER, NO_TARGET, PTD_INSN_LOCK },   /* lock cmpxchg8b */
    { M64, "f090", BAD, 0, NO_TARGET, 0 },
    { M64, "f087c1", BAD, 0, NO_TARGET, 0 },   /* register destination */
    { M64, "f0803800", BAD, 0, NO_TARGET, 0 }, /* lock cmp */
    { M64, "f00f20c0", BAD, 0, NO_TARGET, 0 }, /* AMD's lock mov cr0 (CR8) */
    /* x87 (SDM A.4): documented forms, the classic aliases, the holes */
    { M64, "d900", 2, OTHER, NO_TARGET, 0 },     /* fld dword [rax] */
    { M64, "dd442408", 4, OTHER, NO_TARGET, 0 }, /* fld qword [rsp+8] */
    { M64, "d9c9", 2, OTHER, NO_TARGET, 0 },     /* fxch st1 */
    { M64, "d9d8", 2, OTHER, NO_TARGET, 0 },     /* fstp1 alias */
    { M64, "dbe3", 2, OTHER, NO_TARGET, 0 },     /* fninit */
    { M64, "dfe0", 2, OTHER, NO_TARGET, 0 },     /* fnstsw ax */
    { M64, "d908", BAD, 0, NO_TARGET, 0 },       /* D9 /1 memory */
    { M64, "dd28", BAD, 0, NO_TARGET, 0 },       /* DD /5 memory */
    { M64, "d9d1", BAD, 0, NO_TARGET, 0 },
    { M64, "daea", BAD, 0, NO_TARGET, 0 }, /* only DA E9 */
    /* Mandatory prefixes (SDM Tables) */
    { M64, "660f6cc1", 4, OTHER, NO_TARGET, 0 }, /* punpcklqdq */
    { M64, "0f6cc1", BAD, 0, NO_TARGET, 0 },     /* no NP form */
    { M64, "f30f6ec0", BAD, 0, NO_TARGET, 0 },   /* no F3 movd */
    { M64, "0f50c1", 3, OTHER, NO_TARGET, 0 },   /* movmskps */
    { M64, "0f5000", BAD, 0, NO_TARGET, 0 },     /* register only */
    { M64, "660f1200", 4, OTHER, NO_TARGET, 0 }, /* movlpd xmm0, [rax] */
    { M64, "660f12c0", BAD, 0, NO_TARGET, 0 },   /* movlpd: memory only */
    { M64, "0f73d001", 4, OTHER, NO_TARGET, 0 }, /* psrlq mm0, 1 */
    { M64, "0f73d801", BAD, 0, NO_TARGET, 0 },   /* psrldq: 66 only */
    { M64, "660f73d801", 5, OTHER, NO_TARGET, 0 },
    { M64, "0f38f000", 4, OTHER, NO_TARGET, 0 },   /* movbe eax, [rax] */
    { M64, "0f38f0c0", BAD, 0, NO_TARGET, 0 },     /* movbe: memory */
    { M64, "f20f38f0c0", 5, OTHER, NO_TARGET, 0 }, /* crc32 eax, al */
    { M64, "0f3a0fc101", 5, OTHER, NO_TARGET, 0 }, /* palignr mm0 */
    { M64, "f30f3a0fc101", BAD, 0, NO_TARGET, 0 },
    { M64, "0f3800c1", 4, OTHER, NO_TARGET, 0 }, /* pshufb mm0 */
    { M64, "0f3810c1", BAD, 0, NO_TARGET, 0 },   /* pblendvb: 66 */
    /* MOV CR/DR register numbers */
    { M64, "440f20c0", 4, OTHER, NO_TARGET, 0 }, /* mov rax, cr8 */
    { M64, "0f22c8", BAD, 0, NO_TARGET, 0 },     /* cr1 */
    { M64, "0f22e8", BAD, 0, NO_TARGET, 0 },     /* cr5 */
    { M64, "440f21c0", BAD, 0, NO_TARGET, 0 },   /* dr8 */
    { M32, "0f21f8", 3, OTHER, NO_TARGET, 0 },   /* mov eax, dr7 */
    { M64, "8dc0", BAD, 0, NO_TARGET, 0 },       /* lea needs memory */
    /* ---- 64-bit: ModRM/SIB/displacement ---- */
    { M64, "8b0424", 3, OTHER, NO_TARGET, 0 },
    { M64, "8b042500000000", 7, OTHER, NO_TARGET, 0 }, /* SIB no base */
    { M64, "8b0500000000", 6, OTHER, NO_TARGET, 0 },   /* rip-relative */
    { M64, "8b442408", 4, OTHER, NO_TARGET, 0 },
    { M64, "8b842400010000", 7, OTHER, NO_TARGET, 0 },
    { M64, "8b4500", 3, OTHER, NO_TARGET, 0 },
    { M64, "8b8500000000", 6, OTHER, NO_TARGET, 0 },
    { M64, "678b0424", 4, OTHER, NO_TARGET, 0 }, /* 32-bit addressing */
    { M64, "4c8b6c2408", 5, OTHER, NO_TARGET, 0 },
    /* ---- 64-bit: invalid one-byte opcodes ---- */
    { M64, "06", BAD, 0, NO_TARGET, 0 },
    { M64, "27", BAD, 0, NO_TARGET, 0 },
    { M64, "60", BAD, 0, NO_TARGET, 0 },
    { M64, "d40a", BAD, 0, NO_TARGET, 0 },
    { M64, "9a000000000800", BAD, 0, NO_TARGET, 0 },
    { M64, "ea000000000800", BAD, 0, NO_TARGET, 0 },
    { M64, "d6", 1, OTHER, NO_TARGET, 0 }, /* UDB (Intel XED) */
    { M32, "d6", 1, OTHER, NO_TARGET, 0 }, /* SALC */
    /* ---- vector encodings ---- */
    { M64, "c4e27d00c0", 5, OTHER, NO_TARGET, PTD_INSN_VEX },   /* vpshufb ymm */
    { M64, "c5fc77", 3, OTHER, NO_TARGET, PTD_INSN_VEX },       /* vzeroall: no ModRM */
    { M64, "c5f877", 3, OTHER, NO_TARGET, PTD_INSN_VEX },       /* vzeroupper */
    { M64, "c4e37d18c001", 6, OTHER, NO_TARGET, 0 },            /* vinsertf128 */
    { M64, "c5f970c01b", 5, OTHER, NO_TARGET, 0 },              /* vpshufd ib */
    { M64, "c5f8100500000000", 8, OTHER, NO_TARGET, 0 },        /* vmovups rip */
    { M64, "62f17c4858c0", 6, OTHER, NO_TARGET, PTD_INSN_VEX }, /* vaddps zmm */
    { M64, "62f17c48584001", 7, OTHER, NO_TARGET, 0 },          /* disp8*N */
    { M64, "62f37d4818c001", 7, OTHER, NO_TARGET, 0 },          /* vinsertf32x4 */
    { M64, "62f1784858c0", 6, OTHER, NO_TARGET, 0 },            /* P1[2] = 0: X4/U, not MVEX */
    { M64, "62f47c4858c0", 6, OTHER, NO_TARGET, 0 },            /* EVEX map 4 (APX) */
    { M64, "62f57c4858c0", 6, OTHER, NO_TARGET, 0 },            /* map 5 (FP16) */
    { M64, "8fe878a2c000", 6, OTHER, NO_TARGET, PTD_INSN_VEX }, /* XOP map 8, ib */
    { M64, "8fe978e1c0", 5, OTHER, NO_TARGET, 0 },              /* XOP map 9 */
    { M64, "8fea781000000000ff", 9, OTHER, NO_TARGET, 0 },      /* XOP bextr imm32 */
    { M64, "8fc0", 2, OTHER, NO_TARGET, 0 },                    /* pop rax */
    { M64, "8f20", BAD, 0, NO_TARGET, 0 },                      /* 8F /4, map_select 0 */
    { M64, "66c5f877", BAD, 0, NO_TARGET, 0 },                  /* 66 before VEX */
    { M64, "f362f17c4858c0", BAD, 0, NO_TARGET, 0 },            /* F3 before EVEX */
    { M64, "48c5f877", BAD, 0, NO_TARGET, 0 },                  /* REX before VEX */
    { M64, "c4e07d00c0", BAD, 0, NO_TARGET, 0 },                /* VEX map 0 */
    { M64, "0f0fc00c", BAD, 0, NO_TARGET, 0 },                  /* AMD 3DNow!: #UD on Intel */
    /* ---- 32-bit ---- */
    { M32, "e800000000", 5, CALL, (IP32 + 5) & 0xFFFFFFFFu, PTD_INSN_REL },
    { M32, "e810000000", 5, CALL, (IP32 + 5 + 16) & 0xFFFFFFFFu, PTD_INSN_REL },
    { M32, "66e80000", 4, CALL, (IP32 + 4) & 0xFFFF, PTD_INSN_REL },
    { M32, "ebfe", 2, JMP, IP32, PTD_INSN_REL },
    { M32, "66ebfe", 3, JMP, (IP32 + 1) & 0xFFFF, PTD_INSN_REL },
    { M32, "0f8500000000", 6, COND, IP32 + 6, PTD_INSN_REL },
    { M32, "660f850000", 5, COND, (IP32 + 5) & 0xFFFF, PTD_INSN_REL },
    { M32, "e3fe", 2, COND, IP32, PTD_INSN_REL },
    { M32, "c400", 2, OTHER, NO_TARGET, 0 },                  /* les eax, [eax] */
    { M32, "c4e27900c0", 5, OTHER, NO_TARGET, PTD_INSN_VEX }, /* mod=11: VEX */
    { M32, "c500", 2, OTHER, NO_TARGET, 0 },                  /* lds */
    { M32, "c5f877", 3, OTHER, NO_TARGET, PTD_INSN_VEX },
    { M32, "6200", 2, OTHER, NO_TARGET, 0 }, /* bound */
    { M32, "62f17c4858c0", 6, OTHER, NO_TARGET, PTD_INSN_VEX },
    { M32, "8fc0", 2, OTHER, NO_TARGET, 0 },
    { M32, "8f00", 2, OTHER, NO_TARGET, 0 },
    { M32, "8fe878a2c000", 6, OTHER, NO_TARGET, PTD_INSN_VEX },
    { M32, "9a000000000800", 7, FAR, 0, PTD_INSN_FAR_PTR },
    { M32, "669a00100800", 6, FAR, 0x1000, PTD_INSN_FAR_PTR },
    { M32, "ea785634121000", 7, FAR, 0x12345678, PTD_INSN_FAR_PTR },
    { M32, "a100000000", 5, OTHER, NO_TARGET, 0 },
    { M32, "67a10000", 4, OTHER, NO_TARGET, 0 },
    { M32, "ce", 1, FAR, NO_TARGET, 0 },
    { M32, "d40a", 2, OTHER, NO_TARGET, 0 },
    { M32, "06", 1, OTHER, NO_TARGET, 0 },
    { M32, "40", 1, OTHER, NO_TARGET, 0 },   /* inc eax */
    { M32, "48c3", 1, OTHER, NO_TARGET, 0 }, /* dec eax */
    { M32, "8b0424", 3, OTHER, NO_TARGET, 0 },
    { M32, "678b00", 3, OTHER, NO_TARGET, 0 },     /* [bx+si] */
    { M32, "678b060010", 5, OTHER, NO_TARGET, 0 }, /* [disp16] */
    { M32, "0f05", 2, FAR, NO_TARGET, 0 },
    { M32, "ff2500000000", 6, IJMP, NO_TARGET, 0 },
    { M32, "ffd0", 2, ICALL, NO_TARGET, 0 },
    { M32, "cf", 1, FAR, NO_TARGET, 0 },
    /* ---- 16-bit ---- */
    { M16, "e80000", 3, CALL, (IP16 + 3) & 0xFFFF, PTD_INSN_REL },
    { M16, "e81000", 3, CALL, (IP16 + 3 + 16) & 0xFFFF, PTD_INSN_REL }, /* wraps */
    { M16, "66e800000000", 6, CALL, IP16 + 6, PTD_INSN_REL },
    { M16, "e9fdff", 3, JMP, IP16, PTD_INSN_REL },
    { M16, "0f840000", 4, COND, (IP16 + 4) & 0xFFFF, PTD_INSN_REL },
    { M16, "660f8400000000", 7, COND, IP16 + 7, PTD_INSN_REL },
    { M16, "7420", 2, COND, (IP16 + 2 + 0x20) & 0xFFFF, PTD_INSN_REL },
    { M16, "8b063412", 4, OTHER, NO_TARGET, 0 }, /* [disp16] */
    { M16, "8b00", 2, OTHER, NO_TARGET, 0 },
    { M16, "8b4010", 3, OTHER, NO_TARGET, 0 },
    { M16, "8b800010", 4, OTHER, NO_TARGET, 0 },
    { M16, "678b0424", 4, OTHER, NO_TARGET, 0 }, /* 32-bit, SIB */
    { M16, "678b0500000000", 7, OTHER, NO_TARGET, 0 },
    { M16, "b83412", 3, OTHER, NO_TARGET, 0 },
    { M16, "66b878563412", 6, OTHER, NO_TARGET, 0 },
    { M16, "680010", 3, OTHER, NO_TARGET, 0 },
    { M16, "a10010", 3, OTHER, NO_TARGET, 0 },
    { M16, "67a100000000", 6, OTHER, NO_TARGET, 0 },
    { M16, "c20400", 3, RET, NO_TARGET, 0 },
    { M16, "cf", 1, FAR, NO_TARGET, 0 },
    { M16, "ea5be000f0", 5, FAR, 0xE05B, PTD_INSN_FAR_PTR }, /* reset vector */
    { M16, "9a00000000", 5, FAR, 0, PTD_INSN_FAR_PTR },
    { M16, "66ea000001000800", 8, FAR, 0x10000, PTD_INSN_FAR_PTR },
    { M16, "c7f81000", 4, OTHER, IP16 + 4 + 0x10, PTD_INSN_REL }, /* xbegin: no wrap */
    { M16, "ff2e0010", 4, FAR, NO_TARGET, 0 },                    /* jmp far [1000] */
};

static void test_cases(void **state)
{
    (void)state;
    run_ild_cases(cases, sizeof cases / sizeof cases[0]);
}

static void test_far_selector(void **state)
{
    (void)state;
    struct ptd_insn in;
    const uint8_t jmp16[] = { 0xEA, 0x5B, 0xE0, 0x00, 0xF0 };
    assert_int_equal(ptd_ild_decode_at(&in, jmp16, sizeof jmp16, M16, 0), 5);
    assert_int_equal(in.far_sel, 0xF000);
    assert_true(in.target == 0xE05B);
    const uint8_t call32[] = { 0x9A, 0x78, 0x56, 0x34, 0x12, 0x08, 0x00 };
    assert_int_equal(ptd_ild_decode_at(&in, call32, sizeof call32, M32, 0), 7);
    assert_int_equal(in.far_sel, 0x0008);
    assert_true(in.target == 0x12345678);
}

static void test_length_limit(void **state)
{
    (void)state;
    uint8_t b[32];
    struct ptd_insn in;

    /* 14 prefixes + NOP: 15 bytes, the maximum. */
    memset(b, 0x66, 14);
    b[14] = 0x90;
    assert_int_equal(ptd_ild_decode_at(&in, b, 15, M64, 0), 15);
    assert_int_equal(in.prefix_len, 14);
    /* 15 prefixes + NOP: too long, however many bytes there are. */
    memset(b, 0x66, 15);
    b[15] = 0x90;
    assert_int_equal(ptd_ild_decode_at(&in, b, 16, M64, 0), -PTD_ILD_ERR_TOO_LONG);
    assert_int_equal(ptd_ild_decode_at(&in, b, 32, M64, 0), -PTD_ILD_ERR_TOO_LONG);
    /* Only 15 bytes of prefixes given: too long, not truncated. */
    assert_int_equal(ptd_ild_decode_at(&in, b, 15, M64, 0), -PTD_ILD_ERR_TOO_LONG);
    /* 12 prefixes + JMP rel32 = 17 bytes: too long even though the
     * immediate is not there. */
    memset(b, 0x2E, 12);
    b[12] = 0xE9;
    assert_int_equal(ptd_ild_decode_at(&in, b, 13, M32, 0), -PTD_ILD_ERR_TOO_LONG);
    /* 10 REX + MOV r64, imm64 = 20 bytes. */
    memset(b, 0x48, 10);
    b[10] = 0xB8;
    memset(b + 11, 0, 8);
    assert_int_equal(ptd_ild_decode_at(&in, b, 32, M64, 0), -PTD_ILD_ERR_TOO_LONG);
    /* The same 10 bytes of 48 in 32-bit mode are ten DEC EAX. */
    assert_int_equal(ptd_ild_decode_at(&in, b, 32, M32, 0), 1);
    /* 4 prefixes + SIB + disp32 + imm32 = 15: the longest common form. */
    const uint8_t lng[] = { 0x2E, 0x67, 0xF0, 0x48, 0x81, 0x84, 0x88, 0x11,
                            0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
    assert_int_equal(ptd_ild_decode_at(&in, lng, sizeof lng, M64, 0), 15);
    /* One more prefix: 16. */
    uint8_t lng16[16] = { 0x3E };
    memcpy(lng16 + 1, lng, sizeof lng);
    assert_int_equal(ptd_ild_decode_at(&in, lng16, sizeof lng16, M64, 0), -PTD_ILD_ERR_TOO_LONG);
}

static void test_bad_args(void **state)
{
    (void)state;
    struct ptd_insn in;
    const uint8_t nop = 0x90;
    assert_int_equal(ptd_ild_decode(NULL, &nop, 1, M64), -PTD_ILD_ERR_INVALID);
    assert_int_equal(ptd_ild_decode(&in, NULL, 1, M64), -PTD_ILD_ERR_INVALID);
    assert_int_equal(ptd_ild_decode(&in, &nop, 1, (enum ptd_exec_mode)7), -PTD_ILD_ERR_INVALID);
    assert_int_equal(ptd_ild_decode(&in, NULL, 0, M64), -PTD_ILD_ERR_TRUNCATED);
    assert_int_equal(ptd_ild_decode(&in, &nop, 0, M64), -PTD_ILD_ERR_TRUNCATED);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(ptd_ild_iclass_name(PTD_ICLASS_OTHER), "other");
    assert_string_equal(ptd_ild_iclass_name(PTD_ICLASS_FAR_TRANSFER), "far_transfer");
    assert_string_equal(ptd_ild_iclass_name((enum ptd_iclass)99), "?");
    assert_string_equal(ptd_ild_errstr(-PTD_ILD_ERR_TRUNCATED), "instruction truncated");
    assert_string_equal(ptd_ild_errstr(PTD_ILD_ERR_BAD_INSN), "bad instruction");
    assert_non_null(ptd_ild_errstr(-PTD_ILD_ERR_TOO_LONG));
    assert_non_null(ptd_ild_errstr(-PTD_ILD_ERR_INVALID));
    assert_null(ptd_ild_errstr(-7));
    assert_false(ptd_ild_is_branch(PTD_ICLASS_OTHER));
    assert_true(ptd_ild_is_branch(PTD_ICLASS_NEAR_RET));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),        cmocka_unit_test(test_far_selector),
        cmocka_unit_test(test_length_limit), cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
