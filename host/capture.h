/* A capture directory as the UEFI app writes it to the stick
 * (docs/capture-files.md): trace.pt, sideband.txt and the code snapshot
 * code.dump/code.addr. host_capture_load() turns it into the decoder's
 * inputs, so `ptboot flow --capture DIR` (and `summary`) need no other
 * option: the trace, the code, the CPU (errata), the timing facts (CPUID
 * 15h, nominal ratio, MTC frequency) and the address filters, plus the
 * module table for naming addresses. */
#ifndef HOST_CAPTURE_H
#define HOST_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decoder/ptd_time.h"
#include "format/manifest.h"
#include "format/sideband.h"
#include "host/flow_opts.h"

#define HOST_CAPTURE_TRACE    "trace.pt"
#define HOST_CAPTURE_SIDEBAND "sideband.txt"
#define HOST_CAPTURE_CODE     "code" /* code.dump + code.addr */

struct host_capture_module {
    uint64_t base, size;
    const char *name; /* points into the capture's sideband */
};

struct host_capture {
    char trace_path[4096];
    char code_prefix[4096];
    int have_code;                       /* code.dump/code.addr were there and loaded */
    struct sideband *sb;                 /* malloc'd; the parsed sideband.txt */
    struct host_capture_module *modules; /* one per image row, in file order */
    size_t nmodules;
    /* manifest.txt (format/manifest.h): whether it was there and parsed,
     * and what host_capture_warn found wrong (a file missing, cut, or
     * different from its line) */
    int have_manifest;
    char manifest_error[160]; /* "manifest.txt:3: ..." when it did not parse */
    struct manifest man;
    int incomplete;
};

/* Reads DIR's sideband and code and fills what it says into *fo (trace
 * path, code pages, CPU for errata when the hardware wrote the trace,
 * filters as ADDRn_CFG/A/B) and, if tcfg is not NULL, *tcfg (MTC
 * frequency, nominal ratio, CPUID 15h; timing errata for the CPU). Options
 * given after it on a command line still override. Returns 0, or -1 with
 * a message in err ("DIR/sideband.txt:12: unknown key"). Release with
 * host_capture_free() after the flow_opts. */
int host_capture_load(const char *dir, struct host_capture *cap, struct flow_opts *fo,
                      struct ptd_time_config *tcfg, char *err, size_t errlen);
void host_capture_free(struct host_capture *cap);

/* Says on to (stderr) what is wrong with the capture loaded from dir:
 * no manifest.txt (never finished, or an older ptboot), a file its
 * manifest lists as missing (with the app's reason), a file whose size
 * differs from its manifest line, no code snapshot (nothing but packets
 * can be decoded). prog prefixes each line. Sets cap->incomplete; returns
 * the number of lines printed. */
int host_capture_warn(const char *dir, struct host_capture *cap, const char *prog, FILE *to);

/* The module containing addr, or NULL. */
const struct host_capture_module *host_capture_module_at(const struct host_capture *cap,
                                                         uint64_t addr);

/* Prints the options that make libipt's ptxed (or ptdump, without the
 * --raw ones) decode DIR's trace.pt as `ptboot flow --capture DIR` does:
 * --cpu, the timing options, one --raw code.dump:FROM-TO:BASE per run of
 * adjacent pages, the filters as --filter:addrN_*. Returns 0 or -1. */
int host_capture_print_libipt_args(const char *dir, const struct host_capture *cap, FILE *to,
                                   char *err, size_t errlen);

#endif
