// SPDX-License-Identifier: GPL-2.0-only
/*
 * Interrupts from the host to a vCPU; see host_msi.h.
 */
#include "kvm_util.h"
#include "apic.h"
#include "host_msi.h"

void host_msi_send(struct kvm_vm *vm, u32 apic_id, u8 vector)
{
	struct kvm_msi msi = {
		.address_lo = APIC_DEFAULT_GPA | apic_id << 12,
		.data = vector,
	};

	TEST_ASSERT(__vm_ioctl(vm, KVM_SIGNAL_MSI, &msi) == 1,
		    "MSI 0x%x to APIC ID 0x%x not delivered", vector, apic_id);
}
