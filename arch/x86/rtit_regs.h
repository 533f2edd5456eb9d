/* IA32_RTIT_* MSR addresses, CTL/STATUS fields and ToPA entry fields, named
 * once. Source: SDM Vol. 3, "Intel Processor Trace", 36.2.7 (2016 edition)
 * and the architectural MSR table; summarized in ../shared/reference/rtit.md
 * sections 0.1-0.5. */
#ifndef PTBOOT_ARCH_X86_RTIT_REGS_H
#define PTBOOT_ARCH_X86_RTIT_REGS_H

#include <stdint.h>

#define RTIT_BIT64(n) ((uint64_t)1 << (n))

/* MSR addresses */
#define RTIT_MSR_OUTPUT_BASE      0x560u
#define RTIT_MSR_OUTPUT_MASK_PTRS 0x561u
#define RTIT_MSR_CTL              0x570u
#define RTIT_MSR_STATUS           0x571u
#define RTIT_MSR_CR3_MATCH        0x572u
#define RTIT_MSR_ADDR_A(n)        (0x580u + 2u * (n))
#define RTIT_MSR_ADDR_B(n)        (0x581u + 2u * (n))
#define RTIT_MAX_RANGES           4u /* ADDR0..ADDR3: CTL has 4 ADDRn_CFG */

/* MSR_PLATFORM_INFO (model-specific; SDM Vol. 4): bits 15:8 are the
 * maximum non-turbo ratio, which decoders need to turn CBR into time
 * (libipt's nom_freq; Linux pt_pmu_hw_init). Read it #GP-safely. */
#define X86_MSR_PLATFORM_INFO          0xceu
#define X86_PLATFORM_INFO_NOM_RATIO(v) ((unsigned)(((v) >> 8) & 0xff))

/* IA32_RTIT_CTL (36.2.7.2) */
#define RTIT_CTL_TRACEEN           RTIT_BIT64(0)
#define RTIT_CTL_CYCEN             RTIT_BIT64(1)
#define RTIT_CTL_OS                RTIT_BIT64(2)
#define RTIT_CTL_USER              RTIT_BIT64(3)
#define RTIT_CTL_PWREVTEN          RTIT_BIT64(4)
#define RTIT_CTL_FUPONPTW          RTIT_BIT64(5)
#define RTIT_CTL_FABRICEN          RTIT_BIT64(6)
#define RTIT_CTL_CR3FILTER         RTIT_BIT64(7)
#define RTIT_CTL_TOPA              RTIT_BIT64(8)
#define RTIT_CTL_MTCEN             RTIT_BIT64(9)
#define RTIT_CTL_TSCEN             RTIT_BIT64(10)
#define RTIT_CTL_DISRETC           RTIT_BIT64(11)
#define RTIT_CTL_PTWEN             RTIT_BIT64(12)
#define RTIT_CTL_BRANCHEN          RTIT_BIT64(13)
#define RTIT_CTL_MTCFREQ_SHIFT     14
#define RTIT_CTL_MTCFREQ_MASK      ((uint64_t)0xf << RTIT_CTL_MTCFREQ_SHIFT)
#define RTIT_CTL_CYCTHRESH_SHIFT   19
#define RTIT_CTL_CYCTHRESH_MASK    ((uint64_t)0xf << RTIT_CTL_CYCTHRESH_SHIFT)
#define RTIT_CTL_PSBFREQ_SHIFT     24
#define RTIT_CTL_PSBFREQ_MASK      ((uint64_t)0xf << RTIT_CTL_PSBFREQ_SHIFT)
#define RTIT_CTL_EVENTEN           RTIT_BIT64(31)
#define RTIT_CTL_ADDR_CFG_SHIFT(n) (32 + 4 * (n))
#define RTIT_CTL_ADDR_CFG_MASK(n)  ((uint64_t)0xf << RTIT_CTL_ADDR_CFG_SHIFT(n))
#define RTIT_CTL_DISTNT            RTIT_BIT64(55)
#define RTIT_CTL_INJECTPSBPMI      RTIT_BIT64(56)

/* ADDRn_CFG encodings; 3..15 are reserved (#GP). */
#define RTIT_ADDR_CFG_OFF    0u
#define RTIT_ADDR_CFG_FILTER 1u
#define RTIT_ADDR_CFG_STOP   2u

/* IA32_RTIT_STATUS (36.2.7.4) */
#define RTIT_STATUS_FILTEREN      RTIT_BIT64(0)
#define RTIT_STATUS_CONTEXTEN     RTIT_BIT64(1)
#define RTIT_STATUS_TRIGGEREN     RTIT_BIT64(2)
#define RTIT_STATUS_ERROR         RTIT_BIT64(4)
#define RTIT_STATUS_STOPPED       RTIT_BIT64(5)
#define RTIT_STATUS_PENDPSB       RTIT_BIT64(6)
#define RTIT_STATUS_PENDTOPAPMI   RTIT_BIT64(7)
#define RTIT_STATUS_BYTECNT_SHIFT 32
#define RTIT_STATUS_BYTECNT_MASK  ((uint64_t)0x1ffff << RTIT_STATUS_BYTECNT_SHIFT)

/* IA32_RTIT_OUTPUT_MASK_PTRS (36.2.7.8) */
#define RTIT_MASK_LOWER        0x7fu /* bits 6:0 read as ones */
#define RTIT_MASK_TABLE_SHIFT  7     /* bits 31:7 MaskOrTableOffset */
#define RTIT_MASK_TABLE_MASK   ((uint64_t)0x1ffffff << RTIT_MASK_TABLE_SHIFT)
#define RTIT_MASK_OFFSET_SHIFT 32 /* bits 63:32 OutputOffset */

/* ToPA entry (36.2.6.2, Table 36-3) */
#define RTIT_TOPA_END         RTIT_BIT64(0)
#define RTIT_TOPA_INT         RTIT_BIT64(2)
#define RTIT_TOPA_STOP        RTIT_BIT64(4)
#define RTIT_TOPA_SIZE_SHIFT  6
#define RTIT_TOPA_SIZE_MASK   ((uint64_t)0xf << RTIT_TOPA_SIZE_SHIFT)
#define RTIT_TOPA_BASE_SHIFT  12
#define RTIT_TOPA_TABLE_ALIGN 4096u
/* Region size for Size encoding s: 4 KiB << s (s = 0..15, up to 128 MiB). */
#define RTIT_TOPA_REGION_BYTES(s) ((uint64_t)4096 << (s))
#define RTIT_TOPA_MAX_SIZE_CODE   15u
/* One 4 KiB table holds 512 entries; the last is kept for END (simple-pt,
 * Linux). */
#define RTIT_TOPA_ENTRIES_PER_TABLE 512u

#endif
