/* Word splitting and option handling of the UEFI app (efi/args.c): the
 * config file, the shell command line, and how the two combine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "efi/args.h"

#define MAXW 8

static int split(char *text, char **w, char *err)
{
    return efi_args_split(text, w, MAXW, err, PTB_ARGS_ERROR_BYTES);
}

static void split_words_quotes_comments(void **state)
{
    (void)state;
    char text[] = "  --shutdown\tinfo # the default\n"
                  "# a whole comment line\r\n"
                  "dump \"\\trace one.pt\" a\"b c\"d\n";
    char *w[MAXW], err[PTB_ARGS_ERROR_BYTES];
    assert_int_equal(split(text, w, err), 5);
    assert_string_equal(w[0], "--shutdown");
    assert_string_equal(w[1], "info");
    assert_string_equal(w[2], "dump");
    assert_string_equal(w[3], "\\trace one.pt");
    assert_string_equal(w[4], "ab cd");
}

static void split_empty_and_comment_only(void **state)
{
    (void)state;
    char a[] = "", b[] = " \r\n\t ", c[] = "# nothing\n#here";
    char *w[MAXW], err[PTB_ARGS_ERROR_BYTES];
    assert_int_equal(split(a, w, err), 0);
    assert_int_equal(split(b, w, err), 0);
    assert_int_equal(split(c, w, err), 0);
}

static void split_hash_inside_word_is_kept(void **state)
{
    (void)state;
    char text[] = "a#b #c";
    char *w[MAXW], err[PTB_ARGS_ERROR_BYTES];
    assert_int_equal(split(text, w, err), 1);
    assert_string_equal(w[0], "a#b");
}

static void split_errors(void **state)
{
    (void)state;
    char *w[MAXW], err[PTB_ARGS_ERROR_BYTES];
    char open_quote[] = "info \"unterminated";
    assert_int_equal(split(open_quote, w, err), -1);
    assert_string_equal(err, "unterminated quote in word 2");
    char many[] = "1 2 3 4 5 6 7 8 9";
    assert_int_equal(split(many, w, err), -1);
    assert_string_equal(err, "more than 8 words");
    char exactly[] = "1 2 3 4 5 6 7 8";
    assert_int_equal(split(exactly, w, err), 8);
}

static void image_path_detection(void **state)
{
    (void)state;
    assert_true(efi_args_is_image_path("ptboot.efi"));
    assert_true(efi_args_is_image_path("PTBOOT.EFI"));
    assert_true(efi_args_is_image_path("fs0:\\ptboot.efi"));
    assert_true(efi_args_is_image_path("\\EFI\\BOOT\\BOOTX64.EFI"));
    assert_false(efi_args_is_image_path("info"));
    assert_false(efi_args_is_image_path("--shutdown"));
    assert_false(efi_args_is_image_path("efi"));
}

static void apply_options_and_command(void **state)
{
    (void)state;
    struct efi_args a;
    char err[PTB_ARGS_ERROR_BYTES];
    char *w[] = { "--serial=off", "dump", "--raw", "--shutdown", "x.pt" };
    efi_args_init(&a);
    assert_int_equal(efi_args_apply(&a, w, 5, err, sizeof err), 0);
    assert_true(a.shutdown); /* app options are taken anywhere */
    assert_int_equal(a.serial, PTB_ARGS_SERIAL_OFF);
    assert_string_equal(a.command, "dump");
    assert_int_equal(a.argc, 2);
    assert_string_equal(a.argv[0], "--raw");
    assert_string_equal(a.argv[1], "x.pt");
}

static void command_line_overrides_config(void **state)
{
    (void)state;
    struct efi_args a;
    char err[PTB_ARGS_ERROR_BYTES];
    char *cfg[] = { "--shutdown", "--serial=on", "info", "--verbose" };
    char *cmd[] = { "--serial=auto", "selftest" };
    efi_args_init(&a);
    assert_int_equal(efi_args_apply(&a, cfg, 4, err, sizeof err), 0);
    assert_int_equal(efi_args_apply(&a, cmd, 2, err, sizeof err), 0);
    assert_true(a.shutdown);                          /* kept from config */
    assert_int_equal(a.serial, PTB_ARGS_SERIAL_AUTO); /* overridden */
    assert_string_equal(a.command, "selftest");       /* replaced */
    assert_int_equal(a.argc, 0);                      /* config's args dropped */

    /* A command line with options only keeps the config's command. */
    char *opts[] = { "--no-shutdown" };
    efi_args_init(&a);
    assert_int_equal(efi_args_apply(&a, cfg, 4, err, sizeof err), 0);
    assert_int_equal(efi_args_apply(&a, opts, 1, err, sizeof err), 0);
    assert_false(a.shutdown);
    assert_string_equal(a.command, "info");
    assert_int_equal(a.argc, 1);
}

static void apply_errors(void **state)
{
    (void)state;
    struct efi_args a;
    char err[PTB_ARGS_ERROR_BYTES];
    char *unknown[] = { "--bogus", "info" };
    efi_args_init(&a);
    assert_int_equal(efi_args_apply(&a, unknown, 2, err, sizeof err), -1);
    assert_string_equal(err, "unknown option '--bogus' (see 'ptboot help')");
    char *badval[] = { "--serial=maybe" };
    efi_args_init(&a);
    assert_int_equal(efi_args_apply(&a, badval, 1, err, sizeof err), -1);
    assert_string_equal(err, "bad value 'maybe' for --serial (auto, on or off)");
    /* After the command, unknown options belong to the command. */
    char *later[] = { "info", "--bogus" };
    efi_args_init(&a);
    assert_int_equal(efi_args_apply(&a, later, 2, err, sizeof err), 0);
    assert_int_equal(a.argc, 1);
    efi_args_init(&a);
    assert_null(a.command);
}

/* A word ";" separates commands; each keeps its own arguments. */
static void separator_splits_commands(void **state)
{
    (void)state;
    char text[] = "--shutdown info ; trace --unit soft \\ptbtest.efi ;; ; help\n";
    char *w[16], err[PTB_ARGS_ERROR_BYTES];
    int n = efi_args_split(text, w, 16, err, sizeof err);
    assert_int_equal(n, 10);
    struct efi_args a;
    efi_args_init(&a);
    assert_int_equal(efi_args_apply(&a, w, n, err, sizeof err), 0);
    assert_true(a.shutdown);
    /* ";;" is not the separator: it is one more of trace's words */
    assert_int_equal(a.ncommands, 3);
    assert_string_equal(a.cmd[0].command, "info");
    assert_int_equal(a.cmd[0].argc, 0);
    assert_string_equal(a.cmd[1].command, "trace");
    assert_int_equal(a.cmd[1].argc, 4);
    assert_string_equal(a.cmd[1].argv[0], "--unit");
    assert_string_equal(a.cmd[1].argv[1], "soft");
    assert_string_equal(a.cmd[1].argv[2], "\\ptbtest.efi");
    assert_string_equal(a.cmd[1].argv[3], ";;");
    assert_string_equal(a.cmd[2].command, "help");
    assert_int_equal(a.cmd[2].argc, 0);
    /* the first command is also command/argc/argv, as for one command */
    assert_string_equal(a.command, "info");
    assert_int_equal(a.argc, 0);
    assert_ptr_equal(a.cmd[1].argv, &a.argv[0]);
}

/* One command: ncommands 1 and the same fields as before the separator. */
static void single_command_unchanged(void **state)
{
    (void)state;
    char *w[] = { "dump", "--raw", "x.pt", "--shutdown" };
    char err[PTB_ARGS_ERROR_BYTES];
    struct efi_args a;
    efi_args_init(&a);
    assert_int_equal(efi_args_apply(&a, w, 4, err, sizeof err), 0);
    assert_int_equal(a.ncommands, 1);
    assert_string_equal(a.command, "dump");
    assert_int_equal(a.argc, 2);
    assert_string_equal(a.argv[1], "x.pt");
    assert_ptr_equal(a.cmd[0].argv, a.argv);
    assert_true(a.shutdown);
}

/* The shell line's commands replace all of the config's; app options on
 * the shell line alone keep the config's commands. */
static void separator_with_two_sources(void **state)
{
    (void)state;
    char *cfg[] = { "info", ";", "trace", "\\a.efi" };
    char *opts[] = { "--shutdown" };
    char *line[] = { "flow", "--live", ";", "help" };
    char err[PTB_ARGS_ERROR_BYTES];
    struct efi_args a;
    efi_args_init(&a);
    assert_int_equal(efi_args_apply(&a, cfg, 4, err, sizeof err), 0);
    assert_int_equal(efi_args_apply(&a, opts, 1, err, sizeof err), 0);
    assert_int_equal(a.ncommands, 2);
    assert_string_equal(a.cmd[1].argv[0], "\\a.efi");
    assert_int_equal(efi_args_apply(&a, line, 4, err, sizeof err), 0);
    assert_int_equal(a.ncommands, 2);
    assert_string_equal(a.cmd[0].command, "flow");
    assert_int_equal(a.cmd[0].argc, 1);
    assert_string_equal(a.cmd[1].command, "help");
    assert_int_equal(a.cmd[1].argc, 0);
    assert_string_equal(a.command, "flow");
}

static void separator_errors(void **state)
{
    (void)state;
    char err[PTB_ARGS_ERROR_BYTES];
    struct efi_args a;
    /* an option where a command should start */
    char *bad[] = { "info", ";", "--unit", "soft" };
    efi_args_init(&a);
    assert_int_equal(efi_args_apply(&a, bad, 4, err, sizeof err), -1);
    assert_string_equal(err, "unknown option '--unit' (see 'ptboot help')");
    /* more commands than the table holds */
    char *many[2 * PTB_ARGS_MAX_COMMANDS + 2];
    for (int i = 0; i < PTB_ARGS_MAX_COMMANDS + 1; i++) {
        many[2 * i] = "info";
        many[2 * i + 1] = ";";
    }
    efi_args_init(&a);
    assert_int_equal(efi_args_apply(&a, many, 2 * PTB_ARGS_MAX_COMMANDS, err, sizeof err), 0);
    assert_int_equal(a.ncommands, PTB_ARGS_MAX_COMMANDS);
    efi_args_init(&a);
    assert_int_equal(efi_args_apply(&a, many, 2 * PTB_ARGS_MAX_COMMANDS + 1, err, sizeof err), -1);
    assert_string_equal(err, "more than 8 commands (one run takes at most 8, separated by ';')");
    /* only separators: no command */
    char *none[] = { ";", ";" };
    efi_args_init(&a);
    assert_int_equal(efi_args_apply(&a, none, 2, err, sizeof err), 0);
    assert_int_equal(a.ncommands, 0);
    assert_null(a.command);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(split_words_quotes_comments),
        cmocka_unit_test(split_empty_and_comment_only),
        cmocka_unit_test(split_hash_inside_word_is_kept),
        cmocka_unit_test(split_errors),
        cmocka_unit_test(image_path_detection),
        cmocka_unit_test(apply_options_and_command),
        cmocka_unit_test(command_line_overrides_config),
        cmocka_unit_test(apply_errors),
        cmocka_unit_test(separator_splits_commands),
        cmocka_unit_test(single_command_unchanged),
        cmocka_unit_test(separator_with_two_sources),
        cmocka_unit_test(separator_errors),
    };
    return cmocka_run_group_tests_name("efi_args", tests, NULL, NULL);
}
