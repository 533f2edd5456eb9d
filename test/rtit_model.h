/* A software model of the IA32_RTIT_* MSR block, written from the SDM
 * (Intel Processor Trace chapter: 36.2.6 output, 36.2.7 MSRs, 36.3.1 CPUID
 * leaf 14h, 36.3.9 operational errors; 2016 edition) and independent of
 * arch/x86's code: it has its own bit definitions and never calls arch/.
 *
 * It raises the #GP a real CPU raises (rdmsr/wrmsr return -1 and record why),
 * validates ToPA tables and single-range settings when tracing is enabled
 * and when output reaches an entry (setting STATUS.Error as the CPU does),
 * and simulates output: rtit_model_trace() stores N bytes of packets into
 * the memory it was given, advancing OUTPUT_BASE/MASK_PTRS through the
 * tables, wrapping, stopping and setting Stopped.
 *
 * Beyond faults it observes what a CPU would do that nobody asked for:
 * trace bytes stored into a page it reads ToPA entries from (the walk
 * landing on a table), and which IPs an address range matches. */
#ifndef PTBOOT_TEST_RTIT_MODEL_H
#define PTBOOT_TEST_RTIT_MODEL_H

#include <stdbool.h>
#include <stdint.h>

/* The capability set, as raw CPUID values. */
struct rtit_model_caps {
    bool pt;               /* CPUID.(7,0).EBX[25] and leaf 14h present */
    uint32_t ebx14, ecx14; /* CPUID.(14h,0) */
    bool has14_1;
    uint32_t eax14_1, ebx14_1; /* CPUID.(14h,1) */
    unsigned maxphyaddr;
    unsigned family, model; /* display family/model (Broadwell quirk) */
    uint32_t ecx7;          /* CPUID.(7,0).ECX: bit 16 = 5-level paging */
    bool paging_la57;       /* CR4.LA57 of the traced code (not CPUID) */
};

#define RTIT_MODEL_MAX_TABLES 64

struct rtit_model {
    struct rtit_model_caps caps;
    /* MSR state */
    uint64_t ctl, status, output_base, mask_ptrs, cr3_match;
    uint64_t addr[8]; /* ADDR0_A, ADDR0_B, ADDR1_A, ... */
    /* physical memory the CPU writes to: [mem_phys, mem_phys + mem_size) */
    uint8_t *mem;
    uint64_t mem_phys, mem_size;
    /* observations */
    unsigned gp_count;      /* #GPs raised */
    char last_gp[160];      /* why the last #GP */
    char last_error[160];   /* why STATUS.Error was set */
    unsigned enables;       /* TraceEn 0->1 transitions */
    bool psb_on_enable;     /* last enable had PacketByteCnt = 0 (PSB+) */
    uint64_t bytes_stored;  /* output bytes stored since init */
    uint64_t out_of_memory; /* output bytes that fell outside mem */
    uint8_t next_byte;      /* packet byte pattern (never 0) */
    const uint8_t *src;     /* rtit_model_trace_data's bytes, else NULL */
    /* ToPA table pages read since the last enable */
    uint64_t table_pages[RTIT_MODEL_MAX_TABLES];
    unsigned n_table_pages;
    uint64_t table_overwrites; /* output bytes stored into those pages */
    uint64_t last_table_hit;   /* physical address of the last such byte */
};

void rtit_model_init(struct rtit_model *m, const struct rtit_model_caps *caps, uint8_t *mem,
                     uint64_t mem_phys, uint64_t mem_size);

/* MSR access in the shape of struct rtit_msr_ops: 0, or -1 for #GP. */
int rtit_model_rdmsr(void *model, uint32_t msr, uint64_t *value);
int rtit_model_wrmsr(void *model, uint32_t msr, uint64_t value);

/* The CPU produces n bytes of packets; returns how many were stored (fewer
 * when tracing is off, TriggerEn is 0, a STOP region filled, or an
 * operational error occurred). */
uint64_t rtit_model_trace(struct rtit_model *m, uint64_t n);

/* The same, storing data[0..n) (real packets from a test) instead of the
 * pattern; returns how many were stored (data beyond that is not read). */
uint64_t rtit_model_trace_data(struct rtit_model *m, const uint8_t *data, uint64_t n);

/* A warm reset (the reset button, a watchdog, a triple fault): TraceEn is
 * cleared; the other RTIT MSRs keep their values when CPUID.(14h,0).EBX[2]
 * is set, else they are cleared (36.2.7.1). Memory is untouched. */
void rtit_model_warm_reset(struct rtit_model *m);

/* A taken branch entered a TraceStop range (ADDRn_CFG=2; 36.2.5.5):
 * STATUS.Stopped is set and TriggerEn cleared. Returns false (nothing
 * happens) when tracing is off or no range is configured as TraceStop. */
bool rtit_model_trace_stop_hit(struct rtit_model *m);

/* IP filtering (36.2.4.3): address range n is configured (ADDRn_CFG 1 or
 * 2) and ADDRn_A <= ip <= ADDRn_B. */
bool rtit_model_range_holds(const struct rtit_model *m, unsigned n, uint64_t ip);

/* Code can run at linear address ip: canonical at 57 bits with 5-level
 * paging on (CPUID.(7,0).ECX[16] and CR4.LA57), else 48 (SDM Vol. 3A 4.5). */
bool rtit_model_ip_possible(const struct rtit_model *m, uint64_t ip);

/* True while CTL.TraceEn=1 and STATUS.TriggerEn=1. */
bool rtit_model_tracing(const struct rtit_model *m);

#endif
