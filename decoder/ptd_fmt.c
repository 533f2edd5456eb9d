/* libptd text formatting in libipt ptdump's line format.
 *
 * A line is assembled from columns the way ptdump's print_buffer() lays them
 * out: offset "%-17s" (16 hex digits), raw bytes "%-33s", opcode "%-10s"
 * (unpadded when there is no payload), payload, and with a tracking column
 * " %-25s %-5s<tracking>". ptdump builds each column with a bounded
 * snprintf, so column contents are cut at the column size; so are ours. */
#include "decoder/ptd_fmt.h"

/* Column sizes, NUL included, as in ptdump. */
enum {
    COL_OFFSET = 17,
    COL_RAW = 33,
    COL_OPCODE = 10,
    COL_PAYLOAD = 25,
    COL_PAYLOAD_EXT = 48,
    COL_TRACK_ID = 5,
    COL_TRACK = 17,
};

/* A bounded string builder. */
struct sb {
    char *s;
    size_t cap; /* bytes available, NUL included */
    size_t n;
    int full;
};

static void sb_init(struct sb *b, char *s, size_t cap)
{
    b->s = s;
    b->cap = cap;
    b->n = 0;
    b->full = 0;
    if (cap)
        s[0] = 0;
}

static void sb_c(struct sb *b, char c)
{
    if (b->n + 1 >= b->cap) {
        b->full = 1;
        return;
    }
    b->s[b->n++] = c;
    b->s[b->n] = 0;
}

static void sb_s(struct sb *b, const char *s)
{
    while (*s)
        sb_c(b, *s++);
}

static void sb_hex(struct sb *b, uint64_t v, unsigned width)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[16];
    unsigned n = 0;

    do {
        tmp[n++] = digits[v & 0xf];
        v >>= 4;
    } while (v && n < sizeof tmp);
    while (width > n && width-- > 0)
        sb_c(b, '0');
    while (n)
        sb_c(b, tmp[--n]);
}

static void sb_dec(struct sb *b, uint64_t v)
{
    char tmp[20];
    unsigned n = 0;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < sizeof tmp);
    while (n)
        sb_c(b, tmp[--n]);
}

/* Pad with spaces to `width` characters (printf's "%-*s"). */
static void sb_s_pad(struct sb *b, const char *s, size_t width)
{
    size_t start = b->n;
    sb_s(b, s);
    while (b->n - start < width && !b->full)
        sb_c(b, ' ');
}

void ptd_fmt_state_init(struct ptd_fmt_state *st)
{
    ptd_fmt_state_setup(st, 0);
}

void ptd_fmt_state_setup(struct ptd_fmt_state *st, const struct ptd_fmt_options *opt)
{
    struct ptd_time_config cfg = { 0 };

    if (opt) {
        cfg = opt->time;
        cfg.flags &= ~(uint32_t)(PTD_TIME_NO_TCAL | PTD_TIME_KEEP_TCAL_ON_OVF);
        if (opt->flags & PTD_FMT_NO_TCAL)
            cfg.flags |= PTD_TIME_NO_TCAL;
        if (opt->flags & PTD_FMT_KEEP_TCAL_ON_OVF)
            cfg.flags |= PTD_TIME_KEEP_TCAL_ON_OVF;
    }
    ptd_last_ip_init(&st->last_ip);
    ptd_time_init(&st->time, &cfg);
    st->shown_tsc = 0;
    st->shown_fcr = 0;
}

/* ---- diagnostics ---------------------------------------------------------- */

/* ptdump prints diagnostics as it goes, before the packet's line; we collect
 * them, one line each, separated by '\n'. */
struct diags {
    struct sb b;
    uint64_t offset;
    int overflow;
};

static void diag_add(struct diags *d, const char *what, int err)
{
    char line[PTD_FMT_LINE_MAX];
    int n;

    if (!d->b.cap)
        return;
    n = ptd_fmt_error(line, sizeof line, d->offset, what, err);
    if (n < 0 || d->b.n + (size_t)n + 2 > d->b.cap) {
        d->overflow = 1;
        return;
    }
    if (d->b.n)
        sb_c(&d->b, '\n');
    sb_s(&d->b, line);
}

/* ---- time columns (ptdump's --time, --tcal) -------------------------------- */

/* A 64-bit integer as a double holds it: rounded to 53 significant bits,
 * ties to even (ptdump converts the calibration to double to print it). */
static uint64_t as_double(uint64_t v)
{
    unsigned bits = 64, shift;
    uint64_t q, rem, half;

    if (v < (1ull << 53))
        return v;
    while (!(v >> (bits - 1)))
        bits--;
    shift = bits - 53;
    q = v >> shift;
    rem = v & ((1ull << shift) - 1);
    half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    if (q >> 53 && shift == 11)
        return UINT64_MAX; /* 2^64 does not fit; never a real calibration */
    return q << shift;
}

/* printf("%.3f", v / 256.0) for v < 2^64 already rounded as a double: the
 * value is exact, so the three decimals round half to even, as glibc does. */
static void sb_fcr(struct sb *b, uint64_t v)
{
    uint64_t ip = v >> PTD_TIME_FCR_SHIFT;
    unsigned frac = (unsigned)(v & ((1u << PTD_TIME_FCR_SHIFT) - 1));
    unsigned t = frac * 1000u, q = t >> PTD_TIME_FCR_SHIFT;
    unsigned r = t & ((1u << PTD_TIME_FCR_SHIFT) - 1), half = 1u << (PTD_TIME_FCR_SHIFT - 1);

    if (r > half || (r == half && (q & 1)))
        q++;
    if (q == 1000) {
        ip++;
        q = 0;
    }
    sb_dec(b, ip);
    sb_c(b, '.');
    sb_c(b, (char)('0' + q / 100));
    sb_c(b, (char)('0' + q / 10 % 10));
    sb_c(b, (char)('0' + q % 10));
}

/* Empty a column (ptdump overwrites a field it prints again). */
static void sb_clear(struct sb *b)
{
    b->n = 0;
    b->full = 0;
    if (b->cap)
        b->s[0] = 0;
}

/* ptdump's print_tcal(): "fcr" and the calibration (or its change). */
static void show_tcal(struct sb *tid, struct sb *tr, uint32_t f, struct ptd_fmt_state *st,
                      struct diags *dg)
{
    uint64_t fcr = 0; /* set when r is 0 (the optimizer cannot see it across files) */
    int r = ptd_time_fcr(&st->time, &fcr);

    sb_clear(tid);
    sb_clear(tr);
    sb_s(tid, "fcr");
    if (r < 0) {
        sb_s(tr, "<unavailable>");
        diag_add(dg, "error printing time", r);
        return;
    }
    if (f & PTD_FMT_TIME_DELTA) {
        uint64_t now = as_double(fcr), before = as_double(st->shown_fcr);
        if (st->shown_fcr <= fcr) {
            sb_c(tr, '+');
            sb_fcr(tr, as_double(now - before));
        } else {
            sb_c(tr, '-');
            sb_fcr(tr, as_double(before - now));
        }
        st->shown_fcr = fcr;
    } else {
        sb_fcr(tr, as_double(fcr));
    }
}

/* ptdump's print_time(): "tsc" and the estimate (or its change). */
static void show_time(struct sb *tid, struct sb *tr, uint32_t f, struct ptd_fmt_state *st,
                      struct diags *dg)
{
    uint64_t tsc;
    int r = ptd_time_now(&st->time, &tsc, 0, 0);

    sb_clear(tid);
    sb_clear(tr);
    sb_s(tid, "tsc");
    if (r < 0 && !(r == -PTD_ERR_NO_TIME && (f & PTD_FMT_NO_WALL_CLOCK))) {
        diag_add(dg, "error printing time", r);
        sb_s(tr, "<unavailable>");
        return;
    }
    if (f & PTD_FMT_TIME_DELTA) {
        if (st->shown_tsc <= tsc) {
            sb_c(tr, '+');
            sb_hex(tr, tsc - st->shown_tsc, 0);
        } else {
            sb_c(tr, '-');
            sb_hex(tr, st->shown_tsc - tsc, 0);
        }
        st->shown_tsc = tsc;
    } else {
        sb_hex(tr, tsc, 16);
    }
}

/* Time tracking for one packet, as ptdump's track_*() functions do it. */
static void track_time(struct sb *tid, struct sb *tr, uint32_t f, struct ptd_fmt_state *st,
                       const struct ptd_pkt *p, struct diags *dg)
{
    struct ptd_time *t = &st->time;
    int want_tcal = 1, want_tsc = 1, cal = 0, r = 0;

    switch (p->kind) {
    case PTD_PKT_PSB:
        cal = ptd_time_psb(t);
        if (cal < 0)
            diag_add(dg, "error calibrating time", cal);
        return;
    case PTD_PKT_PSBEND: ptd_time_psbend(t); return;
    case PTD_PKT_OVF: ptd_time_ovf(t); return;
    case PTD_PKT_TSC: r = ptd_time_tsc(t, p->payload, &cal); break;
    case PTD_PKT_CBR:
        r = ptd_time_cbr_update(t, (uint8_t)p->payload, &cal);
        want_tsc = 0; /* the time does not change here */
        break;
    case PTD_PKT_TMA:
        r = ptd_time_tma(t, (uint32_t)p->payload, p->aux, &cal);
        want_tcal = 0; /* nor the calibration here */
        break;
    case PTD_PKT_MTC: r = ptd_time_mtc(t, (uint8_t)p->payload, &cal); break;
    case PTD_PKT_CYC: {
        uint64_t fcr;
        bool used;
        if (f & PTD_FMT_NO_CYC)
            return; /* ptdump ignores CYCs then */
        if (!(f & PTD_FMT_NO_TCAL)) {
            int e = ptd_time_fcr(t, &fcr);
            if (e < 0)
                diag_add(dg, "calibration error", e);
        }
        r = ptd_time_cyc(t, p->payload, &cal, &used);
        if (cal < 0)
            diag_add(dg, "error calibrating time", cal);
        if (r < 0)
            diag_add(dg, "error updating time", r);
        else if (!used)
            diag_add(dg, "error updating time: no calibration", 0);
        cal = r = 0;
        want_tcal = 0;
        break;
    }
    default: return;
    }
    if (cal < 0)
        diag_add(dg, "error calibrating time", cal);
    if (r < 0)
        diag_add(dg, "error updating time", r);
    if ((f & PTD_FMT_TCAL) && want_tcal)
        show_tcal(tid, tr, f, st, dg);
    if ((f & PTD_FMT_TIME) && want_tsc)
        show_time(tid, tr, f, st, dg);
}

/* The columns of one line. */
struct cols {
    char opcode[COL_OPCODE];
    char payload[COL_PAYLOAD_EXT];
    char track_id[COL_TRACK_ID];
    char track[COL_TRACK];
};

static void put_ip_payload(struct sb *b, const struct ptd_pkt *p)
{
    sb_hex(b, p->a, 1);
    sb_s(b, ": ");
    switch (p->a) {
    case PTD_IPC_SUPPRESSED: sb_s(b, "????????????????"); break;
    case PTD_IPC_UPDATE_16:
        sb_s(b, "????????????");
        sb_hex(b, p->payload, 4);
        break;
    case PTD_IPC_UPDATE_32:
        sb_s(b, "????????");
        sb_hex(b, p->payload, 8);
        break;
    case PTD_IPC_UPDATE_48:
        sb_s(b, "????");
        sb_hex(b, p->payload, 12);
        break;
    case PTD_IPC_SEXT_48: sb_hex(b, ptd_sext48(p->payload), 16); break;
    default: sb_hex(b, p->payload, 16); break;
    }
}

static const char *cfe_type_name(unsigned t)
{
    switch (t) {
    case PTD_CFE_INTR: return "intr";
    case PTD_CFE_IRET: return "iret";
    case PTD_CFE_SMI: return "smi";
    case PTD_CFE_RSM: return "rsm";
    case PTD_CFE_SIPI: return "sipi";
    case PTD_CFE_INIT: return "init";
    case PTD_CFE_VMENTRY: return "vmentry";
    case PTD_CFE_VMEXIT: return "vmexit";
    case PTD_CFE_VMEXIT_INTR: return "vmexit_intr";
    case PTD_CFE_SHUTDOWN: return "shutdown";
    case PTD_CFE_UINTR: return "uintr";
    case PTD_CFE_UIRET: return "uiret";
    case PTD_CFE_SWINTR: return "swintr";
    case PTD_CFE_SYSCALL: return "syscall";
    default: return "unknown";
    }
}

static const char *evd_type_name(unsigned t)
{
    switch (t) {
    case PTD_EVD_CR2: return "cr2";
    case PTD_EVD_VMXQ: return "vmxq";
    case PTD_EVD_VMXR: return "vmxr";
    default: return "unknown";
    }
}

/* The builders of one line's columns while a packet is formatted: pl the
 * standard payload column (cut at ptdump's 25), ext the extended one (TNT,
 * TRIG: 48), tid/tr the tracking columns. */
struct fmt_cols {
    struct sb op, pl, ext, tid, tr;
    uint32_t flags; /* PTD_FMT_* */
};

/* "a, b" from the names whose conditions hold, as ptdump joins them. */
static void put_list(struct sb *b, const char *const *names, const int *on, unsigned n)
{
    int first = 1;
    for (unsigned i = 0; i < n; i++) {
        if (!on[i])
            continue;
        if (!first)
            sb_s(b, ", ");
        sb_s(b, names[i]);
        first = 0;
    }
}

static void fmt_tnt(struct fmt_cols *c, const struct ptd_pkt *p)
{
    /* oldest bit first */
    for (unsigned i = p->a; i > 0; i--)
        sb_c(&c->ext, (p->payload >> (i - 1)) & 1 ? '!' : '.');
}

static void fmt_ip(struct fmt_cols *c, struct ptd_fmt_state *st, const struct ptd_pkt *p,
                   struct diags *dg)
{
    put_ip_payload(&c->pl, p);
    if (c->flags & PTD_FMT_LASTIP) {
        uint64_t ip = 0;
        int r;
        sb_s(&c->tid, "ip");
        ptd_last_ip_update(&st->last_ip, p->a, p->payload);
        r = ptd_last_ip_query(&st->last_ip, &ip);
        if (r == 0)
            sb_hex(&c->tr, ip, 16);
        else if (r == -PTD_ERR_IP_SUPPRESSED)
            sb_s(&c->tr, "<suppressed>");
        else {
            sb_s(&c->tr, "<unavailable>");
            diag_add(dg, "error tracking last-ip", r);
        }
    }
}

/* MODE.Exec: "cs.d", "cs.l" and (since libipt 2.1) "if" for RFLAGS.IF. */
static void fmt_mode_exec(struct fmt_cols *c, const struct ptd_pkt *p)
{
    static const char *const names[] = { "cs.d", "cs.l", "if" };
    int csl = p->flags & PTD_PKTF_CSL, csd = p->flags & PTD_PKTF_CSD;
    const int on[] = { csd, csl, (p->flags & PTD_PKTF_IF) && !(c->flags & PTD_FMT_LIBIPT20) };
    put_list(&c->pl, names, on, 3);
    if (c->flags & PTD_FMT_EXEC_MODE) {
        sb_s(&c->tid, "em");
        sb_s(&c->tr, csl ? (csd ? "unknown" : "64-bit") : (csd ? "32-bit" : "16-bit"));
    }
}

static void fmt_mode_tsx(struct fmt_cols *c, const struct ptd_pkt *p)
{
    static const char *const names[] = { "intx", "abrt" };
    const int on[] = { p->flags & PTD_PKTF_INTX, p->flags & PTD_PKTF_ABRT };
    put_list(&c->pl, names, on, 2);
}

/* PIP and VMCS: the value, and it again as the tracked CR3/VMCS base. */
static void fmt_tracked(struct fmt_cols *c, const struct ptd_pkt *p, const char *what)
{
    sb_hex(&c->pl, p->payload, 0);
    if (p->kind == PTD_PKT_PIP && (p->flags & PTD_PKTF_NR))
        sb_s(&c->pl, ", nr");
    sb_s(&c->tid, what);
    sb_hex(&c->tr, p->payload, 16);
}

static void fmt_pwre(struct fmt_cols *c, const struct ptd_pkt *p)
{
    sb_c(&c->pl, 'c');
    sb_dec(&c->pl, (p->a + 1u) & 0xf);
    sb_c(&c->pl, '.');
    sb_dec(&c->pl, (p->aux + 1u) & 0xf);
    if (p->flags & PTD_PKTF_HW)
        sb_s(&c->pl, ", hw");
}

static void fmt_pwrx(struct fmt_cols *c, const struct ptd_pkt *p)
{
    /* ptdump names exactly one wake reason, else "bad" */
    unsigned wr = p->flags & (PTD_PKTF_WR_INT | PTD_PKTF_WR_STORE | PTD_PKTF_WR_HW);
    sb_s(&c->pl, wr == PTD_PKTF_WR_INT     ? "int"
                 : wr == PTD_PKTF_WR_STORE ? " st"
                 : wr == PTD_PKTF_WR_HW    ? " hw"
                                           : "bad");
    sb_s(&c->pl, ": c");
    sb_dec(&c->pl, (p->a + 1u) & 0xf);
    sb_s(&c->pl, ", c");
    sb_dec(&c->pl, (p->aux + 1u) & 0xf);
}

/* CFE: the type, and the vector for the types that have one (decimal; a
 * SIPI's in hex, as ptdump prints it). */
static void fmt_cfe(struct fmt_cols *c, const struct ptd_pkt *p)
{
    sb_dec(&c->pl, p->a);
    switch (p->a) {
    case PTD_CFE_INTR:
    case PTD_CFE_VMEXIT_INTR:
    case PTD_CFE_UINTR:
    case PTD_CFE_SWINTR:
        sb_s(&c->pl, ": ");
        sb_dec(&c->pl, p->aux);
        break;
    case PTD_CFE_SIPI:
        sb_s(&c->pl, ": ");
        sb_hex(&c->pl, p->aux, 0);
        break;
    default: break;
    }
    if (p->flags & PTD_PKTF_IP)
        sb_s(&c->pl, ", ip");
    sb_s(&c->tid, "type");
    sb_s(&c->tr, cfe_type_name(p->a));
}

static void fmt_evd(struct fmt_cols *c, const struct ptd_pkt *p)
{
    sb_dec(&c->pl, p->a);
    sb_s(&c->pl, ": ");
    sb_hex(&c->pl, p->payload, 0);
    sb_s(&c->tid, "type");
    sb_s(&c->tr, evd_type_name(p->a));
}

/* TRIG: "<trbv>[, ip][, mult][, icnt: <n>]" (ICNT in decimal, only when
 * valid), in the extended payload column. */
static void fmt_trig(struct fmt_cols *c, const struct ptd_pkt *p)
{
    sb_hex(&c->ext, p->a, 2);
    if (p->flags & PTD_PKTF_IP)
        sb_s(&c->ext, ", ip");
    if (p->flags & PTD_PKTF_MULT)
        sb_s(&c->ext, ", mult");
    if (p->flags & PTD_PKTF_ICNTV) {
        sb_s(&c->ext, ", icnt: ");
        sb_dec(&c->ext, p->aux);
    }
}

/* The payload of the packets that need no helper; 0 if the packet is not
 * shown under the options. */
static int fmt_simple(struct fmt_cols *c, const struct ptd_pkt *p)
{
    uint32_t f = c->flags;
    switch (p->kind) {
    case PTD_PKT_PAD: return !(f & PTD_FMT_NO_PAD);
    case PTD_PKT_TSC:
    case PTD_PKT_CBR:
    case PTD_PKT_MTC:
    case PTD_PKT_CYC:
        sb_hex(&c->pl, p->payload, 0);
        return !(f & PTD_FMT_NO_TIMING) && !(p->kind == PTD_PKT_CYC && (f & PTD_FMT_NO_CYC));
    case PTD_PKT_TMA:
        sb_hex(&c->pl, p->payload, 0);
        sb_s(&c->pl, ", ");
        sb_hex(&c->pl, p->aux, 0);
        return !(f & PTD_FMT_NO_TIMING);
    case PTD_PKT_MNT: sb_hex(&c->pl, p->payload, 0); return 1;
    case PTD_PKT_EXSTOP:
    case PTD_PKT_BEP:
        if (p->flags & PTD_PKTF_IP)
            sb_s(&c->pl, "ip");
        return 1;
    case PTD_PKT_MWAIT:
        sb_hex(&c->pl, p->payload, 8);
        sb_s(&c->pl, ", ");
        sb_hex(&c->pl, p->aux, 8);
        return 1;
    case PTD_PKT_PTW:
        sb_hex(&c->pl, p->a, 0);
        sb_s(&c->pl, ": ");
        sb_hex(&c->pl, p->payload, 0);
        if (p->flags & PTD_PKTF_IP)
            sb_s(&c->pl, ", ip");
        return 1;
    case PTD_PKT_BBP:
        sb_s(&c->pl, "type ");
        sb_hex(&c->pl, p->a, 0);
        sb_s(&c->pl, (p->flags & PTD_PKTF_SZ4) ? ", sz 4" : ", sz 8");
        return 1;
    case PTD_PKT_BIP:
        sb_hex(&c->pl, p->a, 0);
        sb_s(&c->pl, ": ");
        sb_hex(&c->pl, p->payload, 0);
        return 1;
    default: return 1;
    }
}

/* Fill the columns for one packet; returns 1 if the packet is shown, 0 if
 * an option hides it. Diagnostics to print before it go to dg. */
static int fill_cols(struct cols *cl, const struct ptd_fmt_options *opt, struct ptd_fmt_state *st,
                     const struct ptd_pkt *p, struct diags *dg)
{
    struct fmt_cols c;
    int show = 1;

    sb_init(&c.op, cl->opcode, sizeof cl->opcode);
    sb_init(&c.pl, cl->payload, COL_PAYLOAD);
    /* the extended column shares the payload buffer, its whole size */
    sb_init(&c.ext, cl->payload, sizeof cl->payload);
    sb_init(&c.tid, cl->track_id, sizeof cl->track_id);
    sb_init(&c.tr, cl->track, sizeof cl->track);
    c.flags = opt->flags;

    if (p->kind < PTD_PKT_KIND_COUNT)
        sb_s(&c.op, ptd_pkt_kinds[p->kind].name);

    switch (p->kind) {
    case PTD_PKT_TNT8:
    case PTD_PKT_TNT64: fmt_tnt(&c, p); break;
    case PTD_PKT_TIP:
    case PTD_PKT_TIP_PGE:
    case PTD_PKT_TIP_PGD:
    case PTD_PKT_FUP: fmt_ip(&c, st, p, dg); break;
    case PTD_PKT_MODE_EXEC: fmt_mode_exec(&c, p); break;
    case PTD_PKT_MODE_TSX: fmt_mode_tsx(&c, p); break;
    case PTD_PKT_PIP: fmt_tracked(&c, p, "cr3"); break;
    case PTD_PKT_VMCS: fmt_tracked(&c, p, "vmcs"); break;
    case PTD_PKT_PWRE: fmt_pwre(&c, p); break;
    case PTD_PKT_PWRX: fmt_pwrx(&c, p); break;
    case PTD_PKT_CFE: fmt_cfe(&c, p); break;
    case PTD_PKT_EVD: fmt_evd(&c, p); break;
    case PTD_PKT_TRIG: fmt_trig(&c, p); break;
    default: show = fmt_simple(&c, p); break;
    }
    if (opt->flags & (PTD_FMT_TIME | PTD_FMT_TCAL))
        track_time(&c.tid, &c.tr, opt->flags, st, p, dg);
    return show;
}

static int assemble(char *line, size_t cap, const struct ptd_fmt_options *opt, uint64_t offset,
                    const struct ptd_pkt *p, const uint8_t *raw, const struct cols *c)
{
    struct sb b;
    const char *sep = "";

    sb_init(&b, line, cap);
    if (!(opt->flags & PTD_FMT_NO_OFFSET)) {
        char off[COL_OFFSET];
        struct sb o;
        sb_init(&o, off, sizeof off);
        sb_hex(&o, offset, 16);
        sb_s_pad(&b, off, COL_OFFSET);
        sep = " ";
    }
    if ((opt->flags & PTD_FMT_RAW) && raw) {
        char rb[COL_RAW];
        struct sb r;
        sb_init(&r, rb, sizeof rb);
        for (unsigned i = 0; i < p->size && !r.full; i++)
            sb_hex(&r, raw[i], 2);
        sb_s(&b, sep);
        sb_s_pad(&b, rb, COL_RAW);
        sep = " ";
    }
    sb_s(&b, sep);
    if (c->payload[0])
        sb_s_pad(&b, c->opcode, COL_OPCODE);
    else
        sb_s(&b, c->opcode);
    if (c->track_id[0]) {
        sb_c(&b, ' ');
        sb_s_pad(&b, c->payload, COL_PAYLOAD);
        sb_c(&b, ' ');
        sb_s_pad(&b, c->track_id, COL_TRACK_ID);
        sb_s(&b, c->track);
    } else if (c->payload[0]) {
        sb_c(&b, ' ');
        sb_s(&b, c->payload);
    }
    if (b.full)
        return -PTD_ERR_NOSPC;
    return (int)b.n;
}

int ptd_fmt_error(char *line, size_t cap, uint64_t offset, const char *what, int err)
{
    struct sb b;

    sb_init(&b, line, cap);
    sb_c(&b, '[');
    sb_hex(&b, offset, 0);
    sb_s(&b, ": ");
    sb_s(&b, what);
    if (err) {
        sb_s(&b, ": ");
        sb_s(&b, ptd_errstr(err));
    }
    sb_c(&b, ']');
    if (b.full)
        return -PTD_ERR_NOSPC;
    return (int)b.n;
}

int ptd_fmt_packet(char *line, size_t cap, const struct ptd_fmt_options *opt,
                   struct ptd_fmt_state *st, uint64_t offset, const struct ptd_pkt *p,
                   const uint8_t *raw, char *diag, size_t diag_cap)
{
    struct cols c;
    struct diags dg;
    int n;

    if (!line || !cap || !opt || !st || !p)
        return -PTD_ERR_INVALID;
    line[0] = 0;
    sb_init(&dg.b, diag, diag ? diag_cap : 0);
    dg.offset = offset;
    dg.overflow = 0;
    n = fill_cols(&c, opt, st, p, &dg);
    if (dg.overflow)
        return -PTD_ERR_NOSPC;
    if (!n || (opt->flags & PTD_FMT_QUIET))
        return 0;
    return assemble(line, cap, opt, offset, p, raw, &c);
}

/* ---- the dump loop ------------------------------------------------------------ */

enum {
    PH_INIT,
    PH_START,
    PH_RUN,
    PH_DONE
};

void ptd_dump_init(struct ptd_dump *d, const struct ptd_fmt_options *opt)
{
    d->opt.flags = opt ? opt->flags : 0;
    d->opt.errata = opt ? opt->errata : 0;
    d->opt.has_cpu = opt ? opt->has_cpu : 0;
    d->opt.cpu_family = opt ? opt->cpu_family : 0;
    d->opt.cpu_model = opt ? opt->cpu_model : 0;
    if (opt) {
        d->opt.time = opt->time;
    } else {
        struct ptd_time_config none = { 0 };
        d->opt.time = none;
    }
    d->cpu_unknown = 0;
    if (d->opt.has_cpu) {
        unsigned e;
        d->cpu_unknown = !ptd_errata_of_cpu(d->opt.cpu_family, d->opt.cpu_model,
                                            (d->opt.flags & PTD_FMT_LIBIPT20) != 0, &e);
        d->opt.errata = e;
        d->opt.time.errata = e;
    }
    ptd_fmt_state_setup(&d->st, &d->opt);
    ptd_pkt_init(&d->dec, 0, 0);
    d->phase = PH_INIT;
    d->have_pending = 0;
    d->pending_len = 0;
    d->diag_pos = 0;
    d->diag_len = 0;
    d->diag[0] = 0;
    d->packets = 0;
    d->errors = 0;
    d->skipped = 0;
    d->no_psb = 0;
    d->pending[0] = 0;
}

int ptd_dump_feed(struct ptd_dump *d, const uint8_t *buf, size_t size)
{
    int r = ptd_pkt_init(&d->dec, buf, size);
    if (r < 0)
        return r;
    ptd_pkt_set_errata(&d->dec, d->opt.errata);
    ptd_pkt_set_libipt20(&d->dec, (d->opt.flags & PTD_FMT_LIBIPT20) != 0);
    if (d->opt.flags & PTD_FMT_LIBIPT_PWRE)
        ptd_pkt_set_pwre_bit3(&d->dec, 1);
    d->phase = PH_START;
    return 0;
}

static int copy_line(char *dst, size_t cap, const char *src, int len)
{
    if ((size_t)len + 1 > cap)
        return -PTD_ERR_NOSPC;
    for (int i = 0; i <= len; i++)
        dst[i] = src[i];
    return len;
}

int ptd_dump_line(struct ptd_dump *d, char *line, size_t cap)
{
    if (!d || !line)
        return -PTD_ERR_INVALID;
    if (cap < PTD_FMT_LINE_MAX)
        return -PTD_ERR_NOSPC;
    if (d->diag_pos < d->diag_len) {
        /* the next diagnostic line before a packet's line */
        int n = 0;
        const char *s = d->diag + d->diag_pos;
        while (s[n] && s[n] != '\n')
            n++;
        if ((size_t)n + 1 > cap || n >= PTD_FMT_LINE_MAX)
            return -PTD_ERR_NOSPC;
        for (int i = 0; i < n; i++)
            line[i] = s[i];
        line[n] = 0;
        d->diag_pos = (uint16_t)(d->diag_pos + n + (s[n] == '\n'));
        return n;
    }
    if (d->have_pending) {
        int r = copy_line(line, cap, d->pending, d->pending_len);
        if (r >= 0)
            d->have_pending = 0;
        return r;
    }
    if (d->cpu_unknown) {
        /* ptdump's first line for a --cpu it has no errata for */
        d->cpu_unknown = 0;
        return ptd_fmt_error(line, cap, 0, "failed to determine errata", -PTD_ERR_BAD_CPU);
    }
    if (d->phase == PH_START) {
        int r;
        if (d->opt.flags & PTD_FMT_NO_SYNC)
            r = ptd_pkt_sync_set(&d->dec, 0);
        else
            r = ptd_pkt_sync_forward(&d->dec);
        if (r < 0) {
            d->phase = PH_DONE;
            if (r != -PTD_ERR_EOS)
                return ptd_fmt_error(line, cap, 0, "sync error", r);
            /* no PSB anywhere: nothing to decode (ptdump prints nothing
             * either); the caller says so, every byte was skipped */
            d->no_psb = 1;
            d->skipped += (uint64_t)(d->dec.end - d->dec.begin);
            return 0;
        }
        d->skipped += ptd_pkt_offset(&d->dec); /* the bytes before the first PSB */
        d->phase = PH_RUN;
    }
    /* A bounded loop: every round consumes a packet or ends/resyncs. */
    while (d->phase == PH_RUN) {
        struct ptd_pkt p;
        uint64_t off = ptd_pkt_offset(&d->dec);
        const uint8_t *raw = d->dec.pos;
        int r = ptd_pkt_next(&d->dec, &p);

        if (r < 0) {
            uint64_t skipped = 0;
            /* libipt reports a packet cut by the end of the buffer as the
             * end of the trace, and so does ptdump: no line. */
            if (r == -PTD_ERR_EOS || r == -PTD_ERR_TRUNCATED) {
                d->phase = PH_DONE;
                return 0;
            }
            d->errors++;
            if (ptd_pkt_resync(&d->dec, &skipped) < 0)
                d->phase = PH_DONE;
            else
                ptd_fmt_state_setup(&d->st, &d->opt); /* ptdump resets its tracking */
            d->skipped += skipped;
            return ptd_fmt_error(line, cap, off, "error decoding packet", r);
        }
        d->packets++;
        r = ptd_fmt_packet(d->pending, sizeof d->pending, &d->opt, &d->st, off, &p, raw, d->diag,
                           sizeof d->diag);
        if (r < 0)
            return r;
        if (d->diag[0]) {
            unsigned n = 0;
            while (d->diag[n])
                n++;
            d->diag_pos = 0;
            d->diag_len = (uint16_t)n;
            if (r > 0) {
                d->have_pending = 1;
                d->pending_len = (uint16_t)r;
            }
            return ptd_dump_line(d, line, cap); /* the first diagnostic */
        }
        if (r > 0)
            return copy_line(line, cap, d->pending, r);
    }
    return 0;
}
