/* See rtit_model.h. Bit positions below are transcribed from the SDM's
 * IA32_RTIT_CTL/STATUS/ToPA tables on purpose rather than taken from
 * arch/x86/rtit_regs.h, so that a wrong constant in arch/ shows up as a
 * disagreement with the model. */
#include "test/rtit_model.h"

#include <stdio.h>
#include <string.h>

#define B(n) ((uint64_t)1 << (n))

/* MSRs */
enum {
    M_OUTPUT_BASE = 0x560,
    M_OUTPUT_MASK = 0x561,
    M_CTL = 0x570,
    M_STATUS = 0x571,
    M_CR3 = 0x572,
    M_ADDR0_A = 0x580,
    M_ADDR3_B = 0x587,
};

/* CTL */
#define C_TRACEEN       B(0)
#define C_CYCEN         B(1)
#define C_OS            B(2)
#define C_USER          B(3)
#define C_PWREVT        B(4)
#define C_FUPPTW        B(5)
#define C_FABRIC        B(6)
#define C_CR3F          B(7)
#define C_TOPA          B(8)
#define C_MTCEN         B(9)
#define C_TSC           B(10)
#define C_DISRETC       B(11)
#define C_PTW           B(12)
#define C_BRANCH        B(13)
#define C_MTCFREQ(v)    (((v) >> 14) & 0xf)
#define C_CYCTH(v)      (((v) >> 19) & 0xf)
#define C_PSBFREQ(v)    (((v) >> 24) & 0xf)
#define C_EVENT         B(31)
#define C_ADDRCFG(v, n) (((v) >> (32 + 4 * (n))) & 0xf)
#define C_DISTNT        B(55)
#define C_INJECT        B(56)

/* STATUS */
#define S_FILTEREN      B(0)
#define S_CONTEXTEN     B(1)
#define S_TRIGGEREN     B(2)
#define S_ERROR         B(4)
#define S_STOPPED       B(5)
#define S_PENDPSB       B(6)
#define S_PENDPMI       B(7)
#define S_BYTECNT_SHIFT 32
#define S_BYTECNT_MASK  ((uint64_t)0x1ffff << S_BYTECNT_SHIFT)

/* ToPA entry */
#define T_END          B(0)
#define T_INT          B(2)
#define T_STOP         B(4)
#define T_SIZE(e)      (((e) >> 6) & 0xf)
#define T_RESERVED_LOW (B(1) | B(3) | B(5) | B(10) | B(11))

/* CPUID.(14h,0) bits */
#define EBX_CR3    (1u << 0)
#define EBX_PSBCYC (1u << 1)
#define EBX_IPF    (1u << 2)
#define EBX_MTC    (1u << 3)
#define EBX_PTW    (1u << 4)
#define EBX_PWR    (1u << 5)
#define EBX_PSBPMI (1u << 6)
#define EBX_EVENT  (1u << 7)
#define EBX_DISTNT (1u << 8)
#define ECX_TOPA   (1u << 0)
#define ECX_MENTRY (1u << 1)
#define ECX_SINGLE (1u << 2)
#define ECX_FABRIC (1u << 3)

static int gp(struct rtit_model *m, const char *why, uint32_t msr, uint64_t v)
{
    m->gp_count++;
    snprintf(m->last_gp, sizeof(m->last_gp), "#GP: %s (msr 0x%x value 0x%llx)", why, (unsigned)msr,
             (unsigned long long)v);
    return -1;
}

static void op_error(struct rtit_model *m, const char *why, uint64_t detail)
{
    if (!(m->status & S_ERROR))
        snprintf(m->last_error, sizeof(m->last_error), "%s (0x%llx)", why,
                 (unsigned long long)detail);
    m->status |= S_ERROR;
    m->status &= ~S_TRIGGEREN;
}

static unsigned ranges(const struct rtit_model *m)
{
    return m->caps.has14_1 ? (m->caps.eax14_1 & 7) : 0;
}

static bool has_ebx(const struct rtit_model *m, uint32_t bit)
{
    return m->caps.ebx14 & bit;
}

static bool has_ecx(const struct rtit_model *m, uint32_t bit)
{
    return m->caps.ecx14 & bit;
}

static uint64_t phys_limit(const struct rtit_model *m)
{
    return m->caps.maxphyaddr >= 64 ? ~(uint64_t)0 : (B(m->caps.maxphyaddr) - 1);
}

static bool canonical(uint64_t v, unsigned bits)
{
    uint64_t top = v >> (bits - 1);
    return top == 0 || top == (~(uint64_t)0 >> (bits - 1));
}

static bool cpu_la57(const struct rtit_model *m)
{
    return m->caps.ecx7 & (1u << 16);
}

bool rtit_model_ip_possible(const struct rtit_model *m, uint64_t ip)
{
    return canonical(ip, cpu_la57(m) && m->caps.paging_la57 ? 57 : 48);
}

bool rtit_model_range_holds(const struct rtit_model *m, unsigned n, uint64_t ip)
{
    if (n >= 4)
        return false;
    unsigned cfg = (unsigned)((m->ctl >> (32 + 4 * n)) & 0xf);
    return (cfg == 1 || cfg == 2) && m->addr[2 * n] <= ip && ip <= m->addr[2 * n + 1];
}

/* The walk read an entry from this table page: remember it, so output
 * stored there later is seen landing on a table. */
static void note_table(struct rtit_model *m, uint64_t table)
{
    for (unsigned i = 0; i < m->n_table_pages; i++)
        if (m->table_pages[i] == table)
            return;
    if (m->n_table_pages < RTIT_MODEL_MAX_TABLES)
        m->table_pages[m->n_table_pages++] = table;
}

static bool broadwell(const struct rtit_model *m)
{
    unsigned mo = m->caps.model;
    return m->caps.family == 6 && (mo == 0x3d || mo == 0x47 || mo == 0x4f || mo == 0x56);
}

void rtit_model_init(struct rtit_model *m, const struct rtit_model_caps *caps, uint8_t *mem,
                     uint64_t mem_phys, uint64_t mem_size)
{
    memset(m, 0, sizeof(*m));
    m->caps = *caps;
    m->mem = mem;
    m->mem_phys = mem_phys;
    m->mem_size = mem_size;
    m->mask_ptrs = 0x7f; /* reset: all zero, low mask bits read as 1 */
    m->next_byte = 1;
}

bool rtit_model_tracing(const struct rtit_model *m)
{
    return (m->ctl & C_TRACEEN) && (m->status & S_TRIGGEREN);
}

/* Which MSRs exist for this capability set (36.2.7, Table 36-5 notes). */
static bool msr_exists(const struct rtit_model *m, uint32_t msr)
{
    if (!m->caps.pt)
        return false;
    switch (msr) {
    case M_CTL:
    case M_STATUS: return true;
    case M_OUTPUT_BASE:
    case M_OUTPUT_MASK: return has_ecx(m, ECX_TOPA) || has_ecx(m, ECX_SINGLE);
    case M_CR3: return has_ebx(m, EBX_CR3);
    }
    if (msr >= M_ADDR0_A && msr <= M_ADDR3_B)
        return (msr - M_ADDR0_A) / 2 < ranges(m);
    return false;
}

int rtit_model_rdmsr(void *ctx, uint32_t msr, uint64_t *v)
{
    struct rtit_model *m = ctx;
    if (!msr_exists(m, msr))
        return gp(m, "rdmsr of an MSR this CPU does not have", msr, 0);
    switch (msr) {
    case M_CTL: *v = m->ctl; break;
    case M_STATUS: *v = m->status; break;
    case M_OUTPUT_BASE: *v = m->output_base; break;
    case M_OUTPUT_MASK: *v = m->mask_ptrs | 0x7f; break;
    case M_CR3: *v = m->cr3_match; break;
    default: *v = m->addr[msr - M_ADDR0_A]; break;
    }
    return 0;
}

/* CTL bits that are writable on this CPU; every other bit is reserved. */
static uint64_t ctl_writable(const struct rtit_model *m)
{
    uint64_t w = C_TRACEEN | C_OS | C_USER | C_TSC | C_DISRETC | C_BRANCH;
    if (has_ebx(m, EBX_PSBCYC))
        w |= C_CYCEN | (uint64_t)0xf << 19 | (uint64_t)0xf << 24;
    if (has_ebx(m, EBX_PWR))
        w |= C_PWREVT;
    if (has_ebx(m, EBX_PTW))
        w |= C_FUPPTW | C_PTW;
    if (has_ecx(m, ECX_FABRIC))
        w |= C_FABRIC;
    if (has_ebx(m, EBX_CR3))
        w |= C_CR3F;
    if (has_ecx(m, ECX_TOPA))
        w |= C_TOPA;
    if (has_ebx(m, EBX_MTC))
        w |= C_MTCEN | (uint64_t)0xf << 14;
    if (has_ebx(m, EBX_EVENT))
        w |= C_EVENT;
    if (has_ebx(m, EBX_DISTNT))
        w |= C_DISTNT;
    if (has_ebx(m, EBX_PSBPMI))
        w |= C_INJECT;
    for (unsigned n = 0; n < ranges(m) && n < 4; n++)
        w |= (uint64_t)0xf << (32 + 4 * n);
    return w;
}

/* ---- output: ToPA walking and single range --------------------------- */

static uint8_t *phys_ptr(struct rtit_model *m, uint64_t pa, uint64_t len)
{
    if (pa < m->mem_phys || pa - m->mem_phys > m->mem_size ||
        len > m->mem_size - (pa - m->mem_phys))
        return NULL;
    return m->mem + (pa - m->mem_phys);
}

static uint64_t cur_table(const struct rtit_model *m)
{
    return m->output_base & ~(uint64_t)0x7f;
}

static unsigned cur_index(const struct rtit_model *m)
{
    return (unsigned)((m->mask_ptrs >> 7) & 0x1ffffff);
}

static uint64_t cur_offset(const struct rtit_model *m)
{
    return m->mask_ptrs >> 32;
}

static void set_ptrs(struct rtit_model *m, uint64_t table, unsigned idx, uint64_t off)
{
    m->output_base = table;
    m->mask_ptrs = 0x7f | (uint64_t)idx << 7 | off << 32;
}

/* Reads the entry the CPU is at and checks it as the CPU does when it
 * reaches it (36.2.6.2 "ToPA Errors"). Returns false after an error. */
static bool read_entry(struct rtit_model *m, uint64_t *e)
{
    uint64_t table = cur_table(m);
    unsigned idx = cur_index(m);
    bool mentry = has_ecx(m, ECX_MENTRY);

    if (table & 0xfff) {
        op_error(m, "ToPA table base not 4 KiB aligned", table);
        return false;
    }
    if (idx >= 512) {
        op_error(m, "ToPA entry index beyond the table", idx);
        return false;
    }
    const uint8_t *p = phys_ptr(m, table + 8u * idx, 8);
    if (!p) {
        op_error(m, "ToPA table outside the model's memory", table);
        return false;
    }
    note_table(m, table);
    memcpy(e, p, 8);
    uint64_t base = *e & ~(uint64_t)0xfff;
    if ((*e & T_RESERVED_LOW) || (base & ~phys_limit(m))) {
        op_error(m, "ToPA entry with reserved bits set", *e);
        return false;
    }
    if (*e & T_END) {
        if (*e & (T_INT | T_STOP)) {
            op_error(m, "ToPA END entry with INT or STOP", *e);
            return false;
        }
        if (idx == 0) {
            op_error(m, "ToPA END entry in entry 0", *e);
            return false;
        }
        if (!mentry && base != table) {
            op_error(m, "single-entry ToPA: END must point to the table itself", *e);
            return false;
        }
        return true;
    }
    if (!mentry && idx != 0) {
        op_error(m, "single-entry ToPA: entry 1 must be END", *e);
        return false;
    }
    uint64_t size = (uint64_t)4096 << T_SIZE(*e);
    if (base & (size - 1)) {
        op_error(m, "ToPA output region not aligned to its size", *e);
        return false;
    }
    if (base + size - 1 > phys_limit(m)) {
        op_error(m, "ToPA output region above MAXPHYADDR", *e);
        return false;
    }
    if (cur_offset(m) >= size && !(m->status & S_STOPPED)) {
        op_error(m, "OutputOffset beyond the region", cur_offset(m));
        return false;
    }
    if (!mentry) {
        /* entry 1 must be END back to this table */
        const uint8_t *q = phys_ptr(m, table + 8, 8);
        uint64_t e1 = 0;
        if (q)
            memcpy(&e1, q, 8);
        if (!q || !(e1 & T_END) || (e1 & ~(uint64_t)0xfff) != table || (e1 & (T_INT | T_STOP))) {
            op_error(m, "single-entry ToPA: entry 1 must be END to the table", e1);
            return false;
        }
    }
    return true;
}

/* Follows END entries from the current position to an output entry. */
static bool current_output(struct rtit_model *m, uint64_t *e)
{
    for (int hops = 0; hops < 4096; hops++) {
        if (!read_entry(m, e))
            return false;
        if (!(*e & T_END))
            return true;
        set_ptrs(m, *e & ~(uint64_t)0xfff, 0, 0);
    }
    op_error(m, "ToPA chain of END entries without output", cur_table(m));
    return false;
}

/* Validation at enable: the CPU may report a bad configuration as soon as
 * TraceEn is set (36.3.9); walk every reachable entry once. */
static void validate_topa(struct rtit_model *m)
{
    uint64_t save_base = m->output_base, save_mask = m->mask_ptrs;
    uint64_t e;
    for (int n = 0; n < 1 << 16; n++) {
        if (!read_entry(m, &e))
            break;
        if (e & T_END) {
            uint64_t next = e & ~(uint64_t)0xfff;
            set_ptrs(m, next, 0, 0);
            if (next == (save_base & ~(uint64_t)0x7f))
                break; /* back at the start table: ring */
            continue;
        }
        if (e & T_STOP)
            break;
        set_ptrs(m, cur_table(m), cur_index(m) + 1, 0);
    }
    m->output_base = save_base;
    m->mask_ptrs = save_mask;
}

static void validate_single(struct rtit_model *m)
{
    uint64_t mask = (m->mask_ptrs & 0xffffffffu) | 0x7f;
    if (mask & (mask + 1))
        op_error(m, "single range: mask not contiguous low ones", mask);
    else if (m->output_base & mask)
        op_error(m, "single range: base overlaps the mask", m->output_base);
    else if (cur_offset(m) > mask)
        op_error(m, "single range: OutputOffset beyond the range", cur_offset(m));
}

static void store(struct rtit_model *m, uint64_t pa, uint64_t n)
{
    /* Nothing stops a CPU writing trace over its own ToPA tables (it
	 * then reads what it wrote as entries): count it. */
    for (unsigned i = 0; i < m->n_table_pages; i++) {
        uint64_t t = m->table_pages[i];
        if (pa < t + 4096 && t < pa + n) {
            uint64_t lo = pa > t ? pa : t;
            uint64_t hi = pa + n < t + 4096 ? pa + n : t + 4096;
            m->table_overwrites += hi - lo;
            m->last_table_hit = hi - 1;
        }
    }
    uint8_t *p = phys_ptr(m, pa, n);
    for (uint64_t i = 0; i < n; i++) {
        uint8_t b = m->next_byte;
        if (m->src)
            b = *m->src++; /* rtit_model_trace_data: the caller's packets */
        if (p)
            p[i] = b;
        m->next_byte = (uint8_t)(m->next_byte % 251 + 1);
    }
    if (!p)
        m->out_of_memory += n;
    m->bytes_stored += n;
    uint64_t cnt = ((m->status & S_BYTECNT_MASK) >> S_BYTECNT_SHIFT) + n;
    if (cnt > 0x1ffff)
        cnt = 0x1ffff;
    m->status = (m->status & ~S_BYTECNT_MASK) | cnt << S_BYTECNT_SHIFT;
}

uint64_t rtit_model_trace(struct rtit_model *m, uint64_t n)
{
    uint64_t done = 0;

    if (!rtit_model_tracing(m) || (m->ctl & C_FABRIC))
        return 0;
    if (!(m->ctl & C_TOPA)) {
        uint64_t mask = (m->mask_ptrs & 0xffffffffu) | 0x7f;
        uint64_t off = cur_offset(m);
        while (done < n) {
            uint64_t chunk = mask + 1 - off;
            if (chunk > n - done)
                chunk = n - done;
            store(m, (m->output_base & ~mask) + off, chunk);
            done += chunk;
            off = (off + chunk) & mask; /* circular, silent wrap */
        }
        m->mask_ptrs = (m->mask_ptrs & 0xffffffffu) | off << 32;
        return done;
    }
    while (done < n) {
        uint64_t e;
        if (!current_output(m, &e))
            break;
        uint64_t size = (uint64_t)4096 << T_SIZE(e);
        uint64_t off = cur_offset(m);
        uint64_t chunk = size - off;
        if (chunk > n - done)
            chunk = n - done;
        store(m, (e & ~(uint64_t)0xfff) + off, chunk);
        done += chunk;
        off += chunk;
        if (off < size) {
            set_ptrs(m, cur_table(m), cur_index(m), off);
            break;
        }
        if (e & T_STOP) {
            /* 36.2.6.2 "ToPA STOP": Stopped, TriggerEn cleared,
			 * pointers stay on the entry with OutputOffset = size */
            set_ptrs(m, cur_table(m), cur_index(m), size);
            m->status |= S_STOPPED;
            m->status &= ~S_TRIGGEREN;
            break;
        }
        set_ptrs(m, cur_table(m), cur_index(m) + 1, 0);
    }
    return done;
}

uint64_t rtit_model_trace_data(struct rtit_model *m, const uint8_t *data, uint64_t n)
{
    m->src = data;
    uint64_t done = rtit_model_trace(m, n);
    m->src = NULL;
    return done;
}

void rtit_model_warm_reset(struct rtit_model *m)
{
    /* 36.2.7.1: with CPUID.(14h,0).EBX[2] only TraceEn is cleared on a
	 * warm reset and the other RTIT MSRs keep their values; without it
	 * they are cleared as on a cold reset */
    if (has_ebx(m, EBX_IPF)) {
        m->ctl &= ~C_TRACEEN;
        return;
    }
    m->ctl = 0;
    m->status = 0;
    m->output_base = 0;
    m->mask_ptrs = 0x7f;
    m->cr3_match = 0;
    memset(m->addr, 0, sizeof m->addr);
}

bool rtit_model_trace_stop_hit(struct rtit_model *m)
{
    if (!rtit_model_tracing(m))
        return false;
    for (unsigned n = 0; n < 4; n++) {
        if (C_ADDRCFG(m->ctl, n) == 2) {
            m->status |= S_STOPPED;
            m->status &= ~S_TRIGGEREN;
            return true;
        }
    }
    return false;
}

/* ---- WRMSR ------------------------------------------------------------- */

static int write_ctl(struct rtit_model *m, uint64_t v)
{
    uint64_t bad = v & ~ctl_writable(m);
    if (bad)
        return gp(m, "reserved or unsupported IA32_RTIT_CTL bit", M_CTL, bad);
    if (m->ctl & C_TRACEEN) {
        if (v == m->ctl)
            return 0; /* same value: allowed */
        if (v & C_TRACEEN)
            return gp(m, "IA32_RTIT_CTL change while TraceEn=1", M_CTL, v);
        /* the write clears TraceEn: allowed, output flushed */
        m->ctl = v;
        m->status &= ~S_TRIGGEREN;
        return 0;
    }
    if (has_ebx(m, EBX_MTC) && !((m->caps.eax14_1 >> 16) >> C_MTCFREQ(v) & 1))
        return gp(m, "MTCFreq encoding not in CPUID.(14h,1).EAX[31:16]", M_CTL, v);
    if (has_ebx(m, EBX_PSBCYC) && !((m->caps.ebx14_1 & 0xffff) >> C_CYCTH(v) & 1))
        return gp(m, "CycThresh encoding not in CPUID.(14h,1).EBX[15:0]", M_CTL, v);
    if (has_ebx(m, EBX_PSBCYC) && !((m->caps.ebx14_1 >> 16) >> C_PSBFREQ(v) & 1))
        return gp(m, "PSBFreq encoding not in CPUID.(14h,1).EBX[31:16]", M_CTL, v);
    for (unsigned n = 0; n < 4; n++)
        if (C_ADDRCFG(v, n) > 2)
            return gp(m, "reserved ADDRn_CFG encoding", M_CTL, v);
    if (v & C_TRACEEN) {
        if (!(v & (C_TOPA | C_FABRIC)) && !has_ecx(m, ECX_SINGLE))
            return gp(m, "TraceEn with ToPA=0 and no single-range output", M_CTL, v);
        if (!(v & C_BRANCH) && (broadwell(m) || !has_ebx(m, EBX_MTC)))
            return gp(m, "TraceEn with BranchEn=0 where BranchEn is not configurable", M_CTL, v);
    }
    m->ctl = v;
    if (!(v & C_TRACEEN))
        return 0;

    /* TraceEn 0 -> 1 */
    m->enables++;
    m->n_table_pages = 0;
    m->psb_on_enable = (m->status & S_BYTECNT_MASK) == 0;
    m->status |= S_CONTEXTEN | S_FILTEREN;
    if (m->status & (S_ERROR | S_STOPPED)) {
        m->status &= ~S_TRIGGEREN; /* nothing is traced */
        return 0;
    }
    m->status |= S_TRIGGEREN;
    if (v & C_FABRIC)
        return 0;
    if (v & C_TOPA)
        validate_topa(m);
    else
        validate_single(m);
    return 0;
}

int rtit_model_wrmsr(void *ctx, uint32_t msr, uint64_t v)
{
    struct rtit_model *m = ctx;

    if (!msr_exists(m, msr))
        return gp(m, "wrmsr to an MSR this CPU does not have", msr, v);
    if (msr == M_CTL)
        return write_ctl(m, v);
    /* Every other RTIT MSR is writable only with TraceEn=0 (36.2.7;
	 * KVM pt_can_write_msr). */
    if (m->ctl & C_TRACEEN)
        return gp(m, "RTIT MSR write while TraceEn=1", msr, v);
    switch (msr) {
    case M_STATUS: {
        uint64_t reserved = B(3) | ((uint64_t)0xffffff << 8) | ((uint64_t)0x7fff << 49);
        if (!has_ebx(m, EBX_PSBPMI))
            reserved |= S_PENDPSB | S_PENDPMI;
        if (v & reserved)
            return gp(m, "reserved IA32_RTIT_STATUS bit", msr, v);
        if ((v & S_BYTECNT_MASK) && !has_ebx(m, EBX_PSBCYC))
            return gp(m, "non-zero PacketByteCnt without CPUID.(14h,0).EBX[1]", msr, v);
        /* FilterEn, ContextEn, TriggerEn are read-only */
        uint64_t ro = S_FILTEREN | S_CONTEXTEN | S_TRIGGEREN;
        m->status = (m->status & ro) | (v & ~ro);
        return 0;
    }
    case M_OUTPUT_BASE:
        if (v & 0x7f)
            return gp(m, "IA32_RTIT_OUTPUT_BASE bits 6:0 reserved", msr, v);
        if (v & ~phys_limit(m))
            return gp(m, "IA32_RTIT_OUTPUT_BASE above MAXPHYADDR", msr, v);
        m->output_base = v;
        return 0;
    case M_OUTPUT_MASK: m->mask_ptrs = v | 0x7f; return 0;
    case M_CR3:
        if (v & 0x1f)
            return gp(m, "IA32_RTIT_CR3_MATCH bits 4:0 reserved", msr, v);
        m->cr3_match = v;
        return 0;
    default:
        /* MSRs holding linear addresses are checked at the width the
		 * CPU supports, whatever CR4.LA57 says (SDM Vol. 3A 4.5; KVM's
		 * is_noncanonical_msr_address) */
        if (!canonical(v, cpu_la57(m) ? 57 : 48))
            return gp(m, "non-canonical IA32_RTIT_ADDRn value", msr, v);
        m->addr[msr - M_ADDR0_A] = v;
        return 0;
    }
}
