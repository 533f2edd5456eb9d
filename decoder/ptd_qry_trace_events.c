/* libptd query/event layer: Event Trace (Intel SDM Vol. 3C, "Event Trace":
 * the CFE and EVD packets, IA32_RTIT_CTL.EventEn) and Trigger Tracing (the
 * TRIG packet).
 *
 * CFE (Control Flow Event) says what caused the control flow change that
 * follows; with its IP bit the next FUP gives the IP the event applies to.
 * Without it, and with tracing on, an interrupt-like event (INTR, SMI,
 * INIT, VM exit, user interrupt, software interrupt) belongs to the FUP of
 * the asynchronous branch that follows and comes out before it; RSM and
 * SIPI take that FUP without its IP; the others (IRET, VM entry, UIRET,
 * shutdown, SYSCALL) stand alone and the flow layer binds them to their
 * instruction. EVD (Event Data) comes before the CFE it describes: CR2 of a
 * page fault for INTR, the VM-exit qualification and reason for VMEXIT.
 * Unknown types are passed over (with its IP bit, a CFE's FUP too).
 *
 * TRIG: with its IP bit (and a valid count of 0) the next FUP gives the
 * trigger's IP; otherwise the event carries the instruction count from the
 * last IP packet, which the flow layer counts off. */
#include "decoder/ptd_qry_impl.h"

/* Publish a standalone Event Trace event with no IP, then read on. */
static int standalone_noip(struct ptd_qry *q, struct ptd_event *ev)
{
    ev->flags |= PTD_EVF_IP_SUPPRESSED;
    ptd_qry_ev_time(q, ev);
    ptd_qry_publish(q, ev);
    return ptd_qry_fetch(q);
}

/* An event of type with its binding: to the next FUP with the IP bit; to
 * the FUP of the asynchronous branch (before it) with tracing on, where
 * with_branch says the type does that (suppressed: taken without its IP);
 * else standalone without an IP. base (may be NULL): the event an EVD
 * started, else a new one. */
static int bind_cfe(struct ptd_qry *q, struct ptd_event *base, unsigned type, bool with_branch,
                    bool suppressed)
{
    const struct ptd_pkt *p = &q->cur;
    struct ptd_event *ev;
    unsigned binding = 0;

    if (p->flags & PTD_PKTF_IP)
        binding = PTD_QRY_B_FUP_BOUND;
    else if (with_branch && q->enabled)
        binding = PTD_QRY_B_FUP;
    if (!binding) {
        ev = ptd_qry_standalone(q);
        if (base)
            ptd_qry_ev_copy(ev, base);
        ev->type = (uint8_t)type;
        return standalone_noip(q, ev);
    }
    ev = ptd_qry_enqueue(q, binding);
    if (!ev)
        return -PTD_ERR_NOMEM;
    if (base)
        ptd_qry_ev_copy(ev, base);
    ev->type = (uint8_t)type;
    if (suppressed)
        ev->flags |= PTD_EVF_IP_SUPPRESSED;
    return 1;
}

int ptd_qry_decode_cfe(struct ptd_qry *q)
{
    const struct ptd_pkt *p = &q->cur;
    bool ip = (p->flags & PTD_PKTF_IP) != 0;
    /* the event an EVD started, waiting for this CFE */
    struct ptd_event *ev = ptd_qry_dequeue(q, PTD_QRY_B_CFE), base;

    switch (p->a) {
    case PTD_CFE_INTR:
        if (ev && ev->type != PTD_EV_INTERRUPT)
            return -PTD_ERR_BAD_CONTEXT;
        if (ev)
            ptd_qry_ev_copy(&base, ev);
        else {
            ptd_qry_ev_copy(&base, ptd_qry_standalone(q));
            base.type = PTD_EV_INTERRUPT;
        }
        base.aux = p->aux;
        return bind_cfe(q, &base, PTD_EV_INTERRUPT, true, false);
    case PTD_CFE_VMEXIT:
    case PTD_CFE_VMEXIT_INTR:
        if (ev && ev->type != PTD_EV_VMEXIT)
            return -PTD_ERR_BAD_CONTEXT;
        if (ev)
            ptd_qry_ev_copy(&base, ev);
        else {
            ptd_qry_ev_copy(&base, ptd_qry_standalone(q));
            base.type = PTD_EV_VMEXIT;
        }
        if (p->a == PTD_CFE_VMEXIT_INTR) {
            base.flags |= PTD_EVF_HAS_VECTOR;
            base.aux = p->aux;
        }
        return bind_cfe(q, &base, PTD_EV_VMEXIT, true, false);
    default: break;
    }
    /* the other types take no EVD */
    if (ev)
        return -PTD_ERR_BAD_CONTEXT;
    ptd_qry_ev_copy(&base, ptd_qry_standalone(q));
    switch (p->a) {
    case PTD_CFE_IRET: return bind_cfe(q, NULL, PTD_EV_IRET, false, false);
    case PTD_CFE_SMI: return bind_cfe(q, NULL, PTD_EV_SMI, true, false);
    case PTD_CFE_RSM:
    case PTD_CFE_SIPI:
        /* they never carry an IP */
        if (ip)
            return -PTD_ERR_BAD_PACKET;
        if (p->a == PTD_CFE_SIPI)
            base.aux = p->aux;
        return bind_cfe(q, &base, p->a == PTD_CFE_RSM ? PTD_EV_RSM : PTD_EV_SIPI, true, true);
    case PTD_CFE_INIT: return bind_cfe(q, NULL, PTD_EV_INIT, true, false);
    case PTD_CFE_VMENTRY: return bind_cfe(q, NULL, PTD_EV_VMENTRY, false, false);
    case PTD_CFE_SHUTDOWN: return bind_cfe(q, NULL, PTD_EV_SHUTDOWN, false, false);
    case PTD_CFE_UINTR: base.aux = p->aux; return bind_cfe(q, &base, PTD_EV_UINTR, true, false);
    case PTD_CFE_UIRET: return bind_cfe(q, NULL, PTD_EV_UIRET, false, false);
    case PTD_CFE_SWINTR: base.aux = p->aux; return bind_cfe(q, &base, PTD_EV_SWINTR, true, false);
    case PTD_CFE_SYSCALL: return bind_cfe(q, NULL, PTD_EV_SYSCALL, false, false);
    default:
        /* an unknown type: passed over, and with its IP bit the FUP it
         * takes as well */
        if (ip) {
            struct ptd_event *ig = ptd_qry_enqueue(q, PTD_QRY_B_FUP_BOUND);
            if (!ig)
                return -PTD_ERR_NOMEM;
            ig->type = PTD_EV_IGNORE;
        }
        return 1;
    }
}

/* EVD: data for the CFE that follows. A second EVD of the same kind, or
 * of the other event (CR2 belongs to an interrupt, VMXQ/VMXR to a VM
 * exit), is out of context; unknown types are passed over. */
int ptd_qry_decode_evd(struct ptd_qry *q)
{
    const struct ptd_pkt *p = &q->cur;
    struct ptd_event *ev = ptd_qry_peek(q, PTD_QRY_B_CFE);

    switch (p->a) {
    case PTD_EVD_CR2:
        if (ev)
            return -PTD_ERR_BAD_CONTEXT;
        ev = ptd_qry_enqueue(q, PTD_QRY_B_CFE);
        if (!ev)
            return -PTD_ERR_NOMEM;
        ev->type = PTD_EV_INTERRUPT;
        ev->flags |= PTD_EVF_HAS_CR2;
        ev->value = p->payload;
        return 1;
    case PTD_EVD_VMXQ:
    case PTD_EVD_VMXR: {
        uint16_t has = p->a == PTD_EVD_VMXQ ? PTD_EVF_HAS_VMXQ : PTD_EVF_HAS_VMXR;
        if (!ev) {
            ev = ptd_qry_enqueue(q, PTD_QRY_B_CFE);
            if (!ev)
                return -PTD_ERR_NOMEM;
            ev->type = PTD_EV_VMEXIT;
        }
        if (ev->type != PTD_EV_VMEXIT || (ev->flags & has))
            return -PTD_ERR_BAD_CONTEXT;
        ev->flags |= has;
        if (p->a == PTD_EVD_VMXQ)
            ev->value2 = p->payload;
        else
            ev->value = p->payload;
        return 1;
    }
    default: return 1;
    }
}

/* TRIG: with its IP bit the next FUP gives the IP (ICNT must be valid and
 * 0); else standalone, with a valid ICNT counted by the flow layer from
 * the last IP packet (not with tracing off: the IP would then be given),
 * or without an IP. */
int ptd_qry_decode_trig(struct ptd_qry *q)
{
    const struct ptd_pkt *p = &q->cur;
    struct ptd_event *ev;
    bool icntv = (p->flags & PTD_PKTF_ICNTV) != 0;

    if (p->flags & PTD_PKTF_IP) {
        if (!icntv || p->aux)
            return -PTD_ERR_BAD_PACKET;
        ev = ptd_qry_enqueue(q, PTD_QRY_B_FUP_BOUND);
        if (!ev)
            return -PTD_ERR_NOMEM;
        ev->type = PTD_EV_TRIG;
        ev->a = p->a;
        if (p->flags & PTD_PKTF_MULT)
            ev->flags |= PTD_EVF_MULT;
        return 1;
    }
    ev = ptd_qry_standalone(q);
    ev->type = PTD_EV_TRIG;
    ev->a = p->a;
    if (p->flags & PTD_PKTF_MULT)
        ev->flags |= PTD_EVF_MULT;
    if (icntv) {
        if (p->aux && !q->enabled)
            return -PTD_ERR_BAD_PACKET;
        ev->aux = p->aux;
    } else {
        ev->flags |= PTD_EVF_IP_SUPPRESSED;
    }
    ptd_qry_ev_time(q, ev);
    ptd_qry_publish(q, ev);
    return ptd_qry_fetch(q);
}
