// SPDX-License-Identifier: GPL-2.0-only
/*
 * An L2 guest's x2APIC ICR writes never complete in KVM's fastpath: KVM
 * takes its exit fastpaths for L1 only.  vCPU 0 (L1, x2APIC mode) runs an
 * L2 guest, with VMX or SVM, that writes the ICR once more per round; vCPU 1
 * is in x2APIC mode and parked in the host, where the host reads what its
 * IRR latched.
 *
 *  1. L1 does not intercept the write: KVM writes L1's ICR for L2, on its
 *     normal path.  The IPI reaches vCPU 1; the stat stays flat.
 *  2. L1 intercepts it (MSR bitmap / MSR permission map): L1 sees the WRMSR
 *     exit and nothing is sent; the stat stays flat.
 *  3. L1 then writes the same value itself: the IPI reaches vCPU 1 and, where
 *     the fastpath runs, the stat rises by one.  That shows the stat counts
 *     this VM's writes, so the flat rounds above could have failed.
 */
#include <unistd.h>

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
#define L2_VECTOR		0xa0	/* round 1 */
#define INTERCEPTED_VECTOR	0xa1	/* rounds 2 and 3 */
#define X2APIC_ICR_MSR		(APIC_BASE_MSR + (APIC_ICR >> 4))

enum { ROUND_L2_WRITES = 1, ROUND_L1_INTERCEPTS, ROUND_L1_EMULATES };

static u64 l2_icr;

/* No CPUID in L2: it always exits to L1 on VMX. */
static void l2_vmx_code(void)
{
	x2apic_write_reg(APIC_ICR, READ_ONCE(l2_icr));
	vmcall();
}

static void l2_svm_code(void)
{
	x2apic_write_reg(APIC_ICR, READ_ONCE(l2_icr));
	vmmcall();
}

static u64 fixed_ipi(u8 vector)
{
	return APIC_DM_FIXED | APIC_INT_ASSERT | vector | (u64)RECEIVER_ID << 32;
}

static void l1_vmx(struct vmx_pages *vmx)
{
	u8 *write_bitmap = (u8 *)vmx->msr + 2048;

	GUEST_ASSERT(prepare_for_vmx_operation(vmx));
	GUEST_ASSERT(load_vmcs(vmx));
	prepare_vmcs(vmx, l2_vmx_code);
	vmwrite(CPU_BASED_VM_EXEC_CONTROL,
		vmreadz(CPU_BASED_VM_EXEC_CONTROL) | CPU_BASED_USE_MSR_BITMAPS);

	WRITE_ONCE(l2_icr, fixed_ipi(L2_VECTOR));
	GUEST_ASSERT(!vmlaunch());
	GUEST_ASSERT_EQ(vmreadz(VM_EXIT_REASON), EXIT_REASON_VMCALL);
	GUEST_SYNC(ROUND_L2_WRITES);

	write_bitmap[X2APIC_ICR_MSR / 8] |= 1 << (X2APIC_ICR_MSR % 8);
	vmwrite(GUEST_RIP, (u64)l2_vmx_code);
	vmwrite(GUEST_RSP, (u64)vmx->stack);
	WRITE_ONCE(l2_icr, fixed_ipi(INTERCEPTED_VECTOR));
	GUEST_ASSERT(!vmresume());
	GUEST_ASSERT_EQ(vmreadz(VM_EXIT_REASON), EXIT_REASON_MSR_WRITE);
}

static void l1_svm(struct svm_test_data *svm)
{
	u8 *msrpm = svm->msr;
	struct vmcb *vmcb = svm->vmcb;

	generic_svm_setup(svm, l2_svm_code);
	WRITE_ONCE(l2_icr, fixed_ipi(L2_VECTOR));
	run_guest(vmcb, svm->vmcb_gpa);
	GUEST_ASSERT_EQ(vmcb->control.exit_code, SVM_EXIT_VMMCALL);
	GUEST_SYNC(ROUND_L2_WRITES);

	/* Two bits per MSR, read then write. */
	msrpm[(X2APIC_ICR_MSR * 2 + 1) / 8] |= 1 << ((X2APIC_ICR_MSR * 2 + 1) % 8);
	vmcb->control.intercept |= 1ULL << INTERCEPT_MSR_PROT;
	vmcb->save.rip = (u64)l2_svm_code;
	vmcb->save.rsp = (u64)svm->stack;
	WRITE_ONCE(l2_icr, fixed_ipi(INTERCEPTED_VECTOR));
	run_guest(vmcb, svm->vmcb_gpa);
	GUEST_ASSERT_EQ(vmcb->control.exit_code, SVM_EXIT_MSR);
	GUEST_ASSERT_EQ(vmcb->control.exit_info_1, 1);	/* a write */
}

static void l1_guest_code(void *nested)
{
	cli();
	x2apic_enable();
	if (this_cpu_has(X86_FEATURE_VMX))
		l1_vmx(nested);
	else
		l1_svm(nested);
	GUEST_SYNC(ROUND_L1_INTERCEPTS);

	x2apic_write_reg(APIC_ICR, fixed_ipi(INTERCEPTED_VECTOR));
	GUEST_SYNC(ROUND_L1_EMULATES);
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
	bool delivered;
	int l1_hits;	/* fastpath hits of the round's own L1 write */
};

static const struct round rounds[] = {
	[ROUND_L2_WRITES] = { "L2 writes, L1 does not intercept", L2_VECTOR, true, 0 },
	[ROUND_L1_INTERCEPTS] = { "L2 writes, L1 intercepts", INTERCEPTED_VECTOR, false, 0 },
	[ROUND_L1_EMULATES] = { "L1 writes the intercepted value", INTERCEPTED_VECTOR, true, 1 },
};

/* Run @vcpu once; a vCPU that never comes back ends the test (SIGALRM). */
static void run_bounded(struct kvm_vcpu *vcpu)
{
	alarm(WAIT_SECONDS);
	vcpu_run(vcpu);
	alarm(0);
}

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
	struct ipi_verdict v;
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

	run_bounded(receiver);
	TEST_ASSERT_EQ(vcpu_sync_or_done(receiver, NULL), UCALL_SYNC);

	for (r = ROUND_L2_WRITES; r <= ROUND_L1_EMULATES; r++) {
		const struct round *rd = &rounds[r];
		int want_hits = rd->l1_hits ?
				icr_expected_fastpath_hits(fixed_ipi(rd->vector), &platform) : 0;
		bool got;

		before = ipi_fastpath_hits(l1, have_stat);
		run_bounded(l1);
		TEST_ASSERT_EQ(vcpu_sync_or_done(l1, &uc), UCALL_SYNC);
		TEST_ASSERT_EQ(uc.args[1], r);
		hits = ipi_fastpath_hits(l1, have_stat) - before;
		got = vcpu_irr_test_and_clear(receiver, rd->vector);

		if (got != rd->delivered)
			ksft_print_msg("%s: vector 0x%x %s at vCPU %u, want %s\n", rd->name,
				       rd->vector, got ? "latched" : "absent", RECEIVER_ID,
				       rd->delivered ? "latched" : "absent");
		ksft_test_result(got == rd->delivered, "%s: %s\n", rd->name,
				 rd->delivered ? "delivered" : "not sent");
		snprintf(name, sizeof(name), "%s: path", rd->name);
		v = ipi_path_verdict(&platform, have_stat, hits, want_hits);
		if (v.code == KSFT_FAIL)
			ksft_print_msg("%s: fastpath +%lu, want +%d\n", name, hits, want_hits);
		ksft_test_result_code(v.code, name, v.why ? "%s" : NULL, v.why);
	}

	run_bounded(l1);
	TEST_ASSERT_EQ(vcpu_sync_or_done(l1, NULL), UCALL_DONE);
	kvm_vm_free(vm);
	ksft_finished();
}
