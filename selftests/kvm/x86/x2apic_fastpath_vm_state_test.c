// SPDX-License-Identifier: GPL-2.0-only
/*
 * The x2APIC ICR fastpath under VM-wide APIC states.  Whether KVM completes
 * an ICR write in its fastpath may depend on more than the value written:
 * where KVM delivers through its map of the VM's APICs, on the APIC modes
 * and IDs of every vCPU, a logical destination taking it only while the map
 * can route it.  This kernel's rule (ipi_oracle.c) says which writes do.
 *
 * For each state below, every vCPU first puts its own APIC in the state
 * (x2APIC mode, then xAPIC mode with an APIC ID of its own or a peer's,
 * software- or hardware-disabled) and parks in the host for good; vCPU 0,
 * in x2APIC mode with interrupts off, then writes each ICR of a table once.
 * For every write the host checks against the oracle (ipi_oracle.h, struct
 * ipi_vm_apics):
 *
 *  - path: the sender's x2apic_icr_fastpath_writes stat rose by what this
 *    kernel's rule says for that write in that VM;
 *  - outcome: the IPI is latched exactly where the SDM says: a fixed or
 *    lowest-priority vector in the IRR (KVM_GET_LAPIC), an NMI pending
 *    (KVM_GET_VCPU_EVENTS).  The host then clears both.
 *
 * Only the sender ever runs after the setup, with interrupts off, so nothing
 * is handled and there is nothing to wait for but its next ucall.
 */

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "ipi_oracle.h"
#include "ipi_platform.h"
#include "lapic_irr.h"
#include "vcpu_stats.h"
#include "vcpu_thread.h"
#ifdef KVM_FASTPATH_VPMU_GATE
/*
 * This kernel's fastpath takes no WRMSR of a vCPU whose mediated vPMU counts
 * instructions retired: one more state has the sender's vPMU count them.
 */
#include "vpmu_counting.h"
#endif

#define WAIT_SECONDS	10	/* any one KVM_RUN */

#define MAX_VCPUS	17
#define TEST_VECTOR	0xb0
#define SENDER		0	/* index of the sender in every state */

struct vm_state {
	const char *name;
	unsigned int nr_vcpus;
	u32 ids[MAX_VCPUS];		/* vCPU ID = x2APIC ID */
	enum ipi_apic_state apic[MAX_VCPUS];	/* 0: IPI_APIC_X2APIC */
	u8 xapic_ids[MAX_VCPUS];		/* the APIC ID written in xAPIC mode */
#ifdef KVM_FASTPATH_VPMU_GATE
	bool counts_insns[MAX_VCPUS];		/* its vPMU counts instructions */
#endif
};

/* vCPU 3 (ID 17) is the odd one where there is one. */
static const struct vm_state states[] = {
	{ "all x2APIC, two clusters", 4, { 0, 1, 16, 17 } },
	{ "one vCPU in xAPIC mode", 4, { 0, 1, 16, 17 },
	  { [3] = IPI_APIC_XAPIC }, { [3] = 17 } },
	{ "one vCPU in xAPIC mode with LDR 0", 4, { 0, 1, 16, 17 },
	  { [3] = IPI_APIC_XAPIC_LDR0 }, { [3] = 17 } },
	{ "one xAPIC vCPU with a peer's APIC ID", 4, { 0, 1, 16, 17 },
	  { [3] = IPI_APIC_XAPIC_LDR0 }, { [3] = 1 } },
	{ "one APIC hardware-disabled", 4, { 0, 1, 16, 17 },
	  { [3] = IPI_APIC_HW_DISABLED } },
	{ "one APIC software-disabled", 4, { 0, 1, 16, 17 },
	  { [3] = IPI_APIC_SW_DISABLED } },
	{ "sparse x2APIC IDs up to 0x3fe", 4, { 0, 1, 0x2f1, 0x3fe } },
	{ "a full 16-member cluster", 17,
	  { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 } },
#ifdef KVM_FASTPATH_VPMU_GATE
	{ "mediated PMU counting instructions", 4, { 0, 1, 16, 17 },
	  .counts_insns = { [SENDER] = true } },
#endif
};

/* Who an ICR of the table addresses, in a given state. */
enum target {
	TO_PEER,	/* vCPU 1 */
	TO_PEERS,	/* every vCPU of vCPU 1's logical cluster */
	TO_LAST,	/* the last vCPU: the odd one, or another cluster */
	TO_ABSENT,	/* an ID or a cluster above every vCPU's */
	TO_BROADCAST,	/* 0xffffffff */
	TO_NONE,	/* a shorthand: the destination field is ignored */
};

struct icr_kind {
	const char *name;
	u64 bits;
	enum target to;
};

static const struct icr_kind kinds[] = {
	{ "fixed physical to a peer", APIC_DM_FIXED, TO_PEER },
	{ "fixed logical to a peer", APIC_DM_FIXED | APIC_DEST_LOGICAL, TO_PEER },
	{ "fixed logical to a peer's cluster", APIC_DM_FIXED | APIC_DEST_LOGICAL, TO_PEERS },
	{ "fixed physical to the last vCPU", APIC_DM_FIXED, TO_LAST },
	{ "fixed logical to the last vCPU", APIC_DM_FIXED | APIC_DEST_LOGICAL, TO_LAST },
	{ "nmi physical to the last vCPU", APIC_DM_NMI, TO_LAST },
	{ "nmi logical to the last vCPU", APIC_DM_NMI | APIC_DEST_LOGICAL, TO_LAST },
	{ "lowest-priority logical to a peer", APIC_DM_LOWEST | APIC_DEST_LOGICAL, TO_PEER },
	{ "fixed physical to an absent ID", APIC_DM_FIXED, TO_ABSENT },
	{ "fixed logical to an absent cluster", APIC_DM_FIXED | APIC_DEST_LOGICAL, TO_ABSENT },
	{ "fixed self", APIC_DM_FIXED | APIC_DEST_SELF, TO_NONE },
	{ "fixed all-but-self", APIC_DM_FIXED | APIC_DEST_ALLBUT, TO_NONE },
	{ "fixed physical broadcast", APIC_DM_FIXED, TO_BROADCAST },
};

static u64 icr_to_write;

#ifdef KVM_FASTPATH_VPMU_GATE
static void guest_code(u32 apic_state, u32 xapic_id, u32 count_insns)
#else
static void guest_code(u32 apic_state, u32 xapic_id)
#endif
{
	cli();
#ifdef KVM_FASTPATH_VPMU_GATE
	if (count_insns)
		guest_vpmu_count_instructions();
#endif
	x2apic_enable_icr_exits();
	switch (apic_state) {
	/*
	 * The APIC ID and the LDR are written, not inherited (the SDM does
	 * not keep the LDR across x2APIC -> disabled -> xAPIC).  A flat
	 * logical ID, or none.
	 */
	case IPI_APIC_XAPIC:
		xapic_enable();
		xapic_write_reg(APIC_ID, xapic_id << 24);
		xapic_write_reg(APIC_DFR, APIC_DFR_FLAT);
		xapic_write_reg(APIC_LDR, 0x80u << 24);
		break;
	case IPI_APIC_XAPIC_LDR0:
		xapic_enable();
		xapic_write_reg(APIC_ID, xapic_id << 24);
		xapic_write_reg(APIC_LDR, 0);
		break;
	case IPI_APIC_SW_DISABLED:
		x2apic_write_reg(APIC_SPIV,
				 x2apic_read_reg(APIC_SPIV) & ~APIC_SPIV_APIC_ENABLED);
		break;
	case IPI_APIC_HW_DISABLED:
		apic_disable();
		break;
	}
	/* Only the sender comes back: it writes one ICR per round. */
	for (;;) {
		GUEST_SYNC(0);
		x2apic_write_reg(APIC_ICR, READ_ONCE(icr_to_write));
	}
}

static u32 max_id(const struct vm_state *s)
{
	u32 m = 0;
	unsigned int i;

	for (i = 0; i < s->nr_vcpus; i++)
		m = s->ids[i] > m ? s->ids[i] : m;
	return m;
}

static bool is_nmi(u64 icr)
{
	return (icr & APIC_DM_FIXED_MASK) == APIC_DM_NMI;
}

static u64 icr_of(const struct icr_kind *k, const struct vm_state *s)
{
	bool logical = k->bits & APIC_DEST_LOGICAL;
	u32 dest = 0, peer = s->ids[1], last = s->ids[s->nr_vcpus - 1];
	unsigned int i;

	switch (k->to) {
	case TO_PEER:
		dest = logical ? x2apic_logical_id(peer) : peer;
		break;
	case TO_PEERS:
		for (i = 0; i < s->nr_vcpus; i++)
			if (s->ids[i] >> 4 == peer >> 4)
				dest |= x2apic_logical_id(s->ids[i]);
		break;
	case TO_LAST:
		dest = logical ? x2apic_logical_id(last) : last;
		break;
	case TO_ABSENT:
		dest = logical ? x2apic_logical_id((max_id(s) | 0xf) + 1) : max_id(s) + 1;
		break;
	case TO_BROADCAST:
		dest = X2APIC_BROADCAST;
		break;
	case TO_NONE:
		break;
	}
	return k->bits | APIC_INT_ASSERT | (is_nmi(k->bits) ? 0 : TEST_VECTOR) |
	       (u64)dest << 32;
}

static struct kvm_vcpu *vcpus[MAX_VCPUS];
static struct ipi_platform platform;
static bool have_stat;

/* Did vCPU @vcpu latch the IPI (and forget it now)? */
static bool took_and_clear(struct kvm_vcpu *vcpu, bool nmi)
{
	struct kvm_vcpu_events events;
	bool took;

	if (!nmi)
		return vcpu_irr_test_and_clear(vcpu, TEST_VECTOR);
	vcpu_events_get(vcpu, &events);
	took = events.nmi.pending || events.nmi.injected;
	if (took) {
		events.nmi.pending = 0;
		events.nmi.injected = 0;
		events.flags = KVM_VCPUEVENT_VALID_NMI_PENDING;
		vcpu_events_set(vcpu, &events);
	}
	return took;
}

static void run_write(const struct vm_state *s, const struct ipi_vm_apics *vm,
		      const struct icr_kind *k)
{
	u64 icr = icr_of(k, s), before, hits;
	int want_hits = icr_expected_fastpath_hits_in(icr, SENDER, &platform, vm);
	struct ipi_expectation e = ipi_expect_in(icr, SENDER, vm);
	u32 got[MAX_VCPUS] = {};
	u64 got_set = 0;
	bool nmi = is_nmi(icr);
#ifdef KVM_FASTPATH_SWITCH
	unsigned int disagree;
#endif
	unsigned int i;
	char text[128], got_s[160], want_s[160], name[128];

	icr_format(icr, text, sizeof(text));
	TEST_ASSERT(e.fate == IPI_FATE_EACH || e.fate == IPI_FATE_ONE_OF,
		    "%s in '%s': no defined outcome to check", text, s->name);

	icr_to_write = icr;
	sync_global_to_guest(vcpus[SENDER]->vm, icr_to_write);
	before = ipi_fastpath_hits(vcpus[SENDER], have_stat);
	vcpu_run_within(vcpus[SENDER], WAIT_SECONDS);
	TEST_ASSERT_EQ(vcpu_sync_or_done(vcpus[SENDER], NULL), UCALL_SYNC);
	hits = ipi_fastpath_hits(vcpus[SENDER], have_stat) - before;
	for (i = 0; i < s->nr_vcpus; i++) {
		got[i] = took_and_clear(vcpus[i], nmi);
		got_set |= (u64)got[i] << i;
	}

	snprintf(name, sizeof(name), "%s: %s: path", s->name, k->name);
#ifdef KVM_FASTPATH_SWITCH
	disagree = ipi_path_result(&platform, have_stat, hits, want_hits, name, NULL);
	/* One line per write, for the test bed's tables and pictures. */
	ksft_print_msg("vm-state path: %s: %s: %lu of 1 fast, %u disagree with %s\n",
		       s->name, k->name, hits, disagree, ICR_FASTPATH_RULE);
#else
	ipi_path_result(&platform, have_stat, hits, want_hits, name, NULL);
#endif

	if (!ipi_received_as(&e, got, s->nr_vcpus)) {
		ipi_format_vcpus(got_set, s->ids, s->nr_vcpus, got_s, sizeof(got_s));
		ipi_format_vcpus(e.targets, s->ids, s->nr_vcpus, want_s, sizeof(want_s));
		ksft_print_msg("%s: %s: latched at %s, want %s %s (unchecked 0x%lx)\n",
			       s->name, text, got_s, ipi_fate_name(e.fate), want_s,
			       e.unchecked);
	}
	snprintf(name, sizeof(name), "%s: %s: outcome", s->name, k->name);
	ksft_test_result(ipi_received_as(&e, got, s->nr_vcpus), "%s\n", name);
}

/* Why the state @s cannot be set up here, or NULL. */
static const char *state_unsupported(const struct vm_state *s)
{
	u32 max_vcpu_id = kvm_check_cap(KVM_CAP_MAX_VCPU_ID);
#ifdef KVM_FASTPATH_VPMU_GATE
	unsigned int i;
#endif

	if (max_id(s) >= max_vcpu_id) {
		ksft_print_msg("%s: vCPU IDs up to 0x%x, KVM takes up to 0x%x\n", s->name,
			       max_id(s), max_vcpu_id - 1);
		return "vCPU IDs too high";
	}
#ifdef KVM_FASTPATH_VPMU_GATE
	for (i = 0; i < s->nr_vcpus; i++)
		if (s->counts_insns[i])
			return vpmu_counting_unsupported();
#endif
	return NULL;
}

static void run_state(const struct vm_state *s)
{
	const struct ipi_vm_apics vm = {
		.nr_vcpus = s->nr_vcpus, .x2apic_ids = s->ids, .apic = s->apic,
		.xapic_ids = s->xapic_ids,
#ifdef KVM_FASTPATH_VPMU_GATE
		.pmu_counts_instructions = s->counts_insns,
#endif
	};
	const char *why = state_unsupported(s);
	struct kvm_vm *kvm_vm;
	char name[128];
	unsigned int i;

	if (why) {
		for (i = 0; i < ARRAY_SIZE(kinds); i++) {
			snprintf(name, sizeof(name), "%s: %s: path", s->name, kinds[i].name);
			ksft_test_result_code(KSFT_SKIP, name, "%s", why);
			snprintf(name, sizeof(name), "%s: %s: outcome", s->name, kinds[i].name);
			ksft_test_result_code(KSFT_SKIP, name, "%s", why);
		}
		return;
	}

	kvm_vm = vm_create(s->nr_vcpus);
	virt_pg_map(kvm_vm, APIC_DEFAULT_GPA, APIC_DEFAULT_GPA);
	have_stat = true;
	for (i = 0; i < s->nr_vcpus; i++) {
		vcpus[i] = vm_vcpu_add(kvm_vm, s->ids[i], guest_code);
#ifdef KVM_FASTPATH_VPMU_GATE
		vcpu_args_set(vcpus[i], 3, s->apic[i], s->xapic_ids[i], s->counts_insns[i]);
#else
		vcpu_args_set(vcpus[i], 2, s->apic[i], s->xapic_ids[i]);
#endif
		have_stat &= vcpu_has_stat(vcpus[i], x2apic_icr_fastpath_writes);
	}
	/* Each vCPU puts its APIC in its state and parks; only the sender returns. */
	for (i = 0; i < s->nr_vcpus; i++) {
		vcpu_run_within(vcpus[i], WAIT_SECONDS);
		TEST_ASSERT_EQ(vcpu_sync_or_done(vcpus[i], NULL), UCALL_SYNC);
	}
	ksft_print_msg("state: %s (%u vCPUs)\n", s->name, s->nr_vcpus);
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		run_write(s, &vm, &kinds[i]);
	kvm_vm_free(kvm_vm);
}

int main(void)
{
	char desc[192];
	unsigned int i;

	TEST_REQUIRE(kvm_has_cap(KVM_CAP_BINARY_STATS_FD));

	ksft_print_header();
	ksft_set_plan(2 * ARRAY_SIZE(states) * ARRAY_SIZE(kinds));
	platform = ipi_platform_probe();
	ipi_platform_describe(&platform, desc, sizeof(desc));
	ksft_print_msg("platform: %s\n", desc);

	for (i = 0; i < ARRAY_SIZE(states); i++)
		run_state(&states[i]);
	ksft_finished();
}
