/* The table-driven check shared by the ILD unit tests (test_ptd_ild.c,
 * test_ptd_ild_apx.c): one row per encoding with its expected length (or
 * error), class, target and flags; every proper prefix of each must ask
 * for more bytes, and trailing bytes must not change the result.
 * Include after <cmocka.h>. */
#ifndef TEST_UNIT_ILD_CASE_H
#define TEST_UNIT_ILD_CASE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "decoder/ptd_ild.h"

#define M16 PTD_EXEC_MODE_16
#define M32 PTD_EXEC_MODE_32
#define M64 PTD_EXEC_MODE_64

#define OTHER PTD_ICLASS_OTHER
#define COND  PTD_ICLASS_COND_JUMP
#define JMP   PTD_ICLASS_DIRECT_JUMP
#define CALL  PTD_ICLASS_DIRECT_CALL
#define IJMP  PTD_ICLASS_INDIRECT_JUMP
#define ICALL PTD_ICLASS_INDIRECT_CALL
#define RET   PTD_ICLASS_NEAR_RET
#define FAR   PTD_ICLASS_FAR_TRANSFER

#define BAD (-PTD_ILD_ERR_BAD_INSN)

#define NO_TARGET UINT64_MAX

struct ild_case {
    enum ptd_exec_mode mode;
    const char *hex; /* the instruction's bytes */
    int len;         /* expected length, or a negative error */
    int iclass;
    uint64_t target; /* REL, FAR_PTR or ABS target, or NO_TARGET */
    unsigned flags;  /* flags that must be set (a subset check) */
};

/* ip used for every case: near the top of a 16-bit segment, so rel16
 * wrap-around shows. */
#define IP16 0xFFF0u
#define IP32 0xFFFFFFF0u
#define IP64 0x00007FFFFFFFF000ull

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
    size_t n = 0;
    while (*s && n < max) {
        if (*s == ' ') {
            s++;
            continue;
        }
        unsigned v;
        if (sscanf(s, "%2x", &v) != 1)
            break;
        out[n++] = (uint8_t)v;
        s += 2;
    }
    return n;
}

static uint64_t case_ip(enum ptd_exec_mode m)
{
    return m == M16 ? IP16 : m == M32 ? IP32 : IP64;
}

static void run_ild_cases(const struct ild_case *cases, size_t ncases)
{
    for (size_t i = 0; i < ncases; i++) {
        const struct ild_case *c = &cases[i];
        uint8_t b[32];
        size_t n = unhex(c->hex, b, sizeof b);
        struct ptd_insn in;
        int rc = ptd_ild_decode_at(&in, b, n, c->mode, case_ip(c->mode));
        if (rc != c->len)
            print_error("case %zu (%s, mode %d): rc %d, want %d\n", i, c->hex, c->mode, rc, c->len);
        assert_int_equal(rc, c->len);
        if (rc < 0)
            continue;
        if (in.iclass != c->iclass)
            print_error("case %zu (%s): class %s\n", i, c->hex, ptd_ild_iclass_name(in.iclass));
        assert_int_equal(in.iclass, c->iclass);
        assert_int_equal(in.length, rc);
        if ((in.flags & c->flags) != c->flags)
            print_error("case %zu (%s): flags %#x want %#x\n", i, c->hex, in.flags, c->flags);
        assert_int_equal(in.flags & c->flags, c->flags);
        if (c->target != NO_TARGET) {
            assert_true(in.flags & (PTD_INSN_REL | PTD_INSN_FAR_PTR | PTD_INSN_ABS));
            if (in.target != c->target)
                print_error("case %zu (%s): target %#llx want %#llx\n", i, c->hex,
                            (unsigned long long)in.target, (unsigned long long)c->target);
            assert_true(in.target == c->target);
        }
        /* Every proper prefix asks for more bytes. */
        for (size_t k = 0; k < (size_t)rc; k++) {
            int r = ptd_ild_decode_at(&in, b, k, c->mode, case_ip(c->mode));
            if (r != -PTD_ILD_ERR_TRUNCATED)
                print_error("case %zu (%s) cut at %zu: %d\n", i, c->hex, k, r);
            assert_int_equal(r, -PTD_ILD_ERR_TRUNCATED);
        }
        /* Trailing bytes do not change the result. */
        memset(b + n, 0xCC, sizeof b - n);
        assert_int_equal(ptd_ild_decode_at(&in, b, sizeof b, c->mode, case_ip(c->mode)), rc);
    }
}

#endif /* TEST_UNIT_ILD_CASE_H */
