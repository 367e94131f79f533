// SPDX-License-Identifier: GPL-2.0-only
/*
 * An L2 guest's x2APIC ICR writes never complete in KVM's fastpath: KVM
 * takes its exit fastpaths for L1 only.  vCPU 0 (L1, x2APIC mode) runs an
 * L2 guest, with VMX or SVM, that writes the ICR, L1 not intercepting it;
 * vCPU 1 is in x2APIC mode and parked in the host, where the host reads
 * what its IRR latched.
 *
 *  1. L2 writes: KVM writes L1's ICR for L2, on its normal path.  The IPI
 *     reaches vCPU 1; the stat stays flat.
 *  2. L1 writes the same ICR itself: the IPI reaches vCPU 1 and, where the
 *     fastpath runs, the stat rises by one.  That shows the stat counts
 *     this VM's writes, so the flat round above could have failed.
 */

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "vmx.h"
#include "svm_util.h"
#include "ipi_oracle.h"
#include "ipi_platform.h"
#include "lapic_irr.h"
#include "vcpu_stats.h"
#include "vcpu_thread.h"

#define WAIT_SECONDS	10	/* any one KVM_RUN */

#define RECEIVER_ID		1
#define L2_VECTOR		0xa0
#define L1_VECTOR		0xa1

enum { ROUND_L2_WRITES = 1, ROUND_L1_WRITES };

static u64 fixed_ipi(u8 vector)
{
	return APIC_DM_FIXED | APIC_INT_ASSERT | vector | (u64)RECEIVER_ID << 32;
}

/* No CPUID in L2: it always exits to L1 on VMX. */
static void l2_vmx_code(void)
{
	x2apic_write_reg(APIC_ICR, fixed_ipi(L2_VECTOR));
	vmcall();
}

static void l2_svm_code(void)
{
	x2apic_write_reg(APIC_ICR, fixed_ipi(L2_VECTOR));
	vmmcall();
}

static void l1_vmx(struct vmx_pages *vmx)
{
	GUEST_ASSERT(prepare_for_vmx_operation(vmx));
	GUEST_ASSERT(load_vmcs(vmx));
	prepare_vmcs(vmx, l2_vmx_code);
	/* An MSR bitmap of zeroes: L1 intercepts no MSR. */
	vmwrite(CPU_BASED_VM_EXEC_CONTROL,
		vmreadz(CPU_BASED_VM_EXEC_CONTROL) | CPU_BASED_USE_MSR_BITMAPS);
	GUEST_ASSERT(!vmlaunch());
	GUEST_ASSERT_EQ(vmreadz(VM_EXIT_REASON), EXIT_REASON_VMCALL);
}

static void l1_svm(struct svm_test_data *svm)
{
	generic_svm_setup(svm, l2_svm_code);
	run_guest(svm->vmcb, svm->vmcb_gpa);
	GUEST_ASSERT_EQ(svm->vmcb->control.exit_code, SVM_EXIT_VMMCALL);
}

static void l1_guest_code(void *nested)
{
	cli();
	x2apic_enable_icr_exits();
	if (this_cpu_has(X86_FEATURE_VMX))
		l1_vmx(nested);
	else
		l1_svm(nested);
	GUEST_SYNC(ROUND_L2_WRITES);

	x2apic_write_reg(APIC_ICR, fixed_ipi(L1_VECTOR));
	GUEST_SYNC(ROUND_L1_WRITES);
	GUEST_DONE();
}

static void receiver_code(void)
{
	cli();
	x2apic_enable();
	GUEST_SYNC(0);
	GUEST_FAIL("the receiver stays parked");
}

struct round {
	const char *name;
	u8 vector;
	bool l1_writes;	/* the write is L1's: the rule decides its path */
};

static const struct round rounds[] = {
	[ROUND_L2_WRITES] = { "L2 writes, L1 does not intercept", L2_VECTOR, false },
	[ROUND_L1_WRITES] = { "L1 writes", L1_VECTOR, true },
};

int main(void)
{
	struct kvm_vcpu *l1, *receiver;
	struct ipi_platform platform;
	u64 before, hits;
	gva_t nested_gva;
	struct kvm_vm *vm;
	bool have_stat;
	struct ucall uc;
	char desc[192], name[96];
	int r;

	TEST_REQUIRE(kvm_cpu_has(X86_FEATURE_VMX) || kvm_cpu_has(X86_FEATURE_SVM));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_BINARY_STATS_FD));
	platform = ipi_platform_probe();

	vm = vm_create_with_one_vcpu(&l1, l1_guest_code);
	receiver = vm_vcpu_add(vm, RECEIVER_ID, receiver_code);
	if (kvm_cpu_has(X86_FEATURE_VMX))
		vcpu_alloc_vmx(vm, &nested_gva);
	else
		vcpu_alloc_svm(vm, &nested_gva);
	vcpu_args_set(l1, 1, nested_gva);
	have_stat = vcpu_has_stat(l1, x2apic_icr_fastpath_writes);

	ksft_print_header();
	ksft_set_plan(2 * (ARRAY_SIZE(rounds) - 1));
	ipi_platform_describe(&platform, desc, sizeof(desc));
	ksft_print_msg("platform: %s, nested %s\n", desc,
		       kvm_cpu_has(X86_FEATURE_VMX) ? "VMX" : "SVM");

	vcpu_run_within(receiver, WAIT_SECONDS);
	TEST_ASSERT_EQ(vcpu_sync_or_done(receiver, NULL), UCALL_SYNC);

	for (r = ROUND_L2_WRITES; r <= ROUND_L1_WRITES; r++) {
		const struct round *rd = &rounds[r];
		int want_hits = rd->l1_writes ?
				icr_expected_fastpath_hits(fixed_ipi(rd->vector), &platform) : 0;
		bool got;

		before = ipi_fastpath_hits(l1, have_stat);
		vcpu_run_within(l1, WAIT_SECONDS);
		TEST_ASSERT_EQ(vcpu_sync_or_done(l1, &uc), UCALL_SYNC);
		TEST_ASSERT_EQ(uc.args[1], r);
		hits = ipi_fastpath_hits(l1, have_stat) - before;
		got = vcpu_irr_test_and_clear(receiver, rd->vector);

		if (!got)
			ksft_print_msg("%s: vector 0x%x absent at vCPU %u\n", rd->name,
				       rd->vector, RECEIVER_ID);
		ksft_test_result(got, "%s: delivered\n", rd->name);
		snprintf(name, sizeof(name), "%s: path", rd->name);
		ipi_path_result(&platform, have_stat, hits, want_hits, name, NULL);
	}

	vcpu_run_within(l1, WAIT_SECONDS);
	TEST_ASSERT_EQ(vcpu_sync_or_done(l1, NULL), UCALL_DONE);
	kvm_vm_free(vm);
	ksft_finished();
}
