#include "arch/x86/rtit_plan_report.h"

#include <stdio.h>

#include "arch/x86/rtit_seq.h"
#include "arch/x86/rtit_topa.h"
#include "arch/x86/x86_fmt.h"

/* "operational error" as one word for the machine-readable line */
static const char *kind_word(enum rtit_rule_kind k)
{
    return k == RTIT_KIND_OPERROR ? "operational-error" : rtit_rule_kind_name(k);
}

uint64_t rtit_plan_default_table(const struct rtit_config *cfg, const struct rtit_caps *caps,
                                 bool *moved)
{
    struct rtit_config c = *cfg;
    c.table_phys = RTIT_PLAN_DEFAULT_TABLE;
    if (moved)
        *moved = false;
    if (c.output != RTIT_OUTPUT_TOPA || c.fabric_en || !rtit_topa_tables_overlap_output(&c, caps))
        return RTIT_PLAN_DEFAULT_TABLE;
    if (moved)
        *moved = true;
    uint64_t tlen = rtit_topa_tables_needed(c.regions, caps->topa_multi_entry) *
                    (uint64_t)RTIT_TOPA_TABLE_ALIGN;
    uint64_t below = c.buffer_phys & ~(uint64_t)(RTIT_TOPA_TABLE_ALIGN - 1);
    if (below >= tlen)
        return below - tlen;
    /* no room below: after the last region (4 KiB aligned, since the
	 * regions are) */
    uint64_t end = c.buffer_phys + rtit_config_buffer_bytes(&c);
    return (end + RTIT_TOPA_TABLE_ALIGN - 1) & ~(uint64_t)(RTIT_TOPA_TABLE_ALIGN - 1);
}

void rtit_plan_default_table_note(char *buf, size_t len, const struct rtit_config *cfg,
                                  const struct rtit_caps *caps)
{
    char h1[X86_FMT_HEX64_LEN], h2[X86_FMT_HEX64_LEN];
    size_t tables = rtit_topa_tables_needed(cfg->regions, caps->topa_multi_entry);
    snprintf(buf, len,
             "table-base %s: %u ToPA table(s) at the default %s would overlap the output; placed "
             "%s the buffer",
             x86_fmt_hex64(h1, cfg->table_phys), (unsigned)tables,
             x86_fmt_hex64(h2, RTIT_PLAN_DEFAULT_TABLE),
             cfg->table_phys < cfg->buffer_phys ? "below" : "after");
}

int rtit_plan_report(const struct rtit_config *cfg, const struct rtit_caps *caps,
                     uint64_t *table_mem, size_t table_capacity,
                     void (*emit)(void *ctx, const char *line), void *ctx)
{
    char line[320], h1[X86_FMT_HEX64_LEN];
    struct rtit_violation v;

    if (rtit_check(cfg, caps, &v) != RTIT_RULE_OK) {
        int n = snprintf(line, sizeof(line), "refused %s kind=%s", rtit_rule_name(v.rule),
                         kind_word(rtit_rule_kind(v.rule)));
        if (v.index >= 0 && n > 0 && (size_t)n < sizeof(line))
            snprintf(line + n, sizeof(line) - (size_t)n, " range=%d", v.index);
        emit(ctx, line);
        snprintf(line, sizeof(line), "why: %s", rtit_rule_text(v.rule));
        emit(ctx, line);
        return (int)v.rule;
    }

    if (cfg->output == RTIT_OUTPUT_TOPA && !cfg->fabric_en) {
        struct rtit_topa_layout l;
        int err = rtit_topa_build(&l, cfg, table_mem, table_capacity);
        if (err)
            return err;
        for (size_t t = 0; t < l.tables; t++) {
            for (unsigned i = 0; i < RTIT_TOPA_ENTRIES_PER_TABLE; i++) {
                uint64_t e = table_mem[t * RTIT_TOPA_ENTRIES_PER_TABLE + i];
                snprintf(line, sizeof(line), "topa %u %u %s", (unsigned)t, i, x86_fmt_hex64(h1, e));
                emit(ctx, line);
                if (e & RTIT_TOPA_END)
                    break;
            }
        }
    }

    struct rtit_plan p;
    rtit_plan_start(&p, cfg);
    for (size_t i = 0; i < p.n; i++) {
        snprintf(line, sizeof(line), "wrmsr 0x%x %s", (unsigned)p.w[i].msr,
                 x86_fmt_hex64(h1, p.w[i].value));
        emit(ctx, line);
    }
    return RTIT_RULE_OK;
}

int rtit_plan_report_default(const struct rtit_caps *caps,
                             void (*emit)(void *ctx, const char *line), void *ctx)
{
    uint64_t table[RTIT_TOPA_ENTRIES_PER_TABLE];
    struct rtit_config cfg;

    rtit_config_default(&cfg, caps);
    cfg.buffer_phys = RTIT_PLAN_DEFAULT_BUFFER;
    cfg.table_phys = RTIT_PLAN_DEFAULT_TABLE;
    return rtit_plan_report(&cfg, caps, table, 1, emit, ctx);
}
