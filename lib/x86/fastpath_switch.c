// SPDX-License-Identifier: GPL-2.0-only
#ifdef KVM_FASTPATH_SWITCH
/*
 * The ICR fastpath's module switch; see fastpath_switch.h.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kvm_util.h"
#include "fastpath_switch.h"

#define SWITCH_PATH	"/sys/module/kvm/parameters/" FASTPATH_SWITCH

bool fastpath_switch_get(void)
{
	return access(SWITCH_PATH, F_OK) || get_kvm_param_bool(FASTPATH_SWITCH);
}

const char *fastpath_switch_unusable(bool asked)
{
	if (!asked)
		return "not asked for (-d): it would turn the fastpath off host-wide";
	if (access(SWITCH_PATH, F_OK))
		return "kernel has no kvm." FASTPATH_SWITCH " switch";
	if (access(SWITCH_PATH, W_OK))
		return "cannot write kvm." FASTPATH_SWITCH " (not root?)";
	return NULL;
}

/* What the switch was before this test first wrote it; -1: not written. */
static int restore_to = -1;

/* Async-signal-safe: open(), write() and close() only. */
static void switch_put_back(void)
{
	int fd = open(SWITCH_PATH, O_WRONLY);
	ssize_t written;

	if (fd < 0)
		return;
	/* A failed write is past help in a signal handler. */
	written = write(fd, restore_to ? "Y" : "N", 1);
	close(fd);
	(void)written;
}

static void put_back_and_die(int sig)
{
	switch_put_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * The switch is host-wide: whatever way the test ends, a failed assert
 * (exit()), the runner's SIGTERM, a hang's SIGALRM or ^C, put it back.
 */
static void put_back_on_every_exit(bool was)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGALRM };
	unsigned int i;

	restore_to = was;
	TEST_ASSERT(!atexit(switch_put_back), "atexit() failed");
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		signal(sigs[i], put_back_and_die);
}

bool fastpath_switch_set(bool on)
{
	bool was = get_kvm_param_bool(FASTPATH_SWITCH);
	FILE *f;

	if (restore_to < 0)
		put_back_on_every_exit(was);
	f = fopen(SWITCH_PATH, "w");

	TEST_ASSERT(f, "cannot open %s for writing", SWITCH_PATH);
	TEST_ASSERT(fputs(on ? "Y" : "N", f) >= 0 && !fclose(f),
		    "cannot write %s", SWITCH_PATH);
	TEST_ASSERT(get_kvm_param_bool(FASTPATH_SWITCH) == on, "%s did not change", SWITCH_PATH);
	return was;
}
#endif /* KVM_FASTPATH_SWITCH */
