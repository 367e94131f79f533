// SPDX-License-Identifier: GPL-2.0-only
/*
 * The x2APIC IPI matrix: every vCPU in turn writes its ICR with each
 * combination of delivery mode, destination mode, destination, shorthand and
 * trigger mode, and with reserved bits set.  For every single write the host
 * checks, against the oracle in lib/ (ipi_oracle.h):
 *
 *  - path: the sender's x2apic_icr_fastpath_writes stat rose by exactly one
 *    where the platform runs the fastpath and the running kernel's policy
 *    takes the write (single-target: fixed, physical, no shorthand, not
 *    broadcast; fast-delivery: anything but the ALL and ALL-BUT shorthands
 *    and the broadcast ID), and by zero for everything else;
 *  - outcome: every vCPU's interrupt or NMI handler saw exactly what the SDM
 *    says and nothing else, reserved bits raised #GP in the sender, and the
 *    ICR reads back as written.
 *
 * SMI, INIT and SIPI go to vCPUs parked in the host, where the host sees them
 * latched (KVM_GET_VCPU_EVENTS, KVM_GET_MP_STATE); it then drops the SMI, or
 * restarts the vCPUs that INIT or SIPI reset from their first instruction.
 * Then every vCPU switches to xAPIC mode and the same sends, written through
 * the MMIO ICR2/ICR, must deliver the same way and never take the fastpath.
 *
 * With -d, where the kernel has the kvm.x2apic_icr_fastpath switch, the
 * whole matrix runs a second time with the fastpath off: every write must
 * then take the slow path, and every vCPU must see exactly what it saw with
 * the fastpath on.  The switch is host-wide, so only on request.
 *
 * A round: all vCPUs are parked at a GUEST_SYNC; the host names one sender
 * and one ICR value; the others idle in HLT until the fence the host sends
 * each after the write (ipi_round.h).  All waits are bounded.
 */
#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "guest_hva.h"
#include "ipi_oracle.h"
#include "ipi_platform.h"
#include "ipi_round.h"
#include "vcpu_run_within.h"
#include "vcpu_stats.h"
#include "vcpu_thread.h"

#define NR_VCPUS	4
#define TEST_VECTOR	0xb0
#define LOW_VECTOR	0x0f	/* illegal for fixed IPIs */
#define MISSING_ID	5	/* an x2APIC ID no vCPU has */
#define SIPI_VECTOR	0x9f	/* start-up page 0x9f000 */
#define RESET_CS	0xf000	/* CS selector after INIT */
#define WAIT_SECONDS	(30 * test_time_scale())	/* guest seconds, any one wait */

/* Two vCPUs in logical cluster 0 and two in cluster 1. */
static const u32 apic_ids[NR_VCPUS] = { 0, 1, 16, 17 };
/* xAPIC flat-model logical IDs (LDR bits 31:24); bit 4 is nobody's. */
static const u8 flat_ldr[NR_VCPUS] = { 0x01, 0x02, 0x04, 0x08 };
#define FLAT_NOBODY	0x10

#define XAPIC_LDR	0xd0
#define XAPIC_DFR	0xe0
#define XAPIC_DFR_FLAT	0xffffffff

enum { SYNC_PARKED = 1, SYNC_SENT };
enum { OP_IDLE, OP_SEND, OP_TO_XAPIC, OP_EXIT };

/* Host -> guest, written only while every vCPU is parked. */
struct guest_cmd {
	u32 op;
	u64 icr;
};

static struct guest_cmd cmd[NR_VCPUS];

static void guest_main(u32 me)
{
	x2apic_enable();

	for (;;) {
		GUEST_SYNC(SYNC_PARKED);

		switch (READ_ONCE(cmd[me].op)) {
		case OP_SEND:
			guest_ipi_write(READ_ONCE(cmd[me].icr));
			GUEST_SYNC(SYNC_SENT);
			guest_ipi_idle_until_fenced();
			break;
		case OP_TO_XAPIC:
			xapic_enable();
			xapic_write_reg(XAPIC_DFR, XAPIC_DFR_FLAT);
			xapic_write_reg(XAPIC_LDR, (u32)flat_ldr[me] << 24);
			break;
		case OP_IDLE:
			guest_ipi_idle_until_fenced();
			break;
		default:
			GUEST_DONE();
		}
	}
}

/* ---- host: vCPU threads, each runs its vCPU to the next ucall on demand */

struct vcpu_ctl {
	struct kvm_vcpu *vcpu;
	struct vcpu_thread t;
	struct kvm_regs first_regs;	/* to restart it after INIT / SIPI */
	struct kvm_sregs first_sregs;
	u64 icr;		/* its ICR as last written without fault */
};

static struct kvm_vm *vm;
static struct vcpu_ctl ctl[NR_VCPUS];
static struct guest_cmd *host_cmd;
static struct ipi_round round;
static struct ipi_platform platform;
static bool have_stat;

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

static void wait_sync(int i, u64 want, const char *what)
{
	wait_stop(i, what);
	TEST_ASSERT(ctl[i].t.ucall == UCALL_SYNC && ctl[i].t.uc.args[1] == want,
		    "vCPU %u stopped at sync %lu, want %lu (%s)",
		    apic_ids[i], ctl[i].t.uc.args[1], want, what);
}

/*
 * Wait until vCPU @i parks after its fence.  A vCPU that handled its fence
 * but stays halted lost its wake-up: that fails, it is not nudged.
 */
static void wait_parked(int i)
{
	wait_sync(i, SYNC_PARKED, "waiting for the fence");
}

/* ---- the matrix */

enum group_kind { KIND_PHYSICAL, KIND_LOGICAL, KIND_SHORTHAND, NR_KINDS };
static const char * const kind_names[] = { "physical", "logical", "shorthand" };
static const u64 modes[] = { APIC_DM_FIXED, APIC_DM_LOWEST, APIC_DM_NMI };
static const char * const mode_names[] = { "fixed", "lowest-priority", "nmi" };
#define NR_MODES ARRAY_SIZE(modes)

struct group {
	char name[64];
	unsigned int tried, path_failed, outcome_failed;
	unsigned int path_checked, outcome_checked;
	unsigned int known, deviated;	/* known KVM deviations, and as known */
	unsigned int fast;	/* writes the stat saw take the fastpath */
	const char *skip;	/* why the group is not run, if it is not */
};

/* Modes that disturb their target: sent only to vCPUs parked in the host. */
enum { DIS_SMI, DIS_INIT, DIS_SIPI, NR_DISRUPTIVE };
static const u64 dis_modes[] = { APIC_DM_SMI, APIC_DM_INIT, APIC_DM_STARTUP | SIPI_VECTOR };
static const char * const dis_names[] = { "smi", "init", "startup" };

/*
 * Groups: APIC mode x delivery mode x kind x trigger; disruptive mode x kind;
 * reserved bits; illegal vectors.
 */
#define NR_PLAIN_GROUPS		(2 * NR_MODES * NR_KINDS * 2)
#define GROUP_DISRUPTIVE(m, k)	(NR_PLAIN_GROUPS + (m) * NR_KINDS + (k))
#define GROUP_RESERVED		GROUP_DISRUPTIVE(NR_DISRUPTIVE, 0)
#define GROUP_LOW_VEC		(GROUP_RESERVED + 1)
#define NR_GROUPS		(GROUP_LOW_VEC + 1)

static struct group groups[NR_GROUPS];

/* What each round did, per run: the differential run compares them. */
struct outcome {
	u64 icr;
	u64 got_set;
	u64 readback;
	u32 fault;
	int sender;
	bool defined;
};

#define MAX_ROUNDS	1024
enum { RUN_AS_CONFIGURED, RUN_FASTPATH_OFF, NR_RUNS };
static struct outcome outcomes[NR_RUNS][MAX_ROUNDS];
static int run;
static const char *run_label = "";
#define OFF_LABEL	"fastpath off: "
#define DIFFERENTIAL	"differential: fastpath on and off deliver the same"
#define SHADOW_POINT	"none taken inside STI's shadow"
static unsigned int total_rounds, total_hits, slow_deliveries;

static bool xapic_phase;

static unsigned int group_of(bool xapic, int mode, enum group_kind kind, bool level)
{
	return ((xapic * NR_MODES + mode) * NR_KINDS + kind) * 2 + level;
}

static void init_groups(void)
{
	/* An SMI is latched only where KVM emulates SMM. */
	const char *smi_skip = kvm_has_cap(KVM_CAP_X86_SMM) ? NULL : "no KVM_CAP_X86_SMM";
	int x, m, k, l;

	for (x = 0; x < 2; x++)
		for (m = 0; m < NR_MODES; m++)
			for (k = 0; k < NR_KINDS; k++)
				for (l = 0; l < 2; l++)
					snprintf(groups[group_of(x, m, k, l)].name,
						 sizeof(groups[0].name), "%s%s %s %s",
						 x ? "xapic " : "", mode_names[m],
						 kind_names[k], l ? "level" : "edge");
	for (m = 0; m < NR_DISRUPTIVE; m++)
		for (k = 0; k < NR_KINDS; k++) {
			snprintf(groups[GROUP_DISRUPTIVE(m, k)].name, sizeof(groups[0].name),
				 "%s %s", dis_names[m], kind_names[k]);
			if (m == DIS_SMI)
				groups[GROUP_DISRUPTIVE(m, k)].skip = smi_skip;
		}
	snprintf(groups[GROUP_RESERVED].name, sizeof(groups[0].name), "reserved bits set");
	snprintf(groups[GROUP_LOW_VEC].name, sizeof(groups[0].name), "vector below 16");
}

/*
 * Check one round's observations; returns the set of vCPUs that received
 * the IPI and sets *outcome_ok.
 */
static u64 check_outcome(u64 icr, int s, const struct ipi_expectation *e,
			      const struct ipi_tally *before, bool *outcome_ok,
			      char *why, size_t size)
{
	u32 got[NR_VCPUS], other;
	u64 got_set = 0;
	int i;

	ipi_round_collect(&round, icr, before, got, &other);
	for (i = 0; i < NR_VCPUS; i++)
		if (got[i])
			got_set |= 1ULL << i;

	*outcome_ok = true;
	why[0] = 0;
	switch (e->fate) {
	case IPI_FATE_GP:
		if (round.tally[s].fault != GP_VECTOR) {
			snprintf(why, size, "fault 0x%x, want #GP", round.tally[s].fault);
			*outcome_ok = false;
		} else if (round.tally[s].readback != ctl[s].icr) {
			snprintf(why, size, "faulting write changed the ICR to 0x%lx",
				 round.tally[s].readback);
			*outcome_ok = false;
		}
		break;
	case IPI_FATE_EACH:
	case IPI_FATE_ONE_OF:
		if (round.tally[s].fault) {
			snprintf(why, size, "fault 0x%x, want none", round.tally[s].fault);
			*outcome_ok = false;
		} else if ((round.tally[s].readback & ~ICR_DELIVERY_STATUS) != icr) {
			snprintf(why, size, "ICR reads back 0x%lx", round.tally[s].readback);
			*outcome_ok = false;
		}
		break;
	case IPI_FATE_UNDEFINED:
		return got_set;
	}
	if (!*outcome_ok)
		return got_set;

	for (i = 0; i < NR_VCPUS; i++)
		if (got[i] > 1)
			snprintf(why, size, "vCPU 0x%x handled it %u times",
				 apic_ids[i], got[i]);
	*outcome_ok = ipi_received_as(e, got, NR_VCPUS);
	if (other) {
		snprintf(why, size, "%u other interrupts", other);
		*outcome_ok = false;
	}
	return got_set;
}

static void record_outcome(int s, u64 icr, u64 got_set,
			   const struct ipi_expectation *e)
{
	struct outcome *o = &outcomes[run][total_rounds - 1];

	TEST_ASSERT(total_rounds <= MAX_ROUNDS, "more than %d rounds", MAX_ROUNDS);
	o->icr = icr;
	o->sender = s;
	o->got_set = got_set;
	o->fault = round.tally[s].fault;
	o->readback = round.tally[s].readback;
	o->defined = e->fate != IPI_FATE_UNDEFINED;
}

/* Account one round in its group; report it if its path or outcome is wrong. */
static void finish_round(unsigned int group, int s, u64 icr,
			 const struct ipi_expectation *e, int want_hits, u64 hits,
			 u64 got_set, bool outcome_ok, const char *why)
{
	struct group *g = &groups[group];
	char text[128], got_s[64], want_s[64];
	bool path_ok = true;

	g->tried++;
	g->fast += !!hits;
	total_rounds++;
	total_hits += hits;
	if (!ipi_path_unprovable(&platform, have_stat)) {
		g->path_checked++;
		path_ok = hits == (u64)want_hits;
	}
	if (e->fate != IPI_FATE_UNDEFINED)
		g->outcome_checked++;
	record_outcome(s, icr, got_set, e);
	if (!hits && got_set)
		slow_deliveries++;
	if (!round.tally[s].fault)
		ctl[s].icr = icr;

	if (path_ok && outcome_ok)
		return;
	g->path_failed += !path_ok;
	g->outcome_failed += !outcome_ok;
	icr_format(xapic_phase ? (u32)icr | (icr >> XAPIC_DEST_SHIFT) << 32 : icr,
		   text, sizeof(text));
	ipi_format_vcpus(got_set, apic_ids, NR_VCPUS, got_s, sizeof(got_s));
	ipi_format_vcpus(e->targets, apic_ids, NR_VCPUS, want_s, sizeof(want_s));
	ksft_print_msg("MISMATCH vCPU 0x%x -> %s%s: path %s (+%lu), want %s (+%d); "
		       "recipients %s, want %s %s%s%s\n",
		       apic_ids[s], xapic_phase ? "xapic " : "", text, hits ? "fast" : "slow", hits,
		       want_hits > 0 ? "fast" : "slow", want_hits, got_s,
		       ipi_fate_name(e->fate), want_s, why[0] ? "; " : "", why);
}

/*
 * KVM's one known deviation from the SDM here: lowest priority to the xAPIC
 * physical broadcast ID 0xff is sent as fixed, to every APIC, where the SDM
 * has one of them take it (ipi_oracle.c).  What KVM is known to do goes to
 * @kvm.  Such a group's outcome is an expected failure (XFAIL) while every
 * such write does exactly that, and fails once one does anything else, the
 * SDM's answer included (then drop the mark).
 */
static bool known_deviation(u64 icr, const struct ipi_expectation *e,
			    struct ipi_expectation *kvm)
{
	struct icr_fields d = icr_decode(icr);

	if (!xapic_phase || d.mode != ICR_DM_LOWEST || d.logical ||
	    d.shorthand != ICR_SH_NONE || icr_illegal_vector(icr) ||
	    (u8)(icr >> XAPIC_DEST_SHIFT) != XAPIC_BROADCAST)
		return false;
	*kvm = *e;
	kvm->fate = IPI_FATE_EACH;
	return true;
}

static void round_one(int s, u64 icr, unsigned int group)
{
	struct ipi_expectation e = xapic_phase ?
		ipi_expect_xapic(icr, s, apic_ids, flat_ldr, NR_VCPUS) :
		ipi_expect(icr, s, apic_ids, NR_VCPUS);
	/* MMIO writes of the xAPIC ICR are never MSR exits. */
	int want_hits = xapic_phase ? 0 : icr_expected_fastpath_hits(icr, &platform);
	struct ipi_tally before[NR_VCPUS];
	struct ipi_expectation kvm;
	u64 hits, got_set;
	bool outcome_ok, as_known;
	char why[64], kvm_why[64];
	int i;

	memcpy(before, round.tally, sizeof(before));
	for (i = 0; i < NR_VCPUS; i++) {
		host_cmd[i].op = i == s ? OP_SEND : OP_IDLE;
		host_cmd[i].icr = icr;
		ipi_round_fence_due(&round, i);
	}

	hits = ipi_fastpath_hits(ctl[s].vcpu, have_stat);
	for (i = 0; i < NR_VCPUS; i++)
		resume(i);
	wait_sync(s, SYNC_SENT, "writing the ICR");
	hits = ipi_fastpath_hits(ctl[s].vcpu, have_stat) - hits;
	resume(s);

	for (i = 0; i < NR_VCPUS; i++)
		ipi_round_fence(&round, i);
	for (i = 0; i < NR_VCPUS; i++)
		wait_parked(i);

	got_set = check_outcome(icr, s, &e, before, &outcome_ok, why, sizeof(why));
	if (known_deviation(icr, &e, &kvm)) {
		groups[group].known++;
		check_outcome(icr, s, &kvm, before, &as_known, kvm_why, sizeof(kvm_why));
		if (!outcome_ok && as_known) {
			groups[group].deviated++;
			outcome_ok = true;
		}
	}
	finish_round(group, s, icr, &e, want_hits, hits, got_set, outcome_ok, why);
}

/* Every ICR value the vCPU at index @s sends, tagged with its group. */
static void run_sender(int s)
{
	static const u64 shorthands[] = {
		APIC_DEST_SELF, APIC_DEST_ALLINC, APIC_DEST_ALLBUT
	};
	static const u64 reserved[] = {
		1ULL << 13, 1ULL << 16, 1ULL << 17, 1ULL << 20, 1ULL << 31,
	};
	u32 phys[NR_VCPUS + 2], logical[NR_VCPUS + 4];
	u32 other = apic_ids[(s + 1) % NR_VCPUS];
	int m, l, i, nphys = 0, nlog = 0;
	bool x = xapic_phase;

	for (i = 0; i < NR_VCPUS; i++) {
		phys[nphys++] = apic_ids[i];			/* each, self included */
		logical[nlog++] = x ? flat_ldr[i] : x2apic_logical_id(apic_ids[i]);
	}
	phys[nphys++] = MISSING_ID;
	phys[nphys++] = x ? XAPIC_BROADCAST : X2APIC_BROADCAST;
	if (x) {
		logical[nlog++] = flat_ldr[0] | flat_ldr[1];	/* several bits */
		logical[nlog++] = flat_ldr[2] | flat_ldr[3];
		logical[nlog++] = FLAT_NOBODY;
		logical[nlog++] = XAPIC_BROADCAST;
	} else {
		logical[nlog++] = x2apic_logical_id(apic_ids[0]) | x2apic_logical_id(apic_ids[1]);
		logical[nlog++] = x2apic_logical_id(apic_ids[2]) | x2apic_logical_id(apic_ids[3]);
		logical[nlog++] = x2apic_logical_id(MISSING_ID);	/* nobody */
		logical[nlog++] = X2APIC_BROADCAST;
	}

	for (m = 0; m < NR_MODES; m++) {
		for (l = 0; l < 2; l++) {
			u64 base = modes[m] | APIC_INT_ASSERT | TEST_VECTOR |
					(l ? APIC_INT_LEVELTRIG : 0);

			for (i = 0; i < nphys; i++)
				round_one(s, icr_with_dest(base, phys[i], x),
					  group_of(x, m, KIND_PHYSICAL, l));
			for (i = 0; i < nlog; i++)
				round_one(s, icr_with_dest(base | APIC_DEST_LOGICAL, logical[i], x),
					  group_of(x, m, KIND_LOGICAL, l));
			/* The destination field must be ignored: aim it elsewhere. */
			for (i = 0; i < ARRAY_SIZE(shorthands); i++)
				round_one(s, icr_with_dest(base | shorthands[i], other, x),
					  group_of(x, m, KIND_SHORTHAND, l));
		}
	}
	if (x)
		return;

	/* x2APIC only: reserved bits fault there, MMIO writes never do. */
	for (i = 0; i < ARRAY_SIZE(reserved); i++)
		round_one(s, icr_with_dest(APIC_DM_FIXED | APIC_INT_ASSERT | TEST_VECTOR |
					   reserved[i], other, x), GROUP_RESERVED);
	round_one(s, icr_with_dest(APIC_DM_FIXED | APIC_INT_ASSERT | LOW_VECTOR, other, x),
		  GROUP_LOW_VEC);
}

/* Did @mode reach the parked vCPU @i?  What each leaves behind is distinct. */
static bool disturbed(int i, int mode)
{
	struct kvm_vcpu *vcpu = ctl[i].vcpu;
	struct kvm_vcpu_events events;
	struct kvm_mp_state mp;
	struct kvm_sregs sregs;

	if (mode == DIS_SMI) {
		vcpu_events_get(vcpu, &events);
		return events.smi.pending;
	}
	/* Getting the MP state makes KVM accept pending INIT and SIPI. */
	vcpu_mp_state_get(vcpu, &mp);
	vcpu_sregs_get(vcpu, &sregs);
	if (mode == DIS_INIT)
		return sregs.cs.selector == RESET_CS;
	return mp.mp_state == KVM_MP_STATE_RUNNABLE &&
	       sregs.cs.selector == SIPI_VECTOR << 8;
}

/* Drop the SMI latched by a vCPU that never ran since. */
static void drop_smi(int i)
{
	struct kvm_vcpu_events events;

	vcpu_events_get(ctl[i].vcpu, &events);
	events.smi.pending = 0;
	vcpu_events_set(ctl[i].vcpu, &events);
}

/*
 * Start vCPU @i again from guest_main(): INIT (or SIPI) reset its registers
 * and its local APIC, which guest_main() enables again.
 */
static void restart(int i)
{
	struct kvm_mp_state runnable = { KVM_MP_STATE_RUNNABLE };

	vcpu_mp_state_set(ctl[i].vcpu, &runnable);
	vcpu_sregs_set(ctl[i].vcpu, &ctl[i].first_sregs);
	vcpu_regs_set(ctl[i].vcpu, &ctl[i].first_regs);
	resume(i);
	wait_sync(i, SYNC_PARKED, "restarting after INIT");
}

/*
 * One SMI, INIT or SIPI write by vCPU @s while every other vCPU stays parked
 * in the host, so the event stays latched there for the host to see.  For
 * SIPI the others wait for it (KVM_MP_STATE_INIT_RECEIVED) first.
 */
static void round_disruptive(int s, int mode, u64 icr, unsigned int group)
{
	struct ipi_expectation e = ipi_expect(icr, s, apic_ids, NR_VCPUS);
	int want_hits = icr_expected_fastpath_hits(icr, &platform);
	struct kvm_mp_state wait_for_sipi = { KVM_MP_STATE_INIT_RECEIVED };
	u64 hits, got_set = 0;
	bool outcome_ok;
	char why[64];
	int i;

	for (i = 0; i < NR_VCPUS; i++) {
		if (i == s)
			continue;
		/* Finish the ucall's port I/O before anything resets the vCPU. */
		vcpu_run_complete_io(ctl[i].vcpu);
		if (mode == DIS_SIPI)
			vcpu_mp_state_set(ctl[i].vcpu, &wait_for_sipi);
	}
	host_cmd[s].op = OP_SEND;
	host_cmd[s].icr = icr;
	ipi_round_fence_due(&round, s);

	hits = ipi_fastpath_hits(ctl[s].vcpu, have_stat);
	resume(s);
	wait_sync(s, SYNC_SENT, "writing the ICR");
	hits = ipi_fastpath_hits(ctl[s].vcpu, have_stat) - hits;

	for (i = 0; i < NR_VCPUS; i++) {
		if (i == s)
			continue;
		if (disturbed(i, mode))
			got_set |= 1ULL << i;
		if (mode == DIS_SMI)
			drop_smi(i);
		else if (mode == DIS_SIPI || (got_set & (1ULL << i)))
			restart(i);
	}
	resume(s);
	ipi_round_fence(&round, s);
	wait_parked(s);

	outcome_ok = e.fate == IPI_FATE_EACH && !round.tally[s].fault &&
		     round.tally[s].readback == icr && got_set == e.targets;
	snprintf(why, sizeof(why), "fault 0x%x, ICR reads 0x%lx",
		 round.tally[s].fault, round.tally[s].readback);
	finish_round(group, s, icr, &e, want_hits, hits, got_set, outcome_ok,
		     outcome_ok ? "" : why);
}

/* SMI, INIT and SIPI from vCPU @s, to destinations that leave @s out. */
static void run_disruptive_sender(int s)
{
	u32 pair = s < 2 ? x2apic_logical_id(apic_ids[2]) | x2apic_logical_id(apic_ids[3]) :
			x2apic_logical_id(apic_ids[0]) | x2apic_logical_id(apic_ids[1]);
	int m, i;

	for (m = 0; m < NR_DISRUPTIVE; m++) {
		u64 base = dis_modes[m] | APIC_INT_ASSERT;

		if (groups[GROUP_DISRUPTIVE(m, 0)].skip)
			continue;
		for (i = 0; i < NR_VCPUS; i++) {
			if (i == s)
				continue;
			round_disruptive(s, m, icr_with_dest(base, apic_ids[i], false),
					 GROUP_DISRUPTIVE(m, KIND_PHYSICAL));
			round_disruptive(s, m, icr_with_dest(base | APIC_DEST_LOGICAL,
							     x2apic_logical_id(apic_ids[i]), false),
					 GROUP_DISRUPTIVE(m, KIND_LOGICAL));
		}
		round_disruptive(s, m, icr_with_dest(base, MISSING_ID, false),
				 GROUP_DISRUPTIVE(m, KIND_PHYSICAL));
		round_disruptive(s, m, icr_with_dest(base | APIC_DEST_LOGICAL, pair, false),
				 GROUP_DISRUPTIVE(m, KIND_LOGICAL));
		round_disruptive(s, m, base | APIC_DEST_ALLBUT,
				 GROUP_DISRUPTIVE(m, KIND_SHORTHAND));
	}
}

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
	xapic_phase = true;
}

/* "LABELGROUP: WHAT", the name of a group's point in a run. */
static void point_name(char *buf, size_t size, const char *label, const char *group,
		       const char *what)
{
	TEST_ASSERT(snprintf(buf, size, "%s%s: %s", label, group, what) < size,
		    "the name of %s: %s is too long", group, what);
}

static void report_groups(void)
{
	char path[128], outcome[128];
	const char *why_skip;
	int i;

	for (i = 0; i < NR_GROUPS; i++) {
		struct group *g = &groups[i];

		why_skip = ipi_path_unprovable(&platform, have_stat);
		/* One line per group, for tables and pictures. */
		ksft_print_msg("%spath summary: %s: %u of %u fast, %u disagree with %s%s\n",
			       run_label, g->name, g->fast, g->tried, g->path_failed,
			       ipi_platform_policy_name(&platform),
			       getenv("KVM_IPI_POLICY") ? " (forced)" : "");
		point_name(path, sizeof(path), run_label, g->name, "path");
		point_name(outcome, sizeof(outcome), run_label, g->name, "outcome");
		if (g->skip) {
			ksft_test_result_code(KSFT_SKIP, path, "%s", g->skip);
			ksft_test_result_code(KSFT_SKIP, outcome, "%s", g->skip);
			continue;
		}
		ksft_print_msg("%s: %u writes checked; outcome: %u writes checked\n", path,
			       g->path_checked, g->outcome_checked);
		if (!g->path_checked)
			ksft_test_result_code(KSFT_SKIP, path, "%s", why_skip);
		else
			ksft_test_result(!g->path_failed, "%s\n", path);

		if (!g->outcome_checked)
			ksft_test_result_code(KSFT_SKIP, outcome, "undefined by the SDM");
		else
			ipi_test_result(ipi_sdm_verdict(g->outcome_failed, g->deviated,
							g->known, outcome), outcome);
	}
}

/* The whole matrix, on a fresh VM, with the platform as it is now. */
/*
 * Every interrupt and NMI came at an instruction boundary outside STI's
 * shadow (guest_idle.h): one taken at the NOP of "sti; nop; hlt" would, on
 * a CPU that breaks the shadow, turn into a lost wake-up.
 */
static void report_shadow(void)
{
	u32 n = 0;
	int i;

	for (i = 0; i < NR_VCPUS; i++) {
		if (round.tally[i].in_shadow)
			ksft_print_msg("%svCPU 0x%x took %u interrupts inside STI's shadow\n",
				       run_label, apic_ids[i], round.tally[i].in_shadow);
		n += round.tally[i].in_shadow;
	}
	ksft_test_result(!n, "%s" SHADOW_POINT "\n", run_label);
}

static void run_matrix(void)
{
	static const u8 vectors[] = { TEST_VECTOR, LOW_VECTOR };
	char desc[192];
	int i;

	memset(ctl, 0, sizeof(ctl));
	memset(groups, 0, sizeof(groups));
	init_groups();
	total_rounds = 0;
	total_hits = 0;
	slow_deliveries = 0;
	xapic_phase = false;
	platform = ipi_platform_probe();

	vm = vm_create(NR_VCPUS);
	for (i = 0; i < NR_VCPUS; i++) {
		ctl[i].vcpu = vm_vcpu_add(vm, apic_ids[i], guest_main);
		vcpu_args_set(ctl[i].vcpu, 1, i);
		vcpu_regs_get(ctl[i].vcpu, &ctl[i].first_regs);
		vcpu_sregs_get(ctl[i].vcpu, &ctl[i].first_sregs);
	}
	ipi_round_init(&round, vm, apic_ids, NR_VCPUS, vectors, ARRAY_SIZE(vectors));
	host_cmd = guest_hva(vm, cmd, sizeof(cmd));

	/* Stats fds first: they cannot be had while a vCPU runs. */
	have_stat = true;
	for (i = 0; i < NR_VCPUS; i++)
		have_stat &= vcpu_has_stat(ctl[i].vcpu, x2apic_icr_fastpath_writes);
	ipi_platform_describe(&platform, desc, sizeof(desc));
	ksft_print_msg("%splatform: %s, stat %s\n", run_label, desc,
		       have_stat ? ICR_FASTPATH_STAT : "absent");

	for (i = 0; i < NR_VCPUS; i++) {
		vcpu_thread_start(&ctl[i].t, ctl[i].vcpu);
		resume(i);
	}
	for (i = 0; i < NR_VCPUS; i++)
		wait_sync(i, SYNC_PARKED, "starting");

	for (i = 0; i < NR_VCPUS; i++)
		run_sender(i);
	for (i = 0; i < NR_VCPUS; i++)
		run_disruptive_sender(i);
	switch_to_xapic();
	for (i = 0; i < NR_VCPUS; i++)
		run_sender(i);

	ksft_print_msg("%scombinations tried: %u, fastpath hits: %u, slow-path deliveries: %u\n",
		       run_label, total_rounds, total_hits, slow_deliveries);
	report_groups();
	report_shadow();

	for (i = 0; i < NR_VCPUS; i++) {
		host_cmd[i].op = OP_EXIT;
		resume(i);
		wait_stop(i, "exiting");
		TEST_ASSERT(ctl[i].t.ucall == UCALL_DONE, "vCPU %u did not finish", apic_ids[i]);
		vcpu_thread_join(&ctl[i].t);
	}
	kvm_vm_free(vm);
}

/* Both runs must have done the same thing to every vCPU, round by round. */
static void compare_runs(unsigned int nr_rounds)
{
	unsigned int r, differ = 0, compared = 0;
	char text[128];

	for (r = 0; r < nr_rounds; r++) {
		struct outcome *on = &outcomes[RUN_AS_CONFIGURED][r];
		struct outcome *off = &outcomes[RUN_FASTPATH_OFF][r];

		TEST_ASSERT(on->icr == off->icr && on->sender == off->sender,
			    "round %u differs in what was sent", r);
		/* Invalid combinations may legitimately land differently. */
		if (!on->defined)
			continue;
		compared++;
		if (on->got_set == off->got_set && on->fault == off->fault &&
		    on->readback == off->readback)
			continue;
		differ++;
		icr_format(on->icr, text, sizeof(text));
		ksft_print_msg("DIFFERS vCPU 0x%x -> %s\n", apic_ids[on->sender], text);
		ksft_print_msg("  fastpath on / off: recipients 0x%lx / 0x%lx, fault 0x%x / 0x%x\n",
			       on->got_set, off->got_set, on->fault, off->fault);
	}
	ksft_print_msg("differential: %u writes compared\n", compared);
	ksft_test_result(!differ, "%s\n", DIFFERENTIAL);
}

/* The points of the run with the fastpath off, where it cannot be made. */
static void skip_run_off(const char *why)
{
	char name[128];
	int i;

	for (i = 0; i < NR_GROUPS; i++) {
		point_name(name, sizeof(name), OFF_LABEL, groups[i].name, "path");
		ksft_test_result_code(KSFT_SKIP, name, "%s", why);
		point_name(name, sizeof(name), OFF_LABEL, groups[i].name, "outcome");
		ksft_test_result_code(KSFT_SKIP, name, "%s", why);
	}
	ksft_test_result_code(KSFT_SKIP, OFF_LABEL SHADOW_POINT, "%s", why);
	ksft_test_result_code(KSFT_SKIP, DIFFERENTIAL, "%s", why);
}

int main(int argc, char *argv[])
{
	bool differential = ipi_differential_option(argc, argv);
	unsigned int nr_rounds;
	const char *why_not;

	TEST_REQUIRE(kvm_has_cap(KVM_CAP_BINARY_STATS_FD));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_SIGNAL_MSI));
	why_not = ipi_fastpath_off_unavailable(differential);

	ksft_print_header();
	ksft_set_plan(2 * (2 * NR_GROUPS + 1) + 1);

	/* With -d the first run is with the fastpath on; else as found. */
	if (!why_not)
		ipi_fastpath_switch_set(true);
	run = RUN_AS_CONFIGURED;
	run_matrix();
	nr_rounds = total_rounds;

	if (why_not) {
		skip_run_off(why_not);
		ksft_finished();
	}

	ipi_fastpath_switch_set(false);
	run = RUN_FASTPATH_OFF;
	run_label = OFF_LABEL;
	run_matrix();
	TEST_ASSERT_EQ(total_rounds, nr_rounds);

	compare_runs(nr_rounds);
	ksft_finished();
}
