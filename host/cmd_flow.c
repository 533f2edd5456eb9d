/* `ptboot flow [options] --pt FILE`: the instruction flow of a trace, in
 * libipt ptxed's output format (docs/flow.md): with --no-inst one IP per
 * instruction, bracketed events and "[offset, ip: kind: message]" error
 * lines, so scripts written around ptxed keep working; without --no-inst
 * each IP is followed by the instruction, disassembled by Zydis. Errors
 * never end the run: the decoder reports, resynchronises at the next PSB
 * and continues. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_flow.h"
#include "decoder/ptd_fmt_flow.h"
#include "decoder/ptd_opts.h"
#include "decoder/ptd_time.h"
#include "host/capture.h"
#include "host/commands.h"
#include "host/decode_opts.h"
#include "host/disasm.h"
#include "host/flow_hints.h"
#include "host/flow_opts.h"
#include "host/progress.h"
#include "host/sym/names_opts.h"

struct out {
    int no_inst, att, cpu_unknown;
    struct ptd_flow_opts fo; /* ptxed's words (decoder/ptd_opts.h), --tail */
    struct names *names;     /* --sym: a func+0xOFF column (host/sym/names.h) */
};

/* Output: lines are formatted straight into this buffer and written in
 * chunks (one fwrite per line cost as much as formatting the line). 64 KiB:
 * a larger buffer writes no faster, and each of its pages costs a page
 * fault the first time it is filled. */
#define OUT_BUF_BYTES    (64u << 10)
#define NAMES_COLUMN_MAX 320 /* --sym's column */
#define OUT_LINE_MAX     (PTD_FMT_FLOW_LINE_MAX + NAMES_COLUMN_MAX + 192)

/* ptxed's loop, through the same driver the UEFI app runs
 * (decoder/ptd_fmt_flow.h), so the two print the same lines; the host only
 * adds disassembly to instruction lines. */
static void run(struct ptd_flow *f, struct out *o, struct ptd_flow_lines *L)
{
    static char buf[OUT_BUF_BYTES];
    size_t pos = 0;
    enum ptd_flow_line_kind kind;
    int n;

    struct progress pr;
    ptd_flow_lines_init(L, f, o->fo.fmt);
    L->cpu_unknown = (uint8_t)o->cpu_unknown;
    progress_start(&pr, "ptboot flow",
                   f->q.pkt.end > f->q.pkt.begin ? (uint64_t)(f->q.pkt.end - f->q.pkt.begin) : 0);
    while ((n = ptd_flow_lines_next(L, buf + pos, PTD_FMT_FLOW_LINE_MAX, &kind)) > 0) {
        char *line = buf + pos, *p = line + n;
        if (pr.tty) /* the offset only for a terminal's progress line */
            progress_update(&pr, ptd_flow_offset(f));
        if (kind == PTD_FLOW_LINE_INSN && o->names)
            p = names_flow_column(o->names, L->insn.ip, p, p + NAMES_COLUMN_MAX);
        if (kind == PTD_FLOW_LINE_INSN && !o->no_inst)
            p = host_disasm_append(&L->insn, p, line + OUT_LINE_MAX - 2);
        *p++ = '\n';
        pos = (size_t)(p - buf);
        if (sizeof(buf) - pos < OUT_LINE_MAX) {
            fwrite(buf, 1, pos, stdout);
            pos = 0;
        }
    }
    fwrite(buf, 1, pos, stdout);
    progress_end(&pr);
}

static void usage(FILE *to)
{
    fprintf(
        to,
        "usage: ptboot flow [options] --pt FILE\n"
        "       ptboot flow [options] --capture DIR\n"
        "Instruction flow of an Intel PT trace, as libipt's ptxed prints it.\n"
        "Capture (docs/capture-files.md):\n"
        "  --capture DIR              DIR/trace.pt, its code snapshot, CPU, timing and filters\n"
        "                             from DIR/sideband.txt (options after it override)\n"
        "  --libipt-args              print the libipt ptxed options for the capture and exit\n"
        "Code:\n"
        "  --pages PREFIX             PREFIX.dump (4 KiB pages) + PREFIX.addr (u64 LE per page)\n"
        "  --raw FILE[:FROM[-TO]]:BASE  load FILE (bytes FROM..TO) at BASE (repeatable)\n"
        "  --elf FILE[:BASE]          an ELF's loadable segments (moved to BASE) (repeatable)\n"
        "  --pe FILE[:BASE]           a PE/COFF image's sections at its ImageBase or BASE\n"
        "Names:\n"
        "  --sym                      a function+0xOFF column after each instruction's IP\n"
        "  --symbols PATH             debug files (a file, or a directory searched) for --sym\n"
        "Configuration:\n"
        "  --filter LO-HI             FilterEn address range (hex, repeatable up to 4)\n"
        "  --filter:addrN_cfg/_a/_b V as IA32_RTIT_CTL.ADDRn_CFG and IA32_RTIT_ADDRn_A/B\n"
        "  --cpu F/M[/S]|none         the CPU the trace came from (errata; one libipt does\n"
        "                             not know: a config error line, no errata)\n"
        "  --mode 16|32|64            execution mode before the first MODE.Exec\n"
        "  --no-cache                 no instruction or block cache (blocks then end only\n"
        "                             where trace is needed, as libipt's without one)\n"
        "  --libipt-pwre              PWRE's HW flag from bit 3, as libipt (SDM: bit 7)\n"
        "Decoder (as ptxed; docs/flow.md):\n"
        "  --block-decoder            blocks (the default), --insn-decoder one instruction at a "
        "time\n"
        "  --block:end-on-call        a block also ends after a direct call\n"
        "  --block:end-on-jump        ... after a direct jump\n"
        "  --block:keep-tcal-on-ovf, --insn:keep-tcal-on-ovf  keep the time calibration over OVF\n"
        "  --resync-on-error          after an error resume at the next event that tells where\n"
        "                             the flow is, not at the next PSB\n"
        "  --event:tick               [tick] events where the time moves at a branch\n"
        "  --event:iflags             [interrupts enabled/disabled] events (Event Trace)\n"
        "Output:\n"
        "  --no-inst                  IPs only (no disassembly)\n"
        "  --att                      AT&T syntax for the disassembly\n"
        "  --offset                   trace offset before each line\n"
        "  --event:ip                 event IPs\n"
        "  --quiet, -q                no flow lines\n"
        "  --tail                     after the trace's end, the instructions the code alone\n"
        "                             says ran next, after a [tail] line (not traced: inferred),\n"
        "                             and [spin: LO-HI] when they loop for ever\n"
        "  --stat                     counts at the end: instructions, and blocks with the\n"
        "                             block decoder; --stat:insn, --stat:blocks only those\n"
        "  --block:show-blocks        [block] before each block ([block <n hex>] with --stat)\n"
        "  --check                    accepted (the flow layer always checks consistency)\n"
        "  --time                     TSC of the last event before each instruction (as ptxed)\n"
        "  --event:time               TSC in event lines, when known\n"
        "Timing (as ptxed):\n"
        "  --mtc-freq N --nom-freq N --cpuid-0x15.eax N --cpuid-0x15.ebx N\n"
        "Accepted for ptdump compatibility, no effect:\n"
        "  --time-delta --tcal --no-tcal\n"
        "Exit status: 0 decoded (decode errors are reported in the flow), 1 bad input\n"
        "file, 2 bad usage.\n");
}

int host_cmd_flow(int argc, char **argv)
{
    struct flow_opts fo;
    struct out o;
    struct ptd_flow *f;
    int rc = 0;

    static struct ptd_time_config tcfg;
    static struct host_capture cap;
    static struct names names;
    int libipt_args = 0, sym = 0;
    char cerr[4096 + 600];
    memset(&o, 0, sizeof(o));
    memset(&tcfg, 0, sizeof(tcfg));
    flow_opts_init(&fo);
    names_init(&names);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = host_decode_opts_take(&fo, &tcfg, &cap, argc, argv, &i, "ptboot flow");
        if (r == 0)
            r = names_opts_take(&names, argc, argv, &i, "ptboot flow");
        if (r < 0) {
            flow_opts_free(&fo);
            names_free(&names);
            return -r;
        }
        if (r > 0)
            continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            flow_opts_free(&fo);
            return 0;
        } else if (!strcmp(a, "--libipt-args")) {
            libipt_args = 1;
        } else if (!strcmp(a, "--no-inst")) {
            o.no_inst = 1;
        } else if (!strcmp(a, "--sym")) {
            sym = 1;
        } else if (!strcmp(a, "--tail")) {
            o.fo.fmt |= PTD_FMT_FLOW_TAIL;
        } else if (!strcmp(a, "--att")) {
            o.att = 1;
        } else if (ptd_opts_flow_word(&o.fo, a)) {
            /* ptxed's word (decoder/ptd_opts.c: the target takes the same) */
        } else if (!strcmp(a, "--time-delta") || !strcmp(a, "--tcal") || !strcmp(a, "--no-tcal")) {
            /* accepted, see --help */
        } else {
            fprintf(stderr, "ptboot flow: unknown option '%s' (see ptboot flow --help)\n", a);
            flow_opts_free(&fo);
            return 2;
        }
    }
    if (!fo.pt) {
        fprintf(stderr,
                "ptboot flow: --pt FILE is required, or --capture DIR (see ptboot flow --help)\n");
        flow_opts_free(&fo);
        return 2;
    }
    if (libipt_args) {
        int r = cap.sb ? host_capture_print_libipt_args(NULL, &cap, stdout, cerr, sizeof cerr) : -1;
        if (r < 0)
            fprintf(stderr, "ptboot flow: --libipt-args: %s\n",
                    cap.sb ? cerr : "needs --capture DIR");
        host_capture_free(&cap);
        flow_opts_free(&fo);
        return r < 0 ? 1 : 0;
    }
    bool disasm = !o.no_inst && !(o.fo.fmt & PTD_FMT_FLOW_QUIET);
    /* the block cache holds what the walk needs; a decoded-instruction
     * cache would only cost its allocation here (docs/performance.md) */
    fo.no_insn_cache = !disasm;
    if (flow_opts_finish(&fo, "ptboot flow") < 0) {
        flow_opts_free(&fo);
        return 1;
    }
    if (!cap.sb)
        flow_hint_no_code(&fo, "ptboot flow", stderr);
    if (disasm && host_disasm_open(o.att, cerr, sizeof cerr) < 0) {
        fprintf(stderr, "ptboot flow: %s\n", cerr);
        flow_opts_free(&fo);
        host_capture_free(&cap);
        return 1;
    }
    if (sym) {
        if (names_opts_finish(&names, &cap, &fo, NULL, 0) < 0) {
            fprintf(stderr, "ptboot flow: out of memory\n");
            flow_opts_free(&fo);
            names_free(&names);
            return 1;
        }
        o.names = &names;
    }
    f = malloc(sizeof(*f));
    if (!f) {
        fprintf(stderr, "ptboot flow: out of memory\n");
        flow_opts_free(&fo);
        return 1;
    }
    fo.cfg.flags |= ptd_opts_flow_flags(&o.fo);
    /* the disassembler needs the bytes; without it the driver walks a
     * block's instructions by their lengths alone (docs/performance.md) */
    if (disasm)
        fo.cfg.flags |= PTD_FLOW_F_RAW;
    /* time is tracked either way (libipt reports its errors); the
     * configuration makes MTC and CYC count */
    tcfg.errata = fo.cfg.errata;
    fo.cfg.time = &tcfg;
    ptd_flow_init(f, &fo.cfg);
    o.cpu_unknown = fo.cpu_unknown;
    struct ptd_flow_lines lines;
    run(f, &o, &lines);
    if (o.fo.stat) {
        bool insns, blocks;
        ptd_opts_flow_stats(&o.fo, &insns, &blocks);
        if (insns)
            printf("insn: %" PRIu64 ".\n", lines.insns);
        if (blocks)
            printf("blocks:\t%" PRIu64 ".\n", lines.blocks);
        if (o.fo.fmt & PTD_FMT_FLOW_TAIL)
            printf("tail: %" PRIu64 " (%s).\n", lines.tail_insns,
                   ptd_tail_end_name(lines.tail.end));
    }
    fflush(stdout);
    flow_hint_outside(&fo, lines.insns, "ptboot flow", stderr);
    free(f);
    if (sym)
        names_report(&names, stderr, "ptboot flow");
    names_free(&names);
    flow_opts_free(&fo);
    host_capture_free(&cap);
    return rc;
}
