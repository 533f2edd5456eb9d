/* The hardware unit as a flight recorder across a reset
 * (arch/x86/rtit_recorder.h), on the RTIT model (test/rtit_model.h, written
 * from the SDM, independent of arch/) for every fixture CPU with Intel PT:
 * the resident plan is started, the model stores a real packet stream
 * (PSB+ with rising TSC every PSB_PERIOD bytes, TNT and TIP packets between,
 * built here byte by byte from the SDM's encodings, not by our encoder),
 * the periodic save runs on the live model, then a warm reset (TraceEn
 * cleared; the other MSRs kept or cleared by CPUID.(14h,0).EBX[2]) and
 * rtit_recorder_find on the memory. The recovered stream, linearised, must
 * be the newest bytes of the stream that was stored:
 *   - MSRs kept: exactly the tail, from its first PSB;
 *   - MSRs gone, saved position and zero band: exactly the tail;
 *   - MSRs gone and the band overrun (a spin with interrupts off writes far
 *     more than a save period): from the PSB+ time stamps, a contiguous
 *     slice of the stream whose newest PSB is the stream's last, ending at
 *     most one PSB period past the true end;
 *   - the save itself: no #GP, no STATUS.Error, tracing resumes with the
 *     same CTL, the position equals the model's, the band is zero, the
 *     resume writes no PSB+ (PacketByteCnt kept);
 *   - a ring that never wrapped, a buffer without any PSB, bad hints. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "arch/x86/capture_plan.h"
#include "arch/x86/capture_seq.h"
#include "arch/x86/rtit_linear.h"
#include "arch/x86/rtit_recorder.h"
#include "arch/x86/rtit_regs.h"
#include "arch/x86/rtit_topa.h"
#include "test/unit/rtit_model_util.h"
#include "test/unit/rtit_test_util.h"

#define MEM_PHYS   0x20000000ull
#define MEM_SIZE   (2u << 20)
#define BLOCK_PHYS (MEM_PHYS + 0x1000)
#define STREAM_MAX (4u << 20)
#define PSB_PERIOD 2048u

static uint8_t mem[MEM_SIZE] __attribute__((aligned(4096)));
static uint8_t stream[STREAM_MAX];
/* where make_stream put each PSB, and its TSC */
static uint64_t psb_at[STREAM_MAX / PSB_PERIOD + 2], psb_tsc[STREAM_MAX / PSB_PERIOD + 2];
static size_t npsb;
static uint8_t scratch[MEM_SIZE];
static uint8_t lin[MEM_SIZE];
static struct rtit_model model;

static void *at(uint64_t phys)
{
    return mem + (phys - MEM_PHYS);
}

/* ---- a packet stream, from the SDM's encodings (36.4.2) ---------------- */

static size_t put_psb_plus(uint8_t *o, uint64_t tsc, uint64_t ip)
{
    size_t n = 0;
    for (int i = 0; i < 8; i++) { /* PSB: 02 82 repeated 8 times */
        o[n++] = 0x02;
        o[n++] = 0x82;
    }
    o[n++] = 0x19; /* TSC: 19 + 7-byte value */
    for (int i = 0; i < 7; i++)
        o[n++] = (uint8_t)(tsc >> (8 * i));
    o[n++] = 0x99; /* MODE.Exec 64-bit: 99, 000 000 0 L=1 */
    o[n++] = 0x01;
    o[n++] = 0x1d | (3u << 5); /* FUP, IPBytes 011: 6 bytes, sign-extended */
    for (int i = 0; i < 6; i++)
        o[n++] = (uint8_t)(ip >> (8 * i));
    o[n++] = 0x02; /* PSBEND: 02 23 */
    o[n++] = 0x23;
    return n;
}

/* The stream: PSB+ every PSB_PERIOD bytes (TSC rising by 1000 each), and
 * between them TNT-8 bytes (never 00 or 02) and TIPs with 4 non-zero
 * payload bytes. */
static size_t make_stream(size_t len, uint64_t tsc0)
{
    size_t n = 0, k = 0;
    npsb = 0;
    while (n < len) {
        size_t seg = n;
        psb_at[npsb] = n;
        psb_tsc[npsb++] = tsc0 + 1000 * k;
        n += put_psb_plus(stream + n, tsc0 + 1000 * k, 0x7e000000ull + 16 * k);
        k++;
        unsigned r = (unsigned)k;
        while (n < seg + PSB_PERIOD && n + 8 < len + 64) {
            r = r * 1103515245u + 12345u;
            if ((r >> 16) % 7 == 0) {
                stream[n++] = 0x0d | (2u << 5); /* TIP, IPBytes 010: 4 bytes */
                for (int i = 0; i < 4; i++)
                    stream[n++] = (uint8_t)(0x11 + ((r >> (4 * i)) & 0x3f));
            } else {
                /* TNT-8: bit 0 = 0, a stop bit above 1..6 TNT bits */
                uint8_t b = (uint8_t)(((r >> 8) & 0x7e) | 0x80);
                stream[n++] = b;
            }
        }
    }
    return len;
}

/* ---- the rig -------------------------------------------------------------- */

struct rig {
    struct rtit_caps caps;
    struct rtit_msr_ops ops;
    struct capture_plan plan;
    uint8_t *buf;
    uint64_t size;
};

/* The resident plan on cpu with a 64 KiB ring, started on the model. */
static void rig_start(struct rig *r, const char *cpu)
{
    r->caps = rtit_fixture_caps(cpu);
    r->ops = rtit_model_fresh(&model, &r->caps, mem, MEM_PHYS, MEM_SIZE);
    static const char *const words[] = { "buffer=64K" };
    struct capture_request req = {
        .mode = CAPTURE_RESIDENT,
        .unit = CAPTURE_UNIT_HW,
        .words = words,
        .n_words = 1,
        .cpus = 1,
    };
    assert_int_equal(capture_plan_make(&r->plan, &r->caps, &req), CAPTURE_PLAN_OK);
    struct capture_plan *p = &r->plan;
    assert_true(p->cfg.output == RTIT_OUTPUT_TOPA || p->cfg.output == RTIT_OUTPUT_SINGLE);
    assert_int_equal(capture_plan_place(p, &r->caps, BLOCK_PHYS, p->need.block_bytes), 0);
    if (p->cfg.output == RTIT_OUTPUT_TOPA) {
        struct rtit_topa_layout l;
        assert_int_equal(rtit_topa_build(&l, &p->cfg, at(p->cfg.table_phys),
                                         (size_t)(p->need.table_bytes / RTIT_TOPA_TABLE_ALIGN)),
                         0);
    }
    struct rtit_start_info si;
    assert_int_equal(rtit_start(&r->ops, &p->cfg, &r->caps, false, &si), 0);
    assert_true(rtit_model_tracing(&model));
    r->buf = at(p->cfg.buffer_phys);
    r->size = p->buffer_bytes;
    assert_int_equal(r->size, 64u << 10);
}

static void store(uint64_t from, uint64_t n)
{
    assert_int_equal(rtit_model_trace_data(&model, stream + from, n), n);
}

/* The linearised recovery of r's buffer with hint h. */
static uint64_t recover(struct rig *r, const struct rtit_recorder_hint *h,
                        struct rtit_recorder_found *f)
{
    assert_int_equal(rtit_recorder_find(r->buf, h, scratch, f), 0);
    struct rtit_linear l;
    assert_int_equal(rtit_trace_linearize(r->buf, &f->sum, lin, sizeof lin, &l), 0);
    assert_true(l.have_psb);
    return l.bytes;
}

/* lin[0, n) equals stream[end - n, end) and starts with a PSB. */
static void assert_tail(uint64_t n, uint64_t end, const char *what)
{
    if (n > end || memcmp(lin, stream + end - n, (size_t)n))
        fail_msg("%s: the %llu recovered bytes are not the stream's last ones", what,
                 (unsigned long long)n);
    assert_int_equal(lin[0], 0x02);
    assert_int_equal(lin[1], 0x82);
}

static bool pt_fixture(const char *cpu)
{
    struct rtit_caps c = rtit_fixture_caps(cpu);
    return c.pt;
}

/* The save on the live model, then MSRs kept or not. */
static void test_save_and_msr(void **state)
{
    (void)state;
    unsigned ran = 0;
    for (size_t i = 0; i < RTIT_FIXTURE_COUNT; i++) {
        const char *cpu = rtit_fixture_names[i];
        if (!pt_fixture(cpu))
            continue;
        struct rig r;
        rig_start(&r, cpu);
        make_stream(STREAM_MAX, 5000);
        uint64_t L = 150000; /* over two laps of the 64 KiB ring */
        store(0, L);
        uint64_t ctl = model.ctl;
        uint64_t before_gp = model.gp_count;
        struct rtit_stop_info si;
        assert_int_equal(
            rtit_recorder_save(&r.ops, &r.plan.cfg, r.buf, RTIT_RECORDER_ZERO_BAND / 16, &si), 0);
        if (model.gp_count != before_gp || (model.status & RTIT_STATUS_ERROR))
            fail_msg("%s: save: gp '%s' error '%s'", cpu, model.last_gp, model.last_error);
        assert_true(rtit_model_tracing(&model));
        assert_int_equal(model.ctl, ctl);
        assert_false(model.psb_on_enable); /* resumed: PacketByteCnt kept, no PSB+ */
        assert_int_equal((uint64_t)si.write_pos, L % r.size);
        for (uint64_t k = 0; k < RTIT_RECORDER_ZERO_BAND / 16; k++)
            assert_int_equal(r.buf[(L + k) % r.size], 0);
        /* more trace after the save, inside the band */
        uint64_t more = 1500;
        store(L, more);
        L += more;
        rtit_model_warm_reset(&model);
        assert_false(rtit_model_tracing(&model));
        /* what the next boot reads: the pointers (kept with EBX[2]) */
        struct rtit_stop_info now;
        assert_int_equal(rtit_stop(&r.ops, &r.plan.cfg, &now), 0);
        assert_false(now.was_tracing);
        bool kept = r.caps.leaf14_0.ebx & (1u << 2);
        struct rtit_recorder_found f;
        struct rtit_recorder_hint h = {
            .buffer_bytes = r.size,
            .msr_pos = now.write_pos,
            .saved_pos = si.write_pos,
            .zero_band = RTIT_RECORDER_ZERO_BAND / 16,
        };
        if (kept) {
            assert_int_equal((uint64_t)now.write_pos, L % r.size);
            uint64_t n = recover(&r, &h, &f);
            assert_int_equal(f.source, RTIT_RECORDER_FROM_MSR);
            assert_true(f.end_exact);
            assert_true(f.sum.wrapped);
            assert_tail(n, L, cpu);
            /* the band zeroed old bytes: the stream holds less than the ring */
            assert_true(n >= r.size - RTIT_RECORDER_ZERO_BAND / 16 - 2 * PSB_PERIOD);
        }
        /* without the MSRs: the saved position and the band */
        h.msr_pos = -1;
        uint64_t n = recover(&r, &h, &f);
        assert_int_equal(f.source, RTIT_RECORDER_FROM_BAND);
        assert_true(f.end_exact);
        assert_int_equal(f.end, L % r.size);
        assert_tail(n, L, cpu);
        ran++;
    }
    assert_true(ran >= 4);
}

/* A spin with interrupts off: far more than the band after the last save. */
static void test_band_overrun_tsc(void **state)
{
    (void)state;
    unsigned ran = 0;
    for (size_t i = 0; i < RTIT_FIXTURE_COUNT; i++) {
        const char *cpu = rtit_fixture_names[i];
        if (!pt_fixture(cpu))
            continue;
        struct rig r;
        rig_start(&r, cpu);
        make_stream(STREAM_MAX, 77777);
        uint64_t L = 40000;
        store(0, L);
        struct rtit_stop_info si;
        assert_int_equal(rtit_recorder_save(&r.ops, &r.plan.cfg, r.buf, 4096, &si), 0);
        /* then 3.3 laps with nothing saved */
        uint64_t more = 216000;
        store(L, more);
        L += more;
        rtit_model_warm_reset(&model);
        struct rtit_recorder_found f;
        struct rtit_recorder_hint h = {
            .buffer_bytes = r.size,
            .msr_pos = -1,
            .saved_pos = si.write_pos,
            .zero_band = 4096,
        };
        uint64_t n = recover(&r, &h, &f);
        assert_int_equal(f.source, RTIT_RECORDER_FROM_TSC);
        assert_false(f.end_exact);
        /* counted from the saved position up to the wrap point: the
		 * newest lap's PSBs after it */
        assert_true(f.psbs >= 2);
        /* the newest PSB is the stream's last one that fits before L */
        size_t k = 0;
        while (k + 1 < npsb && psb_at[k + 1] + 16 <= L)
            k++;
        uint64_t last_psb = psb_at[k];
        assert_int_equal(f.newest_psb, last_psb % r.size);
        assert_int_equal(f.newest_tsc, psb_tsc[k]);
        /* up to that PSB the recovered bytes are exactly the stream's */
        uint64_t head =
            n - (f.end >= f.newest_psb ? f.end - f.newest_psb : f.end + r.size - f.newest_psb);
        if (memcmp(lin, stream + last_psb - head, (size_t)head))
            fail_msg("%s: recovered bytes before the newest PSB differ", cpu);
        /* and from it every byte of the newest data is there (the end
		 * may run on into older bytes, at most one PSB period) */
        uint64_t newest = n - head, truth = L - last_psb;
        assert_true(newest >= truth);
        if (memcmp(lin + head, stream + last_psb, (size_t)truth))
            fail_msg("%s: the newest data after the last PSB differs", cpu);
        assert_true(newest <= PSB_PERIOD + 64);
        ran++;
    }
    assert_true(ran >= 4);
}

/* The first lap (no wrap), the final stop, no PSB, bad hints. */
static void test_edges(void **state)
{
    (void)state;
    struct rig r;
    rig_start(&r, "skylake-client.txt");
    make_stream(STREAM_MAX, 1);
    store(0, 30000);
    struct rtit_stop_info si;
    assert_int_equal(rtit_stop(&r.ops, &r.plan.cfg, &si), 0);
    struct rtit_recorder_found f;
    struct rtit_recorder_hint h = {
        .buffer_bytes = r.size,
        .msr_pos = -1,
        .saved_pos = si.write_pos,
        .saved_final = true,
    };
    uint64_t n = recover(&r, &h, &f);
    assert_int_equal(f.source, RTIT_RECORDER_FROM_STOP);
    assert_false(f.sum.wrapped);
    assert_int_equal(n, 30000);
    assert_tail(n, 30000, "first lap");
    /* no hint at all: the time stamps alone find the same end region */
    h.saved_pos = -1;
    h.saved_final = false;
    n = recover(&r, &h, &f);
    assert_int_equal(f.source, RTIT_RECORDER_FROM_TSC);
    assert_false(f.sum.wrapped);
    assert_int_equal(f.end, 30000); /* the zeros after it end the data */
    assert_tail(n, 30000, "first lap, no hint");
    /* nothing but zeros and noise: no PSB, -1 */
    memset(r.buf, 0, (size_t)r.size);
    for (uint64_t k = 0; k < r.size; k += 3)
        r.buf[k] = 0x80;
    assert_int_equal(rtit_recorder_find(r.buf, &h, scratch, &f), -1);
    assert_int_equal(f.source, RTIT_RECORDER_FROM_NONE);
    /* bad hints */
    struct rtit_recorder_hint z = { .buffer_bytes = 0 };
    assert_int_equal(rtit_recorder_find(r.buf, &z, scratch, &f), -1);
    assert_int_equal(rtit_recorder_find(NULL, &h, scratch, &f), -1);
    /* an MSR position beyond the buffer is not taken */
    make_stream(STREAM_MAX, 1);
    memcpy(r.buf, stream, (size_t)r.size);
    h.msr_pos = (int64_t)r.size + 4096;
    assert_int_equal(rtit_recorder_find(r.buf, &h, scratch, &f), 0);
    assert_int_not_equal(f.source, RTIT_RECORDER_FROM_MSR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_save_and_msr),
        cmocka_unit_test(test_band_overrun_tsc),
        cmocka_unit_test(test_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
