/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Does a vCPU have a binary stat?  kvm_util's vcpu_get_stat() fails the test
 * when the stat does not exist; a test that must SKIP on kernels without a
 * stat asks here first.  Call it before the vCPU first runs: on kernels whose
 * kvm_util does not open the stats fd at vCPU creation, it opens it here
 * (KVM_GET_STATS_FD waits for the vCPU's mutex, so it blocks while another
 * thread is inside KVM_RUN).
 */
#ifndef SELFTEST_KVM_VCPU_STATS_H
#define SELFTEST_KVM_VCPU_STATS_H

#include <stdbool.h>

struct kvm_vcpu;

bool __vcpu_has_stat(struct kvm_vcpu *vcpu, const char *name);

/* Like vcpu_get_stat(), @stat is the stat's name as an identifier. */
#define vcpu_has_stat(vcpu, stat) __vcpu_has_stat(vcpu, #stat)

#endif /* SELFTEST_KVM_VCPU_STATS_H */
