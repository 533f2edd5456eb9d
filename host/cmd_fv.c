/* `ptboot fv list IMAGE` and `ptboot fv inject IMAGE -o OUT ...`: the
 * firmware volumes of a flash image (PI 1.8 Vol. 3), and ptboot's
 * boot-service driver put into its DXE volume so that the firmware
 * dispatches it early in DXE (docs/early-boot.md). The tree is
 * host/fv_image.h's; the format readers and writers format/fv.h and
 * format/ffs.h. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "format/fv_ptboot.h"
#include "format/pe_info.h"
#include "host/cmd_dump.h"
#include "host/commands.h"
#include "host/fv_image.h"

/* What all LZMA sections of one image may unpack to together: OVMF's
 * unpack to 13 MB; a header claiming gigabytes is not a firmware image. */
#define FV_MAX_UNPACKED (512u << 20)
/* PE machine and subsystems (Microsoft PE format; UEFI 2.10 section 2.1.1) */
#define PE_MACHINE_X64                  0x8664
#define PE_SUBSYSTEM_EFI_APPLICATION    10
#define PE_SUBSYSTEM_EFI_BOOT_DRIVER    11
#define PE_SUBSYSTEM_EFI_RUNTIME_DRIVER 12
/* DXE dependency expression opcodes (PI 1.8 Vol. 2 section 10.7) */
#define DEPEX_BEFORE 0x00
#define DEPEX_AFTER  0x01
#define DEPEX_PUSH   0x02
#define DEPEX_AND    0x03
#define DEPEX_OR     0x04
#define DEPEX_NOT    0x05
#define DEPEX_TRUE   0x06
#define DEPEX_FALSE  0x07
#define DEPEX_END    0x08
#define DEPEX_SOR    0x09

static const char *const prog_list = "ptboot fv list";
static const char *const prog_inject = "ptboot fv inject";

static void fv_usage(FILE *out)
{
    fprintf(out, "usage: ptboot fv list IMAGE [--sections] [--pads] [--depex]\n"
                 "       ptboot fv inject IMAGE -o OUT [--driver FILE] [--config WORDS]\n"
                 "                        [--after GUID|NAME | --apriori] [--volume N]\n"
                 "\n"
                 "list: the firmware volumes of a flash image (PI specification FV/FFS), the\n"
                 "files in each (GUID, type, size, offset, user-interface name), and the\n"
                 "volumes inside LZMA-compressed and volume-image sections, as OVMF nests\n"
                 "its DXE volume. Ends with 'ptboot: fv list ... errors=<n>'; exit 1 when a\n"
                 "volume, file or section is corrupt.\n"
                 "  --sections   every section of every file, not only the encapsulating ones\n"
                 "  --pads       the pad files too\n"
                 "  --depex      each file's dependency expression (drivers and PEIMs)\n"
                 "\n"
                 "inject: adds ptboot's boot-service driver (a DRIVER file named \"ptboot\",\n"
                 "GUID " PTBOOT_FV_FILE_GUID_TEXT ") to the DXE volume (the one holding\n"
                 "the DXE core), compresses what held it again, fixes sizes, alignment and\n"
                 "checksums, and writes OUT. An image that already has the file gets it\n"
                 "replaced. The file goes right after the DXE core, so that the dispatcher\n"
                 "starts it first of the drivers that become ready with it; it traces the\n"
                 "rest of the boot (docs/early-boot.md).\n"
                 "  -o OUT          the new image (required)\n"
                 "  --driver FILE   the driver (default: ptbootdrv.efi next to this program)\n"
                 "  --config WORDS  the driver's words, as `install` takes them (e.g.\n"
                 "                  '--unit soft --image PciBusDxe'), in the file's RAW section\n"
                 "  --after GUID|NAME  dispatch right after that file of the volume (a DXE\n"
                 "                  AFTER dependency) instead of after the CPU architectural\n"
                 "                  protocol (the default: the soft unit's #DB handler needs it)\n"
                 "  --apriori       first in the volume's APRIORI list: before every other\n"
                 "                  driver (the driver waits for the CPU protocol itself)\n"
                 "  --volume N      the volume to add it to (as numbered by `list`)\n");
}

/* ---- list ---- */

struct list_opts {
    bool sections, pads, depex;
};

/* A GUID as the reader knows it: a file of the same volume by its name,
 * a GUID ptboot knows by name, else the GUID. */
static void guid_label(struct fv_node *vol, const struct pi_guid *g, char *out, size_t cap)
{
    struct fv_node *f = vol ? fv_volume_find(vol, g, NULL) : NULL;
    if (f && f->ui[0]) {
        snprintf(out, cap, "%s", f->ui);
        return;
    }
    if (pi_guid_name(g)) {
        snprintf(out, cap, "%s", pi_guid_name(g));
        return;
    }
    char t[PI_GUID_TEXT_BYTES];
    pi_guid_format(g, t);
    snprintf(out, cap, "%s", t);
}

/* A dependency expression as words ("push cpu-arch-protocol end"; PI 1.8
 * Vol. 2 section 10.7), bounded by its section. */
static void depex_text(struct fv_node *vol, const uint8_t *d, size_t len, char *out, size_t cap)
{
    static const char *const ops[] = { "before", "after", "push",  "and", "or",
                                       "not",    "true",  "false", "end", "sor" };
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < len && n + 1 < cap;) {
        uint8_t op = d[i++];
        int w;
        if (op > DEPEX_SOR) {
            w = snprintf(out + n, cap - n, "%s?0x%02x", n ? " " : "", op);
        } else if ((op == DEPEX_BEFORE || op == DEPEX_AFTER || op == DEPEX_PUSH) &&
                   len - i >= PI_GUID_BYTES) {
            struct pi_guid g;
            char label[PI_GUID_TEXT_BYTES + 32];
            memcpy(g.b, d + i, PI_GUID_BYTES);
            i += PI_GUID_BYTES;
            guid_label(vol, &g, label, sizeof label);
            w = snprintf(out + n, cap - n, "%s%s %s", n ? " " : "", ops[op], label);
        } else {
            w = snprintf(out + n, cap - n, "%s%s", n ? " " : "", ops[op]);
        }
        if (w < 0 || (size_t)w >= cap - n)
            break;
        n += (size_t)w;
    }
}

static void print_error(const struct fv_node *n, unsigned level)
{
    if (n->error[0])
        printf("%*serror: %s\n", (int)(2 * level + 2), "", n->error);
}

/* The text of the ptboot file's RAW section (its words). */
static void ptboot_config(struct fv_node *file, char *out, size_t cap)
{
    struct fv_node *raw = fv_node_section(file, FFS_SECTION_RAW);
    out[0] = '\0';
    if (!raw)
        return;
    size_t n = raw->size - raw->sec.data_offset;
    if (n >= cap)
        n = cap - 1;
    for (size_t i = 0; i < n; i++) {
        char c = (char)raw->bytes[raw->sec.data_offset + i];
        out[i] = (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    out[n] = '\0';
}

static void list_nodes(struct fv_node *n, unsigned level, const struct list_opts *o)
{
    static const struct pi_guid ptboot = PTBOOT_FV_FILE_GUID_INIT;
    for (; n; n = n->next) {
        char g[PI_GUID_TEXT_BYTES];
        unsigned next = level;
        switch (n->kind) {
        case FV_NODE_VOLUME:
            if (!n->parsed) {
                printf("%*svolume at=0x%llx corrupt\n", (int)(2 * level), "",
                       (unsigned long long)n->offset);
                print_error(n, level);
                break;
            }
            {
                const char *fs = pi_guid_name(&n->vol.fs_guid);
                pi_guid_format(&n->vol.fs_guid, g);
                printf("%*svolume %d at=0x%llx size=0x%llx fs=%s", (int)(2 * level), "", n->index,
                       (unsigned long long)n->offset, (unsigned long long)n->vol.length,
                       fs ? fs : g);
                if (n->vol.has_name) {
                    pi_guid_format(&n->vol.name, g);
                    printf(" name=%s", g);
                }
                if (fv_has_files(&n->vol))
                    printf(" files=%u pads=%u free=0x%llx", n->files, n->pads,
                           (unsigned long long)(n->vol.length - n->free_offset));
                printf("\n");
            }
            print_error(n, level);
            next = level + 1;
            break;
        case FV_NODE_FILE:
            if (n->file.type == FFS_TYPE_PAD && !o->pads)
                continue;
            pi_guid_format(&n->file.name, g);
            printf("%*sfile %s %s size=0x%llx at=0x%llx", (int)(2 * level), "", g,
                   ffs_type_name(n->file.type), (unsigned long long)n->file.size,
                   (unsigned long long)n->offset);
            if (n->file.state != FFS_FILE_VALID)
                printf(" state=%s", n->file.state == FFS_FILE_DELETED      ? "deleted"
                                    : n->file.state == FFS_FILE_INCOMPLETE ? "incomplete"
                                                                           : "unwritten");
            if (n->ui[0])
                printf(" %s", n->ui);
            else if (pi_guid_name(&n->file.name))
                printf(" (%s)", pi_guid_name(&n->file.name));
            if (pi_guid_equal(&n->file.name, &PI_GUID_APRIORI_DXE) ||
                pi_guid_equal(&n->file.name, &PI_GUID_APRIORI_PEI)) {
                /* the dispatch-first list, by name */
                struct fv_node *raw = fv_node_section(n, FFS_SECTION_RAW);
                size_t k = raw ? (raw->size - raw->sec.data_offset) / PI_GUID_BYTES : 0;
                printf(" list=");
                for (size_t i = 0; i < k; i++) {
                    struct pi_guid e;
                    char label[PI_GUID_TEXT_BYTES + 32];
                    memcpy(e.b, raw->bytes + raw->sec.data_offset + i * PI_GUID_BYTES,
                           PI_GUID_BYTES);
                    guid_label(fv_node_volume(n), &e, label, sizeof label);
                    printf("%s%s", i ? "," : "", label);
                }
            }
            if (o->depex) {
                struct fv_node *dx = fv_node_section(n, FFS_SECTION_DXE_DEPEX);
                if (!dx)
                    dx = fv_node_section(n, FFS_SECTION_PEI_DEPEX);
                if (dx) {
                    char text[512];
                    depex_text(fv_node_volume(n), dx->bytes + dx->sec.data_offset,
                               dx->size - dx->sec.data_offset, text, sizeof text);
                    printf(" depex='%s'", text);
                }
            }
            if (pi_guid_equal(&n->file.name, &ptboot)) {
                char words[PTBOOT_FV_CONFIG_MAX + 1];
                ptboot_config(n, words, sizeof words);
                printf(" config='%s'", words);
            }
            printf("\n");
            print_error(n, level);
            next = level + 1;
            break;
        case FV_NODE_SECTION: {
            bool shown = o->sections || n->sec.type == FFS_SECTION_GUID_DEFINED ||
                         n->sec.type == FFS_SECTION_COMPRESSION || n->error[0];
            if (!shown)
                break;
            printf("%*ssection %s size=0x%llx at=0x%llx", (int)(2 * level), "",
                   ffs_section_type_name(n->sec.type), (unsigned long long)n->size,
                   (unsigned long long)n->offset);
            if (n->sec.type == FFS_SECTION_GUID_DEFINED) {
                const char *name = pi_guid_name(&n->sec.guid);
                pi_guid_format(&n->sec.guid, g);
                printf(" guid=%s", name ? name : g);
            }
            if (n->unpacked)
                printf(" unpacked=0x%zx", n->unpacked_len);
            if (n->note[0])
                printf(" (%s)", n->note);
            printf("\n");
            print_error(n, level);
            next = level + 1;
            break;
        }
        }
        list_nodes(n->child, next, o);
    }
}

static int not_firmware(const char *prog, const char *path, size_t len)
{
    fprintf(stderr,
            "%s: %s: not a firmware image: no firmware volume header (_FVH) in its %zu bytes\n",
            prog, path, len);
    return 1;
}

static int fv_list(int argc, char **argv)
{
    struct list_opts o = { 0 };
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sections"))
            o.sections = true;
        else if (!strcmp(argv[i], "--pads"))
            o.pads = true;
        else if (!strcmp(argv[i], "--depex"))
            o.depex = true;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fv_usage(stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "%s: unknown option: %s\ntry 'ptboot fv --help'\n", prog_list, argv[i]);
            return 2;
        } else if (path) {
            fprintf(stderr, "%s: more than one image: %s and %s\n", prog_list, path, argv[i]);
            return 2;
        } else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr,
                "%s: no image given\nusage: ptboot fv list IMAGE [--sections] [--pads] [--depex]\n",
                prog_list);
        return 2;
    }
    uint8_t *data;
    size_t len;
    if (host_load_file(prog_list, path, &data, &len))
        return 1;
    struct fv_image im;
    if (fv_image_load(&im, data, len, FV_MAX_UNPACKED) == 0) {
        fv_image_free(&im);
        free(data);
        return not_firmware(prog_list, path, len);
    }
    list_nodes(im.first, 0, &o);
    printf("ptboot: fv list image=%s bytes=%zu volumes=%d files=%zu errors=%zu\n", path, len,
           im.volumes, im.files, im.errors);
    int rc = im.errors ? 1 : 0;
    fv_image_free(&im);
    free(data);
    return rc;
}

/* ---- inject ---- */

struct inject_opts {
    const char *image, *out, *driver, *config, *after;
    bool apriori;
    int volume;
};

static int volume_by_index(struct fv_node *n, void *ctx)
{
    struct fv_node **want = ctx;
    if (n->kind == FV_NODE_VOLUME && n->parsed && n->index == (*want)->index) {
        *want = n;
        return 1;
    }
    return 0;
}

/* The DXE volume: the first holding the DXE core, else the first with a
 * DRIVER file. */
struct find_dxe {
    struct fv_node *core, *driver;
};

static int find_dxe(struct fv_node *n, void *ctx)
{
    struct find_dxe *f = ctx;
    if (n->kind != FV_NODE_FILE)
        return 0;
    if (n->file.type == FFS_TYPE_DXE_CORE && !f->core)
        f->core = fv_node_volume(n);
    if (n->file.type == FFS_TYPE_DRIVER && !f->driver)
        f->driver = fv_node_volume(n);
    return 0;
}

static void put_bytes(uint8_t *p, size_t *at, const void *src, size_t n)
{
    memcpy(p + *at, src, n);
    *at += n;
}

/* The driver's file: DXE_DEPEX, PE32, USER_INTERFACE, RAW (its words). */
static long build_ptboot_file(const uint8_t *driver, size_t driver_len, const uint8_t *depex,
                              size_t depex_len, const char *words, uint8_t erased, bool ffs3,
                              uint8_t **out)
{
    static const struct pi_guid name = PTBOOT_FV_FILE_GUID_INIT;
    size_t cap = driver_len + depex_len + strlen(words) + 256;
    uint8_t *list = malloc(cap);
    if (!list)
        return FV_E_SPACE;
    long end = ffs_section_write(list, cap, 0, FFS_SECTION_DXE_DEPEX, depex, depex_len);
    if (end >= 0)
        end = ffs_section_write(list, cap, (size_t)end, FFS_SECTION_PE32, driver, driver_len);
    if (end >= 0)
        end = ffs_ui_section_write(list, cap, (size_t)end, PTBOOT_FV_UI_NAME);
    if (end >= 0)
        end = ffs_section_write(list, cap, (size_t)end, FFS_SECTION_RAW, (const uint8_t *)words,
                                strlen(words));
    if (end < 0) {
        free(list);
        return end;
    }
    uint32_t hb = ffs_header_bytes_for((uint64_t)end);
    uint8_t *file = malloc(hb + (size_t)end);
    if (!file) {
        free(list);
        return FV_E_SPACE;
    }
    memcpy(file + hb, list, (size_t)end);
    free(list);
    int rc = ffs_file_finish(file, hb + (uint64_t)end, &name, FFS_TYPE_DRIVER, FFS_ATTR_CHECKSUM,
                             erased, ffs3);
    if (rc < 0) {
        free(file);
        return rc;
    }
    *out = file;
    return (long)(hb + (size_t)end);
}

/* The APRIORI file's list with ptboot first (add) or without it. Returns
 * 0 (nothing to change), 1 (changed), -1 (error, said). */
static int apriori_edit(struct fv_node *vol, bool add, uint8_t erased, bool ffs3)
{
    static const struct pi_guid ptboot = PTBOOT_FV_FILE_GUID_INIT;
    struct fv_node *ap = fv_volume_find(vol, &PI_GUID_APRIORI_DXE, NULL);
    struct fv_node *raw = ap ? fv_node_section(ap, FFS_SECTION_RAW) : NULL;
    size_t n = 0;
    const uint8_t *guids = NULL;
    if (raw) {
        guids = raw->bytes + raw->sec.data_offset;
        n = (raw->size - raw->sec.data_offset) / PI_GUID_BYTES;
    } else if (ap) {
        fprintf(stderr, "%s: the APRIORI file has no RAW section: not changed\n", prog_inject);
        return -1;
    }
    bool present = false;
    for (size_t i = 0; i < n; i++)
        present |= !memcmp(guids + i * PI_GUID_BYTES, ptboot.b, PI_GUID_BYTES);
    if (present == add)
        return 0;
    uint8_t *list = malloc((n + 1) * PI_GUID_BYTES);
    size_t at = 0;
    if (!list)
        return -1;
    if (add)
        put_bytes(list, &at, ptboot.b, PI_GUID_BYTES);
    for (size_t i = 0; i < n; i++)
        if (memcmp(guids + i * PI_GUID_BYTES, ptboot.b, PI_GUID_BYTES))
            put_bytes(list, &at, guids + i * PI_GUID_BYTES, PI_GUID_BYTES);
    size_t cap = at + 64;
    uint8_t *sec = malloc(cap);
    long end = sec ? ffs_section_write(sec, cap, 0, FFS_SECTION_RAW, list, at) : FV_E_SPACE;
    int rc = 1;
    if (end < 0) {
        fprintf(stderr, "%s: APRIORI list: %s\n", prog_inject, fv_strerror((int)end));
        rc = -1;
    } else if (raw) {
        rc = fv_node_replace(raw, sec, (uint64_t)end) ? -1 : 1;
    } else {
        /* no APRIORI file yet: a FREEFORM file holding the list */
        uint8_t *file = malloc((size_t)end + FFS_HEADER_BYTES);
        if (!file) {
            rc = -1;
        } else {
            memcpy(file + FFS_HEADER_BYTES, sec, (size_t)end);
            int hb = ffs_file_finish(file, (uint64_t)end + FFS_HEADER_BYTES, &PI_GUID_APRIORI_DXE,
                                     FFS_TYPE_FREEFORM, 0, erased, ffs3);
            rc = hb < 0 || !fv_volume_add(vol, file, (uint64_t)end + FFS_HEADER_BYTES) ? -1 : 1;
            free(file);
        }
    }
    free(sec);
    free(list);
    return rc;
}

static int inject_parse(int argc, char **argv, struct inject_opts *o)
{
    memset(o, 0, sizeof *o);
    o->volume = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = !strcmp(a, "-o") || !strcmp(a, "--out") || !strcmp(a, "--driver") ||
                     !strcmp(a, "--config") || !strcmp(a, "--after") || !strcmp(a, "--volume");
        if (takes && !v) {
            fprintf(stderr, "%s: %s needs a value\n", prog_inject, a);
            return 2;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fv_usage(stdout);
            return 1;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--out")) {
            o->out = v;
        } else if (!strcmp(a, "--driver")) {
            o->driver = v;
        } else if (!strcmp(a, "--config")) {
            o->config = v;
        } else if (!strcmp(a, "--after")) {
            o->after = v;
        } else if (!strcmp(a, "--apriori")) {
            o->apriori = true;
        } else if (!strcmp(a, "--volume")) {
            char *end;
            long n = strtol(v, &end, 10);
            if (*end || n < 0 || n > 100000) {
                fprintf(stderr, "%s: --volume %s: a volume number as `ptboot fv list` shows it\n",
                        prog_inject, v);
                return 2;
            }
            o->volume = (int)n;
        } else if (a[0] == '-') {
            fprintf(stderr, "%s: unknown option: %s\ntry 'ptboot fv --help'\n", prog_inject, a);
            return 2;
        } else if (o->image) {
            fprintf(stderr, "%s: more than one image: %s and %s\n", prog_inject, o->image, a);
            return 2;
        } else {
            o->image = a;
        }
        if (takes)
            i++;
    }
    if (!o->image || !o->out) {
        fprintf(stderr,
                "%s: %s\nusage: ptboot fv inject IMAGE -o OUT [--driver FILE] [--config WORDS] "
                "[--after GUID|NAME | --apriori] [--volume N]\n",
                prog_inject, !o->image ? "no image given" : "no output given (-o OUT)");
        return 2;
    }
    if (o->after && o->apriori) {
        fprintf(stderr,
                "%s: --after and --apriori exclude each other (one place in the dispatch order)\n",
                prog_inject);
        return 2;
    }
    if (o->config) {
        size_t n = strlen(o->config);
        if (n > PTBOOT_FV_CONFIG_MAX) {
            fprintf(stderr, "%s: --config: %zu characters, the driver keeps at most %d\n",
                    prog_inject, n, PTBOOT_FV_CONFIG_MAX);
            return 2;
        }
        for (size_t i = 0; i < n; i++)
            if (o->config[i] < 0x20 || o->config[i] > 0x7e) {
                fprintf(stderr, "%s: --config: character %zu is not printable ASCII\n", prog_inject,
                        i + 1);
                return 2;
            }
    }
    return 0;
}

/* The driver next to this program (build/ptboot -> build/ptbootdrv.efi). */
static const char *default_driver(char *path, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", path, cap - 32);
    char *slash;
    if (n <= 0)
        return "ptbootdrv.efi";
    path[n] = '\0';
    slash = strrchr(path, '/');
    if (!slash)
        return "ptbootdrv.efi";
    strcpy(slash + 1, "ptbootdrv.efi");
    return path;
}

static int check_driver(const char *path, const uint8_t *d, size_t len)
{
    struct pe_info pi;
    int rc = pe_info_parse(d, len, PE_LAYOUT_FILE, &pi);
    if (rc) {
        fprintf(stderr, "%s: %s: not a PE/COFF image (%s)\n", prog_inject, path,
                pe_info_strerror(rc));
        return -1;
    }
    if (pi.machine != PE_MACHINE_X64) {
        fprintf(stderr, "%s: %s: machine 0x%04x, not x64 (0x8664)\n", prog_inject, path,
                pi.machine);
        return -1;
    }
    if (pi.subsystem == PE_SUBSYSTEM_EFI_APPLICATION) {
        fprintf(stderr,
                "%s: %s: an EFI application (subsystem 10): the DXE dispatcher starts "
                "drivers (build/ptbootdrv.efi is ptboot as a boot-service driver)\n",
                prog_inject, path);
        return -1;
    }
    if (pi.subsystem != PE_SUBSYSTEM_EFI_BOOT_DRIVER &&
        pi.subsystem != PE_SUBSYSTEM_EFI_RUNTIME_DRIVER) {
        fprintf(stderr, "%s: %s: subsystem %u is not an EFI driver (11 or 12)\n", prog_inject, path,
                pi.subsystem);
        return -1;
    }
    return 0;
}

/* The depex: after the CPU architectural protocol; AFTER a file; TRUE
 * (APRIORI files are dispatched without evaluating it). */
static int make_depex(struct fv_node *vol, const struct inject_opts *o, uint8_t *dx, size_t *len,
                      char *desc, size_t desc_cap)
{
    size_t at = 0;
    if (o->apriori) {
        dx[at++] = DEPEX_TRUE;
        snprintf(desc, desc_cap, "apriori");
    } else if (o->after) {
        struct pi_guid g;
        struct fv_node *f;
        if (!pi_guid_parse(o->after, strlen(o->after), &g))
            f = fv_volume_find(vol, &g, NULL);
        else
            f = fv_volume_find(vol, NULL, o->after);
        if (!f) {
            fprintf(stderr,
                    "%s: --after %s: no such file in volume %d (by GUID or name): the driver "
                    "would never be dispatched\n",
                    prog_inject, o->after, vol->index);
            return -1;
        }
        dx[at++] = DEPEX_AFTER;
        put_bytes(dx, &at, f->file.name.b, PI_GUID_BYTES);
        char gt[PI_GUID_TEXT_BYTES];
        pi_guid_format(&f->file.name, gt);
        snprintf(desc, desc_cap, "after:%s%s%s", gt, f->ui[0] ? ":" : "", f->ui);
    } else {
        dx[at++] = DEPEX_PUSH;
        put_bytes(dx, &at, PI_GUID_CPU_ARCH.b, PI_GUID_BYTES);
        snprintf(desc, desc_cap, "after-cpu-arch-protocol");
    }
    dx[at++] = DEPEX_END;
    *len = at;
    return 0;
}

/* Where a new file goes: right after the DXE core. The dispatcher walks a
 * volume's files in order each time it looks for drivers whose
 * dependencies are met, so of the drivers that become ready when the CPU
 * architectural protocol arrives, a file at the front runs first; at the
 * end of the volume it would run after all of them. (None: the end.) */
static struct fv_node *front_of(struct fv_node *vol)
{
    for (struct fv_node *c = vol->child; c; c = c->next)
        if (c->kind == FV_NODE_FILE && c->file.type == FFS_TYPE_DXE_CORE)
            return c;
    return vol->last_child;
}

static int write_file(const char *path, const uint8_t *d, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(d, 1, len, f) != len || fclose(f)) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog_inject, path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    return 0;
}

static int fv_inject(int argc, char **argv)
{
    struct inject_opts o;
    int prc = inject_parse(argc, argv, &o);
    if (prc)
        return prc == 1 ? 0 : prc;
    char drvpath[4096];
    const char *driver_path = o.driver ? o.driver : default_driver(drvpath, sizeof drvpath);
    uint8_t *data = NULL, *driver = NULL, *file = NULL;
    size_t len, driver_len;
    int rc = 1;
    struct fv_image im = { 0 };
    if (host_load_file(prog_inject, o.image, &data, &len))
        return 1;
    if (host_load_file(prog_inject, driver_path, &driver, &driver_len) ||
        check_driver(driver_path, driver, driver_len))
        goto out;
    if (fv_image_load(&im, data, len, FV_MAX_UNPACKED) == 0) {
        rc = not_firmware(prog_inject, o.image, len);
        goto out;
    }
    if (im.errors) {
        char where[200];
        fv_node_where(im.first_error, where, sizeof where);
        fprintf(stderr,
                "%s: %s is corrupt: %s: %s (%zu problem%s; `ptboot fv list` shows them): "
                "not changed\n",
                prog_inject, o.image, where, im.first_error->error, im.errors,
                im.errors == 1 ? "" : "s");
        goto out;
    }
    struct fv_node *vol = NULL;
    if (o.volume >= 0) {
        struct fv_node want = { .index = o.volume }, *p = &want;
        if (fv_image_walk(&im, volume_by_index, &p))
            vol = p;
        if (!vol || !fv_has_files(&vol->vol)) {
            fprintf(stderr, "%s: --volume %d: %s\n", prog_inject, o.volume,
                    vol ? "not a volume of files"
                        : "no such volume (`ptboot fv list` numbers them)");
            goto out;
        }
    } else {
        struct find_dxe f = { 0 };
        fv_image_walk(&im, find_dxe, &f);
        vol = f.core ? f.core : f.driver;
        if (!vol) {
            fprintf(stderr,
                    "%s: %s: no DXE volume (no volume holds the DXE core or a driver): "
                    "name one with --volume N\n",
                    prog_inject, o.image);
            goto out;
        }
    }
    uint8_t depex[2 + PI_GUID_BYTES];
    size_t depex_len;
    char desc[128];
    if (make_depex(vol, &o, depex, &depex_len, desc, sizeof desc))
        goto out;
    bool ffs3 = vol->vol.fs == FV_FS_FFS3;
    const char *words = o.config ? o.config : "";
    long flen = build_ptboot_file(driver, driver_len, depex, depex_len, words, vol->vol.erased,
                                  ffs3, &file);
    if (flen < 0) {
        fprintf(stderr, "%s: the driver's file: %s\n", prog_inject, fv_strerror((int)flen));
        goto out;
    }
    static const struct pi_guid ptboot = PTBOOT_FV_FILE_GUID_INIT;
    struct fv_node *old = fv_volume_find(vol, &ptboot, NULL);
    if (old ? fv_node_replace(old, file, (uint64_t)flen)
            : !fv_volume_insert(vol, front_of(vol), file, (uint64_t)flen)) {
        fprintf(stderr, "%s: out of memory\n", prog_inject);
        goto out;
    }
    if (apriori_edit(vol, o.apriori, vol->vol.erased, ffs3) < 0)
        goto out;
    struct fv_build b;
    char err[400];
    if (fv_image_build(&im, &b, err, sizeof err)) {
        fprintf(stderr, "%s: %s: not written\n", prog_inject, err);
        goto out;
    }
    if (write_file(o.out, b.out, b.len)) {
        free(b.out);
        goto out;
    }
    char gt[PI_GUID_TEXT_BYTES];
    pi_guid_format(&ptboot, gt);
    printf("ptboot: fv inject volume=%d file=%s bytes=%ld driver=%s driver_bytes=%zu %s depex=%s "
           "config='%s'\n",
           vol->index, gt, flen, driver_path, driver_len, old ? "replaced" : "added", desc, words);
    for (size_t i = 0; i < b.nnotes; i++) {
        const struct fv_build_note *n = &b.notes[i];
        printf("ptboot: fv volume %d free=%llu->%llu", n->volume,
               (unsigned long long)n->free_before, (unsigned long long)n->free_after);
        if (n->packed_before)
            printf(" lzma-section=%llu->%llu", (unsigned long long)n->packed_before,
                   (unsigned long long)n->packed_after);
        printf("\n");
    }
    printf("ptboot: fv wrote %s bytes=%zu\n", o.out, b.len);
    free(b.out);
    rc = 0;
out:
    fv_image_free(&im);
    free(file);
    free(driver);
    free(data);
    return rc;
}

int host_cmd_fv(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "help")) {
        fv_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "list"))
        return fv_list(argc - 1, argv + 1);
    if (!strcmp(argv[1], "inject"))
        return fv_inject(argc - 1, argv + 1);
    fprintf(stderr, "ptboot fv: unknown action '%s' (list or inject)\n", argv[1]);
    return 2;
}
