#include "decoder/ptd_opts.h"
#include "decoder/ptd_fmt.h"
#include "decoder/ptd_num.h"

static const struct {
    const char *name;
    uint32_t flag;
} dump_flags[] = {
    /* clang-format off */
    { "--no-sync", PTD_FMT_NO_SYNC },   { "--quiet", PTD_FMT_QUIET },
    { "--no-pad", PTD_FMT_NO_PAD },     { "--no-timing", PTD_FMT_NO_TIMING },
    { "--no-cyc", PTD_FMT_NO_CYC },     { "--no-offset", PTD_FMT_NO_OFFSET },
    { "--raw", PTD_FMT_RAW },           { "--lastip", PTD_FMT_LASTIP },
    /* clang-format on */
    { "--exec-mode", PTD_FMT_EXEC_MODE },
    { "--libipt-2.0", PTD_FMT_LIBIPT20 },
    { "--time", PTD_FMT_TIME },
    { "--tcal", PTD_FMT_TCAL },
    { "--time-delta", PTD_FMT_TIME_DELTA },
    { "--no-tcal", PTD_FMT_NO_TCAL },
    { "--no-wall-clock", PTD_FMT_NO_WALL_CLOCK },
    { "--keep-tcal-on-ovf", PTD_FMT_KEEP_TCAL_ON_OVF },
    { "--libipt-pwre", PTD_FMT_LIBIPT_PWRE },
};
#define DUMP_FLAG_COUNT (sizeof dump_flags / sizeof dump_flags[0])

static bool same(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

bool ptd_opts_dump_flag(const char *name, uint32_t *flag)
{
    for (unsigned i = 0; i < DUMP_FLAG_COUNT; i++) {
        if (same(name, dump_flags[i].name)) {
            *flag = dump_flags[i].flag;
            return true;
        }
    }
    return false;
}

const char *ptd_opts_dump_flag_name(unsigned i)
{
    return i < DUMP_FLAG_COUNT ? dump_flags[i].name : 0;
}

bool ptd_opts_parse_u64(const char *s, uint64_t *out)
{
    /* ptdump/ptxed read numbers as strtoull's base 0; the size suffixes
     * K/M/G are the rest of ptboot's (decoder/ptd_num.h: one parser) */
    return ptd_num_parse(s, PTD_NUM_AUTO, out);
}

/* Parses the number in s[0..len) (not NUL-terminated) into *out. */
static bool parse_u64_n(const char *s, unsigned len, uint64_t *out)
{
    char tmp[24];
    if (len == 0 || len >= sizeof tmp)
        return false;
    for (unsigned i = 0; i < len; i++)
        tmp[i] = s[i];
    tmp[len] = '\0';
    return ptd_opts_parse_u64(tmp, out);
}

/* Hex digits only (an optional 0x), at most 16 of them. */
static bool parse_hex_n(const char *s, unsigned len, uint64_t *out)
{
    if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        len -= 2;
    }
    return ptd_num_parse_hex(s, len, 16, out);
}

bool ptd_opts_parse_filter(const char *s, uint64_t *lo, uint64_t *hi)
{
    unsigned dash = 0, len = 0;
    for (; s[len]; len++)
        if (s[len] == '-' && !dash)
            dash = len;
    if (!dash || !parse_hex_n(s, dash, lo) || !parse_hex_n(s + dash + 1, len - dash - 1, hi))
        return false;
    return *lo <= *hi;
}

bool ptd_opts_parse_cpu(const char *s, bool *has_cpu, unsigned *family, unsigned *model)
{
    *has_cpu = false;
    *family = 0;
    *model = 0;
    if (same(s, "none"))
        return true;
    uint64_t part[3];
    unsigned n = 0, start = 0, i = 0;
    for (;; i++) {
        if (s[i] != '/' && s[i] != '\0')
            continue;
        if (n == 3 || !parse_u64_n(s + start, i - start, &part[n]))
            return false;
        n++;
        if (s[i] == '\0')
            break;
        start = i + 1;
    }
    if (n < 2 || part[0] > 0xffff || part[1] > 0xff || (n == 3 && part[2] > 0xff))
        return false;
    *family = (unsigned)part[0];
    *model = (unsigned)part[1];
    *has_cpu = true;
    return true;
}

void ptd_opts_split_range(char *name, uint64_t *from, uint64_t *to, bool *has_to)
{
    *from = 0;
    *to = 0;
    *has_to = false;
    char *colon = 0;
    for (char *p = name; *p; p++)
        if (*p == ':')
            colon = p;
    if (!colon || !colon[1])
        return;
    /* Split "a-b" at the first '-' without writing until both parse. */
    char *dash = 0;
    for (char *p = colon + 1; *p; p++)
        if (*p == '-') {
            dash = p;
            break;
        }
    uint64_t a, b = 0;
    if (dash) {
        *dash = '\0';
        bool ok = ptd_opts_parse_u64(colon + 1, &a) && ptd_opts_parse_u64(dash + 1, &b);
        *dash = '-';
        if (!ok)
            return;
        *has_to = true;
    } else if (!ptd_opts_parse_u64(colon + 1, &a)) {
        return;
    }
    *from = a;
    *to = b;
    *colon = '\0';
}

/* ptdump's numeric timing options and the largest value each takes. */
static const struct {
    const char *name;
    uint64_t max;
} dump_values[] = {
    { "--mtc-freq", PTD_TIME_MTC_FREQ_MAX }, /* IA32_RTIT_CTL.MTCFreq is 4 bits */
    { "--nom-freq", 0xff },
    { "--cpuid-0x15.eax", 0xffffffffu },
    { "--cpuid-0x15.ebx", 0xffffffffu },
};
#define DUMP_VALUE_COUNT (sizeof dump_values / sizeof dump_values[0])

int ptd_opts_dump_value(const char *name, const char *arg, struct ptd_fmt_options *opt,
                        const char **why)
{
    unsigned i;
    uint64_t v;

    for (i = 0; i < DUMP_VALUE_COUNT && !same(name, dump_values[i].name); i++)
        ;
    if (i == DUMP_VALUE_COUNT)
        return 0;
    /* as ptdump: a following option is a missing argument, not a value */
    if (!arg || !*arg || (arg[0] == '-' && arg[1] == '-')) {
        *why = "missing argument";
        return -1;
    }
    if (!ptd_opts_parse_u64(arg, &v)) {
        *why = "bad argument";
        return -1;
    }
    if (v > dump_values[i].max) {
        *why = "value too big";
        return -1;
    }
    switch (i) {
    case 0: opt->time.mtc_freq = (uint8_t)v; break;
    case 1: opt->time.nom_freq = (uint8_t)v; break;
    case 2: opt->time.cpuid_0x15_eax = (uint32_t)v; break;
    default: opt->time.cpuid_0x15_ebx = (uint32_t)v; break;
    }
    return 1;
}

const char *ptd_opts_dump_value_name(unsigned i)
{
    return i < DUMP_VALUE_COUNT ? dump_values[i].name : 0;
}

void ptd_opts_dump_cpu(struct ptd_fmt_options *opt, bool has_cpu, unsigned family, unsigned model)
{
    opt->has_cpu = has_cpu;
    opt->cpu_family = (uint16_t)family;
    opt->cpu_model = (uint8_t)model;
    opt->errata = 0;
    opt->time.errata = 0;
}

const char *ptd_opts_dump_check(const struct ptd_fmt_options *opt)
{
    if ((opt->flags & PTD_FMT_TIME) && (opt->flags & PTD_FMT_TCAL))
        return "specify either --time or --tcal.";
    return 0;
}

/* ---- flow words ---------------------------------------------------------------- */

enum {
    W_FMT,
    W_FLAGS,
    W_BLOCK,
    W_INSN,
    W_STAT,
    W_STAT_INSN,
    W_STAT_BLOCKS,
    W_BLOCK_DECODER,
    W_CHECK
};

static const struct {
    const char *name;
    uint8_t what;
    uint32_t bits;
} flow_words[] = {
    { "--event:ip", W_FMT, PTD_FMT_FLOW_EVENT_IP },
    { "--offset", W_FMT, PTD_FMT_FLOW_OFFSET },
    { "--quiet", W_FMT, PTD_FMT_FLOW_QUIET },
    { "-q", W_FMT, PTD_FMT_FLOW_QUIET },
    { "--time", W_FMT, PTD_FMT_FLOW_TIME },
    { "--event:time", W_FMT, PTD_FMT_FLOW_EVENT_TIME },
    { "--block:show-blocks", W_FMT, PTD_FMT_FLOW_SHOW_BLOCKS },
    { "--insn-decoder", W_FMT, PTD_FMT_FLOW_INSN },
    { "--block-decoder", W_BLOCK_DECODER, 0 },
    { "--resync-on-error", W_FMT, PTD_FMT_FLOW_RESYNC },
    { "--stat", W_STAT, 0 },
    { "--stat:insn", W_STAT_INSN, 0 },
    { "--stat:blocks", W_STAT_BLOCKS, 0 },
    { "--event:tick", W_FLAGS, PTD_FLOW_F_TICK },
    { "--event:iflags", W_FLAGS, PTD_FLOW_F_IFLAGS },
    { "--libipt-pwre", W_FLAGS, PTD_FLOW_F_PWRE_BIT3 },
    { "--block:end-on-call", W_BLOCK, PTD_FLOW_F_END_ON_CALL },
    { "--block:end-on-jump", W_BLOCK, PTD_FLOW_F_END_ON_JUMP },
    { "--block:keep-tcal-on-ovf", W_BLOCK, PTD_FLOW_F_KEEP_TCAL_ON_OVF },
    { "--insn:keep-tcal-on-ovf", W_INSN, PTD_FLOW_F_KEEP_TCAL_ON_OVF },
    { "--check", W_CHECK, 0 },
};
#define FLOW_WORD_COUNT (sizeof flow_words / sizeof flow_words[0])

bool ptd_opts_flow_word(struct ptd_flow_opts *o, const char *name)
{
    unsigned i;
    for (i = 0; i < FLOW_WORD_COUNT && !same(name, flow_words[i].name); i++)
        ;
    if (i == FLOW_WORD_COUNT)
        return false;
    switch (flow_words[i].what) {
    case W_FMT: o->fmt |= flow_words[i].bits; break;
    case W_FLAGS: o->flags |= flow_words[i].bits; break;
    case W_BLOCK: o->block_flags |= flow_words[i].bits; break;
    case W_INSN: o->insn_flags |= flow_words[i].bits; break;
    case W_STAT: o->stat = 1; break;
    case W_STAT_INSN: o->stat = o->stat_insn = 1; break;
    case W_STAT_BLOCKS: o->stat = o->stat_blocks = 1; break;
    case W_BLOCK_DECODER: o->fmt &= ~(uint32_t)PTD_FMT_FLOW_INSN; break;
    default: break;
    }
    if (o->stat)
        o->fmt |= PTD_FMT_FLOW_STAT;
    return true;
}

const char *ptd_opts_flow_word_name(unsigned i)
{
    return i < FLOW_WORD_COUNT ? flow_words[i].name : 0;
}

unsigned ptd_opts_flow_flags(const struct ptd_flow_opts *o)
{
    return o->flags | ((o->fmt & PTD_FMT_FLOW_INSN) ? o->insn_flags : o->block_flags);
}

void ptd_opts_flow_stats(const struct ptd_flow_opts *o, bool *insn, bool *blocks)
{
    *insn = o->stat_insn;
    *blocks = o->stat_blocks;
    if (o->stat && !o->stat_insn && !o->stat_blocks) {
        *insn = true;
        *blocks = !(o->fmt & PTD_FMT_FLOW_INSN);
    }
}
