/* The resident driver's words (docs/resident.md, docs/hang.md): what
 * `install` checks now and writes as the Driver#### option's OptionalData,
 * and what the driver reads from its LoadOptions on the next boot. One
 * parser for both, so a word install accepts is a word the driver takes.
 * Pure C, no UEFI types: the unit test runs this code (test_efi_resident_words).
 *
 *   --image NAME          the image to trace (file or module name); several
 *                         --image words: any of the names (kept as a
 *                         comma-separated list)
 *   --unit hw|soft|auto
 *   --buffer BYTES        the soft unit's buffer: a power of two, 4 KiB..1 GiB
 *   --trace-stop OFF      a TraceStop offset (hex) into the --image
 *   --verbose
 *   --follow              the soft unit traces all the --image's entry point
 *                         runs, not only its image (docs/early-boot.md)
 *   --max-insns N         a bound on the soft unit's steps (default with
 *                         --follow: RESIDENT_FOLLOW_MAX_INSNS)
 *   --hang-timeout S      1..86400 seconds (implies --ring)
 *   --hang-repeat
 *   --ring
 *   --recorder-at ADDR    a page-aligned physical address
 *   --recorder-code BYTES a multiple of 4096, at most 64 MiB
 *   --no-recorder
 *   name[=value]          capture words (arch/x86/capture_plan.h) for the
 *                         hardware unit; of them the soft unit takes no-mtc
 *                         and mtc=N (its time packets: docs/soft-unit.md) */
#ifndef PTBOOT_EFI_RESIDENT_WORDS_H
#define PTBOOT_EFI_RESIDENT_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RESIDENT_WORDS_MAX         64
#define RESIDENT_WORDS_NAME        64
#define RESIDENT_BUFFER_DEFAULT    (1ull << 20)
#define RESIDENT_BUFFER_MIN        (1ull << 12)
#define RESIDENT_BUFFER_MAX        (1ull << 30)
#define RESIDENT_HANG_MAX_S        86400u
#define RESIDENT_RECORDER_CODE_MAX (64ull << 20)
/* Default room for code pages in the recorder (efi/resident/recorder.h). */
#define RESIDENT_RECORDER_CODE_DEFAULT (2ull << 20)
/* The default bound of a --follow session: under QEMU's TCG the soft unit
 * steps some tens of thousands of instructions a second
 * (docs/early-boot.md), so minutes at most. */
#define RESIDENT_FOLLOW_MAX_INSNS 2000000ull

enum resident_unit_choice {
    RESIDENT_CHOOSE_AUTO,
    RESIDENT_CHOOSE_HW,
    RESIDENT_CHOOSE_SOFT
};

struct resident_words {
    char image[RESIDENT_WORDS_NAME]; /* "" when not given; "a,b": several */
    enum resident_unit_choice unit;
    uint64_t buffer_bytes;
    bool verbose;
    bool follow;
    uint64_t max_insns; /* 0: no bound */
    bool have_trace_stop;
    uint64_t trace_stop_offset;
    uint32_t hang_timeout_s; /* 0: none */
    bool hang_repeat, ring;
    bool no_recorder, recorder_at_given;
    uint64_t recorder_at, recorder_code;
    const char *plan_words[RESIDENT_WORDS_MAX]; /* point into the words */
    size_t n_plan_words;
    /* the capture words the soft unit takes too (also in plan_words) */
    bool no_mtc;         /* no-mtc: no MTC packets */
    int mtc_freq;        /* mtc=N: MTCFreq; -1: the unit's default */
    size_t n_soft_words; /* how many of plan_words these are */
};

/* Parses words[0..n) into w (defaults first). Returns 0, or -1 with a
 * message in err (the word and what it wants). */
int resident_words_parse(struct resident_words *w, char *const *words, int n, char *err,
                         size_t err_len);

#endif
