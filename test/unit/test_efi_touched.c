/* efi/resident/touched.c: the code pages a --follow session ran. Pages are
 * marked as steps would mark them, copied through a reader that fills each
 * page with its own address, and looked up again; the expected sets are
 * written out here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "efi/resident/touched.h"

#define CAP 8
static uint64_t slots[2 * CAP], addr[CAP];
static uint8_t pages[CAP * TOUCHED_PAGE_BYTES];

/* Each page's bytes: its address, repeated; 0x5000 is not readable. */
static int reader(void *ctx, uint64_t page, uint8_t *out)
{
    int *calls = ctx;
    (*calls)++;
    if (page == 0x5000)
        return -1;
    for (size_t i = 0; i < TOUCHED_PAGE_BYTES; i += 8)
        memcpy(out + i, &page, 8);
    return 0;
}

static void marks_and_copies(void **state)
{
    (void)state;
    struct touched_pages t;
    touched_init(&t, slots, addr, pages, CAP);
    touched_mark(&t, 0x9010);
    touched_mark(&t, 0x9020); /* same page: nothing new */
    touched_mark(&t, 0x3ff8); /* may cross into 0x4000: both */
    touched_mark(&t, 0x3ff0); /* 0x3ff0 + 14 = 0x3ffe: no crossing */
    touched_mark(&t, 0x9010); /* again, after another page */
    touched_mark(&t, 0x5123);
    touched_mark(&t, 0x1000);
    assert_int_equal(t.marked, 5); /* 0x1000 0x3000 0x4000 0x5000 0x9000 */
    assert_int_equal(t.dropped, 0);
    int calls = 0;
    assert_int_equal(touched_copy(&t, reader, &calls), 4); /* 0x5000 unreadable */
    assert_int_equal(calls, 5);
    static const uint64_t want[] = { 0x1000, 0x3000, 0x4000, 0x9000 };
    assert_memory_equal(t.addr, want, sizeof want);
    for (int i = 0; i < 4; i++) {
        uint64_t v;
        memcpy(&v, t.pages + (size_t)i * TOUCHED_PAGE_BYTES + 4088, 8);
        assert_int_equal(v, want[i]);
        assert_ptr_equal(touched_find(&t, want[i] + 0x123),
                         t.pages + (size_t)i * TOUCHED_PAGE_BYTES);
    }
    assert_null(touched_find(&t, 0x5000));
    assert_null(touched_find(&t, 0x2fff));
    assert_null(touched_find(&t, 0xa000));
    assert_null(touched_find(&t, 0));
}

static void full_set(void **state)
{
    (void)state;
    struct touched_pages t;
    touched_init(&t, slots, addr, pages, CAP);
    /* twice as many pages as room, in descending order */
    for (uint64_t p = 2 * CAP; p >= 1; p--)
        touched_mark(&t, p << 12);
    assert_int_equal(t.marked, CAP);
    assert_int_equal(t.dropped, CAP);
    int calls = 0;
    assert_int_equal(touched_copy(&t, reader, &calls), CAP);
    /* the first CAP marked, sorted */
    for (uint32_t i = 0; i < CAP; i++)
        assert_int_equal(t.addr[i], (uint64_t)(CAP + 1 + i) << 12);
    /* a page already in the full set is no drop */
    touched_mark(&t, (uint64_t)(CAP + 1) << 12);
    assert_int_equal(t.dropped, CAP);
}

static void empty(void **state)
{
    (void)state;
    struct touched_pages t;
    touched_init(&t, slots, addr, pages, CAP);
    int calls = 0;
    assert_int_equal(touched_copy(&t, reader, &calls), 0);
    assert_int_equal(calls, 0);
    assert_null(touched_find(&t, 0x1000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(marks_and_copies),
        cmocka_unit_test(full_set),
        cmocka_unit_test(empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
