// SPDX-License-Identifier: GPL-2.0-only
/*
 * An INIT IPI to a vCPU in VMX root operation (after VMXON) or with GIF
 * clear (after CLGI) must not reset it: the CPU holds the INIT pending and
 * goes on running (SDM Vol. 3C, "Restrictions on VMX Operation": INIT is
 * blocked in VMX root operation; APM Vol. 2, "Global Interrupt Flag": INIT
 * is held pending while GIF is clear).  Anywhere else, INIT resets an AP
 * into wait-for-SIPI.
 *
 * vCPU 0 sends INIT to vCPU 1, an AP, in each state:
 *  1. vCPU 1 has done VMXON (VMX hosts) or CLGI (SVM hosts): it must stay
 *     runnable, with the INIT latched, and run on.
 *  2. vCPU 1 is in neither state: it must wait for a SIPI.
 * The host reads the outcome with KVM_GET_MP_STATE, which first delivers
 * what INIT may be delivered, and the latched INIT with
 * KVM_GET_VCPU_EVENTS.  It withdraws the latched INIT before vCPU 1 leaves
 * the blocking state: delivered then, it would leave vCPU 1 waiting for a
 * SIPI inside KVM_RUN.
 */
#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "vmx.h"
#include "svm_util.h"
#include "vcpu_thread.h"

#define SENDER	0
#define TARGET	1	/* an AP: INIT puts it in wait-for-SIPI */

enum init_blocker { BLOCKER_NONE, BLOCKER_VMX_ROOT, BLOCKER_GIF_CLEAR };

enum { STAGE_START, STAGE_BLOCKED, STAGE_UNBLOCKED };

static void sender_code(void)
{
	x2apic_enable();
	GUEST_SYNC(STAGE_START);
	for (;;) {
		x2apic_write_reg(APIC_ICR, APIC_DM_INIT | APIC_INT_ASSERT | (u64)TARGET << 32);
		GUEST_SYNC(STAGE_START);
	}
}

static void target_code(enum init_blocker blocker, struct vmx_pages *vmx)
{
	x2apic_enable();
	if (blocker == BLOCKER_VMX_ROOT) {
		GUEST_ASSERT(prepare_for_vmx_operation(vmx));
		GUEST_SYNC(STAGE_BLOCKED);
		vmxoff();
	} else if (blocker == BLOCKER_GIF_CLEAR) {
		wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SVME);
		clgi();
		GUEST_SYNC(STAGE_BLOCKED);
		stgi();
	}
	for (;;)
		GUEST_SYNC(STAGE_UNBLOCKED);
}

static void run_to_sync(struct kvm_vcpu *vcpu, u64 stage)
{
	struct ucall uc;

	vcpu_run(vcpu);
	TEST_ASSERT_EQ(vcpu_sync_or_done(vcpu, &uc), UCALL_SYNC);
	TEST_ASSERT_EQ(uc.args[1], stage);
}

static u32 mp_state(struct kvm_vcpu *vcpu)
{
	struct kvm_mp_state state;

	vcpu_mp_state_get(vcpu, &state);
	return state.mp_state;
}

/* vCPU 1 is stopped in the blocking state: INIT must wait, latched. */
static void test_init_held(struct kvm_vcpu *sender, struct kvm_vcpu *target,
			   const char *name)
{
	struct kvm_vcpu_events events;
	bool latched;
	u32 state;

	run_to_sync(target, STAGE_BLOCKED);
	run_to_sync(sender, STAGE_START);
	state = mp_state(target);
	vcpu_events_get(target, &events);
	latched = events.smi.latched_init;
	if (state != KVM_MP_STATE_RUNNABLE || !latched)
		ksft_print_msg("%s: mp_state %u, INIT %slatched\n", name, state,
			       latched ? "" : "not ");

	/* withdrawn, so that leaving the state does not deliver it */
	events.smi.latched_init = 0;
	vcpu_events_set(target, &events);
	if (state == KVM_MP_STATE_RUNNABLE)
		run_to_sync(target, STAGE_UNBLOCKED);
	ksft_test_result(state == KVM_MP_STATE_RUNNABLE && latched, "%s\n", name);
}

int main(void)
{
	const char *vmx_name = "INIT in VMX root operation: held";
	const char *gif_name = "INIT with GIF clear: held";
	enum init_blocker blocker = BLOCKER_NONE;
	struct kvm_vcpu *sender, *target;
	gva_t vmx_gva = 0;
	struct kvm_vm *vm;
	u32 state;

	vm = vm_create(2);
	sender = vm_vcpu_add(vm, SENDER, sender_code);
	target = vm_vcpu_add(vm, TARGET, target_code);
	if (kvm_cpu_has(X86_FEATURE_VMX)) {
		blocker = BLOCKER_VMX_ROOT;
		vcpu_alloc_vmx(vm, &vmx_gva);
	} else if (kvm_cpu_has(X86_FEATURE_SVM)) {
		blocker = BLOCKER_GIF_CLEAR;
	}
	vcpu_args_set(target, 2, blocker, vmx_gva);

	ksft_print_header();
	ksft_set_plan(3);
	run_to_sync(sender, STAGE_START);

	if (blocker == BLOCKER_VMX_ROOT)
		test_init_held(sender, target, vmx_name);
	else
		ksft_test_result_code(KSFT_SKIP, vmx_name, "no nested VMX");
	if (blocker == BLOCKER_GIF_CLEAR)
		test_init_held(sender, target, gif_name);
	else
		ksft_test_result_code(KSFT_SKIP, gif_name, "no nested SVM");

	if (blocker == BLOCKER_NONE)
		run_to_sync(target, STAGE_UNBLOCKED);
	run_to_sync(sender, STAGE_START);
	state = mp_state(target);
	if (state != KVM_MP_STATE_INIT_RECEIVED)
		ksft_print_msg("INIT outside them: mp_state %u\n", state);
	ksft_test_result(state == KVM_MP_STATE_INIT_RECEIVED,
			 "INIT outside them: delivered\n");

	kvm_vm_free(vm);
	ksft_finished();
}
