/* `info [--cpuid FILE]`: what the CPU offers for Intel PT, what the firmware
 * left in the RTIT MSRs (only MSRs CPUID promises, through the #GP-safe
 * path), and the MSR writes and ToPA entries a default capture would make.
 * With --cpuid, the same report for a CPUID dump on the stick (Debian's
 * `cpuid -r -1` format) instead of this CPU: no MSR is read then. */
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/pt_caps.h"
#include "arch/x86/pt_caps_report.h"
#include "arch/x86/rtit_msr_snapshot.h"
#include "arch/x86/rtit_plan_report.h"
#include "efi/app.h"
#include "efi/platform/console.h"
#include "efi/cmd/cpuid_file.h"
#include "efi/capture/mp.h"
#include "efi/platform/msr_safe.h"

static void emit_line(void *ctx, const char *line)
{
    efi_con_printf("%s%s\n", ctx ? (const char *)ctx : "", line);
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
    const char *dump_file = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--cpuid") && i + 1 < argc) {
            dump_file = argv[++i];
        } else if (!strcmp(argv[i], "--cpus")) {
            /* each processor's own CPUID, through MP services (efi/capture/mp_info.c) */
            return efi_mp_info_cpus(app);
        } else {
            efi_con_printf("ptboot: error: info: unknown argument '%s' (usage: info [--cpuid FILE "
                           "| --cpus])\n",
                           argv[i]);
            return PTB_APP_USAGE;
        }
    }
    print_firmware(app->st);

    struct rtit_caps caps;
    if (dump_file) {
        int status = efi_cpuid_file_caps(app, "info", dump_file, &caps);
        if (status != PTB_APP_OK)
            return status;
        efi_con_printf("CPUID source:        %s (a recorded dump, not this CPU)\n", dump_file);
    } else {
        rtit_caps_read(&caps, x86_cpuid_native, NULL);
    }

    struct rtit_msr_snapshot snap;
    const struct rtit_msr_snapshot *msrs = NULL;
    if (caps.pt && !dump_file) {
        if (app->msr_state[0] == 'r') { /* "ready" */
            rtit_msr_snapshot_take(&snap, &caps, &efi_msr_safe_ops);
            msrs = &snap;
        } else {
            efi_con_printf("RTIT MSRs:           not read (MSR path %s: no #GP protection)\n",
                           app->msr_state);
        }
    }
    rtit_caps_report(&caps, msrs, emit_line, NULL);
    if (caps.pt) {
        /* What a capture would program by default, so an engineer can check
         * it against the SDM before anything is written. A refused plan
         * prints its rule itself. */
        efi_con_puts("Start plan (default configuration, illustrative addresses):\n");
        if (rtit_plan_report_default(&caps, emit_line, "  ") < 0)
            efi_con_puts("  (no plan: no room for the ToPA table)\n");
    }
    return PTB_APP_OK;
}
