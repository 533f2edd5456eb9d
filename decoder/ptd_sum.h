/* libptd decode summaries: what a trace says about the code that ran, in a
 * few hundred lines of text instead of one line per instruction, so that it
 * fits through a 115200-baud serial console (docs/summary.md).
 *
 *   - call tree: functions by entry address as module+0xOFF, calls and
 *     returns followed on a bounded shadow stack, counts, instructions
 *     (inclusive/exclusive) and, with timing packets, TSC ticks;
 *   - instructions (and time) per image and per function (top N);
 *   - hottest basic blocks and edges (top N);
 *   - the last N block transitions before the trace ended;
 *   - decode errors (trace offset, what was skipped), overflows, gaps.
 *
 * It runs on top of the flow layer (decoder/ptd_flow.h, block by block)
 * and keeps its tables in an arena the caller hands in; when the arena is
 * small it counts what did not fit and says so. No allocation, no libc, no
 * global state; every loop is bounded by the trace or by a table size.
 *
 * Usage (host and target run the same driver):
 *
 *     struct ptd_sum s;                       // sizeof: PTD_SUM_STATE_SIZE
 *     struct ptd_sum_config c = { .modules = mods, .nmodules = n,
 *         .arena = buf, .arena_size = PTD_SUM_ARENA_SUGGESTED,
 *         .line = print_line, .ctx = con };   // other fields 0: defaults
 *     ptd_flow_init(&f, &fcfg);
 *     st = ptd_sum_run(&s, &c, &f);           // decode to the end, print
 *
 * or, to bound the work per call (a watchdog, a progress dot):
 *
 *     ptd_sum_init(&s, &c);
 *     while (ptd_sum_decode(&s, &f, 100000) > 0) tick();
 *     ptd_sum_print(&s);
 *     st = ptd_sum_stats(&s);
 */
#ifndef PTD_SUM_H
#define PTD_SUM_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_flow.h"

/* An image the capture recorded (loaded module): code in [base, base+size). */
struct ptd_sum_module {
    uint64_t base, size;
    const char *name; /* NUL-terminated; printed up to PTD_SUM_NAME_MAX */
};
#define PTD_SUM_NAME_MAX 40

/* One output line, NUL-terminated, without a newline (len excludes NUL). */
typedef void (*ptd_sum_line_fn)(void *ctx, const char *line, size_t len);

/* Longest line, NUL included. */
#define PTD_SUM_LINE_MAX 192

/* Defaults (a config field of 0 takes these). */
#define PTD_SUM_TOP_DEFAULT           20  /* top N functions, blocks, edges, images */
#define PTD_SUM_LAST_DEFAULT          32  /* last N block transitions */
#define PTD_SUM_STACK_DEFAULT         256 /* shadow stack depth */
#define PTD_SUM_TREE_DEPTH_DEFAULT    24  /* deeper calls fold into the node at this depth */
#define PTD_SUM_TREE_LINES_DEFAULT    400 /* call tree lines printed */
#define PTD_SUM_TREE_PERMILLE_DEFAULT 2   /* tree nodes under 0.2% of the insns: folded */
#define PTD_SUM_ERRORS_KEPT           16  /* decode errors listed one by one */
/* Time resolution: time per function adds up the ticks by which the
 * clock moved, each step shared among the blocks since the step before by
 * their instructions (struct ptd_sum_spread). When the clock moved fewer
 * than PTD_SUM_TIME_MIN_STEPS times, or less often than once in
 * PTD_SUM_TIME_BLOCKS_PER_STEP blocks (a TSC now and then, no MTC or CYC
 * between), time per function is little more than its instructions over
 * again, or chance: the summary says so and ranks functions by
 * instructions. */
#define PTD_SUM_TIME_MIN_STEPS       8
#define PTD_SUM_TIME_BLOCKS_PER_STEP 32

/* Optional naming of addresses (a host with the build's debug files):
 * writes the name of ip at buf, NUL-terminated, at most cap - 1
 * characters, and returns its length; 0 keeps module+0xOFF. */
typedef size_t (*ptd_sum_name_fn)(void *ctx, uint64_t ip, char *buf, size_t cap);

/* Optional observer of the shadow stack as the summary keeps it (a host
 * export builds timelines and flame graphs from it, with exactly the
 * summary's calls): every frame entered and left, the instructions run on
 * top of the stack, and the marks (errors, overflows, enables, disables). */
enum ptd_sum_obs_type {
    PTD_SUM_OBS_PUSH,  /* a frame entered: entry, from, fkind; depth after */
    PTD_SUM_OBS_POP,   /* frames left: depth is what remains */
    PTD_SUM_OBS_INSNS, /* n instructions of the block at ip, dt ticks, on the top frame */
    PTD_SUM_OBS_MARK,  /* mark (PTD_SUM_TR_*) at offset; ip if known; code: error */
};
struct ptd_sum_obs {
    uint8_t type;         /* enum ptd_sum_obs_type */
    uint8_t fkind;        /* PUSH: enum ptd_sum_fkind */
    uint32_t mark;        /* MARK: PTD_SUM_TR_* */
    uint32_t depth;       /* frames on the stack after the event (untracked deep ones too) */
    uint64_t entry, from; /* PUSH */
    uint64_t ip, n, dt;   /* INSNS (ip also for MARK) */
    uint64_t offset;      /* MARK: trace offset */
    int code;             /* MARK error: its code */
    uint64_t tsc;         /* the time so far (0 without timing packets) */
    uint64_t insns;       /* instructions before this event */
};
typedef void (*ptd_sum_obs_fn)(void *ctx, const struct ptd_sum_obs *ev);

/* Suggested arena: 1 MiB holds about 5,800 blocks, 7,300 edges, 2,700
 * call tree nodes and 3,500 functions (the tables fill to 3/4; a driver
 * under test fits in 64 KiB). Any size works, even 0: what does not fit is
 * counted ("not tracked", in lookups) and the summary says so. The arena
 * holds first the shadow stack (24 bytes a frame), the per-image counters
 * (16 bytes an image), the top-N scratch and the last-N ring (24 bytes an
 * entry): about 7 KiB with the defaults; then the four tables. Totals and
 * errors need no arena. */
#define PTD_SUM_ARENA_SUGGESTED (1u << 20)

struct ptd_sum_config {
    const struct ptd_sum_module *modules;
    size_t nmodules;
    void *arena; /* 8-byte aligned is best; any alignment works */
    size_t arena_size;
    ptd_sum_line_fn line;
    void *ctx;
    unsigned top;           /* 0: PTD_SUM_TOP_DEFAULT */
    unsigned last;          /* 0: PTD_SUM_LAST_DEFAULT */
    unsigned stack_depth;   /* 0: PTD_SUM_STACK_DEFAULT */
    unsigned tree_depth;    /* 0: PTD_SUM_TREE_DEPTH_DEFAULT */
    unsigned tree_lines;    /* 0: PTD_SUM_TREE_LINES_DEFAULT */
    unsigned tree_permille; /* 0: PTD_SUM_TREE_PERMILLE_DEFAULT; 1000+: all */
    unsigned flags;         /* PTD_SUM_F_* */
    ptd_sum_name_fn name;   /* NULL: module+0xOFF */
    void *name_ctx;
    ptd_sum_obs_fn obs; /* NULL: none */
    void *obs_ctx;
};

enum {
    PTD_SUM_F_NO_TREE = 1u << 0, /* leave sections out of the text */
    PTD_SUM_F_NO_BLOCKS = 1u << 1,
    PTD_SUM_F_NO_LAST = 1u << 2,
    PTD_SUM_F_TREE_ALL = 1u << 3, /* every node (no permille folding) */
    /* the static tail after the trace's end (decoder/ptd_tail.h): its
     * branches close the last transitions, marked "(tail)", and a last
     * line says where it ends ("spins at module+offset" for an endless
     * loop); on in hang and recovery reports */
    PTD_SUM_F_TAIL = 1u << 4,
    /* the arena is all zero bytes (a host's calloc: pages the kernel
     * gives zeroed on first touch): its tables are not cleared, so only
     * the slots used become resident, not the whole arena */
    PTD_SUM_F_ARENA_ZEROED = 1u << 5,
};

/* Totals, for the caller's final machine-readable line. */
struct ptd_sum_stats {
    uint64_t bytes;             /* trace size */
    uint64_t insns, blocks;     /* instructions; basic blocks executed */
    uint64_t calls, returns;    /* near calls; returns matched to a call */
    uint64_t irqs;              /* asynchronous branches (interrupts, faults) */
    uint64_t unmatched_returns; /* returns to no caller on the shadow stack */
    uint64_t errors;            /* decode and sync errors */
    uint64_t bytes_skipped;     /* trace bytes skipped resyncing after errors */
    uint64_t overflows, enables, disables;
    uint64_t max_depth;           /* deepest shadow stack seen */
    uint64_t depth_exceeded;      /* calls deeper than the shadow stack */
    uint64_t functions, nodes;    /* distinct functions, call tree nodes */
    uint64_t untracked;           /* table entries that did not fit (all tables) */
    uint64_t tsc_first, tsc_last; /* time span (has_time) */
    uint64_t time_steps;          /* times the clock moved on between blocks */
    uint64_t lines, text_bytes;   /* what ptd_sum_print wrote (newlines included) */
    uint8_t has_time;
    uint8_t time_coarse; /* time too coarse to rank by (see docs/summary.md) */
};

/* ---- internal state (plain data; callers only allocate it) ------------- */

struct ptd_sum_err {
    uint64_t offset, ip, resync; /* resync: offset decoding went on from */
    int code;
    uint8_t sync, has_resync;
};

struct ptd_sum_tab { /* one table in the arena */
    void *p;
    uint32_t cap, used;
    uint64_t dropped;
};

/* Blocks since the clock last moved, by function/node/image: the next
 * clock step is shared among them by instructions (weights saturate at
 * PTD_SUM_SPREAD_WEIGHT_MAX; more than PTD_SUM_SPREAD runs go to the last). */
#define PTD_SUM_SPREAD            16
#define PTD_SUM_SPREAD_WEIGHT_MAX (1u << 24)
struct ptd_sum_spread {
    uint32_t func, node, mod, insns;
};

struct ptd_sum {
    struct ptd_sum_config cfg;
    struct ptd_sum_tab funcs, nodes, blocks, edges, frames, ring, mods, top;
    uint32_t depth;       /* frames in use */
    uint32_t lost_frames; /* calls past the stack depth, not yet returned */
    uint32_t ring_pos;    /* next ring slot */
    uint32_t mod_hint;    /* last module found */
    uint64_t ring_count;
    /* the open basic block and the branch that ended the last one */
    uint64_t lb_ip, lb_insns, pend_from;
    uint8_t lb_open, pend, pend_iclass, gap;
    uint8_t phase, have_sync, in_err;
    uint8_t synced;      /* a sync succeeded once (else: no PSB decoded) */
    uint64_t first_sync; /* where: the bytes before it were skipped */
    uint64_t sync_off, last_ip, err_off;
    int st;
    uint64_t cur_tsc;
    struct ptd_sum_stats stats;
    uint32_t nerr;
    struct ptd_sum_err err[PTD_SUM_ERRORS_KEPT];
    uint64_t gap_offset[4]; /* the first overflows' offsets */
    uint32_t obs_depth;     /* the depth the observer was last told */
    uint32_t nspread;
    struct ptd_sum_spread spread[PTD_SUM_SPREAD];
    /* PTD_SUM_F_TAIL: the tail (ptd_sum_tail.c) */
    uint64_t tail_insns, tail_last, spin_lo, spin_hi;
    uint8_t tail_end, tail_last_iclass, tail_ran;
};
#define PTD_SUM_STATE_SIZE 1536 /* bound on sizeof(struct ptd_sum): 1440 on x86-64 */

/* Resets s and lays out the tables in cfg->arena. */
void ptd_sum_init(struct ptd_sum *s, const struct ptd_sum_config *cfg);
/* Decodes at most budget steps (flow blocks, events, syncs) of f, which
 * the caller set up with ptd_flow_init. Returns 1 while there is more, 0
 * when the trace is done. Errors in the trace never end it early. */
int ptd_sum_decode(struct ptd_sum *s, struct ptd_flow *f, uint64_t budget);
/* Writes the summary through cfg->line (once decoding is done). */
void ptd_sum_print(struct ptd_sum *s);
/* The totals (valid after ptd_sum_print for lines/text_bytes). */
const struct ptd_sum_stats *ptd_sum_stats(const struct ptd_sum *s);
/* Upper bound on the bytes ptd_sum_print writes with cfg's limits
 * (newlines included): with the defaults 105,216 bytes (548 lines), 9.1 s
 * at 115200 baud, whatever the size of the trace. */
uint64_t ptd_sum_text_bound(const struct ptd_sum_config *cfg);
/* All of it: init, decode to the end, print; returns the totals. */
const struct ptd_sum_stats *ptd_sum_run(struct ptd_sum *s, const struct ptd_sum_config *cfg,
                                        struct ptd_flow *f);

/* ---- shared by ptd_sum.c and ptd_sum_fmt.c ----------------------------- */

enum ptd_sum_fkind {
    PTD_SUM_FN_CALL = 0, /* entered by a near call: key is its entry */
    PTD_SUM_FN_ROOT,     /* entry unknown: key is where it was entered */
    PTD_SUM_FN_IRQ,      /* entered by an asynchronous branch */
    PTD_SUM_FN_OUT,      /* called, but outside the trace (no IP) */
    PTD_SUM_FN_ENTERED,  /* entered from code outside the trace while
                            * a call or interrupt had left it (a
                            * callback, an event notification) */
};

struct ptd_sum_func {
    uint64_t entry;
    uint64_t calls, insns, tsc; /* insns, tsc: exclusive */
    uint32_t module;            /* index, or UINT32_MAX */
    uint8_t kind, used;
    uint16_t pad_;
};

#define PTD_SUM_NONE 0xffffffffu

struct ptd_sum_node {
    uint32_t func, parent, child, last_child, sibling;
    uint16_t depth, used;
    uint64_t calls, insns, tsc; /* exclusive */
    uint64_t incl, tsc_incl;    /* filled in by ptd_sum_print */
};

struct ptd_sum_block {
    uint64_t ip, last_ip, count, insns;
    uint32_t module, used;
};

struct ptd_sum_edge {
    uint64_t from, to, count;
    uint32_t kind, used; /* kind: enum ptd_iclass of the branch */
};

struct ptd_sum_frame {
    uint64_t from; /* call: the call's IP; irq: interrupted IP */
    uint32_t func, node;
    uint8_t irq;
    uint8_t left;    /* tracing left at this frame (a call or
                        * an interrupt to code outside) */
    uint8_t entered; /* entered from outside (ENTERED) */
    uint8_t pad_[5];
};

/* Last-N ring: kind is an enum ptd_iclass or one of these. */
enum {
    PTD_SUM_TR_IRQ = 0x80,
    PTD_SUM_TR_DISABLE,
    PTD_SUM_TR_ENABLE,
    PTD_SUM_TR_OVERFLOW,
    PTD_SUM_TR_ERROR,
    PTD_SUM_TR_END, /* the trace ended after this branch */
};
struct ptd_sum_tr {
    uint64_t from, to;
    uint32_t kind, known_to;
};

struct ptd_sum_modstat {
    uint64_t insns, tsc;
};

/* Module containing ip (index into cfg.modules) or PTD_SUM_NONE. */
uint32_t ptd_sum_module_of(struct ptd_sum *s, uint64_t ip);
/* The pending branch went to `to` (ptd_sum.c). */
void ptd_sum_resolve(struct ptd_sum *s, uint64_t to);
/* The trace ended with the flow's status or error st (PTD_SUM_F_TAIL):
 * the tail's transitions into the last-N ring (ptd_sum_tail.c). */
void ptd_sum_tail(struct ptd_sum *s, const struct ptd_flow *f, int st);
/* Last-N ring entries of the tail: kind | PTD_SUM_TR_TAIL. */
#define PTD_SUM_TR_TAIL 0x100u

#endif
