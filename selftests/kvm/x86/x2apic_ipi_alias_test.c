// SPDX-License-Identifier: GPL-2.0-only
/*
 * IPIs to APIC IDs that alias, in xAPIC mode, where the guest sets each
 * vCPU's APIC ID and logical ID (LDR) and may give two vCPUs the same one.
 * Every APIC decides on its own whether it accepts an IPI (SDM Vol. 3A,
 * "Determining IPI Destination"): a physical destination reaches every vCPU
 * with that ID, and a flat logical one every vCPU whose LDR shares a bit
 * with it, so two vCPUs with the same ID or LDR bit both take it, and a vCPU
 * whose LDR has several bits set takes an IPI to each of them.  KVM routes
 * IPIs through a map from IDs to vCPUs that holds one vCPU per ID, and must
 * not use it where IDs alias.
 *
 * For each state of the table, every vCPU sets its IDs, vCPU 0 sends one
 * fixed IPI, with a vector of its own, to each destination of the state,
 * and every vCPU takes what is pending.  Two points per state: what reached
 * each vCPU (taken, or still in its IRR) must be what the model
 * (ipi_oracle.h) says, and nothing may be left in an IRR: a vCPU with
 * interrupts on takes what is pending.  The host runs one vCPU at a time.
 */
#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "ipi_oracle.h"
#include "lapic_irr.h"

#define NR_VCPUS	4
#define SENDER		0
#define FIRST_VECTOR	0x40
#define NR_DESTS	4

struct alias_state {
	const char *name;
	u8 apic_id[NR_VCPUS];
	u8 ldr[NR_VCPUS];		/* flat model, LDR bits 31:24 */
	u64 dest[NR_DESTS];		/* ICR2:ICR's destination mode and field */
	int nr_dests;
};

/* The IPI to the d-th destination of a state: fixed, a vector each. */
#define IPI(dest, d)	((dest) | APIC_DM_FIXED | APIC_INT_ASSERT | (FIRST_VECTOR + (d)))
#define PHYSICAL(id)	((u64)(id) << XAPIC_DEST_SHIFT)
#define LOGICAL(ldr)	(APIC_DEST_LOGICAL | (u64)(ldr) << XAPIC_DEST_SHIFT)

static const struct alias_state states[] = {
	{ "distinct IDs (control)", { 0, 1, 2, 3 }, { 0x01, 0x02, 0x04, 0x08 },
	  { PHYSICAL(2), PHYSICAL(3), LOGICAL(0x04), LOGICAL(0x0c) }, 4 },
	{ "two vCPUs with APIC ID 2", { 0, 1, 2, 2 }, { 0x01, 0x02, 0x04, 0x08 },
	  { PHYSICAL(2), PHYSICAL(1), LOGICAL(0x08) }, 3 },
	{ "two vCPUs with APIC ID 0, the sender's", { 0, 0, 2, 3 }, { 0x01, 0x02, 0x04, 0x08 },
	  { PHYSICAL(0), PHYSICAL(3) }, 2 },
	{ "two vCPUs with LDR bit 1", { 0, 1, 2, 3 }, { 0x01, 0x02, 0x02, 0x08 },
	  { LOGICAL(0x02), LOGICAL(0x08), LOGICAL(0x0a) }, 3 },
	{ "an LDR with two bits", { 0, 1, 2, 3 }, { 0x01, 0x02, 0x04, 0x30 },
	  { LOGICAL(0x20), LOGICAL(0x10), LOGICAL(0x24) }, 3 },
	{ "an LDR with every bit", { 0, 1, 2, 3 }, { 0x01, 0x02, 0xff, 0x08 },
	  { LOGICAL(0x40), LOGICAL(0x08), PHYSICAL(2) }, 3 },
};

/* Host -> guest, while every vCPU is stopped. */
static u32 cur_state;
/* Guest -> host: IPIs taken, per vCPU and destination. */
static u32 taken[NR_VCPUS][NR_DESTS];

static void ipi_handler(struct ex_regs *regs)
{
	/* the vCPU's index is in its GS base: its IDs are what this changes */
	u32 me = rdmsr(MSR_GS_BASE);

	WRITE_ONCE(taken[me][regs->vector - FIRST_VECTOR],
		   taken[me][regs->vector - FIRST_VECTOR] + 1);
	xapic_write_reg(APIC_EOI, 0);
}

static void guest_code(u32 me)
{
	const struct alias_state *s;
	int d;

	xapic_enable();
	xapic_write_reg(APIC_DFR, APIC_DFR_FLAT);
	for (;;) {
		s = &states[READ_ONCE(cur_state)];
		xapic_write_reg(APIC_ID, (u32)s->apic_id[me] << 24);
		xapic_write_reg(APIC_LDR, (u32)s->ldr[me] << 24);
		GUEST_SYNC(0);

		for (d = 0; me == SENDER && d < s->nr_dests; d++) {
			xapic_write_reg(APIC_ICR2, IPI(s->dest[d], d) >> 32);
			xapic_write_reg(APIC_ICR, (u32)IPI(s->dest[d], d));
		}
		GUEST_SYNC(1);

		/* take what the sender sent */
		sti_nop_cli();
		GUEST_SYNC(2);
	}
}

static void run_to_sync(struct kvm_vcpu *vcpu, u64 stage)
{
	struct ucall uc;

	vcpu_run(vcpu);
	TEST_ASSERT_KVM_EXIT_REASON(vcpu, KVM_EXIT_IO);
	switch (get_ucall(vcpu, &uc)) {
	case UCALL_SYNC:
		TEST_ASSERT_EQ(uc.args[1], stage);
		break;
	case UCALL_ABORT:
		REPORT_GUEST_ASSERT(uc);
		break;
	default:
		TEST_FAIL("Unexpected ucall %lu", uc.cmd);
	}
}

/*
 * Did every IPI of state @s reach exactly whom the model says, and was each
 * taken?  What was left in an IRR is cleared, so the next state starts clean.
 */
static void check_state(struct kvm_vm *vm, struct kvm_vcpu *vcpus[],
			const struct alias_state *s)
{
	u32 ids[NR_VCPUS], reached[NR_VCPUS];
	bool pending[NR_VCPUS], delivered = true, taken_all = true, left;
	struct ipi_expectation want;
	char text[96], who[64];
	u64 icr;
	int d, i;

	sync_global_from_guest(vm, taken);
	for (i = 0; i < NR_VCPUS; i++)
		ids[i] = s->apic_id[i];
	for (d = 0; d < s->nr_dests; d++) {
		left = false;
		for (i = 0; i < NR_VCPUS; i++) {
			pending[i] = vcpu_irr_test_and_clear(vcpus[i], FIRST_VECTOR + d);
			reached[i] = taken[i][d] + pending[i];
			left |= pending[i];
		}
		icr = IPI(s->dest[d], d);
		want = ipi_expect_xapic(icr, SENDER, ids, s->ldr, NR_VCPUS);
		if (ipi_received_as(&want, reached, NR_VCPUS) && !left)
			continue;
		delivered &= ipi_received_as(&want, reached, NR_VCPUS);
		taken_all &= !left;
		/* xAPIC's destination (bits 63:56) where x2APIC has it */
		icr_format((u32)icr | (icr >> XAPIC_DEST_SHIFT) << 32, text, sizeof(text));
		ipi_format_vcpus(want.targets, ids, NR_VCPUS, who, sizeof(who));
		ksft_print_msg("%s: %s: taken %u, %u, %u, %u times, IRR %d%d%d%d, want %s %s\n",
			       s->name, text, taken[0][d], taken[1][d], taken[2][d], taken[3][d],
			       pending[0], pending[1], pending[2], pending[3],
			       ipi_fate_name(want.fate), who);
	}
	memset(taken, 0, sizeof(taken));
	sync_global_to_guest(vm, taken);
	ksft_test_result(delivered, "%s: delivered\n", s->name);
	ksft_test_result(taken_all, "%s: taken\n", s->name);
}

int main(void)
{
	struct kvm_vcpu *vcpus[NR_VCPUS];
	struct kvm_vm *vm;
	int s, i, stage;

	vm = vm_create_with_vcpus(NR_VCPUS, guest_code, vcpus);
	vm_install_exception_handler(vm, FIRST_VECTOR, ipi_handler);
	for (i = 1; i < NR_DESTS; i++)
		vm_install_exception_handler(vm, FIRST_VECTOR + i, ipi_handler);
	virt_pg_map(vm, APIC_DEFAULT_GPA, APIC_DEFAULT_GPA);
	for (i = 0; i < NR_VCPUS; i++) {
		vcpu_args_set(vcpus[i], 1, i);
		vcpu_set_msr(vcpus[i], MSR_GS_BASE, i);
	}

	ksft_print_header();
	ksft_set_plan(2 * ARRAY_SIZE(states));
	for (s = 0; s < ARRAY_SIZE(states); s++) {
		cur_state = s;
		sync_global_to_guest(vm, cur_state);
		/* the IDs, then the IPIs, then their delivery */
		for (stage = 0; stage < 3; stage++)
			for (i = 0; i < NR_VCPUS; i++)
				run_to_sync(vcpus[i], stage);
		check_state(vm, vcpus, &states[s]);
	}

	kvm_vm_free(vm);
	ksft_finished();
}
