/* efivars: the Driver#### and DriverOrder variables in an OVMF variable
 * store file (the pflash image QEMU wrote), so that the boot test checks
 * what `install`/`uninstall` left in the firmware's NV store from outside
 * the machine.
 *
 * usage: efivars VARS.fd
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
 * decoded with efi/load_option.c, which test_efi_load_option checks
 * against the spec's layout. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efi/load_option.h"

#define FVH_SIGNATURE_OFF 40
#define FVH_HEADER_LEN_OFF 48
#define STORE_HEADER_BYTES 28
#define AUTH_VAR_HEADER 60
#define PLAIN_VAR_HEADER 32
#define VAR_START_ID 0x55aa
#define VAR_ADDED 0x3f
#define VAR_ADDED_IN_DELETE 0x3e

/* aaf32c78-947b-439a-a180-2e144ec37792, as stored (little-endian fields) */
static const uint8_t auth_guid[16] = { 0x78, 0x2c, 0xf3, 0xaa, 0x7b, 0x94, 0x9a, 0x43,
                                       0xa1, 0x80, 0x2e, 0x14, 0x4e, 0xc3, 0x77, 0x92 };
/* EFI_GLOBAL_VARIABLE 8be4df61-93ca-11d2-aa0d-00e098032b8c */
static const uint8_t global_guid[16] = { 0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11,
                                         0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c };

static uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

struct var {
    char name[64];
    uint8_t state;
    uint32_t attrs;
    const uint8_t *data;
    size_t size;
};

#define MAX_VARS 1024
static struct var vars[MAX_VARS];

static void print_var(const struct var *v)
{
    if (!strcmp(v->name, "DriverOrder")) {
        printf("DriverOrder ");
        for (size_t i = 0; i + 1 < v->size; i += 2)
            printf("%s%04X", i ? "," : "", get16(v->data + i));
        printf("\n");
        return;
    }
    struct efi_load_option lo;
    size_t off;
    int r = efi_load_option_decode(v->data, v->size, &lo, &off);
    if (r) {
        printf("%s bad-load-option=%s at=%zu\n", v->name, efi_load_option_strerror(r), off);
        return;
    }
    char desc[256], file[512], opt[512];
    if (efi_ucs2_to_ascii(lo.description, lo.desc_chars * 2, desc, sizeof desc) < 0)
        strcpy(desc, "?");
    if (efi_dp_file_text(lo.file_path, lo.file_path_len, file, sizeof file) <= 0)
        strcpy(file, "-");
    if (efi_ucs2_to_ascii(lo.optional, lo.optional_len & ~(size_t)1, opt, sizeof opt) < 0)
        strcpy(opt, "?");
    printf("%s attr=0x%08x desc=\"%s\" file=%s dp=", v->name, lo.attributes, desc, file);
    for (size_t i = 0; i < lo.file_path_len; i++)
        printf("%02x", lo.file_path[i]);
    printf(" optional=\"%s\"\n", opt);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: efivars VARS.fd\n");
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
    size_t n = 0;
    for (size_t p = store + STORE_HEADER_BYTES; p + hdr <= store_end && n < MAX_VARS;) {
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
            if (efi_ucs2_to_ascii(img + name_at, name_size, x->name, sizeof x->name) > 0) {
                x->state = v[2];
                x->attrs = get32(v + 4);
                x->data = img + data_at;
                x->size = data_size;
                n++;
            }
        }
        p = data_at + data_size;
        p = (p + 3) & ~(size_t)3;
    }
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
        if (efi_option_number(vars[i].name, "Driver") >= 0 || !strcmp(vars[i].name, "DriverOrder"))
            print_var(&vars[i]);
    }
    printf("variables=%zu\n", live);
    return 0;
}
