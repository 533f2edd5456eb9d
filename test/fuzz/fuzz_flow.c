/* libFuzzer target over trace + code for the query and flow layers.
 * Input: byte 0 selects the configuration (mode before MODE.Exec,
 * instruction vs block API, caches; with blocks, 64 adds the IPs inside
 * each block, 128 takes the counting path ptd_flow_run_blocks instead);
 * the next 1024 bytes (or fewer) are the
 * code, mapped at 0x1000 and again at 0x400000 (where generated traces
 * point); the rest is the trace. The decoder must end (every call bounded,
 * the loop bounded by the input), never read code outside what the
 * callback gave, never touch memory it does not own (ASan/UBSan), and
 * report errors with offsets inside the trace. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_flow.h"
#include "decoder/ptd_flow_ips.h"
#include "test/fuzz/fuzz_code.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct ptd_flow f;
    static uint64_t cache[512];
    /* room for the block cache on the code's two mappings (fuzz_code.h) */
    static uint64_t bcache[PTD_FLOW_BCACHE_BYTES(2048, 2) / 8 + 1];
    static uint64_t ips[PTD_FLOW_BLOCK_MAX];
    struct ptd_flow_config cfg;
    struct fuzz_code code;
    unsigned sel;
    size_t steps = 0, limit;

    if (size < 1)
        return 0;
    sel = data[0];
    data++;
    size--;
    fuzz_code_flow_config(&cfg, &code, data, size, sel);
    if (sel & 4) {
        cfg.cache = cache;
        cfg.cache_size = sizeof(cache);
    }
    if (sel & 8) {
        cfg.bcache = bcache;
        cfg.bcache_size = sizeof(bcache);
    }
    if (sel & 32) {
        cfg.nfilter = 1;
        cfg.filter_lo[0] = 0x1000;
        cfg.filter_hi[0] = 0x1fff;
        cfg.errata = PTD_ERRATUM_BDM64 | PTD_ERRATUM_SKL014;
    }
    if (ptd_flow_init(&f, &cfg) < 0)
        abort();
    /* a code loop with no branch decodes forever: the caller's budget */
    limit = 64 * (cfg.size + 16);
    for (unsigned rounds = 0; rounds <= cfg.size + 1; rounds++) {
        int st = ptd_flow_sync_forward(&f);
        if (st == -PTD_ERR_EOS)
            break;
        if (st < 0)
            continue;
        for (;;) {
            struct ptd_event ev;
            while (st >= 0 && (st & PTD_ST_EVENT))
                st = ptd_flow_event(&f, &ev);
            if (st < 0 || (st & PTD_ST_EOS) || ++steps > limit)
                break;
            if ((sel & 16) && (sel & 128)) {
                /* the counting path (few blocks per call: bounded here) */
                struct ptd_flow_run r = { 0, 0, 0, PTD_FLOW_ICLASS_ERROR, { 0 } };
                st = ptd_flow_run_blocks(&f, &r, 4);
                if (r.blocks < 1 || r.blocks > 4 || r.insns > 4u * PTD_FLOW_BLOCK_MAX)
                    abort();
            } else if (sel & 16) {
                struct ptd_flow_block b;
                st = ptd_flow_next_block(&f, &b);
                if (b.ninsn > PTD_FLOW_BLOCK_MAX)
                    abort();
                if (b.ninsn && (sel & 64)) {
                    /* the IPs inside the block, as the --no-inst lines
                     * need them: from the same code, ending at last_ip */
                    int n = ptd_flow_block_ips(&f, &b, ips, PTD_FLOW_BLOCK_MAX);
                    if (n >= 0 && (n != (int)b.ninsn || ips[0] != b.ip || ips[n - 1] != b.last_ip))
                        abort();
                }
            } else {
                struct ptd_flow_insn in;
                st = ptd_flow_next(&f, &in);
                if (in.iclass != PTD_FLOW_ICLASS_ERROR &&
                    (in.size == 0 || in.size > PTD_ILD_MAX_LEN))
                    abort();
            }
            if (st < 0)
                break;
        }
        if (ptd_flow_offset(&f) > cfg.size)
            abort();
        if (st == -PTD_ERR_EOS || steps > limit || (st >= 0 && (st & PTD_ST_EOS)))
            break;
    }
    return 0;
}
