/* `info --cpus`: each processor's Intel PT capabilities, read by CPUID on
 * that processor through MP services (efi/capture/mp.h). Useful on hybrid parts,
 * where P-cores and E-cores enumerate leaf 14h differently (CPUID.1Ah
 * gives the core type, SDM Vol. 2A CPUID "Hybrid Information"). */
#include <string.h>
#include <efi.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/pt_caps.h"
#include "efi/app.h"
#include "efi/platform/console.h"
#include "efi/capture/mp.h"

/* CPUID.1Ah:EAX[31:24] core type (SDM Vol. 2A, CPUID leaf 1Ah). */
#define X86_CPUID_HYBRID_LEAF 0x1au
#define X86_CORE_TYPE_ATOM    0x20u
#define X86_CORE_TYPE_CORE    0x40u

struct cpu_report {
    bool seen;
    struct rtit_caps caps;
    uint32_t core_type;
};

static struct cpu_report reports[PTB_MP_MAX_CPUS];

static void report_on(void *ctx, unsigned cpu, bool on_ap)
{
    struct cpu_report *r = ctx;
    (void)on_ap;
    if (cpu >= PTB_MP_MAX_CPUS)
        return;
    rtit_caps_read(&r[cpu].caps, x86_cpuid_native, NULL);
    r[cpu].core_type = 0;
    if (r[cpu].caps.hybrid && r[cpu].caps.max_basic_leaf >= X86_CPUID_HYBRID_LEAF) {
        x86_cpuid_regs h;
        x86_cpuid_native(NULL, X86_CPUID_HYBRID_LEAF, 0, &h);
        r[cpu].core_type = h.eax >> 24;
    }
    r[cpu].seen = true;
}

static const char *core_name(uint32_t t)
{
    return t == X86_CORE_TYPE_CORE ? "core" : t == X86_CORE_TYPE_ATOM ? "atom" : "-";
}

int efi_mp_info_cpus(struct efi_app *app)
{
    struct efi_mp mp;
    memset(reports, 0, sizeof(reports));
    efi_mp_init(&mp, app->st->BootServices);
    int r = efi_mp_run_all(&mp, report_on, reports, true);

    unsigned reported = 0;
    bool same = true;
    const struct rtit_caps *b = &reports[mp.bsp < PTB_MP_MAX_CPUS ? mp.bsp : 0].caps;
    for (unsigned n = 0; n < mp.count && n < PTB_MP_MAX_CPUS; n++) {
        const struct cpu_report *c = &reports[n];
        if (!c->seen) {
            efi_con_printf("ptboot: cpu n=%u bsp=%d reported=no\n", n, n == mp.bsp);
            continue;
        }
        reported++;
        if (memcmp(&c->caps.leaf14_0, &b->leaf14_0, sizeof(b->leaf14_0)) ||
            memcmp(&c->caps.leaf14_1, &b->leaf14_1, sizeof(b->leaf14_1)) || c->caps.pt != b->pt)
            same = false;
        efi_con_printf("ptboot: cpu n=%u bsp=%d pt=%s reason=%s ebx14=0x%x ecx14=0x%x "
                       "ranges=%u core=%s family=0x%x model=0x%x\n",
                       n, n == mp.bsp, c->caps.pt ? "yes" : "no",
                       rtit_pt_reason_name(c->caps.reason), (unsigned)c->caps.leaf14_0.ebx,
                       (unsigned)c->caps.leaf14_0.ecx, c->caps.num_ranges, core_name(c->core_type),
                       (unsigned)c->caps.family, (unsigned)c->caps.model);
    }
    efi_con_printf("ptboot: cpus count=%u enabled=%u reported=%u same=%d mp=%s\n", mp.count,
                   mp.enabled, reported, same, efi_mp_result_name(r));
    return reported ? PTB_APP_OK : PTB_APP_FAILED;
}

unsigned efi_mp_trace_report(const struct efi_mp_trace *t)
{
    unsigned traced = 0;
    for (unsigned n = 0; n < t->mp.count && n < PTB_MP_MAX_CPUS; n++) {
        const struct efi_mp_trace_cpu *c = &t->cpu[n];
        if (!c->seen && !c->used && c->rule == RTIT_RULE_OK)
            continue; /* not wanted */
        bool ok = c->used && c->start_rc == RTIT_SEQ_OK;
        traced += ok;
        efi_con_printf("ptboot: trace-cpu n=%u bsp=%d used=%d rule=%s start=%d bytes=%lu "
                       "wrapped=%d stopped=%d\n",
                       n, n == t->mp.bsp, c->used, rtit_rule_name(c->rule), c->start_rc,
                       (unsigned long)(ok ? c->sum.bytes : 0), ok && c->sum.wrapped,
                       ok && c->stop.stopped);
    }
    return traced;
}
