/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-vCPU binary stats (KVM_GET_STATS_FD on a vCPU), the counterpart of
 * __vm_get_stat() for VMs.
 *
 * Getting the stats fd is a vCPU ioctl, which waits for the vCPU's mutex, so
 * it blocks while another thread is inside KVM_RUN on that vCPU.  Open the
 * stat before running the vCPU; reading it afterwards never blocks.
 */
#ifndef SELFTEST_KVM_VCPU_STATS_H
#define SELFTEST_KVM_VCPU_STATS_H

#include <stdbool.h>
#include <stdint.h>

struct kvm_vcpu;
struct kvm_stats_desc;

struct vcpu_stat {
	int fd;
	uint32_t vcpu_id;
	struct kvm_stats_desc *descs;	/* every descriptor of the fd */
	struct kvm_stats_desc *desc;	/* the one this reads */
	uint32_t data_offset;
};

/* Find stat @name of @vcpu; false (and nothing to close) if there is none. */
bool vcpu_stat_open(struct kvm_vcpu *vcpu, const char *name,
		    struct vcpu_stat *stat);

/* The stat's (first) value now. */
uint64_t vcpu_stat_read(struct vcpu_stat *stat);

void vcpu_stat_close(struct vcpu_stat *stat);

#endif /* SELFTEST_KVM_VCPU_STATS_H */
