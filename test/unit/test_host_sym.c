/* host/sym (symbols, debug-file search, names) and host/code_load (--elf,
 * --pe) on the project's own images: build/test/image/ptbtest.so (ELF,
 * symbols and DWARF kept) and build/ptbtest.efi (the PE objcopy made of it,
 * with its COFF symbol table and the CodeView record naming the .so),
 * with binutils as the independent reading: nm for the functions,
 * addr2line for every instruction's source line, objdump -d for where the
 * instructions are. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "format/pe_info.h"
#include "format/sideband.h"
#include "host/code_load.h"
#include "host/sym/names.h"
#include "host/sym/sym_search.h"
#include "host/sym/sym_table.h"

#define SO       "build/test/image/ptbtest.so"
#define EFI      "build/ptbtest.efi"
#define OTHER_SO "build/test/image/ptbspin.so"

static FILE *run(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        fail_msg("cannot run %s", cmd);
    return p;
}

/* nm's global functions in .text: address and name. */
struct nm_sym {
    uint64_t addr;
    char name[64];
};
static size_t nm_functions(struct nm_sym *out, size_t max)
{
    char line[256];
    size_t n = 0;
    FILE *p = run("nm --defined-only " SO);
    while (fgets(line, sizeof line, p) && n < max) {
        unsigned long long a;
        char t, name[64];
        if (sscanf(line, "%llx %c %63s", &a, &t, name) == 3 && t == 'T' && !strchr(name, '.') &&
            strcmp(name, "_text") && strcmp(name, "_etext")) {
            out[n].addr = a;
            snprintf(out[n].name, sizeof out[n].name, "%s", name);
            n++;
        }
    }
    pclose(p);
    return n;
}

static void elf_functions_as_nm(void **state)
{
    (void)state;
    char err[512];
    struct nm_sym syms[64];
    size_t n = nm_functions(syms, 64);
    struct sym_table *t = sym_table_load(SO, err, sizeof err);
    assert_non_null(t);
    assert_int_equal(t->kind, SYM_FILE_ELF);
    assert_true(t->has_dwarf);
    assert_int_equal(t->build_id_len, 20);
    assert_true(n >= 11);
    for (size_t i = 0; i < n; i++) {
        const struct sym_func *f = sym_table_func(t, syms[i].addr);
        assert_non_null(f);
        if (strcmp(f->name, syms[i].name) && strcmp(syms[i].name, "_start"))
            fail_msg("0x%llx: %s, nm says %s", (unsigned long long)syms[i].addr, f->name,
                     syms[i].name);
        /* inside a sized function: the same name and the offset from it */
        if (f->size > 1) {
            const struct sym_func *g = sym_table_func(t, syms[i].addr + 1);
            assert_ptr_equal(g, f);
        }
    }
    /* before the first function: none */
    assert_null(sym_table_func(t, 0x10));
    sym_table_free(t);
}

/* Every instruction of .text (objdump -d) against addr2line's answer. */
static void elf_lines_as_addr2line(void **state)
{
    (void)state;
    char err[512], line[512], cmd[256];
    static uint64_t addrs[4096];
    size_t n = 0;
    FILE *p = run("objdump -d --section=.text " SO);
    while (fgets(line, sizeof line, p) && n < 4096) {
        unsigned long long a;
        if (sscanf(line, " %llx:\t", &a) == 1 && strchr(line, '\t'))
            addrs[n++] = a;
    }
    pclose(p);
    assert_true(n > 100);
    char *list = NULL;
    size_t len = 0;
    FILE *tmp = open_memstream(&list, &len);
    for (size_t i = 0; i < n; i++)
        fprintf(tmp, "0x%llx\n", (unsigned long long)addrs[i]);
    fclose(tmp);
    char path[] = "/tmp/ptboot-sym-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, list, len), (ssize_t)len);
    close(fd);
    free(list);
    snprintf(cmd, sizeof cmd, "addr2line -e " SO " < %s", path);
    struct sym_table *t = sym_table_load(SO, err, sizeof err);
    assert_non_null(t);
    p = run(cmd);
    size_t with_line = 0;
    for (size_t i = 0; i < n; i++) {
        assert_non_null(fgets(line, sizeof line, p));
        line[strcspn(line, " \n")] = '\0'; /* drop " (discriminator N)" */
        const char *file;
        unsigned ln;
        char *colon = strrchr(line, ':');
        int known = colon && colon[1] != '?' && strcmp(colon + 1, "0") && strncmp(line, "??", 2);
        int r = sym_table_line(t, addrs[i], &file, &ln);
        if (!known) {
            assert_int_equal(r, -1);
            continue;
        }
        *colon = '\0';
        /* the file as the line table names it; addr2line puts the unit's
         * directory before a relative one: the same file if the names end
         * alike */
        size_t fl = r == 0 ? strlen(file) : 0, ll = strlen(line);
        const char *fb = r == 0 && strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
        if (r != 0 || fl > ll || strcmp(line + ll - fl, file) || !*fb ||
            ln != (unsigned)atoi(colon + 1))
            fail_msg("0x%llx: %s:%u, addr2line says %s:%s", (unsigned long long)addrs[i],
                     r ? "-" : file, r ? 0 : ln, line, colon + 1);
        with_line++;
    }
    pclose(p);
    unlink(path);
    /* the test image's own code has lines (crt0's relocator has none) */
    assert_true(with_line > n / 2);
    sym_table_free(t);
}

/* The PE's COFF symbols (objcopy's): the same functions at the same RVAs,
 * and the CodeView record that names the .so, with its build ID. */
static void pe_symbols_and_identity(void **state)
{
    (void)state;
    char err[512];
    struct nm_sym syms[64];
    size_t n = nm_functions(syms, 64);
    struct sym_table *pe = sym_table_load(EFI, err, sizeof err);
    struct sym_table *elf = sym_table_load(SO, err, sizeof err);
    assert_non_null(pe);
    assert_non_null(elf);
    assert_int_equal(pe->kind, SYM_FILE_PE);
    assert_false(pe->has_dwarf);
    for (size_t i = 0; i < n; i++) {
        const struct sym_func *f = sym_table_func(pe, syms[i].addr);
        assert_non_null(f);
        if (strcmp(syms[i].name, "_start"))
            assert_string_equal(f->name, syms[i].name);
    }
    assert_int_equal(pe->cv, PE_CV_RSDS);
    assert_memory_equal(pe->cv_guid, elf->build_id, 16);
    sym_table_free(pe);
    sym_table_free(elf);
}

static char tmpdir[64];

static void copy(const char *from, const char *to_dir, const char *name)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/%s && cp %s %s/%s/%s", tmpdir, to_dir, from, tmpdir,
             to_dir, name);
    assert_int_equal(system(cmd), 0);
}

static struct pe_info efi_info(void)
{
    static uint8_t b[1 << 20];
    struct pe_info pi;
    FILE *f = fopen(EFI, "rb");
    assert_non_null(f);
    size_t len = fread(b, 1, sizeof b, f);
    fclose(f);
    assert_int_equal(pe_info_parse(b, len, PE_LAYOUT_FILE, &pi), PE_INFO_OK);
    return pi;
}

/* Which file an image is matched to: GUID first, then the CodeView path's
 * longest tail, then the name; never a file of another build. */
static void search_rules(void **state)
{
    (void)state;
    char err[512], dir[128];
    struct pe_info pi = efi_info();
    strcpy(tmpdir, "/tmp/ptboot-search-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    /* the right file deep in a build tree, another build's file of the
     * same name elsewhere, the PE image, and things that are no candidates */
    copy(SO, "a/Build/X64/Pkg/DEBUG", "ptbtest.so");
    copy(OTHER_SO, "b/other", "ptbtest.so");
    copy(EFI, "c", "ptbtest.efi");
    copy("test/image/ptbtest.c", "a", "ptbtest.c");
    copy("build/test/image/ptbtest.o", "a", "ptbtest.o"); /* ELF, not linked */

    struct sym_search s;
    sym_search_init(&s);
    assert_int_equal(sym_search_add(&s, tmpdir, err, sizeof err), 0);
    assert_int_equal(s.n, 3);
    const char *how;
    struct sym_want w = { "ptbtest", SIDEBAND_CV_RSDS, pi.cv_guid, pi.pdb_path };
    int i = sym_search_match(&s, &w, &how);
    assert_true(i >= 0);
    assert_string_equal(how, "guid");
    assert_non_null(strstr(s.v[i].path, "/a/Build/X64/Pkg/DEBUG/ptbtest.so"));

    /* no GUID (an NB10 image, say): the path's longest tail wins */
    struct sym_want wp = { "ptbtest", 0, NULL, "/home/x/ws/Build/X64/Pkg/DEBUG/ptbtest.so" };
    i = sym_search_match(&s, &wp, &how);
    assert_string_equal(how, "path");
    assert_non_null(strstr(s.v[i].path, "/a/Build/"));
    /* backslashes and another case name the same file */
    struct sym_want wb = { NULL, 0, NULL, "C:\\ws\\BUILD\\x64\\pkg\\debug\\ptbtest.so" };
    i = sym_search_match(&s, &wb, &how);
    assert_non_null(strstr(s.v[i].path, "/a/Build/"));
    /* only a name: an ELF (with DWARF) over the PE */
    struct sym_want wn = { "ptbtest", 0, NULL, NULL };
    i = sym_search_match(&s, &wn, &how);
    assert_string_equal(how, "name");
    assert_int_equal(s.v[i].kind, SYM_FILE_ELF);
    /* an image named after its file (the resident tracer's names) */
    struct sym_want wf = { "ptbtest.efi", 0, NULL, NULL };
    i = sym_search_match(&s, &wf, &how);
    assert_string_equal(how, "name");
    assert_int_equal(s.v[i].kind, SYM_FILE_ELF);
    /* nothing of that name */
    struct sym_want wx = { "PcdDxe", 0, NULL, "/x/PcdDxe.dll" };
    assert_int_equal(sym_search_match(&s, &wx, &how), -1);
    sym_search_free(&s);

    /* only the other build's file (and no PE): never taken for this image */
    snprintf(dir, sizeof dir, "%s/b", tmpdir);
    sym_search_init(&s);
    assert_int_equal(sym_search_add(&s, dir, err, sizeof err), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(sym_search_match(&s, &w, &how), -1);
    sym_search_free(&s);

    /* a given file that is no candidate, a path that is not there */
    snprintf(dir, sizeof dir, "%s/a/ptbtest.c", tmpdir);
    sym_search_init(&s);
    assert_int_equal(sym_search_add(&s, dir, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a linked ELF file or PE/COFF image"));
    assert_int_equal(sym_search_add(&s, "/nonexistent/dir", err, sizeof err), -1);
    assert_non_null(strstr(err, "No such file"));
    sym_search_free(&s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    assert_int_equal(system(cmd), 0);
}

/* --pe and --elf lay the same code at the same place: the PE's sections at
 * base + RVA, the ELF's segments moved so the lowest is at its BASE. */
static void code_options_lay_out_the_image(void **state)
{
    (void)state;
    char err[512];
    struct flow_image img;
    struct code_modules m = { 0 };
    flow_image_init(&img);
    assert_int_equal(code_load_pe(&img, &m, EFI ":0x10000000", err, sizeof err), 0);
    assert_int_equal(code_load_elf(&img, &m, SO ":0x20000000", err, sizeof err), 0);
    assert_int_equal(m.n, 2);
    assert_string_equal(m.v[0].name, "ptbtest");
    assert_int_equal(m.v[0].base, 0x10000000);
    assert_int_equal(m.v[0].bias, 0x10000000);
    assert_int_equal(m.v[0].size, 0x7000);
    assert_int_equal(m.v[1].base, 0x20000000);
    assert_int_equal(m.v[1].bias, 0x20000000); /* the .so's lowest segment is at 0 */
    uint8_t a[0x2d0], b[0x2d0];
    assert_int_equal(flow_image_read(&img, 0x10001000, a, sizeof a), sizeof a);
    assert_int_equal(flow_image_read(&img, 0x20001000, b, sizeof b), sizeof b);
    assert_memory_equal(a, b, sizeof a);
    /* the PE's headers are there too, as a loader leaves them */
    assert_int_equal(flow_image_read(&img, 0x10000000, a, 2), 2);
    assert_memory_equal(a, "MZ", 2);
    /* at its own addresses when no BASE is given */
    assert_int_equal(code_load_elf(&img, &m, SO, err, sizeof err), 0);
    assert_int_equal(m.v[2].base, 0);
    assert_int_equal(m.v[2].bias, 0);
    /* refusals name the file */
    assert_int_equal(code_load_elf(&img, &m, "test/image/ptbtest.c", err, sizeof err), -1);
    assert_non_null(strstr(err, "test/image/ptbtest.c: not an ELF file"));
    assert_int_equal(code_load_pe(&img, &m, SO ":0x1000", err, sizeof err), -1);
    assert_non_null(strstr(err, "MZ"));
    assert_int_equal(code_load_pe(&img, &m, "missing.efi", err, sizeof err), -1);
    assert_non_null(strstr(err, "missing.efi"));
    assert_int_equal(m.n, 3);
    code_modules_free(&m);
    flow_image_free(&img);
}

/* Names as the commands print them, for an image as the sideband records
 * it (its CodeView record read by pe_info from the .efi). */
static void names_as_printed(void **state)
{
    (void)state;
    char err[512], buf[160];
    struct pe_info pi = efi_info();
    struct sideband sb;
    struct nm_sym syms[64];
    size_t n = nm_functions(syms, 64);
    uint64_t fib = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(syms[i].name, "ptbtest_fib"))
            fib = syms[i].addr;
    assert_true(fib != 0);
    char cmd[256], want_line[128];
    snprintf(cmd, sizeof cmd, "addr2line -e %s 0x%llx", SO, (unsigned long long)fib);
    FILE *p = run(cmd);
    assert_non_null(fgets(want_line, sizeof want_line, p));
    pclose(p);
    want_line[strcspn(want_line, " \n")] = '\0';
    const char *base = strrchr(want_line, '/') ? strrchr(want_line, '/') + 1 : want_line;

    sideband_init(&sb);
    int row = sideband_add_image(&sb, 0xdf9b000, 0x7000, 0, pi.name, SIDEBAND_IMG_TARGET);
    sideband_set_debug(&sb, row, SIDEBAND_CV_RSDS, pi.cv_guid, pi.cv_age, pi.pdb_path);
    row = sideband_add_image(&sb, 0xf000000, 0x1000, 0, "DxeCore", 0);

    struct names nm;
    names_init(&nm);
    assert_int_equal(names_add_symbols(&nm, "build/test/image", err, sizeof err), 0);
    assert_int_equal(
        names_add_module(&nm, 0xdf9b000, 0x7000, 0xdf9b000, "ptbtest", &sb.images[0], NULL), 0);
    assert_int_equal(
        names_add_module(&nm, 0xf000000, 0x1000, 0xf000000, "DxeCore", &sb.images[1], NULL), 0);
    char want[160];
    snprintf(want, sizeof want, "ptbtest_fib (%s)", base);
    assert_true(names_format(&nm, 0xdf9b000 + fib, NAMES_F_LINE, buf, sizeof buf) > 0);
    assert_string_equal(buf, want);
    names_format(&nm, 0xdf9b000 + fib + 3, 0, buf, sizeof buf);
    assert_string_equal(buf, "ptbtest_fib+0x3");
    /* no debug file: module+offset, or nothing when asked */
    names_format(&nm, 0xf000010, NAMES_F_LINE, buf, sizeof buf);
    assert_string_equal(buf, "DxeCore+0x10");
    assert_int_equal(names_format(&nm, 0xf000010, NAMES_F_NO_MODULE, buf, sizeof buf), 0);
    /* outside every module */
    assert_int_equal(names_format(&nm, 0x1000, NAMES_F_LINE, buf, sizeof buf), 0);
    /* cut to fit, NUL-terminated */
    assert_int_equal(names_format(&nm, 0xdf9b000 + fib, NAMES_F_LINE, buf, 8), 7);
    assert_string_equal(buf, "ptbtest");
    struct names_hit h;
    names_lookup(&nm, 0xdf9b000 + fib + 3, 1, &h);
    assert_int_equal(h.func_addr, 0xdf9b000 + fib);
    assert_string_equal(h.module->how, "guid");
    names_free(&nm);
}

/* The OS-loader stand-in (test/resident/osloader.c) the same way: its
 * functions by name and their lines as addr2line gives them. */
static void osloader_names(void **state)
{
    (void)state;
    static const char *const fns[] = { "osl_fib", "osl_mix", "efi_main" };
    char err[512], cmd[256], line[512];
    const char *so = "build/test/resident/osloader.so";
    struct sym_table *t = sym_table_load(so, err, sizeof err);
    assert_non_null(t);
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        snprintf(cmd, sizeof cmd, "nm %s | awk '$3 == \"%s\" { print $1 }'", so, fns[i]);
        FILE *p = run(cmd);
        unsigned long long a = 0;
        assert_int_equal(fscanf(p, "%llx", &a), 1);
        pclose(p);
        const struct sym_func *f = sym_table_func(t, a + 2);
        assert_non_null(f);
        assert_string_equal(f->name, fns[i]);
        assert_int_equal(a + 2 - f->addr, 2);
        snprintf(cmd, sizeof cmd, "addr2line -e %s 0x%llx", so, a);
        p = run(cmd);
        assert_non_null(fgets(line, sizeof line, p));
        pclose(p);
        const char *file;
        unsigned ln;
        assert_int_equal(sym_table_line(t, a, &file, &ln), 0);
        char want[600];
        snprintf(want, sizeof want, "%s:%u", strrchr(file, '/') ? strrchr(file, '/') + 1 : file,
                 ln);
        assert_non_null(strstr(line, want));
    }
    sym_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(elf_functions_as_nm),
        cmocka_unit_test(elf_lines_as_addr2line),
        cmocka_unit_test(pe_symbols_and_identity),
        cmocka_unit_test(search_rules),
        cmocka_unit_test(code_options_lay_out_the_image),
        cmocka_unit_test(names_as_printed),
        cmocka_unit_test(osloader_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
