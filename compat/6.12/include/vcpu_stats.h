/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-vCPU binary stats for kernels whose kvm_util has no vcpu_get_stat()
 * (it came with the stats fd that kvm_util opens at vCPU creation).
 *
 * vcpu_has_stat() opens the vCPU's stats fd and keeps it; call it before
 * the vCPU first runs: KVM_GET_STATS_FD waits for the vCPU's mutex, so it
 * blocks while another thread is inside KVM_RUN.  vcpu_get_stat() then
 * reads through that fd, which never blocks.
 */
#ifndef SELFTEST_KVM_VCPU_STATS_H
#define SELFTEST_KVM_VCPU_STATS_H

#include <stdbool.h>
#include <linux/types.h>

struct kvm_vcpu;

bool __vcpu_has_stat(struct kvm_vcpu *vcpu, const char *name);
u64 __vcpu_get_stat(struct kvm_vcpu *vcpu, const char *name);

/* @stat is the stat's name as an identifier, as in mainline's kvm_util. */
#define vcpu_has_stat(vcpu, stat) __vcpu_has_stat(vcpu, #stat)
#define vcpu_get_stat(vcpu, stat) __vcpu_get_stat(vcpu, #stat)

#endif /* SELFTEST_KVM_VCPU_STATS_H */
