/* SPDX-License-Identifier: GPL-2.0-only */
#ifdef KVM_FASTPATH_SWITCH
/*
 * The kvm.x2apic_icr_fastpath module parameter: the ICR fastpath on or off
 * for every VM on the host.  kvm_util reads module parameters but writes
 * none.  A test that turns it off puts it back before it ends.
 */
#ifndef SELFTEST_KVM_FASTPATH_SWITCH_H
#define SELFTEST_KVM_FASTPATH_SWITCH_H

#include <stdbool.h>

#define FASTPATH_SWITCH		"x2apic_icr_fastpath"

/* On where the kernel has no switch. */
bool fastpath_switch_get(void);

/*
 * Why the test cannot run again with the fastpath off, or NULL if it can:
 * not @asked to (it would change the host for every VM), no switch, not
 * allowed to write it.
 */
const char *fastpath_switch_unusable(bool asked);

/*
 * Turn the fastpath on or off; returns what it was.  Fails the test if it
 * cannot.  The first call also arranges for the value it found to be put
 * back when the test ends, by exit() or by SIGTERM, SIGINT, SIGHUP or
 * SIGALRM.
 */
bool fastpath_switch_set(bool on);

#endif /* SELFTEST_KVM_FASTPATH_SWITCH_H */
#endif /* KVM_FASTPATH_SWITCH */
