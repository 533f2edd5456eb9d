/* libptd text formatting of an instruction flow: the lines libipt's ptxed
 * prints with --no-inst (one IP per instruction, bracketed events, error
 * lines with trace offset and IP), into caller buffers, without libc. The
 * host CLI (`ptboot flow`) and the UEFI app (`ptboot.efi flow`) both run
 * the same driver, so their output is the same line for line.
 *
 * Driver (ptxed's decode loop, block decoder or instruction decoder, one
 * line per call, resumable):
 *
 *     struct ptd_flow f;                // configured with ptd_flow_init()
 *     struct ptd_flow_lines L;
 *     char line[PTD_FMT_FLOW_LINE_MAX];
 *     enum ptd_flow_line_kind kind;
 *     ptd_flow_lines_init(&L, &f, PTD_FMT_FLOW_EVENT_IP);
 *     while ((n = ptd_flow_lines_next(&L, line, sizeof line, &kind)) > 0)
 *         print(line);                  // kind == PTD_FLOW_LINE_INSN: L.insn
 *                                       // holds the instruction (bytes, mode)
 *     // n == 0: the trace is done; n < 0: -PTD_ERR_NOSPC
 *     // L.insns, L.blocks: ptxed's --stat counts
 *
 * Errors in the trace never end the loop: they become error lines, and
 * decoding resumes at the next PSB (or, with PTD_FMT_FLOW_RESYNC, at the
 * next event that shows where the flow is, as ptxed's --resync-on-error). */
#ifndef PTD_FMT_FLOW_H
#define PTD_FMT_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_flow.h"
#include "decoder/ptd_tail.h"

/* Longest line, NUL included (an event with every field). */
#define PTD_FMT_FLOW_LINE_MAX 192

/* ptxed's options that change the lines. */
enum {
    PTD_FMT_FLOW_OFFSET = 1u << 0,      /* --offset: trace offset first */
    PTD_FMT_FLOW_EVENT_IP = 1u << 1,    /* --event:ip: IPs in event lines */
    PTD_FMT_FLOW_QUIET = 1u << 2,       /* --quiet: only error lines */
    PTD_FMT_FLOW_TIME = 1u << 3,        /* --time: TSC before each instruction */
    PTD_FMT_FLOW_EVENT_TIME = 1u << 4,  /* --event:time: TSC in event lines */
    PTD_FMT_FLOW_INSN = 1u << 5,        /* --insn-decoder: one instruction at a
                                           * time (offsets, error IPs as ptxed's
                                           * instruction decoder loop) */
    PTD_FMT_FLOW_SHOW_BLOCKS = 1u << 6, /* --block:show-blocks: "[block]" */
    PTD_FMT_FLOW_STAT = 1u << 7,        /* --stat given: "[block <count hex>]" */
    PTD_FMT_FLOW_RESYNC = 1u << 8,      /* --resync-on-error */
    /* --tail: where the trace ends, the static path after its last packet
     * (decoder/ptd_tail.h): "[tail]", the inferred instructions, and
     * "[spin: <lo>-<hi>]" when they loop for ever; not a ptxed option */
    PTD_FMT_FLOW_TAIL = 1u << 12,
};

/* One instruction: "[<offset>  ][<time>  ][? ]<ip>" (16 hex digits each).
 * As ptxed, <time> is the TSC of the last event decoded (0 before the
 * first). */
int ptd_fmt_flow_insn(char *line, size_t cap, uint32_t flags, const struct ptd_flow_insn *insn,
                      uint64_t offset, uint64_t time);
/* One event: "[[<offset>  ][<tsc>  ]<text>]" as ptxed words it; <tsc> with
 * PTD_FMT_FLOW_EVENT_TIME when the event has one (PTD_EVF_HAS_TSC). */
int ptd_fmt_flow_event(char *line, size_t cap, uint32_t flags, const struct ptd_event *ev,
                       uint64_t offset);
/* An error: "[<offset hex>, <ip hex>: <kind>: <message>]". */
int ptd_fmt_flow_error(char *line, size_t cap, const char *kind, uint64_t offset, uint64_t ip,
                       int err);

enum ptd_flow_line_kind {
    PTD_FLOW_LINE_INSN = 1,
    PTD_FLOW_LINE_EVENT,
    PTD_FLOW_LINE_ERROR,
    PTD_FLOW_LINE_END,   /* "[end of trace]" */
    PTD_FLOW_LINE_BLOCK, /* "[block]" */
};

/* IPs of a block found per batch when its instructions are printed */
#define PTD_FMT_FLOW_IPS 32

struct ptd_flow_lines {
    struct ptd_flow *f;
    uint32_t flags;
    int st;        /* status carried between calls */
    uint8_t phase; /* internal */
    uint8_t have_sync;
    uint8_t cpu_unknown;       /* set by the caller: first "[0, 0: config error:
                                  * unknown cpu]", as ptxed for a --cpu it lacks
                                  * errata for */
    uint64_t sync;             /* offset of the last failed sync */
    uint64_t time;             /* the last event's TSC (PTD_FMT_FLOW_TIME) */
    uint64_t offset;           /* the offset printed with the block's instructions */
    struct ptd_flow_block blk; /* the last block (error IPs refer to it) */
    uint64_t walk_ip;          /* the block's next instruction to print */
    uint32_t walk_left;
    /* the IPs after walk_ip, found a batch at a time (ptd_flow_ips_after):
     * ips[ips_k .. ips_n) */
    uint8_t ips_k, ips_n;
    uint64_t ips[PTD_FMT_FLOW_IPS];
    uint32_t hex_hi_of; /* hex_hi: the hex digits of this upper half of an IP */
    uint64_t hex_hi;
    struct ptd_flow_insn insn; /* the last instruction */
    uint64_t insns;            /* instructions decoded */
    uint64_t blocks;           /* blocks decoded (the block decoder's calls) */
    uint64_t errors;           /* error lines */
    uint64_t last_ip;          /* the last instruction decoded (the tail's start) */
    uint8_t last_iclass;       /* and its class */
    /* PTD_FMT_FLOW_TAIL: the tail after the trace's end (not counted in
     * insns); tail.end says why it stopped, tail.spin_lo/hi the loop */
    uint32_t tail_max;   /* bound (0: PTD_TAIL_MAX_DEFAULT); set after init */
    uint8_t tail_phase;  /* internal */
    uint64_t tail_insns; /* instructions inferred */
    struct ptd_tail tail;
};

void ptd_flow_lines_init(struct ptd_flow_lines *L, struct ptd_flow *f, uint32_t flags);
/* The next line into line[0..cap) with its kind: returns its length (> 0),
 * 0 at the end, or -PTD_ERR_NOSPC when cap < PTD_FMT_FLOW_LINE_MAX. */
int ptd_flow_lines_next(struct ptd_flow_lines *L, char *line, size_t cap,
                        enum ptd_flow_line_kind *kind);

/* Internal, shared with decoder/ptd_fmt_tail.c: the trace ended with
 * status or error st; the tail's lines (0 when none are left). */
void ptd_flow_lines_tail_begin(struct ptd_flow_lines *L, int st);
int ptd_flow_lines_tail(struct ptd_flow_lines *L, char *line, size_t cap,
                        enum ptd_flow_line_kind *kind);

#endif
