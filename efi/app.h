/* State of one run of the UEFI app, handed to every command. */
#ifndef PTBOOT_EFI_APP_H
#define PTBOOT_EFI_APP_H

#include <efi.h>
#include "efi/args.h"

struct efi_app {
    EFI_HANDLE image;
    EFI_SYSTEM_TABLE *st;
    struct efi_args args;
    const char *msr_state; /* efi_msr_init()'s word */
    const char *serial_state;
    const char *config_state;
};

/* "ptboot <git describe>": `ptboot.efi --version` (build/gen/version.c,
 * scripts/version.sh; the host CLI prints the same text). */
extern const char ptboot_version[];

/* Exit statuses of commands, also in the final "ptboot: exit" line. */
#define PTB_APP_OK     0
#define PTB_APP_FAILED 1
#define PTB_APP_USAGE  2

struct efi_command {
    const char *name;
    const char *usage; /* arguments, for help */
    const char *summary;
    int (*run)(struct efi_app *app, int argc, char **argv);
};

const struct efi_command *efi_command_find(const char *name);
const struct efi_command *efi_command_at(size_t i); /* NULL past the end */

int efi_cmd_help(struct efi_app *app, int argc, char **argv);
int efi_cmd_info(struct efi_app *app, int argc, char **argv);
int efi_cmd_selftest(struct efi_app *app, int argc, char **argv);
int efi_cmd_dump(struct efi_app *app, int argc, char **argv);
int efi_cmd_decode(struct efi_app *app, int argc, char **argv);
int efi_cmd_memmap(struct efi_app *app, int argc, char **argv);
int efi_cmd_flow(struct efi_app *app, int argc, char **argv);
int efi_cmd_images(struct efi_app *app, int argc, char **argv);
int efi_cmd_install(struct efi_app *app, int argc, char **argv);
int efi_cmd_uninstall(struct efi_app *app, int argc, char **argv);
int efi_cmd_resident(struct efi_app *app, int argc, char **argv);
int efi_cmd_serial_dump(struct efi_app *app, int argc, char **argv);
int efi_cmd_trace(struct efi_app *app, int argc, char **argv);
int efi_cmd_plan(struct efi_app *app, int argc, char **argv);
int efi_cmd_recover(struct efi_app *app, int argc, char **argv);

#endif
