/* Glue between arch/x86 (capabilities, MSR ops) and the RTIT model for the
 * test_rtit_* programs that drive start/stop through the model. */
#ifndef PTBOOT_TEST_RTIT_MODEL_UTIL_H
#define PTBOOT_TEST_RTIT_MODEL_UTIL_H

#include <string.h>

#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_msr.h"
#include "test/rtit_model.h"

/* The model's capabilities from the *raw* CPUID values in caps (the model
 * never sees arch/'s decoded flags). */
static inline struct rtit_model_caps rtit_model_caps_of(const struct rtit_caps *c)
{
    struct rtit_model_caps m;
    memset(&m, 0, sizeof(m));
    m.pt = c->leaf7_pt && c->has_leaf14;
    m.ebx14 = c->leaf14_0.ebx;
    m.ecx14 = c->leaf14_0.ecx;
    m.has14_1 = c->has_leaf14_1;
    m.eax14_1 = c->leaf14_1.eax;
    m.ebx14_1 = c->leaf14_1.ebx;
    m.maxphyaddr = c->maxphyaddr;
    m.family = c->family;
    m.model = c->model;
    m.ecx7 = c->leaf7_ecx;
    m.paging_la57 = c->paging_la57; /* the environment, not CPUID */
    return m;
}

static inline struct rtit_msr_ops rtit_model_ops(struct rtit_model *m)
{
    struct rtit_msr_ops ops = { rtit_model_rdmsr, rtit_model_wrmsr, m };
    return ops;
}

/* A model of the CPU with caps, its physical memory mem[0..size) at phys
 * zeroed first: the ops that drive it (the rig every start/stop test sets
 * up per fixture CPU). */
static inline struct rtit_msr_ops rtit_model_fresh(struct rtit_model *m,
                                                   const struct rtit_caps *caps, uint8_t *mem,
                                                   uint64_t phys, size_t size)
{
    memset(mem, 0, size);
    struct rtit_model_caps mc = rtit_model_caps_of(caps);
    rtit_model_init(m, &mc, mem, phys, size);
    return rtit_model_ops(m);
}

#endif
