/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-vCPU binary stats: this kvm_util has no vcpu_get_stat().  Call
 * vcpu_has_stat() before the vCPU first runs: it opens the stats fd
 * (KVM_GET_STATS_FD blocks while the vCPU is in KVM_RUN) and keeps it for
 * vcpu_get_stat().
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
