/* Generates decoder/ptd_ild_step_table.c: the step table of ptd_ild_step()
 * (decoder/ptd_ild_fast.h), one entry per opcode byte, operand-size context
 * (16-, 32-, 64-bit mode, 64-bit with REX.W) and map (one-byte, 0F), built
 * ahead of time so the flow layer's hot loop needs one lookup for the
 * length and class of an instruction without legacy prefixes.
 *
 * The entries are derived from ptd_ild_decode() itself, by brute force:
 * an opcode gets a fast entry only when, for every ModRM byte (with and
 * without a SIB base of 5, immediates of zeros and of ones, with REX
 * variants), the decoder's length is the entry's length plus the ModRM
 * table's extra bytes and its class and displacement are the entry's.
 * Everything else is marked slow and left to the general path. So the
 * table cannot say anything the decoder does not; test/ild/step_table.sh
 * regenerates it and compares with the committed file, and ild_vs_zydis /
 * ild_bounds check ptd_ild_step against ptd_ild_decode on every input.
 *
 * Usage: gen_step_table > decoder/ptd_ild_step_table.c */
#include <stdio.h>
#include <string.h>

#include "decoder/ptd_ild.h"
#include "decoder/ptd_ild_fast.h"
#include "decoder/ptd_ild_tables.h"

static int dec(struct ptd_insn *in, const uint8_t *b, unsigned mode)
{
    in->ip = 0x1000;
    return ptd_ild_decode(in, b, 32, (enum ptd_exec_mode)mode);
}

/* Extra bytes after ModRM for this ModRM/SIB, as ptd_ild_step adds them. */
static unsigned extra(unsigned mode, unsigned modrm, unsigned sib)
{
    unsigned x = ptd_ild_modrm_extra[mode == PTD_EXEC_MODE_16][modrm];
    if (x & ILD_SIB0)
        x = (x & ~ILD_SIB0) + ((sib & 7u) == 5u ? 4 : 0);
    return x;
}

/* bytes: [rex] [0F] op modrm sib fill...; returns the index of modrm */
static unsigned build(uint8_t *b, unsigned rex, unsigned map, unsigned op, unsigned modrm,
                      unsigned sib, unsigned fill)
{
    unsigned n = 0;
    memset(b, (int)fill, 32);
    if (rex)
        b[n++] = (uint8_t)rex;
    if (map)
        b[n++] = 0x0F;
    b[n++] = (uint8_t)op;
    b[n] = (uint8_t)modrm;
    b[n + 1] = (uint8_t)sib;
    return n;
}

static const unsigned sibs[] = { 0x00, 0x05, 0x24, 0xFD };
static const unsigned fills[] = { 0x00, 0xFF, 0x90 };

/* Is the entry right for this REX byte (0: none)? */
static int entry_holds(unsigned mode, unsigned rex, unsigned map, unsigned op, unsigned e)
{
    uint8_t b[32];
    struct ptd_insn in;
    unsigned len0 = e & PTD_STEP_LEN, cls = PTD_STEP_CLASS_OF(e), rk = PTD_STEP_REL_OF(e);
    unsigned pfx = rex ? 1 : 0;

    if (!(e & PTD_STEP_M)) {
        for (unsigned fi = 0; fi < sizeof fills / sizeof fills[0]; fi++) {
            build(b, rex, map, op, fills[fi], fills[fi], fills[fi]);
            int rc = dec(&in, b, mode);
            if (rc != (int)(pfx + len0) || in.iclass != cls || !(in.flags & PTD_INSN_REL) != !rk)
                return 0;
            if (rk) {
                unsigned ds = rk == 1 ? 1 : rk == 2 ? 2 : 4;
                const uint8_t *p = b + rc - ds;
                int32_t d = ds == 1   ? (int8_t)p[0]
                            : ds == 2 ? (int16_t)(uint16_t)(p[0] | (p[1] << 8))
                                      : (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) |
                                                  ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24));
                if (in.disp != d)
                    return 0;
            }
        }
        return 1;
    }
    if (rk)
        return 0;
    for (unsigned modrm = 0; modrm < 256; modrm++)
        for (unsigned si = 0; si < sizeof sibs / sizeof sibs[0]; si++)
            for (unsigned fi = 0; fi < sizeof fills / sizeof fills[0]; fi++) {
                build(b, rex, map, op, modrm, sibs[si], fills[fi]);
                int rc = dec(&in, b, mode);
                if (modrm >= 0xC0 && (e & PTD_STEP_NOREG)) {
                    if (rc > 0)
                        return 0;
                    continue;
                }
                if (rc != (int)(pfx + len0 + extra(mode, modrm, sibs[si])) || in.iclass != cls ||
                    (in.flags & PTD_INSN_REL))
                    return 0;
            }
    return 1;
}

/* The entry for an opcode in a context (0..3: 16, 32, 64, 64 + REX.W). */
static unsigned entry(unsigned ctx, unsigned map, unsigned op)
{
    unsigned mode = ctx < 3 ? ctx : PTD_EXEC_MODE_64;
    unsigned rexw = ctx == 3 ? 0x48 : 0;
    uint8_t b[32];
    struct ptd_insn in;

    if (!map && ptd_ild_prefix_bits[mode == PTD_EXEC_MODE_64][op])
        return PTD_STEP_SLOW;
    if (!map && op == 0x0F)
        return PTD_STEP_ESC0F;
    unsigned at = build(b, rexw, map, op, 0xC0, 0, 0);
    int rc = dec(&in, b, mode);
    if (rc <= 0) {
        /* valid with memory operands only? */
        build(b, rexw, map, op, 0x00, 0, 0);
        rc = dec(&in, b, mode);
        if (rc <= 0 || !(in.flags & PTD_INSN_MODRM))
            return PTD_STEP_SLOW;
    }
    unsigned e = in.iclass << PTD_STEP_CLASS_SHIFT;
    if (in.flags & PTD_INSN_MODRM) {
        e |= PTD_STEP_M;
        /* length with a memory ModRM of no extra bytes (00 000 000) */
        build(b, rexw, map, op, 0x00, 0, 0);
        rc = dec(&in, b, mode);
        if (rc <= 0)
            return PTD_STEP_SLOW;
        rc -= (int)extra(mode, 0x00, 0);
        build(b, rexw, map, op, 0xC0, 0, 0);
        struct ptd_insn r;
        if (dec(&r, b, mode) <= 0)
            e |= PTD_STEP_NOREG;
    } else if (in.flags & PTD_INSN_REL) {
        unsigned ds = (unsigned)rc - at;
        e |= (ds == 1 ? 1u : ds == 2 ? 2u : ds == 4 ? 3u : 0u) << PTD_STEP_REL_SHIFT;
        if (ds != 1 && ds != 2 && ds != 4)
            return PTD_STEP_SLOW;
    }
    unsigned len0 = (unsigned)rc - (rexw ? 1 : 0);
    if (len0 > PTD_STEP_LEN)
        return PTD_STEP_SLOW;
    e |= len0;
    /* the same entry with and without REX (R, X, B; W as the context) */
    static const unsigned rex_nw[] = { 0, 0x40, 0x41, 0x42, 0x44, 0x47 };
    static const unsigned rex_w[] = { 0x48, 0x49, 0x4C, 0x4F };
    if (ctx == 2) {
        for (unsigned i = 0; i < sizeof rex_nw / sizeof rex_nw[0]; i++)
            if (!entry_holds(mode, rex_nw[i], map, op, e))
                return PTD_STEP_SLOW;
    } else if (ctx == 3) {
        for (unsigned i = 0; i < sizeof rex_w / sizeof rex_w[0]; i++)
            if (!entry_holds(mode, rex_w[i], map, op, e))
                return PTD_STEP_SLOW;
    } else if (!entry_holds(mode, 0, map, op, e)) {
        return PTD_STEP_SLOW;
    }
    return e;
}

int main(void)
{
    static const char *ctxname[4] = { "16-bit", "32-bit", "64-bit", "64-bit REX.W" };
    unsigned fast = 0;
    printf("/* GENERATED by test/ild/gen_step_table.c from ptd_ild_decode(); do not\n"
           " * edit (make ild-step-table regenerates it, test/ild/step_table.sh checks\n"
           " * it is current). The step table of ptd_ild_step(), decoder/ptd_ild_fast.h:\n"
           " * [map: one-byte, 0F][context: 16, 32, 64, 64 + REX.W][opcode]. */\n"
           "#include \"decoder/ptd_ild_fast.h\"\n\n"
           "const uint16_t ptd_ild_step_table[2][4][256] = {\n");
    for (unsigned map = 0; map < 2; map++) {
        printf("    { /* %s */\n", map ? "0F map" : "one-byte map");
        for (unsigned ctx = 0; ctx < 4; ctx++) {
            printf("        { /* %s */\n", ctxname[ctx]);
            for (unsigned op = 0; op < 256; op++) {
                unsigned e = entry(ctx, map, op);
                fast += !(e & PTD_STEP_SLOW);
                printf("%s0x%04x,%s", op % 8 == 0 ? "            " : " ", e,
                       op % 8 == 7 ? "\n" : "");
            }
            printf("        },\n");
        }
        printf("    },\n");
    }
    printf("};\n");
    fprintf(stderr, "gen_step_table: %u of 2048 entries fast\n", fast);
    return 0;
}
