/* test/vpt/vpt_encode.c: the trace-unit half of the virtual Intel PT. Reads a
 * recording of the vpt plugin (PREFIX.itab, PREFIX.stream) and QEMU's
 * `-d plugin,int` log (PREFIX.log), and writes what an Intel CPU would have
 * written for that execution, through libptd's encoder:
 *   OUT.pt     the packet stream
 *   OUT.truth  the executed instructions inside the filter ranges, one
 *              16-hex-digit IP per line, plus bracketed event lines in the
 *              style of libipt's ptxed ([enabled], [disabled], [interrupt])
 *   OUT.etruth the same with the events' IPs (ptxed --event:ip)
 *   OUT.filter the filter range to give a decoder (LO-HI, HI inclusive),
 *              empty unless exactly one range was traced
 *   OUT.dump, OUT.addr  code snapshot (concatenated 4 KiB pages; one
 *              little-endian u64 address per page), bytes of every
 *              instruction traced, 0xcc elsewhere
 *
 * Packets are written by libptd's trace-unit model (decoder/ptd_tracer.h,
 * also the software trace unit's), as the SDM's "Intel Processor Trace"
 * chapter says a CPU writes them: PSB+ (PSB, MODE.Exec, FUP, PSBEND) at the start and after every
 * --psb-period bytes; TIP.PGE/TIP.PGD where the flow enters or leaves the
 * filter ranges; TNT-8 bits for conditional branches (and compressed RETs);
 * TIP with IP compression against the last IP for indirect branches and far
 * transfers; MODE.Exec before the IP packet that follows a change of
 * 16/32/64-bit mode; FUP+TIP for interrupts and exceptions (FUP+TIP.PGD when
 * the handler is outside the ranges).
 *
 * Events: QEMU takes interrupts at translation-block boundaries; its log has
 * one "v=VV e=EEEE i=I cpl=C IP=CS:EIP" line for each interrupt or
 * exception, and the plugin's "vpt: tb N" lines say before which recorded
 * instruction it happened. For a hardware interrupt (vector >= 32, or NMI)
 * EIP is where execution resumes (the FUP IP); for an exception (vector <
 * 32, i=0) EIP is the faulting instruction, which the plugin recorded (its
 * callback runs before it) but which did not complete: it is dropped from
 * the truth and becomes the FUP IP. Software INT n (i=1) is an instruction
 * (a far transfer: TIP) and its log line is ignored.
 *
 * RET compression (default on; --no-retc is DisRETC): a near RET whose
 * target is the return address pushed by the newest CALL still on a 64-entry
 * stack is a taken TNT bit. The stack is emptied at every PSB, whenever
 * tracing stops or starts (TIP.PGD/TIP.PGE) and after a RET that is not
 * compressed, so a decoder that keeps older entries (libipt does) never
 * disagrees. This file decides what happened (the flow, events from QEMU's
 * log) and writes the truth; ptd_tracer writes the packets, and its result
 * bits (entered, left, mode told) say which events the truth gets.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_ild.h"
#include "decoder/ptd_pkt.h"
#include "decoder/ptd_tracer.h"

struct itab_rec {
    uint64_t vaddr;
    uint8_t size;
    uint8_t mode;
    uint8_t modes;
    uint8_t pad[5];
    uint8_t bytes[16];
};

struct insn_info {
    uint64_t ip, end, target;
    uint8_t iclass, mode, rep_string, ok, len;
};

struct event {
    uint64_t pos; /* before stream[pos] */
    uint64_t eip;
    unsigned vector;
    bool soft;
};

static struct itab_rec *itab;
static struct insn_info *info; /* [itab index * 3 + mode] */
static uint8_t *mode_at;       /* per stream entry: the resolved mode */
static size_t itab_n;
static uint32_t *stream;
static size_t stream_n;
static struct event *events;
static size_t events_n;

#define MAX_RANGES 4
static uint64_t rlo[MAX_RANGES], rhi[MAX_RANGES];
static int nranges;

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "vpt_encode: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(2);
}

static void *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(n ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
        die("cannot read %s", path);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static bool in_range(uint64_t ip)
{
    if (!nranges)
        return true;
    for (int i = 0; i < nranges; i++)
        if (ip >= rlo[i] && ip < rhi[i])
            return true;
    return false;
}

static void read_log(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot open %s", path);
    char *line = NULL;
    size_t cap = 0;
    size_t ecap = 0, pending = 0;
    bool seen_mark = false;
    while (getline(&line, &cap, f) > 0) {
        unsigned long long n;
        if (sscanf(line, "vpt: tb %llu", &n) == 1) {
            /* events since the last mark happened before instruction n;
             * those before the window's first mark are not ours */
            for (size_t i = events_n - pending; i < events_n; i++)
                events[i].pos = n;
            if (!seen_mark)
                events_n -= pending;
            seen_mark = true;
            pending = 0;
            continue;
        }
        const char *v = strstr(line, ": v=");
        if (!v)
            continue;
        unsigned vec, soft;
        unsigned long long eip;
        const char *ipp = strstr(v, " IP=");
        if (sscanf(v, ": v=%x e=%*x i=%u", &vec, &soft) != 2 || !ipp ||
            sscanf(strchr(ipp, ':') + 1, "%llx", &eip) != 1)
            continue;
        if (events_n == ecap) {
            ecap = ecap ? ecap * 2 : 1024;
            events = realloc(events, ecap * sizeof *events);
        }
        events[events_n].pos = UINT64_MAX;
        events[events_n].eip = eip;
        events[events_n].vector = vec;
        events[events_n].soft = soft != 0;
        events_n++;
        pending++;
    }
    events_n -= pending; /* after the last mark: outside the recording */
    free(line);
    fclose(f);
}

/* ---- packet output: decoder/ptd_tracer, the trace-unit model ---- */
static FILE *pt_out;
static struct ptd_tracer tracer;
static uint64_t pt_total, n_packets;

static int pt_sink(void *ctx, const uint8_t *bytes, size_t n)
{
    (void)ctx;
    if (fwrite(bytes, 1, n, pt_out) != n)
        die("cannot write the %s", "trace");
    pt_total += n;
    n_packets++;
    return 0;
}

/* --tsc: TSC packets (TSCEn) in every PSB+ and where tracing is enabled;
 * the guest has no clock the plugin can read, so time is the index of the
 * instruction in the recording times --tsc-ratio, from --tsc-base. */
static bool tsc_on;
static uint64_t tsc_ratio = 1, tsc_base = 0x100000, tsc_now;

static uint64_t now(void)
{
    return tsc_base + tsc_now * tsc_ratio;
}

/* RET compression (DisRETC with --no-retc) */
static bool retc = true;

/* ---- truth ---- */
static FILE *truth;
static uint64_t n_insns, n_events, n_unplaced, n_dropped, n_collapsed;

/* OUT.etruth: the same with the events' IPs, as ptxed --event:ip prints
 * them */
static FILE *etruth;

static void truth_insn(uint64_t ip)
{
    if (truth)
        fprintf(truth, "%016" PRIx64 "\n", ip);
    if (etruth)
        fprintf(etruth, "%016" PRIx64 "\n", ip);
    n_insns++;
}

static void truth_event(const char *what, const char *k1, uint64_t ip1, const char *k2,
                        uint64_t ip2)
{
    if (truth)
        fprintf(truth, "[%s]\n", what);
    if (etruth) {
        fprintf(etruth, "[%s", what);
        if (k1)
            fprintf(etruth, ", %s: %016" PRIx64, k1, ip1);
        if (k2)
            fprintf(etruth, ", %s: %016" PRIx64, k2, ip2);
        fprintf(etruth, "]\n");
    }
    n_events++;
}

static const char *mode_event(int mode)
{
    return mode == PTD_EXEC_MODE_64   ? "exec mode: 64-bit"
           : mode == PTD_EXEC_MODE_32 ? "exec mode: 32-bit"
                                      : "exec mode: 16-bit";
}

/* ---- the flow ---- */
/* Where a decoder's flow stood when tracing was last disabled: after a call
 * that left the ranges, its return address; after an asynchronous disable,
 * the FUP IP. A TIP.PGE there is a resume, which libipt reports as such. */
static uint64_t resume_ip = UINT64_MAX;

/* The truth lines for what the tracer did (its PTD_TRACER_* bits); the
 * instruction line itself comes before. */
static void truth_enabled(int bits, uint64_t ip)
{
    if (bits & PTD_TRACER_ENTERED)
        truth_event(ip == resume_ip ? "resumed" : "enabled", "ip", ip, NULL, 0);
}

/* An asynchronous event (interrupt, exception) at `from` (the FUP IP),
 * continuing at `to`: FUP + TIP, FUP + TIP.PGD, or TIP.PGE. */
static void async_event(uint64_t from, uint64_t to, int to_mode)
{
    bool was = tracer.enabled;
    int bits = ptd_tracer_event(&tracer, from, to, (unsigned)to_mode, now());
    if (bits < 0)
        die("tracer error in %s", "an event");
    if (was && (bits & PTD_TRACER_LEFT)) {
        resume_ip = from;
        /* the TIP.PGD carries the handler's IP (ptd_tracer.h) */
        truth_event("disabled", "at", from, "ip", to);
    } else if (was) {
        if (bits & PTD_TRACER_MODE)
            truth_event(mode_event(to_mode), "ip", to, NULL, 0);
        truth_event("interrupt", "from", from, "to", to);
    } else {
        truth_enabled(bits, to);
    }
}

/* `prev` completed and control went to `next` (mode next_mode). */
static void branch(const struct insn_info *prev, uint64_t next, int next_mode)
{
    /* does the instruction explain the flow? */
    bool expected = true;
    switch (prev->iclass) {
    case PTD_ICLASS_OTHER: expected = next == prev->end; break;
    case PTD_ICLASS_COND_JUMP: expected = next == prev->end || next == prev->target; break;
    case PTD_ICLASS_DIRECT_JUMP:
    case PTD_ICLASS_DIRECT_CALL: expected = next == prev->target; break;
    default: break;
    }
    if (!expected && tracer.enabled) {
        /* an event the log did not place: an interrupt after `prev` */
        n_unplaced++;
        uint64_t resume = prev->iclass == PTD_ICLASS_OTHER       ? prev->end
                          : prev->iclass == PTD_ICLASS_COND_JUMP ? prev->end
                                                                 : prev->target;
        branch(prev, resume, prev->mode);
        async_event(resume, next, next_mode);
        return;
    }
    struct ptd_tracer_insn in;
    in.ip = prev->ip;
    in.iclass = prev->iclass;
    in.target = prev->target;
    in.next_ip = next;
    in.mode = prev->mode;
    in.next_mode = (uint8_t)next_mode;
    /* the ILD's length, not end - ip: 16-bit ends wrap */
    in.length = prev->len;
    int bits = ptd_tracer_insn(&tracer, &in, now());
    if (bits < 0)
        die("tracer error in %s", "an instruction");
    if ((bits & PTD_TRACER_MODE) && !(bits & PTD_TRACER_ENTERED))
        truth_event(mode_event(next_mode), "ip", next, NULL, 0);
    if (bits & PTD_TRACER_LEFT) {
        resume_ip =
            prev->iclass == PTD_ICLASS_DIRECT_CALL || prev->iclass == PTD_ICLASS_INDIRECT_CALL
                ? prev->end
                : next;
        truth_event("disabled", "ip", next, NULL, 0);
    }
    truth_enabled(bits, next);
}

static void decode_itab(void)
{
    info = calloc(itab_n * 3 + 1, sizeof *info);
    for (size_t i = 0; i < itab_n; i++) {
        for (int m = 0; m < 3; m++) {
            struct ptd_insn in;
            const struct itab_rec *r = &itab[i];
            struct insn_info *f = &info[i * 3 + (size_t)m];
            int n = ptd_ild_decode_at(&in, r->bytes, r->size, (enum ptd_exec_mode)m, r->vaddr);
            f->ip = r->vaddr;
            f->mode = (uint8_t)m;
            f->ok = n == r->size;
            f->len = r->size;
            f->end = r->vaddr + r->size;
            if (m != PTD_EXEC_MODE_64)
                f->end &= 0xffffffffu;
            if (!f->ok)
                continue;
            f->iclass = in.iclass;
            f->target = in.target;
            /* The IPs here are linear (QEMU's vaddr: CS base + IP). A 16-bit
             * near branch wraps within its 64 KiB segment; the ILD wraps
             * the offset alone. Keep the segment's upper bits (the CS base
             * is a multiple of 64 KiB in real mode and in OVMF's flat
             * segments). */
            if ((in.flags & PTD_INSN_REL) && in.opsize == 16)
                f->target = (r->vaddr & ~0xffffull) | (in.target & 0xffff);
            f->rep_string = (in.flags & PTD_INSN_REP) && in.map == PTD_ILD_MAP_PRIMARY &&
                            ((in.opcode >= 0x6c && in.opcode <= 0x6f) ||
                             (in.opcode >= 0xa4 && in.opcode <= 0xa7) ||
                             (in.opcode >= 0xaa && in.opcode <= 0xaf));
        }
    }
}

/* The plugin decides the mode per translation block, from the modes in
 * which all its instructions have QEMU's lengths; a block that fits several
 * keeps the mode of the block before it, so the first blocks after a mode
 * switch may carry the old mode. The mode only changes at far transfers and
 * events: intersect the possible modes over each run of instructions
 * between those, and give the whole run the mode that remains. */
static uint64_t n_mode_fixed;

static void resolve_modes(void)
{
    mode_at = malloc(stream_n + 1);
    size_t ev = 0, start = 0;
    int prev_mode = -1;
    for (size_t i = 0; i <= stream_n; i++) {
        bool boundary = i == stream_n;
        while (ev < events_n && events[ev].pos < i)
            ev++;
        if (!boundary && i > start && ev < events_n && events[ev].pos == i && !events[ev].soft)
            boundary = true;
        if (!boundary && i > start) {
            const struct itab_rec *p = &itab[stream[i - 1]];
            const struct insn_info *pi = &info[stream[i - 1] * 3 + p->mode];
            if (pi->ok && pi->iclass == PTD_ICLASS_FAR_TRANSFER)
                boundary = true;
        }
        if (!boundary)
            continue;
        if (i > start) {
            unsigned mask = 7;
            for (size_t k = start; k < i; k++) {
                unsigned m = itab[stream[k]].modes;
                if (m)
                    mask &= m;
            }
            for (size_t k = start; k < i; k++) {
                int pm = itab[stream[k]].mode, m = pm;
                if (mask && !(mask >> pm & 1)) {
                    m = prev_mode >= 0 && (mask >> prev_mode & 1) ? prev_mode
                        : (mask & 2)                              ? 1
                        : (mask & 4)                              ? 2
                                                                  : 0;
                    n_mode_fixed++;
                } else if (mask && (mask & (mask - 1)) == 0) {
                    m = __builtin_ctz(mask);
                }
                mode_at[k] = (uint8_t)m;
            }
            prev_mode = mode_at[i - 1];
        }
        start = i;
    }
}

/* ---- code snapshot ---- */
struct page {
    uint64_t addr;
    uint8_t *data;
};
static struct page *pages;
static size_t npages, pcap;
static uint64_t n_conflicts;

static uint8_t *page_for(uint64_t addr)
{
    addr &= ~0xfffull;
    for (size_t i = npages; i-- > 0;) /* few pages: linear is fine */
        if (pages[i].addr == addr)
            return pages[i].data;
    if (npages == pcap) {
        pcap = pcap ? pcap * 2 : 64;
        pages = realloc(pages, pcap * sizeof *pages);
    }
    pages[npages].addr = addr;
    pages[npages].data = malloc(8192); /* byte map + written map */
    memset(pages[npages].data, 0xcc, 4096);
    memset(pages[npages].data + 4096, 0, 4096);
    return pages[npages++].data;
}

/* Builds the snapshot in execution order, from each instruction's first
 * execution. Code that changes under the same address (an image unloaded
 * and another loaded there) cannot be one page dump: with until_conflict the
 * recording is cut before the first instruction whose bytes disagree with
 * earlier ones (the trace then ends there, with FUP + TIP.PGD). */
static bool until_conflict;

static void snapshot(void)
{
    uint8_t *seen = calloc(itab_n ? itab_n : 1, 1);
    for (size_t i = 0; i < stream_n; i++) {
        uint32_t id = stream[i];
        if (id >= itab_n || seen[id])
            continue;
        seen[id] = 1;
        const struct itab_rec *r = &itab[id];
        if (!in_range(r->vaddr))
            continue;
        bool clash = false;
        for (unsigned k = 0; k < r->size; k++) {
            uint8_t *p = page_for(r->vaddr + k);
            unsigned o = (unsigned)((r->vaddr + k) & 0xfff);
            if (p[4096 + o] && p[o] != r->bytes[k])
                clash = true;
        }
        if (clash && until_conflict) {
            printf("vpt_encode: code at %" PRIx64
                   " changed: recording cut at instruction %zu of %zu\n",
                   r->vaddr, i, stream_n);
            stream_n = i;
            break;
        }
        if (clash)
            n_conflicts++;
        for (unsigned k = 0; k < r->size; k++) {
            uint8_t *p = page_for(r->vaddr + k);
            unsigned o = (unsigned)((r->vaddr + k) & 0xfff);
            p[o] = r->bytes[k];
            p[4096 + o] = 1;
        }
    }
    free(seen);
}

static int cmp_page(const void *a, const void *b)
{
    const struct page *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: vpt_encode [options] IN-PREFIX [OUT-PREFIX]\n"
            "  --filter LO-HI   trace only [LO, HI) (hex; up to %d; default: the\n"
            "                   image range of IN-PREFIX.meta, else everything)\n"
            "  --no-filter      trace everything\n"
            "  --outside-image  trace everything but the image of IN-PREFIX.meta\n"
            "  --psb-period N   bytes between PSB+ (default 4096)\n"
            "  --no-retc        no RET compression (DisRETC)\n"
            "  --no-truth       do not write OUT.truth (huge traces)\n"
            "  --until-conflict end the trace before code changes under an address\n"
            "  --tsc            TSC packets in PSB+ and before TIP.PGE: time =\n"
            "                   --tsc-base (0x100000) + instruction index *\n"
            "                   --tsc-ratio (1)\n"
            "  --list           print the recorded instructions' addresses and exit\n",
            MAX_RANGES);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    uint64_t psb_period = 4096;
    bool no_filter = false, outside = false, no_truth = false, list = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--filter") && i + 1 < argc) {
            char *e;
            if (nranges == MAX_RANGES)
                usage();
            rlo[nranges] = strtoull(argv[++i], &e, 16);
            if (*e != '-')
                usage();
            rhi[nranges++] = strtoull(e + 1, NULL, 16);
        } else if (!strcmp(argv[i], "--outside-image")) {
            outside = true;
        } else if (!strcmp(argv[i], "--no-filter")) {
            no_filter = true;
        } else if (!strcmp(argv[i], "--psb-period") && i + 1 < argc) {
            psb_period = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--tsc")) {
            tsc_on = true;
        } else if (!strcmp(argv[i], "--tsc-ratio") && i + 1 < argc) {
            tsc_ratio = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--tsc-base") && i + 1 < argc) {
            tsc_base = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--until-conflict")) {
            until_conflict = true;
        } else if (!strcmp(argv[i], "--no-truth")) {
            no_truth = true;
        } else if (!strcmp(argv[i], "--no-retc")) {
            retc = false;
        } else if (!strcmp(argv[i], "--list")) {
            list = true;
        } else if (argv[i][0] == '-') {
            usage();
        } else if (!in) {
            in = argv[i];
        } else if (!out) {
            out = argv[i];
        } else {
            usage();
        }
    }
    if (!in)
        usage();
    if (!out)
        out = in;
    char path[4096];
    size_t size;

    snprintf(path, sizeof path, "%s.meta", in);
    FILE *mf = fopen(path, "r");
    if (mf && !nranges && !no_filter) {
        char line[256];
        unsigned long long base = 0, isz = 0;
        while (fgets(line, sizeof line, mf)) {
            sscanf(line, "image_base %llx", &base);
            sscanf(line, "image_size %llx", &isz);
        }
        if (base && isz && outside) {
            rlo[0] = 0;
            rhi[0] = base;
            rlo[1] = base + isz;
            rhi[1] = UINT64_MAX;
            nranges = 2;
        } else if (base && isz) {
            rlo[0] = base;
            rhi[0] = base + isz;
            nranges = 1;
        }
    }
    if (mf)
        fclose(mf);
    if (no_filter)
        nranges = 0;

    snprintf(path, sizeof path, "%s.itab", in);
    itab = read_file(path, &size);
    itab_n = size / sizeof *itab;
    snprintf(path, sizeof path, "%s.stream", in);
    stream = read_file(path, &size);
    stream_n = size / sizeof *stream;
    if (list) {
        /* the recorded instructions as they ran, nothing encoded */
        for (uint64_t k = 0; k < stream_n; k++) {
            if (stream[k] >= itab_n)
                die("%s: a stream entry is out of the table", in);
            printf("%016" PRIx64 "\n", itab[stream[k]].vaddr);
        }
        return 0;
    }
    snprintf(path, sizeof path, "%s.log", in);
    read_log(path);
    decode_itab();
    snapshot();
    resolve_modes();

    snprintf(path, sizeof path, "%s.pt", out);
    pt_out = fopen(path, "wb");
    if (!pt_out)
        die("cannot write %s", path);
    snprintf(path, sizeof path, "%s.truth", out);
    if (!no_truth && !(truth = fopen(path, "w")))
        die("cannot write %s", path);
    snprintf(path, sizeof path, "%s.etruth", out);
    if (!no_truth && !(etruth = fopen(path, "w")))
        die("cannot write %s", path);
    struct ptd_tracer_config tc;
    memset(&tc, 0, sizeof tc);
    tc.nfilter = (uint8_t)nranges;
    for (int i = 0; i < nranges; i++) {
        tc.filter_lo[i] = rlo[i];
        tc.filter_hi[i] = rhi[i] - 1; /* ADDRn_B is inclusive */
    }
    tc.dis_retc = !retc;
    tc.tsc_en = tsc_on;
    tc.psb_period = psb_period;
    tc.sink = pt_sink;
    if (ptd_tracer_init(&tracer, &tc) < 0)
        die("bad tracer %s", "configuration");

    size_t ev = 0;
    const struct insn_info *prev = NULL;
    for (size_t i = 0; i < stream_n; i++) {
        if (stream[i] >= itab_n) {
            n_dropped++;
            continue;
        }
        const struct insn_info *cur = &info[stream[i] * 3 + mode_at[i]];
        tsc_now = i;
        if (!cur->ok) {
            n_dropped++;
            continue;
        }
        /* the event (at most one that is not a software INT) before cur */
        const struct event *e = NULL;
        for (; ev < events_n && events[ev].pos <= i; ev++) {
            if (events[ev].pos != i || events[ev].soft)
                continue;
            if (e)
                n_unplaced++; /* a second event at one boundary: not modelled */
            else
                e = &events[ev];
        }
        if (!prev) {
            /* TraceEn: PSB+ then TIP.PGE if inside the ranges */
            int bits = ptd_tracer_start(&tracer, cur->ip, cur->mode, now());
            if (bits < 0)
                die("tracer error at the %s", "start");
            truth_enabled(bits, cur->ip);
            prev = cur;
            continue;
        }
        if (!e && cur->ip == prev->ip && prev->rep_string) {
            n_collapsed++; /* one more iteration of the same rep */
            continue;
        }
        if (e) {
            bool fault = e->vector < 32 && e->vector != 2;
            bool completed = !(fault || (e->eip == prev->ip && prev->rep_string));
            uint64_t from = e->eip;
            if (completed) {
                if (tracer.enabled)
                    truth_insn(prev->ip);
                branch(prev, from, prev->mode);
            } else if (e->eip != prev->ip) {
                n_unplaced++; /* the log and the recording disagree */
            }
            async_event(from, cur->ip, cur->mode);
        } else {
            if (tracer.enabled)
                truth_insn(prev->ip);
            branch(prev, cur->ip, cur->mode);
        }
        /* PSB+ every --psb-period bytes: the tracer puts it at the next
         * instruction boundary itself */
        prev = cur;
    }
    if (prev && tracer.enabled) {
        /* the recording ends: TraceEn cleared before the last instruction
         * (its outcome is unknown): FUP + TIP.PGD */
        ptd_tracer_stop(&tracer, prev->ip);
        truth_event("disabled", "at", prev->ip, NULL, 0);
    }
    fclose(pt_out);
    if (truth)
        fclose(truth);
    if (etruth)
        fclose(etruth);

    qsort(pages, npages, sizeof *pages, cmp_page);
    snprintf(path, sizeof path, "%s.dump", out);
    FILE *pf = fopen(path, "wb");
    snprintf(path, sizeof path, "%s.addr", out);
    FILE *af = fopen(path, "wb");
    if (!pf || !af)
        die("cannot write %s", path);
    for (size_t i = 0; i < npages; i++) {
        fwrite(pages[i].data, 1, 4096, pf);
        uint8_t le[8];
        for (int k = 0; k < 8; k++)
            le[k] = (uint8_t)(pages[i].addr >> (8 * k));
        fwrite(le, 1, 8, af);
    }
    fclose(pf);
    fclose(af);

    printf("vpt_encode: insns=%" PRIu64 " events=%" PRIu64 " packets=%" PRIu64 " bytes=%" PRIu64
           " pages=%zu rep_iterations=%" PRIu64 " unplaced=%" PRIu64 " conflicts=%" PRIu64
           " dropped=%" PRIu64 " mode_fixed=%" PRIu64 "\n",
           n_insns, n_events, n_packets, pt_total, npages, n_collapsed, n_unplaced, n_conflicts,
           n_dropped, n_mode_fixed);
    /* the filter for a decoder (libipt's address filter 0: HI inclusive) */
    snprintf(path, sizeof path, "%s.filter", out);
    FILE *ff = fopen(path, "w");
    if (!ff)
        die("cannot write %s", path);
    if (nranges == 1)
        fprintf(ff, "%" PRIx64 "-%" PRIx64 "\n", rlo[0], rhi[0] - 1);
    fclose(ff);
    if (nranges)
        for (int i = 0; i < nranges; i++)
            printf("vpt_encode: filter %d: %" PRIx64 "-%" PRIx64 "\n", i, rlo[i], rhi[i]);
    return n_unplaced || n_conflicts ? 1 : 0;
}
