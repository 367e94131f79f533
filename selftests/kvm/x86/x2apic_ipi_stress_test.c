// SPDX-License-Identifier: GPL-2.0-only
/*
 * IPI stress under disruption.  Every vCPU sends a long random stream of
 * IPIs of every kind (fixed physical, lowest-priority, logical, shorthand,
 * broadcast and NMI ones, of which KVM's ICR fastpath takes those this
 * kernel's rule says) to random targets, while it and the others randomly
 * halt, mask interrupts, raise their TPR and acknowledge late.
 *
 * The run is cut into epochs of two sorts:
 *  - checked epochs: nothing may be lost, duplicated or misdirected, and the
 *    fastpath stats must rise by what the oracle predicts.  Meanwhile the
 *    host keeps interrupting random vCPUs: it pauses them, rewrites their
 *    APIC base with its own value and reads their local APIC and events.
 *  - chaos epochs: the host moves random running vCPUs between x2APIC, xAPIC
 *    and disabled, gives them new xAPIC IDs, tries new x2APIC IDs, and
 *    rewrites their local APIC and event state, all while IPIs fly.  IPIs
 *    may be lost then; the host kernel must stay clean, and every vCPU must
 *    write the ICR at least ops / 2 times, come back to the host, and read
 *    back the x2APIC mode and IDs the host settles it into.  The next
 *    checked epoch must deliver exactly again.
 *
 * Loss and duplication stay visible despite the coalescing of equal vectors
 * in the IRR: every sender has a vector of its own, and before it sends it
 * announces the IPI to each vCPU the oracle (ipi_oracle.h) says must receive
 * it, then waits until each of them took it back before it sends to them
 * again.  NMIs carry no vector: a sender claims a target's one NMI slot.  So
 * at most one IPI of a given vector is in flight to a vCPU at any time, and
 *  - a lost IPI is a sender that waits in vain (a bounded wait: it fails);
 *  - a duplicated or misdirected one is an interrupt nobody announced;
 *  - at the end of the epoch the host checks, per sender and target, that
 *    what was sent was received.
 *
 * Usage: x2apic_ipi_stress_test [-v vCPUs] [-o operations] [-s seed]
 *   -v defaults to one vCPU per host CPU the test may run on, 2 to 8: no
 *   overcommit where there are two CPUs or more.
 *   -o is per vCPU and epoch.  More operations make more races, but every
 *   epoch must end within EPOCH_SECONDS, and the whole test within the
 *   kselftest runner's timeout (kvm/settings).
 */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "ipi_oracle.h"
#include "ipi_platform.h"
#include "vcpu_stats.h"

#define MAX_VCPUS		16
#define MAX_DEFAULT_VCPUS	8
#define DEFAULT_OPS		40	/* per vCPU and epoch */
#define SENDER_VECTOR(s)	(0x40 + (s) * 8)	/* classes 4 to 0xb */
#define TIMER_VECTOR		0xe0	/* ends every halt */
#define SPURIOUS_VECTOR		0xff
#define WAIT_SECONDS		5	/* any guest wait */
/* The host's wait for an epoch: a hung one fails within kvm/settings' 120 s. */
#define EPOCH_SECONDS		60
#define MAX_SPIN		400	/* PAUSEs while masked, or before an EOI */
#define CHAOS_CHANGES		24	/* state changes per chaos epoch */

#define APIC_IRR_END		0x280	/* ISR, TMR, IRR: from APIC_ISR to here */

/* Host -> guest, written only while every vCPU is parked. */
struct epoch_params {
	u32 nr_vcpus;
	u32 ops;
	bool xapic;
	bool chaos;
	bool exit;
	u32 apic_ids[MAX_VCPUS];	/* x2APIC or xAPIC IDs */
	u8 flat_ldr[MAX_VCPUS];	/* xAPIC flat logical IDs */
	u8 index_of_id[256];
	struct ipi_platform platform;
	u32 seed;
	u32 wait_seconds;		/* WAIT_SECONDS */
	u64 wait_tsc;		/* and in TSC cycles */
};

/* Announcements, written by senders and taken back by receivers. */
struct mailbox {
	u32 pending[MAX_VCPUS][MAX_VCPUS];	/* [sender][target] */
	u32 nmi_from[MAX_VCPUS];		/* [target]: sender + 1, or 0 */
	u32 finished;			/* vCPUs done with the epoch */
	bool chaos_over;			/* the host made its changes */
	u64 chaos_irqs, chaos_faults;
};

enum kind {
	KIND_PHYSICAL, KIND_LOWEST, KIND_LOGICAL, KIND_SELF, KIND_ALL,
	KIND_ALL_BUT_SELF, KIND_BROADCAST, KIND_NMI, NR_KINDS
};

/* Guest -> host; each written by its own vCPU only. */
struct vcpu_counts {
	u64 sent[MAX_VCPUS];		/* IPIs announced to [target] */
	u64 received[MAX_VCPUS];		/* IPIs taken from [sender] */
	u64 nmis_sent[MAX_VCPUS];
	u64 nmis_received[MAX_VCPUS];
	u64 strays;	/* interrupts nobody announced to this vCPU */
	u64 stray_nmis;
	u64 kinds[NR_KINDS];
	u64 want_hits;	/* fastpath hits the oracle predicts */
	u64 unsure_hits;	/* writes that may or may not take it */
	u64 halts, masked, tpr_raises, late_acks;
	u64 chaos_writes;	/* ICR writes in chaos epochs */
	u32 op;		/* progress, shown when a vCPU fails */
	u32 doing;
};

enum doing { DOING_SEND, DOING_HALT, DOING_MASKED, DOING_TPR, DOING_FINISH, DOING_PARKED };
static const char * const doing_names[] = {
	"sending", "halted", "masked", "TPR raised", "waiting for the others", "parked"
};

static struct epoch_params params;
static struct mailbox mbox;
static struct vcpu_counts counts[MAX_VCPUS];
static struct kvm_random_state isr_rng[MAX_VCPUS];

/* ---- guest */

static void apic_write(u32 reg, u64 val)
{
	if (params.xapic)
		xapic_write_reg(reg, val);
	else
		x2apic_write_reg(reg, val);
}

static u32 self_index(void)
{
	if (params.xapic)
		return params.index_of_id[xapic_read_reg(APIC_ID) >> 24];
	return params.index_of_id[x2apic_read_reg(APIC_ID) & 0xff];
}

static void spin(struct kvm_random_state *rng)
{
	u32 n = kvm_random_u32(rng) % MAX_SPIN;

	while (n--)
		cpu_relax();
}

/* In chaos the mode can change under the vCPU's feet: try both. */
static void chaos_eoi(void)
{
	if (x2apic_write_reg_safe(APIC_EOI, 0))
		xapic_write_reg(APIC_EOI, 0);
}

static void guest_ipi_isr(struct ex_regs *regs)
{
	u32 sender = (regs->vector - SENDER_VECTOR(0)) / 8;
	u32 me;

	if (READ_ONCE(params.chaos)) {
		__atomic_fetch_add(&mbox.chaos_irqs, 1, __ATOMIC_RELAXED);
		chaos_eoi();
		return;
	}
	me = self_index();
	if (__atomic_exchange_n(&mbox.pending[sender][me], 0, __ATOMIC_SEQ_CST))
		counts[me].received[sender]++;
	else
		counts[me].strays++;
	if (__kvm_random_bool(&isr_rng[me], 10)) {
		counts[me].late_acks++;
		spin(&isr_rng[me]);
	}
	apic_write(APIC_EOI, 0);
}

static void guest_nmi(struct ex_regs *regs)
{
	u32 me, from;

	if (READ_ONCE(params.chaos))
		return;
	me = self_index();
	from = __atomic_exchange_n(&mbox.nmi_from[me], 0, __ATOMIC_SEQ_CST);
	if (from)
		counts[me].nmis_received[from - 1]++;
	else
		counts[me].stray_nmis++;
}

/* Spurious interrupts need no EOI. */
static void guest_spurious_isr(struct ex_regs *regs)
{
}

static void guest_timer_isr(struct ex_regs *regs)
{
	if (READ_ONCE(params.chaos))
		chaos_eoi();
	else
		apic_write(APIC_EOI, 0);
}

/*
 * The bound of every wait for another vCPU.  The host tells its assertions
 * (IN_TIME) from the others: they fail the epoch's delivery point.
 */
static bool in_time(u64 deadline)
{
	return rdtsc() < deadline;
}

#define IN_TIME "in_time(deadline)"

static void wait_until_zero(u32 *p, u64 deadline, u32 me,
			    u32 target, u64 icr)
{
	while (READ_ONCE(*p)) {
		__GUEST_ASSERT(in_time(deadline),
			       "vCPU %u: IPI to vCPU %u not taken within %u s (ICR 0x%lx)",
			       me, target, params.wait_seconds, icr);
		cpu_relax();
	}
}

/* Wait until no IPI of ours is in flight to @targets, then announce one. */
static void announce(u32 me, u64 targets, bool nmi, u64 icr)
{
	u64 deadline = rdtsc() + params.wait_tsc;
	u32 t;

	for (t = 0; t < params.nr_vcpus; t++) {
		if (!(targets & (1ULL << t)))
			continue;
		if (!nmi) {
			wait_until_zero(&mbox.pending[me][t], deadline, me, t, icr);
			WRITE_ONCE(mbox.pending[me][t], 1);
			counts[me].sent[t]++;
			continue;
		}
		/* Claim the target's NMI slot. */
		for (;;) {
			u32 free = 0;

			if (__atomic_compare_exchange_n(&mbox.nmi_from[t], &free, me + 1,
							false, __ATOMIC_SEQ_CST,
							__ATOMIC_SEQ_CST))
				break;
			wait_until_zero(&mbox.nmi_from[t], deadline, me, t, icr);
		}
		counts[me].nmis_sent[t]++;
	}
	/* Announcements before the IPI: x2APIC MSR writes do not serialize. */
	asm volatile("mfence" ::: "memory");
}

/* A logical destination that includes vCPU @t and maybe others. */
static u32 logical_dest(struct kvm_random_state *rng, u32 t, bool xapic)
{
	if (xapic)
		return params.flat_ldr[t] | (kvm_random_u32(rng) & 0xff);
	/* x2APIC: t's cluster, its bit and random others of 16. */
	return x2apic_logical_id(params.apic_ids[t]) | (kvm_random_u32(rng) & 0xffff);
}

static u64 pick_icr(struct kvm_random_state *rng, u32 me, bool xapic, enum kind *kind)
{
	u32 t = kvm_random_u32(rng) % params.nr_vcpus;
	u64 vec = SENDER_VECTOR(me);
	u64 level = kvm_random_bool(rng) ? APIC_INT_LEVELTRIG | APIC_INT_ASSERT : 0;

	*kind = kvm_random_u32(rng) % NR_KINDS;
	if (*kind == KIND_LOGICAL && xapic && !params.flat_ldr[t])
		*kind = KIND_PHYSICAL;	/* no flat logical ID beyond 8 vCPUs */

	switch (*kind) {
	case KIND_PHYSICAL:
		return icr_with_apic_dest(APIC_DM_FIXED | level | vec, params.apic_ids[t], xapic);
	case KIND_LOWEST:
		return icr_with_apic_dest(APIC_DM_LOWEST | vec, params.apic_ids[t], xapic);
	case KIND_LOGICAL:
		return icr_with_apic_dest(APIC_DM_FIXED | APIC_DEST_LOGICAL | level | vec,
					  logical_dest(rng, t, xapic), xapic);
	case KIND_SELF:
		return APIC_DEST_SELF | vec;
	case KIND_ALL:
		return APIC_DEST_ALLINC | vec;
	case KIND_ALL_BUT_SELF:
		return APIC_DEST_ALLBUT | vec;
	case KIND_BROADCAST:
		return icr_with_apic_dest(APIC_DM_FIXED | vec,
					  xapic ? XAPIC_BROADCAST : X2APIC_BROADCAST, xapic);
	default:
		return icr_with_apic_dest(APIC_DM_NMI, params.apic_ids[t], xapic);
	}
}

static void xapic_send(u64 icr)
{
	xapic_write_reg(APIC_ICR2, icr >> 32);
	xapic_write_reg(APIC_ICR, (u32)icr);
}

static void send_one(struct kvm_random_state *rng, u32 me)
{
	struct ipi_expectation e;
	enum kind kind;
	u64 icr = pick_icr(rng, me, params.xapic, &kind);
	int hits;

	if (params.xapic)
		e = ipi_expect_xapic(icr, me, params.apic_ids, params.flat_ldr,
				     params.nr_vcpus);
	else
		e = ipi_expect(icr, me, params.apic_ids, params.nr_vcpus);
	__GUEST_ASSERT(e.fate == IPI_FATE_EACH ||
		       (e.fate == IPI_FATE_ONE_OF && !(e.targets & (e.targets - 1))),
		       "ICR 0x%lx: fate %u, targets 0x%lx", icr, e.fate, e.targets);

	announce(me, e.targets, kind == KIND_NMI, icr);
	if (params.xapic) {
		xapic_send(icr);	/* an MMIO store: ordered after the announcement */
	} else {
		/*
		 * A WRMSR to the x2APIC ICR is not serializing: the IPI could
		 * reach its target before the announcement does (SDM vol. 3,
		 * "MSR Access in x2APIC Mode"; with IPI virtualization there is
		 * not even an exit).
		 * MFENCE makes the stores visible, LFENCE keeps the WRMSR after
		 * it, as Linux's weak_wrmsr_fence() does.
		 */
		asm volatile("mfence; lfence" ::: "memory");
		x2apic_write_reg(APIC_ICR, icr);
		hits = icr_expected_fastpath_hits(icr, &params.platform);
		if (hits < 0)
			counts[me].unsure_hits++;
		else
			counts[me].want_hits += hits;
	}
	counts[me].kinds[kind]++;
}

/* Halt until an interrupt; the APIC timer bounds the wait. */
static void halt_a_while(struct kvm_random_state *rng, u32 me)
{
	WRITE_ONCE(counts[me].doing, DOING_HALT);
	cli();
	apic_write(APIC_TMICT, 10000 + kvm_random_u32(rng) % 90000);
	safe_halt();
	counts[me].halts++;
}

static void masked_a_while(struct kvm_random_state *rng, u32 me)
{
	WRITE_ONCE(counts[me].doing, DOING_MASKED);
	cli();
	spin(rng);
	sti();
	counts[me].masked++;
}

static void tpr_raised_a_while(struct kvm_random_state *rng, u32 me)
{
	WRITE_ONCE(counts[me].doing, DOING_TPR);
	apic_write(APIC_TASKPRI, (1 + kvm_random_u32(rng) % 15) << 4);
	spin(rng);
	apic_write(APIC_TASKPRI, 0);
	counts[me].tpr_raises++;
}

/* Keep taking interrupts until every vCPU is done sending. */
static void finish_epoch(u32 me)
{
	u64 deadline = rdtsc() + params.wait_tsc;
	u32 t;

	WRITE_ONCE(counts[me].doing, DOING_FINISH);
	for (t = 0; t < params.nr_vcpus; t++) {
		wait_until_zero(&mbox.pending[me][t], deadline, me, t, 0);
		while (READ_ONCE(mbox.nmi_from[t]) == me + 1) {
			__GUEST_ASSERT(in_time(deadline),
				       "vCPU %u: NMI to vCPU %u not taken within %u s",
				       me, t, params.wait_seconds);
			cpu_relax();
		}
	}
	__atomic_fetch_add(&mbox.finished, 1, __ATOMIC_SEQ_CST);
	while (READ_ONCE(mbox.finished) < params.nr_vcpus) {
		__GUEST_ASSERT(in_time(deadline),
			       "vCPU %u: only %u vCPUs finished within %u s",
			       me, READ_ONCE(mbox.finished), params.wait_seconds);
		cpu_relax();
	}
}

static void checked_epoch(u32 me)
{
	struct kvm_random_state rng = new_kvm_random_state(params.seed + me);
	u32 i, r;

	__GUEST_ASSERT(self_index() == me, "vCPU %u: its APIC ID maps to vCPU %u",
		       me, self_index());
	apic_write(APIC_SPIV, APIC_SPIV_APIC_ENABLED | SPURIOUS_VECTOR);
	apic_write(APIC_TASKPRI, 0);
	apic_write(APIC_TDCR, 0xb);	/* divide by 1 */
	apic_write(APIC_LVTT, APIC_LVT_TIMER_ONESHOT | TIMER_VECTOR);
	isr_rng[me] = new_kvm_random_state(~params.seed - me);
	sti();

	for (i = 0; i < params.ops; i++) {
		WRITE_ONCE(counts[me].op, i);
		WRITE_ONCE(counts[me].doing, DOING_SEND);
		r = kvm_random_u32(&rng) % 100;
		if (r < 6)
			halt_a_while(&rng, me);
		else if (r < 10)
			masked_a_while(&rng, me);
		else if (r < 14)
			tpr_raised_a_while(&rng, me);
		else
			send_one(&rng, me);
	}
	finish_epoch(me);
}

/*
 * Fire and forget, in whatever mode the host left the vCPU, until the host
 * made its changes.  No HLT: the host may disable the APIC of a vCPU, which
 * then never wakes up.
 */
static void chaos_epoch(u32 me)
{
	struct kvm_random_state rng = new_kvm_random_state(params.seed + me);
	u64 base, icr;
	enum kind kind;
	u32 i;

	sti();
	for (i = 0; i < params.ops || !READ_ONCE(mbox.chaos_over); i++) {
		if (kvm_random_u32(&rng) % 100 < 10) {
			masked_a_while(&rng, me);
			continue;
		}
		spin(&rng);	/* a random pause between sends */
		base = rdmsr(MSR_IA32_APICBASE);
		icr = pick_icr(&rng, me, !(base & X2APIC_ENABLE), &kind);
		if (!(base & X2APIC_ENABLE))
			xapic_send(icr);
		else if (x2apic_write_reg_safe(APIC_ICR, icr))
			__atomic_fetch_add(&mbox.chaos_faults, 1, __ATOMIC_RELAXED);
		WRITE_ONCE(counts[me].chaos_writes, counts[me].chaos_writes + 1);
	}
	cli();
}

static void guest_main(u32 me)
{
	x2apic_enable_icr_exits();
	for (;;) {
		WRITE_ONCE(counts[me].doing, DOING_PARKED);
		GUEST_SYNC(0);
		if (READ_ONCE(params.exit))
			GUEST_DONE();
		if (READ_ONCE(params.chaos))
			chaos_epoch(me);
		else
			checked_epoch(me);
	}
}

/* ---- host: vCPU threads; a kick makes the thread disturb its vCPU */

enum disturbance {
	/* lossless: checked epochs */
	DIS_PAUSE, DIS_BASE_REWRITE, DIS_LAPIC_READ, DIS_EVENTS_READ,
	/* state changes: chaos epochs */
	DIS_TO_X2APIC, DIS_TO_XAPIC, DIS_DISABLE, DIS_NEW_ID, DIS_LAPIC_REWRITE,
	DIS_EVENTS_REWRITE, NR_DISTURBANCES
};

#define NR_LOSSLESS	(DIS_EVENTS_READ + 1)

static const char * const dis_names[] = {
	"paused", "APIC base rewritten", "local APIC read", "events read",
	"to x2APIC", "to xAPIC", "APIC disabled", "new APIC ID",
	"local APIC rewritten", "events rewritten",
};

struct vcpu_ctl {
	struct kvm_vcpu *vcpu;
	pthread_t thread;
	sem_t go;
	bool done, running;
	unsigned int seed;
	u64 disturbances[NR_DISTURBANCES];
};

static struct kvm_vm *vm;
static struct vcpu_ctl ctl[MAX_VCPUS];
static sem_t parked;
static struct epoch_params *host_params;
static struct mailbox *host_mbox;
static struct vcpu_counts *host_counts;
static unsigned int nr_vcpus;	/* -v, else default_vcpus() */
static bool have_stat;
static u64 state_changes;	/* by chaos disturbances, all vCPUs */

static void set_apic_base(struct kvm_vcpu *vcpu, u64 flags)
{
	u64 bsp = vcpu_get_msr(vcpu, MSR_IA32_APICBASE) & MSR_IA32_APICBASE_BSP;

	vcpu_set_msr(vcpu, MSR_IA32_APICBASE, APIC_DEFAULT_GPA | bsp | flags);
}

/* The APIC ID and (xAPIC) flat LDR; in x2APIC mode KVM ignores the ID. */
static void set_apic_ids(struct kvm_vcpu *vcpu, u8 id, u8 ldr)
{
	struct kvm_lapic_state lapic;

	vcpu_ioctl(vcpu, KVM_GET_LAPIC, &lapic);
	*(u32 *)&lapic.regs[APIC_ID] = (u32)id << 24;
	*(u32 *)&lapic.regs[APIC_LDR] = (u32)ldr << 24;
	*(u32 *)&lapic.regs[APIC_DFR] = APIC_DFR_FLAT;
	vcpu_ioctl(vcpu, KVM_SET_LAPIC, &lapic);
}

static void disturb(struct vcpu_ctl *c)
{
	enum disturbance d = READ_ONCE(host_params->chaos) ?
		NR_LOSSLESS + rand_r(&c->seed) % (NR_DISTURBANCES - NR_LOSSLESS) :
		rand_r(&c->seed) % NR_LOSSLESS;
	struct timespec pause = { .tv_nsec = 1000 * (rand_r(&c->seed) % 500) };
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events events;

	switch (d) {
	case DIS_PAUSE:
		nanosleep(&pause, NULL);	/* the disturbance itself */
		break;
	case DIS_BASE_REWRITE:
		vcpu_set_msr(c->vcpu, MSR_IA32_APICBASE,
			     vcpu_get_msr(c->vcpu, MSR_IA32_APICBASE));
		break;
	case DIS_LAPIC_READ:
		vcpu_ioctl(c->vcpu, KVM_GET_LAPIC, &lapic);
		break;
	case DIS_EVENTS_READ:
		vcpu_events_get(c->vcpu, &events);
		break;
	case DIS_TO_X2APIC:
		set_apic_base(c->vcpu, MSR_IA32_APICBASE_ENABLE | X2APIC_ENABLE);
		break;
	case DIS_TO_XAPIC:
		set_apic_base(c->vcpu, MSR_IA32_APICBASE_ENABLE);
		break;
	case DIS_DISABLE:
		set_apic_base(c->vcpu, 0);
		break;
	case DIS_NEW_ID:
		set_apic_ids(c->vcpu, rand_r(&c->seed) % 255, 1U << (rand_r(&c->seed) % 8));
		break;
	case DIS_LAPIC_REWRITE:
		/* Loses what arrives between the two: chaos only. */
		vcpu_ioctl(c->vcpu, KVM_GET_LAPIC, &lapic);
		vcpu_ioctl(c->vcpu, KVM_SET_LAPIC, &lapic);
		break;
	default:
		vcpu_events_get(c->vcpu, &events);
		vcpu_events_set(c->vcpu, &events);
		break;
	}
	c->disturbances[d]++;
	if (d >= NR_LOSSLESS)
		__atomic_fetch_add(&state_changes, 1, __ATOMIC_RELAXED);
}

/* Where every vCPU was when one failed; the others still run. */
static void report_progress(void)
{
	static bool reported;
	unsigned int i;

	if (__atomic_exchange_n(&reported, true, __ATOMIC_SEQ_CST))
		return;
	for (i = 0; i < nr_vcpus; i++)
		ksft_print_msg("vCPU %u: operation %u of %u, %s\n", i,
			       READ_ONCE(host_counts[i].op), host_params->ops,
			       doing_names[READ_ONCE(host_counts[i].doing)]);
}

/* The epoch the vCPUs run, set before they start it. */
static int running_epoch;
static const char *running_name;

/* The first vCPU thread to fail the test reports; the others wait. */
static void claim_report(void)
{
	static bool failed;

	if (__atomic_exchange_n(&failed, true, __ATOMIC_SEQ_CST))
		for (;;)
			pause();
	report_progress();
}

/*
 * A guest assertion ends the test with a failed point of the running epoch:
 * a bounded wait for another vCPU that ran out (an IPI or an NMI not taken,
 * a vCPU that did not finish) fails its delivery point, anything else a
 * point of its own.
 */
static void __noreturn fail_epoch(struct ucall *uc)
{
	const char *exp = (const char *)uc->args[GUEST_ERROR_STRING];
	int n = READ_ONCE(running_epoch);
	const char *name = READ_ONCE(running_name);

	claim_report();
	ksft_print_msg("%s:%lu: %s: %s\n", (const char *)uc->args[GUEST_FILE],
		       uc->args[GUEST_LINE], exp, uc->buffer);
	if (!strcmp(exp, IN_TIME)) {
		ksft_print_msg("epoch %d: not taken within %u s\n", n, host_params->wait_seconds);
		ksft_test_result_fail("epoch %d (%s): every IPI and NMI taken in time\n", n, name);
	} else {
		ksft_test_result_fail("epoch %d (%s): guest assertion\n", n, name);
	}
	ksft_exit_fail();
}

/*
 * So does an exit the test does not make, named by its reason; for an
 * internal error, KVM's suberror and data say where KVM gave up.
 */
static void __noreturn fail_exit(struct kvm_vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	const char *reason = exit_reason_str(run->exit_reason);
	char data[ARRAY_SIZE(run->internal.data) * 19 + 1] = "";
	u32 i, len = 0;

	claim_report();
	if (run->exit_reason == KVM_EXIT_INTERNAL_ERROR) {
		for (i = 0; i < run->internal.ndata && i < ARRAY_SIZE(run->internal.data); i++)
			len += snprintf(data + len, sizeof(data) - len, " 0x%llx",
					run->internal.data[i]);
		ksft_print_msg("vCPU %u: exit %s, suberror %u, data%s\n", vcpu->id,
			       reason, run->internal.suberror, data);
	} else {
		ksft_print_msg("vCPU %u: exit %s\n", vcpu->id, reason);
	}
	ksft_test_result_fail("epoch %d (%s): no unexpected %s exit\n",
			      READ_ONCE(running_epoch), READ_ONCE(running_name), reason);
	ksft_exit_fail();
}

static void *vcpu_thread(void *arg)
{
	struct vcpu_ctl *c = arg;
	struct ucall uc;

	while (!c->done) {
		/*
		 * A kick that comes just as the vCPU parks interrupts the wait
		 * (SIGUSR1 has no SA_RESTART): the vCPU must not run the epoch
		 * again on its own.
		 */
		while (sem_wait(&c->go))
			TEST_ASSERT(errno == EINTR, "vCPU %u: sem_wait failed, errno %d",
				    c->vcpu->id, errno);
		while (__vcpu_run(c->vcpu)) {
			TEST_ASSERT(errno == EINTR, "vCPU %u: KVM_RUN failed, errno %d",
				    c->vcpu->id, errno);
			c->vcpu->run->immediate_exit = 0;
			disturb(c);
		}
		switch (get_ucall(c->vcpu, &uc)) {
		case UCALL_SYNC:
			break;
		case UCALL_DONE:
			c->done = true;
			break;
		case UCALL_ABORT:
			fail_epoch(&uc);
		default:
			fail_exit(c->vcpu);
		}
		WRITE_ONCE(c->running, false);
		sem_post(&parked);
	}
	return NULL;
}

static void kick_handler(int sig)
{
}

/* Make vCPU @i leave KVM_RUN and be disturbed before it runs again. */
static void kick(int i)
{
	WRITE_ONCE(ctl[i].vcpu->run->immediate_exit, 1);
	pthread_kill(ctl[i].thread, SIGUSR1);
}

/*
 * Run every vCPU to its next GUEST_SYNC, kicking random ones if @disturb.
 * In chaos, tell the guests to stop once CHAOS_CHANGES states were changed.
 */
static void run_all(bool disturb, const char *what)
{
	u64 changes_end = READ_ONCE(state_changes) + CHAOS_CHANGES;
	struct timespec deadline, start;
	unsigned int back = 0, i;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = 0; i < nr_vcpus; i++) {
		ctl[i].running = true;
		sem_post(&ctl[i].go);
	}
	while (back < nr_vcpus) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		if (disturb) {
			/* Pacing of the kicks, not synchronization. */
			deadline.tv_nsec += 100000 + random() % 2000000;
			deadline.tv_sec += deadline.tv_nsec / 1000000000;
			deadline.tv_nsec %= 1000000000;
		} else {
			deadline.tv_sec += 1;
		}
		if (!sem_clockwait(&parked, CLOCK_MONOTONIC, &deadline)) {
			back++;
			continue;
		}
		TEST_ASSERT(timespec_to_ns(timespec_elapsed(start)) < EPOCH_SECONDS * 1000000000LL,
			    "%s: %u of %u vCPUs back after %u s",
			    what, back, nr_vcpus, EPOCH_SECONDS);
		i = random() % nr_vcpus;
		if (disturb && READ_ONCE(ctl[i].running))
			kick(i);
		if (READ_ONCE(state_changes) >= changes_end)
			WRITE_ONCE(host_mbox->chaos_over, true);
	}
}

/* ---- host: the epochs, and how the host settles the vCPUs before each */

enum settle { KEEP, TO_X2APIC, TO_XAPIC_NEW_IDS, TO_X2APIC_TRY_IDS };

struct epoch {
	const char *name;
	bool chaos;
	enum settle settle;	/* before a checked epoch */
};

static const struct epoch epochs[] = {
	{ "x2apic, host quiet", false, KEEP },
	{ "x2apic, vCPUs paused and read", false, KEEP },
	{ "chaos: modes and IDs change while IPIs fly", true },
	{ "xapic (host-switched), new IDs", false, TO_XAPIC_NEW_IDS },
	{ "chaos: modes and IDs change while IPIs fly", true },
	{ "x2apic (host-switched), new IDs refused", false, TO_X2APIC_TRY_IDS },
	{ "chaos: modes and IDs change while IPIs fly", true },
	{ "x2apic after disable and enable", false, TO_X2APIC },
};

static u32 x2apic_id_of(unsigned int i)
{
	return (i / 4) * 16 + i % 4;	/* four per logical cluster */
}

/* Distinct random IDs below 0xff and, for eight vCPUs, a flat bit each. */
static void new_ids(struct epoch_params *p)
{
	bool used[256] = { [XAPIC_BROADCAST] = true };
	unsigned int i, j, b, bits[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };

	for (i = 7; i > 0; i--) {
		j = random() % (i + 1);
		b = bits[i];
		bits[i] = bits[j];
		bits[j] = b;
	}
	for (i = 0; i < nr_vcpus; i++) {
		do
			p->apic_ids[i] = random() % 256;
		while (used[p->apic_ids[i]]);
		used[p->apic_ids[i]] = true;
		p->flat_ldr[i] = i < 8 ? 1U << bits[i] : 0;
	}
}

/* Nothing pending, in service or latched: chaos leftovers must not count. */
static void clear_interrupts(struct kvm_vcpu *vcpu)
{
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events events;

	vcpu_ioctl(vcpu, KVM_GET_LAPIC, &lapic);
	memset(&lapic.regs[APIC_ISR], 0, APIC_IRR_END - APIC_ISR);
	vcpu_ioctl(vcpu, KVM_SET_LAPIC, &lapic);
	vcpu_events_get(vcpu, &events);
	events.nmi.pending = 0;
	events.nmi.injected = 0;
	events.nmi.masked = 0;
	events.flags |= KVM_VCPUEVENT_VALID_NMI_PENDING;
	vcpu_events_set(vcpu, &events);
}

/* Every vCPU parked: put each into the epoch's mode with its IDs. */
static void settle(enum settle how, struct epoch_params *p)
{
	struct kvm_lapic_state lapic;
	unsigned int i;

	switch (how) {
	case KEEP:
		return;
	case TO_XAPIC_NEW_IDS:
		new_ids(p);
		for (i = 0; i < nr_vcpus; i++) {
			set_apic_base(ctl[i].vcpu, MSR_IA32_APICBASE_ENABLE);
			set_apic_ids(ctl[i].vcpu, p->apic_ids[i], p->flat_ldr[i]);
		}
		p->xapic = true;
		break;
	case TO_X2APIC_TRY_IDS:
		new_ids(p);
		for (i = 0; i < nr_vcpus; i++) {
			set_apic_base(ctl[i].vcpu, MSR_IA32_APICBASE_ENABLE | X2APIC_ENABLE);
			set_apic_ids(ctl[i].vcpu, p->apic_ids[i], 0);
		}
		/* the x2APIC ID stays the vCPU ID, whatever was set */
		fallthrough;
	case TO_X2APIC:
		for (i = 0; i < nr_vcpus; i++) {
			if (how == TO_X2APIC)
				set_apic_base(ctl[i].vcpu, 0);
			set_apic_base(ctl[i].vcpu, MSR_IA32_APICBASE_ENABLE | X2APIC_ENABLE);
			p->apic_ids[i] = x2apic_id_of(i);
			vcpu_ioctl(ctl[i].vcpu, KVM_GET_LAPIC, &lapic);
			TEST_ASSERT_EQ(*(u32 *)&lapic.regs[APIC_ID], p->apic_ids[i] << 24);
		}
		p->xapic = false;
		break;
	}
	memset(p->index_of_id, 0, sizeof(p->index_of_id));
	for (i = 0; i < nr_vcpus; i++)
		p->index_of_id[p->apic_ids[i] & 0xff] = i;
}

struct snapshot {
	struct vcpu_counts counts[MAX_VCPUS];
	u64 hits;
};

static void take_snapshot(struct snapshot *s)
{
	unsigned int i;

	memcpy(s->counts, host_counts, sizeof(s->counts));
	s->hits = 0;
	for (i = 0; i < nr_vcpus; i++)
		s->hits += ipi_fastpath_hits(ctl[i].vcpu, have_stat);
}

static bool counts_match(int n, const char *what, unsigned int s, unsigned int t,
			 u64 sent, u64 got)
{
	if (sent != got)
		ksft_print_msg("epoch %d: vCPU %u sent %lu %s to vCPU %u, which took %lu\n",
			       n, s, sent, what, t, got);
	return sent == got;
}

/* Every IPI sent in the epoch reached its targets once and nobody else. */
static void check_delivery(int n, const struct snapshot *before)
{
	const struct vcpu_counts *now = host_counts, *was = before->counts;
	u64 ipis = 0, nmis = 0, strays = 0, sent, got;
	unsigned int i, t, bad = 0;

	for (i = 0; i < nr_vcpus; i++) {
		for (t = 0; t < nr_vcpus; t++) {
			sent = now[i].sent[t] - was[i].sent[t];
			got = now[t].received[i] - was[t].received[i];
			ipis += got;
			bad += !counts_match(n, "IPIs", i, t, sent, got);
			sent = now[i].nmis_sent[t] - was[i].nmis_sent[t];
			got = now[t].nmis_received[i] - was[t].nmis_received[i];
			nmis += got;
			bad += !counts_match(n, "NMIs", i, t, sent, got);
		}
		sent = now[i].strays - was[i].strays;
		got = now[i].stray_nmis - was[i].stray_nmis;
		strays += sent + got;
		if (sent || got)
			ksft_print_msg("epoch %d: vCPU %u took %lu IPIs, %lu NMIs unsent\n",
				       n, i, sent, got);
	}
	ksft_print_msg("epoch %d: %lu IPIs and %lu NMIs sent\n", n, ipis, nmis);
	ksft_test_result(!bad && !strays,
			 "epoch %d (%s): each IPI and NMI taken once by its target\n",
			 n, epochs[n].name);
}

static void check_path(int n, const struct snapshot *before)
{
	const struct vcpu_counts *now = host_counts, *was = before->counts;
	u64 want = 0, unsure = 0, hits = 0, writes = 0;
	const char *unprovable;
	struct snapshot after;
	char name[32];
	unsigned int i, k;

	take_snapshot(&after);
	for (i = 0; i < nr_vcpus; i++) {
		want += now[i].want_hits - was[i].want_hits;
		unsure += now[i].unsure_hits - was[i].unsure_hits;
		for (k = 0; k < NR_KINDS; k++)
			writes += now[i].kinds[k] - was[i].kinds[k];
	}
	hits = after.hits - before->hits;
	snprintf(name, sizeof(name), "epoch %d: path", n);
	unprovable = ipi_path_unprovable(&host_params->platform, have_stat);
	if (unprovable) {
		ksft_test_result_code(KSFT_SKIP, name, "%s", unprovable);
		return;
	}
	ksft_print_msg("epoch %d: %lu of %lu writes took the fastpath\n", n, hits, writes);
	if (hits != want)
		ksft_print_msg("epoch %d: fastpath +%lu, oracle %lu (+%lu unsure), %lu writes\n",
			       n, hits, want, unsure, writes);
	ksft_test_result(unsure ? hits >= want && hits <= want + unsure : hits == want,
			 "%s\n", name);
}

/*
 * After settle(TO_X2APIC), which asserts each x2APIC ID: is vCPU @i's APIC
 * base or logical ID not what x2APIC mode with that ID gives?  Say so.
 */
static bool settled_wrong(unsigned int i, const struct epoch_params *p)
{
	u64 want_base = MSR_IA32_APICBASE_ENABLE | X2APIC_ENABLE;
	u64 base = vcpu_get_msr(ctl[i].vcpu, MSR_IA32_APICBASE);
	u32 want_ldr = x2apic_logical_id(p->apic_ids[i]);
	struct kvm_lapic_state lapic;
	u32 ldr;

	vcpu_ioctl(ctl[i].vcpu, KVM_GET_LAPIC, &lapic);
	ldr = *(u32 *)&lapic.regs[APIC_LDR];
	if ((base & want_base) == want_base && ldr == want_ldr)
		return false;
	ksft_print_msg("vCPU %u settled: APIC base 0x%lx, LDR 0x%x; want 0x%lx, 0x%x\n",
		       i, base, ldr, want_base, want_ldr);
	return true;
}

/*
 * A chaos epoch passes when the host made its CHAOS_CHANGES state changes,
 * every vCPU wrote the ICR at least ops / 2 times (a tenth of its loops are
 * masked pauses) and came back to the host (any other exit fails the test),
 * and, settled again into x2APIC mode, every vCPU reads back what was set.
 */
static void report_chaos(int n, u64 changes, const struct snapshot *before)
{
	unsigned int i, idle = 0, wrong = 0;
	u64 writes;

	for (i = 0; i < nr_vcpus; i++) {
		writes = host_counts[i].chaos_writes - before->counts[i].chaos_writes;
		if (writes >= host_params->ops / 2)
			continue;
		ksft_print_msg("epoch %d: vCPU %u wrote the ICR %lu times, want %u or more\n",
			       n, i, writes, host_params->ops / 2);
		idle++;
	}
	settle(TO_X2APIC, host_params);
	for (i = 0; i < nr_vcpus; i++)
		wrong += settled_wrong(i, host_params);
	if (changes < CHAOS_CHANGES)
		ksft_print_msg("epoch %d: %lu state changes, want %d\n", n, changes,
			       CHAOS_CHANGES);
	ksft_print_msg("epoch %d: %lu interrupts taken, %lu ICR writes faulted\n", n,
		       host_mbox->chaos_irqs, host_mbox->chaos_faults);
	ksft_print_msg("epoch %d: %lu state changes, each vCPU to write the ICR %u times or more\n",
		       n, changes, host_params->ops / 2);
	ksft_test_result(changes >= CHAOS_CHANGES && !idle && !wrong,
			 "epoch %d (%s): the state changes made, every vCPU busy, all settled as set\n",
			 n, epochs[n].name);
}

static void report_load(void)
{
	u64 k[NR_KINDS] = {}, d[NR_DISTURBANCES] = {};
	u64 halts = 0, masked = 0, tpr = 0, late = 0;
	unsigned int i, j;

	for (i = 0; i < nr_vcpus; i++) {
		for (j = 0; j < NR_KINDS; j++)
			k[j] += host_counts[i].kinds[j];
		for (j = 0; j < NR_DISTURBANCES; j++)
			d[j] += ctl[i].disturbances[j];
		halts += host_counts[i].halts;
		masked += host_counts[i].masked;
		tpr += host_counts[i].tpr_raises;
		late += host_counts[i].late_acks;
	}
	ksft_print_msg("checked writes: physical %lu, lowest %lu, logical %lu, self %lu, ",
		       k[0], k[1], k[2], k[3]);
	printf("all %lu, all-but-self %lu, broadcast %lu, nmi %lu\n", k[4], k[5], k[6], k[7]);
	ksft_print_msg("receivers: %lu halts, %lu masked, %lu TPR raises, %lu late EOIs\n",
		       halts, masked, tpr, late);
	for (j = 0; j < NR_DISTURBANCES; j++)
		ksft_print_msg("host: %s %lu times\n", dis_names[j], d[j]);
}

static void setup_vm(unsigned int seed, unsigned int ops)
{
	struct sigaction sa = { .sa_handler = kick_handler };
	char desc[192];
	unsigned int i;

	TEST_ASSERT(!sigaction(SIGUSR1, &sa, NULL), "sigaction");
	vm = vm_create(nr_vcpus);
	for (i = 0; i < nr_vcpus; i++) {
		ctl[i].vcpu = vm_vcpu_add(vm, x2apic_id_of(i), guest_main);
		vcpu_args_set(ctl[i].vcpu, 1, i);
		ctl[i].seed = seed + i;
	}
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi);
	vm_install_exception_handler(vm, TIMER_VECTOR, guest_timer_isr);
	vm_install_exception_handler(vm, SPURIOUS_VECTOR, guest_spurious_isr);
	for (i = 0; i < nr_vcpus; i++)
		vm_install_exception_handler(vm, SENDER_VECTOR(i), guest_ipi_isr);
	virt_pg_map(vm, APIC_DEFAULT_GPA, APIC_DEFAULT_GPA);

	host_params = addr_gva2hva(vm, (gva_t)&params);
	host_mbox = addr_gva2hva(vm, (gva_t)&mbox);
	host_counts = addr_gva2hva(vm, (gva_t)counts);
	host_params->nr_vcpus = nr_vcpus;
	host_params->ops = ops;
	host_params->seed = seed;
	host_params->platform = ipi_platform_probe();
	host_params->wait_seconds = WAIT_SECONDS;
	host_params->wait_tsc = (u64)__vcpu_ioctl(ctl[0].vcpu, KVM_GET_TSC_KHZ, NULL) *
				1000 * WAIT_SECONDS;
	for (i = 0; i < nr_vcpus; i++) {
		host_params->apic_ids[i] = x2apic_id_of(i);
		host_params->index_of_id[x2apic_id_of(i)] = i;
	}

	/* Stats fds first: they cannot be had while a vCPU runs. */
	have_stat = true;
	for (i = 0; i < nr_vcpus; i++)
		have_stat &= vcpu_has_stat(ctl[i].vcpu, x2apic_icr_fastpath_writes);
	ipi_platform_describe(&host_params->platform, desc, sizeof(desc));
	ksft_print_msg("%u vCPUs, %u operations each per epoch, seed %u; platform: %s, stat %s\n",
		       nr_vcpus, ops, seed, desc, have_stat ? ICR_FASTPATH_STAT : "absent");

	sem_init(&parked, 0, 0);
	for (i = 0; i < nr_vcpus; i++) {
		sem_init(&ctl[i].go, 0, 0);
		kvm_pthread_create(&ctl[i].thread, NULL, vcpu_thread, &ctl[i]);
	}
}

static void run_epoch(int n)
{
	const struct epoch *e = &epochs[n];
	u64 changes = READ_ONCE(state_changes);
	struct snapshot before;
	unsigned int i;

	WRITE_ONCE(running_epoch, n);
	WRITE_ONCE(running_name, e->name);
	if (!e->chaos) {
		settle(e->settle, host_params);
		for (i = 0; i < nr_vcpus; i++)
			clear_interrupts(ctl[i].vcpu);
	}
	memset(host_mbox, 0, sizeof(*host_mbox));
	host_params->chaos = e->chaos;
	host_params->seed += 1000;
	take_snapshot(&before);

	run_all(n > 0, e->name);

	if (e->chaos) {
		report_chaos(n, READ_ONCE(state_changes) - changes, &before);
	} else {
		check_delivery(n, &before);
		check_path(n, &before);
	}
}

/* One per host CPU the test may run on, 2 to MAX_DEFAULT_VCPUS. */
static unsigned int default_vcpus(void)
{
	cpu_set_t set;

	TEST_ASSERT(!sched_getaffinity(0, sizeof(set), &set), "sched_getaffinity");
	return min(max(CPU_COUNT(&set), 2), MAX_DEFAULT_VCPUS);
}

int main(int argc, char *argv[])
{
	unsigned int seed = kvm_random_seed, ops = DEFAULT_OPS, i;
	int opt, n, points = 0;

	while ((opt = getopt(argc, argv, "v:o:s:")) != -1) {
		switch (opt) {
		case 'v':
			nr_vcpus = atoi_positive("vCPUs", optarg);
			TEST_ASSERT(nr_vcpus <= MAX_VCPUS, "at most %d vCPUs", MAX_VCPUS);
			break;
		case 'o':
			ops = atoi_positive("operations", optarg);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		default:
			exit(KSFT_FAIL);
		}
	}
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_BINARY_STATS_FD));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_GET_TSC_KHZ));
	if (!nr_vcpus)
		nr_vcpus = default_vcpus();

	for (n = 0; n < ARRAY_SIZE(epochs); n++)
		points += epochs[n].chaos ? 1 : 2;
	ksft_print_header();
	ksft_set_plan(points);
	srandom(seed);
	setup_vm(seed, ops);
	run_all(false, "starting");

	for (n = 0; n < ARRAY_SIZE(epochs); n++)
		run_epoch(n);
	report_load();

	host_params->exit = true;
	run_all(false, "exiting");
	for (i = 0; i < nr_vcpus; i++) {
		TEST_ASSERT(ctl[i].done, "vCPU %u did not finish", i);
		kvm_pthread_join(ctl[i].thread, NULL);
	}
	kvm_vm_free(vm);
	ksft_finished();
}
