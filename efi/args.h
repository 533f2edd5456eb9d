/* Arguments of the UEFI app: from the config file on the stick
 * (\ptboot.cfg) and from the UEFI shell command line (LoadOptions). Pure C,
 * no UEFI types, so the host unit tests exercise exactly this code. */
#ifndef PTBOOT_EFI_ARGS_H
#define PTBOOT_EFI_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#define PTB_ARGS_MAX_TOKENS   64
#define PTB_ARGS_ERROR_BYTES  160
#define PTB_ARGS_MAX_COMMANDS 8
/* The word that separates commands: `info ; trace \ptbtest.efi`. */
#define PTB_ARGS_SEPARATOR ";"

enum efi_args_serial {
    PTB_ARGS_SERIAL_AUTO,
    PTB_ARGS_SERIAL_ON,
    PTB_ARGS_SERIAL_OFF
};

struct efi_args {
    /* Options of the app itself, valid anywhere on the line. */
    bool shutdown;               /* --shutdown: ResetSystem(shutdown) at the end */
    bool no_config;              /* --no-config: ignore \ptboot.cfg */
    bool version;                /* --version: say the build, run no command */
    enum efi_args_serial serial; /* --serial=auto|on|off */
    /* The command (first word that is not an app option) and its own
     * arguments, options included: the command checks those. */
    const char *command;
    int argc;
    char *argv[PTB_ARGS_MAX_TOKENS];
    /* Every command of the line, in order (cmd[0] is command/argc/argv
     * above): a word ";" ends one command and starts the next. Their
     * arguments lie back to back in argv. */
    int ncommands;
    struct efi_args_command {
        const char *command;
        int argc;
        char **argv;
    } cmd[PTB_ARGS_MAX_COMMANDS];
};

/* Splits the NUL-terminated text in place into whitespace-separated words. Double quotes group
 * words ("a b" is one word) and are removed; '#' at the start of a word
 * comments out the rest of its line (config files). Returns the number of
 * words, or -1 with a message in err when there are more than max words or
 * a quote is not closed. */
int efi_args_split(char *text, char **words, int max, char *err, size_t err_len);

/* True when word looks like the image path the UEFI shell puts first in
 * LoadOptions (ends in ".efi", or contains a '\' or ':'). */
bool efi_args_is_image_path(const char *word);

void efi_args_init(struct efi_args *a);
/* Applies one source of words (config file first, then the command line).
 * App options set flags; the first other word is the command, and the words
 * after it are its arguments. A source that names a command replaces the
 * command and arguments of an earlier source, so the shell line overrides the
 * stick's config. A word ";" separates commands (empty ones are skipped);
 * each runs in turn. App options count wherever they stand. An unknown
 * option before a command is an error. Returns 0, or -1 with a message in
 * err. */
int efi_args_apply(struct efi_args *a, char **words, int n, char *err, size_t err_len);

#endif
