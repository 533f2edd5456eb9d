/* `serial-dump [--line-bytes N] FILE...`: sends files from the stick over
 * the serial console in the framed text of docs/serial.md, for
 * `ptboot serial LOG` to recover on the workstation. Each file goes under
 * its base name; "*.pt" files are cut at PSBs. */
#include <string.h>

#include "decoder/ptd_opts.h"
#include "efi/app.h"
#include "efi/platform/console.h"
#include "efi/capture/serial_dump.h"
#include "efi/platform/volume.h"

#define SERIAL_DUMP_MAX_FILES 16
/* As `dump`: larger files are refused rather than exhausting the memory
 * map the firmware still needs. */
#define SERIAL_DUMP_MAX_BYTES (512ull << 20)

static const char *base_name(const char *path)
{
    const char *b = path;
    for (const char *p = path; *p; p++)
        if (*p == '\\' || *p == '/' || *p == ':')
            b = p + 1;
    return b;
}

int efi_cmd_serial_dump(struct efi_app *app, int argc, char **argv)
{
    struct efi_dump_file files[SERIAL_DUMP_MAX_FILES];
    size_t nfiles = 0;
    uint64_t payload = 0;
    int status = PTB_APP_OK;

    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--line-bytes")) {
            if (i + 1 == argc || !ptd_opts_parse_u64(argv[i + 1], &payload) || !payload ||
                payload > PTD_FRAME_PAYLOAD_MAX) {
                efi_con_printf("ptboot: error: serial-dump: --line-bytes needs 1..%d\n",
                               PTD_FRAME_PAYLOAD_MAX);
                return PTB_APP_USAGE;
            }
            i++;
        } else if (argv[i][0] == '-') {
            efi_con_printf("ptboot: error: serial-dump: unknown option '%s'\n"
                           "usage: ptboot.efi serial-dump [--line-bytes N] FILE...\n",
                           argv[i]);
            return PTB_APP_USAGE;
        } else if (nfiles == SERIAL_DUMP_MAX_FILES) {
            efi_con_printf("ptboot: error: serial-dump: more than %d files\n",
                           SERIAL_DUMP_MAX_FILES);
            return PTB_APP_USAGE;
        } else {
            files[nfiles].name = argv[i]; /* the path for now; loaded below */
            nfiles++;
        }
    }
    if (!nfiles) {
        efi_con_puts("ptboot: error: serial-dump: no file given\n"
                     "usage: ptboot.efi serial-dump [--line-bytes N] FILE...\n");
        return PTB_APP_USAGE;
    }

    size_t loaded = 0;
    for (size_t i = 0; i < nfiles; i++) {
        const char *path = files[i].name;
        void *data;
        size_t len;
        enum efi_volume_result r =
            efi_volume_load(app->image, path, SERIAL_DUMP_MAX_BYTES, &data, &len);
        if (r != PTB_VOLUME_OK) {
            efi_con_printf("ptboot: error: serial-dump: %s: %s\n", path, efi_volume_result_name(r));
            status = PTB_APP_FAILED;
            continue;
        }
        files[loaded].name = base_name(path);
        files[loaded].data = data;
        files[loaded].size = len;
        files[loaded].kind = efi_serial_dump_kind(files[loaded].name);
        loaded++;
    }
    if (loaded) {
        if (efi_serial_dump(files, loaded, (uint32_t)payload, NULL) != loaded)
            status = PTB_APP_FAILED;
    }
    for (size_t i = 0; i < loaded; i++)
        efi_volume_free((void *)files[i].data, files[i].size);
    return status;
}
