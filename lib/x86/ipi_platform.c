// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe the host KVM's IPI fastpath capabilities; see ipi_platform.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kvm_util.h"
#include "processor.h"
#include "ipi_platform.h"

#define SWITCH_PATH	"/sys/module/kvm/parameters/" ICR_FASTPATH_SWITCH

/* kvm_util's readers fail the test on a parameter that is absent. */
bool ipi_fastpath_switch_available(void)
{
	return !access(SWITCH_PATH, F_OK);
}

/* kvm_util reads module parameters, but writes none. */
static void switch_write(bool on)
{
	FILE *f = fopen(SWITCH_PATH, "w");

	TEST_ASSERT(f, "cannot open %s for writing (not root?)", SWITCH_PATH);
	TEST_ASSERT(fputs(on ? "Y" : "N", f) >= 0 && !fclose(f),
		    "cannot write %s", SWITCH_PATH);
	TEST_ASSERT(get_kvm_param_bool(ICR_FASTPATH_SWITCH) == on,
		    "%s did not change", SWITCH_PATH);
}

/* The switch as the test found it, before its first change. */
static bool switch_found, switch_saved;

static void switch_restore(void)
{
	switch_write(switch_found);
}

void ipi_fastpath_switch_set(bool on)
{
	if (!switch_saved) {
		switch_found = get_kvm_param_bool(ICR_FASTPATH_SWITCH);
		switch_saved = true;
		atexit(switch_restore);
	}
	switch_write(on);
}

/*
 * The fastpath policy of the running kernel, from its release, unless
 * KVM_IPI_POLICY names one ("single-target", "fast-delivery" or
 * "fast-delivery-pmu-gate"): that checks a kernel against another
 * generation's rule, which must fail.
 */
static enum ipi_policy policy_probe(void)
{
	const char *forced = getenv("KVM_IPI_POLICY");
	unsigned int major = 0, minor = 0;
	enum ipi_policy policy;
	struct utsname u;

	if (forced) {
		TEST_ASSERT(ipi_policy_parse(forced, &policy),
			    "KVM_IPI_POLICY=%s: not single-target, fast-delivery(-pmu-gate)",
			    forced);
		return policy;
	}
	TEST_ASSERT(!uname(&u) && sscanf(u.release, "%u.%u", &major, &minor) == 2,
		    "cannot read the kernel release");
	return ipi_policy_of_kernel(major, minor);
}

struct ipi_platform ipi_platform_probe(void)
{
	struct ipi_platform p = { .policy = policy_probe() };

	/*
	 * KVM_INTEL and KVM_AMD may both be built in, so their parameters
	 * exist whichever loaded: the CPU's vendor feature decides.
	 */
	if (this_cpu_has(X86_FEATURE_VMX)) {
		p.fastpath_possible = true;
		p.ipi_virtualized = get_kvm_intel_param_bool("enable_apicv") &&
				    get_kvm_intel_param_bool("enable_ipiv");
	} else if (this_cpu_has(X86_FEATURE_SVM)) {
		p.fastpath_possible = get_kvm_amd_param_integer("nrips");
		p.ipi_virtualized = get_kvm_amd_param_bool("avic");
	}
	p.fastpath_live = p.fastpath_possible &&
			  (!ipi_fastpath_switch_available() ||
			   get_kvm_param_bool(ICR_FASTPATH_SWITCH));
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
	/*
	 * With IPIv or x2AVIC the ICR is not intercepted as an MSR: eligible
	 * writes complete without an exit, the others exit as APIC writes or
	 * incomplete IPIs, which never take the WRMSR fastpath.  Whatever the
	 * policy says, the stat shows nothing a check could rely on.
	 */
	if (p->ipi_virtualized)
		return "IPI virtualization: ICR writes do not exit as WRMSR";
	return NULL;
}

static char y_or_n(bool on)
{
	return on ? 'Y' : 'N';
}

void ipi_platform_describe(const struct ipi_platform *p, char *buf, size_t size)
{
	bool has_switch = ipi_fastpath_switch_available();

	if (this_cpu_has(X86_FEATURE_VMX))
		snprintf(buf, size, "vmx apicv=%c ipiv=%c",
			 y_or_n(get_kvm_intel_param_bool("enable_apicv")),
			 y_or_n(get_kvm_intel_param_bool("enable_ipiv")));
	else if (this_cpu_has(X86_FEATURE_SVM))
		snprintf(buf, size, "svm nrips=%d avic=%c",
			 get_kvm_amd_param_integer("nrips"),
			 y_or_n(get_kvm_amd_param_bool("avic")));
	else
		snprintf(buf, size, "unknown-vendor");

	snprintf(buf + strlen(buf), size - strlen(buf), " switch=%c fastpath=%s policy=%s%s%s",
		 has_switch ? y_or_n(get_kvm_param_bool(ICR_FASTPATH_SWITCH)) : '-',
		 p->fastpath_live ? "live" : "off", ipi_policy_name(p->policy),
		 getenv("KVM_IPI_POLICY") ? " (forced)" : "",
		 p->ipi_virtualized ? " ipi-virtualization=on" : "");
}
