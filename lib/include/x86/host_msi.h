/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Interrupts from the host (KVM_SIGNAL_MSI) to one vCPU's local APIC: they
 * wake or fence a vCPU without any guest ICR write.  kvm_util has no MSI
 * helper; its GSI routing helpers need an irqchip route per interrupt.
 */
#ifndef SELFTEST_KVM_HOST_MSI_H
#define SELFTEST_KVM_HOST_MSI_H

#include <linux/types.h>

struct kvm_vm;

/* Fixed, edge, physical @apic_id (< 256); fails unless one APIC took it. */
void host_msi_send(struct kvm_vm *vm, u32 apic_id, u8 vector);

#endif /* SELFTEST_KVM_HOST_MSI_H */
