/* format/elf_info.c (--elf's reader of the ELF header and program headers)
 * against elfutils' libelf as the independent reading: real ELF files of
 * this machine (build/ptboot, a PIE of the system, the test image's shared
 * object), hand-built ELFCLASS32, big-endian and PN_XNUM files that libelf
 * reads too, then every truncation of a real file and random damage to
 * its headers. Compiled with format/elf_info.c inside and ASan/UBSan on
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
#include <gelf.h>
#include <libelf.h>

#include "format/elf_info.c"

static uint8_t *slurp(const char *path, size_t *len)
{
    return file_bytes(path, len, "make");
}

/* libelf's reading of buf (on a copy: elf_memory may convert in place):
 * 0 and its program headers compared with elf_info's when both read the
 * file; -1 when libelf refuses it. */
static int same_as_libelf(const uint8_t *buf, size_t len, const struct elf_info *ei)
{
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, buf, len);
    Elf *e = elf_memory(copy, len);
    size_t n = 0;
    GElf_Ehdr eh;
    if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || elf_getphdrnum(e, &n) != 0) {
        if (e)
            elf_end(e);
        free(copy);
        return -1;
    }
    assert_int_equal(gelf_getclass(e) == ELFCLASS64 ? 64 : 32, ei->elf_class);
    assert_int_equal(eh.e_type, ei->type);
    assert_int_equal(eh.e_machine, ei->machine);
    assert_int_equal(eh.e_entry, ei->entry);
    assert_int_equal(n, ei->phnum);
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        struct elf_segment s;
        assert_non_null(gelf_getphdr(e, (int)i, &ph));
        elf_info_segment(ei, buf, (uint32_t)i, &s);
        assert_int_equal(ph.p_type, s.type);
        assert_int_equal(ph.p_flags, s.flags);
        assert_int_equal(ph.p_offset, s.offset);
        assert_int_equal(ph.p_vaddr, s.vaddr);
        assert_int_equal(ph.p_filesz, s.filesz);
        assert_int_equal(ph.p_memsz, s.memsz);
    }
    elf_end(e);
    free(copy);
    return 0;
}

static void real_file(const char *path, uint8_t elf_class)
{
    size_t len;
    uint8_t *b = slurp(path, &len);
    struct elf_info ei;
    assert_int_equal(elf_info_parse(b, len, &ei), ELF_INFO_OK);
    assert_int_equal(ei.elf_class, elf_class);
    assert_false(ei.big_endian);
    assert_int_equal(ei.machine, 62); /* EM_X86_64 */
    assert_true(ei.phnum > 0);
    assert_int_equal(same_as_libelf(b, len, &ei), 0);
    unsigned loads = 0;
    for (uint32_t i = 0; i < ei.phnum; i++) {
        struct elf_segment s;
        elf_info_segment(&ei, b, i, &s);
        loads += s.type == ELF_PT_LOAD;
    }
    assert_true(loads > 0);
    free(b);
}

static void real_files(void **state)
{
    (void)state;
    assert_int_equal(elf_version(EV_CURRENT), EV_CURRENT);
    real_file("build/ptboot", 64);                /* static PIE */
    real_file("/usr/bin/ls", 64);                 /* the system's PIE */
    real_file("build/test/image/ptbtest.so", 64); /* the test image (shared object) */
}

/* ---- hand-built files ------------------------------------------------------ */

static void put(uint8_t *p, uint64_t v, unsigned n, bool big)
{
    for (unsigned k = 0; k < n; k++)
        p[big ? n - 1 - k : k] = (uint8_t)(v >> (8 * k));
}

/* An ELF of the class (32/64) and byte order with three program headers
 * (a PT_LOAD, a PT_NOTE, a PT_LOAD) after the header; xnum: e_phnum is
 * PN_XNUM and section header 0, at the end, holds the count. Returns its
 * length. */
static size_t build(uint8_t *b, size_t cap, unsigned cls, bool big, bool xnum)
{
    const struct layout *l = cls == 64 ? &LAYOUT64 : &LAYOUT32;
    size_t phoff = l->ehdr_bytes, shoff = phoff + 3u * l->phdr_bytes;
    size_t len = shoff + l->shdr_bytes;
    assert_true(len <= cap);
    memset(b, 0, len);
    memcpy(b,
           "\x7f"
           "ELF",
           4);
    b[EI_CLASS] = cls == 64 ? ELFCLASS64 : ELFCLASS32;
    b[EI_DATA] = big ? ELFDATA2MSB : ELFDATA2LSB;
    b[EI_VERSION] = EV_CURRENT;
    put(b + E_TYPE, 2, 2, big);
    put(b + E_MACHINE, cls == 64 ? 62 : 3, 2, big);
    put(b + 20, EV_CURRENT, 4, big); /* e_version */
    put(b + l->e_entry, 0x401000, l->addr, big);
    put(b + l->e_phoff, phoff, l->addr, big);
    put(b + l->e_shoff, xnum ? shoff : 0, l->addr, big);
    put(b + l->e_phentsize, l->phdr_bytes, 2, big);
    put(b + l->e_phnum, xnum ? PN_XNUM : 3, 2, big);
    put(b + l->e_shentsize, l->shdr_bytes, 2, big);
    put(b + (cls == 64 ? 60 : 48), xnum ? 1 : 0, 2, big);  /* e_shnum */
    put(b + (cls == 64 ? 52 : 40), l->ehdr_bytes, 2, big); /* e_ehsize */
    static const uint32_t types[3] = { ELF_PT_LOAD, 4 /* PT_NOTE */, ELF_PT_LOAD };
    for (unsigned i = 0; i < 3; i++) {
        uint8_t *p = b + phoff + i * l->phdr_bytes;
        put(p, types[i], 4, big);
        put(p + l->p_flags, 5 - i, 4, big);
        put(p + l->p_offset, 0x40u * i, l->addr, big);
        put(p + l->p_vaddr, 0x400000u + 0x1000u * i, l->addr, big);
        put(p + l->p_filesz, 0x10u + i, l->addr, big);
        put(p + l->p_memsz, 0x20u + i, l->addr, big);
    }
    if (xnum)
        put(b + shoff + l->sh_info, 3, 4, big);
    return len;
}

static void hand_built(void **state)
{
    (void)state;
    uint8_t b[512];
    for (unsigned cls = 32; cls <= 64; cls += 32)
        for (int big = 0; big <= 1; big++)
            for (int xnum = 0; xnum <= 1; xnum++) {
                size_t len = build(b, sizeof b, cls, big, xnum);
                struct elf_info ei;
                assert_int_equal(elf_info_parse(b, len, &ei), ELF_INFO_OK);
                assert_int_equal(ei.elf_class, cls);
                assert_int_equal(ei.big_endian, big);
                assert_int_equal(ei.phnum, 3);
                assert_int_equal(ei.entry, 0x401000);
                struct elf_segment s;
                elf_info_segment(&ei, b, 2, &s);
                assert_int_equal(s.type, ELF_PT_LOAD);
                assert_int_equal(s.flags, 3);
                assert_int_equal(s.offset, 0x80);
                assert_int_equal(s.vaddr, 0x402000);
                assert_int_equal(s.filesz, 0x12);
                assert_int_equal(s.memsz, 0x22);
                assert_int_equal(same_as_libelf(b, len, &ei), 0);
                /* PN_XNUM's count outside the file: section 0 cut off */
                if (xnum)
                    assert_int_equal(elf_info_parse(b, len - 1, &ei), ELF_INFO_E_XNUM);
            }
}

static void hostile_headers(void **state)
{
    (void)state;
    uint8_t b[512];
    struct elf_info ei;
    size_t len = build(b, sizeof b, 64, false, false);

    assert_int_equal(elf_info_parse(b, 0, &ei), ELF_INFO_E_MAGIC);
    assert_int_equal(elf_info_parse((const uint8_t *)"MZ\x90\0\3\0\0\0", 8, &ei), ELF_INFO_E_MAGIC);
    b[EI_CLASS] = 3;
    assert_int_equal(elf_info_parse(b, len, &ei), ELF_INFO_E_MAGIC);
    b[EI_CLASS] = ELFCLASS64;
    b[EI_DATA] = 0;
    assert_int_equal(elf_info_parse(b, len, &ei), ELF_INFO_E_MAGIC);
    b[EI_DATA] = ELFDATA2LSB;
    b[EI_VERSION] = 2;
    assert_int_equal(elf_info_parse(b, len, &ei), ELF_INFO_E_MAGIC);
    b[EI_VERSION] = EV_CURRENT;
    assert_int_equal(elf_info_parse(b, 63, &ei), ELF_INFO_E_HEADER);
    /* the table one byte past the end, far past it, entries too small */
    assert_int_equal(elf_info_parse(b, 64 + 3 * 56 - 1, &ei), ELF_INFO_E_PHDRS);
    put(b + LAYOUT64.e_phoff, UINT64_MAX - 8, 8, false);
    assert_int_equal(elf_info_parse(b, len, &ei), ELF_INFO_E_PHDRS);
    put(b + LAYOUT64.e_phoff, 64, 8, false);
    put(b + LAYOUT64.e_phentsize, 55, 2, false);
    assert_int_equal(elf_info_parse(b, len, &ei), ELF_INFO_E_PHDRS);
    /* larger entries than the class's are stepped over (the gABI's
     * e_phentsize): one entry of 2 x 56 bytes fits */
    put(b + LAYOUT64.e_phentsize, 112, 2, false);
    put(b + LAYOUT64.e_phnum, 1, 2, false);
    assert_int_equal(elf_info_parse(b, len, &ei), ELF_INFO_OK);
    /* no program headers: nothing to load, not an error */
    put(b + LAYOUT64.e_phnum, 0, 2, false);
    put(b + LAYOUT64.e_phoff, UINT64_MAX, 8, false);
    assert_int_equal(elf_info_parse(b, len, &ei), ELF_INFO_OK);
    assert_int_equal(ei.phnum, 0);
    for (int err = 0; err >= -4; err--)
        assert_true(strlen(elf_info_strerror(err)) > 0);
}

/* Every cut of a real file's first pages, and random bytes written over
 * its headers: elf_info either refuses the bytes or reads a table that is
 * inside them (ASan would catch a read past it) and, where libelf reads
 * the same bytes too, reads it as libelf does. */
static void truncations_and_random_damage(void **state)
{
    (void)state;
    size_t len;
    uint8_t *whole = slurp("build/test/image/ptbtest.so", &len);
    struct elf_info ei;
    assert_int_equal(elf_info_parse(whole, len, &ei), ELF_INFO_OK);
    size_t table_end = (size_t)(ei.phoff + (uint64_t)ei.phnum * ei.phentsize);
    unsigned ok = 0;
    for (size_t cut = 0; cut <= table_end + 8 && cut <= len; cut++) {
        uint8_t *b = malloc(cut ? cut : 1);
        memcpy(b, whole, cut);
        if (elf_info_parse(b, cut, &ei) == ELF_INFO_OK) {
            ok++;
            assert_true(cut >= table_end);
            for (uint32_t i = 0; i < ei.phnum; i++) {
                struct elf_segment s;
                elf_info_segment(&ei, b, i, &s);
            }
        }
        free(b);
    }
    assert_int_equal(ok, (table_end + 8 <= len ? table_end + 8 : len) - table_end + 1);

    srand(13);
    unsigned agreed = 0;
    for (int round = 0; round < 3000; round++) {
        uint8_t *b = malloc(len);
        memcpy(b, whole, len);
        int flips = 1 + rand() % 6;
        for (int k = 0; k < flips; k++)
            b[(size_t)rand() % (table_end < len ? table_end : len)] = (uint8_t)rand();
        /* a random length too, now and then */
        size_t n = rand() % 4 ? len : (size_t)rand() % (table_end + 1);
        if (elf_info_parse(b, n, &ei) == ELF_INFO_OK) {
            assert_true(ei.phoff <= n && (uint64_t)ei.phnum * ei.phentsize <= n - ei.phoff);
            if (ei.phentsize == (ei.elf_class == 64 ? 56 : 32) && same_as_libelf(b, n, &ei) == 0)
                agreed++;
        }
        free(b);
    }
    /* most damage leaves a readable file both read alike */
    assert_true(agreed > 1000);
    free(whole);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real_files),
        cmocka_unit_test(hand_built),
        cmocka_unit_test(hostile_headers),
        cmocka_unit_test(truncations_and_random_damage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
