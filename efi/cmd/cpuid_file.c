#include <efi.h>

#include "arch/x86/cpuid_dump.h"
#include "efi/platform/console.h"
#include "efi/cmd/cpuid_file.h"
#include "efi/platform/volume.h"

int efi_cpuid_file_caps(struct efi_app *app, const char *cmd, const char *file,
                        struct rtit_caps *caps)
{
    static struct x86_cpuid_dump dump; /* 6 KiB: off the stack */
    void *text;
    size_t len;
    enum efi_volume_result r =
        efi_volume_load(app->image, file, PTB_CPUID_FILE_MAX_BYTES, &text, &len);
    if (r != PTB_VOLUME_OK) {
        efi_con_printf("ptboot: error: %s: %s: %s\n", cmd, file, efi_volume_result_name(r));
        return PTB_APP_FAILED;
    }
    unsigned line = 0;
    int err = x86_cpuid_dump_parse(&dump, text, len, &line);
    efi_volume_free(text, len);
    if (err) {
        efi_con_printf("ptboot: error: %s: %s:%u: %s\n", cmd, file, line,
                       x86_cpuid_dump_strerror(err));
        return PTB_APP_FAILED;
    }
    rtit_caps_read(caps, x86_cpuid_dump_query, &dump);
    return PTB_APP_OK;
}
