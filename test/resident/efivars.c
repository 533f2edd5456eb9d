/* efivars: the Driver#### and DriverOrder variables in an OVMF variable
 * store file (the pflash image QEMU wrote), so that the boot test checks
 * what `install`/`uninstall` left in the firmware's NV store from outside
 * the machine.
 *
 * usage: efivars VARS.fd
 *        efivars VARS.fd --add-driver NUMBER DESCRIPTION PATH ORDER
 *        efivars VARS.fd --add-boot NUMBER DESCRIPTION PATH ORDER
 *        efivars VARS.fd --boot
 *        efivars VARS.fd --set NAME VALUES
 * The second form appends (as a firmware would) a Driver#### load option
 * (LOAD_OPTION_ACTIVE, a file-path-only device path for PATH) and a
 * DriverOrder variable holding ORDER (comma-separated hex numbers), so the
 * test can check that install/uninstall leave someone else's option
 * alone. --add-boot does the same for a Boot#### option and BootOrder
 * (test/boot/trace_bootnext.sh: an option for `trace --boot-next`; PATH
 * alone is the short-form File Path device path of UEFI 2.10 section
 * 3.1.2). --boot lists Boot####, BootOrder, BootNext and BootCurrent in
 * place of the Driver lines. --set appends a variable of UINT16s
 * (comma-separated hex), e.g. BootNext. Appended records supersede earlier ones of the same name: the
 * old ones are marked deleted (State &= VAR_DELETED), as EDK2 does.
 * prints one line per live variable of EFI_GLOBAL_VARIABLE named Driver####
 * or DriverOrder:
 *   Driver0000 attr=0x00000001 desc="ptboot resident tracer" file=\EFI\...
 *              dp=<hex of FilePathList> optional="--image osloader.efi"
 *   DriverOrder 0000,0001
 * and "variables=<n>" (live EFI_GLOBAL_VARIABLE variables) at the end. Exit 1 if the file
 * is not a variable store.
 *
 * The store layout is EDK2's (MdeModulePkg/Include/Guid/VariableFormat.h,
 * as OVMF uses it): a firmware volume header (signature "_FVH" at 40,
 * HeaderLength at 48), then VARIABLE_STORE_HEADER (signature GUID, Size,
 * Format 0x5a, State 0xfe; 28 bytes), then variables at 4-byte alignment,
 * each a header starting with StartId 0x55aa, its UCS-2 name and its data
 * (no padding between them: ALIGNMENT is 1 on x64; headers are 4-aligned).
 * The authenticated header (signature gEfiAuthenticatedVariableGuid) is 60
 * bytes, the plain one 32. A variable is live when its State is VAR_ADDED
 * (0x3f) or VAR_ADDED & VAR_IN_DELETED_TRANSITION (0x3e, superseded by a
 * 0x3f copy of the same name if there is one). The load option itself is
 * decoded with format/load_option.c, which test_efi_load_option checks
 * against the spec's layout. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/load_option.h"

#define FVH_SIGNATURE_OFF   40
#define FVH_HEADER_LEN_OFF  48
#define STORE_HEADER_BYTES  28
#define AUTH_VAR_HEADER     60
#define PLAIN_VAR_HEADER    32
#define VAR_START_ID        0x55aa
#define VAR_ADDED           0x3f
#define VAR_ADDED_IN_DELETE 0x3e
#define VAR_DELETED_MASK    0xfd
/* EFI_VARIABLE_NON_VOLATILE | BOOTSERVICE_ACCESS | RUNTIME_ACCESS */
#define VAR_ATTRS_NV_BS_RT 0x7

/* aaf32c78-947b-439a-a180-2e144ec37792, as stored (little-endian fields) */
static const uint8_t auth_guid[16] = { 0x78, 0x2c, 0xf3, 0xaa, 0x7b, 0x94, 0x9a, 0x43,
                                       0xa1, 0x80, 0x2e, 0x14, 0x4e, 0xc3, 0x77, 0x92 };
/* EFI_GLOBAL_VARIABLE 8be4df61-93ca-11d2-aa0d-00e098032b8c */
static const uint8_t global_guid[16] = { 0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11,
                                         0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c };

static uint32_t get32(const uint8_t *p)
{
    return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

struct var {
    char name[64];
    size_t header_at; /* offset of the record in the file */
    uint8_t state;
    uint32_t attrs;
    const uint8_t *data;
    size_t size;
};

#define MAX_VARS 1024
static struct var vars[MAX_VARS];

static void print_var(const struct var *v)
{
    if (!strcmp(v->name, "DriverOrder") || !strcmp(v->name, "BootOrder") ||
        !strcmp(v->name, "BootNext") || !strcmp(v->name, "BootCurrent")) {
        printf("%s ", v->name);
        for (size_t i = 0; i + 1 < v->size; i += 2)
            printf("%s%04X", i ? "," : "", get16(v->data + i));
        printf("\n");
        return;
    }
    struct load_option lo;
    size_t off;
    int r = load_option_decode(v->data, v->size, &lo, &off);
    if (r) {
        printf("%s bad-load-option=%s at=%zu\n", v->name, load_option_strerror(r), off);
        return;
    }
    char desc[256], file[512], opt[512];
    if (ucs2_to_ascii(lo.description, lo.desc_chars * 2, desc, sizeof desc) < 0)
        strcpy(desc, "?");
    if (device_path_file_text(lo.file_path, lo.file_path_len, file, sizeof file) <= 0)
        strcpy(file, "-");
    if (ucs2_to_ascii(lo.optional, lo.optional_len & ~(size_t)1, opt, sizeof opt) < 0)
        strcpy(opt, "?");
    printf("%s attr=0x%08x desc=\"%s\" file=%s dp=", v->name, lo.attributes, desc, file);
    for (size_t i = 0; i < lo.file_path_len; i++)
        printf("%02x", lo.file_path[i]);
    printf(" optional=\"%s\"\n", opt);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Appends one variable record at *at (4-aligned), marking older live
 * copies of the name deleted. Returns 0, or -1 when the store is full. */
static int append(uint8_t *img, size_t hdr, size_t *at, size_t store_end, size_t n,
                  const char *name, const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(vars[i].name, name))
            img[vars[i].header_at + 2] &= VAR_DELETED_MASK;
    uint8_t wname[128];
    long name_size = ucs2_from_ascii(wname, sizeof wname, name);
    size_t total = hdr + (size_t)name_size + size;
    if (name_size < 0 || *at + total > store_end)
        return -1;
    uint8_t *v = img + *at;
    memset(v, 0, hdr);
    v[0] = VAR_START_ID & 0xff;
    v[1] = VAR_START_ID >> 8;
    v[2] = VAR_ADDED;
    put32(v + 4, VAR_ATTRS_NV_BS_RT);
    put32(v + hdr - 24, (uint32_t)name_size);
    put32(v + hdr - 20, (uint32_t)size);
    memcpy(v + hdr - 16, global_guid, 16);
    memcpy(v + hdr, wname, (size_t)name_size);
    memcpy(v + hdr + name_size, data, size);
    *at = (*at + total + 3) & ~(size_t)3;
    return 0;
}

/* kind: "Driver" or "Boot"; the order variable is kind + "Order". */
static int add_option(const char *kind, const char *file, uint8_t *img, size_t len, size_t hdr,
                      size_t at, size_t store_end, size_t n, char **args)
{
    char name[16], order_name[16];
    unsigned long number = strtoul(args[0], NULL, 16);
    load_option_name(name, sizeof name, kind, (unsigned)number);
    snprintf(order_name, sizeof order_name, "%sOrder", kind);
    uint8_t dp[512], option[1024], order[128];
    long dp_len = device_path_append_file(dp, sizeof dp, NULL, 0, args[2]);
    long opt_len = dp_len < 0 ? dp_len
                              : load_option_encode(option, sizeof option, PTB_LO_ACTIVE, args[1],
                                                   dp, (size_t)dp_len, NULL, 0);
    if (opt_len < 0) {
        fprintf(stderr, "efivars: %s\n", load_option_strerror((int)opt_len));
        return 1;
    }
    size_t order_len = 0;
    for (char *s = args[3], *e; *s && order_len + 2 <= sizeof order; s = *e ? e + 1 : e) {
        unsigned long v = strtoul(s, &e, 16);
        order[order_len++] = (uint8_t)v;
        order[order_len++] = (uint8_t)(v >> 8);
    }
    if (append(img, hdr, &at, store_end, n, name, option, (size_t)opt_len) ||
        append(img, hdr, &at, store_end, n, order_name, order, order_len)) {
        fprintf(stderr, "efivars: the variable store is full\n");
        return 1;
    }
    FILE *f = fopen(file, "r+b");
    if (!f || fwrite(img, 1, len, f) != len || fclose(f)) {
        perror(file);
        return 1;
    }
    printf("added %s and %s %s\n", name, order_name, args[3]);
    return 0;
}

/* --set NAME VALUES: a UINT16 array variable (BootNext, BootOrder). */
static int set_u16(const char *file, uint8_t *img, size_t len, size_t hdr, size_t at,
                   size_t store_end, size_t n, const char *name, char *values)
{
    uint8_t data[128];
    size_t size = 0;
    for (char *s = values, *e; *s && size + 2 <= sizeof data; s = *e ? e + 1 : e) {
        unsigned long v = strtoul(s, &e, 16);
        data[size++] = (uint8_t)v;
        data[size++] = (uint8_t)(v >> 8);
    }
    if (append(img, hdr, &at, store_end, n, name, data, size)) {
        fprintf(stderr, "efivars: the variable store is full\n");
        return 1;
    }
    FILE *f = fopen(file, "r+b");
    if (!f || fwrite(img, 1, len, f) != len || fclose(f)) {
        perror(file);
        return 1;
    }
    printf("set %s %s\n", name, values);
    return 0;
}

int main(int argc, char **argv)
{
    bool add = argc == 7 && (!strcmp(argv[2], "--add-driver") || !strcmp(argv[2], "--add-boot"));
    bool boot = argc == 3 && !strcmp(argv[2], "--boot");
    bool set = argc == 5 && !strcmp(argv[2], "--set");
    if (argc != 2 && !add && !boot && !set) {
        fprintf(stderr, "usage: efivars VARS.fd [--add-driver|--add-boot NUMBER DESCRIPTION PATH "
                        "ORDER | --boot | --set NAME VALUES]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    static uint8_t img[16 << 20];
    size_t len = fread(img, 1, sizeof img, f);
    fclose(f);
    if (len < FVH_HEADER_LEN_OFF + 2 || memcmp(img + FVH_SIGNATURE_OFF, "_FVH", 4)) {
        fprintf(stderr, "efivars: %s: no firmware volume header\n", argv[1]);
        return 1;
    }
    size_t store = get16(img + FVH_HEADER_LEN_OFF);
    if (store + STORE_HEADER_BYTES > len) {
        fprintf(stderr, "efivars: %s: truncated\n", argv[1]);
        return 1;
    }
    size_t hdr = memcmp(img + store, auth_guid, 16) ? PLAIN_VAR_HEADER : AUTH_VAR_HEADER;
    size_t store_end = store + get32(img + store + 16);
    if (store_end > len)
        store_end = len;
    size_t n = 0, p;
    for (p = store + STORE_HEADER_BYTES; p + hdr <= store_end && n < MAX_VARS;) {
        const uint8_t *v = img + p;
        if (get16(v) != VAR_START_ID)
            break;
        uint32_t name_size = get32(v + hdr - 24), data_size = get32(v + hdr - 20);
        const uint8_t *guid = v + hdr - 16;
        size_t name_at = p + hdr, data_at = name_at + name_size; /* no padding on x64 */
        if (data_at + data_size > store_end)
            break;
        if ((v[2] == VAR_ADDED || v[2] == VAR_ADDED_IN_DELETE) && !memcmp(guid, global_guid, 16)) {
            struct var *x = &vars[n];
            if (ucs2_to_ascii(img + name_at, name_size, x->name, sizeof x->name) > 0) {
                x->state = v[2];
                x->header_at = p;
                x->attrs = get32(v + 4);
                x->data = img + data_at;
                x->size = data_size;
                n++;
            }
        }
        p = data_at + data_size;
        p = (p + 3) & ~(size_t)3;
    }
    size_t end_of_vars = p;
    if (set)
        return set_u16(argv[1], img, len, hdr, end_of_vars, store_end, n, argv[3], argv[4]);
    if (add)
        return add_option(argv[2][6] == 'd' ? "Driver" : "Boot", argv[1], img, len, hdr,
                          end_of_vars, store_end, n, argv + 3);
    size_t live = 0;
    for (size_t i = 0; i < n; i++) {
        bool superseded = false;
        if (vars[i].state == VAR_ADDED_IN_DELETE)
            for (size_t k = 0; k < n; k++)
                if (k != i && vars[k].state == VAR_ADDED && !strcmp(vars[k].name, vars[i].name))
                    superseded = true;
        if (superseded)
            continue;
        live++;
        if (boot ? load_option_number(vars[i].name, "Boot") >= 0 ||
                       !strcmp(vars[i].name, "BootOrder") || !strcmp(vars[i].name, "BootNext") ||
                       !strcmp(vars[i].name, "BootCurrent")
                 : load_option_number(vars[i].name, "Driver") >= 0 ||
                       !strcmp(vars[i].name, "DriverOrder"))
            print_var(&vars[i]);
    }
    printf("variables=%zu\n", live);
    return 0;
}
