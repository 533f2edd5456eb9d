/* libptd instruction-flow layer: the exact sequence of instructions the CPU
 * executed, from the query layer's events (TNT bits, TIPs and the rest) and
 * the code bytes, which it reads through a caller-supplied callback.
 *
 * The flow comes in blocks: runs of instructions that need no trace until
 * the last, which needs a TNT bit or a TIP (a conditional branch, a return,
 * an indirect or far branch), or ends where an event binds, where the code
 * leaves its section, after 65535 instructions, or (with the options) after
 * a direct call or jump. Events are reported between blocks, bound to the
 * instruction or IP they belong to, as current libipt's block decoder does
 * it (its rules are the reference, docs/flow.md), so `ptboot flow
 * --no-inst` prints ptxed's lines:
 *   - asynchronous events (interrupt, async disable, status updates, MODE,
 *     Event Trace interrupts) bind to an IP and are reported before the
 *     instruction there;
 *   - TIP.PGD binds to the instruction that left the traced region (a
 *     branch; with a suppressed IP MOV CR3, a far transfer or a branch that
 *     needs trace);
 *   - PIP/VMCS bind to MOV CR3, VMPTRLD, VM entries and far transfers,
 *     PTWRITE and Event Trace's IRET/VMENTRY/UIRET/SWINTR/SYSCALL to their
 *     instruction, reported after it (before it for SWINTR and SYSCALL);
 *   - TRIG to the instruction ICNT instructions after the last IP packet.
 * Near returns use the 64-entry call stack when the trace has a taken TNT
 * bit for them (SDM "Indirect Transfer Compression for Returns").
 *
 * Usage (ptxed's block loop; ptd_fmt_flow.h runs it):
 *     ptd_flow_init(&f, &cfg);
 *     for (;;) {
 *         st = ptd_flow_sync_forward(&f);        // < 0: -PTD_ERR_EOS: done
 *         for (;;) {
 *             while (st >= 0 && (st & PTD_ST_EVENT)) st = ptd_flow_event(&f, &ev);
 *             if (st < 0) break;
 *             if (st & PTD_ST_EOS) { st = -PTD_ERR_EOS; break; }
 *             st = ptd_flow_next_block(&f, &blk); // blk valid also on error
 *             if (st < 0) break;
 *         }
 *         if (st == -PTD_ERR_EOS) break;
 *         report(st, ptd_flow_offset(&f));       // then sync again, or
 *                                                // ptd_flow_resync()
 *     }
 * ptd_flow_next gives the same flow one instruction at a time (libipt's
 * instruction decoder, which runs on its block decoder).
 *
 * State: struct ptd_flow, fixed size (PTD_FLOW_STATE_SIZE documents the
 * bound), plain data, no allocation, no recursion; the work per call is
 * bounded (a block holds at most PTD_FLOW_BLOCK_MAX instructions).
 */
#ifndef PTD_FLOW_H
#define PTD_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_errata.h"
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
 * change). The regions are the image's sections: a block does not run on
 * from one into another (as libipt's), and every IP in one gets the same
 * region (the flow keeps the regions it was given; ptd_flow_invalidate
 * forgets them). */
typedef const uint8_t *(*ptd_map_fn)(void *ctx, uint64_t ip, uint64_t *base, size_t *size);

/* Code bytes are read in windows of this size and reused while the IP
 * stays inside (the code is taken to be static while decoding). */
#define PTD_FLOW_WINDOW     256
#define PTD_FLOW_RETSTACK   64   /* SDM: the CPU's call stack depth */
#define PTD_FLOW_STATE_SIZE 6144 /* bound on sizeof(struct ptd_flow) */
/* Instructions in a block at most (libipt's: its count is 16 bits). */
#define PTD_FLOW_BLOCK_MAX 0xffff

/* The sections a flow keeps at hand (struct ptd_flow's secs): a slot per
 * 4 KiB page of IPs, modulo PTD_FLOW_SECTIONS. */
#define PTD_FLOW_SECTIONS      64 /* a power of two */
#define PTD_FLOW_SECTIONS_PAGE 12 /* log2 of a slot's IP range */

#define PTD_FLOW_MODE_UNKNOWN PTD_QRY_EXEC_MODE_UNKNOWN /* no MODE.Exec yet */
#define PTD_FLOW_ICLASS_ERROR 0xff

struct ptd_flow_config {
    const uint8_t *trace;
    size_t size;
    ptd_read_fn read;
    void *ctx;
    ptd_map_fn map;  /* optional, same ctx: code in place */
    unsigned errata; /* PTD_ERRATUM_* (ptd_errata_of_cpu) */
    /* IP filter (FilterEn ranges, as IA32_RTIT_ADDRn_A/B, inclusive);
     * used where the trace does not say where tracing stopped (SKL014). */
    uint64_t filter_lo[4], filter_hi[4];
    uint8_t nfilter;
    /* Optional decoded-instruction cache in caller memory (any size; NULL
     * or too small: no cache). Entries are PTD_FLOW_CENTRY_SIZE bytes,
     * direct-mapped by IP; the code is taken to be static (after it
     * changed: ptd_flow_invalidate). */
    void *cache;
    size_t cache_size;
    /* Optional block cache in caller memory (docs/flow.md): where the
     * walk from each code byte next needs trace, so blocks jump over the
     * instructions between, and end where libipt's block decoder ends
     * them (its block cache's rules). PTD_FLOW_BCACHE_BYTES(code bytes,
     * sections) is enough for every section; a section that does not
     * fit runs without (its blocks end only where trace is needed). The
     * code is taken to be static (after it changed: ptd_flow_invalidate). */
    void *bcache;
    size_t bcache_size;
    /* Time configuration (TSC/MTC/CYC/CBR to time; NULL: none given). Time
     * is tracked as far as the packets allow either way. */
    const struct ptd_time_config *time;
    /* PTD_FLOW_F_* */
    unsigned flags;
    /* Execution mode before the first MODE.Exec: 16, 32 or 64 (bits);
     * 0: unknown, as libipt (instructions fail with -PTD_ERR_BAD_INSN). */
    uint8_t mode;
};

enum {
    PTD_FLOW_F_RAW = 1u << 0, /* fill ptd_flow_insn.raw (for disassemblers) */
    /* tick events (PTD_EV_TICK, ptxed's --event:tick): where a branch
     * takes a TNT bit or TIP whose time differs from the last event's */
    PTD_FLOW_F_TICK = 1u << 1,
    PTD_FLOW_F_END_ON_CALL = 1u << 2,      /* a block also ends after a direct call */
    PTD_FLOW_F_END_ON_JUMP = 1u << 3,      /* ... and after a direct jump */
    PTD_FLOW_F_IFLAGS = 1u << 4,           /* iflags events (--event:iflags) */
    PTD_FLOW_F_KEEP_TCAL_ON_OVF = 1u << 5, /* keep the time calibration over OVF */
    PTD_FLOW_F_PWRE_BIT3 = 1u << 6,        /* PWRE's HW flag from bit 3 (libipt) */
    /* the block cache's memory is all zero bytes (a host's fresh mmap:
     * pages the kernel gives zeroed on first touch): what the cache takes
     * of it for the first time is not cleared (ptd_flow_invalidate's
     * reuse still is) */
    PTD_FLOW_F_BCACHE_ZEROED = 1u << 7,
};

/* One decoded instruction in the cache. */
struct ptd_flow_centry {
    uint64_t ip, target;
    uint8_t size, iclass, mode, bits;
    uint32_t pad_;
};
#define PTD_FLOW_CENTRY_SIZE 24

/* The block cache's memory: a stack for its fill (one 8-byte frame per
 * instruction of a block at most), then per section a 24-byte header and a
 * directory (4 bytes per chunk), and the entries (8 bytes per code byte) in
 * chunks of PTD_FLOW_BCACHE_CHUNK_CODE code bytes, made when code there
 * first runs, one after the other: small chunks keep the pages a trace
 * touches few (each costs a page fault on a workstation); and, taken the
 * first time an event's walk needs it, the walks' memo
 * (decoder/ptd_flow_walks.c). */
#define PTD_FLOW_BCACHE_STACK       ((PTD_FLOW_BLOCK_MAX + 1u) * 8u)
#define PTD_FLOW_BCACHE_WALKS       (256u * 64u)
#define PTD_FLOW_BCACHE_SECTION     24u
#define PTD_FLOW_BCACHE_CHUNK_SHIFT 7u
#define PTD_FLOW_BCACHE_CHUNK_CODE  (1u << PTD_FLOW_BCACHE_CHUNK_SHIFT)
#define PTD_FLOW_BCACHE_CHUNK       (PTD_FLOW_BCACHE_CHUNK_CODE * 8u)
#define PTD_FLOW_BCACHE_BYTES(code_bytes, sections)                                \
    (PTD_FLOW_BCACHE_STACK + PTD_FLOW_BCACHE_WALKS +                               \
     (size_t)(sections) * (PTD_FLOW_BCACHE_SECTION + 8u + PTD_FLOW_BCACHE_CHUNK) + \
     (size_t)(code_bytes)*8u +                                                     \
     ((size_t)(code_bytes) / PTD_FLOW_BCACHE_CHUNK_CODE + (size_t)(sections)) * 4u)

/* What ptd_flow_next_block decoded: ninsn instructions from ip, the last
 * at last_ip (ninsn 0: none; last_iclass PTD_FLOW_ICLASS_ERROR). */
struct ptd_flow_block {
    uint64_t ip, last_ip;
    uint32_t ninsn;
    uint8_t mode, speculative, last_iclass;
};

struct ptd_flow_insn {
    uint64_t ip;
    /* ip + size, plus the branch displacement of an instruction that has
     * one (Jcc as if taken, JMP, CALL, LOOP, JrCXZ, XBEGIN): where ptxed
     * reports an error after it (ptd_flow_insn_at only) */
    uint64_t after;
    uint8_t size;
    uint8_t iclass;               /* enum ptd_iclass, or PTD_FLOW_ICLASS_ERROR */
    uint8_t mode;                 /* enum ptd_exec_mode */
    uint8_t speculative;          /* inside a TSX transaction */
    uint8_t raw[PTD_ILD_MAX_LEN]; /* with PTD_FLOW_F_RAW only */
};

/* What the flow keeps of an instruction: length and class, the direct
 * branch target, and (found on demand) which instruction it is where an
 * event binds to one kind (PTD_FLOW_K_*). */
struct ptd_flow_pinsn {
    uint64_t ip, target;
    uint16_t kind;
    uint8_t size, iclass, direct, zero_disp, kind_known;
};

/* A section entered before: its bounds (as the map callback gave them) and
 * its block-cache directory. */
struct ptd_flow_section {
    uint64_t lo, hi;
    uint32_t *bce;
};

struct ptd_flow {
    struct ptd_qry q;
    struct ptd_event ev; /* the event ahead (libipt's: the block
                            * decoder reads one ahead) */
    int status;          /* why there is no event ahead: < 0 */
    ptd_read_fn read;
    ptd_map_fn map;
    void *ctx;
    uint64_t ip;         /* the next block's start, or where
                            * tracing is expected to resume */
    const uint8_t *code; /* the window's bytes: win[] or mapped */
    uint64_t win_base;
    uint32_t win_len;
    /* the section of the block being walked ([sec_lo, sec_hi)) */
    uint64_t sec_lo, sec_hi;
    /* sections entered before, by the page of an IP in them (hi 0:
     * none): code that calls into another section comes back, found
     * here without the map callback or the block cache's list;
     * forgotten with the cache (ptd_flow_invalidate) */
    struct ptd_flow_section secs[PTD_FLOW_SECTIONS];
    /* time of the last event taken (libipt's pt_blk_time) */
    uint64_t tsc;
    uint32_t lost_mtc, lost_cyc;
    uint32_t icnt; /* instructions since the TRIG anchor */
    uint8_t has_tsc, has_icnt;
    uint8_t mode, enabled, speculative, process_insn;
    uint8_t bound; /* PTD_FLOW_K_* kinds bound to pinsn */
    uint8_t ret_top, ret_count, nfilter, mode0;
    /* How many of the call stack's top entries are return addresses still
     * owed (for the static tail, decoder/ptd_tail.h): a call pushes one, a
     * compressed return pops one; a return the trace gave as a TIP, an
     * enable, an overflow or a transaction abort make the older entries
     * unreliable (the CPU's own stack does not follow them either). */
    uint8_t ret_known;
    unsigned errata, flags;
    struct ptd_flow_centry *cache;
    uint64_t cache_mask; /* entries - 1 (power of two), cache != NULL */
    /* the block cache: its memory, and the current section's entries */
    uint8_t *barena;
    size_t barena_size, barena_used;
    size_t barena_dirty; /* from here on the memory is zero bytes */
    size_t bsec_head;    /* the sections' list (its first's offset; 0: none) */
    uint32_t *bce;
    struct ptd_flow_walk *walks; /* the walks' memo, in the block cache's memory */
    uint64_t filter_lo[4], filter_hi[4];
    struct ptd_flow_pinsn pinsn; /* the postponed instruction */
    /* the block ptd_flow_next hands out one instruction at a time */
    struct ptd_flow_block iblk;
    int iblk_status;
    uint64_t retstack[PTD_FLOW_RETSTACK];
    uint8_t win[PTD_FLOW_WINDOW];
};

int ptd_flow_init(struct ptd_flow *f, const struct ptd_flow_config *cfg);
/* Synchronise at the next PSB; the status of the first events. */
int ptd_flow_sync_forward(struct ptd_flow *f);
/* The next block (libipt's pt_blk_next): status flags (>= 0) or an error;
 * *blk holds the instructions decoded before it, also on an error. */
int ptd_flow_next_block(struct ptd_flow *f, struct ptd_flow_block *blk);
/* What ptd_flow_run_blocks counted (added to what the caller set):
 * blocks (ptd_flow_next_block's calls, as ptxed's --stat counts them),
 * instructions, the last instruction decoded and its class; and the last
 * block (as ptd_flow_next_block gave it: the one an error refers to). */
struct ptd_flow_run {
    uint64_t insns, blocks, last_ip;
    uint8_t last_iclass;
    struct ptd_flow_block blk;
};
/* ptd_flow_next_block again and again, for a caller that only counts
 * (--quiet, --stat): the blocks are not handed out. Stops at the first
 * status with an event or the end, or an error (returned), or after
 * max_blocks blocks (the work per call stays bounded; then the last
 * status, which asks for no action). */
int ptd_flow_run_blocks(struct ptd_flow *f, struct ptd_flow_run *run, uint32_t max_blocks);
/* The pending event (when PTD_ST_EVENT was reported). */
int ptd_flow_event(struct ptd_flow *f, struct ptd_event *ev);
/* The next instruction (libipt's pt_insn_next over the blocks): *insn is
 * filled (iclass PTD_FLOW_ICLASS_ERROR when there is none); status flags
 * come with a block's last instruction; -PTD_ERR_EVENT_IGNORED: an event
 * is pending first (fetch it with ptd_flow_event). */
int ptd_flow_next(struct ptd_flow *f, struct ptd_flow_insn *insn);
/* The instruction at ip in mode (for walking a block's instructions:
 * *next_ip receives the IP after it, as the code alone says, when it
 * needs no trace). 0, or an error (-PTD_ERR_NOMAP, -PTD_ERR_BAD_INSN). */
int ptd_flow_insn_at(struct ptd_flow *f, uint64_t ip, uint8_t mode, struct ptd_flow_insn *insn,
                     uint64_t *next_ip);
/* After an error: resume at the next event that gives an IP or shows
 * tracing off, as libipt's pt_blk_resync (--resync-on-error). Status flags,
 * -PTD_ERR_EVENT_IGNORED (an event that cannot be passed is pending:
 * ptd_flow_event, then call again), or an error. */
int ptd_flow_resync(struct ptd_flow *f);
/* The trace offset the decoder stands at (libipt's pt_blk_get_offset). */
uint64_t ptd_flow_offset(const struct ptd_flow *f);
/* The time of the last event taken, as libipt's pt_blk_time(): 0, or
 * -PTD_ERR_NO_TIME (no TSC yet: *tsc is relative); lost_* may be
 * NULL. */
int ptd_flow_time(const struct ptd_flow *f, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc);
/* Forget the cached code (after the memory behind it changed). */
void ptd_flow_invalidate(struct ptd_flow *f);

#endif
