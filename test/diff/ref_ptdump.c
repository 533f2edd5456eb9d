/* Reference packet dumper for the tests: libipt's packet decoder
 * (pt_pkt_*) with ptdump's line layout, written with printf from ptdump's
 * documented format (column widths of its print_buffer(): offset 17, raw 33,
 * opcode 10, payload 25, tracking id 5). ptdump itself is not packaged in
 * Debian; `build/ptboot dump` must print exactly what this prints.
 *
 * usage: ref_ptdump [--no-sync] [--no-pad] [--no-timing] [--no-cyc]
 *                   [--no-offset] [--raw] [--lastip] [--exec-mode] [--quiet] FILE */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

static int no_sync, no_pad, no_timing, no_cyc, no_offset, raw, lastip, exec_mode, quiet;
static unsigned cpu_family, cpu_model;

struct buf {
    char offset[17], raw[33], opcode[10];
    char payload[48];
    char tid[5], track[17];
    int skip;
};

/* ptdump's last-IP tracking (libipt-internal pt_last_ip) */
static uint64_t lip;
static int have_ip, suppressed;

static void field(char *f, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void field(char *f, size_t n, const char *fmt, ...)
{
    va_list ap;
    memset(f, 0, n);
    va_start(ap, fmt);
    vsnprintf(f, n, fmt, ap);
    va_end(ap);
}

static uint64_t sext48(uint64_t v)
{
    return (v & (1ull << 47)) ? v | ~0ull << 48 : v & ~(~0ull << 48);
}

static void diag(const char *what, uint64_t off, int err)
{
    if (err)
        printf("[%" PRIx64 ": %s: %s]\n", off, what, pt_errstr(pt_errcode(err)));
    else
        printf("[%" PRIx64 ": %s]\n", off, what);
}

static void ip_payload(struct buf *b, const struct pt_packet_ip *ip, uint64_t off)
{
    switch (ip->ipc) {
    case pt_ipc_suppressed: field(b->payload, 25, "%x: ????????????????", 0); break;
    case pt_ipc_update_16: field(b->payload, 25, "%x: ????????????%04" PRIx64, 1, ip->ip); break;
    case pt_ipc_update_32: field(b->payload, 25, "%x: ????????%08" PRIx64, 2, ip->ip); break;
    case pt_ipc_update_48: field(b->payload, 25, "%x: ????%012" PRIx64, 4, ip->ip); break;
    case pt_ipc_sext_48: field(b->payload, 25, "%x: %016" PRIx64, 3, sext48(ip->ip)); break;
    case pt_ipc_full: field(b->payload, 25, "%x: %016" PRIx64, 6, ip->ip); break;
    }
    if (!lastip)
        return;
    field(b->tid, 5, "ip");
    switch (ip->ipc) {
    case pt_ipc_suppressed: suppressed = 1; break;
    case pt_ipc_update_16:
        lip = (lip & ~0xffffull) | (ip->ip & 0xffff);
        have_ip = 1;
        suppressed = 0;
        break;
    case pt_ipc_update_32:
        lip = (lip & ~0xffffffffull) | (ip->ip & 0xffffffff);
        have_ip = 1;
        suppressed = 0;
        break;
    case pt_ipc_update_48:
        lip = (lip & ~0xffffffffffffull) | (ip->ip & 0xffffffffffffull);
        have_ip = 1;
        suppressed = 0;
        break;
    case pt_ipc_sext_48:
        lip = sext48(ip->ip);
        have_ip = 1;
        suppressed = 0;
        break;
    case pt_ipc_full:
        lip = ip->ip;
        have_ip = 1;
        suppressed = 0;
        break;
    }
    if (!have_ip) {
        field(b->track, 17, "<unavailable>");
        diag("error tracking last-ip", off, -pte_noip);
    } else if (suppressed)
        field(b->track, 17, "<suppressed>");
    else
        field(b->track, 17, "%016" PRIx64, lip);
}

static void print_packet(const struct pt_packet *p, uint64_t off, const uint8_t *bytes)
{
    struct buf b;
    memset(&b, 0, sizeof b);
    field(b.offset, 17, "%016" PRIx64, off);
    if (raw)
        for (int i = 0; i < p->size; i++)
            snprintf(b.raw + 2 * i, sizeof b.raw - 2 * (size_t)i, "%02x", bytes[i]);
    switch (p->type) {
    case ppt_psb: field(b.opcode, 10, "psb"); break;
    case ppt_psbend: field(b.opcode, 10, "psbend"); break;
    case ppt_pad:
        field(b.opcode, 10, "pad");
        b.skip = no_pad;
        break;
    case ppt_ovf: field(b.opcode, 10, "ovf"); break;
    case ppt_stop: field(b.opcode, 10, "stop"); break;
    case ppt_fup:
        field(b.opcode, 10, "fup");
        ip_payload(&b, &p->payload.ip, off);
        break;
    case ppt_tip:
        field(b.opcode, 10, "tip");
        ip_payload(&b, &p->payload.ip, off);
        break;
    case ppt_tip_pge:
        field(b.opcode, 10, "tip.pge");
        ip_payload(&b, &p->payload.ip, off);
        break;
    case ppt_tip_pgd:
        field(b.opcode, 10, "tip.pgd");
        ip_payload(&b, &p->payload.ip, off);
        break;
    case ppt_pip:
        field(b.opcode, 10, "pip");
        field(b.payload, 25, "%" PRIx64 "%s", p->payload.pip.cr3, p->payload.pip.nr ? ", nr" : "");
        field(b.tid, 5, "cr3");
        field(b.track, 17, "%016" PRIx64, p->payload.pip.cr3);
        break;
    case ppt_vmcs:
        field(b.opcode, 10, "vmcs");
        field(b.payload, 25, "%" PRIx64, p->payload.vmcs.base);
        field(b.tid, 5, "vmcs");
        field(b.track, 17, "%016" PRIx64, p->payload.vmcs.base);
        break;
    case ppt_tnt_8:
    case ppt_tnt_64:
        field(b.opcode, 10, p->type == ppt_tnt_8 ? "tnt.8" : "tnt.64");
        for (int i = 0; i < p->payload.tnt.bit_size; i++)
            b.payload[i] =
                (p->payload.tnt.payload >> (p->payload.tnt.bit_size - 1 - i)) & 1 ? '!' : '.';
        break;
    case ppt_mode:
        if (p->payload.mode.leaf == pt_mol_exec) {
            const struct pt_packet_mode_exec *e = &p->payload.mode.bits.exec;
            field(b.opcode, 10, "mode.exec");
            field(b.payload, 25, "%s%s%s", e->csd ? "cs.d" : "", e->csd && e->csl ? ", " : "",
                  e->csl ? "cs.l" : "");
            if (exec_mode) {
                enum pt_exec_mode m = pt_get_exec_mode(e);
                field(b.tid, 5, "em");
                field(b.track, 17, "%s",
                      m == ptem_64bit   ? "64-bit"
                      : m == ptem_32bit ? "32-bit"
                      : m == ptem_16bit ? "16-bit"
                                        : "unknown");
            }
        } else {
            const struct pt_packet_mode_tsx *t = &p->payload.mode.bits.tsx;
            field(b.opcode, 10, "mode.tsx");
            field(b.payload, 25, "%s%s%s", t->intx ? "intx" : "", t->intx && t->abrt ? ", " : "",
                  t->abrt ? "abrt" : "");
        }
        break;
    case ppt_tsc:
        field(b.opcode, 10, "tsc");
        field(b.payload, 25, "%" PRIx64, p->payload.tsc.tsc);
        b.skip = no_timing;
        break;
    case ppt_cbr:
        field(b.opcode, 10, "cbr");
        field(b.payload, 25, "%x", p->payload.cbr.ratio);
        b.skip = no_timing;
        break;
    case ppt_tma:
        field(b.opcode, 10, "tma");
        field(b.payload, 25, "%x, %x", p->payload.tma.ctc, p->payload.tma.fc);
        b.skip = no_timing;
        break;
    case ppt_mtc:
        field(b.opcode, 10, "mtc");
        field(b.payload, 25, "%x", p->payload.mtc.ctc);
        b.skip = no_timing;
        break;
    case ppt_cyc:
        field(b.opcode, 10, "cyc");
        field(b.payload, 25, "%" PRIx64, p->payload.cyc.value);
        b.skip = no_timing || no_cyc;
        break;
    case ppt_mnt:
        field(b.opcode, 10, "mnt");
        field(b.payload, 25, "%" PRIx64, p->payload.mnt.payload);
        break;
    case ppt_exstop:
        field(b.opcode, 10, "exstop");
        field(b.payload, 25, "%s", p->payload.exstop.ip ? "ip" : "");
        break;
    case ppt_mwait:
        field(b.opcode, 10, "mwait");
        field(b.payload, 25, "%08x, %08x", p->payload.mwait.hints, p->payload.mwait.ext);
        break;
    case ppt_pwre:
        field(b.opcode, 10, "pwre");
        field(b.payload, 25, "c%u.%u%s", (p->payload.pwre.state + 1) & 0xf,
              (p->payload.pwre.sub_state + 1) & 0xf, p->payload.pwre.hw ? ", hw" : "");
        break;
    case ppt_pwrx: {
        const struct pt_packet_pwrx *x = &p->payload.pwrx;
        const char *wr = x->interrupt + x->store + x->autonomous != 1 ? "bad"
                         : x->interrupt                               ? "int"
                         : x->store                                   ? " st"
                                                                      : " hw";
        field(b.opcode, 10, "pwrx");
        field(b.payload, 25, "%s: c%u, c%u", wr, (x->last + 1) & 0xf, (x->deepest + 1) & 0xf);
        break;
    }
    case ppt_invalid: field(b.opcode, 10, "<invalid>"); break;
    case ppt_ptw:
        field(b.opcode, 10, "ptw");
        field(b.payload, 25, "%x: %" PRIx64 "%s", p->payload.ptw.plc, p->payload.ptw.payload,
              p->payload.ptw.ip ? ", ip" : "");
        break;
    default: field(b.opcode, 10, "<unknown>"); break;
    }
    if (b.skip || quiet)
        return;
    const char *sep = "";
    if (!no_offset) {
        printf("%-*s", 17, b.offset);
        sep = " ";
    }
    if (b.raw[0]) {
        printf("%s%-*s", sep, 33, b.raw);
        sep = " ";
    }
    if (b.payload[0])
        printf("%s%-*s", sep, 10, b.opcode);
    else
        printf("%s%s", sep, b.opcode);
    if (b.tid[0]) {
        printf(" %-*s", 25, b.payload);
        printf(" %-*s", 5, b.tid);
        printf("%s", b.track);
    } else if (b.payload[0])
        printf(" %s", b.payload);
    printf("\n");
}

int main(int argc, char **argv)
{
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--no-sync"))
            no_sync = 1;
        else if (!strcmp(a, "--no-pad"))
            no_pad = 1;
        else if (!strcmp(a, "--no-timing"))
            no_timing = 1;
        else if (!strcmp(a, "--no-cyc"))
            no_cyc = 1;
        else if (!strcmp(a, "--no-offset"))
            no_offset = 1;
        else if (!strcmp(a, "--raw"))
            raw = 1;
        else if (!strcmp(a, "--lastip"))
            lastip = 1;
        else if (!strcmp(a, "--exec-mode"))
            exec_mode = 1;
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (!strcmp(a, "--cpu") && i + 1 < argc) {
            if (sscanf(argv[++i], "%u/%u", &cpu_family, &cpu_model) != 2) {
                fprintf(stderr, "ref_ptdump: --cpu f/m\n");
                return 2;
            }
        } else
            file = a;
    }
    if (!file) {
        fprintf(stderr, "usage: ref_ptdump [options] FILE\n");
        return 2;
    }
    FILE *f = fopen(file, "rb");
    if (!f) {
        perror(file);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n ? (size_t)n : 1);
    if (n && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        perror(file);
        return 1;
    }
    fclose(f);

    struct pt_config cfg;
    pt_config_init(&cfg);
    cfg.begin = buf;
    cfg.end = buf + n;
    if (cpu_family) {
        cfg.cpu.vendor = pcv_intel;
        cfg.cpu.family = (uint16_t)cpu_family;
        cfg.cpu.model = (uint8_t)cpu_model;
        pt_cpu_errata(&cfg.errata, &cfg.cpu);
    }
    struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&cfg);
    int r = no_sync ? pt_pkt_sync_set(d, 0) : pt_pkt_sync_forward(d);
    if (r < 0) {
        if (r != -pte_eos)
            diag("sync error", 0, r);
        return 0;
    }
    for (;;) {
        uint64_t off;
        struct pt_packet p;
        pt_pkt_get_offset(d, &off);
        r = pt_pkt_next(d, &p, sizeof p);
        if (r == -pte_eos)
            break;
        if (r < 0) {
            diag("error decoding packet", off, r);
            if (pt_pkt_sync_forward(d) < 0)
                break;
            lip = 0;
            have_ip = 0;
            suppressed = 0;
            continue;
        }
        print_packet(&p, off, buf + off);
    }
    pt_pkt_free_decoder(d);
    free(buf);
    return 0;
}
