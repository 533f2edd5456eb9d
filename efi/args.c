#include <stdio.h>
#include <string.h>

#include "efi/args.h"

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

int efi_args_split(char *text, char **words, int max, char *err, size_t err_len)
{
    int n = 0;
    char *p = text;
    for (;;) {
        while (is_space(*p))
            p++;
        if (!*p)
            return n;
        if (*p == '#') {
            while (*p && *p != '\n')
                p++;
            continue;
        }
        if (n == max) {
            snprintf(err, err_len, "more than %d words", max);
            return -1;
        }
        /* Copy the word onto itself, dropping quotes: it can only shrink,
         * so the terminating NUL never lands past the separator. */
        char *out = p;
        words[n++] = out;
        bool quoted = false;
        while (*p && (quoted || !is_space(*p))) {
            if (*p == '"')
                quoted = !quoted;
            else
                *out++ = *p;
            p++;
        }
        if (quoted) {
            snprintf(err, err_len, "unterminated quote in word %d", n);
            return -1;
        }
        bool at_end = !*p;
        *out = '\0';
        if (at_end)
            return n;
        p++;
    }
}

bool efi_args_is_image_path(const char *w)
{
    size_t n = strlen(w);
    if (strchr(w, '\\') || strchr(w, ':'))
        return true;
    if (n >= 4) {
        const char *e = w + n - 4;
        return e[0] == '.' && (e[1] | 0x20) == 'e' && (e[2] | 0x20) == 'f' && (e[3] | 0x20) == 'i';
    }
    return false;
}

void efi_args_init(struct efi_args *a)
{
    memset(a, 0, sizeof *a);
    a->serial = PTB_ARGS_SERIAL_AUTO;
}

/* Returns 1 if w is an app option (and applies it), 0 if not, -1 if it is an
 * app option with a bad value. */
static int apply_app_option(struct efi_args *a, const char *w, char *err, size_t err_len)
{
    if (!strcmp(w, "--shutdown")) {
        a->shutdown = true;
        return 1;
    }
    if (!strcmp(w, "--no-shutdown")) {
        a->shutdown = false;
        return 1;
    }
    if (!strcmp(w, "--no-config")) {
        a->no_config = true;
        return 1;
    }
    if (!strcmp(w, "--version")) {
        a->version = true;
        return 1;
    }
    if (!strncmp(w, "--serial=", 9)) {
        const char *v = w + 9;
        if (!strcmp(v, "auto"))
            a->serial = PTB_ARGS_SERIAL_AUTO;
        else if (!strcmp(v, "on"))
            a->serial = PTB_ARGS_SERIAL_ON;
        else if (!strcmp(v, "off"))
            a->serial = PTB_ARGS_SERIAL_OFF;
        else {
            snprintf(err, err_len, "bad value '%s' for --serial (auto, on or off)", v);
            return -1;
        }
        return 1;
    }
    return 0;
}

int efi_args_apply(struct efi_args *a, char **words, int n, char *err, size_t err_len)
{
    bool replaced = false; /* this source named a command: earlier ones go */
    bool in_command = false;
    int used = 0; /* argv slots this source filled */
    for (int i = 0; i < n; i++) {
        const char *w = words[i];
        if (!strcmp(w, PTB_ARGS_SEPARATOR)) {
            in_command = false;
            continue;
        }
        int r = apply_app_option(a, w, err, err_len);
        if (r < 0)
            return -1;
        if (r > 0)
            continue;
        if (!in_command) {
            if (w[0] == '-') {
                snprintf(err, err_len, "unknown option '%s' (see 'ptboot help')", w);
                return -1;
            }
            if (!replaced) {
                a->ncommands = 0;
                replaced = true;
            }
            if (a->ncommands == PTB_ARGS_MAX_COMMANDS) {
                snprintf(err, err_len,
                         "more than %d commands (one run takes at most %d, separated by ';')",
                         PTB_ARGS_MAX_COMMANDS, PTB_ARGS_MAX_COMMANDS);
                return -1;
            }
            struct efi_args_command *c = &a->cmd[a->ncommands++];
            c->command = w;
            c->argc = 0;
            c->argv = a->argv + used;
            in_command = true;
            continue;
        }
        struct efi_args_command *c = &a->cmd[a->ncommands - 1];
        if (used == PTB_ARGS_MAX_TOKENS) {
            snprintf(err, err_len, "too many arguments for '%s'", c->command);
            return -1;
        }
        a->argv[used++] = words[i];
        c->argc++;
    }
    if (a->ncommands > 0) {
        a->command = a->cmd[0].command;
        a->argc = a->cmd[0].argc;
    }
    return 0;
}
