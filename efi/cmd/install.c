/* `install [--driver PATH] [WORD...]` and `uninstall`: the resident boot
 * tracer as a Driver#### load option (docs/resident.md).
 *
 * install writes Driver#### (UEFI 2.10 section 3.1.3, EFI_LOAD_OPTION:
 * Attributes LOAD_OPTION_ACTIVE, Description RESIDENT_DESCRIPTION,
 * FilePathList = the boot volume's device path + a file path node for the
 * driver, OptionalData = the words as UCS-2 text, which the driver gets as
 * its LoadOptions) with the lowest free number, and puts that number first
 * in DriverOrder (section 3.3: NV+BS+RT variables of EFI_GLOBAL_VARIABLE).
 * An earlier option of ours is replaced, not kept twice. The variables are
 * read back and compared before "ptboot: install" is printed.
 *
 * uninstall deletes every Driver#### whose description is ours and drops
 * their numbers from DriverOrder (the variable goes when it is empty). */
#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/capture_plan.h"
#include "efi/app.h"
#include "efi/platform/console.h"
#include "format/load_option.h"
#include "efi/resident/early.h"
#include "efi/resident/resident.h"
#include "efi/resident/words.h"
#include "efi/platform/volume.h"

#define OPTION_MAX_BYTES 2048
#define ORDER_MAX        256
#define NAME_CHARS       64
#define SCAN_MAX         64
#define DP_MAX_BYTES     1024
#define WORDS_MAX_CHARS  (RESIDENT_TEXT_BYTES - 1)

#define VAR_ATTRS \
    (EFI_VARIABLE_NON_VOLATILE | EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS)

static CHAR16 *wide(const char *s)
{
    static CHAR16 w[NAME_CHARS];
    size_t i = 0;
    for (; s[i] && i + 1 < NAME_CHARS; i++)
        w[i] = (CHAR16)s[i];
    w[i] = 0;
    return w;
}

static EFI_STATUS get_var(const char *name, void *buf, UINTN *size)
{
    return RT->GetVariable(wide(name), &EfiGlobalVariable, NULL, size, buf);
}

static EFI_STATUS set_var(const char *name, const void *buf, UINTN size)
{
    return RT->SetVariable(wide(name), &EfiGlobalVariable, VAR_ATTRS, size, (void *)buf);
}

static size_t read_order(uint16_t *order)
{
    UINTN size = ORDER_MAX * sizeof *order;
    if (EFI_ERROR(get_var("DriverOrder", order, &size)))
        return 0;
    return size / sizeof *order;
}

static void print_order(const char *what, const uint16_t *order, size_t n)
{
    efi_con_printf("%s", what);
    for (size_t i = 0; i < n; i++)
        efi_con_printf("%s%04X", i ? "," : "", order[i]);
    if (!n)
        efi_con_printf("-");
}

/* Is Driver#### ours (an EFI_LOAD_OPTION with our description)? */
static bool is_ours(const char *name)
{
    static uint8_t buf[OPTION_MAX_BYTES];
    UINTN size = sizeof buf;
    if (EFI_ERROR(get_var(name, buf, &size)))
        return false;
    struct load_option lo;
    size_t off;
    return load_option_decode(buf, size, &lo, &off) == 0 &&
           ucs2_equals(lo.description, lo.desc_chars, RESIDENT_DESCRIPTION);
}

/* Numbers of all Driver#### variables of ours (GetNextVariableName walks
 * every variable; names are collected first since deleting while walking
 * is undefined, section 8.2). */
static size_t find_ours(uint16_t *numbers, size_t cap)
{
    static CHAR16 vname[NAME_CHARS];
    static char found[SCAN_MAX][NAME_CHARS];
    size_t nfound = 0;
    EFI_GUID guid;
    vname[0] = 0;
    for (;;) {
        UINTN size = sizeof vname;
        if (EFI_ERROR(RT->GetNextVariableName(&size, vname, &guid)))
            break;
        if (CompareGuid(&guid, &EfiGlobalVariable))
            continue;
        char a[NAME_CHARS];
        size_t i = 0;
        for (; vname[i] && i + 1 < NAME_CHARS; i++)
            a[i] = vname[i] < 0x80 ? (char)vname[i] : '?';
        a[i] = '\0';
        if (load_option_number(a, "Driver") >= 0 && nfound < SCAN_MAX)
            memcpy(found[nfound++], a, NAME_CHARS);
    }
    size_t n = 0;
    for (size_t i = 0; i < nfound && n < cap; i++)
        if (is_ours(found[i]))
            numbers[n++] = (uint16_t)load_option_number(found[i], "Driver");
    return n;
}

/* Deletes our options; returns how many, or -1 on a firmware error. */
static long remove_ours(uint16_t *order, size_t *norder)
{
    uint16_t numbers[SCAN_MAX];
    size_t n = find_ours(numbers, SCAN_MAX);
    for (size_t i = 0; i < n; i++) {
        char name[NAME_CHARS];
        load_option_name(name, sizeof name, "Driver", numbers[i]);
        EFI_STATUS s = set_var(name, NULL, 0);
        if (EFI_ERROR(s)) {
            efi_con_printf("ptboot: error: cannot delete %s (status 0x%llx)\n", name,
                           (unsigned long long)s);
            return -1;
        }
        efi_con_printf("ptboot: removed %s (ours)\n", name);
        *norder = load_option_order_remove(order, *norder, numbers[i]);
    }
    return (long)n;
}

static EFI_STATUS write_order(const uint16_t *order, size_t n)
{
    if (n == 0) {
        EFI_STATUS s = set_var("DriverOrder", NULL, 0);
        return s == EFI_NOT_FOUND ? EFI_SUCCESS : s;
    }
    return set_var("DriverOrder", order, n * sizeof *order);
}

static bool number_used(void *ctx, unsigned number)
{
    (void)ctx;
    char name[NAME_CHARS];
    uint8_t probe;
    UINTN size = sizeof probe;
    load_option_name(name, sizeof name, "Driver", number);
    return get_var(name, &probe, &size) != EFI_NOT_FOUND;
}

/* The words the driver understands (efi/resident/words.h), checked here
 * with the driver's own parser so that a typo fails now, not on the next
 * boot, then joined with single spaces. */
static int join_words(int argc, char **argv, char *out, size_t cap)
{
    static struct resident_words w;
    char err[PTB_ARGS_ERROR_BYTES];
    if (resident_words_parse(&w, argv, argc, err, sizeof err)) {
        efi_con_printf("ptboot: error: install: %s\n", err);
        return -1;
    }
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < argc; i++) {
        size_t wl = strlen(argv[i]);
        if (strchr(argv[i], ' ') || len + wl + 1 >= cap) {
            efi_con_printf("ptboot: error: install: words too long or with spaces\n");
            return -1;
        }
        if (len)
            out[len++] = ' ';
        memcpy(out + len, argv[i], wl + 1);
        len += wl;
    }
    return 0;
}

/* `install --early WORDS`: the words for ptboot's driver in the firmware
 * volume (efi/resident/early.h, docs/early-boot.md), in the variable
 * PtbootEarly, read back before it is said. */
static int install_early(int argc, char **argv)
{
    static char words[RESIDENT_TEXT_BYTES], back[RESIDENT_TEXT_BYTES];
    if (join_words(argc, argv, words, sizeof words))
        return PTB_APP_USAGE;
    EFI_GUID vendor = PTBOOT_RESIDENT_GUID_INIT;
    UINTN len = strlen(words);
    EFI_STATUS s =
        RT->SetVariable(PTBOOT_EARLY_VARIABLE, &vendor, PTBOOT_EARLY_VARIABLE_ATTRS, len, words);
    UINTN blen = sizeof back;
    if (EFI_ERROR(s) ||
        EFI_ERROR(RT->GetVariable(PTBOOT_EARLY_VARIABLE, &vendor, NULL, &blen, back)) ||
        blen != len || memcmp(back, words, len)) {
        efi_con_printf("ptboot: error: install --early: PtbootEarly: %s (status 0x%llx)\n",
                       EFI_ERROR(s) ? "SetVariable failed" : "did not read back as written",
                       (unsigned long long)s);
        return PTB_APP_FAILED;
    }
    efi_con_printf("ptboot: install early variable=PtbootEarly bytes=%llu options='%s'\n",
                   (unsigned long long)len, words);
    return PTB_APP_OK;
}

static int uninstall_early(void)
{
    EFI_GUID vendor = PTBOOT_RESIDENT_GUID_INIT;
    EFI_STATUS s =
        RT->SetVariable(PTBOOT_EARLY_VARIABLE, &vendor, PTBOOT_EARLY_VARIABLE_ATTRS, 0, NULL);
    if (EFI_ERROR(s) && s != EFI_NOT_FOUND) {
        efi_con_printf("ptboot: error: uninstall --early: PtbootEarly: status 0x%llx\n",
                       (unsigned long long)s);
        return PTB_APP_FAILED;
    }
    efi_con_printf("ptboot: uninstall early removed=%d\n", s == EFI_NOT_FOUND ? 0 : 1);
    return PTB_APP_OK;
}

int efi_cmd_install(struct efi_app *app, int argc, char **argv)
{
    static uint8_t option[OPTION_MAX_BYTES], back[OPTION_MAX_BYTES], dp[DP_MAX_BYTES];
    static uint8_t optional[2 * RESIDENT_TEXT_BYTES];
    static uint16_t order[ORDER_MAX];
    static char words[RESIDENT_TEXT_BYTES];
    const char *driver = RESIDENT_DRIVER_PATH;
    if (argc >= 1 && !strcmp(argv[0], "--early"))
        return install_early(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[0], "--driver")) {
        driver = argv[1];
        argc -= 2;
        argv += 2;
    }
    if (join_words(argc, argv, words, sizeof words))
        return PTB_APP_USAGE;
    /* The driver must be on the volume the app came from. */
    char probe[1];
    size_t plen;
    enum efi_volume_result vr = efi_volume_read(app->image, driver, probe, sizeof probe, &plen);
    if (vr != PTB_VOLUME_TOO_LARGE) {
        efi_con_printf("ptboot: error: install: %s: %s%s\n", driver,
                       vr == PTB_VOLUME_OK ? "empty file" : efi_volume_result_name(vr),
                       vr == PTB_VOLUME_NOT_FOUND && !strcmp(driver, RESIDENT_DRIVER_PATH)
                           ? " on the boot volume: copy build/ptbootdrv.efi there (make image puts "
                             "it on the stick)"
                           : "");
        return PTB_APP_FAILED;
    }
    EFI_LOADED_IMAGE *li = NULL;
    EFI_DEVICE_PATH *dev = NULL;
    if (EFI_ERROR(BS->HandleProtocol(app->image, &LoadedImageProtocol, (void **)&li)) || !li ||
        !(dev = DevicePathFromHandle(li->DeviceHandle))) {
        efi_con_puts("ptboot: error: install: the boot volume has no device path\n");
        return PTB_APP_FAILED;
    }
    long dev_len = device_path_size((const uint8_t *)dev, DP_MAX_BYTES);
    long dp_len = dev_len < 0 ? dev_len
                              : device_path_append_file(dp, sizeof dp, (const uint8_t *)dev,
                                                        (size_t)dev_len, driver);
    long opt_len = ucs2_from_ascii(optional, sizeof optional, words);
    long len = dp_len < 0 || opt_len < 0
                   ? (dp_len < 0 ? dp_len : opt_len)
                   : load_option_encode(option, sizeof option, PTB_LO_ACTIVE, RESIDENT_DESCRIPTION,
                                        dp, (size_t)dp_len, optional, (size_t)opt_len);
    if (len < 0) {
        efi_con_printf("ptboot: error: install: %s\n", load_option_strerror((int)len));
        return PTB_APP_FAILED;
    }

    size_t norder = read_order(order);
    if (remove_ours(order, &norder) < 0)
        return PTB_APP_FAILED;
    long number = load_option_free_number(number_used, NULL);
    if (number < 0) {
        efi_con_puts("ptboot: error: install: no free Driver#### number\n");
        return PTB_APP_FAILED;
    }
    long n = load_option_order_prepend(order, norder, ORDER_MAX, (uint16_t)number);
    if (n < 0) {
        efi_con_puts("ptboot: error: install: DriverOrder is full\n");
        return PTB_APP_FAILED;
    }
    char name[NAME_CHARS];
    load_option_name(name, sizeof name, "Driver", (unsigned)number);
    EFI_STATUS s = set_var(name, option, (UINTN)len);
    if (!EFI_ERROR(s))
        s = write_order(order, (size_t)n);
    if (EFI_ERROR(s)) {
        efi_con_printf("ptboot: error: install: SetVariable: status 0x%llx\n",
                       (unsigned long long)s);
        return PTB_APP_FAILED;
    }
    /* Read back: the firmware keeps what it was given. */
    UINTN bsize = sizeof back;
    uint16_t check[ORDER_MAX];
    if (EFI_ERROR(get_var(name, back, &bsize)) || bsize != (UINTN)len ||
        memcmp(back, option, bsize) || read_order(check) != (size_t)n ||
        check[0] != (uint16_t)number) {
        efi_con_printf("ptboot: error: install: %s or DriverOrder did not read back as written\n",
                       name);
        return PTB_APP_FAILED;
    }
    char path_text[DP_MAX_BYTES / 2];
    device_path_file_text(dp, (size_t)dp_len, path_text, sizeof path_text);
    efi_con_printf("ptboot: install option=%s bytes=%ld file=%s options='%s' ", name, len,
                   path_text, words);
    print_order("order=", order, (size_t)n);
    efi_con_printf("\n");
    return PTB_APP_OK;
}

int efi_cmd_uninstall(struct efi_app *app, int argc, char **argv)
{
    static uint16_t order[ORDER_MAX];
    (void)app;
    if (argc == 1 && !strcmp(argv[0], "--early"))
        return uninstall_early();
    if (argc) {
        efi_con_puts("ptboot: error: uninstall takes no arguments (or --early)\n");
        return PTB_APP_USAGE;
    }
    size_t norder = read_order(order);
    long removed = remove_ours(order, &norder);
    if (removed < 0)
        return PTB_APP_FAILED;
    EFI_STATUS s = write_order(order, norder);
    if (EFI_ERROR(s)) {
        efi_con_printf("ptboot: error: uninstall: DriverOrder: status 0x%llx\n",
                       (unsigned long long)s);
        return PTB_APP_FAILED;
    }
    efi_con_printf("ptboot: uninstall removed=%ld ", removed);
    print_order("order=", order, norder);
    efi_con_printf("\n");
    return PTB_APP_OK;
}
