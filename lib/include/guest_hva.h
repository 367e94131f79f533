/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Guest data the host reads and writes in place while vCPUs run.
 * kvm_util's sync_global_to/from_guest() copy a whole global, which races
 * with the vCPUs; addr_gva2hva() translates one address, and says nothing
 * of the object's other bytes.
 */
#ifndef SELFTEST_KVM_GUEST_HVA_H
#define SELFTEST_KVM_GUEST_HVA_H

#include <stddef.h>

struct kvm_vm;

/*
 * The host address of the guest object at @gva (a guest global's address),
 * @size bytes, checked contiguous in host memory: fails the test otherwise.
 */
void *guest_hva(struct kvm_vm *vm, void *gva, size_t size);

#endif /* SELFTEST_KVM_GUEST_HVA_H */
