#include "arch/x86/cpuid_dump.h"

#include <stdbool.h>
#include <string.h>

#include "arch/x86/cpuid_bits.h"
#include "decoder/ptd_num.h"

/* A cursor over one line (without its line terminator). */
struct cur {
    const char *p, *end;
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

static void skip_space(struct cur *c)
{
    while (c->p < c->end && is_space(*c->p))
        c->p++;
}

static bool eat(struct cur *c, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
        return false;
    c->p += n;
    return true;
}

/* "0x" followed by 1..8 hex digits. */
static bool hex32(struct cur *c, uint32_t *v)
{
    if (!eat(c, "0x") && !eat(c, "0X"))
        return false;
    uint32_t x = 0;
    int n = 0, d;
    while (c->p < c->end && (d = ptd_num_hex_digit(*c->p)) >= 0) {
        if (++n > 8)
            return false;
        x = x << 4 | (uint32_t)d;
        c->p++;
    }
    *v = x;
    return n > 0;
}

static bool parse_leaf_line(struct cur *c, struct x86_cpuid_dump_entry *e)
{
    static const char *const names[4] = { "eax=", "ebx=", "ecx=", "edx=" };
    uint32_t r[4];

    if (!hex32(c, &e->leaf))
        return false;
    if (c->p >= c->end || !is_space(*c->p))
        return false;
    skip_space(c);
    if (!hex32(c, &e->subleaf) || !eat(c, ":"))
        return false;
    for (int i = 0; i < 4; i++) {
        if (c->p >= c->end || !is_space(*c->p))
            return false;
        skip_space(c);
        if (!eat(c, names[i]) || !hex32(c, &r[i]))
            return false;
    }
    skip_space(c);
    if (c->p != c->end)
        return false;
    e->regs.eax = r[0];
    e->regs.ebx = r[1];
    e->regs.ecx = r[2];
    e->regs.edx = r[3];
    return true;
}

/* Exactly 8 hex digits, no prefix (AIDA64 / InstLatx64 layout). */
static bool hex8(struct cur *c, uint32_t *v)
{
    uint32_t x = 0;
    int d;
    if (c->end - c->p < 8)
        return false;
    for (int i = 0; i < 8; i++) {
        if ((d = ptd_num_hex_digit(c->p[i])) < 0)
            return false;
        x = x << 4 | (uint32_t)d;
    }
    c->p += 8;
    *v = x;
    return true;
}

/* "<8 hex digits>:" after "CPUID ": a register line, not a heading such
 * as "CPUID dump of ...". */
static bool looks_aida(struct cur c)
{
    uint32_t v;
    skip_space(&c);
    return hex8(&c, &v) && c.p < c.end && *c.p == ':';
}

/* How many entries of `leaf` are stored: the subleaf of the next one in the
 * AIDA64 layout, which lists subleaves in order without numbering them. */
static uint32_t count_leaf(const struct x86_cpuid_dump *d, uint32_t leaf)
{
    uint32_t n = 0;
    for (size_t i = 0; i < d->count; i++)
        n += d->entry[i].leaf == leaf;
    return n;
}

/* "CPUID 00000014: 00000001-0000000F-00000007-00000000 [SL 00]": the
 * register dumps of AIDA64, as published in InstLatx64's collection. The
 * subleaf is "[SL nn]" when present, else the position among lines of the
 * same leaf. Other bracketed notes are ignored. */
static bool parse_aida_line(struct cur *c, const struct x86_cpuid_dump *d,
                            struct x86_cpuid_dump_entry *e)
{
    uint32_t r[4];

    skip_space(c);
    if (!hex8(c, &e->leaf) || !eat(c, ":"))
        return false;
    skip_space(c);
    for (int i = 0; i < 4; i++)
        if ((i && !eat(c, "-")) || !hex8(c, &r[i]))
            return false;
    e->regs = (x86_cpuid_regs){ r[0], r[1], r[2], r[3] };
    e->subleaf = count_leaf(d, e->leaf);
    for (;;) {
        skip_space(c);
        if (c->p == c->end)
            return true;
        if (!eat(c, "["))
            return false;
        if (eat(c, "SL ")) {
            uint32_t sl = 0;
            int n = 0, dd;
            while (c->p < c->end && (dd = ptd_num_hex_digit(*c->p)) >= 0 && n < 8) {
                sl = sl << 4 | (uint32_t)dd;
                c->p++;
                n++;
            }
            if (!n)
                return false;
            e->subleaf = sl;
        }
        const char *close = memchr(c->p, ']', (size_t)(c->end - c->p));
        if (!close)
            return false;
        c->p = close + 1;
    }
}

int x86_cpuid_dump_parse(struct x86_cpuid_dump *dump, const char *buf, size_t len, unsigned *line)
{
    unsigned lineno = 0;

    if (line)
        *line = 0;
    if (!dump || (!buf && len))
        return X86_CPUID_DUMP_E_ARG;
    dump->count = 0;

    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *next = eol ? eol + 1 : end;
        struct cur c = { p, eol ? eol : end };
        lineno++;
        p = next;
        if (c.end > c.p && c.end[-1] == '\r')
            c.end--;
        skip_space(&c);

        struct x86_cpuid_dump_entry e;
        bool ok;
        if (eat(&c, "CPUID ") && looks_aida(c)) {
            ok = parse_aida_line(&c, dump, &e);
            /* leaf 0 again: the next CPU of a multi-CPU dump */
            if (ok && e.leaf == 0 && x86_cpuid_dump_find(dump, 0, 0))
                break;
        } else if (eat(&c, "CPU")) {
            /* "CPU:" or "CPU n:" starts a CPU; keep only the first. */
            if (dump->count > 0)
                break;
            continue;
        } else if (c.end - c.p >= 2 && c.p[0] == '0' && (c.p[1] == 'x' || c.p[1] == 'X')) {
            ok = parse_leaf_line(&c, &e);
        } else {
            continue; /* a line of another kind: tolerated */
        }
        if (!ok) {
            if (line)
                *line = lineno;
            return X86_CPUID_DUMP_E_SYNTAX;
        }
        if (x86_cpuid_dump_find(dump, e.leaf, e.subleaf)) {
            if (line)
                *line = lineno;
            return X86_CPUID_DUMP_E_DUP;
        }
        if (dump->count >= X86_CPUID_DUMP_MAX) {
            if (line)
                *line = lineno;
            return X86_CPUID_DUMP_E_FULL;
        }
        dump->entry[dump->count++] = e;
    }
    if (dump->count == 0)
        return X86_CPUID_DUMP_E_EMPTY;
    return X86_CPUID_DUMP_OK;
}

const char *x86_cpuid_dump_strerror(int err)
{
    switch (err) {
    case X86_CPUID_DUMP_OK: return "ok";
    case X86_CPUID_DUMP_E_SYNTAX:
        return "malformed leaf line (expected '0x<leaf> 0x<subleaf>: "
               "eax=0x.. ebx=0x.. ecx=0x.. edx=0x..')";
    case X86_CPUID_DUMP_E_FULL: return "too many leaves";
    case X86_CPUID_DUMP_E_DUP: return "leaf/subleaf given twice";
    case X86_CPUID_DUMP_E_EMPTY: return "no CPUID leaf lines (not a `cpuid -r` dump?)";
    case X86_CPUID_DUMP_E_ARG: return "invalid argument";
    }
    return "unknown error";
}

const x86_cpuid_regs *x86_cpuid_dump_find(const struct x86_cpuid_dump *dump, uint32_t leaf,
                                          uint32_t subleaf)
{
    for (size_t i = 0; i < dump->count; i++)
        if (dump->entry[i].leaf == leaf && dump->entry[i].subleaf == subleaf)
            return &dump->entry[i].regs;
    return NULL;
}

/* Leaves whose output depends on ECX (SDM Vol. 2A, CPUID, "Initial EAX
 * value" column with "ECX" inputs); a subleaf not recorded for them is an
 * invalid subleaf, which the CPU answers with zeros. */
static bool leaf_is_indexed(uint32_t leaf)
{
    switch (leaf) {
    case 0x04:
    case 0x07:
    case 0x0b:
    case 0x0d:
    case 0x0f:
    case 0x10:
    case 0x12:
    case 0x14:
    case 0x17:
    case 0x18:
    case 0x1b:
    case 0x1d:
    case 0x1e:
    case 0x1f:
    case 0x20:
    case 0x23:
    case 0x24:
    case 0x8000001d:
    case 0x80000020:
    case 0x80000026: return true;
    }
    return false;
}

static bool dump_is_intel(const struct x86_cpuid_dump *d)
{
    const x86_cpuid_regs *r = x86_cpuid_dump_find(d, X86_CPUID_LEAF_VENDOR, 0);
    /* "GenuineIntel" in EBX, EDX, ECX order */
    return r && r->ebx == 0x756e6547u && r->edx == 0x49656e69u && r->ecx == 0x6c65746eu;
}

void x86_cpuid_dump_query(void *ctx, uint32_t leaf, uint32_t subleaf, x86_cpuid_regs *out)
{
    const struct x86_cpuid_dump *d = ctx;
    const x86_cpuid_regs *r;

    memset(out, 0, sizeof(*out));
    if (!d)
        return;

    const x86_cpuid_regs *l0 = x86_cpuid_dump_find(d, X86_CPUID_LEAF_VENDOR, 0);
    const x86_cpuid_regs *e0 = x86_cpuid_dump_find(d, X86_CPUID_LEAF_EXT_MAX, 0);
    bool basic = leaf < X86_CPUID_HV_BASE;
    bool ext = leaf >= X86_CPUID_EXT_BASE && leaf < X86_CPUID_EXT_BASE + 0x10000u;
    bool above = (basic && l0 && leaf > l0->eax) ||
                 (ext && leaf != X86_CPUID_LEAF_EXT_MAX && (!e0 || leaf > e0->eax));
    if (above) {
        if (!dump_is_intel(d) || !l0)
            return;
        leaf = l0->eax;
    }

    r = x86_cpuid_dump_find(d, leaf, subleaf);
    if (!r && subleaf != 0 && !leaf_is_indexed(leaf))
        r = x86_cpuid_dump_find(d, leaf, 0);
    if (r)
        *out = *r;
}
