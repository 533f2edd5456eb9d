#include "efi/app.h"
#include "efi/platform/console.h"

int efi_cmd_help(struct efi_app *app, int argc, char **argv)
{
    (void)app;
    (void)argv;
    if (argc > 0) {
        efi_con_printf("ptboot: error: help takes no arguments\n");
        return PTB_APP_USAGE;
    }
    efi_con_puts("usage: ptboot.efi [app options] <command> [command options]\n"
                 "\n"
                 "Words come from \\ptboot.cfg on the boot volume first, then from the\n"
                 "UEFI shell command line; a command on the command line replaces the\n"
                 "config file's command.\n"
                 "\ncommands:\n");
    for (size_t i = 0; efi_command_at(i); i++) {
        const struct efi_command *c = efi_command_at(i);
        efi_con_printf("  %-10s %s\n", c->name, c->summary);
    }
    efi_con_puts("\napp options:\n"
                 "  --shutdown          power off (ResetSystem) when done; for unattended runs\n"
                 "  --no-shutdown       return to the boot manager when done (default)\n"
                 "  --serial=auto|on|off  also write to the UART: auto does so only when\n"
                 "                      the firmware's ConOut does not reach one already\n"
                 "  --no-config         ignore \\ptboot.cfg\n"
                 "  --version           say which build this is and run no command\n"
                 "\nat most 8 commands in one run (';' between them), 64 words in all;\n"
                 "\\ptboot.cfg holds at most 4 KiB\n");
    return PTB_APP_OK;
}
