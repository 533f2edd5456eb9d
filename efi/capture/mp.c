/* EFI_MP_SERVICES_PROTOCOL (PI spec Vol. 2, 13.4) and per-CPU RTIT capture;
 * the rules for what runs on an AP are in efi/capture/mp.h. */
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/capture_seq.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/rtit_memory.h"
#include "arch/x86/rtit_topa.h"
#include "efi/capture/mp.h"
#include "efi/platform/msr_safe.h"

/* gnu-efi does not declare the protocol: the members in PI spec order. */
#define PTB_MP_SERVICES_PROTOCOL_GUID                      \
    {                                                      \
        0x3fdda605, 0xa76e, 0x4f46,                        \
        {                                                  \
            0xad, 0x29, 0x12, 0xf4, 0x53, 0x1b, 0x3d, 0x08 \
        }                                                  \
    }

typedef VOID(EFIAPI *EFI_AP_PROCEDURE)(VOID *arg);
typedef struct _EFI_MP_SERVICES_PROTOCOL EFI_MP_SERVICES_PROTOCOL;
struct _EFI_MP_SERVICES_PROTOCOL {
    EFI_STATUS(EFIAPI *GetNumberOfProcessors)
    (EFI_MP_SERVICES_PROTOCOL *self, UINTN *count, UINTN *enabled);
    void *GetProcessorInfo;
    EFI_STATUS(EFIAPI *StartupAllAPs)
    (EFI_MP_SERVICES_PROTOCOL *self, EFI_AP_PROCEDURE proc, BOOLEAN single_thread,
     EFI_EVENT wait_event, UINTN timeout_us, VOID *arg, UINTN **failed_cpus);
    void *StartupThisAP;
    void *SwitchBSP;
    void *EnableDisableAP;
    /* "may be called from the BSP and APs" (13.4) */
    EFI_STATUS(EFIAPI *WhoAmI)(EFI_MP_SERVICES_PROTOCOL *self, UINTN *number);
};

int efi_mp_init(struct efi_mp *mp, EFI_BOOT_SERVICES *bs)
{
    EFI_GUID guid = PTB_MP_SERVICES_PROTOCOL_GUID;
    EFI_MP_SERVICES_PROTOCOL *p = NULL;
    UINTN count = 0, enabled = 0, me = 0;

    memset(mp, 0, sizeof(*mp));
    mp->count = mp->enabled = 1;
    if (EFI_ERROR(bs->LocateProtocol(&guid, NULL, (void **)&p)) || !p)
        return PTB_MP_E_NONE;
    if (EFI_ERROR(p->GetNumberOfProcessors(p, &count, &enabled)) || count == 0)
        return PTB_MP_E_NONE;
    if (EFI_ERROR(p->WhoAmI(p, &me)))
        return PTB_MP_E_NONE;
    mp->proto = p;
    mp->count = (unsigned)count;
    mp->enabled = (unsigned)enabled;
    mp->bsp = (unsigned)me;
    return PTB_MP_OK;
}

struct ap_call {
    EFI_MP_SERVICES_PROTOCOL *p;
    efi_mp_fn fn;
    void *ctx;
};

static VOID EFIAPI ap_entry(VOID *arg)
{
    struct ap_call *c = arg;
    UINTN n = 0;
    if (EFI_ERROR(c->p->WhoAmI(c->p, &n)))
        return;
    c->fn(c->ctx, (unsigned)n, true);
}

int efi_mp_run_all(const struct efi_mp *mp, efi_mp_fn fn, void *ctx, bool bsp_too)
{
    int r = PTB_MP_E_NONE;
    if (mp->proto && mp->enabled > 1) {
        struct ap_call c = { mp->proto, fn, ctx };
        /* blocking (no WaitEvent), all APs at once, bounded */
        EFI_STATUS s = c.p->StartupAllAPs(c.p, ap_entry, FALSE, NULL, PTB_MP_TIMEOUT_US, &c, NULL);
        if (s == EFI_SUCCESS || s == EFI_NOT_STARTED) /* NOT_STARTED: no AP enabled */
            r = PTB_MP_OK;
        else if (s == EFI_TIMEOUT)
            r = PTB_MP_E_TIMEOUT;
        else
            r = PTB_MP_E_FAILED;
    }
    if (bsp_too)
        fn(ctx, mp->bsp, false);
    return r;
}

const char *efi_mp_result_name(int r)
{
    switch (r) {
    case PTB_MP_OK: return "ok";
    case PTB_MP_E_NONE: return "bsp-only";
    case PTB_MP_E_TIMEOUT: return "ap-timeout";
    case PTB_MP_E_FAILED: return "startup-failed";
    }
    return "?";
}

struct caps_call {
    struct rtit_caps *caps;
    bool *seen;
    unsigned max;
};

static void read_caps_on(void *ctx, unsigned cpu, bool on_ap)
{
    struct caps_call *c = ctx;
    (void)on_ap;
    if (cpu >= c->max)
        return;
    /* CPUID only: no MSR, nothing that can fault */
    rtit_caps_read(&c->caps[cpu], x86_cpuid_native, NULL);
    c->seen[cpu] = true;
}

int efi_mp_read_caps(const struct efi_mp *mp, struct rtit_caps *caps, bool *seen, unsigned max)
{
    struct caps_call c = { caps, seen, max };
    for (unsigned i = 0; i < max; i++)
        seen[i] = false;
    return efi_mp_run_all(mp, read_caps_on, &c, true);
}

/* MSR access: the #GP-safe path on the BSP, the raw instructions on APs
 * for writes the BSP checked against that AP's own capabilities. */
static const struct rtit_msr_ops *ops_for(bool on_ap)
{
    return on_ap ? &efi_msr_raw_ops : &efi_msr_safe_ops;
}

static struct rtit_caps caps_scratch[PTB_MP_MAX_CPUS];
static bool seen_scratch[PTB_MP_MAX_CPUS];

EFI_STATUS efi_mp_trace_prepare(struct efi_mp_trace *t, EFI_BOOT_SERVICES *bs,
                                const struct capture_plan *plan)
{
    memset(t, 0, sizeof(*t));
    t->plan = plan;
    efi_mp_init(&t->mp, bs);
    efi_mp_read_caps(&t->mp, caps_scratch, seen_scratch, PTB_MP_MAX_CPUS);
    unsigned want = plan->cpus == CAPTURE_CPUS_ALL ? t->mp.count : plan->cpus;
    if (want > t->mp.count)
        want = t->mp.count;
    if (want > PTB_MP_MAX_CPUS)
        want = PTB_MP_MAX_CPUS;
    t->cpus = want;

    /* The BSP first, then APs in processor-number order. */
    unsigned taken = 0;
    for (unsigned k = 0; k < PTB_MP_MAX_CPUS && taken < want; k++) {
        unsigned n = k == 0 ? t->mp.bsp : (k <= t->mp.bsp ? k - 1 : k);
        if (n >= t->mp.count || n >= PTB_MP_MAX_CPUS)
            continue;
        struct efi_mp_trace_cpu *c = &t->cpu[n];
        c->seen = seen_scratch[n];
        c->caps = caps_scratch[n];
        if (!c->seen) {
            c->rule = RTIT_RULE_PT_ABSENT; /* disabled or did not report */
            continue;
        }
        taken++;
        c->cfg = plan->cfg;
        /* the plan was checked on the BSP; this CPU's own caps decide,
         * first at the plan's addresses (nothing allocated for a CPU that
         * cannot take it), then again where its buffer lands */
        struct rtit_violation v;
        struct rtit_memory_need need;
        c->rule = rtit_check(&c->cfg, &c->caps, &v);
        if (c->rule != RTIT_RULE_OK)
            continue;
        if (rtit_memory_need(&c->cfg, &c->caps, &need) != 0) {
            c->rule = rtit_check(&c->cfg, &c->caps, &v);
            if (c->rule == RTIT_RULE_OK)
                c->rule = RTIT_RULE_REGIONS_INVALID;
            continue;
        }
        c->pages = (UINTN)((need.block_bytes + EFI_PAGE_SIZE - 1) / EFI_PAGE_SIZE);
        EFI_STATUS s = bs->AllocatePages(
            AllocateAnyPages, plan->reserved_memory ? EfiReservedMemoryType : EfiLoaderData,
            c->pages, &c->block);
        if (EFI_ERROR(s)) {
            c->pages = 0;
            efi_mp_trace_free(t, bs);
            return s;
        }
        if (rtit_memory_place(&c->cfg, &c->caps, c->block, need.block_bytes) != 0) {
            c->rule = RTIT_RULE_REGIONS_INVALID;
            continue;
        }
        c->rule = rtit_check(&c->cfg, &c->caps, &v);
        if (c->rule != RTIT_RULE_OK)
            continue;
        if (c->cfg.output == RTIT_OUTPUT_TOPA) {
            struct rtit_topa_layout l;
            if (rtit_topa_build(&l, &c->cfg, (uint64_t *)(UINTN)c->cfg.table_phys,
                                (size_t)(need.table_bytes / RTIT_TOPA_TABLE_ALIGN)) != 0) {
                c->rule = RTIT_RULE_REGIONS_INVALID;
                continue;
            }
        }
        /* zeroed, so a wrap shows (rtit_output_summarize) */
        memset((void *)(UINTN)c->cfg.buffer_phys, 0, (size_t)need.buffer_bytes);
        c->used = true;
    }
    return EFI_SUCCESS;
}

static void start_on(void *ctx, unsigned cpu, bool on_ap)
{
    struct efi_mp_trace *t = ctx;
    if (cpu >= PTB_MP_MAX_CPUS || !t->cpu[cpu].used)
        return;
    struct efi_mp_trace_cpu *c = &t->cpu[cpu];
    /* rtit_start checks cfg against this CPU's caps before any write */
    c->start_rc = rtit_start(ops_for(on_ap), &c->cfg, &c->caps, false, &c->start);
}

static void stop_on(void *ctx, unsigned cpu, bool on_ap)
{
    struct efi_mp_trace *t = ctx;
    if (cpu >= PTB_MP_MAX_CPUS || !t->cpu[cpu].used || t->cpu[cpu].start_rc != RTIT_SEQ_OK)
        return;
    struct efi_mp_trace_cpu *c = &t->cpu[cpu];
    c->stop_rc = capture_seq_finish(ops_for(on_ap), &c->cfg,
                                    (const uint8_t *)(UINTN)c->cfg.buffer_phys, &c->stop, &c->sum);
}

int efi_mp_trace_start(struct efi_mp_trace *t)
{
    /* APs first, the BSP last: the BSP's trace then starts closest to
     * the traced code, which runs on the BSP. */
    return efi_mp_run_all(&t->mp, start_on, t, true);
}

int efi_mp_trace_stop(struct efi_mp_trace *t)
{
    /* The BSP first: it stops right after the traced code returns. */
    stop_on(t, t->mp.bsp, false);
    return efi_mp_run_all(&t->mp, stop_on, t, false);
}

void efi_mp_trace_free(struct efi_mp_trace *t, EFI_BOOT_SERVICES *bs)
{
    for (unsigned n = 0; n < PTB_MP_MAX_CPUS; n++) {
        struct efi_mp_trace_cpu *c = &t->cpu[n];
        if (c->pages) {
            bs->FreePages(c->block, c->pages);
            c->pages = 0;
            c->used = false;
        }
    }
}
