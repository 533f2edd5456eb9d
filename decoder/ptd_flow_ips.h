/* libptd instruction-flow layer: the IPs inside a block. A caller of
 * ptd_flow_next_block that prints one line per instruction (ptxed's
 * --no-inst lines, decoder/ptd_fmt_flow.h) needs each instruction's IP,
 * and the block gives only its first and last: the ones between are
 * found again from the instruction lengths, on the same code bytes the
 * flow decoded (no trace, no events: inside a block the only branches are
 * direct calls and jumps, whose target the code says). This costs an
 * instruction-length step per instruction, well below a full decode
 * (docs/performance.md). */
#ifndef PTD_FLOW_IPS_H
#define PTD_FLOW_IPS_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_flow.h"

/* The IPs after the instruction at ip in mode (enum ptd_exec_mode) inside
 * a block, n in a row: next[0] after ip, next[k] after next[k - 1], each
 * the next instruction or a direct call's or jump's target. Reads the code
 * as ptd_flow_block_ips does. Returns how many it found (n, or fewer
 * where there is no code or it is not an instruction). A printer's walk
 * over a block takes its IPs this way, a batch at a time: one look for the
 * code's region per batch instead of per instruction. */
uint32_t ptd_flow_ips_after(const struct ptd_flow *f, uint64_t ip, unsigned mode, uint64_t *next,
                            uint32_t n);
/* ips[0] = blk->ip, ..., ips[blk->ninsn - 1] = blk->last_ip: the IPs
 * ptd_flow_next would have returned one by one. Reads the code from f's
 * code window where it holds the block (never moving it), else through f's
 * callbacks (map in place where it can, else read). Returns blk->ninsn,
 * or -PTD_ERR_NOSPC (cap < ninsn), or
 * -PTD_ERR_INTERNAL when the code does not lead from blk->ip to
 * blk->last_ip in ninsn instructions (it changed under the flow). */
int ptd_flow_block_ips(const struct ptd_flow *f, const struct ptd_flow_block *blk, uint64_t *ips,
                       size_t cap);

#endif
