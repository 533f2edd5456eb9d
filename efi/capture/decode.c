#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "decoder/ptd_flow.h"
#include "decoder/ptd_pkt.h"
#include "decoder/ptd_sum.h"
#include "decoder/ptd_time.h"
#include "efi/capture/decode.h"
#include "efi/platform/console.h"

#define CALL_TARGETS_MAX 256
#define ERRORS_SHOWN     8

struct branch {
    uint64_t from, to;
    uint8_t iclass;
};

struct call_target {
    uint64_t ip, count;
};

/* Decoder state off the stack (a firmware stack is small). */
static struct {
    struct ptd_flow flow;
    struct call_target targets[CALL_TARGETS_MAX];
    unsigned ntargets;
    uint64_t targets_dropped;
    struct branch last[PTB_CAPTURE_LAST_MAX];
    uint64_t nbranches;
} d;

static void name_of(const struct efi_capture *c, uint64_t ip, char *out, size_t cap)
{
    const struct sideband_image *im = efi_capture_module(c, ip);
    if (im)
        snprintf(out, cap, "%s+0x%llx", im->name, (unsigned long long)(ip - im->base));
    else
        snprintf(out, cap, "0x%llx", (unsigned long long)ip);
}

static void count_call(uint64_t target)
{
    for (unsigned i = 0; i < d.ntargets; i++) {
        if (d.targets[i].ip == target) {
            d.targets[i].count++;
            return;
        }
    }
    if (d.ntargets == CALL_TARGETS_MAX) {
        d.targets_dropped++;
        return;
    }
    d.targets[d.ntargets].ip = target;
    d.targets[d.ntargets++].count = 1;
}

static void report_error(const struct efi_capture *c, struct efi_capture_totals *t, int st)
{
    t->errors++;
    if (t->errors <= ERRORS_SHOWN) {
        char where[SIDEBAND_NAME_MAX + 24];
        name_of(c, d.flow.ip, where, sizeof where);
        efi_con_printf("error offset=0x%llx ip=%s %s\n",
                       (unsigned long long)ptd_flow_offset(&d.flow), where, ptd_errstr(-st));
    }
}

/* The flow over the capture's linearised trace and the code snapshot's
 * pages, read in place (both decodes of a capture start from this). */
static void capture_flow_config(struct ptd_flow_config *fc, struct efi_capture *c)
{
    memset(fc, 0, sizeof *fc);
    fc->trace = c->trace;
    fc->size = (size_t)c->trace_bytes;
    fc->read = code_image_read;
    fc->map = code_image_map;
    fc->ctx = &c->code;
    fc->mode = 64; /* UEFI x64; MODE.Exec in PSB+ says it anyway */
}

int efi_capture_decode(struct efi_capture *c, unsigned last, struct efi_capture_totals *t)
{
    memset(t, 0, sizeof *t);
    memset(&d, 0, sizeof d);
    if (last > PTB_CAPTURE_LAST_MAX)
        last = PTB_CAPTURE_LAST_MAX;
    efi_con_puts("ptboot: trace decode begin\n");
    if (!c->trace_bytes) {
        efi_con_puts("(no trace: nothing from the first PSB on)\n");
        efi_con_puts("ptboot: trace decode end insns=0 errors=0 calls=0 returns=0\n");
        return -1;
    }
    struct ptd_flow_config fc;
    capture_flow_config(&fc, c);
    ptd_flow_init(&d.flow, &fc);

    struct ptd_flow_insn insn;
    struct ptd_event ev;
    bool pending_call = false, pending_branch = false;
    struct branch br = { 0, 0, 0 };
    for (;;) {
        int st = ptd_flow_sync_forward(&d.flow);
        if (st == -PTD_ERR_EOS)
            break;
        if (st < 0) {
            report_error(c, t, st);
            break; /* no further PSB */
        }
        for (;;) {
            while (st >= 0 && (st & PTD_ST_EVENT)) {
                st = ptd_flow_event(&d.flow, &ev);
                if (st >= 0 && ev.type == PTD_EV_ENABLED)
                    t->enables++;
                if (st >= 0 &&
                    (ev.type == PTD_EV_ASYNC_DISABLED || ev.type == PTD_EV_ASYNC_BRANCH)) {
                    /* an interrupt or exception before the instruction at
                     * from (not run yet): the branch before went there */
                    if (pending_call)
                        count_call(ev.from);
                    if (pending_branch && last) {
                        br.to = ev.from;
                        d.last[d.nbranches % last] = br;
                        d.nbranches++;
                    }
                    pending_call = pending_branch = false;
                }
                if (st >= 0 && (ev.type == PTD_EV_DISABLED || ev.type == PTD_EV_ASYNC_DISABLED)) {
                    t->disables++;
                    pending_call = pending_branch = false; /* the target is not traced */
                }
            }
            if (st < 0)
                break;
            if (st & PTD_ST_EOS) {
                st = -PTD_ERR_EOS;
                break;
            }
            st = ptd_flow_next(&d.flow, &insn);
            if (st < 0 && insn.iclass == PTD_FLOW_ICLASS_ERROR)
                break;
            /* the instruction ran: it is where the previous branch went */
            if (pending_call)
                count_call(insn.ip);
            if (pending_branch && last) {
                br.to = insn.ip;
                d.last[d.nbranches % last] = br;
                d.nbranches++;
            }
            pending_call = pending_branch = false;
            t->insns++;
            if (insn.iclass == PTD_ICLASS_DIRECT_CALL || insn.iclass == PTD_ICLASS_INDIRECT_CALL) {
                t->calls++;
                pending_call = true;
            } else if (insn.iclass == PTD_ICLASS_NEAR_RET) {
                t->returns++;
            }
            if (insn.iclass != PTD_ICLASS_OTHER) {
                br.from = insn.ip;
                br.iclass = insn.iclass;
                pending_branch = true;
            }
            if (st < 0)
                break;
        }
        if (st == -PTD_ERR_EOS)
            break;
        report_error(c, t, st);
        pending_call = pending_branch = false;
    }

    char a[SIDEBAND_NAME_MAX + 24], b[SIDEBAND_NAME_MAX + 24];
    for (unsigned i = 0; i < d.ntargets; i++) {
        name_of(c, d.targets[i].ip, a, sizeof a);
        efi_con_printf("call %s count=%llu\n", a, (unsigned long long)d.targets[i].count);
    }
    if (d.targets_dropped)
        efi_con_printf("calls to %llu more targets not listed\n",
                       (unsigned long long)d.targets_dropped);
    if (last && d.nbranches) {
        uint64_t n = d.nbranches < last ? d.nbranches : last;
        efi_con_printf("last %llu branches (oldest first):\n", (unsigned long long)n);
        for (uint64_t i = d.nbranches - n; i < d.nbranches; i++) {
            const struct branch *x = &d.last[i % last];
            name_of(c, x->from, a, sizeof a);
            name_of(c, x->to, b, sizeof b);
            efi_con_printf("branch %s -> %s %s\n", a, b,
                           ptd_ild_iclass_name((enum ptd_iclass)x->iclass));
        }
    }
    efi_con_printf("ptboot: trace decode end insns=%llu errors=%llu calls=%llu returns=%llu\n",
                   (unsigned long long)t->insns, (unsigned long long)t->errors,
                   (unsigned long long)t->calls, (unsigned long long)t->returns);
    return 0;
}

static void sum_line(void *ctx, const char *line, size_t len)
{
    (void)ctx;
    efi_con_write(line, len);
    efi_con_write("\n", 1);
}

int efi_capture_summary(struct efi_capture *c, unsigned last, struct efi_capture_totals *t)
{
    return efi_capture_summary_flags(c, last, 0, t);
}

int efi_capture_summary_flags(struct efi_capture *c, unsigned last, unsigned flags,
                              struct efi_capture_totals *t)
{
    static struct ptd_sum sum;
    static struct ptd_sum_module mods[SIDEBAND_MAX_IMAGES];
    /* time from the trace's timing packets with the ratios the sideband
     * carries (MTCFreq, CPUID 15h: the soft unit's own clock for a soft
     * capture), as the host's summary --capture */
    static struct ptd_time_config tcfg;
    EFI_PHYSICAL_ADDRESS arena = 0;
    UINTN arena_pages = PTD_SUM_ARENA_SUGGESTED / 4096;
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, arena_pages, &arena))) {
        efi_con_puts("ptboot: trace: no memory for the summary tables; no summary\n");
        return -1;
    }
    for (uint32_t i = 0; i < c->sb.nimages; i++) {
        mods[i].base = c->sb.images[i].base;
        mods[i].size = c->sb.images[i].size;
        mods[i].name = c->sb.images[i].name;
    }
    struct ptd_flow_config fc;
    capture_flow_config(&fc, c);
    memset(&tcfg, 0, sizeof tcfg);
    sideband_time_config(&c->sb, &tcfg);
    fc.time = &tcfg;
    ptd_flow_init(&d.flow, &fc);
    struct ptd_sum_config sc;
    memset(&sc, 0, sizeof sc);
    sc.modules = mods;
    sc.nmodules = c->sb.nimages;
    sc.arena = (void *)(UINTN)arena;
    sc.arena_size = PTD_SUM_ARENA_SUGGESTED;
    sc.line = sum_line;
    sc.last = last;
    sc.flags = flags;
    efi_con_puts("ptboot: trace summary begin\n");
    const struct ptd_sum_stats *st = ptd_sum_run(&sum, &sc, &d.flow);
    efi_con_printf("ptboot: trace summary end lines=%llu insns=%llu errors=%llu\n",
                   (unsigned long long)st->lines, (unsigned long long)st->insns,
                   (unsigned long long)st->errors);
    if (t) {
        t->insns = st->insns;
        t->errors = st->errors;
        t->calls = st->calls;
        t->returns = st->returns;
    }
    BS->FreePages(arena, arena_pages);
    return 0;
}
