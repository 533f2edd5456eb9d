/* Disassembly for `ptboot flow`'s instruction lines (without --no-inst),
 * by Zydis, loaded only when a flow prints instructions: every other
 * command and output starts without loading the library (about 0.1 ms of
 * every process, docs/performance.md) and runs where it is not installed. */
#ifndef HOST_DISASM_H
#define HOST_DISASM_H

#include <stddef.h>

#include "decoder/ptd_flow.h"

/* Loads Zydis and sets up its decoders (16-, 32-, 64-bit) and formatter
 * (Intel syntax, or AT&T with att). 0, or -1 with a message in err (which
 * library could not be loaded, and why). */
int host_disasm_open(int att, char *err, size_t errsize);

/* Appends "  <disassembly>" (or the bytes and "(bad)") for in (decoded with
 * PTD_FLOW_F_RAW) at p, end bounding the buffer; returns the new end. */
char *host_disasm_append(const struct ptd_flow_insn *in, char *p, char *end);

#endif
