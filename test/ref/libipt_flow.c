/* libipt_flow: the reference instruction flow for ptboot's tests, over
 * libipt's instruction-flow decoder (pt_insn_*). It prints what libipt's
 * ptxed prints with --no-inst (ptxed is not packaged in Debian): one IP per
 * instruction ("? " before speculative ones), bracketed events, and error
 * lines "[<offset>, <ip>: <kind>: <pt_errstr>]"; so its output can be
 * diffed against `ptboot flow --no-inst` and used by other tools (the
 * virtual-PT plugin's checks) as ptxed would be.
 *
 *   libipt_flow --pt FILE [--pages PREFIX] [--raw FILE[:FROM[-TO]]:BASE]...
 *               [--filter LO-HI] [--cpu F/M] [--mode 16|32|64] [--stat]
 *               [--event:ip] [--quiet] [--all-exec-modes]
 *
 * Exec-mode events follow current libipt's rule (ptboot's reference): only
 * those that change the mode the decoder knows; --all-exec-modes prints
 * libipt 2.0.5's (one per MODE.Exec).
 *
 * --filter sets address filter 0 to FilterEn LO..HI (as IA32_RTIT_ADDR0_A/B;
 * libipt treats HI as inclusive). --mode is accepted for symmetry with
 * `ptboot flow` and ignored: libipt takes the mode from MODE.Exec packets.
 * Memory comes from a read callback over host/flow_image.c.
 *
 * Written for ptboot from libipt's public API and ptxed's documented
 * output; no libipt tool code. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "host/flow_image.h"

struct opts {
    int event_ip;
    int quiet;
    int stat;
    int time;           /* --time: the last event's tsc before each instruction */
    int event_time;     /* --event:time: the event's tsc, when it has one */
    int all_exec_modes; /* --all-exec-modes: 2.0.5's exec-mode events */
};

static int read_mem(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip,
                    void *context)
{
    size_t n;
    (void)asid;
    n = flow_image_read(context, ip, buffer, size);
    return n ? (int)n : -pte_nomap;
}

static const char *mode_name(enum pt_exec_mode m)
{
    switch (m) {
    case ptem_16bit: return "16-bit";
    case ptem_32bit: return "32-bit";
    case ptem_64bit: return "64-bit";
    default: return "unknown";
    }
}

static void print_event(const struct pt_event *ev, const struct opts *o)
{
    printf("[");
    if (o->event_time && ev->has_tsc)
        printf("%016" PRIx64 "  ", ev->tsc);
    switch (ev->type) {
    case ptev_enabled:
        printf("%s", ev->variant.enabled.resumed ? "resumed" : "enabled");
        if (o->event_ip)
            printf(", ip: %016" PRIx64, ev->variant.enabled.ip);
        break;
    case ptev_disabled:
        printf("disabled");
        if (o->event_ip && !ev->ip_suppressed)
            printf(", ip: %016" PRIx64, ev->variant.disabled.ip);
        break;
    case ptev_async_disabled:
        printf("disabled");
        if (o->event_ip) {
            printf(", at: %016" PRIx64, ev->variant.async_disabled.at);
            if (!ev->ip_suppressed)
                printf(", ip: %016" PRIx64, ev->variant.async_disabled.ip);
        }
        break;
    case ptev_async_branch:
        printf("interrupt");
        if (o->event_ip) {
            printf(", from: %016" PRIx64, ev->variant.async_branch.from);
            if (!ev->ip_suppressed)
                printf(", to: %016" PRIx64, ev->variant.async_branch.to);
        }
        break;
    case ptev_paging:
        printf("paging, cr3: %016" PRIx64 "%s", ev->variant.paging.cr3,
               ev->variant.paging.non_root ? ", nr" : "");
        break;
    case ptev_async_paging:
        printf("paging, cr3: %016" PRIx64 "%s", ev->variant.async_paging.cr3,
               ev->variant.async_paging.non_root ? ", nr" : "");
        if (o->event_ip)
            printf(", ip: %016" PRIx64, ev->variant.async_paging.ip);
        break;
    case ptev_overflow:
        printf("overflow");
        if (o->event_ip && !ev->ip_suppressed)
            printf(", ip: %016" PRIx64, ev->variant.overflow.ip);
        break;
    case ptev_exec_mode:
        printf("exec mode: %s", mode_name(ev->variant.exec_mode.mode));
        if (o->event_ip && !ev->ip_suppressed)
            printf(", ip: %016" PRIx64, ev->variant.exec_mode.ip);
        break;
    case ptev_tsx:
        if (ev->variant.tsx.aborted)
            printf("aborted");
        else if (ev->variant.tsx.speculative)
            printf("begin transaction");
        else
            printf("committed");
        if (o->event_ip && !ev->ip_suppressed)
            printf(", ip: %016" PRIx64, ev->variant.tsx.ip);
        break;
    case ptev_stop: printf("stopped"); break;
    case ptev_vmcs: printf("vmcs, base: %016" PRIx64, ev->variant.vmcs.base); break;
    case ptev_async_vmcs:
        printf("vmcs, base: %016" PRIx64, ev->variant.async_vmcs.base);
        if (o->event_ip)
            printf(", ip: %016" PRIx64, ev->variant.async_vmcs.ip);
        break;
    case ptev_exstop:
        printf("exstop");
        if (o->event_ip && !ev->ip_suppressed)
            printf(", ip: %016" PRIx64, ev->variant.exstop.ip);
        break;
    case ptev_mwait:
        printf("mwait %" PRIx32 " %" PRIx32, ev->variant.mwait.hints, ev->variant.mwait.ext);
        if (o->event_ip && !ev->ip_suppressed)
            printf(", ip: %016" PRIx64, ev->variant.mwait.ip);
        break;
    case ptev_pwre:
        printf("pwre c%u.%u", (ev->variant.pwre.state + 1) & 0xf,
               (ev->variant.pwre.sub_state + 1) & 0xf);
        if (ev->variant.pwre.hw)
            printf(" hw");
        break;
    case ptev_pwrx:
        printf("pwrx ");
        if (ev->variant.pwrx.interrupt)
            printf("int: ");
        if (ev->variant.pwrx.store)
            printf("st: ");
        if (ev->variant.pwrx.autonomous)
            printf("hw: ");
        printf("c%u (c%u)", (ev->variant.pwrx.last + 1) & 0xf,
               (ev->variant.pwrx.deepest + 1) & 0xf);
        break;
    case ptev_ptwrite:
        printf("ptwrite: %" PRIx64, ev->variant.ptwrite.payload);
        if (o->event_ip && !ev->ip_suppressed)
            printf(", ip: %016" PRIx64, ev->variant.ptwrite.ip);
        break;
    case ptev_tick:
        printf("tick");
        if (o->event_ip && !ev->ip_suppressed)
            printf(", ip: %016" PRIx64, ev->variant.tick.ip);
        break;
    case ptev_cbr: printf("cbr: %x", ev->variant.cbr.ratio); break;
    case ptev_mnt: printf("mnt: %" PRIx64, ev->variant.mnt.payload); break;
    }
    printf("]\n");
}

static void diagnose(const char *kind, struct pt_insn_decoder *d, uint64_t ip, int err)
{
    uint64_t pos;
    if (pt_insn_get_offset(d, &pos) < 0)
        printf("[?, %" PRIx64 ": %s: %s]\n", ip, kind, pt_errstr(pt_errcode(err)));
    else
        printf("[%" PRIx64 ", %" PRIx64 ": %s: %s]\n", pos, ip, kind, pt_errstr(pt_errcode(err)));
}

static void print_ip(const struct opts *o, uint64_t time, const struct pt_insn *insn)
{
    if (o->time)
        printf("%016" PRIx64 "  ", time);
    printf("%s%016" PRIx64 "\n", insn->speculative ? "? " : "", insn->ip);
}

/* The execution mode as far as the events told it (PSB+ included), for
 * current libipt's rule: libipt 2.0.5 makes an exec-mode event of every
 * MODE.Exec, current libipt (ptboot's reference) only of one that changes
 * the mode it knows, which it forgets at a sync and an overflow. */
struct mode_seen {
    int known;
    enum pt_exec_mode mode;
};

static int drain(struct pt_insn_decoder *d, int status, const struct opts *o, uint64_t *time,
                 struct mode_seen *ms)
{
    while (status & pts_event_pending) {
        struct pt_event ev;
        status = pt_insn_event(d, &ev, sizeof(ev));
        if (status < 0)
            return status;
        *time = ev.tsc;
        if (ev.type == ptev_overflow)
            ms->known = 0;
        if (ev.type == ptev_exec_mode) {
            int same = ms->known && ev.variant.exec_mode.mode == ms->mode;
            ms->known = 1;
            ms->mode = ev.variant.exec_mode.mode;
            if (same && !o->all_exec_modes)
                continue;
        }
        if (!o->quiet && !ev.status_update)
            print_event(&ev, o);
    }
    return status;
}

static uint64_t decode(struct pt_insn_decoder *d, const struct opts *o)
{
    uint64_t insns = 0, sync = 0, time = 0;
    int have_sync = 0;

    for (;;) {
        struct pt_insn insn;
        struct mode_seen ms = { 0, ptem_unknown };
        int status;

        memset(&insn, 0, sizeof(insn));
        status = pt_insn_sync_forward(d);
        if (status < 0) {
            uint64_t off;
            if (status == -pte_eos)
                break;
            diagnose("sync error", d, insn.ip, status);
            /* no progress: give up (reported twice on purpose, as ptxed) */
            if (pt_insn_get_offset(d, &off) < 0 || (have_sync && off <= sync))
                break;
            sync = off;
            have_sync = 1;
            continue;
        }
        for (;;) {
            status = drain(d, status, o, &time, &ms);
            if (status < 0)
                break;
            if (status & pts_eos) {
                if (!(status & pts_ip_suppressed) && !o->quiet)
                    printf("[end of trace]\n");
                status = -pte_eos;
                break;
            }
            status = pt_insn_next(d, &insn, sizeof(insn));
            if (status < 0) {
                /* the instruction may still have been decoded */
                if (insn.iclass != ptic_error) {
                    if (!o->quiet)
                        print_ip(o, time, &insn);
                    insns++;
                }
                break;
            }
            if (!o->quiet)
                print_ip(o, time, &insn);
            insns++;
        }
        if (!status)
            status = -pte_internal;
        if (status == -pte_eos)
            break;
        diagnose("error", d, insn.ip, status);
    }
    return insns;
}

static int parse_range(const char *s, uint64_t *lo, uint64_t *hi)
{
    char *end;
    *lo = strtoull(s, &end, 16);
    if (end == s || *end != '-')
        return -1;
    s = end + 1;
    *hi = strtoull(s, &end, 16);
    return (end == s || *end) ? -1 : 0;
}

static int usage(int rc)
{
    fprintf(
        rc ? stderr : stdout,
        "usage: libipt_flow --pt FILE [--pages PREFIX] [--raw FILE[:FROM[-TO]]:BASE]...\n"
        "                   [--filter LO-HI] [--cpu F/M] [--mode 16|32|64]\n"
        "                   [--stat] [--event:ip] [--event:tick] [--quiet] [--all-exec-modes]\n");
    return rc;
}

int main(int argc, char **argv)
{
    static char obuf[1 << 16];
    struct flow_image img;
    struct opts o = { 0, 0, 0, 0, 0, 0 };
    const char *pt = NULL;
    struct pt_config cfg;
    struct pt_insn_decoder *d;
    uint8_t *trace;
    size_t tsize;
    char err[512];
    uint64_t insns;

    setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
    flow_image_init(&img);
    pt_config_init(&cfg);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return usage(0);
        if (!strcmp(a, "--stat")) {
            o.stat = 1;
            continue;
        }
        if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            o.quiet = 1;
            continue;
        }
        if (!strcmp(a, "--event:ip")) {
            o.event_ip = 1;
            continue;
        }
        if (!strcmp(a, "--no-inst"))
            continue;
        if (!strcmp(a, "--all-exec-modes")) {
            o.all_exec_modes = 1;
            continue;
        }
        if (!strcmp(a, "--time")) {
            o.time = 1;
            continue;
        }
        if (!strcmp(a, "--event:time")) {
            o.event_time = 1;
            continue;
        }
        if (!strcmp(a, "--event:tick")) {
            cfg.flags.variant.insn.enable_tick_events = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "libipt_flow: %s: missing argument or unknown option\n", a);
            return usage(2);
        }
        i++;
        if (!strcmp(a, "--pt")) {
            pt = v;
        } else if (!strcmp(a, "--pages")) {
            if (flow_image_add_pages(&img, v) < 0) {
                fprintf(stderr, "libipt_flow: %s\n", img.err);
                return 1;
            }
        } else if (!strcmp(a, "--raw")) {
            if (flow_image_add_raw(&img, v) < 0) {
                fprintf(stderr, "libipt_flow: %s\n", img.err);
                return 1;
            }
        } else if (!strcmp(a, "--filter")) {
            uint64_t lo, hi;
            if (parse_range(v, &lo, &hi) < 0) {
                fprintf(stderr, "libipt_flow: --filter %s: want LO-HI (hex)\n", v);
                return 2;
            }
            cfg.addr_filter.config.ctl.addr0_cfg = 1; /* FilterEn */
            cfg.addr_filter.addr0_a = lo;
            cfg.addr_filter.addr0_b = hi;
        } else if (!strcmp(a, "--cpu")) {
            unsigned f, m;
            if (sscanf(v, "%u/%u", &f, &m) != 2) {
                fprintf(stderr, "libipt_flow: --cpu %s: want F/M\n", v);
                return 2;
            }
            cfg.cpu.vendor = pcv_intel;
            cfg.cpu.family = (uint16_t)f;
            cfg.cpu.model = (uint8_t)m;
            if (pt_cpu_errata(&cfg.errata, &cfg.cpu) < 0) {
                fprintf(stderr, "libipt_flow: --cpu %s: unknown cpu\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--mtc-freq") || !strcmp(a, "--nom-freq") ||
                   !strcmp(a, "--cpuid-0x15.eax") || !strcmp(a, "--cpuid-0x15.ebx")) {
            char *end;
            unsigned long n = strtoul(v, &end, 0);
            if (*end) {
                fprintf(stderr, "libipt_flow: %s %s: want a number\n", a, v);
                return usage(2);
            }
            if (!strcmp(a, "--mtc-freq"))
                cfg.mtc_freq = (uint8_t)n;
            else if (!strcmp(a, "--nom-freq"))
                cfg.nom_freq = (uint8_t)n;
            else if (!strcmp(a, "--cpuid-0x15.eax"))
                cfg.cpuid_0x15_eax = (uint32_t)n;
            else
                cfg.cpuid_0x15_ebx = (uint32_t)n;
        } else if (!strcmp(a, "--mode")) {
            if (strcmp(v, "16") && strcmp(v, "32") && strcmp(v, "64")) {
                fprintf(stderr, "libipt_flow: --mode %s: want 16, 32 or 64\n", v);
                return 2;
            }
        } else {
            fprintf(stderr, "libipt_flow: unknown option %s\n", a);
            return usage(2);
        }
    }
    if (!pt) {
        fprintf(stderr, "libipt_flow: --pt FILE is required\n");
        return usage(2);
    }
    if (flow_read_file(pt, &trace, &tsize, err, sizeof(err)) < 0) {
        fprintf(stderr, "libipt_flow: %s\n", err);
        return 1;
    }
    cfg.begin = trace;
    cfg.end = trace + tsize;
    d = pt_insn_alloc_decoder(&cfg);
    if (!d) {
        fprintf(stderr, "libipt_flow: cannot allocate the decoder\n");
        return 1;
    }
    pt_image_set_callback(pt_insn_get_image(d), read_mem, &img);
    insns = decode(d, &o);
    if (o.stat)
        printf("insn: %" PRIu64 ".\n", insns);
    pt_insn_free_decoder(d);
    free(trace);
    flow_image_free(&img);
    return 0;
}
