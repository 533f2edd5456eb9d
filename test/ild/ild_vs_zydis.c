/* Differential test of libptd's instruction-length decoder against Zydis
 * (libzydis-dev 4.0, default decoder modes), in 16-, 32- and 64-bit mode.
 *
 * Inputs: random bytes; structured sequences (every opcode of every map
 * under a set of prefixes and ModRM/SIB forms, random tails); and real code
 * (every page of ../shared/traces/real/<name>/pages.dump, swept linearly and
 * from random offsets; skipped with a message when absent).
 *
 * Compared: decodable or not, length, branch class (Zydis' mnemonic, branch
 * type and relative immediate mapped to enum ptd_iclass), direct-branch
 * target, far pointer, PTWRITE. A mismatch fails the run unless an entry of
 * ild_allowed[] below explains it; each entry carries its reason (also in
 * docs/ild.md) and is counted.
 *
 * Usage: ild_vs_zydis [--random N] [--seed S] [--structured] [--real DIR]
 *                     [--real-random N] [--mode 16|32|64] [--real-mode16]
 *                     [--max-fail N] [--verbose]
 * --real-mode16 compares 16-bit mode against Zydis' real mode instead of
 * 16-bit protected mode.
 * Exit 0 when every mismatch is allowed.
 */
#include <Zydis/Zydis.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_ild.h"
#include "decoder/ptd_ild_fast.h"

#define BUF 16 /* one more than the longest instruction */

enum dir {
    ONLY_OURS = 1, /* we decode it, Zydis rejects it */
    ONLY_ZYDIS,    /* Zydis decodes it, we reject it */
    BOTH_DIFFER,   /* both decode it, the results differ */
};

#define M16  (1u << PTD_EXEC_MODE_16)
#define M32  (1u << PTD_EXEC_MODE_32)
#define M64  (1u << PTD_EXEC_MODE_64)
#define MALL (M16 | M32 | M64)

/* The facts a rule looks at, from whichever side decoded the bytes. */
struct facts {
    int map; /* enum ptd_ild_map */
    unsigned opcode;
    bool has_modrm;
    unsigned modrm;
    bool lock, rex, osz, rep;
    bool rex2;         /* we decoded a REX2 prefix */
    unsigned rep_byte; /* our mandatory F2/F3, or 0 */
    bool map3dnow;     /* Zydis decoded AMD's 3DNow! (0F 0F) */
    int zmnemonic;     /* Zydis' mnemonic (ONLY_ZYDIS) */
    uint32_t zstatus;  /* Zydis' status (ONLY_OURS) */
    const uint8_t *bytes;
};

struct allowed {
    const char *name;
    enum dir dir;
    unsigned modes;
    int map; /* -1: any */
    unsigned op_lo, op_hi;
    unsigned modrm_mask, modrm_val;      /* mask 0: any ModRM */
    bool (*pred)(const struct facts *f); /* optional extra condition */
    const char *reason;
    unsigned long count[3];
};

static bool zy_bad_register(const struct facts *f)
{
    return f->zstatus == ZYDIS_STATUS_BAD_REGISTER;
}
static bool any_vector(const struct facts *f)
{
    return f->map >= PTD_ILD_MAP_VEX_0F;
}
static bool new_vector_map(const struct facts *f)
{
    return f->map == PTD_ILD_MAP_VEX_MAP5 || f->map == PTD_ILD_MAP_VEX_MAP7 ||
           f->map == PTD_ILD_MAP_EVEX_MAP4 || f->map == PTD_ILD_MAP_EVEX_MAP7;
}
/* EVEX P0[3] (APX's B4) set, or P1[2] (APX's X4, AVX10.2's U) clear */
static bool evex_apx_bits(const struct facts *f)
{
    const uint8_t *b = f->bytes;
    while (*b == 0x26 || *b == 0x2E || *b == 0x36 || *b == 0x3E || *b == 0x64 || *b == 0x65 ||
           *b == 0x67)
        b++;
    return b[0] == 0x62 && ((b[1] & 0x08) || !(b[2] & 0x04));
}
static bool ours_rex2(const struct facts *f)
{
    return f->rex2;
}
static bool zy_new_0f38(const struct facts *f)
{
    return f->opcode == 0x8A || f->opcode == 0x8B || f->opcode == 0xFC ||
           (f->opcode == 0xF8 && f->has_modrm && (f->modrm >> 6) == 3);
}
static bool zy_3dnow(const struct facts *f)
{
    return f->map3dnow;
}
static bool ours_fred_eret(const struct facts *f)
{
    return f->has_modrm && f->modrm == 0xCA && (f->rep_byte == 0xF2 || f->rep_byte == 0xF3);
}
static bool zy_knc_branch(const struct facts *f)
{
    return f->zmnemonic == ZYDIS_MNEMONIC_JKZD || f->zmnemonic == ZYDIS_MNEMONIC_JKNZD;
}
/* --real-mode16: Zydis decodes 16-bit code as real mode (REAL_16). */
static bool zydis_real16;
static bool real_mode_ud(const struct facts *f)
{
    /* Protected-mode-only instructions: #UD in real-address mode (SDM, the
     * "Real-Address Mode Exceptions" of each). */
    if (!zydis_real16)
        return false;
    switch (f->map) {
    case PTD_ILD_MAP_PRIMARY: /* ARPL */ return f->opcode == 0x63;
    case PTD_ILD_MAP_0F: /* group 6, LAR, LSL, SYSRET, SYSENTER,
                            SYSEXIT, GETSEC, VMREAD, VMWRITE */
        return f->opcode == 0x00 || f->opcode == 0x02 || f->opcode == 0x03 || f->opcode == 0x07 ||
               f->opcode == 0x34 || f->opcode == 0x35 || f->opcode == 0x37 || f->opcode == 0x78 ||
               f->opcode == 0x79;
    case PTD_ILD_MAP_0F38: /* INVEPT, INVVPID, WRUSS, WRSS */
        return f->opcode == 0x80 || f->opcode == 0x81 || f->opcode == 0xF5 || f->opcode == 0xF6;
    }
    return false;
}
static bool zy_decoding_error(const struct facts *f)
{
    return f->zstatus == ZYDIS_STATUS_DECODING_ERROR;
}

/* Allowed differences. Keep docs/ild.md in step. */
static struct allowed ild_allowed[] = {
    { "apx-rex2",
      ONLY_OURS,
      M64,
      -1,
      0x00,
      0xFF,
      0,
      0,
      ours_rex2,
      "REX2 (D5 in 64-bit mode, APX): Zydis 4.0 predates APX and takes D5 "
      "for AAD, invalid in 64-bit mode; the ILD's REX2 rules were checked "
      "against Intel XED and libipt master (docs/ild.md)",
      { 0 } },
    { "vector-maps-new",
      ONLY_OURS,
      MALL,
      -1,
      0x00,
      0xFF,
      0,
      0,
      new_vector_map,
      "VEX maps 5 (AMX) and 7, EVEX map 4 (APX) and 7 (USER_MSR, MSR_IMM): newer than "
      "Zydis 4.0; lengths checked against Intel XED",
      { 0 } },
    { "evex-apx-bits",
      ONLY_OURS,
      MALL,
      -1,
      0x00,
      0xFF,
      0,
      0,
      evex_apx_bits,
      "EVEX in 64-bit mode with P0[3] set (APX's B4) or P1[2] clear (APX's "
      "X4): Zydis 4.0 rejects the first and takes the second for MVEX; the "
      "length does not depend on either bit",
      { 0 } },
    { "fred-eret",
      ONLY_OURS,
      M64,
      PTD_ILD_MAP_0F,
      0x01,
      0x01,
      0,
      0,
      ours_fred_eret,
      "F2/F3 0F 01 CA: FRED's ERETS/ERETU (far returns), newer than Zydis 4.0",
      { 0 } },
    { "fred-lkgs",
      ONLY_OURS,
      M64,
      PTD_ILD_MAP_0F,
      0x00,
      0x00,
      0x38,
      0x30,
      NULL,
      "F2 0F 00 /6: FRED's LKGS, newer than Zydis 4.0 (Intel XED decodes it)",
      { 0 } },
    { "new-0f38",
      ONLY_OURS,
      MALL,
      PTD_ILD_MAP_0F38,
      0x8A,
      0xFC,
      0,
      0,
      zy_new_0f38,
      "0F 38 8A/8B MOVRS, F2/F3 0F 38 F8 with a register (URDMSR/UWRMSR), 0F "
      "38 FC AADD/AAND/AOR/AXOR (RAO-INT): newer than Zydis 4.0 (Intel XED "
      "decodes them)",
      { 0 } },
    { "udb",
      ONLY_OURS,
      M64,
      PTD_ILD_MAP_PRIMARY,
      0xD6,
      0xD6,
      0,
      0,
      NULL,
      "D6 in 64-bit mode: UDB, a one-byte #UD instruction (Intel XED); "
      "Zydis 4.0 follows AMD, where D6 is invalid there",
      { 0 } },
    { "amd-3dnow",
      ONLY_ZYDIS,
      MALL,
      -1,
      0x00,
      0xFF,
      0,
      0,
      zy_3dnow,
      "0F 0F: AMD's 3DNow!, which Zydis decodes; every Intel CPU raises #UD "
      "(blank in SDM Table A-3) and libipt master dropped it too",
      { 0 } },
    { "mpx-bnd-register",
      ONLY_OURS,
      MALL,
      PTD_ILD_MAP_0F,
      0x1A,
      0x1B,
      0,
      0,
      zy_bad_register,
      "0F 1A/1B with a BND register number above 3: Zydis decodes MPX by "
      "default and rejects it; CPUs without MPX (all since Ice Lake) "
      "execute these hint-NOP encodings as NOPs, which is what the ILD "
      "decodes (length is the same either way)",
      { 0 } },
    { "vector-opcodes",
      ONLY_OURS,
      MALL,
      -1,
      0x00,
      0xFF,
      0,
      0,
      any_vector,
      "VEX/EVEX/XOP: the ILD checks the prefix itself (position, reserved "
      "bits, map) but not which opcode/W/L/pp/vvvv/mask combinations are "
      "defined; their length rule is uniform per map",
      { 0 } },
    { "0f-group7",
      ONLY_OURS,
      MALL,
      PTD_ILD_MAP_0F,
      0x01,
      0x01,
      0,
      0,
      zy_decoding_error,
      "0F 01 (Group 7): of the 64 register forms the ILD knows those that "
      "change control flow (VMCALL...) and SWAPGS, not which others are "
      "defined or which prefixes they take; every form is 0F 01 + ModRM",
      { 0 } },
    { "0f-mpx",
      ONLY_OURS,
      MALL,
      PTD_ILD_MAP_0F,
      0x1A,
      0x1B,
      0,
      0,
      zy_decoding_error,
      "0F 1A/1B: MPX prefix/ModRM combinations Zydis rejects are hint NOPs "
      "on CPUs without MPX; the length is that of a ModRM instruction",
      { 0 } },
    { "0f-group15",
      ONLY_OURS,
      MALL,
      PTD_ILD_MAP_0F,
      0xAE,
      0xAE,
      0,
      0,
      zy_decoding_error,
      "0F AE (Group 15): fences, FXSAVE/XSAVE*, RD/WRFSBASE, CLWB, UMWAIT, "
      "PTWRITE... the ILD recognises PTWRITE and does not model the other "
      "prefix/mod/reg combinations; every form is 0F AE + ModRM",
      { 0 } },
    { "0f-group9",
      ONLY_OURS,
      MALL,
      PTD_ILD_MAP_0F,
      0xC7,
      0xC7,
      0,
      0,
      zy_decoding_error,
      "0F C7 (Group 9): CMPXCHG8B/16B, RDRAND, RDSEED, RDPID, VMPTRLD, "
      "XRSTORS...: prefix/mod/reg combinations not modelled; every form is "
      "0F C7 + ModRM",
      { 0 } },
    { "real-mode-ud",
      ONLY_OURS,
      M16,
      -1,
      0x00,
      0xFF,
      0,
      0,
      real_mode_ud,
      "with --real-mode16 only: instructions that exist only in protected "
      "mode (ARPL, LAR, LSL, group 6, SYSRET, SYSENTER/SYSEXIT, GETSEC, VMX, "
      "shadow stacks) raise #UD in real mode; the ILD has one 16-bit mode, "
      "as Intel PT's MODE.Exec does not tell real from protected mode",
      { 0 } },
    { "knc-jkzd",
      BOTH_DIFFER,
      MALL,
      PTD_ILD_MAP_VEX_0F,
      0x84,
      0x85,
      0,
      0,
      NULL,
      "VEX.0F 84/85: Knights Corner's JKZD/JKNZD (mask-conditional jumps with "
      "rel8/rel32), which Zydis decodes by default; undefined (#UD) on every "
      "CPU with Intel PT, so the ILD gives them the plain VEX map-1 length",
      { 0 } },
    { "knc-jkzd-map0",
      ONLY_ZYDIS,
      MALL,
      -1,
      0x00,
      0xFF,
      0,
      0,
      zy_knc_branch,
      "VEX with map 0 (C4 xx with m-mmmm=0): Knights Corner's JKZD/JKNZD; a "
      "reserved VEX map (#UD) on every CPU with Intel PT",
      { 0 } },
};
#define N_ALLOWED (sizeof ild_allowed / sizeof ild_allowed[0])

/* ---- Zydis side ------------------------------------------------------------ */

static ZydisDecoder zdec[3];

static void zydis_init(void)
{
    ZydisDecoderInit(&zdec[PTD_EXEC_MODE_16],
                     zydis_real16 ? ZYDIS_MACHINE_MODE_REAL_16 : ZYDIS_MACHINE_MODE_LEGACY_16,
                     ZYDIS_STACK_WIDTH_16);
    ZydisDecoderInit(&zdec[PTD_EXEC_MODE_32], ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32);
    ZydisDecoderInit(&zdec[PTD_EXEC_MODE_64], ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
}

/* Zydis' view mapped onto enum ptd_iclass. */
static int zydis_class(const ZydisDecodedInstruction *z)
{
    bool far = z->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
    switch (z->mnemonic) {
    case ZYDIS_MNEMONIC_JMP:
        if (far)
            return PTD_ICLASS_FAR_TRANSFER;
        return z->raw.imm[0].is_relative ? PTD_ICLASS_DIRECT_JUMP : PTD_ICLASS_INDIRECT_JUMP;
    case ZYDIS_MNEMONIC_CALL:
        if (far)
            return PTD_ICLASS_FAR_TRANSFER;
        return z->raw.imm[0].is_relative ? PTD_ICLASS_DIRECT_CALL : PTD_ICLASS_INDIRECT_CALL;
    case ZYDIS_MNEMONIC_RET: return far ? PTD_ICLASS_FAR_TRANSFER : PTD_ICLASS_NEAR_RET;
    case ZYDIS_MNEMONIC_INT:
    case ZYDIS_MNEMONIC_INT1:
    case ZYDIS_MNEMONIC_INT3:
    case ZYDIS_MNEMONIC_INTO:
    case ZYDIS_MNEMONIC_IRET:
    case ZYDIS_MNEMONIC_IRETD:
    case ZYDIS_MNEMONIC_IRETQ:
    case ZYDIS_MNEMONIC_SYSCALL:
    case ZYDIS_MNEMONIC_SYSRET:
    case ZYDIS_MNEMONIC_SYSENTER:
    case ZYDIS_MNEMONIC_SYSEXIT:
    case ZYDIS_MNEMONIC_VMCALL:
    case ZYDIS_MNEMONIC_VMLAUNCH:
    case ZYDIS_MNEMONIC_VMRESUME:
    case ZYDIS_MNEMONIC_VMFUNC:
    case ZYDIS_MNEMONIC_VMMCALL:
    case ZYDIS_MNEMONIC_VMRUN:
    case ZYDIS_MNEMONIC_RSM:
    case ZYDIS_MNEMONIC_UIRET: return PTD_ICLASS_FAR_TRANSFER;
    case ZYDIS_MNEMONIC_XBEGIN: /* Zydis: COND_BR; for Intel PT, TSX */
    case ZYDIS_MNEMONIC_XEND: /* begin/commit/abort are MODE.TSX events */ return PTD_ICLASS_OTHER;
    default:
        if (z->meta.category == ZYDIS_CATEGORY_COND_BR)
            return PTD_ICLASS_COND_JUMP;
        return PTD_ICLASS_OTHER;
    }
}

static int zydis_map(const ZydisDecodedInstruction *z)
{
    static const int legacy[] = {
        [ZYDIS_OPCODE_MAP_DEFAULT] = PTD_ILD_MAP_PRIMARY,
        [ZYDIS_OPCODE_MAP_0F] = PTD_ILD_MAP_0F,
        [ZYDIS_OPCODE_MAP_0F38] = PTD_ILD_MAP_0F38,
        [ZYDIS_OPCODE_MAP_0F3A] = PTD_ILD_MAP_0F3A,
    };
    switch (z->encoding) {
    case ZYDIS_INSTRUCTION_ENCODING_3DNOW: return PTD_ILD_MAP_0F;
    case ZYDIS_INSTRUCTION_ENCODING_VEX:
        return PTD_ILD_MAP_VEX_0F + (int)z->opcode_map - ZYDIS_OPCODE_MAP_0F;
    case ZYDIS_INSTRUCTION_ENCODING_EVEX:
        if (z->opcode_map == ZYDIS_OPCODE_MAP_MAP5)
            return PTD_ILD_MAP_EVEX_MAP5;
        if (z->opcode_map == ZYDIS_OPCODE_MAP_MAP6)
            return PTD_ILD_MAP_EVEX_MAP6;
        return PTD_ILD_MAP_EVEX_0F + (int)z->opcode_map - ZYDIS_OPCODE_MAP_0F;
    case ZYDIS_INSTRUCTION_ENCODING_XOP:
        return PTD_ILD_MAP_XOP8 + (int)z->opcode_map - ZYDIS_OPCODE_MAP_XOP8;
    default: return z->opcode_map <= ZYDIS_OPCODE_MAP_0F3A ? legacy[z->opcode_map] : -1;
    }
}

/* ---- comparison -------------------------------------------------------------- */

struct stats {
    unsigned long n, both_ok, both_bad, allowed, fail, stepped;
};

static struct stats st[3];
static unsigned long max_fail = 20;
static bool verbose;
static unsigned long long seed;
static const char *phase = "";
static const char *mode_name[3] = { "16", "32", "64" };

static void hex(FILE *f, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", b[i]);
}

static struct allowed *find_allowed(enum dir d, unsigned mode, const struct facts *f)
{
    for (size_t i = 0; i < N_ALLOWED; i++) {
        struct allowed *a = &ild_allowed[i];
        if (a->dir != d || !(a->modes & (1u << mode)))
            continue;
        if (a->map >= 0 && a->map != f->map)
            continue;
        if (f->opcode < a->op_lo || f->opcode > a->op_hi)
            continue;
        if (a->modrm_mask && (!f->has_modrm || (f->modrm & a->modrm_mask) != a->modrm_val))
            continue;
        if (a->pred && !a->pred(f))
            continue;
        return a;
    }
    return NULL;
}

static void facts_from_ours(struct facts *f, const struct ptd_insn *in, const uint8_t *b)
{
    memset(f, 0, sizeof *f);
    f->map = in->map;
    f->opcode = in->opcode;
    f->has_modrm = in->flags & PTD_INSN_MODRM;
    f->modrm = in->modrm;
    f->lock = in->flags & PTD_INSN_LOCK;
    f->rex = in->flags & PTD_INSN_REX;
    f->rep = in->flags & PTD_INSN_REP;
    f->rex2 = in->flags & PTD_INSN_REX2;
    f->rep_byte = in->rep_byte;
    f->bytes = b;
}

static void facts_from_zydis(struct facts *f, const ZydisDecodedInstruction *z, const uint8_t *b)
{
    memset(f, 0, sizeof *f);
    f->map = zydis_map(z);
    f->opcode = z->opcode;
    f->has_modrm = z->attributes & ZYDIS_ATTRIB_HAS_MODRM;
    f->modrm = (unsigned)(z->raw.modrm.mod << 6 | z->raw.modrm.reg << 3 | z->raw.modrm.rm);
    f->lock = z->attributes & ZYDIS_ATTRIB_HAS_LOCK;
    f->rex = z->attributes & ZYDIS_ATTRIB_HAS_REX;
    f->map3dnow = z->encoding == ZYDIS_INSTRUCTION_ENCODING_3DNOW;
    f->zmnemonic = z->mnemonic;
    f->bytes = b;
}

/* Unexplained mismatches by mode, direction, map and opcode. */
static unsigned long hist[3][4][PTD_ILD_MAP_COUNT + 1][256];

static void report(unsigned mode, const uint8_t *b, const char *what, int rc,
                   const struct ptd_insn *in, ZyanStatus zs, const ZydisDecodedInstruction *z)
{
    struct stats *s = &st[mode];
    s->fail++;
    {
        int d = rc > 0 && !ZYAN_SUCCESS(zs) ? ONLY_OURS : rc <= 0 ? ONLY_ZYDIS : BOTH_DIFFER;
        int mp = rc > 0 ? in->map : zydis_map(z);
        unsigned op = rc > 0 ? in->opcode : z->opcode;
        if (mp < 0 || mp > PTD_ILD_MAP_COUNT)
            mp = PTD_ILD_MAP_COUNT;
        hist[mode][d][mp][op]++;
    }
    if (s->fail > max_fail)
        return;
    printf("MISMATCH mode=%s phase=%s seed=%llu bytes=", mode_name[mode], phase, seed);
    hex(stdout, b, BUF);
    printf(" %s\n", what);
    if (rc > 0)
        printf("  ptboot: len=%d class=%s map=%u op=%02x modrm=%02x target=%#" PRIx64 "\n", rc,
               ptd_ild_iclass_name(in->iclass), in->map, in->opcode, in->modrm, in->target);
    else
        printf("  ptboot: error %d\n", rc);
    if (ZYAN_SUCCESS(zs)) {
        ZydisFormatter fm;
        char txt[128];
        ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
        ZydisDecoderDecodeFull(&zdec[mode], b, BUF, (ZydisDecodedInstruction *)z, ops);
        ZydisFormatterInit(&fm, ZYDIS_FORMATTER_STYLE_INTEL);
        ZydisFormatterFormatInstruction(&fm, z, ops, z->operand_count_visible, txt, sizeof txt, 0,
                                        NULL);
        printf("  zydis:  len=%u class=%s \"%s\" map=%d op=%02x\n", z->length,
               ptd_ild_iclass_name((enum ptd_iclass)zydis_class(z)), txt, zydis_map(z), z->opcode);
    } else {
        printf("  zydis:  error %#x\n", (unsigned)zs);
    }
}

static const uint64_t test_ip[3] = { 0xFFF0, 0x7FFFFFF0u, 0x00007FFFFFFFF000ull };

/* Compares one decode of b[0..BUF) in the given mode. */
static void check(unsigned mode, const uint8_t *b)
{
    struct stats *s = &st[mode];
    struct ptd_insn in;
    ZydisDecodedInstruction z;
    struct facts f;
    struct allowed *a;

    s->n++;
    in.ip = test_ip[mode];
    int rc = ptd_ild_decode(&in, b, BUF, (enum ptd_exec_mode)mode);
    ZyanStatus zs = ZydisDecoderDecodeInstruction(&zdec[mode], NULL, b, BUF, &z);
    bool zok = ZYAN_SUCCESS(zs);

    /* The flow layer's lean step: the same length, class and displacement;
     * 0 leaves the instruction to ptd_ild_decode(). */
    struct ptd_ild_step stp;
    unsigned sl = ptd_ild_step(b, BUF, mode, &stp);
    if (sl) {
        s->stepped++;
        if (rc != (int)sl || in.iclass != stp.iclass || !(in.flags & PTD_INSN_REL) != !stp.rel ||
            (stp.rel && in.disp != stp.disp)) {
            report(mode, b, "ptd_ild_step and ptd_ild_decode differ", rc, &in, zs, &z);
            return;
        }
    }

    /* The fast path (>= 15 bytes given) and the complete decoder (exactly
     * the instruction's bytes) must agree; one byte less is truncated. */
    if (rc > 0 && rc < PTD_ILD_MAX_LEN) {
        struct ptd_insn in2;
        in2.ip = in.ip;
        int rc2 = ptd_ild_decode(&in2, b, (size_t)rc, (enum ptd_exec_mode)mode);
        bool same = rc2 == rc && in2.iclass == in.iclass && in2.map == in.map &&
                    in2.opcode == in.opcode && in2.flags == in.flags && in2.opsize == in.opsize &&
                    in2.addrsize == in.addrsize && in2.prefix_len == in.prefix_len &&
                    in2.rex == in.rex && in2.rep_byte == in.rep_byte &&
                    (!(in.flags & PTD_INSN_MODRM) || in2.modrm == in.modrm) &&
                    (!(in.flags & (PTD_INSN_REL | PTD_INSN_FAR_PTR)) || in2.target == in.target);
        int rc3 = ptd_ild_decode(&in2, b, (size_t)rc - 1, (enum ptd_exec_mode)mode);
        if (!same || rc3 != -PTD_ILD_ERR_TRUNCATED) {
            report(mode, b,
                   !same ? "fast and complete decoders differ" : "one byte less is not -TRUNCATED",
                   rc, &in, zs, &z);
            return;
        }
    }
    if (rc > 0 && !zok) {
        facts_from_ours(&f, &in, b);
        f.zstatus = zs;
        if ((a = find_allowed(ONLY_OURS, mode, &f)) != NULL) {
            a->count[mode]++;
            s->allowed++;
            return;
        }
        report(mode, b, "ptboot decodes, zydis rejects", rc, &in, zs, &z);
        return;
    }
    if (rc <= 0 && zok) {
        facts_from_zydis(&f, &z, b);
        if ((a = find_allowed(ONLY_ZYDIS, mode, &f)) != NULL) {
            a->count[mode]++;
            s->allowed++;
            return;
        }
        report(mode, b, "zydis decodes, ptboot rejects", rc, &in, zs, &z);
        return;
    }
    if (rc <= 0) {
        s->both_bad++;
        return;
    }
    /* Both decode: everything must agree. */
    const char *why = NULL;
    int zc = zydis_class(&z);
    if ((unsigned)rc != z.length)
        why = "length differs";
    else if (in.iclass != zc)
        why = "class differs";
    else if ((in.flags & PTD_INSN_PTWRITE) !=
             (z.mnemonic == ZYDIS_MNEMONIC_PTWRITE ? PTD_INSN_PTWRITE : 0))
        why = "ptwrite differs";
    else if (z.raw.imm[0].is_relative != !!(in.flags & PTD_INSN_REL))
        why = "relative immediate differs";
    else if (in.flags & PTD_INSN_REL) {
        uint64_t t = in.ip + z.length + (uint64_t)z.raw.imm[0].value.s;
        /* Near branches wrap to the operand size (SDM JMP, Jcc, CALL);
         * XBEGIN does not (SDM XBEGIN), but EIP is still 32 bits wide. */
        if (mode != PTD_EXEC_MODE_64) {
            if (z.operand_width == 16 && z.mnemonic != ZYDIS_MNEMONIC_XBEGIN)
                t &= 0xFFFF;
            else
                t &= 0xFFFFFFFFu;
        }
        if (t != in.target)
            why = "target differs";
    } else if (in.flags & PTD_INSN_FAR_PTR) {
        if (in.target != z.raw.imm[0].value.u || in.far_sel != (uint16_t)z.raw.imm[1].value.u)
            why = "far pointer differs";
    }
    if (!why) {
        s->both_ok++;
        return;
    }
    facts_from_ours(&f, &in, b);
    if ((a = find_allowed(BOTH_DIFFER, mode, &f)) != NULL) {
        a->count[mode]++;
        s->allowed++;
        return;
    }
    report(mode, b, why, rc, &in, zs, &z);
}

/* ---- inputs ---------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void fill_random(uint8_t *b, size_t from)
{
    for (size_t i = from; i < BUF; i += 8) {
        uint64_t r = rnd();
        for (size_t j = i; j < BUF && j < i + 8; j++, r >>= 8)
            b[j] = (uint8_t)r;
    }
}

static unsigned modes_mask = MALL;

static void run_random(unsigned long n)
{
    uint8_t b[BUF];
    phase = "random";
    for (unsigned long i = 0; i < n; i++) {
        fill_random(b, 0);
        /* Bias a quarter of the cases towards prefixed and escaped forms,
         * which pure random bytes reach too rarely. */
        unsigned r = (unsigned)rnd();
        if ((r & 3) == 0) {
            static const uint8_t lead[] = { 0x66, 0x67, 0xF2, 0xF3, 0xF0, 0x2E, 0x48, 0x41,
                                            0x0F, 0x0F, 0x0F, 0xC4, 0xC5, 0x62, 0x8F, 0xD5 };
            size_t k = 0, np = (r >> 2) & 3;
            for (size_t j = 0; j < np; j++)
                b[k++] = lead[(r >> (4 + 4 * j)) & 15];
            if (((r >> 20) & 1) && k < BUF - 2)
                b[k++] = 0x0F;
        }
        for (unsigned m = 0; m < 3; m++)
            if (modes_mask & (1u << m))
                check(m, b);
    }
}

/* Prefix sets for the structured run (a REX byte only means REX in 64-bit
 * mode; elsewhere it is INC/DEC and changes the opcode, which is fine). */
static const uint8_t pfx_sets[][4] = {
    { 0 },
    { 1, 0x66 },
    { 1, 0x67 },
    { 1, 0xF2 },
    { 1, 0xF3 },
    { 1, 0xF0 },
    { 1, 0x2E },
    { 2, 0x66, 0x67 },
    { 2, 0xF3, 0x66 },
    { 2, 0x66, 0xF2 },
    { 1, 0x48 },
    { 1, 0x41 },
    { 2, 0x66, 0x48 },
    { 2, 0x48, 0x66 },
    { 3, 0x66, 0x66, 0x67 },
    { 2, 0xF2, 0xF3 },
};
#define N_PFX (sizeof pfx_sets / sizeof pfx_sets[0])

static void put_modrm_tail(uint8_t *b, size_t k, unsigned modrm)
{
    b[k] = (uint8_t)modrm;
    fill_random(b, k + 1);
    /* SIB with base=101 half of the time (disp32 with mod=00). */
    if ((rnd() & 1) && k + 1 < BUF)
        b[k + 1] = (uint8_t)((b[k + 1] & 0xF8) | 5);
}

static void run_structured(void)
{
    uint8_t b[BUF];
    phase = "structured";
    /* Legacy maps: [prefixes] [0F [38|3A|0F]] opcode ModRM SIB/disp/imm tail */
    static const uint8_t esc[][3] = { { 0 }, { 1, 0x0F }, { 2, 0x0F, 0x38 }, { 2, 0x0F, 0x3A } };
    for (size_t e = 0; e < 4; e++)
        for (unsigned op = 0; op < 256; op++)
            for (size_t p = 0; p < N_PFX; p++)
                for (unsigned mr = 0; mr < 256; mr += (e == 0 ? 1 : p < 4 ? 3 : 11)) {
                    /* ModRM: every byte for the one-byte map; every third
                       for the escapes under the common prefix sets, every
                       eleventh (still every mod and reg) under the rest. */
                    size_t k = 0;
                    for (size_t j = 0; j < pfx_sets[p][0]; j++)
                        b[k++] = pfx_sets[p][1 + j];
                    for (size_t j = 0; j < esc[e][0]; j++)
                        b[k++] = esc[e][1 + j];
                    b[k++] = (uint8_t)op;
                    put_modrm_tail(b, k, mr);
                    for (unsigned m = 0; m < 3; m++)
                        if (modes_mask & (1u << m))
                            check(m, b);
                }
    /* REX2 (APX): [prefix] D5 payload opcode ModRM tail, both maps, W=0/1,
       every opcode. Zydis 4.0 predates APX (allowed: apx-rex2); what runs
       here is the ILD's own consistency: fast path against the complete
       decoder, the step against the decoder, truncation. */
    static const uint8_t rex2_pfx[][2] = { { 0 },       { 1, 0x66 }, { 1, 0x67 }, { 1, 0xF3 },
                                           { 1, 0xF0 }, { 1, 0x2E }, { 1, 0x48 } };
    for (unsigned m0 = 0; m0 < 2; m0++)
        for (unsigned op = 0; op < 256; op++)
            for (size_t p = 0; p < sizeof rex2_pfx / sizeof rex2_pfx[0]; p++)
                for (unsigned mr = 0; mr < 256; mr += 17) {
                    size_t k = 0;
                    for (size_t j = 0; j < rex2_pfx[p][0]; j++)
                        b[k++] = rex2_pfx[p][1 + j];
                    b[k++] = 0xD5;
                    b[k++] = (uint8_t)((m0 << 7) | (rnd() & 0x7F));
                    b[k++] = (uint8_t)op;
                    put_modrm_tail(b, k, mr);
                    for (unsigned m = 0; m < 3; m++)
                        if (modes_mask & (1u << m))
                            check(m, b);
                }
    /* The encodings category K of issue #12 added or changed, each in every
       mode with random tails (so that every allowed difference above is
       met at least once). */
    static const char *const spot[] = {
        "d500a1",       "2ed500a1",     "66d500a1",   "48d500a1",     "d5007400",
        "d580840000",   "f30f01ca",     "f20f01ca",   "66f30f01ca",   "0f01ca",
        "f30f01ec",     "f20f00f0",     "f20f0030",   "0f38fc00",     "660f38fc00",
        "f20f38f8c0",   "f30f38f8c0",   "0f388a00",   "660f388b00",   "d6",
        "0f0fc00c",     "0f3900",       "0f7a00",     "0fb90424",     "f30f3af0c001",
        "0fff4010",     "f0e900000000", "f0ffd0",     "62f47c0800c0", "62f47d0881c01122",
        "62f97c4858c0", "62f1784858c0", "c4e77bf8c0", "62f77f08f8c0", "c4e578fdc0",
    };
    for (size_t i = 0; i < sizeof spot / sizeof spot[0]; i++)
        for (unsigned rep = 0; rep < 64; rep++) {
            size_t k = 0;
            fill_random(b, 0);
            for (const char *h = spot[i]; h[0] && h[1] && k < BUF; h += 2) {
                unsigned v;
                sscanf(h, "%2x", &v);
                b[k++] = (uint8_t)v;
            }
            for (unsigned m = 0; m < 3; m++)
                if (modes_mask & (1u << m))
                    check(m, b);
        }
    /* 3DNow!: 0F 0F ModRM [SIB/disp] suffix, every suffix (AMD only: the
       ILD rejects them, allowed: amd-3dnow). */
    for (unsigned suf = 0; suf < 256; suf++)
        for (unsigned mr = 0; mr < 256; mr += 5) {
            b[0] = 0x0F;
            b[1] = 0x0F;
            b[2] = (uint8_t)mr;
            fill_random(b, 3);
            unsigned mod = mr >> 6, rm = mr & 7;
            /* Put the suffix where it belongs for 32-bit addressing. */
            size_t at = 3 + (mod != 3 && rm == 4) +
                        (mod == 1                ? 1
                         : mod == 2              ? 4
                         : (mod == 0 && rm == 5) ? 4
                                                 : 0);
            if (mod != 3 && rm == 4)
                b[3] = 0x24;
            b[at] = (uint8_t)suf;
            for (unsigned m = 0; m < 3; m++)
                if (modes_mask & (1u << m))
                    check(m, b);
        }
    /* VEX (C5, C4 maps 0-31), EVEX (62, maps 0-7, P0[3] and P1[2] either
       way half the time), XOP (8F maps 8-0Ah):
       every opcode, random payload bits, a ModRM sample. */
    for (unsigned op = 0; op < 256; op++)
        for (unsigned rep = 0; rep < 96; rep++) {
            unsigned r = (unsigned)rnd();
            size_t k = 0;
            if (rep & 1)
                b[k++] = (rep & 2) ? 0x67 : 0x2E;
            unsigned kind = rep % 6;
            fill_random(b, 0);
            if (kind == 0) {
                b[k++] = 0xC5;
                b[k++] = (uint8_t)(r | 0x80 | ((rep & 4) ? 0x40 : 0));
            } else if (kind == 1 || kind == 2) {
                b[k++] = 0xC4;
                b[k++] = (uint8_t)((r & 0xE0) | (kind == 1 ? 1 + (rep / 6) % 3 : (r >> 8) & 31));
                if (rep & 4)
                    b[k - 1] |= 0xC0;
                b[k++] = (uint8_t)(r >> 16);
            } else if (kind == 3 || kind == 4) {
                b[k++] = 0x62;
                b[k++] =
                    (uint8_t)((r & 0xF0) | (kind == 3 ? (1 + (rep / 6) % 7) : ((r >> 8) & 15)));
                if (rep & 4)
                    b[k - 1] |= 0xC0;
                b[k++] = (uint8_t)((r >> 16) | (kind == 3 ? 0x04 : 0));
                b[k++] = (uint8_t)(r >> 24);
            } else {
                b[k++] = 0x8F;
                b[k++] = (uint8_t)((r & 0xE0) | (8 + (rep / 6) % 3));
                b[k++] = (uint8_t)(r >> 16);
            }
            b[k++] = (uint8_t)op;
            put_modrm_tail(b, k, (unsigned)(rnd() & 0xFF));
            for (unsigned m = 0; m < 3; m++)
                if (modes_mask & (1u << m))
                    check(m, b);
        }
}

static int run_real(const char *dir, unsigned long random_offsets)
{
    static const char *const names[] = { "Unzip", "foo", "mruby", "avscript_32" };
    int found = 0;
    for (size_t t = 0; t < sizeof names / sizeof names[0]; t++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s/pages.dump", dir, names[t]);
        FILE *fp = fopen(path, "rb");
        if (!fp)
            continue;
        found++;
        fseek(fp, 0, SEEK_END);
        long sz = ftell(fp);
        fseek(fp, 0, SEEK_SET);
        uint8_t *code = malloc((size_t)sz + BUF);
        if (!code || fread(code, 1, (size_t)sz, fp) != (size_t)sz) {
            fprintf(stderr, "ild_vs_zydis: cannot read %s\n", path);
            exit(2);
        }
        fclose(fp);
        memset(code + sz, 0, BUF);
        unsigned mode = strstr(names[t], "_32") ? PTD_EXEC_MODE_32 : PTD_EXEC_MODE_64;
        phase = names[t];
        if (modes_mask & (1u << mode)) {
            /* Linear sweep page by page, as a disassembler would. */
            for (long pg = 0; pg < sz; pg += 4096) {
                long off = pg;
                while (off < pg + 4096) {
                    uint8_t b[BUF];
                    memcpy(b, code + off, BUF);
                    check(mode, b);
                    ZydisDecodedInstruction z;
                    ZyanStatus zs = ZydisDecoderDecodeInstruction(&zdec[mode], NULL, b, BUF, &z);
                    off += ZYAN_SUCCESS(zs) ? z.length : 1;
                }
            }
        }
        /* Random offsets in every mode. */
        for (unsigned long i = 0; i < random_offsets; i++) {
            long off = (long)(rnd() % (uint64_t)sz);
            for (unsigned m = 0; m < 3; m++)
                if (modes_mask & (1u << m))
                    check(m, code + off);
        }
        free(code);
    }
    if (!found)
        printf("ild_vs_zydis: real code skipped: no pages.dump under %s\n", dir);
    return found;
}

int main(int argc, char **argv)
{
    unsigned long nrandom = 0, real_random = 0;
    bool structured = false;
    const char *real = NULL;
    seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--random") && i + 1 < argc)
            nrandom = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--structured"))
            structured = true;
        else if (!strcmp(argv[i], "--real") && i + 1 < argc)
            real = argv[++i];
        else if (!strcmp(argv[i], "--real-random") && i + 1 < argc)
            real_random = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
            int m = atoi(argv[++i]);
            modes_mask = m == 16 ? M16 : m == 32 ? M32 : M64;
        } else if (!strcmp(argv[i], "--max-fail") && i + 1 < argc)
            max_fail = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--verbose"))
            verbose = true;
        else if (!strcmp(argv[i], "--real-mode16"))
            zydis_real16 = true;
        else {
            fprintf(
                stderr,
                "usage: %s [--random N] [--seed S] [--structured] [--real DIR "
                "[--real-random N]] [--mode 16|32|64] [--real-mode16] [--max-fail N] [--verbose]\n",
                argv[0]);
            return 2;
        }
    }
    zydis_init();
    rng_state = seed;
    printf("ild_vs_zydis: seed=%llu random=%lu structured=%d real=%s\n", seed, nrandom, structured,
           real ? real : "-");
    if (structured)
        run_structured();
    if (nrandom)
        run_random(nrandom);
    if (real)
        run_real(real, real_random);

    unsigned long fails = 0;
    for (unsigned m = 0; m < 3; m++) {
        if (!(modes_mask & (1u << m)))
            continue;
        struct stats *s = &st[m];
        printf("mode %s: %lu inputs: %lu agree (decoded), %lu agree (rejected), "
               "%lu allowed differences, %lu mismatches (%lu by ptd_ild_step)\n",
               mode_name[m], s->n, s->both_ok, s->both_bad, s->allowed, s->fail, s->stepped);
        fails += s->fail;
    }
    for (size_t i = 0; i < N_ALLOWED; i++) {
        struct allowed *a = &ild_allowed[i];
        unsigned long c = a->count[0] + a->count[1] + a->count[2];
        if (c || verbose)
            printf("  allowed %-16s %8lu/%lu/%lu (16/32/64)\n", a->name, a->count[0], a->count[1],
                   a->count[2]);
    }
    if (fails) {
        static const char *dn[] = { "", "only-ptboot", "only-zydis", "differ" };
        printf("unexplained mismatches by mode/direction/map/opcode:\n");
        for (unsigned m = 0; m < 3; m++)
            for (unsigned d = 1; d < 4; d++)
                for (unsigned mp = 0; mp <= PTD_ILD_MAP_COUNT; mp++)
                    for (unsigned op = 0; op < 256; op++)
                        if (hist[m][d][mp][op])
                            printf("  %s %s map=%u op=%02x: %lu\n", mode_name[m], dn[d], mp, op,
                                   hist[m][d][mp][op]);
    }
    printf("ild_vs_zydis: %s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
