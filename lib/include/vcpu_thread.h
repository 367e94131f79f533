/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A vCPU on a thread of its own that runs it to its next exit on demand,
 * and a deadline for the main thread's wait.  kvm_util runs a vCPU on the
 * calling thread only; a test that keeps several vCPUs in the guest at
 * once, or that must look at one while KVM halts it, needs a thread per
 * vCPU and a bounded way to wait for it.
 */
#ifndef SELFTEST_KVM_VCPU_THREAD_H
#define SELFTEST_KVM_VCPU_THREAD_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <linux/types.h>
#include <sys/types.h>

#include "ucall_common.h"

struct kvm_vcpu;

struct vcpu_thread {
	struct kvm_vcpu *vcpu;
	pthread_t thread;
	pid_t tid;		/* valid once it first ran */
	sem_t go, stopped;
	int run_errno;		/* of its last KVM_RUN: 0, or e.g. EINTR */
	u64 ucall;		/* where it stopped: UCALL_SYNC or UCALL_DONE */
	struct ucall uc;	/* with these arguments */
	bool quit;
};

/*
 * The ucall @vcpu stopped at, UCALL_SYNC or UCALL_DONE, into @uc if not
 * NULL; a guest assert or any other exit fails the test.
 */
u64 vcpu_sync_or_done(struct kvm_vcpu *vcpu, struct ucall *uc);

#ifdef KVM_VCPU_RUN_WITHIN
/*
 * vcpu_run() on this thread, failing the test with a KTAP "Bail out!" line
 * if KVM_RUN has not returned within @seconds.
 */
void vcpu_run_within(struct kvm_vcpu *vcpu, unsigned int seconds);
#endif

void vcpu_thread_start(struct vcpu_thread *t, struct kvm_vcpu *vcpu);

/*
 * Run the vCPU once more.  A guest assert or any exit but GUEST_SYNC and
 * GUEST_DONE fails the test; a signal ends KVM_RUN with run_errno EINTR.
 */
void vcpu_thread_resume(struct vcpu_thread *t);

/* Is it back from KVM_RUN within @seconds?  Never blocks for longer. */
bool vcpu_thread_stopped_within(struct vcpu_thread *t, unsigned int seconds);

/* End the thread, whose vCPU must be stopped. */
void vcpu_thread_join(struct vcpu_thread *t);

#endif /* SELFTEST_KVM_VCPU_THREAD_H */
