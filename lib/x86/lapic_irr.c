// SPDX-License-Identifier: GPL-2.0-only
#ifdef KVM_LAPIC_IRR
/*
 * One IRR vector of a vCPU, read and cleared by the host; see lapic_irr.h.
 */
#include "kvm_util.h"
#include "apic.h"
#include "lapic_irr.h"

/* The IRR's byte that holds @vector, in a KVM_GET_LAPIC image. */
static u8 *irr_byte(struct kvm_lapic_state *lapic, u8 vector)
{
	return (u8 *)&lapic->regs[APIC_IRR + (vector / 32) * 0x10 + (vector % 32) / 8];
}

bool vcpu_irr_test_and_clear(struct kvm_vcpu *vcpu, u8 vector)
{
	struct kvm_lapic_state lapic;
	u8 *byte;

	vcpu_ioctl(vcpu, KVM_GET_LAPIC, &lapic);
	byte = irr_byte(&lapic, vector);
	if (!(*byte & (1 << (vector % 8))))
		return false;
	*byte &= ~(1 << (vector % 8));
	vcpu_ioctl(vcpu, KVM_SET_LAPIC, &lapic);
	return true;
}
#ifdef KVM_LAPIC_IRR_TEST

bool vcpu_irr_test(struct kvm_vcpu *vcpu, u8 vector)
{
	struct kvm_lapic_state lapic;

	vcpu_ioctl(vcpu, KVM_GET_LAPIC, &lapic);
	return *irr_byte(&lapic, vector) & (1 << (vector % 8));
}
#endif
#endif
