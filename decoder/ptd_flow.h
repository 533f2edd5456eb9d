/* libptd instruction-flow layer: the exact sequence of instructions the CPU
 * executed, from the query layer's TNT bits, TIPs and events plus the code
 * bytes, which it reads through a caller-supplied callback.
 *
 * One call, one instruction (ptd_flow_next) or one event (ptd_flow_event),
 * so the caller bounds the work per call; code that loops without branches
 * cannot hang the decoder. The binding rules (which event belongs before or
 * after which instruction) follow libipt's instruction decoder, so the
 * output of `ptboot flow --no-inst` equals libipt's ptxed line by line:
 *   - asynchronous events (interrupt, async disable, status updates, MODE)
 *     bind to an IP and are reported before the instruction there;
 *   - TIP.PGD binds to the instruction that left the traced region
 *     (a branch; with a suppressed IP only far transfers);
 *   - PIP/VMCS bind to MOV CR3 / far transfers / VM entries.
 * Near returns use the 64-entry call stack when the trace has a taken TNT
 * bit for them (SDM "Indirect Transfer Compression for Returns").
 *
 * Usage (ptxed's loop):
 *     ptd_flow_init(&f, &cfg);
 *     for (;;) {
 *         st = ptd_flow_sync_forward(&f);        // < 0: -PTD_ERR_EOS: done
 *         for (;;) {
 *             while (st >= 0 && (st & PTD_ST_EVENT)) st = ptd_flow_event(&f, &ev);
 *             if (st < 0) break;
 *             if (st & PTD_ST_EOS) { st = -PTD_ERR_EOS; break; }
 *             st = ptd_flow_next(&f, &insn);     // insn.iclass valid even on
 *             if (st < 0) break;                 // error unless PTD_FLOW_ICLASS_ERROR
 *         }
 *         if (st == -PTD_ERR_EOS) break;
 *         report(st, ptd_flow_offset(&f));       // then resync
 *     }
 *
 * State: struct ptd_flow, fixed size (PTD_FLOW_STATE_SIZE documents the
 * bound; 2720 bytes on x86-64), plain data, no allocation, no recursion.
 */
#ifndef PTD_FLOW_H
#define PTD_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_ild.h"
#include "decoder/ptd_qry.h"

/* Reads up to size code bytes at ip into buf; returns how many (0: none
 * mapped there). */
typedef int (*ptd_read_fn)(void *ctx, uint64_t ip, uint8_t *buf, size_t size);
/* Optional, beside the read callback: the mapped region holding ip, in
 * place (no copy): returns a pointer to its first byte and sets *base (its
 * address) and *size, or returns NULL (unmapped, or the caller wants the
 * bytes copied: the flow then reads through ptd_read_fn). The bytes must
 * stay valid and unchanged while decoding (ptd_flow_invalidate after a
 * change). */
typedef const uint8_t *(*ptd_map_fn)(void *ctx, uint64_t ip, uint64_t *base, size_t *size);

/* Code bytes are read in windows of this size and reused while the IP
 * stays inside (the code is taken to be static while decoding). */
#define PTD_FLOW_WINDOW 256
#define PTD_FLOW_RETSTACK 64        /* SDM: the CPU's call stack depth */
#define PTD_FLOW_STATE_SIZE 3072    /* bound on sizeof(struct ptd_flow) */


#define PTD_FLOW_MODE_UNKNOWN 3     /* no MODE.Exec seen yet */
#define PTD_FLOW_ICLASS_ERROR 0xff

struct ptd_flow_config {
    const uint8_t *trace;
    size_t size;
    ptd_read_fn read;
    void *ctx;
    ptd_map_fn map;                 /* optional, same ctx: code in place */
    unsigned errata;                /* PTD_ERRATUM_* (ptd_errata_of_cpu) */
    /* IP filter (FilterEn ranges, as IA32_RTIT_ADDRn_A/B, inclusive);
     * used where the trace does not say where tracing stopped. */
    uint64_t filter_lo[4], filter_hi[4];
    uint8_t nfilter;
    /* Optional decoded-instruction cache in caller memory (any size; NULL
     * or too small: no cache). Entries are PTD_FLOW_CENTRY_SIZE bytes,
     * direct-mapped by IP; the code is taken to be static (after it
     * changed: ptd_flow_invalidate). */
    void *cache;
    size_t cache_size;
    /* Optional basic-block cache for ptd_flow_next_block, same rules;
     * entries are PTD_FLOW_BENTRY_SIZE bytes. */
    void *bcache;
    size_t bcache_size;
    /* Timing (TSC/MTC/CYC/CBR to time; NULL: not tracked, faster). */
    const struct ptd_time_config *time;
    /* PTD_FLOW_F_* */
    unsigned flags;
    /* Execution mode before the first MODE.Exec: 16, 32 or 64 (bits);
     * 0: unknown, as libipt (instructions fail with -PTD_ERR_BAD_INSN). */
    uint8_t mode;
};

enum {
    PTD_FLOW_F_RAW = 1,     /* fill ptd_flow_insn.raw (for disassemblers) */
    /* tick events (PTD_EV_TICK, ptxed's --event:tick): at a conditional
     * or indirect branch's query, when the time (ptd_flow_config.time)
     * differs from that of the last event, as libipt's tick events; the
     * block API then goes one instruction at a time */
    PTD_FLOW_F_TICK = 2,
};

/* One decoded instruction in the cache. */
struct ptd_flow_centry {
    uint64_t ip, target;
    uint8_t size, iclass, mode, bits;
    uint32_t pad_;
};
#define PTD_FLOW_CENTRY_SIZE 24

/* One basic block in the block cache: a run of non-branch instructions
 * and the instruction that ends it (a branch, or the PTD_FLOW_BLOCK_MAX-th). */
struct ptd_flow_bentry {
    uint64_t ip, last_ip, target;
    uint16_t ninsn;
    uint8_t mode, size, iclass, bits;
    uint16_t pad_;
};
#define PTD_FLOW_BENTRY_SIZE 32
#define PTD_FLOW_BLOCK_MAX 64

/* What ptd_flow_next_block decoded: ninsn instructions from ip, the last
 * at last_ip (ninsn 0: none, as an instruction with ICLASS_ERROR). */
struct ptd_flow_block {
    uint64_t ip, last_ip;
    uint32_t ninsn;
    uint8_t mode, speculative, last_iclass;
};

struct ptd_flow_insn {
    uint64_t ip;
    uint8_t size;
    uint8_t iclass;                 /* enum ptd_iclass, or PTD_FLOW_ICLASS_ERROR */
    uint8_t mode;                   /* enum ptd_exec_mode */
    uint8_t speculative;            /* inside a TSX transaction */
    uint8_t raw[PTD_ILD_MAX_LEN];   /* with PTD_FLOW_F_RAW only */
};

/* What the flow layer keeps of an instruction whose next IP waits for an
 * event (postponed until the event is delivered). */
struct ptd_flow_pinsn {
    uint64_t ip, target;
    uint8_t size, iclass, direct, zero_disp, cpl, cr3, vmcs, ptw;
};

struct ptd_flow {
    struct ptd_qry q;
    ptd_read_fn read;
    ptd_map_fn map;
    void *ctx;
    uint64_t ip;
    const uint8_t *code;            /* the window's bytes: win[] or mapped */
    uint64_t win_base;
    uint32_t win_len;
    int status;
    uint8_t mode, enabled, speculative, process_event, process_insn;
    uint8_t bound_paging, bound_vmcs, bound_ptw, ret_top, ret_count, nfilter, mode0;
    /* How many of the call stack's top entries are return addresses still
     * owed (for the static tail, decoder/ptd_tail.h): a call pushes one, a
     * compressed return pops one; a return the trace gave as a TIP, an
     * enable, an overflow or a transaction abort make the older entries
     * unreliable (the CPU's own stack does not follow them either). */
    uint8_t ret_known;
    unsigned errata, flags;
    struct ptd_flow_centry *cache;
    uint64_t cache_mask;            /* entries - 1 (power of two), cache != NULL */
    struct ptd_flow_bentry *bcache;
    uint64_t bcache_mask;
    uint64_t filter_lo[4], filter_hi[4];
    struct ptd_event event;         /* held until it binds */
    struct ptd_flow_pinsn pinsn;
    uint64_t retstack[PTD_FLOW_RETSTACK];
    uint8_t win[PTD_FLOW_WINDOW];
};

int ptd_flow_init(struct ptd_flow *f, const struct ptd_flow_config *cfg);
int ptd_flow_sync_forward(struct ptd_flow *f);
int ptd_flow_next(struct ptd_flow *f, struct ptd_flow_insn *insn);
int ptd_flow_event(struct ptd_flow *f, struct ptd_event *ev);
/* Like ptd_flow_next, but a whole basic block (at most PTD_FLOW_BLOCK_MAX
 * instructions, so the work per call stays bounded) when no event is
 * pending or the pending one cannot bind before the block's last
 * instruction; otherwise a single instruction. Same statuses, events and
 * errors as ptd_flow_next at the same places. */
int ptd_flow_next_block(struct ptd_flow *f, struct ptd_flow_block *blk);
/* What ptd_flow_run_blocks counted: instructions, and runs of
 * instructions ended by a branch (a run starts at an instruction whose
 * predecessor is not PTD_ICLASS_OTHER, as ptxed counts blocks with the
 * instruction decoder); last_ip: the last block's last instruction, or
 * the IP where the last call decoded none (as ptd_flow_next's out->ip);
 * last_iclass: its class (set PTD_FLOW_ICLASS_ERROR before the first
 * call: the first instruction starts a run). */
struct ptd_flow_run {
    uint64_t insns, runs, last_ip;
    uint8_t last_iclass;
};
/* ptd_flow_next_block again and again while it returns 0, for a caller
 * that only counts (--quiet, --stat): the blocks are not handed out, and
 * the common case (a block-cache hit, no event) costs no call. Returns
 * the status of the last block (an event, the end, an error), or 0 after
 * max_blocks blocks (the work per call stays bounded). */
int ptd_flow_run_blocks(struct ptd_flow *f, struct ptd_flow_run *run, uint32_t max_blocks);
uint64_t ptd_flow_offset(const struct ptd_flow *f);
/* The time of the trace at the current instruction or event, as libipt's
 * pt_insn_time(): that of the last TNT/TIP/event packet taken (with
 * ptd_flow_config.time); see ptd_qry_time. */
int ptd_flow_time(const struct ptd_flow *f, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc);
/* Forget the cached code window (after the memory behind it changed). */
void ptd_flow_invalidate(struct ptd_flow *f);

#endif
