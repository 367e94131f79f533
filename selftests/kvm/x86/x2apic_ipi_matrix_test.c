// SPDX-License-Identifier: GPL-2.0-only
/*
 * The x2APIC IPI matrix: every vCPU in turn writes its ICR with each
 * combination of delivery mode (fixed, lowest priority, NMI), destination
 * mode, destination, shorthand and trigger mode, and with reserved bits set.
 * The sender asserts what the write does to its own ICR: a #GP that leaves
 * it as it was where reserved bits are set, else the value written, read
 * back.  For every write the host checks, against the model in ipi_oracle.h:
 *
 *  - path: the sender's x2apic_icr_fastpath_writes stat rose by exactly one
 *    where the platform runs the fastpath and this kernel's rule takes the
 *    write, and by zero for everything else;
 *  - outcome: every vCPU's interrupt or NMI handler saw exactly what the SDM
 *    says and nothing else.
 *
 * A round: all vCPUs are parked at a GUEST_SYNC; the host names one sender
 * and one ICR value; the others idle in HLT until the fence the host sends
 * each after the write (ipi_round.h).  All waits are bounded.
 */
#ifdef KVM_IPI_PARKED
/*
 * SMI, INIT and SIPI go to vCPUs parked in the host, where the host sees them
 * latched (KVM_GET_VCPU_EVENTS, KVM_GET_MP_STATE); it then drops the SMI, or
 * restarts the vCPUs that INIT or SIPI reset from their first instruction.
 */
#endif
#ifdef KVM_IPI_XAPIC
/*
 * After the x2APIC groups every vCPU switches to xAPIC mode, and the same
 * sends, written through the MMIO ICR2/ICR, must deliver the same way and
 * never take the fastpath.
 */
#endif
#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "ipi_oracle.h"
#include "ipi_platform.h"
#include "ipi_round.h"
#include "vcpu_stats.h"
#include "vcpu_thread.h"
#ifdef KVM_FASTPATH_SWITCH
#include <unistd.h>

#include "fastpath_switch.h"
#endif

#define NR_VCPUS	4
#define TEST_VECTOR	0xb0
#define LOW_VECTOR	0x0f	/* illegal for fixed IPIs */
#define MISSING_ID	5	/* an x2APIC ID no vCPU has */
#ifdef KVM_IPI_PARKED
#define SIPI_VECTOR	0x9f	/* start-up page 0x9f000 */
#define RESET_CS	0xf000	/* CS selector after INIT */
#endif
#define WAIT_SECONDS	60	/* any one wait */
#define MAX_WRITES	1024	/* per run */

/* Two vCPUs in logical cluster 0 and two in cluster 1. */
static const u32 apic_ids[NR_VCPUS] = { 0, 1, 16, 17 };
#ifdef KVM_IPI_XAPIC
/* xAPIC flat-model logical IDs (LDR bits 31:24). */
static const u8 flat_ldr[NR_VCPUS] = { 0x01, 0x02, 0x04, 0x08 };
#endif

enum { SYNC_PARKED = 1, SYNC_SENT };
enum {
	OP_IDLE,
	OP_SEND,
#ifdef KVM_IPI_XAPIC
	OP_TO_XAPIC,
#endif
	OP_EXIT,
};

/* What the sender's write must do to its ICR; the SDM defines no more. */
enum { ICR_ANY, ICR_WRITTEN, ICR_FAULTS };

/* Host -> guest, written only while every vCPU is parked. */
struct guest_cmd {
	u32 op;
	u32 effect;
	u64 icr;
};

static struct guest_cmd cmd[NR_VCPUS];

static void guest_send(u64 icr, u32 effect)
{
	u64 before = guest_ipi_read();
	u8 fault = guest_ipi_write(icr);
	u64 after = guest_ipi_read();

	if (effect == ICR_FAULTS)
		__GUEST_ASSERT(fault == GP_VECTOR && after == before,
			       "ICR 0x%lx: fault 0x%x, ICR 0x%lx (0x%lx before), want #GP, unchanged",
			       icr, fault, after, before);
	else if (effect == ICR_WRITTEN)
		__GUEST_ASSERT(!fault && after == icr, "ICR 0x%lx: fault 0x%x, reads back 0x%lx",
			       icr, fault, after);
}

static void guest_main(u32 me)
{
	x2apic_enable_icr_exits();
	for (;;) {
		GUEST_SYNC(SYNC_PARKED);

		switch (READ_ONCE(cmd[me].op)) {
		case OP_SEND:
			guest_send(READ_ONCE(cmd[me].icr), READ_ONCE(cmd[me].effect));
			GUEST_SYNC(SYNC_SENT);
			guest_ipi_idle_until_fenced();
			break;
		case OP_IDLE:
			guest_ipi_idle_until_fenced();
			break;
#ifdef KVM_IPI_XAPIC
		case OP_TO_XAPIC:
			xapic_enable();
			xapic_write_reg(APIC_DFR, APIC_DFR_FLAT);
			xapic_write_reg(APIC_LDR, (u32)flat_ldr[me] << 24);
			break;
#endif
		default:
			GUEST_DONE();
		}
	}
}

/* ---- the groups of writes */

enum kind { PHYSICAL, LOGICAL, SHORTHAND, RESERVED_BITS, ILLEGAL_VECTOR };

/* A group of writes: one "path" and one "outcome" point each. */
struct group {
	const char *name;
	enum kind kind;
	u64 icr;		/* all but the destination */
#ifdef KVM_IPI_XAPIC
	bool xapic;		/* written in xAPIC mode */
#endif
};

#define IPI_FIXED	(APIC_DM_FIXED | APIC_INT_ASSERT | TEST_VECTOR)
#define IPI_LOWEST	(APIC_DM_LOWEST | APIC_INT_ASSERT | TEST_VECTOR)
#define IPI_NMI		(APIC_DM_NMI | APIC_INT_ASSERT | TEST_VECTOR)
#define LEVEL		APIC_INT_LEVELTRIG
#ifdef KVM_IPI_PARKED
/* These disturb their targets: sent only to vCPUs parked in the host. */
#define IPI_SMI		(APIC_DM_SMI | APIC_INT_ASSERT)
#define IPI_INIT	(APIC_DM_INIT | APIC_INT_ASSERT)
#define IPI_STARTUP	(APIC_DM_STARTUP | APIC_INT_ASSERT | SIPI_VECTOR)
#endif

/* In the order of their KTAP points. */
static const struct group groups[] = {
	{ "fixed physical edge", PHYSICAL, IPI_FIXED },
	{ "fixed physical level", PHYSICAL, IPI_FIXED | LEVEL },
	{ "fixed logical edge", LOGICAL, IPI_FIXED },
	{ "fixed logical level", LOGICAL, IPI_FIXED | LEVEL },
	{ "fixed shorthand edge", SHORTHAND, IPI_FIXED },
	{ "fixed shorthand level", SHORTHAND, IPI_FIXED | LEVEL },
	{ "lowest-priority physical edge", PHYSICAL, IPI_LOWEST },
	{ "lowest-priority physical level", PHYSICAL, IPI_LOWEST | LEVEL },
	{ "lowest-priority logical edge", LOGICAL, IPI_LOWEST },
	{ "lowest-priority logical level", LOGICAL, IPI_LOWEST | LEVEL },
	{ "lowest-priority shorthand edge", SHORTHAND, IPI_LOWEST },
	{ "lowest-priority shorthand level", SHORTHAND, IPI_LOWEST | LEVEL },
	{ "nmi physical edge", PHYSICAL, IPI_NMI },
	{ "nmi physical level", PHYSICAL, IPI_NMI | LEVEL },
	{ "nmi logical edge", LOGICAL, IPI_NMI },
	{ "nmi logical level", LOGICAL, IPI_NMI | LEVEL },
	{ "nmi shorthand edge", SHORTHAND, IPI_NMI },
	{ "nmi shorthand level", SHORTHAND, IPI_NMI | LEVEL },
#ifdef KVM_IPI_XAPIC
	{ "xapic fixed physical edge", PHYSICAL, IPI_FIXED, true },
	{ "xapic fixed physical level", PHYSICAL, IPI_FIXED | LEVEL, true },
	{ "xapic fixed logical edge", LOGICAL, IPI_FIXED, true },
	{ "xapic fixed logical level", LOGICAL, IPI_FIXED | LEVEL, true },
	{ "xapic fixed shorthand edge", SHORTHAND, IPI_FIXED, true },
	{ "xapic fixed shorthand level", SHORTHAND, IPI_FIXED | LEVEL, true },
	{ "xapic lowest-priority physical edge", PHYSICAL, IPI_LOWEST, true },
	{ "xapic lowest-priority physical level", PHYSICAL, IPI_LOWEST | LEVEL, true },
	{ "xapic lowest-priority logical edge", LOGICAL, IPI_LOWEST, true },
	{ "xapic lowest-priority logical level", LOGICAL, IPI_LOWEST | LEVEL, true },
	{ "xapic lowest-priority shorthand edge", SHORTHAND, IPI_LOWEST, true },
	{ "xapic lowest-priority shorthand level", SHORTHAND, IPI_LOWEST | LEVEL, true },
	{ "xapic nmi physical edge", PHYSICAL, IPI_NMI, true },
	{ "xapic nmi physical level", PHYSICAL, IPI_NMI | LEVEL, true },
	{ "xapic nmi logical edge", LOGICAL, IPI_NMI, true },
	{ "xapic nmi logical level", LOGICAL, IPI_NMI | LEVEL, true },
	{ "xapic nmi shorthand edge", SHORTHAND, IPI_NMI, true },
	{ "xapic nmi shorthand level", SHORTHAND, IPI_NMI | LEVEL, true },
#endif
#ifdef KVM_IPI_PARKED
	{ "smi physical", PHYSICAL, IPI_SMI },
	{ "smi logical", LOGICAL, IPI_SMI },
	{ "smi shorthand", SHORTHAND, IPI_SMI },
	{ "init physical", PHYSICAL, IPI_INIT },
	{ "init logical", LOGICAL, IPI_INIT },
	{ "init shorthand", SHORTHAND, IPI_INIT },
	{ "startup physical", PHYSICAL, IPI_STARTUP },
	{ "startup logical", LOGICAL, IPI_STARTUP },
	{ "startup shorthand", SHORTHAND, IPI_STARTUP },
#endif
#ifdef KVM_IPI_XAPIC
	/* x2APIC only: reserved bits fault there, MMIO writes never do. */
#endif
	{ "reserved bits set", RESERVED_BITS, IPI_FIXED },
	{ "vector below 16", ILLEGAL_VECTOR, APIC_DM_FIXED | APIC_INT_ASSERT | LOW_VECTOR },
};

#define NR_GROUPS	ARRAY_SIZE(groups)

#ifdef KVM_IPI_PARKED
static bool to_parked(const struct group *g)
{
	u64 dm = g->icr & APIC_DM_FIXED_MASK;

	return dm == APIC_DM_SMI || dm == APIC_DM_INIT || dm == APIC_DM_STARTUP;
}

/* Why group @g cannot run here, or NULL. */
static const char *group_skip(const struct group *g)
{
	/* An SMI is latched only where KVM emulates SMM. */
	if ((g->icr & APIC_DM_FIXED_MASK) == APIC_DM_SMI && !kvm_has_cap(KVM_CAP_X86_SMM))
		return "no KVM_CAP_X86_SMM";
	return NULL;
}
#endif

static const u32 physical_dests[] = {
	0, 1, 16, 17,		/* each vCPU, the sender too */
	MISSING_ID,		/* nobody */
	X2APIC_BROADCAST,
};

static const u32 logical_dests[] = {
	0x00001, 0x00002, 0x10001, 0x10002,	/* each vCPU */
	0x00003, 0x10003,			/* both of a cluster */
	0x00020,				/* nobody */
	X2APIC_BROADCAST,
};
#ifdef KVM_IPI_XAPIC

/* The same in xAPIC mode, flat logical model. */
static const u8 xapic_physical_dests[] = { 0, 1, 16, 17, MISSING_ID, XAPIC_BROADCAST };

static const u8 xapic_logical_dests[] = {
	0x01, 0x02, 0x04, 0x08,		/* each vCPU */
	0x03, 0x0c,			/* both of a cluster */
	0x10,				/* nobody */
	XAPIC_BROADCAST,
};
#endif

static const u64 shorthands[] = { APIC_DEST_SELF, APIC_DEST_ALLINC, APIC_DEST_ALLBUT };
static const u64 reserved_bits[] = { BIT(13), BIT(16), BIT(17), BIT(20), BIT(31) };
#ifdef KVM_IPI_XAPIC

/* group_icrs() for a group written in xAPIC mode, the shorthands to @next. */
static unsigned int xapic_group_icrs(const struct group *g, u8 next, u64 *icrs)
{
	unsigned int i, n = 0;

	switch (g->kind) {
	case PHYSICAL:
		for (i = 0; i < ARRAY_SIZE(xapic_physical_dests); i++)
			icrs[n++] = xapic_icr_with_dest(g->icr, xapic_physical_dests[i]);
		break;
	case LOGICAL:
		for (i = 0; i < ARRAY_SIZE(xapic_logical_dests); i++)
			icrs[n++] = xapic_icr_with_dest(g->icr | APIC_DEST_LOGICAL,
							xapic_logical_dests[i]);
		break;
	case SHORTHAND:
		for (i = 0; i < ARRAY_SIZE(shorthands); i++)
			icrs[n++] = xapic_icr_with_dest(g->icr | shorthands[i], next);
		break;
	default:
		TEST_FAIL("%s: not written in xAPIC mode", g->name);
	}
	return n;
}
#endif

/*
 * The ICR values of group @g that vCPU @s writes, into @icrs; returns how
 * many.  The destination field of a shorthand must be ignored: it names the
 * next vCPU.
 */
static unsigned int group_icrs(const struct group *g, int s, u64 *icrs)
{
	u32 next = apic_ids[(s + 1) % NR_VCPUS];
	unsigned int i, n = 0;

#ifdef KVM_IPI_XAPIC
	if (g->xapic)
		return xapic_group_icrs(g, next, icrs);
#endif
	switch (g->kind) {
	case PHYSICAL:
		for (i = 0; i < ARRAY_SIZE(physical_dests); i++)
			icrs[n++] = icr_with_dest(g->icr, physical_dests[i]);
		break;
	case LOGICAL:
		for (i = 0; i < ARRAY_SIZE(logical_dests); i++)
			icrs[n++] = icr_with_dest(g->icr | APIC_DEST_LOGICAL, logical_dests[i]);
		break;
	case SHORTHAND:
		for (i = 0; i < ARRAY_SIZE(shorthands); i++)
			icrs[n++] = icr_with_dest(g->icr | shorthands[i], next);
		break;
	case RESERVED_BITS:
		for (i = 0; i < ARRAY_SIZE(reserved_bits); i++)
			icrs[n++] = icr_with_dest(g->icr | reserved_bits[i], next);
		break;
	case ILLEGAL_VECTOR:
		icrs[n++] = icr_with_dest(g->icr, next);
		break;
	}
	return n;
}

/* ---- host: vCPU threads, each runs its vCPU to the next ucall on demand */

struct vcpu_ctl {
	struct kvm_vcpu *vcpu;
	struct vcpu_thread t;
#ifdef KVM_IPI_PARKED
	struct kvm_regs first_regs;	/* to restart it after INIT / SIPI */
	struct kvm_sregs first_sregs;
#endif
};

static struct kvm_vm *vm;
static struct vcpu_ctl ctl[NR_VCPUS];
static struct guest_cmd *host_cmd;
static struct ipi_round round;

static void resume(int i)
{
	vcpu_thread_resume(&ctl[i].t);
}

/* Wait, bounded, until vCPU @i is back in the host. */
static void wait_stop(int i, const char *what)
{
	TEST_ASSERT(vcpu_thread_stopped_within(&ctl[i].t, WAIT_SECONDS),
		    "vCPU %u did not stop within %u s (%s); op %u, fences handled %u of %u",
		    apic_ids[i], WAIT_SECONDS, what, host_cmd[i].op,
		    round.tally[i].irqs[IPI_FENCE_VECTOR], round.fences_due[i]);
	TEST_ASSERT(!ctl[i].t.run_errno, "vCPU %u: KVM_RUN: %s", apic_ids[i],
		    strerror(ctl[i].t.run_errno));
}

/*
 * A vCPU that handled its fence but stays halted lost its wake-up: that
 * fails here, it is not nudged.
 */
static void wait_sync(int i, u64 want, const char *what)
{
	wait_stop(i, what);
	TEST_ASSERT(ctl[i].t.ucall == UCALL_SYNC && ctl[i].t.uc.args[1] == want,
		    "vCPU %u stopped at sync %lu, want %lu (%s)",
		    apic_ids[i], ctl[i].t.uc.args[1], want, what);
}

/* ---- a run of the matrix, and one write of it */

/* What one run of the matrix found. */
struct group_result {
	unsigned int tried, fast, path_failed;
	unsigned int outcome_checked, outcome_failed;
#ifdef KVM_IPI_XAPIC
	unsigned int known, deviated;	/* known KVM deviations, and as known */
#endif
};

struct matrix_run {
	const char *label;		/* of its KTAP points */
	struct ipi_platform platform;
	bool have_stat;
	const char *unprovable;		/* why paths are not checked, or NULL */
	struct group_result result[NR_GROUPS];
	unsigned int nr_writes, hits, slow_deliveries;
#ifdef KVM_FASTPATH_SWITCH
	struct {			/* each write, for -d */
		u64 icr;
		int sender;
		bool defined;
		u64 received;		/* bit i: vCPU i took it */
	} log[MAX_WRITES];
#endif
};

/* One ICR write and what came of it. */
struct write {
	int sender;
	u64 icr;
#ifdef KVM_IPI_XAPIC
	bool xapic;
#endif
	struct ipi_expectation want;
	int want_hits;
	u64 hits;		/* the sender's fastpath stat's rise */
	u32 got[NR_VCPUS];	/* how many times each vCPU took it */
	u32 other;		/* interrupts and NMIs it did not send, taken */
};

static struct write plan_write(const struct matrix_run *r, int s, u64 icr)
{
	struct write w = { .sender = s, .icr = icr };

#ifdef KVM_IPI_XAPIC
	if (*round.xapic) {
		w.xapic = true;
		w.want = ipi_expect_xapic(icr, s, apic_ids, flat_ldr, NR_VCPUS);
		w.want_hits = 0;	/* MMIO writes are never MSR exits */
		return w;
	}
#endif
	w.want = ipi_expect(icr, s, apic_ids, NR_VCPUS);
	w.want_hits = icr_expected_fastpath_hits(icr, &r->platform);
	return w;
}

/* The sender writes the ICR; the rise of its fastpath stat goes to @w. */
static void write_icr(const struct matrix_run *r, struct write *w)
{
	struct kvm_vcpu *vcpu = ctl[w->sender].vcpu;
	struct guest_cmd *c = &host_cmd[w->sender];
	u64 hits = ipi_fastpath_hits(vcpu, r->have_stat);

	c->op = OP_SEND;
	c->icr = w->icr;
	if (w->want.fate == IPI_FATE_GP)
		c->effect = ICR_FAULTS;
	else
		c->effect = w->want.fate == IPI_FATE_UNDEFINED ? ICR_ANY : ICR_WRITTEN;
	resume(w->sender);
	wait_sync(w->sender, SYNC_SENT, "writing the ICR");
	w->hits = ipi_fastpath_hits(vcpu, r->have_stat) - hits;
}

/* The sender writes while every other vCPU idles in HLT until its fence. */
static void send_to_idle(const struct matrix_run *r, struct write *w)
{
	struct ipi_tally before[NR_VCPUS];
	int i;

	memcpy(before, round.tally, sizeof(before));
	for (i = 0; i < NR_VCPUS; i++) {
		host_cmd[i].op = OP_IDLE;
		ipi_round_fence_due(&round, i);
		if (i != w->sender)
			resume(i);
	}
	write_icr(r, w);
	resume(w->sender);
	for (i = 0; i < NR_VCPUS; i++)
		ipi_round_fence(&round, i);
	for (i = 0; i < NR_VCPUS; i++)
		wait_sync(i, SYNC_PARKED, "waiting for the fence");
	ipi_round_collect(&round, w->icr, before, w->got, &w->other);
}

#ifdef KVM_IPI_PARKED
/* Did delivery mode @dm reach the parked vCPU @i?  Each leaves its own mark. */
static bool disturbed(int i, u64 dm)
{
	struct kvm_vcpu *vcpu = ctl[i].vcpu;
	struct kvm_vcpu_events events;
	struct kvm_mp_state mp;
	struct kvm_sregs sregs;

	if (dm == APIC_DM_SMI) {
		vcpu_events_get(vcpu, &events);
		return events.smi.pending;
	}
	/* Getting the MP state makes KVM accept pending INIT and SIPI. */
	vcpu_mp_state_get(vcpu, &mp);
	vcpu_sregs_get(vcpu, &sregs);
	if (dm == APIC_DM_INIT)
		return sregs.cs.selector == RESET_CS;
	return mp.mp_state == KVM_MP_STATE_RUNNABLE && sregs.cs.selector == SIPI_VECTOR << 8;
}

/*
 * Undo what @dm did to the parked vCPU @i: drop the SMI it latched, or
 * start it again from guest_main() after INIT or SIPI reset its registers
 * and its local APIC, which guest_main() enables again.
 */
static void recover(int i, u64 dm, bool disturbed)
{
	struct kvm_mp_state runnable = { KVM_MP_STATE_RUNNABLE };
	struct kvm_vcpu_events events;

	if (dm == APIC_DM_SMI) {
		vcpu_events_get(ctl[i].vcpu, &events);
		events.smi.pending = 0;
		vcpu_events_set(ctl[i].vcpu, &events);
	} else if (dm == APIC_DM_STARTUP || disturbed) {
		vcpu_mp_state_set(ctl[i].vcpu, &runnable);
		vcpu_sregs_set(ctl[i].vcpu, &ctl[i].first_sregs);
		vcpu_regs_set(ctl[i].vcpu, &ctl[i].first_regs);
		resume(i);
		wait_sync(i, SYNC_PARKED, "restarting after INIT");
	}
}

/*
 * An SMI, INIT or SIPI write while every other vCPU stays parked in the
 * host, so that the event stays latched there for the host to see.  For a
 * SIPI they wait for one (KVM_MP_STATE_INIT_RECEIVED) first.
 */
static void send_to_parked(const struct matrix_run *r, struct write *w)
{
	struct kvm_mp_state wait_for_sipi = { KVM_MP_STATE_INIT_RECEIVED };
	u64 dm = w->icr & APIC_DM_FIXED_MASK;
	int i;

	for (i = 0; i < NR_VCPUS; i++) {
		if (i == w->sender)
			continue;
		/* Finish the ucall's port I/O before anything resets the vCPU. */
		vcpu_run_complete_io(ctl[i].vcpu);
		if (dm == APIC_DM_STARTUP)
			vcpu_mp_state_set(ctl[i].vcpu, &wait_for_sipi);
	}
	ipi_round_fence_due(&round, w->sender);
	write_icr(r, w);
	for (i = 0; i < NR_VCPUS; i++) {
		if (i == w->sender)
			continue;
		w->got[i] = disturbed(i, dm);
		recover(i, dm, w->got[i]);
	}
	resume(w->sender);
	ipi_round_fence(&round, w->sender);
	wait_sync(w->sender, SYNC_PARKED, "waiting for the fence");
}

/*
 * An SMI, INIT or SIPI is sent only where the SDM says exactly who takes
 * it, and the sender is not among them: nothing may disturb it while it runs.
 */
static bool parked_targets_only(const struct write *w)
{
	return w->want.fate == IPI_FATE_EACH && !(w->want.targets & BIT_ULL(w->sender));
}
#endif

/* ---- the checks */

static bool received_as(const struct ipi_expectation *e, const struct write *w)
{
	return e->fate == IPI_FATE_UNDEFINED ||
	       (!w->other && ipi_received_as(e, w->got, NR_VCPUS));
}

#ifdef KVM_IPI_XAPIC
/*
 * KVM's one known deviation from the SDM here: lowest priority to the xAPIC
 * physical broadcast ID 0xff is sent as fixed, to every APIC, where the SDM
 * has one of them take it (ipi_oracle.c).  Such a group's outcome is an
 * expected failure (XFAIL) while every such write does exactly that, and
 * fails once one does anything else, the SDM's answer included (then drop
 * the mark).
 */
static bool known_deviation(const struct write *w)
{
	struct icr_fields d = icr_decode(w->icr);

	return w->xapic && d.mode == ICR_DM_LOWEST && !d.logical &&
	       d.shorthand == ICR_SH_NONE && !icr_illegal_vector(w->icr) &&
	       (u8)(w->icr >> XAPIC_DEST_SHIFT) == XAPIC_BROADCAST;
}
#endif

/* Bit i: vCPU i took it. */
static u64 received_set(const struct write *w)
{
	u64 set = 0;
	int i;

	for (i = 0; i < NR_VCPUS; i++)
		set |= w->got[i] ? BIT_ULL(i) : 0;
	return set;
}

static void print_mismatch(const struct matrix_run *r, const struct write *w)
{
	char text[128], got[64], want[64];
	int i, n;

	icr_format(w->icr, text, sizeof(text));
#ifdef KVM_IPI_XAPIC
	if (w->xapic) {
		/* xAPIC's destination (bits 63:56) where x2APIC has it. */
		n = snprintf(text, sizeof(text), "xapic ");
		icr_format((u32)w->icr | (w->icr >> XAPIC_DEST_SHIFT) << ICR_DEST_SHIFT,
			   text + n, sizeof(text) - n);
	}
#endif
	n = ipi_format_vcpus(received_set(w), apic_ids, NR_VCPUS, got, sizeof(got));
	for (i = 0; i < NR_VCPUS; i++)
		if (w->got[i] > 1)
			n += snprintf(got + n, sizeof(got) - n, ", 0x%x took it %u times",
				      apic_ids[i], w->got[i]);
	ipi_format_vcpus(w->want.targets, apic_ids, NR_VCPUS, want, sizeof(want));
	ksft_print_msg("MISMATCH %svCPU 0x%x -> %s: path %s (+%lu), want %s (+%d); "
		       "recipients %s, want %s %s; %u other interrupts\n",
		       r->label, apic_ids[w->sender], text,
		       w->hits ? "fast" : "slow", w->hits, w->want_hits > 0 ? "fast" : "slow",
		       w->want_hits, got, ipi_fate_name(w->want.fate), want, w->other);
}

static void account(struct matrix_run *r, struct group_result *res, const struct write *w)
{
	bool path_ok = r->unprovable || w->hits == (u64)w->want_hits;
	bool outcome_ok = received_as(&w->want, w);
#ifdef KVM_IPI_XAPIC
	struct ipi_expectation as_fixed = { .fate = IPI_FATE_EACH, .targets = w->want.targets };
	bool as_known = !outcome_ok && known_deviation(w) && received_as(&as_fixed, w);
#endif

	TEST_ASSERT(r->nr_writes < MAX_WRITES, "more than %d writes", MAX_WRITES);
#ifdef KVM_FASTPATH_SWITCH
	r->log[r->nr_writes].icr = w->icr;
	r->log[r->nr_writes].sender = w->sender;
	r->log[r->nr_writes].defined = w->want.fate != IPI_FATE_UNDEFINED;
	r->log[r->nr_writes].received = received_set(w);
#endif
	r->nr_writes++;
	r->hits += w->hits;
	r->slow_deliveries += !w->hits && received_set(w);

	res->tried++;
	res->fast += !!w->hits;
	res->path_failed += !path_ok;
	res->outcome_checked += w->want.fate != IPI_FATE_UNDEFINED;
#ifdef KVM_IPI_XAPIC
	res->known += known_deviation(w);
	res->deviated += as_known;
	outcome_ok |= as_known;		/* an expected failure (report_group()) */
#endif
	res->outcome_failed += !outcome_ok;
	if (!path_ok || !outcome_ok)
		print_mismatch(r, w);
}

/* Every write of group @g from every vCPU. */
static void run_group(struct matrix_run *r, const struct group *g, struct group_result *res)
{
	u64 icrs[16];
	unsigned int i, n;
	struct write w;
	int s;

#ifdef KVM_IPI_XAPIC
	if (g->xapic != *round.xapic)	/* not in this APIC mode */
		return;
#endif
#ifdef KVM_IPI_PARKED
	if (group_skip(g))
		return;
#endif
	for (s = 0; s < NR_VCPUS; s++) {
		n = group_icrs(g, s, icrs);
		for (i = 0; i < n; i++) {
			w = plan_write(r, s, icrs[i]);
#ifdef KVM_IPI_PARKED
			if (!to_parked(g))
				send_to_idle(r, &w);
			else if (parked_targets_only(&w))
				send_to_parked(r, &w);
			else
				continue;
#else
			send_to_idle(r, &w);
#endif
			account(r, res, &w);
		}
	}
}

/* ---- a run of the whole matrix, on a fresh VM */

/* The KTAP point "LABELGROUP: WHAT" of group @g in run @r. */
static void report_point(const struct matrix_run *r, const struct group *g, const char *what,
			 int code, const char *why)
{
	char name[96];
	int n = snprintf(name, sizeof(name), "%s%s: %s", r->label, g->name, what);

	TEST_ASSERT(n < sizeof(name), "the name of %s: %s is too long", g->name, what);
	ksft_test_result_code(code, name, why ? "%s" : NULL, why);
}

static void report_group(const struct matrix_run *r, unsigned int i)
{
	const struct group_result *res = &r->result[i];
	const struct group *g = &groups[i];
#ifdef KVM_IPI_PARKED
	const char *skip = group_skip(g);
#endif
#ifdef KVM_IPI_XAPIC
	struct ipi_verdict v;
#endif

#ifdef KVM_FASTPATH_SWITCH
	/* One line per group, for the test bed's tables and pictures. */
	ksft_print_msg("%spath summary: %s: %u of %u fast, %u disagree with %s\n",
		       r->label, g->name, res->fast, res->tried, res->path_failed,
		       ICR_FASTPATH_RULE);
#endif
#ifdef KVM_IPI_PARKED
	if (skip) {
		report_point(r, g, "path", KSFT_SKIP, skip);
		report_point(r, g, "outcome", KSFT_SKIP, skip);
		return;
	}
#endif
	if (r->unprovable)
		report_point(r, g, "path", KSFT_SKIP, r->unprovable);
	else
		report_point(r, g, "path", res->path_failed ? KSFT_FAIL : KSFT_PASS, NULL);

	if (!res->outcome_checked) {
		report_point(r, g, "outcome", KSFT_SKIP, "undefined by the SDM");
		return;
	}
	ksft_print_msg("%s%s: outcome: %u writes checked\n", r->label, g->name,
		       res->outcome_checked);
#ifdef KVM_IPI_XAPIC
	if (!res->outcome_failed && res->deviated < res->known)
		ksft_print_msg("%s%s: %u of %u known KVM deviations %s\n", r->label, g->name,
			       res->known - res->deviated, res->known,
			       "now follow the SDM");
	v = ipi_sdm_verdict(res->outcome_failed, res->deviated, res->known);
	report_point(r, g, "outcome", v.code, v.why);
#else
	report_point(r, g, "outcome", res->outcome_failed ? KSFT_FAIL : KSFT_PASS, NULL);
#endif
}

static void start_vcpus(struct matrix_run *r)
{
	static const u8 vectors[] = { TEST_VECTOR, LOW_VECTOR };
	char desc[192];
	int i;

	vm = vm_create(NR_VCPUS);
	for (i = 0; i < NR_VCPUS; i++) {
		ctl[i].vcpu = vm_vcpu_add(vm, apic_ids[i], guest_main);
		vcpu_args_set(ctl[i].vcpu, 1, i);
#ifdef KVM_IPI_PARKED
		vcpu_regs_get(ctl[i].vcpu, &ctl[i].first_regs);
		vcpu_sregs_get(ctl[i].vcpu, &ctl[i].first_sregs);
#endif
	}
	ipi_round_init(&round, vm, apic_ids, NR_VCPUS, vectors, ARRAY_SIZE(vectors));
	host_cmd = addr_gva2hva(vm, (gva_t)cmd);

	/* Stats fds first: they cannot be had while a vCPU runs. */
	r->have_stat = true;
	for (i = 0; i < NR_VCPUS; i++)
		r->have_stat &= vcpu_has_stat(ctl[i].vcpu, x2apic_icr_fastpath_writes);
	r->platform = ipi_platform_probe();
	r->unprovable = ipi_path_unprovable(&r->platform, r->have_stat);
	ipi_platform_describe(&r->platform, desc, sizeof(desc));
	ksft_print_msg("%splatform: %s, stat %s\n", r->label, desc,
		       r->have_stat ? ICR_FASTPATH_STAT : "absent");

	for (i = 0; i < NR_VCPUS; i++) {
		vcpu_thread_start(&ctl[i].t, ctl[i].vcpu);
		resume(i);
	}
	for (i = 0; i < NR_VCPUS; i++)
		wait_sync(i, SYNC_PARKED, "starting");
}

#ifdef KVM_IPI_XAPIC
/* Every vCPU leaves x2APIC mode for xAPIC, flat logical model. */
static void switch_to_xapic(void)
{
	int i;

	for (i = 0; i < NR_VCPUS; i++) {
		host_cmd[i].op = OP_TO_XAPIC;
		resume(i);
	}
	for (i = 0; i < NR_VCPUS; i++)
		wait_sync(i, SYNC_PARKED, "switching to xAPIC mode");
	ipi_round_to_xapic(&round);
}
#endif

static void stop_vcpus(void)
{
	int i;

	for (i = 0; i < NR_VCPUS; i++) {
		host_cmd[i].op = OP_EXIT;
		resume(i);
		wait_stop(i, "exiting");
		TEST_ASSERT(ctl[i].t.ucall == UCALL_DONE, "vCPU %u did not finish", apic_ids[i]);
		vcpu_thread_join(&ctl[i].t);
	}
	kvm_vm_free(vm);
}

static void run_matrix(struct matrix_run *r)
{
	unsigned int i;

	start_vcpus(r);
	for (i = 0; i < NR_GROUPS; i++)
		run_group(r, &groups[i], &r->result[i]);
#ifdef KVM_IPI_XAPIC
	switch_to_xapic();
	for (i = 0; i < NR_GROUPS; i++)
		run_group(r, &groups[i], &r->result[i]);
#endif
	stop_vcpus();

	ksft_print_msg("%scombinations tried: %u, fastpath hits: %u, slow-path deliveries: %u\n",
		       r->label, r->nr_writes, r->hits, r->slow_deliveries);
	for (i = 0; i < NR_GROUPS; i++)
		report_group(r, i);
}

#ifdef KVM_FASTPATH_SWITCH
/*
 * With -d, where the kernel has the kvm.x2apic_icr_fastpath switch, the
 * whole matrix runs a second time with the fastpath off: every write must
 * then take the slow path, and every vCPU must see exactly what it saw with
 * the fastpath on.  The switch is host-wide, so only on request.
 */
#define DIFFERENTIAL	"differential: fastpath on and off deliver the same"

/* Both runs must have done the same to every vCPU, write by write. */
static void compare_runs(const struct matrix_run *on, const struct matrix_run *off)
{
	unsigned int i, differ = 0, compared = 0;
	char text[128];

	TEST_ASSERT_EQ(on->nr_writes, off->nr_writes);
	for (i = 0; i < on->nr_writes; i++) {
		TEST_ASSERT(on->log[i].icr == off->log[i].icr &&
			    on->log[i].sender == off->log[i].sender,
			    "write %u differs in what was sent", i);
		/* Invalid combinations may legitimately land differently. */
		if (!on->log[i].defined)
			continue;
		compared++;
		if (on->log[i].received == off->log[i].received)
			continue;
		differ++;
		icr_format(on->log[i].icr, text, sizeof(text));
		ksft_print_msg("DIFFERS vCPU 0x%x -> %s: recipients 0x%lx on, 0x%lx off\n",
			       apic_ids[on->log[i].sender], text, on->log[i].received,
			       off->log[i].received);
	}
	ksft_print_msg("differential: %u writes compared\n", compared);
	ksft_test_result(!differ, "%s\n", DIFFERENTIAL);
}

/* The points of the run with the fastpath off, where it cannot be made. */
static void skip_run_off(const struct matrix_run *off, const char *why)
{
	unsigned int i;

	for (i = 0; i < NR_GROUPS; i++) {
		report_point(off, &groups[i], "path", KSFT_SKIP, why);
		report_point(off, &groups[i], "outcome", KSFT_SKIP, why);
	}
	ksft_test_result_code(KSFT_SKIP, DIFFERENTIAL, "%s", why);
}

#endif
#ifdef KVM_FASTPATH_SWITCH
int main(int argc, char *argv[])
#else
int main(void)
#endif
{
	static struct matrix_run on = { .label = "" };
#ifdef KVM_FASTPATH_SWITCH
	static struct matrix_run off = { .label = "fastpath off: " };
	const char *why_not;
	bool was_on = true;

	why_not = fastpath_switch_unusable(getopt(argc, argv, "d") == 'd');
#endif

	TEST_REQUIRE(kvm_has_cap(KVM_CAP_BINARY_STATS_FD));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_SIGNAL_MSI));

	ksft_print_header();
#ifdef KVM_FASTPATH_SWITCH
	ksft_set_plan(2 * 2 * NR_GROUPS + 1);
	/* With -d the first run is with the fastpath on; else as found. */
	if (!why_not)
		was_on = fastpath_switch_set(true);
#else
	ksft_set_plan(2 * NR_GROUPS);
#endif
	run_matrix(&on);

#ifdef KVM_FASTPATH_SWITCH
	if (why_not) {
		skip_run_off(&off, why_not);
	} else {
		fastpath_switch_set(false);
		run_matrix(&off);
		fastpath_switch_set(was_on);
		compare_runs(&on, &off);
	}
#endif
	ksft_finished();
}
