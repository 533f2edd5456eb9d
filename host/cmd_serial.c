/* `ptboot serial LOG [--out DIR | --next-to-log] [--force] [--quiet]
 * [--strict] [--max-segments N]`: recovers the files of a serial dump
 * (decoder/ptd_frame.h, docs/serial.md) from a captured serial log (a file,
 * a pipe, or - for standard input), reports every lost or damaged line,
 * writes what survives and decodes it. This file is the command line: the
 * log read, the output directory checked, the facts of the log said; the
 * lines taken, joined and reported are host/serial_recover.c and
 * host/serial_join.c, the captures among the files (rebuilt parts,
 * manifest.txt, their flow) host/serial_capture.c.
 *
 * What is written, per file of the dump (NAME is the name in the dump):
 *   - every line there and the whole-file CRC32 right: DIR/NAME, byte for
 *     byte the file the target sent;
 *   - lines lost, a "pt" file: DIR/NAME.seg-<from>-<to> (hex offsets) for
 *     each run of surviving bytes that starts at the file's start or at a
 *     PSB (a line flagged P), up to the next loss: each decodes on its own.
 *     Surviving bytes before the first PSB of a run are reported, not
 *     written (a decoder cannot sync there);
 *   - lines lost, a "raw" file: DIR/NAME.partial, the file's size (as far as
 *     known) with the lost ranges as zero bytes.
 * Nothing is written without --out DIR (or --next-to-log), and no file in
 * DIR is overwritten without --force. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "decoder/ptd_opts.h"
#include "host/commands.h"
#include "host/input_file.h"
#include "host/serial_capture.h"
#include "host/serial_recover.h"

static void serial_usage(FILE *out)
{
    fprintf(out,
            "usage: ptboot serial LOG [--out DIR | --next-to-log] [--force] [--quiet] [--strict]\n"
            "                         [--max-segments N]\n"
            "\n"
            "Recovers the files of a serial dump (ptboot.efi serial-dump, docs/serial.md)\n"
            "from a captured serial log (LOG, or - for standard input; a pipe works too),\n"
            "reports every lost or damaged line, writes what survives and decodes the\n"
            "traces among it. Frame lines cut by the console (a wrap at N columns, a\n"
            "firmware message in the middle) are joined again when their CRC proves it;\n"
            "duplicated lines are dropped.\n"
            "\n"
            "  --out DIR        write the files into DIR, made if missing (one level).\n"
            "  --next-to-log    write them in the log's directory.\n"
            "                   Without either, only the reports (nothing is written).\n"
            "  --force          overwrite files that exist in DIR (else they are kept).\n"
            "  --quiet          print only damage reports and errors, at most %d lines per file.\n"
            "  --strict         exit 3 when any file came back incomplete.\n"
            "  --max-segments N write at most N segments per damaged trace (default %d, 0: all).\n"
            "\n"
            "Written: DIR/NAME for a file that came back whole (CRC32 checked);\n"
            "DIR/NAME.seg-FROM-TO for each PSB-aligned part of an incomplete trace;\n"
            "DIR/NAME.partial (lost bytes as zeros) for another incomplete file; an\n"
            "incomplete capture's sideband.txt and code snapshot rebuilt from what came;\n"
            "DIR/manifest.txt for each capture (which files are whole).\n"
            "More than one dump of a name in the log: the k-th dump's files (k >= 2)\n"
            "go into DIR/dump<k>/, each a capture directory of its own.\n"
            "Exit: 0 something recovered, 1 nothing recovered or a file not written,\n"
            "2 bad usage, 3 (--strict) a file incomplete.\n",
            SERIAL_QUIET_LINES, SERIAL_MAX_SEGMENTS);
}

/* The whole log from path (mapped: a long log is not copied), or
 * standard input for "-"; pipes and FIFOs are read until they end
 * (host/input_file.h). */
static int read_log(const char *prog, const char *path, struct input_file *in)
{
    char err[4400];
    int rc = strcmp(path, "-")
                 ? input_file_open(in, path, input_file_how(), err, sizeof err)
                 : input_file_from_fd(in, 0, "standard input", INPUT_READ, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", prog, err);
    return rc;
}

/* DIR made if missing (one level, as mkdir does) and proven writable by
 * making and removing a file in it (as root, permission bits say
 * nothing; a read-only file system does). */
static int out_dir_ready(const char *prog, const char *dir)
{
    struct stat sb;
    char probe[4200];
    if (stat(dir, &sb) != 0 && errno == ENOENT && mkdir(dir, 0777) != 0) {
        fprintf(stderr, "%s: %s: cannot create: %s\n", prog, dir, strerror(errno));
        return 1;
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "%s: %s: not a directory\n", prog, dir);
        return 2;
    }
    snprintf(probe, sizeof probe, "%s/.ptboot-serial-%ld", dir, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        fprintf(stderr, "%s: %s: not writable: %s\n", prog, dir, strerror(errno));
        return 1;
    }
    close(fd);
    unlink(probe);
    return 0;
}

/* One line on how the log's lines were put together (joins, duplicates),
 * before the files' reports. The wrap column is said even under --quiet:
 * a wrapped log recovers nothing else, and nothing else would say why. */
static void log_facts(const struct serial_ctx *c)
{
    const struct serial_join_stats *j = &c->join;
    uint32_t w = serial_wrap_width(j);
    size_t wrapped = j->joined - j->joined_split;
    if (w)
        printf(
            "serial: lines look wrapped at %u columns: %zu frame line(s) joined from their pieces "
            "(their CRCs prove them)%s\n",
            w, wrapped, j->fragments ? ", some pieces would not join (damaged)" : "");
    else if (wrapped && !c->quiet)
        printf("serial: %zu frame line(s) joined from pieces (their CRCs prove them)\n", wrapped);
    if (c->duplicates && !c->quiet)
        printf("serial: %zu duplicate frame line(s) dropped (the same line came before: id, fields "
               "and CRC)\n",
               c->duplicates);
}

int host_cmd_serial(int argc, char **argv)
{
    struct serial_ctx c = { .prog = "ptboot serial", .max_segments = SERIAL_MAX_SEGMENTS };
    const char *log = NULL;
    char dirbuf[4096];
    bool strict = false, next_to_log = false;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            serial_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--out")) {
            if (i + 1 == argc || !argv[i + 1][0]) {
                fprintf(stderr, "%s: --out needs a directory\n", c.prog);
                return 2;
            }
            c.dir = argv[++i];
        } else if (!strcmp(a, "--next-to-log")) {
            next_to_log = true;
        } else if (!strcmp(a, "--force")) {
            c.force = true;
        } else if (!strcmp(a, "--quiet")) {
            c.quiet = true;
        } else if (!strcmp(a, "--strict")) {
            strict = true;
        } else if (!strcmp(a, "--max-segments")) {
            uint64_t v;
            if (i + 1 == argc || !ptd_opts_parse_u64(argv[i + 1], &v) || v > 1000000) {
                fprintf(stderr, "%s: --max-segments wants a number 0..1000000 (0: all)\n", c.prog);
                return 2;
            }
            c.max_segments = (size_t)v;
            i++;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "%s: unknown option: %s\ntry 'ptboot serial --help'\n", c.prog, a);
            return 2;
        } else if (log) {
            fprintf(stderr, "%s: more than one log: %s and %s\n", c.prog, log, a);
            return 2;
        } else {
            log = a;
        }
    }
    if (!log) {
        fprintf(
            stderr,
            "%s: no serial log given (- reads standard input)\n"
            "usage: ptboot serial LOG [--out DIR | --next-to-log] [--force] [--quiet] [--strict]\n",
            c.prog);
        return 2;
    }
    if (c.dir && next_to_log) {
        fprintf(stderr, "%s: --out DIR or --next-to-log, not both\n", c.prog);
        return 2;
    }
    if (next_to_log) {
        const char *slash = strrchr(log, '/');
        if (!strcmp(log, "-")) {
            fprintf(stderr, "%s: --next-to-log: standard input has no directory; give --out DIR\n",
                    c.prog);
            return 2;
        }
        if (slash)
            snprintf(dirbuf, sizeof dirbuf, "%.*s", (int)(slash - log) ? (int)(slash - log) : 1,
                     log);
        else
            snprintf(dirbuf, sizeof dirbuf, ".");
        c.dir = dirbuf;
    }
    if (c.dir) {
        int rc = out_dir_ready(c.prog, c.dir);
        if (rc)
            return rc;
    }

    struct input_file in;
    if (read_log(c.prog, log, &in) < 0)
        return 1;

    host_serial_take_log(&c, in.data, in.size);
    input_file_close(&in);
    log_facts(&c);

    if (!c.nfiles) {
        uint32_t w = serial_wrap_width(&c.join);
        fprintf(stderr, "%s: %s: no serial dump found (no intact frame line%s)\n", c.prog, log,
                c.join.fragments
                    ? (w ? "; lines look wrapped and did not join" : "; only damaged ones")
                    : "");
        return 1;
    }
    if (!c.dir && !c.quiet)
        printf("serial: reports only, nothing written (--out DIR writes the files)\n");
    size_t whole = host_serial_finish(&c), nfiles = c.nfiles;
    if (c.dir)
        host_serial_captures(&c);
    host_serial_free(&c);
    if (!c.quiet || whole < nfiles)
        printf("serial: %zu file(s) in the log, %zu complete, %zu written%s%s\n", nfiles, whole,
               c.written, c.dir ? " to " : "", c.dir ? c.dir : " (reports only)");
    if (c.not_written) {
        fprintf(stderr, "%s: %zu file(s) not written to %s%s\n", c.prog, c.not_written, c.dir,
                c.kept == c.not_written ? ": they exist (--force overwrites)" : "");
        return 1;
    }
    if (c.dir && !c.written) {
        fprintf(stderr, "%s: nothing could be recovered\n", c.prog);
        return 1;
    }
    return strict && whole < nfiles ? 3 : 0;
}
