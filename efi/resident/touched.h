/* The code pages a soft-unit session ran (efi/resident/driver.c, --follow):
 * every step marks the page of the instruction about to run (and the next
 * page when the instruction may cross into it), in the #DB handler, into a
 * fixed hash set; when the session ends the pages are copied, as they were
 * then, into a page dump sorted by address (the code.dump/code.addr format,
 * docs/capture-files.md). A trace that follows the traced driver into the
 * DXE core and other drivers then decodes from exactly the code that ran,
 * on the target at ExitBootServices and on the host from the serial dump.
 *
 * UEFI-free C over caller storage, no allocation: its unit test runs this
 * code (test/unit/test_efi_touched.c). */
#ifndef PTBOOT_EFI_RESIDENT_TOUCHED_H
#define PTBOOT_EFI_RESIDENT_TOUCHED_H

#include <stdint.h>

#define TOUCHED_PAGE_BYTES 4096u
/* The longest x86 instruction (SDM Vol. 2 2.3.11): one starting near the
 * end of a page may end on the next. */
#define TOUCHED_INSN_MAX 15u

struct touched_pages {
    uint64_t *slots; /* the set: page addresses + 1 (0: empty), nslots of them */
    uint32_t nslots; /* 2 * cap: the set stays at most half full */
    uint64_t *addr;  /* the dump's page addresses (cap), sorted by touched_copy */
    uint8_t *pages;  /* the dump's pages (cap * 4 KiB) */
    uint32_t cap;
    uint32_t marked;  /* distinct pages in the set */
    uint32_t dropped; /* pages marked while the set was full */
    uint32_t n;       /* pages in the dump */
    uint64_t last;    /* the page marked last, + 1 (a cache: steps stay on a page) */
};

/* slots: 2 * cap entries; addr: cap; pages: cap * 4 KiB. */
void touched_init(struct touched_pages *t, uint64_t *slots, uint64_t *addr, uint8_t *pages,
                  uint32_t cap);
/* The instruction at ip is about to run: its page (and the next one when
 * it may cross) is marked. */
void touched_mark(struct touched_pages *t, uint64_t ip);
/* Copies every marked page through read (4 KiB at a page address into
 * out; non-zero: not readable, left out) into the dump, sorted. Returns
 * the pages in the dump. */
typedef int (*touched_read_fn)(void *ctx, uint64_t page, uint8_t *out);
uint32_t touched_copy(struct touched_pages *t, touched_read_fn read, void *ctx);
/* The dump's copy of the page holding a, or NULL. */
const uint8_t *touched_find(const struct touched_pages *t, uint64_t a);

#endif
