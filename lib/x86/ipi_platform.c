// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe the host KVM's IPI fastpath capabilities; see ipi_platform.h.
 */
#include <stdio.h>
#include <string.h>

#include "kvm_util.h"
#include "processor.h"
#include "ipi_platform.h"
#ifdef KVM_FASTPATH_SWITCH
#include "fastpath_switch.h"
#endif

struct ipi_platform ipi_platform_probe(void)
{
	struct ipi_platform p = {};

	/*
	 * VMX always has the exit's instruction length, SVM only with NRIP
	 * save.  KVM_INTEL and KVM_AMD may both be built in, so their
	 * parameters exist whichever loaded: the CPU's vendor decides.
	 */
	if (this_cpu_has(X86_FEATURE_VMX))
		p.fastpath_possible = true;
	else if (this_cpu_has(X86_FEATURE_SVM))
		p.fastpath_possible = get_kvm_amd_param_integer("nrips");
#ifdef KVM_FASTPATH_SWITCH
	p.fastpath_live = p.fastpath_possible && fastpath_switch_get();
#endif
	return p;
}

const char *ipi_path_unprovable(const struct ipi_platform *p, bool have_stat)
{
	if (!have_stat)
		return "kernel has no " ICR_FASTPATH_STAT " stat";
	if (!p->fastpath_possible)
		return this_cpu_has(X86_FEATURE_SVM) ?
		       "the fastpath cannot run here: SVM without NRIP save" :
		       "the fastpath cannot run here";
	return NULL;
}

#ifdef KVM_IPI_XAPIC
struct ipi_verdict ipi_sdm_verdict(unsigned int failed, unsigned int deviated,
				   unsigned int known)
{
	struct ipi_verdict v = { .code = KSFT_PASS };

	if (failed || deviated > known) {
		v.code = KSFT_FAIL;
	} else if (deviated) {
		v.code = KSFT_XFAIL;
		v.why = "known KVM deviation from the SDM";
	}
	return v;
}
#endif

void ipi_platform_describe(const struct ipi_platform *p, char *buf, size_t size)
{
	const char *vendor = "unknown-vendor";

	if (this_cpu_has(X86_FEATURE_VMX))
		vendor = "vmx";
	else if (this_cpu_has(X86_FEATURE_SVM))
		vendor = p->fastpath_possible ? "svm nrips=1" : "svm nrips=0";
#ifdef KVM_FASTPATH_SWITCH
	snprintf(buf, size, "%s fastpath=%s rule=%s", vendor,
		 p->fastpath_live ? "live" : "off", ICR_FASTPATH_RULE);
#else
	snprintf(buf, size, "%s fastpath=%s", vendor,
		 p->fastpath_possible ? "possible" : "off");
#endif
}
