/* SPDX-License-Identifier: GPL-2.0-only */
#ifdef KVM_LAPIC_IRR
/*
 * The host's view of one vector in a vCPU's IRR, through KVM_GET_LAPIC and
 * KVM_SET_LAPIC: kvm_util reads and writes the whole local APIC state only.
 * For vCPUs that are not running (parked in the host, or never run).
 */
#ifndef SELFTEST_KVM_LAPIC_IRR_H
#define SELFTEST_KVM_LAPIC_IRR_H

#include <stdbool.h>
#include <linux/types.h>

struct kvm_vcpu;

/* Is @vector pending in @vcpu's IRR?  Clear it if it was. */
bool vcpu_irr_test_and_clear(struct kvm_vcpu *vcpu, u8 vector);

#ifdef KVM_LAPIC_IRR_TEST
/* Is @vector pending in @vcpu's IRR?  Leave it as it is. */
bool vcpu_irr_test(struct kvm_vcpu *vcpu, u8 vector);
#endif

#endif /* SELFTEST_KVM_LAPIC_IRR_H */
#endif
