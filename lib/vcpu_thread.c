// SPDX-License-Identifier: GPL-2.0-only
/*
 * A thread per vCPU; see vcpu_thread.h.
 */
#include <errno.h>
#ifdef KVM_VCPU_RUN_WITHIN
#include <signal.h>
#endif
#include <time.h>
#include <unistd.h>

#include "kvm_util.h"
#include "vcpu_thread.h"

u64 vcpu_sync_or_done(struct kvm_vcpu *vcpu, struct ucall *uc)
{
	struct ucall local;
	u64 cmd;

	if (!uc)
		uc = &local;
	cmd = get_ucall(vcpu, uc);
	if (cmd == UCALL_ABORT)
		REPORT_GUEST_ASSERT(*uc);
	TEST_ASSERT(cmd == UCALL_SYNC || cmd == UCALL_DONE, "vCPU %u: unexpected exit %s",
		    vcpu->id, exit_reason_str(vcpu->run->exit_reason));
	return cmd;
}

#ifdef KVM_VCPU_RUN_WITHIN
static void deadline_passed(int sig)
{
	ksft_exit_fail_msg("a vCPU did not come back from KVM_RUN in time\n");
}

void vcpu_run_within(struct kvm_vcpu *vcpu, unsigned int seconds)
{
	signal(SIGALRM, deadline_passed);
	alarm(seconds);
	vcpu_run(vcpu);
	alarm(0);
}
#endif

static void *vcpu_thread_main(void *arg)
{
	struct vcpu_thread *t = arg;

	t->tid = gettid();
	for (;;) {
		while (sem_wait(&t->go))
			;	/* EINTR: a signal meant for KVM_RUN came late */
		if (t->quit)
			return NULL;
		t->run_errno = __vcpu_run(t->vcpu) ? errno : 0;
		if (!t->run_errno) {
			assert_on_unhandled_exception(t->vcpu);
			t->ucall = vcpu_sync_or_done(t->vcpu, &t->uc);
		}
		sem_post(&t->stopped);
	}
}

void vcpu_thread_start(struct vcpu_thread *t, struct kvm_vcpu *vcpu)
{
	t->vcpu = vcpu;
	t->quit = false;
	TEST_ASSERT(!sem_init(&t->go, 0, 0) && !sem_init(&t->stopped, 0, 0), "sem_init");
	TEST_ASSERT(!pthread_create(&t->thread, NULL, vcpu_thread_main, t),
		    "vCPU %u: pthread_create", vcpu->id);
}

void vcpu_thread_resume(struct vcpu_thread *t)
{
	sem_post(&t->go);
}

bool vcpu_thread_stopped_within(struct vcpu_thread *t, unsigned int seconds)
{
	struct timespec deadline;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += seconds;
	while (sem_clockwait(&t->stopped, CLOCK_MONOTONIC, &deadline))
		if (errno != EINTR)
			return false;
	return true;
}

void vcpu_thread_join(struct vcpu_thread *t)
{
	t->quit = true;
	sem_post(&t->go);
	pthread_join(t->thread, NULL);
	sem_destroy(&t->go);
	sem_destroy(&t->stopped);
}
