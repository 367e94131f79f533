/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vcpu_run() with a deadline.  kvm_util's vcpu_run() waits for as long as
 * KVM_RUN does, and retries it when a signal interrupts it: a vCPU that
 * never comes back to the host (say, a WRMSR that KVM completes without
 * moving past it) hangs the test until the runner kills it, with no word of
 * what it waited for.  vcpu_run_within() fails the test instead.
 */
#ifndef SELFTEST_KVM_VCPU_RUN_WITHIN_H
#define SELFTEST_KVM_VCPU_RUN_WITHIN_H

#include <linux/types.h>

struct kvm_vcpu;
struct ucall;

/*
 * Run @vcpu once, like vcpu_run(); fail the test if it is still in KVM_RUN
 * after @seconds.  A timer signals the calling thread only, so vCPU
 * threads may each use it.
 */
void vcpu_run_within(struct kvm_vcpu *vcpu, unsigned int seconds);

/*
 * The ucall a vCPU back from KVM_RUN stopped at, UCALL_SYNC or UCALL_DONE,
 * with its arguments in @uc (may be NULL); a guest assert is reported, and
 * any other exit fails the test.
 */
u64 vcpu_sync_or_done(struct kvm_vcpu *vcpu, struct ucall *uc);

/*
 * The factor every time bound of a test is multiplied by: the environment's
 * KVM_SELFTEST_TIME_SCALE, a positive integer, 1 if unset: a slow or
 * loaded host, nested virtualization or a debug kernel may need longer
 * bounds than the tests', which are generous for hardware.
 */
unsigned int test_time_scale(void);

#endif /* SELFTEST_KVM_VCPU_RUN_WITHIN_H */
