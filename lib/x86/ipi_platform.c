// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe the host KVM's IPI fastpath capabilities; see ipi_platform.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "processor.h"
#include "ipi_platform.h"

/* A module parameter's value ('Y', 'N', '1', '0', ...) or '-' if absent. */
static char module_param(const char *module, const char *param)
{
	char path[128];
	char c = '-';
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s", module, param);
	f = fopen(path, "r");
	if (!f)
		return '-';
	if (fscanf(f, " %c", &c) != 1)
		c = '-';
	fclose(f);
	return c;
}

static bool param_on(char c)
{
	return c == 'Y' || c == 'y' || c == '1';
}

bool ipi_fastpath_switch_available(void)
{
	return module_param("kvm", ICR_FASTPATH_SWITCH) != '-';
}

static void switch_write(bool on)
{
	const char *path = "/sys/module/kvm/parameters/" ICR_FASTPATH_SWITCH;
	FILE *f = fopen(path, "w");

	TEST_ASSERT(f, "cannot open %s for writing (not root?)", path);
	TEST_ASSERT(fputs(on ? "Y" : "N", f) >= 0 && !fclose(f),
		    "cannot write %s", path);
	TEST_ASSERT(param_on(module_param("kvm", ICR_FASTPATH_SWITCH)) == on,
		    "%s did not change", path);
}

/* The switch as the test found it, before its first change. */
static char switch_found;

static void switch_restore(void)
{
	switch_write(param_on(switch_found));
}

void ipi_fastpath_switch_set(bool on)
{
	if (!switch_found) {
		switch_found = module_param("kvm", ICR_FASTPATH_SWITCH);
		atexit(switch_restore);
	}
	switch_write(on);
}

/*
 * The fastpath policy of the running kernel, from its release, unless
 * KVM_IPI_POLICY names one ("single-target" or "fast-delivery"): that
 * checks a kernel against the other generation's rule, which must fail.
 */
static enum ipi_policy policy_probe(void)
{
	const char *forced = getenv("KVM_IPI_POLICY");
	unsigned int major = 0, minor = 0;
	enum ipi_policy policy;
	struct utsname u;

	if (forced) {
		TEST_ASSERT(ipi_policy_parse(forced, &policy),
			    "KVM_IPI_POLICY=%s: use single-target or fast-delivery", forced);
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
		p.ipi_virtualized = param_on(module_param("kvm_intel", "enable_apicv")) &&
				    param_on(module_param("kvm_intel", "enable_ipiv"));
	} else if (this_cpu_has(X86_FEATURE_SVM)) {
		p.fastpath_possible = param_on(module_param("kvm_amd", "nrips"));
		p.ipi_virtualized = param_on(module_param("kvm_amd", "avic"));
	}
	p.fastpath_live = p.fastpath_possible &&
			  module_param("kvm", ICR_FASTPATH_SWITCH) != 'N';
	return p;
}

const char *ipi_path_unprovable(const struct ipi_platform *p, bool have_stat,
				int want_hits)
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
	if (p->ipi_virtualized || want_hits < 0)
		return "IPI virtualization: ICR writes do not exit as WRMSR";
	return NULL;
}

void ipi_platform_describe(const struct ipi_platform *p, char *buf, size_t size)
{
	if (this_cpu_has(X86_FEATURE_VMX))
		snprintf(buf, size, "vmx apicv=%c ipiv=%c",
			 module_param("kvm_intel", "enable_apicv"),
			 module_param("kvm_intel", "enable_ipiv"));
	else if (this_cpu_has(X86_FEATURE_SVM))
		snprintf(buf, size, "svm nrips=%c avic=%c",
			 module_param("kvm_amd", "nrips"),
			 module_param("kvm_amd", "avic"));
	else
		snprintf(buf, size, "unknown-vendor");

	snprintf(buf + strlen(buf), size - strlen(buf), " switch=%c fastpath=%s policy=%s%s%s",
		 module_param("kvm", ICR_FASTPATH_SWITCH),
		 p->fastpath_live ? "live" : "off", ipi_policy_name(p->policy),
		 getenv("KVM_IPI_POLICY") ? " (forced)" : "",
		 p->ipi_virtualized ? " ipi-virtualization=on" : "");
}
