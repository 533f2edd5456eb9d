/* libptd's error words (ptd_err.h). */
#include "decoder/ptd_err.h"
#include "decoder/ptd_ild.h"

/* The length decoder's codes are this set's. */
_Static_assert((int)PTD_ILD_ERR_INVALID == (int)PTD_ERR_INVALID, "ILD code");
_Static_assert((int)PTD_ILD_ERR_BAD_INSN == (int)PTD_ERR_BAD_INSN, "ILD code");
_Static_assert((int)PTD_ILD_ERR_TRUNCATED == (int)PTD_ERR_TRUNCATED, "ILD code");
_Static_assert((int)PTD_ILD_ERR_TOO_LONG == (int)PTD_ERR_TOO_LONG, "ILD code");

const char *ptd_errstr(int code)
{
    switch ((enum ptd_error)(code < 0 ? -code : code)) {
    case PTD_OK: return "OK";
    case PTD_ERR_INTERNAL: return "internal error";
    case PTD_ERR_INVALID: return "invalid argument";
    case PTD_ERR_NOSYNC: return "decoder out of sync";
    case PTD_ERR_BAD_OPC: return "unknown opcode";
    case PTD_ERR_BAD_PACKET: return "unknown packet";
    case PTD_ERR_BAD_CONTEXT: return "unexpected packet context";
    case PTD_ERR_EOS: return "reached end of trace stream";
    case PTD_ERR_BAD_QUERY: return "trace stream does not match query";
    case PTD_ERR_NOMEM: return "out of memory";
    case PTD_ERR_BAD_CONFIG: return "bad configuration";
    case PTD_ERR_NOIP: return "no ip";
    case PTD_ERR_IP_SUPPRESSED: return "ip has been suppressed";
    case PTD_ERR_NOMAP: return "no memory mapped at this address";
    case PTD_ERR_BAD_INSN: return "unknown instruction";
    case PTD_ERR_NO_TIME: return "no timing information";
    case PTD_ERR_NO_CBR: return "no core:bus ratio";
    case PTD_ERR_RETSTACK_EMPTY: return "compressed return without call";
    case PTD_ERR_BAD_RETCOMP: return "bad compressed return";
    case PTD_ERR_BAD_STATUS_UPDATE: return "bad status update";
    case PTD_ERR_NO_ENABLE: return "expected tracing enabled event";
    case PTD_ERR_EVENT_IGNORED: return "event ignored";
    case PTD_ERR_OVERFLOW: return "overflow";
    case PTD_ERR_BAD_CPU: return "unknown cpu";
    case PTD_ERR_TRUNCATED: return "truncated packet";
    case PTD_ERR_NOSPC: return "output buffer too small";
    case PTD_ERR_TOO_LONG: return "instruction longer than 15 bytes";
    }
    return "unknown error";
}
