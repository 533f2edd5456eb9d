/* format/pe_info.c on real PE/COFF images: build/ptboot.efi (gnu-efi, no debug
 * directory), a driver linked by lld-link with a CodeView RSDS record
 * (test/capture/capture.mk) and every PE32 driver in OVMF's DXE firmware
 * volume, each as a file and as loaded in memory, with
 * binutils' `objdump -p` as the independent reading of their headers; then
 * corrupted copies. Compiled with format/pe_info.c inside and ASan/UBSan on
 * (test/unit/unit.mk), so an out-of-bounds read is a failure, not luck. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test/unit/file_bytes.h"

#include "format/pe_info.c"

#define FIX         "build/test/capture/"
#define FIXTURE_PDB "/build/edk2/Build/OvmfX64/DEBUG_GCC5/X64/PcRtcFixture/DEBUG/PcRtcFixture.dll"

static uint8_t *slurp(const char *path, size_t *len)
{
    return file_bytes(path, len, "make capture-fixtures");
}

/* objdump -p's "SizeOfImage", "AddressOfEntryPoint", "ImageBase", the
 * size of "Entry 6" (Debug Directory) and the CodeView record's RSDS
 * signature (the GUID's 16 bytes as stored, in hex) and age. */
struct expect {
    uint64_t size, entry, base, debug_size;
    char rsds[40];
    unsigned age;
};

static void objdump_facts(const char *path, struct expect *e)
{
    char line[256];
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("%s: cannot open (make capture-fixtures)", path);
    memset(e, 0, sizeof *e);
    int seen = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long v, rva;
        if (sscanf(line, "SizeOfImage %llx", &v) == 1)
            e->size = v, seen |= 1;
        else if (sscanf(line, "AddressOfEntryPoint %llx", &v) == 1)
            e->entry = v, seen |= 2;
        else if (sscanf(line, "ImageBase %llx", &v) == 1)
            e->base = v, seen |= 4;
        else if (sscanf(line, "Entry 6 %llx %llx", &rva, &v) == 2)
            e->debug_size = v;
        else if (sscanf(line, "(format RSDS signature %32[0-9a-f] age %u", e->rsds, &e->age) == 2)
            seen |= 0;
    }
    fclose(f);
    assert_int_equal(seen, 7);
}

/* What a UEFI loader does first (UEFI 2.10 7.4 LoadImage; PE Format,
 * "Section Table"): headers at 0, each section's raw data at its RVA,
 * the rest zero. Relocations do not matter to the fields read here. */
static uint8_t *load(const uint8_t *file, size_t flen, uint32_t size_of_image)
{
    uint8_t *mem = calloc(1, size_of_image);
    uint32_t pe = (uint32_t)file[0x3c] | (uint32_t)file[0x3d] << 8;
    unsigned nsec = file[pe + 6] | file[pe + 7] << 8;
    unsigned optsize = file[pe + 20] | file[pe + 21] << 8;
    uint32_t hdrs =
        rd32(&(struct img){ file, flen, PE_LAYOUT_FILE, 0, 0 }, pe + 24 + OPT_SIZE_OF_HEADERS);
    memcpy(mem, file, hdrs < flen ? hdrs : flen);
    const uint8_t *sec = file + pe + 24 + optsize;
    for (unsigned i = 0; i < nsec; i++, sec += 40) {
        uint32_t va = sec[12] | sec[13] << 8 | (uint32_t)sec[14] << 16 | (uint32_t)sec[15] << 24;
        uint32_t raw = sec[16] | sec[17] << 8 | (uint32_t)sec[18] << 16 | (uint32_t)sec[19] << 24;
        uint32_t ptr = sec[20] | sec[21] << 8 | (uint32_t)sec[22] << 16 | (uint32_t)sec[23] << 24;
        assert_true(ptr + (uint64_t)raw <= flen);
        if (va + (uint64_t)raw > size_of_image)
            raw = size_of_image - va;
        memcpy(mem + va, file + ptr, raw);
    }
    return mem;
}

static void check_image(const char *efi, const char *objdump, const char *want_name,
                        const char *want_pdb)
{
    struct expect e;
    struct pe_info fi, mi;
    size_t flen;
    uint8_t *file = slurp(efi, &flen);
    objdump_facts(objdump, &e);

    assert_int_equal(pe_info_parse(file, flen, PE_LAYOUT_FILE, &fi), PE_INFO_OK);
    assert_int_equal(fi.size_of_image, e.size);
    assert_int_equal(fi.entry_rva, e.entry);
    assert_int_equal(fi.image_base, e.base);
    assert_int_equal(fi.machine, 0x8664);
    assert_string_equal(fi.name, want_name);
    assert_string_equal(fi.pdb_path, want_pdb);
    assert_int_equal(fi.codeview != 0, e.debug_size != 0);
    if (e.rsds[0]) {
        /* the GUID and age that tie the image to its debug file; objdump
         * prints the GUID as Data1, Data2, Data3 (numbers), Data4 (bytes) */
        static const int order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
        char hex[40];
        for (int i = 0; i < PE_INFO_GUID_BYTES; i++)
            snprintf(hex + 2 * i, 3, "%02x", fi.cv_guid[order[i]]);
        assert_string_equal(hex, e.rsds);
        assert_int_equal(fi.cv_age, e.age);
    }

    uint8_t *mem = load(file, flen, fi.size_of_image);
    assert_int_equal(pe_info_parse(mem, fi.size_of_image, PE_LAYOUT_MEMORY, &mi), PE_INFO_OK);
    assert_memory_equal(&fi, &mi, sizeof fi);
    free(mem);
    free(file);
}

static void ptboot_efi(void **state)
{
    (void)state;
    /* gnu-efi's objcopy writes no debug directory: no name (the watcher
     * falls back to the file path) */
    check_image(FIX "ptboot.efi", FIX "ptboot.objdump", "", "");
}

static void lld_driver_with_rsds(void **state)
{
    (void)state;
    /* the path is 85 bytes: pdb_path keeps it whole (up to 127) */
    check_image(FIX "PcRtcFixture.efi", FIX "PcRtcFixture.objdump", "PcRtcFixture", FIXTURE_PDB);
    size_t flen;
    struct pe_info fi;
    uint8_t *file = slurp(FIX "PcRtcFixture.efi", &flen);
    assert_int_equal(pe_info_parse(file, flen, PE_LAYOUT_FILE, &fi), 0);
    assert_int_equal(fi.codeview, CV_RSDS);
    assert_int_equal(fi.subsystem, 11); /* EFI boot service driver */
    free(file);
}

/* The offset of the CodeView record in the fixture file (through the
 * parser's own helpers, checked against the "RSDS" bytes). */
static size_t cv_offset(const uint8_t *file, size_t flen)
{
    struct img m = { file, flen, PE_LAYOUT_FILE, 0, 0 };
    for (size_t i = 0; i + 4 <= flen; i++)
        if (rd32(&m, i) == CV_RSDS)
            return i;
    fail_msg("no RSDS record in the fixture");
    return 0;
}

static void nb10_record(void **state)
{
    (void)state;
    size_t flen;
    struct pe_info fi;
    uint8_t *file = slurp(FIX "PcRtcFixture.efi", &flen);
    size_t cv = cv_offset(file, flen);
    /* rewrite as NB10: signature, offset, timestamp, age, path at +16 */
    memcpy(file + cv, "NB10", 4);
    memset(file + cv + 4, 0, 12);
    memcpy(file + cv + 8, "\x78\x56\x34\x12", 4); /* signature 0x12345678 */
    file[cv + 12] = 3;                            /* age 3 */
    strcpy((char *)file + cv + 16, "c:\\work\\Shell.pdb");
    assert_int_equal(pe_info_parse(file, flen, PE_LAYOUT_FILE, &fi), 0);
    assert_int_equal(fi.codeview, CV_NB10);
    assert_string_equal(fi.name, "Shell");
    assert_string_equal(fi.pdb_path, "c:\\work\\Shell.pdb");
    assert_memory_equal(fi.cv_guid, "\x78\x56\x34\x12\0\0\0\0\0\0\0\0\0\0\0\0", 16);
    assert_int_equal(fi.cv_age, 3);
    free(file);
}

static void damaged_debug_record_gives_no_name(void **state)
{
    (void)state;
    size_t flen;
    struct pe_info fi;
    uint8_t *file = slurp(FIX "PcRtcFixture.efi", &flen);
    uint8_t *copy = malloc(flen);
    size_t cv = cv_offset(file, flen);
    /* unknown signature */
    memcpy(copy, file, flen);
    memcpy(copy + cv, "RSDT", 4);
    assert_int_equal(pe_info_parse(copy, flen, PE_LAYOUT_FILE, &fi), 0);
    assert_string_equal(fi.name, "");
    assert_int_equal(fi.size_of_image, 0x4000);
    /* a path without its NUL inside SizeOfData */
    memcpy(copy, file, flen);
    size_t end = cv + CV_RSDS_PATH + strlen((char *)file + cv + CV_RSDS_PATH);
    memset(copy + cv + CV_RSDS_PATH, 'A', end - cv - CV_RSDS_PATH + 1);
    assert_int_equal(pe_info_parse(copy, flen, PE_LAYOUT_FILE, &fi), 0);
    assert_string_equal(fi.name, "");
    /* a non-printable byte in the path */
    memcpy(copy, file, flen);
    copy[cv + CV_RSDS_PATH + 3] = 0x07;
    assert_int_equal(pe_info_parse(copy, flen, PE_LAYOUT_FILE, &fi), 0);
    assert_string_equal(fi.name, "");
    free(copy);
    free(file);
}

/* Header fields set to hostile values: each gives its error or no name,
 * never a read outside the buffer. */
static void hostile_headers(void **state)
{
    (void)state;
    size_t flen;
    struct pe_info fi;
    uint8_t *file = slurp(FIX "PcRtcFixture.efi", &flen);
    uint8_t *c = malloc(flen);
    struct img m = { file, flen, PE_LAYOUT_FILE, 0, 0 };
    uint32_t pe = rd32(&m, DOS_LFANEW);
    uint64_t opt = pe + 4 + COFF_HEADER_BYTES;
    uint64_t dd = opt + OPT_NUM_DIRS64 + 4 + DIR_DEBUG * DATA_DIR_BYTES;
#define SET32(off, v)              \
    do {                           \
        memcpy(c, file, flen);     \
        uint32_t x_ = (v);         \
        memcpy(c + (off), &x_, 4); \
    } while (0)
#define SET16(off, v)              \
    do {                           \
        memcpy(c, file, flen);     \
        uint16_t x_ = (v);         \
        memcpy(c + (off), &x_, 2); \
    } while (0)
    SET32(DOS_LFANEW, 0xfffffff0u);
    assert_int_equal(pe_info_parse(c, flen, PE_LAYOUT_FILE, &fi), PE_INFO_E_DOS);
    SET32(DOS_LFANEW, (uint32_t)flen - 8);
    assert_int_equal(pe_info_parse(c, flen, PE_LAYOUT_FILE, &fi), PE_INFO_E_DOS);
    SET16(0, 0x4d5a);
    assert_int_equal(pe_info_parse(c, flen, PE_LAYOUT_FILE, &fi), PE_INFO_E_DOS);
    SET32(pe, 0x00004551);
    assert_int_equal(pe_info_parse(c, flen, PE_LAYOUT_FILE, &fi), PE_INFO_E_PE);
    SET16(opt, 0x107);
    assert_int_equal(pe_info_parse(c, flen, PE_LAYOUT_FILE, &fi), PE_INFO_E_OPTIONAL);
    SET16(pe + 4 + COFF_SIZE_OPT_HEADER, 0xffff);
    assert_int_equal(pe_info_parse(c, flen, PE_LAYOUT_FILE, &fi), PE_INFO_E_OPTIONAL);
    SET16(pe + 4 + COFF_SIZE_OPT_HEADER, 100); /* too short for PE32+'s directories */
    assert_int_equal(pe_info_parse(c, flen, PE_LAYOUT_FILE, &fi), PE_INFO_E_OPTIONAL);
    SET16(pe + 4 + COFF_NUM_SECTIONS, 0xffff);
    assert_int_equal(pe_info_parse(c, flen, PE_LAYOUT_FILE, &fi), PE_INFO_E_SECTIONS);
    /* fewer data directories than the debug one: fine, no name */
    SET32(opt + OPT_NUM_DIRS64, 6);
    assert_int_equal(pe_info_parse(c, flen, PE_LAYOUT_FILE, &fi), 0);
    assert_string_equal(fi.name, "");
    /* debug directory of 4 GiB, or pointing past the end */
    SET32(dd + 4, 0xffffffffu);
    assert_int_equal(pe_info_parse(c, flen, PE_LAYOUT_FILE, &fi), 0);
    SET32(dd, 0xfffffff0u);
    assert_int_equal(pe_info_parse(c, flen, PE_LAYOUT_FILE, &fi), 0);
    assert_string_equal(fi.name, "");
    assert_int_equal(pe_info_parse(c, flen, PE_LAYOUT_MEMORY, &fi), 0);
    assert_string_equal(fi.name, "");
    assert_int_equal(pe_info_parse(NULL, 0, PE_LAYOUT_FILE, &fi), PE_INFO_E_DOS);
    free(c);
    free(file);
}

/* Every truncation of both images in both layouts, then 30000 copies with
 * random bytes changed: the parser returns, and what it returns is
 * consistent (a name only with a CodeView signature; nothing on error). */
static void truncations_and_random_damage(void **state)
{
    (void)state;
    const char *files[] = { FIX "PcRtcFixture.efi", FIX "ptboot.efi" };
    uint64_t rs = 12345;
    unsigned named = 0, errors = 0;
    for (int f = 0; f < 2; f++) {
        size_t flen;
        uint8_t *file = slurp(files[f], &flen);
        struct pe_info fi;
        /* every length through the headers, then page steps (ptboot.efi
         * is 200+ KiB) and the whole file */
        for (size_t n = 0; n <= flen; n = n < 4096          ? n + 1
                                          : n + 4096 < flen ? n + 4096
                                          : n < flen        ? flen
                                                            : flen + 1) {
            /* a buffer of exactly n bytes, so ASan sees any read past it */
            uint8_t *t = malloc(n ? n : 1);
            memcpy(t, file, n);
            for (int l = 0; l < 2; l++) {
                int r = pe_info_parse(t, n, (enum pe_layout)l, &fi);
                if (r < 0)
                    assert_string_equal(fi.name, "");
            }
            free(t);
        }
        size_t span = flen < 4096 ? flen : 4096; /* the headers and, in the fixture, the rest */
        uint8_t *c = malloc(flen);
        for (int it = 0; it < 15000; it++) {
            memcpy(c, file, flen);
            for (int k = 0; k < 1 + it % 8; k++) {
                rs = rs * 6364136223846793005ull + 1442695040888963407ull;
                c[(rs >> 33) % span] = (uint8_t)(rs >> 13);
            }
            int r = pe_info_parse(c, flen, (enum pe_layout)(it & 1), &fi);
            if (r < 0) {
                errors++;
                assert_string_equal(fi.name, "");
            } else if (fi.name[0]) {
                named++;
                assert_true(fi.codeview == CV_RSDS || fi.codeview == CV_NB10);
                assert_true(strlen(fi.name) < PE_INFO_NAME_MAX);
            }
        }
        free(c);
        free(file);
    }
    assert_true(named > 0 && errors > 0);
}

/* Every PE32 section of OVMF's DXE volume (PI volume 3, 2.1.5: a common
 * section header, 3-byte size and type 0x10, then the image), written out
 * as a file and read by pe_info in both layouts and by objdump -p. */
#define PI_SECTION_PE32 0x10

static void ovmf_drivers(void **state)
{
    (void)state;
    size_t flen;
    uint8_t *fv = slurp(FIX "ovmf-dxe.fv", &flen);
    unsigned checked = 0, named_by_objdump_debug = 0;
    for (size_t i = 0; i + 8 < flen; i += 4) { /* sections are 4-byte aligned */
        size_t size = fv[i] | (size_t)fv[i + 1] << 8 | (size_t)fv[i + 2] << 16;
        if (fv[i + 3] != PI_SECTION_PE32 || fv[i + 4] != 'M' || fv[i + 5] != 'Z' || size < 64 ||
            i + size > flen)
            continue;
        const uint8_t *img = fv + i + 4;
        size_t ilen = size - 4;
        char path[64], cmd[256];
        snprintf(path, sizeof path, FIX "ovmf-pe.efi");
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fwrite(img, 1, ilen, f);
        fclose(f);
        snprintf(cmd, sizeof cmd, "objdump -p %s > " FIX "ovmf-pe.objdump 2>/dev/null", path);
        if (system(cmd) != 0)
            fail_msg("objdump cannot read the PE32 section at 0x%zx", i);
        struct expect e;
        struct pe_info fi, mi;
        objdump_facts(FIX "ovmf-pe.objdump", &e);
        assert_int_equal(pe_info_parse(img, ilen, PE_LAYOUT_FILE, &fi), PE_INFO_OK);
        assert_int_equal(fi.size_of_image, e.size);
        assert_int_equal(fi.entry_rva, e.entry);
        assert_int_equal(fi.image_base, e.base);
        uint8_t *mem = load(img, ilen, fi.size_of_image);
        assert_int_equal(pe_info_parse(mem, fi.size_of_image, PE_LAYOUT_MEMORY, &mi), PE_INFO_OK);
        assert_memory_equal(&fi, &mi, sizeof fi);
        free(mem);
        named_by_objdump_debug += e.debug_size != 0;
        /* no debug directory in Debian's release build: no name, as objdump says */
        assert_int_equal(fi.name[0] != 0, e.debug_size != 0);
        checked++;
        i += (size & ~(size_t)3);
    }
    free(fv);
    /* OVMF has over a hundred DXE drivers and applications */
    if (checked < 100)
        fail_msg("only %u PE32 images found in OVMF's DXE volume", checked);
    print_message("%u OVMF images checked (%u with a debug directory)\n", checked,
                  named_by_objdump_debug);
}

static void basenames(void **state)
{
    (void)state;
    char out[PE_INFO_NAME_MAX], tiny[5];
    assert_string_equal(pe_info_basename("/a/b/DxeCore.dll", out, sizeof out), "DxeCore");
    assert_string_equal(pe_info_basename("c:\\x\\y.z\\Shell.efi", out, sizeof out), "Shell");
    assert_string_equal(pe_info_basename("\\EFI\\BOOT\\BOOTX64.EFI", out, sizeof out), "BOOTX64");
    assert_string_equal(pe_info_basename("a.b.c", out, sizeof out), "a.b");
    assert_string_equal(pe_info_basename("noext", out, sizeof out), "noext");
    assert_string_equal(pe_info_basename(".hidden", out, sizeof out), ".hidden");
    assert_string_equal(pe_info_basename("dir/", out, sizeof out), "");
    assert_string_equal(pe_info_basename("LongName.pdb", tiny, sizeof tiny), "Long");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ptboot_efi),      cmocka_unit_test(lld_driver_with_rsds),
        cmocka_unit_test(nb10_record),     cmocka_unit_test(damaged_debug_record_gives_no_name),
        cmocka_unit_test(hostile_headers), cmocka_unit_test(truncations_and_random_damage),
        cmocka_unit_test(ovmf_drivers),    cmocka_unit_test(basenames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
