// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcpu_run() with a deadline; see vcpu_run_within.h.
 */
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kvm_util.h"
#include "ucall_common.h"
#include "vcpu_run_within.h"

/* glibc names it only with _GNU_SOURCE defined before its first header */
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

static void no_op_signal(int sig)
{
}

void vcpu_run_within(struct kvm_vcpu *vcpu, unsigned int seconds)
{
	struct sigaction sa = { .sa_handler = no_op_signal };	/* no SA_RESTART */
	struct itimerspec deadline = { .it_value.tv_sec = seconds };
	struct sigevent sev = {
		.sigev_notify = SIGEV_THREAD_ID,
		.sigev_signo = SIGALRM,
	};
	timer_t timer;
	int r;

	sev.sigev_notify_thread_id = gettid();
	TEST_ASSERT(!sigaction(SIGALRM, &sa, NULL), "sigaction(SIGALRM)");
	TEST_ASSERT(!timer_create(CLOCK_MONOTONIC, &sev, &timer), "timer_create");
	TEST_ASSERT(!timer_settime(timer, 0, &deadline, NULL), "timer_settime");
	r = __vcpu_run(vcpu);
	timer_delete(timer);
	TEST_ASSERT(!r || errno != EINTR,
		    "vCPU %u still in KVM_RUN after %u s", vcpu->id, seconds);
	TEST_ASSERT(!r, KVM_IOCTL_ERROR(KVM_RUN, r));
	assert_on_unhandled_exception(vcpu);
}

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

unsigned int test_time_scale(void)
{
	const char *s = getenv("KVM_SELFTEST_TIME_SCALE");
	static unsigned int scale;

	if (!scale)
		scale = s ? atoi_positive("KVM_SELFTEST_TIME_SCALE", s) : 1;
	return scale;
}
