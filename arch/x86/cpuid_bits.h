/* CPUID leaf numbers and bit positions used by ptboot, named once.
 * Sources: SDM Vol. 2A "CPUID" and Vol. 3 ch. "Intel Processor Trace",
 * section "CPUID Leaf 14H" (36.3.1 in the 2016 edition); see
 * ../shared/reference/rtit.md section 0.4. */
#ifndef PTBOOT_ARCH_X86_CPUID_BITS_H
#define PTBOOT_ARCH_X86_CPUID_BITS_H

#define X86_BIT(n) (1u << (n))

/* Leaves */
#define X86_CPUID_LEAF_VENDOR       0x00000000u /* EAX = max basic leaf */
#define X86_CPUID_LEAF_FEATURES     0x00000001u
#define X86_CPUID_LEAF_EXT_FEATURES 0x00000007u
#define X86_CPUID_LEAF_PT           0x00000014u
#define X86_CPUID_LEAF_TSC          0x00000015u
#define X86_CPUID_LEAF_EXT_MAX      0x80000000u /* EAX = max extended leaf */
#define X86_CPUID_LEAF_ADDR_SIZES   0x80000008u
#define X86_CPUID_EXT_BASE          0x80000000u
/* Range of leaves that the hypervisor leaves (4000_0000h..) start. */
#define X86_CPUID_HV_BASE 0x40000000u

/* CPUID.1:EAX version information (SDM Vol. 2A, Figure 3-6) */
#define X86_CPUID1_EAX_STEPPING(a)   ((a)&0xfu)
#define X86_CPUID1_EAX_MODEL(a)      (((a) >> 4) & 0xfu)
#define X86_CPUID1_EAX_FAMILY(a)     (((a) >> 8) & 0xfu)
#define X86_CPUID1_EAX_EXT_MODEL(a)  (((a) >> 16) & 0xfu)
#define X86_CPUID1_EAX_EXT_FAMILY(a) (((a) >> 20) & 0xffu)
/* CPUID.1:ECX[31]: set by hypervisors, always 0 on real hardware. */
#define X86_CPUID1_ECX_HYPERVISOR X86_BIT(31)

/* CPUID.(7,0):EBX[25]: Intel Processor Trace. */
#define X86_CPUID7_EBX_PT X86_BIT(25)
/* CPUID.(7,0):ECX[16]: 5-level paging (LA57) supported. */
#define X86_CPUID7_ECX_LA57 X86_BIT(16)
/* CPUID.(7,0):EDX[15]: hybrid part (P-cores and E-cores); leaf 14h may
 * differ between core types (SDM Vol. 2A, CPUID leaf 07H and 1AH). */
#define X86_CPUID7_EDX_HYBRID X86_BIT(15)

/* CPUID.(14h,0):EBX */
#define RTIT_CPUID14_EBX_CR3_FILTER       X86_BIT(0)
#define RTIT_CPUID14_EBX_PSB_CYC          X86_BIT(1)
#define RTIT_CPUID14_EBX_IP_FILTER        X86_BIT(2)
#define RTIT_CPUID14_EBX_MTC              X86_BIT(3)
#define RTIT_CPUID14_EBX_PTWRITE          X86_BIT(4)
#define RTIT_CPUID14_EBX_POWER_EVENTS     X86_BIT(5)
#define RTIT_CPUID14_EBX_PSB_PMI_PRESERVE X86_BIT(6)
#define RTIT_CPUID14_EBX_EVENT_TRACE      X86_BIT(7)
#define RTIT_CPUID14_EBX_TNT_DISABLE      X86_BIT(8)
/* CPUID.(14h,0):ECX */
#define RTIT_CPUID14_ECX_TOPA            X86_BIT(0)
#define RTIT_CPUID14_ECX_TOPA_MENTRY     X86_BIT(1)
#define RTIT_CPUID14_ECX_SINGLE_RANGE    X86_BIT(2)
#define RTIT_CPUID14_ECX_TRACE_TRANSPORT X86_BIT(3)
#define RTIT_CPUID14_ECX_LIP             X86_BIT(31)
/* CPUID.(14h,1) */
#define RTIT_CPUID14_1_EAX_RANGES(a)     ((a)&0x7u) /* [2:0], not [1:0] */
#define RTIT_CPUID14_1_EAX_MTC_BITMAP(a) (((a) >> 16) & 0xffffu)
#define RTIT_CPUID14_1_EBX_CYC_BITMAP(b) ((b)&0xffffu)
#define RTIT_CPUID14_1_EBX_PSB_BITMAP(b) (((b) >> 16) & 0xffffu)

/* CPUID.80000008h:EAX[7:0] = physical address width (MAXPHYADDR). When the
 * leaf is absent the SDM says MAXPHYADDR is 36 (Vol. 3A, 4.1.4). */
#define X86_CPUID_ADDR_EAX_PHYS(a) ((a)&0xffu)
#define X86_MAXPHYADDR_DEFAULT     36u

#endif
