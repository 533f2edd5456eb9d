/* libptd's error codes: one set for every layer (packets, time, query and
 * flow, formats, options), returned negated. The numbers of the codes
 * libipt also has are libipt's (pt_error_code), so a tool can map one
 * onto the other and print libipt's words (ptd_errstr), as ptdump and
 * ptxed do. The instruction-length decoder's codes (decoder/ptd_ild.h) are
 * this set's INVALID, BAD_INSN, TRUNCATED and TOO_LONG.
 *
 * Freestanding C11, no state. */
#ifndef PTD_ERR_H
#define PTD_ERR_H

enum ptd_error {
    PTD_OK = 0,
    PTD_ERR_INTERNAL = 1,
    PTD_ERR_INVALID = 2,            /* a bad argument */
    PTD_ERR_NOSYNC = 3,             /* not synchronised / no PSB at that offset */
    PTD_ERR_BAD_OPC = 4,            /* unknown opcode */
    PTD_ERR_BAD_PACKET = 5,         /* known opcode, invalid payload (IPBytes 101/111, ...) */
    PTD_ERR_BAD_CONTEXT = 6,        /* a packet where it cannot be (TMA without TSC, ...) */
    PTD_ERR_EOS = 7,                /* the end of the trace buffer */
    PTD_ERR_BAD_QUERY = 8,          /* the trace does not give what the code needs */
    PTD_ERR_NOMEM = 9,              /* too many events pending at once (libipt's words:
                                       * "out of memory"; nothing is allocated) */
    PTD_ERR_BAD_CONFIG = 10,        /* CPUID 0x15 EAX or EBX is zero */
    PTD_ERR_NOIP = 11,              /* last-IP: no IP yet */
    PTD_ERR_IP_SUPPRESSED = 12,     /* last-IP: the IP was suppressed */
    PTD_ERR_NOMAP = 13,             /* no code at that address */
    PTD_ERR_BAD_INSN = 14,          /* an instruction that does not decode */
    PTD_ERR_NO_TIME = 15,           /* no TSC yet (time is relative) / no calibration */
    PTD_ERR_NO_CBR = 16,            /* no CBR yet */
    PTD_ERR_RETSTACK_EMPTY = 20,    /* a compressed return without a call */
    PTD_ERR_BAD_RETCOMP = 21,       /* a not-taken bit for a return */
    PTD_ERR_BAD_STATUS_UPDATE = 22, /* a PSB+ that contradicts the flow */
    PTD_ERR_NO_ENABLE = 23,         /* a branch's packet while tracing is off */
    PTD_ERR_EVENT_IGNORED = 24,     /* an event is pending: fetch it first */
    PTD_ERR_OVERFLOW = 25,          /* a counter overflowed */
    PTD_ERR_BAD_CPU = 27,           /* a CPU the errata table does not know */
    PTD_ERR_TRUNCATED = 32,         /* the bytes end inside a packet or instruction */
    PTD_ERR_NOSPC = 33,             /* the caller's output buffer is too small */
    PTD_ERR_TOO_LONG = 34,          /* an instruction longer than 15 bytes */
};

/* The words for a code (positive or negative): libipt's pt_errstr() text
 * for the codes libipt has, so error lines read as ptdump's and ptxed's. */
const char *ptd_errstr(int code);

#endif
