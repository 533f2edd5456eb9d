/* test/vpt/vpt_plugin.c: the recording half of the virtual Intel PT trace
 * unit. A QEMU (7.2, plugin API version 1) TCG plugin that records, inside a
 * tracing window, every executed guest instruction: its address, bytes and
 * execution mode. vpt_encode (the other half) turns the recording into the
 * packets a CPU would have written, the ground truth and the code pages.
 *
 * Why two halves: interrupts and exceptions are placed with QEMU's `-d int`
 * log, complete only when the run ends; and a recording can be encoded again
 * with other trace options (PSB period, RET compression, filters) without
 * booting again.
 *
 * Output (out=PREFIX):
 *   PREFIX.itab    one 32-byte record per distinct instruction:
 *                  u64 vaddr, u8 size, u8 mode (ptd_exec_mode),
 *                  u8 modes (bit per mode the whole block decodes in),
 *                  u8 pad[5], u8 bytes[16]
 *   PREFIX.stream  u32 index into .itab per executed instruction, in order
 *   PREFIX.meta    text: window, image base, counts
 * With `-d plugin` a line "vpt: tb N" goes to QEMU's log before the first
 * recorded instruction of an executed translation block (N = index in
 * .stream) when that block could follow an interrupt (need_mark()); the
 * `-d int` lines before such a line belong to that boundary. Consecutive
 * iterations of a rep string instruction are recorded once.
 *
 * Arguments (arg=KEY=VALUE, several allowed):
 *   out=PREFIX            output prefix (required)
 *   image=SIG:OFF:SIZE    window = from the first execution of the entry point
 *                         of an image whose entry bytes start with hex SIG,
 *                         OFF = entry RVA, SIZE = image size; the image base is
 *                         the entry address minus OFF (must be page aligned)
 *   enter=LO-HI           window starts at the first instruction executed in
 *                         [LO, HI) (hex)
 *   skip=N                window starts after N executed instructions
 *   trigger=markers       window = from the execution of the start marker
 *                         to the stop marker (both recorded): multi-byte
 *                         NOPs that code can put where it sets and clears
 *                         TraceEn, harmless on real CPUs:
 *                           start  nopl 0x2b747076(%rax)  0f 1f 80 76 70 74 2b
 *                           stop   nopl 0x2d747076(%rax)  0f 1f 80 76 70 74 2d
 *                         ("vpt+" and "vpt-"); marker-start=HEX and
 *                         marker-stop=HEX name other instructions
 *   trigger=mode64        window starts at the first instruction of a block
 *                         in 64-bit mode executed after one that was not
 *   pre=N                 keep the last N instructions before the window
 *                         opens and record them too (no log marks for them:
 *                         an interrupt among them cannot be placed)
 *   count=N               window ends after N recorded instructions
 *   keep=LO-HI            record only the instructions in [LO, HI) (hex)
 *                         inside the window: what a trace filtered to that
 *                         range holds (no log marks then); keep=image: the
 *                         range of the image= window's image
 *   (no window argument: the whole run)
 *
 * The API functions used are declared here from QEMU's documented plugin API
 * (docs/devel/tcg-plugins.rst, include/qemu/qemu-plugin.h): Debian ships no
 * qemu-plugin.h. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_ild.h"

/* ---- the plugin API (version 1), declared from its documentation ---- */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags {
    QEMU_PLUGIN_CB_NO_REGS = 0
};
typedef void (*vpt_tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vpt_vcpu_udata_cb)(unsigned int vcpu_index, void *userdata);
typedef void (*vpt_udata_cb)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, vpt_tb_trans_cb cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, vpt_udata_cb cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, vpt_vcpu_udata_cb cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_outs(const char *string);

#define VPT_EXPORT __attribute__((visibility("default")))
VPT_EXPORT int qemu_plugin_version = 1;
VPT_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc, char **argv);

/* ---- distinct instructions ---- */
struct vpt_itab_rec {
    uint64_t vaddr;
    uint8_t size;
    uint8_t mode;
    uint8_t modes;
    uint8_t pad[5];
    uint8_t bytes[16];
};

static struct vpt_itab_rec *itab;
static uint32_t itab_n, itab_cap;
/* what the plugin itself needs of each instruction (not written out): where
 * the flow goes next when no interrupt intervenes */
struct vpt_flow {
    uint64_t end, target;
    uint8_t iclass;
    uint8_t rep_string;
    uint8_t marker; /* MARK_START, MARK_STOP or 0 */
};
enum {
    MARK_START = 1,
    MARK_STOP = 2
};
static uint8_t mark_start[16] = { 0x0f, 0x1f, 0x80, 0x76, 0x70, 0x74, 0x2b };
static uint8_t mark_stop[16] = { 0x0f, 0x1f, 0x80, 0x76, 0x70, 0x74, 0x2d };
static unsigned mark_start_len = 7, mark_stop_len = 7;
static struct vpt_flow *flow;
/* open-addressing hash (vaddr, bytes) -> index + 1 */
static uint32_t *hash;
static uint32_t hash_cap;

static uint64_t rec_hash(const struct vpt_itab_rec *r)
{
    uint64_t h = r->vaddr * 0x9e3779b97f4a7c15ull;
    for (unsigned i = 0; i < r->size; i++)
        h = (h ^ r->bytes[i]) * 0x100000001b3ull;
    return h ^ r->mode;
}

static bool rec_eq(const struct vpt_itab_rec *a, const struct vpt_itab_rec *b)
{
    return a->vaddr == b->vaddr && a->size == b->size && a->mode == b->mode &&
           !memcmp(a->bytes, b->bytes, a->size);
}

static void hash_grow(void)
{
    uint32_t ncap = hash_cap ? hash_cap * 2 : 1u << 16;
    uint32_t *nh = calloc(ncap, sizeof *nh);
    if (!nh)
        abort();
    for (uint32_t i = 0; i < itab_n; i++) {
        uint64_t k = rec_hash(&itab[i]) & (ncap - 1);
        while (nh[k])
            k = (k + 1) & (ncap - 1);
        nh[k] = i + 1;
    }
    free(hash);
    hash = nh;
    hash_cap = ncap;
}

static uint32_t itab_intern(const struct vpt_itab_rec *r, const struct vpt_flow *fl)
{
    if ((itab_n + 1) * 2 > hash_cap)
        hash_grow();
    uint64_t k = rec_hash(r) & (hash_cap - 1);
    while (hash[k]) {
        if (rec_eq(&itab[hash[k] - 1], r))
            return hash[k] - 1;
        k = (k + 1) & (hash_cap - 1);
    }
    if (itab_n == itab_cap) {
        itab_cap = itab_cap ? itab_cap * 2 : 1u << 14;
        itab = realloc(itab, (size_t)itab_cap * sizeof *itab);
        flow = realloc(flow, (size_t)itab_cap * sizeof *flow);
        if (!itab || !flow)
            abort();
    }
    itab[itab_n] = *r;
    flow[itab_n] = *fl;
    hash[k] = itab_n + 1;
    return itab_n++;
}

/* ---- window ---- */
enum {
    WIN_ALL,
    WIN_IMAGE,
    WIN_ENTER,
    WIN_SKIP,
    WIN_MODE64,
    WIN_MARKERS
};
static int win_kind = WIN_ALL;
static uint8_t img_sig[64];
static unsigned img_sig_len;
static uint64_t img_off, img_size, img_base;
static uint64_t enter_lo, enter_hi;
static uint64_t skip_n, count_n = UINT64_MAX;
static const char *out_prefix;

static bool recording, done;
static uint64_t executed; /* all instructions seen by callbacks */
static uint32_t *stream;
static uint64_t stream_n, stream_cap;
static uint64_t phantoms; /* translated but not an instruction */
/* the CPU starts in real mode */
static int cur_mode = PTD_EXEC_MODE_16;
static int last_exec_mode = PTD_EXEC_MODE_16;
static uint32_t *pre_ring;
static uint64_t pre_n, pre_count;
static bool log_marks = true;
static uint64_t keep_lo, keep_hi; /* keep=: only these are recorded */
static bool keep_image;           /* keep=image: the image window's range */

static void stream_push(uint32_t id)
{
    if (stream_n == stream_cap) {
        stream_cap = stream_cap ? stream_cap * 2 : 1u << 20;
        stream = realloc(stream, stream_cap * sizeof *stream);
        if (!stream)
            abort();
    }
    stream[stream_n++] = id;
}

static uint64_t rep_iterations, marks;
static bool force_mark;

/* QEMU takes interrupts only between blocks. A block whose first
 * instruction is where the previous one leads without an interrupt (its
 * fall-through, its direct target) cannot follow an interrupt; any other
 * block start gets a mark, so every `-d int` line is followed by the mark of
 * the handler's first block (or of the block after an indirect branch). */
static bool need_mark(uint64_t ip)
{
    if (!stream_n)
        return true;
    const struct vpt_flow *p = &flow[stream[stream_n - 1]];
    switch (p->iclass) {
    case PTD_ICLASS_OTHER: return ip != p->end;
    case PTD_ICLASS_COND_JUMP: return ip != p->end && ip != p->target;
    case PTD_ICLASS_DIRECT_JUMP:
    case PTD_ICLASS_DIRECT_CALL: return ip != p->target;
    default: return true;
    }
}

/* userdata: index << 1 | first-of-block */
static void insn_exec(unsigned int vcpu, void *ud)
{
    (void)vcpu;
    uintptr_t u = (uintptr_t)ud;
    uint32_t id = (uint32_t)(u >> 1);
    executed++;
    if (done)
        return;
    if (!recording) {
        const struct vpt_itab_rec *r = &itab[id];
        int prev_mode = last_exec_mode;
        last_exec_mode = r->mode;
        switch (win_kind) {
        case WIN_MARKERS:
            if (flow[id].marker == MARK_START)
                recording = true;
            break;
        case WIN_MODE64:
            if (r->mode == PTD_EXEC_MODE_64 && prev_mode != PTD_EXEC_MODE_64)
                recording = true;
            break;
        case WIN_ALL: recording = true; break;
        case WIN_SKIP:
            if (executed > skip_n)
                recording = true;
            break;
        case WIN_ENTER:
            if (r->vaddr >= enter_lo && r->vaddr < enter_hi)
                recording = true;
            break;
        case WIN_IMAGE:
            if (img_base && r->vaddr == img_base + img_off) {
                recording = true;
                if (keep_image) {
                    keep_lo = img_base;
                    keep_hi = img_base + img_size;
                }
            }
            break;
        }
        if (!recording) {
            if (pre_n)
                pre_ring[pre_count++ % pre_n] = id;
            return;
        }
        if (pre_n) {
            uint64_t k = pre_count > pre_n ? pre_count - pre_n : 0;
            for (; k < pre_count; k++)
                stream_push(pre_ring[k % pre_n]);
        }
        force_mark = true; /* the window opens here: a boundary for the log */
    }
    if (keep_hi && (itab[id].vaddr < keep_lo || itab[id].vaddr >= keep_hi))
        return; /* outside the kept range */
    if (stream_n && id == stream[stream_n - 1] && flow[id].rep_string) {
        rep_iterations++; /* one instruction for PT */
        return;
    }
    if (log_marks && (force_mark || ((u & 1) && need_mark(itab[id].vaddr)))) {
        force_mark = false;
        char line[48];
        snprintf(line, sizeof line, "vpt: tb %llu\n", (unsigned long long)stream_n);
        qemu_plugin_outs(line);
        marks++;
    }
    stream_push(id);
    if (stream_n >= count_n || (win_kind == WIN_MARKERS && flow[id].marker == MARK_STOP)) {
        recording = false;
        done = true;
    }
}

/* Execution mode of a block: the modes in which our ILD gives every
 * instruction the length QEMU translated it with. REX prefixes, operand and
 * address sizes make most blocks of real code decide; a block that fits
 * several modes keeps the mode of the block translated before it (mode
 * switches are rare and happen at far transfers). */
static int block_mode(const struct qemu_plugin_tb *tb, size_t n, uint8_t *modes)
{
    unsigned ok = 7; /* bit per ptd_exec_mode */
    for (size_t i = 0; i < n && ok; i++) {
        const struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(tb, i);
        size_t sz = qemu_plugin_insn_size(qi);
        const uint8_t *b = qemu_plugin_insn_data(qi);
        for (int m = 0; m < 3; m++) {
            if (!(ok >> m & 1))
                continue;
            struct ptd_insn in;
            int len =
                ptd_ild_decode_at(&in, b, sz, (enum ptd_exec_mode)m, qemu_plugin_insn_vaddr(qi));
            /* the last instruction of a block may be a truncated phantom */
            if (len == -PTD_ILD_ERR_TRUNCATED && i == n - 1 && i > 0)
                continue;
            if (len != (int)sz)
                ok &= ~(1u << m);
        }
    }
    *modes = (uint8_t)ok;
    if (!ok || (ok >> cur_mode & 1))
        return cur_mode;
    /* a switch: 16 -> 32 -> 64 is the way firmware goes */
    cur_mode = (ok & 2) ? 1 : (ok & 4) ? 2 : 0;
    return cur_mode;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    if (done)
        return;
    size_t n = qemu_plugin_tb_n_insns(tb);
    if (!n)
        return;
    uint8_t modes;
    int mode = block_mode(tb, n, &modes);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(tb, i);
        struct vpt_itab_rec r;
        memset(&r, 0, sizeof r);
        r.vaddr = qemu_plugin_insn_vaddr(qi);
        size_t sz = qemu_plugin_insn_size(qi);
        if (sz > 16)
            sz = 16;
        r.size = (uint8_t)sz;
        r.mode = (uint8_t)mode;
        r.modes = modes;
        memcpy(r.bytes, qemu_plugin_insn_data(qi), sz);
        struct ptd_insn in;
        int len = ptd_ild_decode_at(&in, r.bytes, sz, (enum ptd_exec_mode)mode, r.vaddr);
        if (len != (int)sz) {
            /* a page-crossing instruction shown truncated: it never executes
             * in this block (QEMU translates it again in the next one) */
            phantoms++;
            continue;
        }
        if (win_kind == WIN_IMAGE && !img_base && i == 0 && sz) {
            /* the entry point starts a block: compare its first bytes */
            uint8_t buf[64];
            unsigned have = 0;
            for (size_t j = 0; j < n && have < img_sig_len; j++) {
                const struct qemu_plugin_insn *q = qemu_plugin_tb_get_insn(tb, j);
                size_t s = qemu_plugin_insn_size(q);
                const uint8_t *d = qemu_plugin_insn_data(q);
                for (size_t k = 0; k < s && have < img_sig_len; k++)
                    buf[have++] = d[k];
            }
            if (have == img_sig_len && !memcmp(buf, img_sig, have) && r.vaddr >= img_off &&
                ((r.vaddr - img_off) & 0xfff) == 0) {
                img_base = r.vaddr - img_off;
                char line[96];
                snprintf(line, sizeof line, "vpt: image base 0x%llx\n",
                         (unsigned long long)img_base);
                qemu_plugin_outs(line);
            }
        }
        struct vpt_flow fl;
        fl.end = r.vaddr + sz;
        fl.target = in.target;
        if (mode != PTD_EXEC_MODE_64)
            fl.end &= 0xffffffffu;
        /* IPs are linear: a 16-bit branch stays in its 64 KiB segment */
        if ((in.flags & PTD_INSN_REL) && in.opsize == 16)
            fl.target = (r.vaddr & ~0xffffull) | (in.target & 0xffff);
        fl.iclass = in.iclass;
        fl.rep_string =
            (in.flags & PTD_INSN_REP) && in.map == PTD_ILD_MAP_PRIMARY &&
            ((in.opcode >= 0x6c && in.opcode <= 0x6f) || (in.opcode >= 0xa4 && in.opcode <= 0xa7) ||
             (in.opcode >= 0xaa && in.opcode <= 0xaf));
        fl.marker = sz == mark_start_len && !memcmp(r.bytes, mark_start, sz) ? MARK_START
                    : sz == mark_stop_len && !memcmp(r.bytes, mark_stop, sz) ? MARK_STOP
                                                                             : 0;
        uint32_t idx = itab_intern(&r, &fl);
        qemu_plugin_register_vcpu_insn_exec_cb(qi, insn_exec, QEMU_PLUGIN_CB_NO_REGS,
                                               (void *)((uintptr_t)idx << 1 | (i == 0)));
    }
}

static void write_all(const char *suffix, const void *data, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s", out_prefix, suffix);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f)) {
        fprintf(stderr, "vpt: cannot write %s\n", path);
        return;
    }
}

static void at_exit(qemu_plugin_id_t id, void *ud)
{
    (void)id;
    (void)ud;
    write_all(".itab", itab, (size_t)itab_n * sizeof *itab);
    write_all(".stream", stream, (size_t)stream_n * sizeof *stream);
    char path[4096];
    snprintf(path, sizeof path, "%s.meta", out_prefix);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f,
                "executed %llu\nrecorded %llu\nrep_iterations %llu\nmarks %llu\n"
                "distinct %u\nphantoms %llu\n",
                (unsigned long long)executed, (unsigned long long)stream_n,
                (unsigned long long)rep_iterations, (unsigned long long)marks, itab_n,
                (unsigned long long)phantoms);
        if (win_kind == WIN_IMAGE)
            fprintf(f, "image_base 0x%llx\nimage_size 0x%llx\n", (unsigned long long)img_base,
                    (unsigned long long)img_size);
        fclose(f);
    }
}

static int parse_hex_sig(const char *s, const char *end)
{
    img_sig_len = 0;
    while (s < end) {
        int hi = hexval(s[0]), lo = s + 1 < end ? hexval(s[1]) : -1;
        if (hi < 0 || lo < 0 || img_sig_len >= sizeof img_sig)
            return -1;
        img_sig[img_sig_len++] = (uint8_t)(hi << 4 | lo);
        s += 2;
    }
    return img_sig_len ? 0 : -1;
}

VPT_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strncmp(a, "out=", 4)) {
            out_prefix = a + 4;
        } else if (!strncmp(a, "image=", 6)) {
            const char *c1 = strchr(a + 6, ':');
            const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            if (!c2 || parse_hex_sig(a + 6, c1) < 0)
                goto bad;
            img_off = strtoull(c1 + 1, NULL, 0);
            img_size = strtoull(c2 + 1, NULL, 0);
            win_kind = WIN_IMAGE;
        } else if (!strncmp(a, "enter=", 6)) {
            char *e;
            enter_lo = strtoull(a + 6, &e, 16);
            if (*e != '-')
                goto bad;
            enter_hi = strtoull(e + 1, NULL, 16);
            win_kind = WIN_ENTER;
        } else if (!strncmp(a, "skip=", 5)) {
            skip_n = strtoull(a + 5, NULL, 0);
            win_kind = WIN_SKIP;
        } else if (!strcmp(a, "trigger=markers")) {
            win_kind = WIN_MARKERS;
        } else if (!strncmp(a, "marker-start=", 13) || !strncmp(a, "marker-stop=", 12)) {
            bool start = !strncmp(a, "marker-start=", 13);
            const char *h = strchr(a, '=') + 1;
            uint8_t *dst = start ? mark_start : mark_stop;
            unsigned n = 0;
            for (; h[0] && h[1] && n < 16; h += 2) {
                int hi = hexval(h[0]), lo = hexval(h[1]);
                if (hi < 0 || lo < 0)
                    goto bad;
                dst[n++] = (uint8_t)(hi << 4 | lo);
            }
            if (!n || *h)
                goto bad;
            if (start)
                mark_start_len = n;
            else
                mark_stop_len = n;
        } else if (!strcmp(a, "trigger=mode64")) {
            win_kind = WIN_MODE64;
        } else if (!strncmp(a, "pre=", 4)) {
            pre_n = strtoull(a + 4, NULL, 0);
            pre_ring = calloc(pre_n ? pre_n : 1, sizeof *pre_ring);
        } else if (!strncmp(a, "count=", 6)) {
            count_n = strtoull(a + 6, NULL, 0);
        } else if (!strcmp(a, "keep=image")) {
            keep_image = true;
            log_marks = false;
        } else if (!strncmp(a, "keep=", 5)) {
            char *e;
            keep_lo = strtoull(a + 5, &e, 16);
            if (*e != '-')
                goto bad;
            keep_hi = strtoull(e + 1, NULL, 16);
            log_marks = false;
        } else if (!strcmp(a, "marks=0")) {
            log_marks = false;
        } else {
            goto bad;
        }
        continue;
    bad:
        fprintf(stderr, "vpt: bad argument '%s'\n", a);
        return -1;
    }
    if (!out_prefix) {
        fprintf(stderr, "vpt: out=PREFIX is required\n");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
