/* Entry point of the UEFI app build/ptboot.efi.
 *
 * Words come from \ptboot.cfg on the boot volume (so a stick boots straight
 * into the tool, no shell needed) and then from LoadOptions (the UEFI shell's
 * command line). The run ends with one line a test or a lab script can rely
 * on:  ptboot: exit status=<n> sbrk_calls=<n> msr_faults=<n>
 * then either ResetSystem(shutdown) (--shutdown, unattended runs) or a return
 * to the boot manager. */
#include <stdio.h>
#include <efi.h>
#include <efilib.h>

#include "efi/app.h"
#include "efi/args.h"
#include "efi/cmd/recover.h"
#include "efi/platform/console.h"
#include "efi/platform/watchdog.h"
#include "efi/platform/msr_safe.h"
#include "efi/resident/driver.h"
#include "efi/platform/syscalls.h"
#include "efi/platform/volume.h"

#define CONFIG_PATH       "\\ptboot.cfg"
#define CONFIG_MAX_BYTES  4096
#define CMDLINE_MAX_CHARS 1024

/* Word storage: both sources stay alive for the whole run because argv
 * points into them. Static, not on the stack: 5 KiB in one frame is more
 * than a firmware stack should be asked for. */
static char config_text[CONFIG_MAX_BYTES + 1];
static char cmdline_text[CMDLINE_MAX_CHARS + 1];
static char *config_words[PTB_ARGS_MAX_TOKENS];
static char *cmdline_words[PTB_ARGS_MAX_TOKENS];

/* LoadOptions is UCS-2 text when the shell started us; boot-manager options
 * may hold binary data instead, which we ignore (not text: no arguments). */
static int cmdline_from_load_options(EFI_HANDLE image, char *err, size_t err_len)
{
    EFI_LOADED_IMAGE *li = NULL;
    if (EFI_ERROR(BS->HandleProtocol(image, &LoadedImageProtocol, (void **)&li)) || !li)
        return 0;
    const CHAR16 *w = li->LoadOptions;
    size_t chars = li->LoadOptionsSize / sizeof(CHAR16);
    if (!w || chars == 0 || li->LoadOptionsSize % sizeof(CHAR16))
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < chars && w[i]; i++) {
        if (w[i] < 0x09 || w[i] > 0x7e)
            return 0; /* not a command line */
        if (n == CMDLINE_MAX_CHARS) {
            snprintf(err, err_len, "command line longer than %d characters", CMDLINE_MAX_CHARS);
            return -1;
        }
        cmdline_text[n++] = (char)w[i];
    }
    cmdline_text[n] = '\0';
    int count = efi_args_split(cmdline_text, cmdline_words, PTB_ARGS_MAX_TOKENS, err, err_len);
    if (count > 0 && efi_args_is_image_path(cmdline_words[0])) {
        /* The shell puts the image's own name first. */
        for (int i = 1; i < count; i++)
            cmdline_words[i - 1] = cmdline_words[i];
        count--;
    }
    return count;
}

static int gather_args(struct efi_app *app, char *err, size_t err_len)
{
    int ncmd = cmdline_from_load_options(app->image, err, err_len);
    if (ncmd < 0)
        return -1;
    /* Apply the command line once first: --no-config must be seen before
     * the config is read. It is applied again after the config so that it
     * wins over the config's words. */
    struct efi_args probe;
    efi_args_init(&probe);
    if (efi_args_apply(&probe, cmdline_words, ncmd, err, err_len))
        return -1;

    efi_args_init(&app->args);
    app->config_state = "skipped (--no-config)";
    if (!probe.no_config) {
        size_t len = 0;
        enum efi_volume_result r =
            efi_volume_read(app->image, CONFIG_PATH, config_text, sizeof config_text, &len);
        if (r == PTB_VOLUME_NOT_FOUND) {
            app->config_state = "none";
        } else if (r != PTB_VOLUME_OK) {
            snprintf(err, err_len, "%s: %s (at most %d bytes)", CONFIG_PATH,
                     efi_volume_result_name(r), CONFIG_MAX_BYTES);
            return -1;
        } else {
            app->config_state = CONFIG_PATH;
            int n = efi_args_split(config_text, config_words, PTB_ARGS_MAX_TOKENS, err, err_len);
            if (n < 0 || efi_args_apply(&app->args, config_words, n, err, err_len)) {
                /* say where the bad word came from */
                char inner[PTB_ARGS_ERROR_BYTES];
                snprintf(inner, sizeof inner, "%s", err);
                snprintf(err, err_len, "%s: %s", CONFIG_PATH, inner);
                return -1;
            }
        }
    }
    return efi_args_apply(&app->args, cmdline_words, ncmd, err, err_len);
}

/* The watchdog was switched off at entry (efi_main). */
static bool watchdog_off;

static int run(struct efi_app *app)
{
    char err[PTB_ARGS_ERROR_BYTES];
    err[0] = '\0';
    int ok = gather_args(app, err, sizeof err);
    app->serial_state = efi_con_set_serial((enum efi_serial_mode)app->args.serial);
    app->msr_state = efi_msr_init(BS);
    efi_con_printf("ptboot: start config=%s serial=%s msr=%s\n", app->config_state,
                   app->serial_state, app->msr_state);
    if (watchdog_off)
        efi_con_printf(
            "ptboot: watchdog off (armed again with %us before an image starts and at the end)\n",
            PTB_WATCHDOG_BOOT_SECONDS);
    if (ok != 0) {
        efi_con_printf("ptboot: error: %s\n", err);
        return PTB_APP_USAGE;
    }
    /* a recorder from before a reset: saved before anything else runs
     * (docs/hang.md) */
    efi_recover_auto(app);
    if (app->args.version) {
        efi_con_printf("ptboot: version %s\n", ptboot_version);
        return PTB_APP_OK;
    }
    if (app->args.ncommands <= 1) {
        const char *name = app->args.command ? app->args.command : "help";
        const struct efi_command *cmd = efi_command_find(name);
        if (!cmd) {
            efi_con_printf("ptboot: error: unknown command '%s' (see 'ptboot help')\n", name);
            return PTB_APP_USAGE;
        }
        return cmd->run(app, app->args.argc, app->args.argv);
    }
    /* Several commands (`info ; trace X`): each runs, in order, even after
     * one failed; the exit status is the first non-zero one. Names are
     * checked first, so a typo stops the run before anything happens. */
    for (int i = 0; i < app->args.ncommands; i++) {
        if (!efi_command_find(app->args.cmd[i].command)) {
            efi_con_printf("ptboot: error: unknown command '%s' (see 'ptboot help')\n",
                           app->args.cmd[i].command);
            return PTB_APP_USAGE;
        }
    }
    int status = PTB_APP_OK;
    for (int i = 0; i < app->args.ncommands; i++) {
        const struct efi_args_command *c = &app->args.cmd[i];
        int s = efi_command_find(c->command)->run(app, c->argc, c->argv);
        efi_con_printf("ptboot: command %d/%d %s status=%d\n", i + 1, app->args.ncommands,
                       c->command, s);
        if (s != PTB_APP_OK && status == PTB_APP_OK)
            status = s;
    }
    return status;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
    static struct efi_app app;
    InitializeLib(image, st);
    /* Loaded from a Driver#### option (`install`): the resident tracer. */
    if (efi_resident_is_driver(image))
        return efi_resident_driver_main(image, st);
    efi_con_init(st);
    app.image = image;
    app.st = st;
    app.config_state = "not read";
    app.serial_state = "off";
    app.msr_state = "not initialised";
    /* The boot manager's 5-minute watchdog (UEFI 2.10 section 3.1.2) would
     * reset the machine in the middle of a long decode or serial dump: off
     * while ptboot works, armed again as the boot manager left it before an
     * image starts and before returning (efi/platform/watchdog.h). */
    bool dog = efi_watchdog_off();
    watchdog_off = dog;

    int status = run(&app);
    efi_con_printf("ptboot: exit status=%d sbrk_calls=%u msr_faults=%u\n", status, efi_sbrk_calls(),
                   efi_msr_faults());
    efi_con_flush();
    if (dog)
        efi_watchdog_boot_manager();
    if (app.args.shutdown) {
        st->RuntimeServices->ResetSystem(EfiResetShutdown, status ? EFI_ABORTED : EFI_SUCCESS, 0,
                                         NULL);
    }
    return status == PTB_APP_OK      ? EFI_SUCCESS
           : status == PTB_APP_USAGE ? EFI_INVALID_PARAMETER
                                     : EFI_ABORTED;
}
