#include "arch/x86/rtit_options.h"

#include <stdio.h>
#include <string.h>

#include "arch/x86/rtit_regs.h"
#include "arch/x86/rtit_topa.h"
#include "decoder/ptd_num.h"

int rtit_parse_u64(const char *s, uint64_t *out, bool suffix)
{
    /* one parser for every command (decoder/ptd_num.h): sizes and counts
	 * alike take K/M/G, so suffix no longer narrows what is read */
    (void)suffix;
    return ptd_num_parse(s, PTD_NUM_DEC_HEX, out) ? 0 : -1;
}

static int parse_small(const char *s, unsigned *out)
{
    uint64_t v;
    if (rtit_parse_u64(s, &v, false) || v > 0xffffffffu)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* "N:START:END" (with_cfg: "N:CFG:START:END"), fields split at ':'. */
static int parse_range(const char *s, bool with_cfg, unsigned *n, unsigned *cfg, uint64_t *start,
                       uint64_t *end)
{
    char buf[96], *f[4];
    int want = with_cfg ? 4 : 3, got = 0;
    size_t len = strlen(s);

    if (len >= sizeof(buf))
        return -1;
    memcpy(buf, s, len + 1);
    char *p = buf;
    for (;;) {
        if (got == 4)
            return -1;
        f[got++] = p;
        char *colon = strchr(p, ':');
        if (!colon)
            break;
        *colon = '\0';
        p = colon + 1;
    }
    if (got != want || parse_small(f[0], n) || *n >= RTIT_MAX_RANGES)
        return -1;
    if (with_cfg && parse_small(f[1], cfg))
        return -1;
    if (rtit_parse_u64(f[want - 2], start, false) || rtit_parse_u64(f[want - 1], end, false))
        return -1;
    return 0;
}

struct option_def {
    const char *name;
    int takes_value;
};

static const struct option_def options[] = {
    { "output", 1 },      { "regions", 1 },     { "region-size", 1 },
    { "mode", 1 },        { "single-size", 1 }, { "buffer-base", 1 },
    { "table-base", 1 },  { "user", 0 },        { "no-os", 0 },
    { "no-branch", 0 },   { "no-tsc", 0 },      { "dis-retc", 0 },
    { "mtc", 1 },         { "cyc", 1 },         { "psb", 1 },
    { "ptwrite", 0 },     { "fup-on-ptw", 0 },  { "power-events", 0 },
    { "event-trace", 0 }, { "dis-tnt", 0 },     { "inject-psb-pmi", 0 },
    { "fabric", 0 },      { "cr3", 1 },         { "filter", 1 },
    { "trace-stop", 1 },  { "range-cfg", 1 },
};

int rtit_option_takes_value(const char *name)
{
    for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
        if (strcmp(options[i].name, name) == 0)
            return options[i].takes_value;
    return -1;
}

static int fail(char *err, size_t errlen, const char *name, const char *value, const char *why)
{
    if (errlen)
        snprintf(err, errlen, "%s%s%s: %s", name, value ? "=" : "", value ? value : "", why);
    return -1;
}

/* A range named twice: one ADDRn pair cannot hold both, and keeping the
 * last would drop the first silently. Names the earlier setting. */
static int fail_duplicate(const struct rtit_config *c, unsigned n, char *err, size_t errlen,
                          const char *name, const char *value)
{
    const struct rtit_addr_range *r = &c->range[n];
    char why[128];
    if (r->cfg == RTIT_ADDR_CFG_FILTER || r->cfg == RTIT_ADDR_CFG_STOP)
        snprintf(why, sizeof(why),
                 "range %u given twice (range-duplicate): already %s=%u:0x%llx:0x%llx", n,
                 r->cfg == RTIT_ADDR_CFG_FILTER ? "filter" : "trace-stop", n,
                 (unsigned long long)r->start, (unsigned long long)r->end);
    else
        snprintf(why, sizeof(why),
                 "range %u given twice (range-duplicate): already range-cfg=%u:%u:0x%llx:0x%llx", n,
                 n, r->cfg, (unsigned long long)r->start, (unsigned long long)r->end);
    return fail(err, errlen, name, value, why);
}

int rtit_option_apply(struct rtit_config *c, const char *name, const char *value, char *err,
                      size_t errlen)
{
    int kind = rtit_option_takes_value(name);
    uint64_t v;
    unsigned n, cfg = 0;

    if (errlen)
        err[0] = '\0';
    if (kind < 0)
        return fail(err, errlen, name, NULL, "unknown option");
    if (kind == 1 && (!value || !*value))
        return fail(err, errlen, name, NULL, "needs a value");
    if (kind == 0 && value)
        return fail(err, errlen, name, value, "takes no value");

#define IS(s) (strcmp(name, s) == 0)
    if (IS("output")) {
        if (strcmp(value, "topa") == 0)
            c->output = RTIT_OUTPUT_TOPA;
        else if (strcmp(value, "single") == 0)
            c->output = RTIT_OUTPUT_SINGLE;
        else
            return fail(err, errlen, name, value, "expected topa or single");
    } else if (IS("mode")) {
        if (strcmp(value, "ring") == 0)
            c->when_full = RTIT_FULL_RING;
        else if (strcmp(value, "stop") == 0)
            c->when_full = RTIT_FULL_STOP;
        else
            return fail(err, errlen, name, value, "expected ring or stop");
    } else if (IS("regions")) {
        if (parse_small(value, &c->regions))
            return fail(err, errlen, name, value, "expected a number");
    } else if (IS("region-size")) {
        unsigned code;
        if (rtit_parse_u64(value, &v, true))
            return fail(err, errlen, name, value, "expected a size");
        for (code = 0; code <= RTIT_TOPA_MAX_SIZE_CODE; code++)
            if (RTIT_TOPA_REGION_BYTES(code) == v)
                break;
        if (code > RTIT_TOPA_MAX_SIZE_CODE)
            return fail(err, errlen, name, value, "a ToPA region is 4K, 8K, ... or 128M");
        c->region_size_code = code;
    } else if (IS("single-size")) {
        if (rtit_parse_u64(value, &c->single_size, true))
            return fail(err, errlen, name, value, "expected a size");
    } else if (IS("buffer-base")) {
        if (rtit_parse_u64(value, &c->buffer_phys, false))
            return fail(err, errlen, name, value, "expected an address");
    } else if (IS("table-base")) {
        if (rtit_parse_u64(value, &c->table_phys, false))
            return fail(err, errlen, name, value, "expected an address");
    } else if (IS("mtc")) {
        if (parse_small(value, &c->mtc_freq))
            return fail(err, errlen, name, value, "expected a number");
        c->mtc_en = true;
    } else if (IS("cyc")) {
        if (parse_small(value, &c->cyc_thresh))
            return fail(err, errlen, name, value, "expected a number");
        c->cyc_en = true;
    } else if (IS("psb")) {
        if (parse_small(value, &c->psb_freq))
            return fail(err, errlen, name, value, "expected a number");
    } else if (IS("cr3")) {
        if (rtit_parse_u64(value, &c->cr3, false))
            return fail(err, errlen, name, value, "expected a number");
        c->cr3_filter = true;
    } else if (IS("filter") || IS("trace-stop") || IS("range-cfg")) {
        uint64_t s, e;
        bool with_cfg = IS("range-cfg");
        if (parse_range(value, with_cfg, &n, &cfg, &s, &e))
            return fail(err, errlen, name, value,
                        with_cfg ? "expected N:CFG:START:END, N 0..3"
                                 : "expected N:START:END, N 0..3");
        if (c->ranges_named & (1u << n))
            return fail_duplicate(c, n, err, errlen, name, value);
        c->range[n].cfg = with_cfg ? cfg : IS("filter") ? RTIT_ADDR_CFG_FILTER : RTIT_ADDR_CFG_STOP;
        c->range[n].start = s;
        c->range[n].end = e;
        c->ranges_named |= 1u << n;
    } else if (IS("user")) {
        c->user = true;
    } else if (IS("no-os")) {
        c->os = false;
    } else if (IS("no-branch")) {
        c->branch_en = false;
    } else if (IS("no-tsc")) {
        c->tsc_en = false;
    } else if (IS("dis-retc")) {
        c->dis_retc = true;
    } else if (IS("ptwrite")) {
        c->ptw_en = true;
    } else if (IS("fup-on-ptw")) {
        c->fup_on_ptw = true;
    } else if (IS("power-events")) {
        c->pwr_evt_en = true;
    } else if (IS("event-trace")) {
        c->event_en = true;
    } else if (IS("dis-tnt")) {
        c->dis_tnt = true;
    } else if (IS("inject-psb-pmi")) {
        c->inject_psb_pmi = true;
    } else if (IS("fabric")) {
        c->fabric_en = true;
    }
#undef IS
    return 0;
}
