/* `ptboot flow [options] --pt FILE`: the instruction flow of a trace, in
 * libipt ptxed's output format (docs/flow.md): with --no-inst one IP per
 * instruction, bracketed events and "[offset, ip: kind: message]" error
 * lines, so scripts written around ptxed keep working; without --no-inst
 * each IP is followed by the instruction, disassembled by Zydis. Errors
 * never end the run: the decoder reports, resynchronises at the next PSB
 * and continues. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "decoder/ptd_flow.h"
#include "host/commands.h"
#include "host/flow_opts.h"

struct out {
    int no_inst, quiet, event_ip, offset, stat, stat_blocks, att;
    uint64_t insns, blocks;
    ZydisDecoder zdec[3];
    ZydisFormatter zfmt;
};

static const char hexd[] = "0123456789abcdef";

static char *hex16(char *p, uint64_t v)
{
    for (int i = 15; i >= 0; i--) {
        p[i] = hexd[v & 15];
        v >>= 4;
    }
    return p + 16;
}

static const char *mode_name(unsigned m)
{
    switch (m) {
    case PTD_EXEC_MODE_16: return "16-bit";
    case PTD_EXEC_MODE_32: return "32-bit";
    case PTD_EXEC_MODE_64: return "64-bit";
    default: return "unknown";
    }
}

static void print_insn(struct out *o, const struct ptd_flow_insn *in, uint64_t off)
{
    char line[256], *p = line;
    if (o->offset) {
        p = hex16(p, off);
        *p++ = ' ';
        *p++ = ' ';
    }
    if (in->speculative) {
        *p++ = '?';
        *p++ = ' ';
    }
    p = hex16(p, in->ip);
    if (!o->no_inst) {
        ZydisDecodedInstruction zi;
        ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
        unsigned m = in->mode < 3 ? in->mode : PTD_EXEC_MODE_64;
        *p++ = ' ';
        *p++ = ' ';
        if (ZYAN_SUCCESS(ZydisDecoderDecodeFull(&o->zdec[m], in->raw, in->size, &zi, ops)) &&
            ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&o->zfmt, &zi, ops, zi.operand_count_visible,
                                                         p, (size_t)(line + sizeof(line) - p - 2),
                                                         in->ip, ZYAN_NULL))) {
            p += strlen(p);
        } else {
            for (unsigned i = 0; i < in->size; i++) {
                *p++ = hexd[in->raw[i] >> 4];
                *p++ = hexd[in->raw[i] & 15];
                *p++ = ' ';
            }
            memcpy(p, "(bad)", 5);
            p += 5;
        }
    }
    *p++ = '\n';
    fwrite(line, 1, (size_t)(p - line), stdout);
}

static void print_event(const struct out *o, const struct ptd_event *ev, uint64_t off)
{
    int nip = (ev->flags & PTD_EVF_IP_SUPPRESSED) != 0;
    printf("[");
    if (o->offset)
        printf("%016" PRIx64 "  ", off);
    switch (ev->type) {
    case PTD_EV_ENABLED:
        printf("%s", (ev->flags & PTD_EVF_RESUMED) ? "resumed" : "enabled");
        if (o->event_ip)
            printf(", ip: %016" PRIx64, ev->ip);
        break;
    case PTD_EV_DISABLED:
        printf("disabled");
        if (o->event_ip && !nip)
            printf(", ip: %016" PRIx64, ev->ip);
        break;
    case PTD_EV_ASYNC_DISABLED:
        printf("disabled");
        if (o->event_ip) {
            printf(", at: %016" PRIx64, ev->from);
            if (!nip)
                printf(", ip: %016" PRIx64, ev->ip);
        }
        break;
    case PTD_EV_ASYNC_BRANCH:
        printf("interrupt");
        if (o->event_ip) {
            printf(", from: %016" PRIx64, ev->from);
            if (!nip)
                printf(", to: %016" PRIx64, ev->ip);
        }
        break;
    case PTD_EV_PAGING:
    case PTD_EV_ASYNC_PAGING:
        printf("paging, cr3: %016" PRIx64 "%s", ev->value, (ev->flags & PTD_EVF_NR) ? ", nr" : "");
        if (ev->type == PTD_EV_ASYNC_PAGING && o->event_ip)
            printf(", ip: %016" PRIx64, ev->ip);
        break;
    case PTD_EV_OVERFLOW:
        printf("overflow");
        if (o->event_ip && !nip)
            printf(", ip: %016" PRIx64, ev->ip);
        break;
    case PTD_EV_EXEC_MODE:
        printf("exec mode: %s", mode_name(ev->mode));
        if (o->event_ip && !nip)
            printf(", ip: %016" PRIx64, ev->ip);
        break;
    case PTD_EV_TSX:
        if (ev->flags & PTD_EVF_ABORTED)
            printf("aborted");
        else if (ev->flags & PTD_EVF_SPECULATIVE)
            printf("begin transaction");
        else
            printf("committed");
        if (o->event_ip && !nip)
            printf(", ip: %016" PRIx64, ev->ip);
        break;
    case PTD_EV_STOP:
        printf("stopped");
        break;
    case PTD_EV_VMCS:
    case PTD_EV_ASYNC_VMCS:
        printf("vmcs, base: %016" PRIx64, ev->value);
        if (ev->type == PTD_EV_ASYNC_VMCS && o->event_ip)
            printf(", ip: %016" PRIx64, ev->ip);
        break;
    case PTD_EV_EXSTOP:
        printf("exstop");
        if (o->event_ip && !nip)
            printf(", ip: %016" PRIx64, ev->ip);
        break;
    case PTD_EV_MWAIT:
        printf("mwait %" PRIx32 " %" PRIx32, (uint32_t)ev->value, ev->aux);
        if (o->event_ip && !nip)
            printf(", ip: %016" PRIx64, ev->ip);
        break;
    case PTD_EV_PWRE:
        printf("pwre c%u.%u", (ev->a + 1u) & 0xf, (ev->b + 1u) & 0xf);
        if (ev->flags & PTD_EVF_HW)
            printf(" hw");
        break;
    case PTD_EV_PWRX:
        printf("pwrx ");
        if (ev->aux & PTD_PKTF_WR_INT)
            printf("int: ");
        if (ev->aux & PTD_PKTF_WR_STORE)
            printf("st: ");
        if (ev->aux & PTD_PKTF_WR_HW)
            printf("hw: ");
        printf("c%u (c%u)", (ev->a + 1u) & 0xf, (ev->b + 1u) & 0xf);
        break;
    case PTD_EV_PTWRITE:
        printf("ptwrite: %" PRIx64, ev->value);
        if (o->event_ip && !nip)
            printf(", ip: %016" PRIx64, ev->ip);
        break;
    case PTD_EV_TICK:
        printf("tick");
        break;
    case PTD_EV_CBR:
        printf("cbr: %" PRIx64, ev->value);
        break;
    case PTD_EV_MNT:
        printf("mnt: %" PRIx64, ev->value);
        break;
    default:
        printf("event %u", ev->type);
        break;
    }
    printf("]\n");
}

static void diagnose(const char *kind, const struct ptd_flow *f, uint64_t ip, int err)
{
    printf("[%" PRIx64 ", %" PRIx64 ": %s: %s]\n", ptd_flow_offset(f), ip, kind, ptd_qry_errstr(err));
}

static int drain(struct ptd_flow *f, struct out *o, int st)
{
    while (st >= 0 && (st & PTD_ST_EVENT)) {
        struct ptd_event ev;
        uint64_t off = ptd_flow_offset(f);
        st = ptd_flow_event(f, &ev);
        if (st < 0)
            return st;
        if (!o->quiet && !(ev.flags & PTD_EVF_STATUS_UPDATE))
            print_event(o, &ev, off);
    }
    return st;
}

static void run(struct ptd_flow *f, struct out *o)
{
    uint64_t sync = 0;
    int have_sync = 0;
    uint8_t last_iclass = PTD_ICLASS_COND_JUMP;

    for (;;) {
        struct ptd_flow_insn insn;
        int st;

        insn.ip = 0;
        st = ptd_flow_sync_forward(f);
        if (st < 0) {
            uint64_t off;
            if (st == -PTD_ERR_EOS)
                break;
            diagnose("sync error", f, insn.ip, st);
            off = ptd_flow_offset(f);
            if (have_sync && off <= sync)
                break;
            sync = off;
            have_sync = 1;
            continue;
        }
        for (;;) {
            uint64_t off = 0;
            st = drain(f, o, st);
            if (st < 0)
                break;
            if (st & PTD_ST_EOS) {
                if (!(st & PTD_ST_IP_SUPPRESSED) && !o->quiet)
                    printf("[end of trace]\n");
                st = -PTD_ERR_EOS;
                break;
            }
            if (o->offset)
                off = ptd_flow_offset(f);
            st = ptd_flow_next(f, &insn);
            if (insn.iclass != PTD_FLOW_ICLASS_ERROR) {
                if (!o->quiet)
                    print_insn(o, &insn, off);
                o->insns++;
                if (last_iclass != PTD_ICLASS_OTHER)
                    o->blocks++;
                last_iclass = insn.iclass;
            }
            if (st < 0)
                break;
        }
        if (st == 0)
            st = -PTD_ERR_INTERNAL;
        if (st == -PTD_ERR_EOS)
            break;
        diagnose("error", f, insn.ip, st);
    }
}

static void usage(FILE *to)
{
    fprintf(to,
        "usage: ptboot flow [options] --pt FILE\n"
        "Instruction flow of an Intel PT trace, as libipt's ptxed prints it.\n"
        "Code:\n"
        "  --pages PREFIX             PREFIX.dump (4 KiB pages) + PREFIX.addr (u64 LE per page)\n"
        "  --raw FILE[:FROM[-TO]]:BASE  load FILE (bytes FROM..TO) at BASE (repeatable)\n"
        "Configuration:\n"
        "  --filter LO-HI             FilterEn address range (hex, repeatable up to 4)\n"
        "  --filter:addrN_cfg/_a/_b V as IA32_RTIT_CTL.ADDRn_CFG and IA32_RTIT_ADDRn_A/B\n"
        "  --cpu F/M|none|auto        the CPU the trace came from (errata)\n"
        "  --mode 16|32|64            execution mode before the first MODE.Exec\n"
        "Output:\n"
        "  --no-inst                  IPs only (no disassembly)\n"
        "  --att                      AT&T syntax for the disassembly\n"
        "  --offset                   trace offset before each line\n"
        "  --event:ip                 event IPs\n"
        "  --quiet, -q                no flow lines\n"
        "  --stat, --stat:insn        instruction count at the end; --stat:blocks also blocks\n"
        "  --check                    accepted (the flow layer always checks consistency)\n"
        "Accepted for ptxed compatibility, no effect (timing is not decoded yet):\n"
        "  --time --time-delta --tcal --no-tcal --event:tick --event:time --event:iflags\n"
        "  --block:show-blocks --block:end-on-call --insn-decoder --block-decoder\n"
        "  --resync-on-error (always on) --cpuid-0x15.eax N --cpuid-0x15.ebx N\n"
        "  --mtc-freq N --nom-freq N\n"
        "Exit status: 0 decoded (decode errors are reported in the flow), 1 bad input\n"
        "file, 2 bad usage.\n");
}

int host_cmd_flow(int argc, char **argv)
{
    static char obuf[1 << 20];
    struct flow_opts fo;
    struct out o;
    struct ptd_flow *f;
    int rc = 0;

    memset(&o, 0, sizeof(o));
    flow_opts_init(&fo);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = flow_opts_parse(&fo, argc, argv, &i, "ptboot flow");
        if (r < 0) {
            flow_opts_free(&fo);
            return strncmp(a, "--pages", 7) && strncmp(a, "--raw", 5) ? 2 : 1;
        }
        if (r > 0)
            continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            flow_opts_free(&fo);
            return 0;
        } else if (!strcmp(a, "--no-inst")) {
            o.no_inst = 1;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            o.quiet = 1;
        } else if (!strcmp(a, "--event:ip")) {
            o.event_ip = 1;
        } else if (!strcmp(a, "--offset")) {
            o.offset = 1;
        } else if (!strcmp(a, "--att")) {
            o.att = 1;
        } else if (!strcmp(a, "--stat") || !strcmp(a, "--stat:insn")) {
            o.stat = 1;
        } else if (!strcmp(a, "--stat:blocks")) {
            o.stat = 1;
            o.stat_blocks = 1;
        } else if (!strcmp(a, "--check") || !strcmp(a, "--time") || !strcmp(a, "--time-delta") ||
                   !strcmp(a, "--tcal") || !strcmp(a, "--no-tcal") || !strcmp(a, "--event:tick") ||
                   !strcmp(a, "--event:time") || !strcmp(a, "--event:iflags") ||
                   !strcmp(a, "--block:show-blocks") || !strcmp(a, "--block:end-on-call") ||
                   !strcmp(a, "--insn-decoder") || !strcmp(a, "--block-decoder") ||
                   !strcmp(a, "--resync-on-error")) {
            /* accepted, see --help */
        } else if (!strcmp(a, "--cpuid-0x15.eax") || !strcmp(a, "--cpuid-0x15.ebx") ||
                   !strcmp(a, "--mtc-freq") || !strcmp(a, "--nom-freq")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "ptboot flow: %s needs an argument\n", a);
                flow_opts_free(&fo);
                return 2;
            }
            i++;
        } else {
            fprintf(stderr, "ptboot flow: unknown option '%s' (see ptboot flow --help)\n", a);
            flow_opts_free(&fo);
            return 2;
        }
    }
    if (!fo.pt) {
        fprintf(stderr, "ptboot flow: --pt FILE is required (see ptboot flow --help)\n");
        flow_opts_free(&fo);
        return 2;
    }
    if (flow_opts_finish(&fo, "ptboot flow") < 0) {
        flow_opts_free(&fo);
        return 1;
    }
    if (!o.no_inst) {
        ZydisDecoderInit(&o.zdec[PTD_EXEC_MODE_16], ZYDIS_MACHINE_MODE_LEGACY_16, ZYDIS_STACK_WIDTH_16);
        ZydisDecoderInit(&o.zdec[PTD_EXEC_MODE_32], ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32);
        ZydisDecoderInit(&o.zdec[PTD_EXEC_MODE_64], ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
        ZydisFormatterInit(&o.zfmt, o.att ? ZYDIS_FORMATTER_STYLE_ATT : ZYDIS_FORMATTER_STYLE_INTEL);
    }
    f = malloc(sizeof(*f));
    if (!f) {
        fprintf(stderr, "ptboot flow: out of memory\n");
        flow_opts_free(&fo);
        return 1;
    }
    setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
    ptd_flow_init(f, &fo.cfg);
    run(f, &o);
    if (o.stat) {
        printf("insn: %" PRIu64 ".\n", o.insns);
        if (o.stat_blocks)
            printf("blocks: %" PRIu64 ".\n", o.blocks);
    }
    fflush(stdout);
    free(f);
    flow_opts_free(&fo);
    return rc;
}
