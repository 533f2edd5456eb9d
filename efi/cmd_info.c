/* `info`: what the CPU offers for Intel PT, and what the firmware left in the
 * RTIT MSRs. Reads only MSRs that CPUID promises, through the #GP-safe path. */
#include <efi.h>
#include <efilib.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/pt_caps.h"
#include "arch/x86/pt_caps_report.h"
#include "arch/x86/rtit_msr_snapshot.h"
#include "efi/app.h"
#include "efi/console.h"
#include "efi/msr_safe.h"

static int msr_rd(void *ctx, uint32_t msr, uint64_t *value)
{
    (void)ctx;
    return efi_msr_read(msr, value) != EFI_MSR_OK;
}

static int msr_wr(void *ctx, uint32_t msr, uint64_t value)
{
    (void)ctx;
    return efi_msr_write(msr, value) != EFI_MSR_OK;
}

static void emit_line(void *ctx, const char *line)
{
    (void)ctx;
    efi_con_printf("%s\n", line);
}

static void print_firmware(EFI_SYSTEM_TABLE *st)
{
    char vendor[64];
    size_t n = 0;
    for (const CHAR16 *v = st->FirmwareVendor; v && *v && n + 1 < sizeof vendor; v++)
        vendor[n++] = *v < 0x80 ? (char)*v : '?';
    vendor[n] = '\0';
    UINT32 rev = st->Hdr.Revision;
    efi_con_printf("Firmware:            %s, revision 0x%08x, UEFI %u.%u\n", vendor,
                   (unsigned)st->FirmwareRevision, (unsigned)(rev >> 16),
                   (unsigned)(rev & 0xffff) / 10);
}

int efi_cmd_info(struct efi_app *app, int argc, char **argv)
{
    if (argc > 0) {
        efi_con_printf("ptboot: error: info: unknown argument '%s'\n", argv[0]);
        return EFI_APP_USAGE;
    }
    print_firmware(app->st);

    struct rtit_caps caps;
    rtit_caps_read(&caps, x86_cpuid_native, NULL);

    struct rtit_msr_snapshot snap;
    const struct rtit_msr_snapshot *msrs = NULL;
    if (caps.pt) {
        if (app->msr_state[0] == 'r') { /* "ready" */
            const struct rtit_msr_ops ops = { msr_rd, msr_wr, NULL };
            rtit_msr_snapshot_take(&snap, &caps, &ops);
            msrs = &snap;
        } else {
            efi_con_printf("RTIT MSRs:           not read (MSR path %s: no #GP protection)\n",
                           app->msr_state);
        }
    }
    rtit_caps_report(&caps, msrs, emit_line, NULL);
    return EFI_APP_OK;
}
