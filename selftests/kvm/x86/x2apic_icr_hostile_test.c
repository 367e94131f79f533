// SPDX-License-Identifier: GPL-2.0-only
/*
 * Malformed x2APIC ICR values, written by the guest and by the host.  Each
 * value of a table of hostile ones (reserved bits, vectors 0-15, the
 * reserved and ExtINT delivery modes, level de-asserts, destinations no vCPU
 * has) reaches the ICR of vCPU 0 in three ways:
 *
 *  - a guest WRMSR that catches #GP: the fault, the ICR read back, the
 *    fastpath stat's rise and what every vCPU handled must be what the
 *    oracle (ipi_oracle.h) says;
 *  - the host's KVM_SET_MSRS: KVM treats it as the guest's write without the
 *    fault, i.e. it is refused exactly where the guest's must fault, and
 *    otherwise sends the same IPI, never through the fastpath;
 *  - the host's KVM_SET_LAPIC (ICR at 0x300, ICR2 at 0x310): a state
 *    restore, which stores the value as it is and sends nothing.
 *
 * Only the guest's write is architecture.  What the two ioctls do is KVM's
 * own behaviour, observed and pinned so that a change shows: their points
 * are named "KVM behaviour" and reported in a group of their own each.
 *
 * Without the stat the paths are not compared; the rest still runs.
 *
 * Where KVM is known to differ from the SDM, a point is an expected failure
 * (XFAIL) while KVM does exactly what it is known to do, passes where it
 * follows the SDM, and fails on anything else:
 *  - a vector 0-15 is accepted into the receivers' IRRs, where it stays (SDM
 *    Vol. 3A 11.5.3: "the local APIC will never set an IRR bit in the range
 *    0 to 15"), and the sender's ESR does not log "send illegal vector";
 *  - a fixed or lowest-priority level-triggered de-assert is dropped, while
 *    the level flag "will always be issued as a 1" (11.6.1).
 *
 * One vCPU runs at a time, on the main thread.  While one writes, the others
 * are parked in the host, so what the write sends stays pending in their
 * local APICs.  Then each vCPU in turn gets its fence (ipi_round.h) and runs
 * with interrupts enabled until it has handled it.  Nothing halts, and every
 * guest wait is bounded.
 */
#include <unistd.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "ipi_oracle.h"
#include "ipi_platform.h"
#include "ipi_round.h"
#include "vcpu_stats.h"
#include "vcpu_thread.h"
#ifdef KVM_FASTPATH_SWITCH
#include "fastpath_switch.h"
#endif

#define WAIT_SECONDS	30	/* any one KVM_RUN */

#define NR_VCPUS	3
#define SENDER		0	/* the vCPU whose ICR is written */
#define TEST_VECTOR	0xb0
#define FIRST_IRQ	0x20	/* below are exceptions: no handler, never counted */
#define FENCE_SPINS	10000000
#define APIC_ESR	0x280	/* not in apic.h */
#define ICR_MSR		(APIC_BASE_MSR + (APIC_ICR >> 4))
#define MAX_VALUES	160

/* vCPU 0 writes; ID 1 is in its logical cluster, ID 16 in cluster 1. */
static const u32 apic_ids[NR_VCPUS] = { 0, 1, 16 };

enum { OP_SEND, OP_DRAIN };

/* Host -> guest, written while every vCPU is parked. */
static u32 guest_op[NR_VCPUS];
static u64 icr_to_write;

/* Guest -> host: what the sender's last write did. */
struct sent {
	u32 fault;	/* the vector it raised, or 0 */
	u64 readback;	/* the ICR right after it */
	u32 esr;	/* the errors it logged in the ESR */
};

static struct sent sent;

static void guest_send(void)
{
	/* An ESR write latches the errors logged since the previous one. */
	x2apic_write_reg(APIC_ESR, 0);
	sent.fault = guest_ipi_write(READ_ONCE(icr_to_write));
	sent.readback = guest_ipi_read();
	x2apic_write_reg(APIC_ESR, 0);
	sent.esr = x2apic_read_reg(APIC_ESR);
}

static void guest_main(u32 me)
{
	x2apic_enable_icr_exits();
	for (;;) {
		GUEST_SYNC(me);
		if (READ_ONCE(guest_op[me]) == OP_SEND)
			guest_send();
		else
			guest_ipi_drain(FENCE_SPINS);
	}
}

/* ---- the table */

enum hostile_class {
	CLASS_RSVD_13,
	CLASS_RSVD_16_17,
	CLASS_RSVD_20_31,
	CLASS_VECTOR_FIXED,
	CLASS_VECTOR_LOWEST,
	CLASS_DM_RESERVED,
	CLASS_DM_EXTINT,
	CLASS_DEASSERT,
	CLASS_ABSENT,
	CLASS_CONTROL,
	NR_CLASSES
};

static const char * const class_names[NR_CLASSES] = {
	[CLASS_RSVD_13] = "reserved bit 13",
	[CLASS_RSVD_16_17] = "reserved bits 16-17",
	[CLASS_RSVD_20_31] = "reserved bits 20-31",
	[CLASS_VECTOR_FIXED] = "fixed, vectors 0-15",
	[CLASS_VECTOR_LOWEST] = "lowest-priority, vectors 0-15",
	[CLASS_DM_RESERVED] = "reserved delivery mode",
	[CLASS_DM_EXTINT] = "ExtINT delivery mode",
	[CLASS_DEASSERT] = "level de-assert",
	[CLASS_ABSENT] = "destination beyond any vCPU",
	[CLASS_CONTROL] = "well-formed (control)",
};

struct hostile_value {
	u64 icr;
	enum hostile_class class;
};

static struct hostile_value values[MAX_VALUES];
static unsigned int nr_values;

static void add(enum hostile_class class, const struct icr_fields *icr)
{
	TEST_ASSERT(nr_values < MAX_VALUES, "more than %d values", MAX_VALUES);
	values[nr_values].icr = icr_encode(icr);
	values[nr_values].class = class;
	nr_values++;
}

/* Fixed, physical, to ID 1: what the fastpath takes, were it not hostile. */
static const struct icr_fields eligible = {
	.mode = ICR_DM_FIXED, .vector = TEST_VECTOR, .level_assert = true, .dest = 1,
};

/* Variations that the fastpath declines anyway. */
static const struct icr_fields slow_bases[] = {
	{ .mode = ICR_DM_FIXED, .vector = TEST_VECTOR, .level_assert = true,
	  .logical = true, .dest = 0x2 },
	{ .mode = ICR_DM_FIXED, .vector = TEST_VECTOR, .level_assert = true,
	  .shorthand = ICR_SH_ALL_BUT_SELF },
	{ .mode = ICR_DM_NMI, .level_assert = true, .dest = 16 },
};

/* Reserved bits one by one on an eligible IPI, each field whole on others. */
static void add_reserved(void)
{
	static const struct {
		enum hostile_class class;
		u64 mask;
	} fields[] = {
		{ CLASS_RSVD_13, 1ULL << 13 },
		{ CLASS_RSVD_16_17, 3ULL << 16 },
		{ CLASS_RSVD_20_31, 0xfffULL << 20 },
	};
	struct icr_fields icr;
	int f, b, i;

	for (f = 0; f < ARRAY_SIZE(fields); f++) {
		for (b = 13; b < 32; b++) {
			if (!(fields[f].mask & (1ULL << b)))
				continue;
			icr = eligible;
			icr.reserved = 1ULL << b;
			add(fields[f].class, &icr);
		}
		for (i = 0; i < ARRAY_SIZE(slow_bases); i++) {
			icr = slow_bases[i];
			icr.reserved = fields[f].mask;
			add(fields[f].class, &icr);
		}
	}
	/* The fault must win over an illegal vector. */
	icr = eligible;
	icr.vector = 0x0f;
	icr.reserved = 1ULL << 13;
	add(CLASS_RSVD_13, &icr);
}

/*
 * Vectors 0-15, fixed and lowest-priority: each to ID 1 physically, a few
 * logically, by shorthand and to the broadcast ID.
 */
static void add_illegal_vectors(void)
{
	static const u8 some[] = { 0x00, 0x02, 0x0f };
	static const struct icr_fields dests[] = {
		{ .logical = true, .dest = 0x3 },	/* IDs 0 and 1 */
		{ .logical = true, .dest = 0x10001 },	/* ID 16 */
		{ .shorthand = ICR_SH_SELF },
		{ .shorthand = ICR_SH_ALL },
		{ .shorthand = ICR_SH_ALL_BUT_SELF },
		{ .dest = X2APIC_BROADCAST },
	};
	static const enum icr_delivery_mode modes[] = { ICR_DM_FIXED, ICR_DM_LOWEST };
	static const enum hostile_class classes[] = {
		CLASS_VECTOR_FIXED, CLASS_VECTOR_LOWEST
	};
	struct icr_fields icr;
	int m, v, d;

	for (m = 0; m < ARRAY_SIZE(modes); m++) {
		for (v = 0; v < 16; v++) {
			icr = eligible;
			icr.mode = modes[m];
			icr.vector = v;
			add(classes[m], &icr);
		}
		for (d = 0; d < ARRAY_SIZE(dests); d++) {
			for (v = 0; v < ARRAY_SIZE(some); v++) {
				icr = dests[d];
				icr.mode = modes[m];
				icr.vector = some[v];
				icr.level_assert = true;
				add(classes[m], &icr);
			}
		}
	}
}

/* Delivery modes 3 (reserved) and 7 (ExtINT, not one for IPIs). */
static void add_odd_modes(void)
{
	static const struct icr_fields dests[] = {
		{ .dest = 1 },
		{ .dest = 0 },				/* the sender itself */
		{ .dest = 2 },				/* nobody */
		{ .logical = true, .dest = 0x10001 },
		{ .shorthand = ICR_SH_ALL_BUT_SELF },
		{ .dest = X2APIC_BROADCAST },
	};
	struct icr_fields icr;
	int d;

	for (d = 0; d < ARRAY_SIZE(dests); d++) {
		icr = dests[d];
		icr.vector = TEST_VECTOR;
		icr.level_assert = true;
		icr.mode = ICR_DM_RESERVED;
		add(CLASS_DM_RESERVED, &icr);
		icr.mode = ICR_DM_EXTINT;
		add(CLASS_DM_EXTINT, &icr);
	}
}

/* Level-triggered with the level flag clear; and an edge one the same way. */
static void add_deasserts(void)
{
	static const struct icr_fields deasserts[] = {
		{ .mode = ICR_DM_FIXED, .vector = TEST_VECTOR, .dest = 1 },
		{ .mode = ICR_DM_FIXED, .vector = TEST_VECTOR, .logical = true, .dest = 0x2 },
		{ .mode = ICR_DM_FIXED, .vector = TEST_VECTOR, .shorthand = ICR_SH_ALL_BUT_SELF },
		{ .mode = ICR_DM_LOWEST, .vector = TEST_VECTOR, .dest = 16 },
		{ .mode = ICR_DM_NMI, .dest = 16 },
		{ .mode = ICR_DM_INIT, .dest = 1 },
		{ .mode = ICR_DM_INIT, .logical = true, .dest = 0x10001 },
		{ .mode = ICR_DM_INIT, .shorthand = ICR_SH_ALL_BUT_SELF },
	};
	struct icr_fields icr;
	int i;

	for (i = 0; i < ARRAY_SIZE(deasserts); i++) {
		icr = deasserts[i];
		icr.level_trigger = true;
		add(CLASS_DEASSERT, &icr);
	}
	icr = eligible;
	icr.level_assert = false;
	add(CLASS_DEASSERT, &icr);
}

/* Physical IDs and logical clusters that no vCPU has. */
static void add_absent(void)
{
	static const u32 phys[] = { 2, 0xf, 0xff, 0x100, 0xfffffffe };
	static const u32 logical[] = { 0x20, 0x20001, 0xffff0001, 0xfffeffff };
	static const enum icr_delivery_mode modes[] = {
		ICR_DM_FIXED, ICR_DM_LOWEST, ICR_DM_NMI, ICR_DM_INIT
	};
	struct icr_fields icr = { .vector = TEST_VECTOR, .level_assert = true };
	int m, i;

	for (m = 0; m < ARRAY_SIZE(modes); m++) {
		icr.mode = modes[m];
		icr.logical = false;
		for (i = 0; i < ARRAY_SIZE(phys); i++) {
			/* Fixed to each ID; the other modes to the farthest. */
			if (m && i != ARRAY_SIZE(phys) - 1)
				continue;
			icr.dest = phys[i];
			add(CLASS_ABSENT, &icr);
		}
		icr.logical = true;
		for (i = 0; i < ARRAY_SIZE(logical); i++) {
			if (m && i != 1)
				continue;
			icr.dest = logical[i];
			add(CLASS_ABSENT, &icr);
		}
	}
}

/* Well-formed IPIs: they show that the checks see what is delivered. */
static void add_controls(void)
{
	struct icr_fields icr = eligible;

	add(CLASS_CONTROL, &icr);
	icr.logical = true;
	icr.dest = 0x10001;
	add(CLASS_CONTROL, &icr);
	icr = slow_bases[ARRAY_SIZE(slow_bases) - 1];	/* NMI */
	add(CLASS_CONTROL, &icr);
}

/* ---- the host */

enum way { BY_GUEST, BY_SET_MSRS, BY_SET_LAPIC, NR_WAYS };

static const char * const way_names[NR_WAYS] = {
	[BY_GUEST] = "guest WRMSR",
	[BY_SET_MSRS] = "host KVM_SET_MSRS",
	[BY_SET_LAPIC] = "host KVM_SET_LAPIC",
};

/*
 * Each way's points form a group.  Only the guest's write is architecture;
 * what the host's ioctls do is KVM's own behaviour, observed and pinned.
 */
static const char * const way_groups[NR_WAYS] = {
	[BY_GUEST] = "architecture (SDM Vol. 3A 11.5.3, 11.6.1): the guest's WRMSR",
	[BY_SET_MSRS] =
		"KVM behaviour, not architecture: KVM_SET_MSRS is the guest's write without the #GP, and sends the IPI",
	[BY_SET_LAPIC] =
		"KVM behaviour, not architecture: KVM_SET_LAPIC stores the ICR as it is, reserved bits too, and sends nothing",
};

static const char * const way_prefixes[NR_WAYS] = {
	[BY_GUEST] = "",
	[BY_SET_MSRS] = "KVM behaviour: ",
	[BY_SET_LAPIC] = "KVM behaviour: ",
};

/* What one write did. */
struct outcome {
	u64 before;	/* the ICR before the write */
	u64 readback;	/* and after it (guest RDMSR or KVM_GET_MSRS) */
	u64 lapic_icr;	/* KVM_GET_LAPIC's ICR2:ICR after KVM_SET_LAPIC */
	u64 hits;		/* the fastpath stat's rise: not compared */
	int result;		/* guest: the fault vector; host: the ioctl's */
	u32 esr;		/* guest only */
	u32 got[NR_VCPUS];	/* the IPI handled, per vCPU (NMIs for NMI) */
	u32 stray;		/* every other interrupt or NMI handled */
	u32 stuck[NR_VCPUS]; /* IRR bits still set after the drain */
};

#ifdef KVM_FASTPATH_SWITCH
enum { RUN_ON, RUN_OFF, NR_RUNS };
static const char * const run_labels[NR_RUNS] = { "", "fastpath off: " };
#else
enum { RUN_ON, NR_RUNS };
static const char * const run_labels[NR_RUNS] = { "" };
#endif

static struct outcome outcomes[NR_RUNS][MAX_VALUES][NR_WAYS];

static struct kvm_vm *vm;
static struct kvm_vcpu *vcpus[NR_VCPUS];
static struct ipi_round round;
static u32 *host_op;
static u64 *host_icr;
static struct sent *host_sent;
static struct ipi_platform platform;
static bool have_stat;

/* Run vCPU @i to its next GUEST_SYNC; it never halts, so this returns. */
static void run_to_sync(int i)
{
	vcpu_run_within(vcpus[i], WAIT_SECONDS);
	TEST_ASSERT_EQ(vcpu_sync_or_done(vcpus[i], NULL), UCALL_SYNC);
}

/*
 * An INIT would reset the parked vCPU, which would then wait for a SIPI
 * forever: stop with the reason instead (getting the MP state makes KVM
 * take a pending INIT).
 */
static void assert_not_reset(int i, u64 icr)
{
	struct kvm_mp_state mp;
	struct kvm_sregs sregs;

	vcpu_mp_state_get(vcpus[i], &mp);
	vcpu_sregs_get(vcpus[i], &sregs);
	TEST_ASSERT(mp.mp_state == KVM_MP_STATE_RUNNABLE && sregs.cs.selector != 0xf000,
		    "ICR 0x%lx sent an INIT to vCPU 0x%x (MP state %u, CS 0x%x)",
		    icr, apic_ids[i], mp.mp_state, sregs.cs.selector);
}

static u32 lapic_reg(struct kvm_lapic_state *s, unsigned int reg)
{
	u32 val;

	memcpy(&val, &s->regs[reg], sizeof(val));
	return val;
}

static void set_lapic_reg(struct kvm_lapic_state *s, unsigned int reg, u32 val)
{
	memcpy(&s->regs[reg], &val, sizeof(val));
}

/*
 * After the drain an IRR bit is left set only for a vector the vCPU cannot
 * take (0-15, below every PPR): count the bits and clear them.
 */
static void collect_stuck(int i, struct outcome *o)
{
	struct kvm_lapic_state s;
	unsigned int w, reg;

	vcpu_ioctl(vcpus[i], KVM_GET_LAPIC, &s);
	for (w = 0; w < 8; w++) {
		reg = APIC_IRR + w * 0x10;
		o->stuck[i] += __builtin_popcount(lapic_reg(&s, reg));
		set_lapic_reg(&s, reg, 0);
	}
	if (o->stuck[i])
		vcpu_ioctl(vcpus[i], KVM_SET_LAPIC, &s);
}

/* Every vCPU handles what the write left pending; count what each handled. */
static void drain_all(u64 icr, struct outcome *o)
{
	struct ipi_tally before[NR_VCPUS];
	int i;

	memcpy(before, round.tally, sizeof(before));
	for (i = 0; i < NR_VCPUS; i++) {
		const struct ipi_tally *t = &round.tally[i];

		if (icr_decode(icr).mode == ICR_DM_INIT)
			assert_not_reset(i, icr);
		ipi_round_fence_due(&round, i);
		ipi_round_fence(&round, i);
		host_op[i] = OP_DRAIN;
		run_to_sync(i);
		TEST_ASSERT(t->irqs[IPI_FENCE_VECTOR] == round.fences_due[i],
			    "vCPU 0x%x handled %u fences of %u (ICR 0x%lx)", apic_ids[i],
			    t->irqs[IPI_FENCE_VECTOR], round.fences_due[i], icr);
	}
	ipi_round_collect(&round, icr, before, o->got, &o->stray);
	for (i = 0; i < NR_VCPUS; i++)
		collect_stuck(i, o);
}

static u64 hits_now(void)
{
	return ipi_fastpath_hits(vcpus[SENDER], have_stat);
}

static void write_by_guest(u64 icr, struct outcome *o)
{
	u64 start = hits_now();

	*host_icr = icr;
	host_op[SENDER] = OP_SEND;
	run_to_sync(SENDER);
	o->hits = hits_now() - start;
	o->result = host_sent->fault;
	o->readback = host_sent->readback;
	o->esr = host_sent->esr;
}

static void write_by_set_msrs(u64 icr, struct outcome *o)
{
	u64 start = hits_now();

	o->result = _vcpu_set_msr(vcpus[SENDER], ICR_MSR, icr);
	o->hits = hits_now() - start;
	o->readback = vcpu_get_msr(vcpus[SENDER], ICR_MSR);
}

/* In x2APIC mode userspace sees the ICR as ICR (low) and ICR2 (high). */
static void write_by_set_lapic(u64 icr, struct outcome *o)
{
	u64 start = hits_now();
	struct kvm_lapic_state s;

	vcpu_ioctl(vcpus[SENDER], KVM_GET_LAPIC, &s);
	set_lapic_reg(&s, APIC_ICR, icr);
	set_lapic_reg(&s, APIC_ICR2, icr >> 32);
	o->result = __vcpu_ioctl(vcpus[SENDER], KVM_SET_LAPIC, &s);
	o->hits = hits_now() - start;
	vcpu_ioctl(vcpus[SENDER], KVM_GET_LAPIC, &s);
	o->lapic_icr = lapic_reg(&s, APIC_ICR) | (u64)lapic_reg(&s, APIC_ICR2) << 32;
	o->readback = vcpu_get_msr(vcpus[SENDER], ICR_MSR);
}

static void write_one(enum way way, u64 icr, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->before = vcpu_get_msr(vcpus[SENDER], ICR_MSR);
	if (way == BY_GUEST)
		write_by_guest(icr, o);
	else if (way == BY_SET_MSRS)
		write_by_set_msrs(icr, o);
	else
		write_by_set_lapic(icr, o);
	drain_all(icr, o);
}

/* ---- the checks */

static void format_got(const struct outcome *o, char *buf, size_t size)
{
	int i, n;

	n = snprintf(buf, size, "{");
	for (i = 0; i < NR_VCPUS; i++)
		if (o->got[i])
			n += snprintf(buf + n, size - n, "%s0x%x:%u", n > 1 ? "," : "",
				      apic_ids[i], o->got[i]);
	n += snprintf(buf + n, size - n, "}+%u stray", o->stray);
	for (i = 0; i < NR_VCPUS; i++)
		if (o->stuck[i])
			n += snprintf(buf + n, size - n, ", IRR of 0x%x: %u stuck",
				      apic_ids[i], o->stuck[i]);
}

/* Nothing left in an IRR, and nothing handled but the IPI itself. */
static bool clean(const struct outcome *o)
{
	int i;

	for (i = 0; i < NR_VCPUS; i++)
		if (o->stuck[i])
			return false;
	return !o->stray;
}

/* Who handled what, as the oracle says; an undefined outcome passes. */
static bool received_as(const struct ipi_expectation *e, const struct outcome *o)
{
	return e->fate == IPI_FATE_UNDEFINED ||
	       (ipi_received_as(e, o->got, NR_VCPUS) && clean(o));
}

static bool received_nothing(const struct outcome *o)
{
	static const struct ipi_expectation nobody = { .fate = IPI_FATE_EACH };

	return received_as(&nobody, o);
}

/* KVM's known deviations from the SDM, by value (the header comment). */
enum kvm_deviation {
	DEV_NONE,
	DEV_IRR,	/* illegal vector, left in the IRR of its receivers */
	DEV_DROPPED,	/* level de-assert, dropped */
};

/*
 * Which deviation KVM is known to show for @icr; for DEV_IRR, @legal is who
 * the same IPI with a legal vector reaches.
 */
static enum kvm_deviation known_deviation(u64 icr, struct ipi_expectation *legal)
{
	struct icr_fields d = icr_decode(icr);

	if ((d.mode != ICR_DM_FIXED && d.mode != ICR_DM_LOWEST) ||
	    (icr & X2APIC_RSVD_BITS_MASK))
		return DEV_NONE;
	if (d.level_trigger && !d.level_assert)
		return DEV_DROPPED;
	if (!icr_illegal_vector(icr))
		return DEV_NONE;
	*legal = ipi_expect(icr | 0x20, SENDER, apic_ids, NR_VCPUS);
	return legal->targets ? DEV_IRR : DEV_NONE;
}

/* Did the write do exactly what KVM is known to do instead of the SDM's? */
static bool deviated_as_known(u64 icr, const struct outcome *o)
{
	struct ipi_expectation legal;
	struct outcome in_irr = {};
	int i;

	switch (known_deviation(icr, &legal)) {
	case DEV_DROPPED:
		return received_nothing(o);
	case DEV_IRR:
		for (i = 0; i < NR_VCPUS; i++) {
			if (o->got[i])
				return false;
			in_irr.got[i] = o->stuck[i];
		}
		return !o->stray && received_as(&legal, &in_irr) &&
		       !received_nothing(&in_irr);
	default:
		return false;
	}
}

/* Append one reason to @why ("; "-separated). */
static void __printf(3, 4) add_why(char *why, size_t size, const char *fmt, ...)
{
	size_t n = strlen(why);
	va_list ap;

	if (n + 2 >= size)
		return;
	if (n) {
		memcpy(why + n, "; ", 2);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(why + n, size - n, fmt, ap);
	va_end(ap);
}

/*
 * Append "handled ..., want ..." to @why if the recipients are wrong, unless
 * they are what KVM is known to do: then count it in @deviated.
 */
static void check_received(u64 icr, const struct ipi_expectation *e,
			   const struct outcome *o, char *why, size_t size,
			   unsigned int *deviated)
{
	char got[128], want[64];

	if (received_as(e, o))
		return;
	if (deviated_as_known(icr, o)) {
		(*deviated)++;
		return;
	}
	format_got(o, got, sizeof(got));
	ipi_format_vcpus(e->targets, apic_ids, NR_VCPUS, want, sizeof(want));
	if (e->targets)
		add_why(why, size, "handled %s, want %s %s", got,
			ipi_fate_name(e->fate), want);
	else
		add_why(why, size, "handled %s, want nothing", got);
}

/* The guest's write: the SDM, through the oracle.  Sets @why if wrong. */
static void check_guest(u64 icr, const struct outcome *o, char *why, size_t size,
			unsigned int *deviated)
{
	struct ipi_expectation e = ipi_expect(icr, SENDER, apic_ids, NR_VCPUS);
	int want_hits = icr_expected_fastpath_hits(icr, &platform);
	bool gp = e.fate == IPI_FATE_GP;

	if (o->result != (gp ? GP_VECTOR : 0))
		add_why(why, size, "fault 0x%x, want %s", o->result, gp ? "#GP" : "none");
	if (o->readback != (gp ? o->before : icr))
		add_why(why, size, "ICR 0x%lx, 0x%lx before", o->readback, o->before);
	check_received(icr, &e, o, why, size, deviated);
	if (!ipi_path_unprovable(&platform, have_stat) && o->hits != (u64)want_hits)
		add_why(why, size, "fastpath +%lu, want +%d", o->hits, want_hits);
}

/*
 * KVM_SET_MSRS: the guest's write without the fault.  Refused where that
 * must fault, else stored and sent as the oracle says or, where it has no
 * answer, as the guest's write of the value (@g) was.
 */
static void check_set_msrs(u64 icr, const struct outcome *o,
			   const struct outcome *g, char *why, size_t size,
			   unsigned int *deviated)
{
	struct ipi_expectation e = ipi_expect(icr, SENDER, apic_ids, NR_VCPUS);
	bool gp = e.fate == IPI_FATE_GP;
	char got[128], guest_got[128];

	format_got(o, got, sizeof(got));
	format_got(g, guest_got, sizeof(guest_got));
	if (o->result != !gp)
		add_why(why, size, "KVM_SET_MSRS set %d MSRs, want %d", o->result, !gp);
	if (o->readback != (gp ? o->before : icr))
		add_why(why, size, "ICR 0x%lx, 0x%lx before", o->readback, o->before);
	check_received(icr, &e, o, why, size, deviated);
	if (e.fate == IPI_FATE_UNDEFINED &&
	    (memcmp(o->got, g->got, sizeof(o->got)) || o->stray != g->stray ||
	     memcmp(o->stuck, g->stuck, sizeof(o->stuck))))
		add_why(why, size, "handled %s, after the guest's write %s", got, guest_got);
	if (!ipi_path_unprovable(&platform, have_stat) && o->hits)
		add_why(why, size, "fastpath +%lu, want +0", o->hits);
}

/* KVM_SET_LAPIC restores state: stored whatever it is, nothing sent. */
static void check_set_lapic(u64 icr, const struct outcome *o, char *why, size_t size)
{
	char got[128];

	format_got(o, got, sizeof(got));
	if (o->result)
		add_why(why, size, "KVM_SET_LAPIC returned %d", o->result);
	if (o->lapic_icr != icr || o->readback != icr)
		add_why(why, size, "KVM_GET_LAPIC reads 0x%lx, KVM_GET_MSRS 0x%lx",
			o->lapic_icr, o->readback);
	if (!received_nothing(o))
		add_why(why, size, "it sent %s", got);
	if (!ipi_path_unprovable(&platform, have_stat) && o->hits)
		add_why(why, size, "fastpath +%lu, want +0", o->hits);
}

/*
 * The point @name of checks of which @failed went unlike the SDM and
 * @deviated exactly as KVM is known to, of the @known that KVM is known to
 * get wrong (ipi_sdm_verdict()).
 */
static void report_sdm(const char *name, unsigned int failed, unsigned int deviated,
		       unsigned int known)
{
	struct ipi_verdict v = ipi_sdm_verdict(failed, deviated, known);

	if (!failed && deviated < known)
		ksft_print_msg("%s: %u of %u known KVM deviations %s\n", name, known - deviated,
			       known, "now follow the SDM");
	ksft_test_result_code(v.code, name, v.why ? "%s" : NULL, v.why);
}

/* The name of the point of class @c written way @w in run @run. */
static void class_point_name(char *buf, size_t size, int run, unsigned int c, unsigned int w)
{
	snprintf(buf, size, "%s%s%s: %s", run_labels[run], way_prefixes[w], class_names[c],
		 way_names[w]);
}

/* The name of run @run's point on the sender's ESR. */
static void esr_point_name(char *buf, size_t size, int run)
{
	snprintf(buf, size, "%sESR logs send illegal vector: %s", run_labels[run],
		 way_names[BY_GUEST]);
}

/*
 * SDM Vol. 3A 11.5.3: a vector 0-15 written to the ICR sets "send illegal
 * vector" in the sender's ESR; no other write here may set it.  KVM is
 * known to log nothing.
 */
static void report_esr(int run)
{
	unsigned int illegal = 0, logged = 0, spurious = 0, v;
	char name[96];

	for (v = 0; v < nr_values; v++) {
		u64 icr = values[v].icr;
		bool set = outcomes[run][v][BY_GUEST].esr & ESR_SEND_ILLEGAL_VECTOR;

		if (icr & X2APIC_RSVD_BITS_MASK)
			continue;
		if (icr_illegal_vector(icr)) {
			illegal++;
			logged += set;
		} else {
			spurious += set;
		}
	}
	if (spurious)
		ksft_print_msg("%s%u legal vectors logged as illegal in the ESR\n",
			       run_labels[run], spurious);
	esr_point_name(name, sizeof(name), run);
	ksft_print_msg("%s: %u values\n", name, illegal);
	report_sdm(name, spurious || (logged && logged != illegal), illegal - logged, illegal);
}

static void report_run(int run)
{
	unsigned int failed[NR_CLASSES][NR_WAYS] = {}, tried[NR_CLASSES] = {};
	unsigned int deviated[NR_CLASSES][NR_WAYS] = {}, known[NR_CLASSES] = {};
	unsigned int host_sent = 0, stored_rsvd = 0;
	struct ipi_expectation legal;
	char text[128], why[256], name[128];
	unsigned int v, c, w;

	for (v = 0; v < nr_values; v++) {
		u64 icr = values[v].icr;
		struct outcome *o = outcomes[run][v];

		c = values[v].class;
		tried[c]++;
		known[c] += known_deviation(icr, &legal) != DEV_NONE;
		for (w = 0; w < NR_WAYS; w++) {
			why[0] = 0;
			if (w == BY_GUEST)
				check_guest(icr, &o[w], why, sizeof(why), &deviated[c][w]);
			else if (w == BY_SET_MSRS)
				check_set_msrs(icr, &o[w], &o[BY_GUEST], why, sizeof(why),
					       &deviated[c][w]);
			else
				check_set_lapic(icr, &o[w], why, sizeof(why));
			if (!why[0])
				continue;
			failed[c][w]++;
			icr_format(icr, text, sizeof(text));
			ksft_print_msg("MISMATCH %s%s %s: %s\n", run_labels[run],
				       way_names[w], text, why);
		}
		host_sent += o[BY_SET_MSRS].result == 1 && !received_nothing(&o[BY_SET_MSRS]);
		stored_rsvd += (icr & X2APIC_RSVD_BITS_MASK) && o[BY_SET_LAPIC].readback == icr;
	}

	ksft_print_msg("%s%u values; by KVM_SET_MSRS %u reached a vCPU\n",
		       run_labels[run], nr_values, host_sent);
	ksft_print_msg("%sKVM_SET_LAPIC stored %u with reserved bits\n",
		       run_labels[run], stored_rsvd);

	for (w = 0; w < NR_WAYS; w++) {
		ksft_print_msg("%s%s\n", run_labels[run], way_groups[w]);
		for (c = 0; c < NR_CLASSES; c++) {
			class_point_name(name, sizeof(name), run, c, w);
			ksft_print_msg("%s: %u values\n", name, tried[c]);
			report_sdm(name, failed[c][w], deviated[c][w],
				   w == BY_SET_LAPIC ? 0 : known[c]);
		}
		if (w == BY_GUEST)
			report_esr(run);
	}
}

#ifdef KVM_FASTPATH_SWITCH
static bool same(const struct outcome *a, const struct outcome *b)
{
	return a->before == b->before && a->readback == b->readback &&
	       a->lapic_icr == b->lapic_icr && a->result == b->result &&
	       a->esr == b->esr && a->stray == b->stray &&
	       !memcmp(a->got, b->got, sizeof(a->got)) &&
	       !memcmp(a->stuck, b->stuck, sizeof(a->stuck));
}

/* Value by value and way by way, the fastpath switch changed nothing. */
static void compare_runs(void)
{
	unsigned int differ[NR_CLASSES] = {}, tried[NR_CLASSES] = {};
	char text[128], on[128], off[128];
	unsigned int v, c, w;

	for (v = 0; v < nr_values; v++) {
		c = values[v].class;
		for (w = 0; w < NR_WAYS; w++) {
			struct outcome *a = &outcomes[RUN_ON][v][w];
			struct outcome *b = &outcomes[RUN_OFF][v][w];

			tried[c]++;
			if (same(a, b))
				continue;
			differ[c]++;
			icr_format(values[v].icr, text, sizeof(text));
			format_got(a, on, sizeof(on));
			format_got(b, off, sizeof(off));
			ksft_print_msg("DIFFERS %s %s\n", way_names[w], text);
			ksft_print_msg("  on / off: result %d / %d, ICR 0x%lx / 0x%lx\n",
				       a->result, b->result, a->readback, b->readback);
			ksft_print_msg("  on / off: ICR before 0x%lx / 0x%lx\n",
				       a->before, b->before);
			ksft_print_msg("  on / off: ESR 0x%x / 0x%x, handled %s / %s\n",
				       a->esr, b->esr, on, off);
		}
	}
	for (c = 0; c < NR_CLASSES; c++) {
		ksft_print_msg("%s: %u writes compared\n", class_names[c], tried[c]);
		ksft_test_result(!differ[c], "%s: the same with the fastpath off\n",
				 class_names[c]);
	}
}

#endif
/* A fresh VM, every vCPU parked in x2APIC mode. */
static void create_vm(void)
{
	int i;

	u8 vectors[256 - FIRST_IRQ];

	vm = vm_create(NR_VCPUS);
	for (i = 0; i < NR_VCPUS; i++) {
		vcpus[i] = vm_vcpu_add(vm, apic_ids[i], guest_main);
		vcpu_args_set(vcpus[i], 1, i);
	}
	for (i = 0; i < ARRAY_SIZE(vectors); i++)
		vectors[i] = FIRST_IRQ + i;
	ipi_round_init(&round, vm, apic_ids, NR_VCPUS, vectors, ARRAY_SIZE(vectors));
	host_op = addr_gva2hva(vm, (gva_t)guest_op);
	host_icr = addr_gva2hva(vm, (gva_t)&icr_to_write);
	host_sent = addr_gva2hva(vm, (gva_t)&sent);

	/* Before the vCPU runs: its stats fd cannot be had while it does. */
	have_stat = vcpu_has_stat(vcpus[SENDER], x2apic_icr_fastpath_writes);
	platform = ipi_platform_probe();
	for (i = 0; i < NR_VCPUS; i++)
		run_to_sync(i);		/* in x2APIC mode, parked */
}

static void run_table(int run)
{
	const char *why;
	char desc[192];
	unsigned int v, w;

	create_vm();
	ipi_platform_describe(&platform, desc, sizeof(desc));
	ksft_print_msg("%splatform: %s\n", run_labels[run], desc);
	/* The outcome points compare each write's path too, where they can. */
	why = ipi_path_unprovable(&platform, have_stat);
	if (why)
		ksft_print_msg("%spaths not compared: %s\n", run_labels[run], why);

	for (v = 0; v < nr_values; v++)
		for (w = 0; w < NR_WAYS; w++)
			write_one(w, values[v].icr, &outcomes[run][v][w]);

	kvm_vm_free(vm);
	report_run(run);
}

#ifdef KVM_FASTPATH_SWITCH
/* The points of the run with the fastpath off, where it cannot be made. */
static void skip_run_off(const char *why)
{
	unsigned int c, w;
	char name[128];

	for (w = 0; w < NR_WAYS; w++) {
		for (c = 0; c < NR_CLASSES; c++) {
			class_point_name(name, sizeof(name), RUN_OFF, c, w);
			ksft_test_result_code(KSFT_SKIP, name, "%s", why);
		}
		if (w == BY_GUEST) {
			esr_point_name(name, sizeof(name), RUN_OFF);
			ksft_test_result_code(KSFT_SKIP, name, "%s", why);
		}
	}
	for (c = 0; c < NR_CLASSES; c++) {
		snprintf(name, sizeof(name), "%s: the same with the fastpath off",
			 class_names[c]);
		ksft_test_result_code(KSFT_SKIP, name, "%s", why);
	}
}

/*
 * With -d the table runs twice, each time on a fresh VM, with
 * kvm.x2apic_icr_fastpath on and off, and every write must have had the
 * same outcome both times.  Where the SDM has no answer (reserved and
 * ExtINT modes) that sameness is all that is required.  The switch is
 * host-wide, so without -d (or the switch, or root) the table runs once
 * with the fastpath as found and the second run's points are skipped.
 * The switch goes back to what it was at the end.
 */
static void run_tables(bool differential)
{
	const char *off_unavailable = fastpath_switch_unusable(differential);
	bool was_on;

	if (off_unavailable) {
		run_table(RUN_ON);
		skip_run_off(off_unavailable);
		return;
	}
	was_on = fastpath_switch_set(true);
	run_table(RUN_ON);
	fastpath_switch_set(false);
	run_table(RUN_OFF);
	fastpath_switch_set(was_on);
	compare_runs();
}

#endif
#ifdef KVM_FASTPATH_SWITCH
int main(int argc, char *argv[])
#else
int main(void)
#endif
{
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_BINARY_STATS_FD));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_SIGNAL_MSI));

	add_reserved();
	add_illegal_vectors();
	add_odd_modes();
	add_deasserts();
	add_absent();
	add_controls();

	ksft_print_header();
#ifdef KVM_FASTPATH_SWITCH
	ksft_set_plan(NR_RUNS * (NR_CLASSES * NR_WAYS + 1) + NR_CLASSES);
	run_tables(getopt(argc, argv, "d") == 'd');
#else
	ksft_set_plan(NR_CLASSES * NR_WAYS + 1);
	run_table(RUN_ON);
#endif
	ksft_finished();
}
