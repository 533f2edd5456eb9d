/* libptd static tail: the instructions a CPU ran after the last packet of
 * a trace that simply ends (a stop-when-full buffer, a reset, a hang, a
 * trace cut for a report), as far as the code alone says them.
 *
 * A trace has a packet only where the code cannot say where it went: a
 * conditional branch (TNT), an indirect branch or uncompressed return
 * (TIP), a far transfer, an event. Straight-line code, direct jumps and
 * direct calls write nothing (SDM Vol. 3C "Intel Processor Trace", table
 * "Packet Generation under Different Enable Conditions"), so when the
 * trace ends, the flow layer stops at its last packet although the CPU went
 * on. The tail continues along that static path from where the flow
 * stopped: fall-through, direct jumps and calls, and near returns whose
 * address the call stack holds (the return-compression stack, SDM
 * "Indirect Transfer Compression for Returns", as far as it is still owed:
 * ptd_flow.ret_known; then the tail's own calls). It stops at
 *   - an instruction whose next IP needs trace: a conditional branch, an
 *     indirect jump or call, a far transfer, a return with no known
 *     address (given as the tail's last instruction: it ran);
 *   - HLT (the CPU waits for an interrupt) and UD2 (raises #UD);
 *   - a branch target outside the FilterEn ranges (not traced);
 *   - a spin: the path comes back to an instruction it already gave with
 *     the same call stack, so it would loop there for ever (a `jmp $`, a
 *     `1: pause; jmp 1b`); the loop is given once, then the end says
 *     PTD_TAIL_END_SPIN with its address range;
 *   - code that cannot be read or decoded, or the caller's bound.
 * Every instruction of the tail is inferred, not traced: callers mark
 * them ("[tail]" in `ptboot flow --tail`).
 *
 * Usage, once the flow's decode loop ended with st (the status or error of
 * the flow's last call):
 *
 *     struct ptd_tail t;
 *     struct ptd_flow_insn in;
 *     if (ptd_tail_start(&t, &f, st, 0))
 *         while (ptd_tail_next(&t, &in))
 *             print(in);                  // then t.end, t.spin_lo/hi
 *
 * Spins are found with a few remembered straight runs (PTD_TAIL_RUNS, no
 * table of all IPs): the path is deterministic in (IP, call stack), and a
 * landing on an instruction of a remembered run at the same depth, with no
 * return below that depth since, is the same state again.
 *
 * Freestanding, no allocation, no global state, bounded work per call.
 */
#ifndef PTD_TAIL_H
#define PTD_TAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_flow.h"

#define PTD_TAIL_MAX_DEFAULT 256 /* instructions, when the caller gives 0 */
#define PTD_TAIL_STACK       16  /* the tail's own calls */
#define PTD_TAIL_RUNS        16  /* straight runs remembered (spins) */

/* Why the tail ended. */
enum ptd_tail_end {
    PTD_TAIL_END_NONE = 0, /* no tail: tracing was off, the trace ended
                              * inside an event, or the decode failed */
    PTD_TAIL_END_TRACE,    /* the last instruction's next IP needs trace */
    PTD_TAIL_END_SPIN,     /* an endless loop: spin_lo..spin_hi */
    PTD_TAIL_END_HALT,     /* HLT or UD2 */
    PTD_TAIL_END_FILTER,   /* a branch left the FilterEn ranges */
    PTD_TAIL_END_NOCODE,   /* no code at the IP, or not an instruction */
    PTD_TAIL_END_BOUND,    /* the caller's bound on instructions */
};

/* A straight run of the tail: from start, fall-through up to last (the
 * last instruction's IP; end: the byte after it), entered at depth, with
 * low the smallest depth seen since. */
struct ptd_tail_run {
    uint64_t start, last, end;
    int32_t depth, low;
};

struct ptd_tail {
    const struct ptd_flow *f; /* code, mode, filter, call stack */
    uint64_t ip;              /* the next instruction (after the tail
                                 * ended at a spin or the filter: where
                                 * its last branch went) */
    uint32_t max, count;      /* bound; instructions given */
    int32_t depth;            /* call stack depth, relative */
    uint8_t active, end, mode, speculative;
    uint8_t flow_known, flow_left;   /* owed flow stack entries; not popped yet */
    uint8_t nown, own_top, own_lost; /* own calls; lost: some dropped */
    uint8_t nruns, run_next, cur;    /* remembered runs (a ring), the current */
    uint8_t last_iclass;             /* class of the last instruction given */
    uint64_t last_ip;                /* the last instruction given */
    uint64_t spin_lo, spin_hi;       /* END_SPIN: lowest IP, last byte of the loop */
    uint64_t own[PTD_TAIL_STACK];
    struct ptd_tail_run runs[PTD_TAIL_RUNS];
};

/* Sets the tail up after the flow's decode loop ended: st is the last
 * status (>= 0, with PTD_ST_EOS: the trace is used up, the flow stands at
 * the next instruction) or error (-PTD_ERR_EOS: a query found no packet
 * for the instruction the flow gave last and still stands at; a return
 * then goes on from the call stack, t->last_ip/last_iclass say which).
 * max: bound on instructions (0: PTD_TAIL_MAX_DEFAULT). Returns true when
 * there are instructions to give; else t->end says why (END_TRACE: the
 * flow's last instruction needs trace). The flow must stay as it is while
 * the tail is read. Stack: ptd_tail_next and what it calls about 400
 * bytes on x86-64 (gcc -fstack-usage), plus the read callback's. */
bool ptd_tail_start(struct ptd_tail *t, const struct ptd_flow *f, int st, uint32_t max);
/* The next inferred instruction into *insn (ip, size, iclass, mode,
 * speculative; raw bytes with PTD_FLOW_F_RAW): true, or false at the end
 * (t->end). */
bool ptd_tail_next(struct ptd_tail *t, struct ptd_flow_insn *insn);
/* A short name for an end: "trace", "spin", "halt", "filter", "no code",
 * "bound", "none". */
const char *ptd_tail_end_name(unsigned end);

#endif
