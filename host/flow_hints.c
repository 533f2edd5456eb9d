/* Hints against silent garbage: see flow_hints.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_pkt.h"
#include "host/flow_hints.h"

#define HINT_IPS         4          /* first IPs named */
#define HINT_SECTIONS    4          /* sections named */
#define HINT_TRACE_BYTES (1u << 20) /* the first IPs come from the first MiB */

void flow_hint_no_code(const struct flow_opts *fo, const char *prog, FILE *to)
{
    if (fo->img.nsegs)
        return;
    fprintf(to,
            "%s: no code given: --pages PREFIX, --raw FILE:BASE, --elf FILE, --pe FILE or "
            "--capture DIR "
            "(every instruction would be 'no memory mapped')\n",
            prog);
}

/* The first distinct IPs of the trace's TIP, TIP.PGE and FUP packets. */
static size_t first_ips(const char *path, uint64_t *ips, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    uint8_t *buf = malloc(HINT_TRACE_BYTES);
    size_t len = buf ? fread(buf, 1, HINT_TRACE_BYTES, f) : 0;
    fclose(f);
    size_t n = 0;
    struct ptd_pkt_decoder d;
    struct ptd_last_ip last;
    ptd_last_ip_init(&last);
    if (buf && ptd_pkt_init(&d, buf, len) == 0 && ptd_pkt_sync_forward(&d) >= 0) {
        struct ptd_pkt p;
        for (size_t k = 0; n < max && k < len; k++) {
            int r = ptd_pkt_next(&d, &p);
            if (r < 0 &&
                (r == -PTD_ERR_EOS || r == -PTD_ERR_TRUNCATED || ptd_pkt_resync(&d, NULL) < 0))
                break;
            if (r < 0 ||
                (p.kind != PTD_PKT_TIP && p.kind != PTD_PKT_TIP_PGE && p.kind != PTD_PKT_FUP))
                continue;
            uint64_t ip;
            if (ptd_last_ip_update(&last, p.a, p.payload) < 0 || ptd_last_ip_query(&last, &ip) < 0)
                continue;
            /* IP 0: no code at all (a PSB+ with tracing never enabled
             * carries FUP 0), not a section loaded at the wrong base */
            bool seen = ip == 0;
            for (size_t i = 0; i < n; i++)
                seen |= ips[i] == ip;
            if (!seen)
                ips[n++] = ip;
        }
    }
    free(buf);
    return n;
}

static int mapped(const struct flow_opts *fo, uint64_t ip)
{
    for (size_t i = 0; i < fo->img.nsegs; i++)
        if (ip - fo->img.segs[i].base < fo->img.segs[i].size)
            return 1;
    return 0;
}

int flow_hint_outside(const struct flow_opts *fo, uint64_t insns, const char *prog, FILE *to)
{
    uint64_t ips[HINT_IPS];
    if (insns || !fo->img.nsegs || !fo->pt)
        return 0;
    size_t n = first_ips(fo->pt, ips, HINT_IPS);
    for (size_t i = 0; i < n; i++)
        if (mapped(fo, ips[i]))
            return 0;
    if (!n)
        return 0;
    fprintf(to, "%s: no decoded IP falls in a loaded section: sections", prog);
    for (size_t i = 0; i < fo->img.nsegs && i < HINT_SECTIONS; i++)
        fprintf(to, " 0x%llx-0x%llx", (unsigned long long)fo->img.segs[i].base,
                (unsigned long long)(fo->img.segs[i].base + fo->img.segs[i].size - 1));
    if (fo->img.nsegs > HINT_SECTIONS)
        fprintf(to, " (and %zu more)", fo->img.nsegs - HINT_SECTIONS);
    fprintf(to, "; the trace's first IP%s", n == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++)
        fprintf(to, " 0x%llx", (unsigned long long)ips[i]);
    fprintf(
        to,
        " (--raw FILE:BASE reads BASE as ptxed does: 0x hex, else decimal; --filter and --module "
        "take hex)\n");
    return 1;
}
