// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM's PV send-IPI hypercall (KVM_HC_SEND_IPI,
 * Documentation/virt/kvm/x86/hypercalls.rst): a0 and a1 are a 128-bit
 * bitmap whose bit i names APIC ID a2 + i, a3 is the ICR, and it returns
 * the number of vCPUs the IPI reached.  KVM routes it through the VM's APIC
 * map, as it does ICR writes, and the guest picks every index: a base above
 * every APIC ID, or an ID no vCPU has, must reach nobody and never an APIC
 * the map holds elsewhere.  A VM without an in-kernel local APIC has no map
 * at all, and the hypercall must reach nobody there either.
 *
 * vCPU 0 makes each hypercall of the table, a fixed IPI with a vector of
 * its own; the other vCPUs, with sparse x2APIC IDs, enable their APICs and
 * are not run again.  The host reads whom the IPI reached from each vCPU's
 * IRR, and checks it and the return value against the model
 * (ipi_oracle.h).
 */
#include <asm/kvm_para.h>
#include <linux/kvm_para.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "ipi_oracle.h"
#include "lapic_irr.h"
#include "vcpu_thread.h"

#define NR_VCPUS	4
#define SENDER		0
#define FIRST_VECTOR	0x40
#define PV_IPI(vector)	(APIC_DM_FIXED | APIC_INT_ASSERT | (vector))

/* vCPU i's x2APIC ID, its vCPU ID: one past a0's 64 bits. */
static const u32 ids[NR_VCPUS] = { 0, 1, 2, 70 };

struct pv_ipi_case {
	const char *name;
	u64 low, high;
	u32 min;
};

static const struct pv_ipi_case cases[] = {
	{ "one receiver", BIT_ULL(1), 0, 0 },
	{ "two receivers and the sender", BIT_ULL(0) | BIT_ULL(1) | BIT_ULL(2), 0, 0 },
	{ "a base above 0", BIT_ULL(0) | BIT_ULL(1), 0, 1 },
	{ "an ID in the high half", 0, BIT_ULL(70 - 64), 0 },
	{ "the high half from a base", BIT_ULL(0), BIT_ULL(70 - 64 - 5), 5 },
	{ "every bit", ~0ULL, ~0ULL, 0 },
	{ "IDs no vCPU has", BIT_ULL(3) | BIT_ULL(63), BIT_ULL(0), 0 },
	{ "a base above every APIC ID", ~0ULL, ~0ULL, 0x1000 },
	{ "the base 0xffffffff", 0xffffffffULL, 0, 0xffffffff },
	/* a1's bits name APIC IDs 2^32 + 0 and up: none, not 0 and 1 */
	{ "a high half past APIC ID 0xffffffff", 0, BIT_ULL(0) | BIT_ULL(1), 0xffffffc0 },
};

static void guest_code(bool sender)
{
	int i;

	x2apic_enable();
	for (i = 0; sender && i < ARRAY_SIZE(cases); i++)
		GUEST_SYNC(kvm_hypercall(KVM_HC_SEND_IPI, cases[i].low, cases[i].high,
					 cases[i].min, PV_IPI(FIRST_VECTOR + i)));
	GUEST_DONE();
}

static u64 run_to_ucall(struct kvm_vcpu *vcpu, u64 want)
{
	struct ucall uc;

	vcpu_run(vcpu);
	TEST_ASSERT_EQ(vcpu_sync_or_done(vcpu, &uc), want);
	return uc.args[1];
}

/* Did case @i's IPI reach whom the model says, and is the count right? */
static void check_case(struct kvm_vcpu *vcpus[], int i, u64 ret)
{
	const struct pv_ipi_case *c = &cases[i];
	u8 vector = FIRST_VECTOR + i;
	struct ipi_expectation want;
	u32 reached[NR_VCPUS];
	char who[64];
	bool ok;
	int v;

	for (v = 0; v < NR_VCPUS; v++)
		reached[v] = vcpu_irr_test_and_clear(vcpus[v], vector);
	want = ipi_expect_pv_send(PV_IPI(vector), c->low, c->high, c->min, SENDER,
				  ids, NR_VCPUS);
	ok = ipi_received_as(&want, reached, NR_VCPUS) &&
	     ret == __builtin_popcountll(want.targets);
	if (!ok) {
		ipi_format_vcpus(want.targets, ids, NR_VCPUS, who, sizeof(who));
		ksft_print_msg("%s: a0 0x%lx a1 0x%lx a2 0x%x: ret %ld, IRR %u%u%u%u, want %s\n",
			       c->name, c->low, c->high, c->min, (long)ret,
			       reached[0], reached[1], reached[2], reached[3], who);
	}
	ksft_test_result(ok, "%s\n", c->name);
}

static void guest_no_apic(void)
{
	GUEST_SYNC(kvm_hypercall(KVM_HC_SEND_IPI, BIT_ULL(0), 0, 0,
				 PV_IPI(FIRST_VECTOR)));
	GUEST_DONE();
}

/* No in-kernel local APIC, so no map to route through: nobody to reach. */
static void test_no_apic(void)
{
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	s64 ret;

	test_set_default_irqchip(X86_IRQCHIP_NONE);
	vm = vm_create_with_one_vcpu(&vcpu, guest_no_apic);
	ret = run_to_ucall(vcpu, UCALL_SYNC);
	run_to_ucall(vcpu, UCALL_DONE);
	kvm_vm_free(vm);
	test_set_default_irqchip(X86_IRQCHIP_KERNEL);

	if (ret > 0)
		ksft_print_msg("no in-kernel local APIC: returned %ld\n", (long)ret);
	ksft_test_result(ret <= 0, "no in-kernel local APIC\n");
}

int main(void)
{
	struct kvm_vcpu *vcpus[NR_VCPUS];
	struct kvm_vm *vm;
	u64 ret;
	int i;

	TEST_REQUIRE(kvm_cpu_has(X86_FEATURE_X2APIC));
	TEST_REQUIRE(kvm_cpu_has(X86_FEATURE_KVM_PV_SEND_IPI));

	vm = vm_create(NR_VCPUS);
	for (i = 0; i < NR_VCPUS; i++) {
		vcpus[i] = vm_vcpu_add(vm, ids[i], guest_code);
		vcpu_args_set(vcpus[i], 1, i == SENDER);
	}

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(cases) + 1);
	for (i = 0; i < NR_VCPUS; i++)
		if (i != SENDER)
			run_to_ucall(vcpus[i], UCALL_DONE);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		ret = run_to_ucall(vcpus[SENDER], UCALL_SYNC);
		check_case(vcpus, i, ret);
	}
	run_to_ucall(vcpus[SENDER], UCALL_DONE);
	kvm_vm_free(vm);

	test_no_apic();
	ksft_finished();
}
