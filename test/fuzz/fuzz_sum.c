/* libFuzzer target over the decode summary (decoder/ptd_sum.h) on
 * arbitrary trace + code, laid out as test/fuzz/fuzz_flow.c's input: byte 0
 * selects the configuration, byte 1 the summary's (arena size from none to
 * 64 KiB at an odd address, small top/last/stack/tree limits, sections
 * left out), the next 1024 bytes (or fewer) are the code, mapped at 0x1000
 * and 0x400000 (two modules), the rest is the trace. The driver must end
 * (its budget bounds the work), stay inside its arena and the code it was
 * given (ASan/UBSan), write whole lines shorter than PTD_SUM_LINE_MAX and
 * no more text than ptd_sum_text_bound() promises, and count every
 * instruction it saw in a block. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_sum.h"
#include "test/fuzz/fuzz_code.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
    uint64_t lines, bytes;
};

static void line(void *ctx, const char *l, size_t len)
{
    struct out *o = ctx;
    if (len >= PTD_SUM_LINE_MAX || strlen(l) != len || memchr(l, '\n', len))
        abort();
    o->lines++;
    o->bytes += len + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct ptd_flow f;
    static struct ptd_sum s;
    static uint64_t arena_words[(1u << 16) / 8 + 1];
    static const size_t arena_sizes[] = { 0, 100, 4096, 1u << 16 };
    static const struct ptd_sum_module mods[] = {
        { 0x1000, 0x200, "low" },
        { 0x1200, FUZZ_CODE_MAX, "a-module-name-longer-than-forty-characters-is-cut" },
        { 0x400000, FUZZ_CODE_MAX, "high" },
    };
    struct ptd_flow_config cfg;
    struct ptd_sum_config sc;
    struct fuzz_code code;
    struct out o = { 0, 0 };

    if (size < 2)
        return 0;
    unsigned sel = data[0], ssel = data[1];
    data += 2;
    size -= 2;
    fuzz_code_flow_config(&cfg, &code, data, size, sel);
    if (sel & 4) {
        cfg.nfilter = 1;
        cfg.filter_lo[0] = 0x1000;
        cfg.filter_hi[0] = 0x1fff;
        cfg.errata = PTD_ERRATUM_BDM64 | PTD_ERRATUM_SKL014;
    }
    if (ptd_flow_init(&f, &cfg) < 0)
        abort();

    memset(&sc, 0, sizeof(sc));
    sc.modules = mods;
    sc.nmodules = (sel >> 3) % 4;
    /* odd addresses too: "any alignment works" */
    sc.arena = (uint8_t *)arena_words + ((ssel & 4) ? 1 : 0);
    sc.arena_size = arena_sizes[ssel & 3];
    sc.line = line;
    sc.ctx = &o;
    if (ssel & 8) {
        sc.top = 1 + (ssel >> 4) % 4;
        sc.last = 1 + (ssel >> 5) % 3;
        sc.stack_depth = 1 + (ssel >> 4) % 8;
        sc.tree_depth = 1 + (ssel >> 5) % 4;
        sc.tree_lines = 1 + (ssel >> 4) % 16;
        sc.tree_permille = (ssel & 0x10) ? 1000 : 1;
    }
    sc.flags = (sel >> 5) & 7; /* NO_TREE, NO_BLOCKS, NO_LAST */
    if (ssel & 0x80)
        sc.flags |= PTD_SUM_F_TREE_ALL;

    ptd_sum_init(&s, &sc);
    /* a code loop with no branch decodes forever: the caller's budget */
    uint64_t budget = 64 * (cfg.size + 16), used = 0;
    while (used < budget && ptd_sum_decode(&s, &f, 1024) > 0)
        used += 1024;
    ptd_sum_print(&s);
    const struct ptd_sum_stats *st = ptd_sum_stats(&s);
    if (st->lines != o.lines || st->text_bytes != o.bytes || o.bytes > ptd_sum_text_bound(&sc))
        abort();
    if (st->bytes != cfg.size || st->bytes_skipped > cfg.size || st->returns > st->calls + st->irqs)
        abort();
    return 0;
}
