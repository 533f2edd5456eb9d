/* `ptboot export`: a trace's calls as files for the tools firmware
 * engineers read traces with (docs/export.md):
 *   - chrome: Chrome Trace Event JSON (Perfetto UI, chrome://tracing), one
 *     track per CPU, one nested slice per call, instant events for errors,
 *     overflows, enables/disables and image loads;
 *   - folded: folded stacks ("a;b;c 123") for flamegraph.pl, inferno,
 *     speedscope, weighted by instructions or time;
 *   - html: one self-contained page: flame graph (inline SVG), time per
 *     image, call tree, errors and gaps, the capture's facts.
 * The calls are the decode summary's own (decoder/ptd_sum.h, through its
 * shadow-stack observer), so an export and `ptboot summary` count the same
 * calls. Memory grows with the number of distinct call stacks, not with the
 * trace: the Chrome events are written as they come, the stacks are kept
 * once each in a table (export_stacks.c). */
#ifndef HOST_EXPORT_H
#define HOST_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decoder/ptd_sum.h"
#include "format/sideband.h"
#include "host/sym/names.h"

enum export_format {
    EXPORT_CHROME = 1,
    EXPORT_FOLDED,
    EXPORT_HTML
};
enum export_weight {
    EXPORT_W_INSNS = 0,
    EXPORT_W_TICKS
};
enum export_clock {
    EXPORT_CLOCK_AUTO = 0,
    EXPORT_CLOCK_TSC,
    EXPORT_CLOCK_INSNS
};

/* ---- the call stacks, each once (export_stacks.c) ------------------------ */

#define EXPORT_NONE 0xffffffffu

struct export_node {
    uint32_t parent;         /* EXPORT_NONE: a root */
    uint32_t child, sibling; /* first child, next sibling (EXPORT_NONE: none) */
    uint32_t last_child;
    uint32_t depth;
    uint64_t entry; /* the frame's function entry (ptd_sum's key) */
    uint8_t kind;   /* enum ptd_sum_fkind */
    uint32_t cpu;
    uint64_t calls; /* times this stack was entered */
    uint64_t self_insns, self_ticks;
    uint64_t incl_insns, incl_ticks; /* filled by export_stacks_totals */
};

struct export_stacks {
    struct export_node *v;
    uint32_t n, cap;
    uint32_t *hash; /* open addressing: node index + 1, 0 empty */
    uint32_t hcap;  /* a power of two */
};

void export_stacks_init(struct export_stacks *s);
void export_stacks_free(struct export_stacks *s);
/* The node for (parent, entry, kind, cpu), made on first use; EXPORT_NONE
 * when memory ran out. */
uint32_t export_stacks_get(struct export_stacks *s, uint32_t parent, uint64_t entry, uint8_t kind,
                           uint32_t cpu);
/* Inclusive counts (children before parents: a child's index is always
 * larger than its parent's). */
void export_stacks_totals(struct export_stacks *s);

/* ---- one export ------------------------------------------------------------ */

struct export_image_stat {
    uint64_t insns, ticks;
    uint64_t first_insns, first_tsc; /* when code in it first ran */
    int ran;
};

struct export_mark {
    uint32_t cpu, kind; /* PTD_SUM_TR_* */
    uint64_t offset, ip, tsc, insns;
    int code;
};
#define EXPORT_MARKS_KEPT 200

struct input_file;

struct export
{
    /* what to do */
    enum export_format format;
    enum export_weight weight;
    enum export_clock clock;
    uint64_t tsc_hz; /* 0: unknown (timestamps in ticks) */
    const char *title;
    FILE *out;
    struct names *names;
    const struct sideband *sb; /* the capture's, or NULL */
    unsigned ncpus;

    /* the walk over one CPU's trace */
    uint32_t cpu;
    struct input_file *trace_in; /* its trace (pages behind the walk given back) */
    unsigned walks;              /* traces walked so far */
    uint32_t *stack;             /* node index per frame */
    uint32_t depth, stack_cap;
    int clock_decided, use_tsc;
    uint64_t tsc0;         /* first time stamp */
    uint64_t events;       /* chrome events written */
    uint32_t chrome_depth; /* slices open on the current CPU's track */
    uint64_t chrome_last_ts_tsc, chrome_last_ts_insns;

    /* what the walk gathered, over all CPUs */
    struct export_stacks stacks;
    uint64_t insns, ticks, calls, errors, overflows, enables, disables;
    uint64_t tsc_first, tsc_last;
    int has_time;
    struct export_mark marks[EXPORT_MARKS_KEPT];
    uint32_t nmarks;
    struct export_image_stat *img; /* per sideband image (+1: none) */
    struct ptd_sum_stats sum;      /* the last CPU's summary totals */
    uint64_t trace_bytes;
    char *summary_text; /* html: the summary's text (names and all) */
    size_t summary_len, summary_cap;

    /* names of frames, cached by (entry, kind) */
    struct export_name *nv;
    uint32_t nn, ncap;
    uint32_t *nhash;
    uint32_t nhcap;
};

/* A frame (function) of the export: its name and, for the HTML report,
 * its totals over every stack it is on. */
struct export_name {
    uint64_t entry;
    uint8_t kind;
    char *name;
    uint64_t calls, self_insns, self_ticks;
};
/* Its index in x->nv (made on first use), EXPORT_NONE without memory. */
uint32_t export_frame_index(struct export *x, uint64_t entry, uint8_t kind);

/* The frame's name: "ptbtest_fib", "(caller of _start)", "irq> ...",
 * "(outside the trace)"; as the summary names it, without the line. */
const char *export_frame_name(struct export *x, uint64_t entry, uint8_t kind);

/* Walks one CPU's trace (f set up by the caller) through the summary with
 * the observer on; cfg gives the summary's limits and modules. */
int export_walk(struct export *x, uint32_t cpu, struct ptd_flow *f, struct ptd_sum_config *cfg);

/* Writers: the chrome writer is called by the walk as events come; the
 * others write at the end, from the stacks. */
void export_chrome_begin(struct export *x);
void export_chrome_event(struct export *x, const struct ptd_sum_obs *ev);
void export_chrome_end(struct export *x);
int export_folded_write(struct export *x);
int export_html_write(struct export *x);

/* JSON / HTML text escaping to x->out. */
void export_json_str(FILE *out, const char *s);
void export_html_str(FILE *out, const char *s);

#endif
