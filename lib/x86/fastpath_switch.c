// SPDX-License-Identifier: GPL-2.0-only
#ifdef KVM_FASTPATH_SWITCH
/*
 * The ICR fastpath's module switch; see fastpath_switch.h.
 */
#include <stdio.h>
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

bool fastpath_switch_set(bool on)
{
	bool was = get_kvm_param_bool(FASTPATH_SWITCH);
	FILE *f = fopen(SWITCH_PATH, "w");

	TEST_ASSERT(f, "cannot open %s for writing", SWITCH_PATH);
	TEST_ASSERT(fputs(on ? "Y" : "N", f) >= 0 && !fclose(f),
		    "cannot write %s", SWITCH_PATH);
	TEST_ASSERT(get_kvm_param_bool(FASTPATH_SWITCH) == on, "%s did not change", SWITCH_PATH);
	return was;
}
#endif /* KVM_FASTPATH_SWITCH */
