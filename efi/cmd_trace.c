/* `trace` (minimal first cut): loads an image, single-steps StartImage. */
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/soft_unit.h"
#include "efi/app.h"
#include "efi/console.h"
#include "efi/soft_step.h"

struct start_arg {
    EFI_HANDLE h;
};

static EFI_STATUS start_image(void *p)
{
    struct start_arg *a = p;
    UINTN exit_size = 0;
    CHAR16 *exit_data = NULL;
    return BS->StartImage(a->h, &exit_size, &exit_data);
}

struct count_ctx {
    uint64_t lo, hi, inside, outside;
};

static int count_step(void *ctx, uint64_t ip, unsigned mode, uint64_t tsc)
{
    struct count_ctx *c = ctx;
    (void)mode;
    (void)tsc;
    if (ip >= c->lo && ip < c->hi)
        c->inside++;
    else
        c->outside++;
    return SOFT_UNIT_CONTINUE;
}

int efi_cmd_trace(struct efi_app *app, int argc, char **argv)
{
    if (argc < 1) {
        efi_con_puts("usage: trace PATH\n");
        return EFI_APP_USAGE;
    }
    EFI_LOADED_IMAGE *self = NULL;
    BS->HandleProtocol(app->image, &LoadedImageProtocol, (void **)&self);
    CHAR16 wpath[256];
    size_t n = 0;
    for (; argv[0][n] && n < 255; n++)
        wpath[n] = (CHAR16)argv[0][n];
    wpath[n] = 0;
    EFI_DEVICE_PATH *dp = FileDevicePath(self->DeviceHandle, wpath);
    EFI_HANDLE h = NULL;
    EFI_STATUS s = BS->LoadImage(FALSE, app->image, dp, NULL, 0, &h);
    if (EFI_ERROR(s)) {
        efi_con_printf("ptboot: error: trace: LoadImage %s: 0x%llx\n", argv[0], (unsigned long long)s);
        return EFI_APP_FAILED;
    }
    EFI_LOADED_IMAGE *li = NULL;
    BS->HandleProtocol(h, &LoadedImageProtocol, (void **)&li);
    static struct count_ctx cc;
    const uint8_t *ib = li->ImageBase;
    uint32_t lfanew = *(const uint32_t *)(ib + 0x3c);
    uint64_t entry = (uint64_t)(UINTN)ib + *(const uint32_t *)(ib + lfanew + 0x28);
    cc.lo = (uint64_t)(UINTN)li->ImageBase;
    cc.hi = cc.lo + li->ImageSize;
    struct efi_soft_step_config cfg = {
        .step = count_step, .ctx = &cc,
        .self_lo = (uint64_t)(UINTN)self->ImageBase,
        .self_hi = (uint64_t)(UINTN)self->ImageBase + self->ImageSize,
        .max_steps = 2000000,
        .entry_ip = entry,
    };
    struct efi_soft_step_stats st;
    struct start_arg sa = { h };
    EFI_STATUS cs = 0;
    int r = efi_soft_step_run(&cfg, start_image, &sa, &cs, &st);
    efi_con_printf("ptboot: entered=%d returned=%d ret=0x%llx bounded=%d\n", st.entered, st.returned, (unsigned long long)st.return_ip, st.bounded);
    efi_con_printf("ptboot: step r=%d status=0x%llx traps=%llu reported=%llu self=%llu inside=%llu outside=%llu unexpected=%llu\n",
                   r, (unsigned long long)cs, (unsigned long long)st.traps, (unsigned long long)st.reported,
                   (unsigned long long)st.skipped_self, (unsigned long long)cc.inside,
                   (unsigned long long)cc.outside, (unsigned long long)st.unexpected);
    return EFI_APP_OK;
}
