// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe the host KVM's IPI fastpath capabilities; see ipi_platform.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "ipi_platform.h"
#include "vcpu_run_within.h"
#include "vpmu_counting.h"

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

const char *ipi_fastpath_off_unavailable(bool asked)
{
	if (!asked)
		return "not asked for (-d): it would turn the fastpath off host-wide";
	if (!ipi_fastpath_switch_available())
		return "kernel has no kvm." ICR_FASTPATH_SWITCH " switch";
	if (access(SWITCH_PATH, W_OK))
		return "cannot write kvm." ICR_FASTPATH_SWITCH " (not root?)";
	return NULL;
}

bool ipi_differential_option(int argc, char *argv[])
{
	bool asked = false;
	int opt;

	while ((opt = getopt(argc, argv, "dh")) != -1) {
		if (opt == 'd') {
			asked = true;
			continue;
		}
		printf("usage: %s [-d]\n"
		       " -d: run again with kvm.%s off and compare (needs root;\n"
		       "     every VM on the host runs without the fastpath meanwhile)\n",
		       argv[0], ICR_FASTPATH_SWITCH);
		exit(opt == 'h' ? KSFT_PASS : KSFT_FAIL);
	}
	return asked;
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
 * The rule by behaviour: a lone vCPU in x2APIC mode sends fixed IPIs to
 * itself, interrupts off (they wait in its IRR), and the host reads after
 * each write whether the stat rose.  By physical ID every rule takes the
 * fastpath; by logical ID only fast-delivery does; and where a mediated
 * vPMU can count instructions retired, the physical write again while it
 * counts, which the vPMU gate leaves to the slow path.
 */
enum probe_write { PROBE_PHYSICAL, PROBE_LOGICAL, PROBE_COUNTING, NR_PROBE_WRITES };

/* What the probe saw, e.g. "physical fast, logical slow". */
static char probe_summary[128];

#define PROBE_VECTOR	0xe0

static u64 probe_icr(enum probe_write w, u32 x2apic_id)
{
	if (w == PROBE_LOGICAL)
		return icr_with_dest(ICR_DEST_LOGICAL | PROBE_VECTOR,
				     x2apic_logical_id(x2apic_id), false);
	return icr_with_dest(PROBE_VECTOR, x2apic_id, false);
}

#define PROBE_SECONDS	(2 * test_time_scale())	/* guest seconds, any one write */

/* The vCPU is the VM's only one: x2APIC ID 0. */
static void probe_guest(u32 nr_writes)
{
	u32 w;

	x2apic_enable();
	for (w = 0; w < nr_writes; w++) {
		if (w == PROBE_COUNTING)
			guest_vpmu_count_instructions();
		x2apic_write_reg(APIC_ICR, probe_icr(w, 0));
		GUEST_SYNC(w);
	}
	GUEST_DONE();
}

/* False where the kernel has no stat to tell the path by. */
static bool policy_of_behaviour(enum ipi_policy *policy)
{
	static const char * const names[] = {
		[PROBE_PHYSICAL] = "physical",
		[PROBE_LOGICAL] = "logical",
		[PROBE_COUNTING] = "physical with the vPMU counting",
	};
	struct ipi_probe_write writes[NR_PROBE_WRITES] = {};
	unsigned int w, nr_writes = NR_PROBE_WRITES;
	const char *no_counting = vpmu_counting_unsupported();
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	u64 before, after;
	struct ucall uc;

	if (no_counting)
		nr_writes = PROBE_COUNTING;
	vm = vm_create_with_one_vcpu(&vcpu, probe_guest);
	vcpu_args_set(vcpu, 1, nr_writes);
	if (!vcpu_has_stat(vcpu, x2apic_icr_fastpath_writes)) {
		kvm_vm_free(vm);
		return false;
	}
	before = vcpu_get_stat(vcpu, x2apic_icr_fastpath_writes);
	/*
	 * Bounded: a fastpath that completes a write without moving past the
	 * WRMSR runs it again and again, and the probe must fail, not hang.
	 */
	for (w = 0; w < nr_writes; w++) {
		vcpu_run_within(vcpu, PROBE_SECONDS);
		TEST_ASSERT(get_ucall(vcpu, &uc) == UCALL_SYNC && uc.args[1] == w,
			    "rule probe: write %u did not come back", w);
		writes[w].icr = probe_icr(w, 0);
		writes[w].pmu_counts_instructions = w == PROBE_COUNTING;
		after = vcpu_get_stat(vcpu, x2apic_icr_fastpath_writes);
		writes[w].fast = after != before;
		before = after;
	}
	vcpu_run_within(vcpu, PROBE_SECONDS);
	TEST_ASSERT_EQ(get_ucall(vcpu, &uc), UCALL_DONE);
	kvm_vm_free(vm);

	for (w = 0; w < nr_writes; w++)
		snprintf(probe_summary + strlen(probe_summary),
			 sizeof(probe_summary) - strlen(probe_summary), "%s%s %s",
			 w ? ", " : "", names[w], writes[w].fast ? "fast" : "slow");
	TEST_ASSERT(ipi_policy_of_behaviour(writes, nr_writes, 0, policy),
		    "KVM takes these writes by no known rule: %s", probe_summary);
	return true;
}

/*
 * Where the fastpath runs and the stat shows it, the rule the running
 * kernel follows, by its behaviour (probed once) unless KVM_IPI_POLICY
 * names one ("single-target", "fast-delivery" or "fast-delivery-pmu-gate"):
 * that checks a kernel against another generation's rule, which must fail.
 * Elsewhere no write takes the fastpath, whatever the rule.
 */
static bool policy_probe(const struct ipi_platform *p, enum ipi_policy *policy)
{
	const char *forced = getenv("KVM_IPI_POLICY");
	static enum ipi_policy probed;
	static bool have_probed, have_stat;

	if (forced) {
		TEST_ASSERT(ipi_policy_parse(forced, policy),
			    "KVM_IPI_POLICY=%s: not single-target, fast-delivery(-pmu-gate)",
			    forced);
		return true;
	}
	if (!p->fastpath_live || p->ipi_virtualized)
		return false;
	if (!have_probed) {
		have_stat = policy_of_behaviour(&probed);
		have_probed = true;
	}
	*policy = probed;
	return have_stat;
}

struct ipi_platform ipi_platform_probe(void)
{
	struct ipi_platform p = {};

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
	p.policy_known = policy_probe(&p, &p.policy);
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

struct ipi_verdict ipi_path_verdict(const struct ipi_platform *p, bool have_stat,
				    u64 hits, int want_hits, const char *what)
{
	struct ipi_verdict v = { .why = ipi_path_unprovable(p, have_stat) };

	if (v.why) {
		v.code = KSFT_SKIP;
	} else if (hits != (u64)want_hits) {
		ksft_print_msg("%s: fastpath +%lu, want +%d\n", what, hits, want_hits);
		v.code = KSFT_FAIL;
	} else {
		v.code = KSFT_PASS;
	}
	return v;
}

struct ipi_verdict ipi_sdm_verdict(unsigned int failed, unsigned int deviated,
				   unsigned int known, const char *what)
{
	struct ipi_verdict v = { .code = KSFT_PASS };

	if (!failed && deviated < known)
		ksft_print_msg("%s: %u of %u known KVM deviations %s\n", what, known - deviated,
			       known, "now follow the SDM: drop the mark");
	if (failed || deviated != known) {
		v.code = KSFT_FAIL;
	} else if (known) {
		v.code = KSFT_XFAIL;
		v.why = "known KVM deviation from the SDM";
	}
	return v;
}

const char *ipi_platform_policy_name(const struct ipi_platform *p)
{
	return p->policy_known ? ipi_policy_name(p->policy) : "unprobed";
}

static char y_or_n(bool on)
{
	return on ? 'Y' : 'N';
}

void ipi_platform_describe(const struct ipi_platform *p, char *buf, size_t size)
{
	bool has_switch = ipi_fastpath_switch_available();
	bool probed = p->policy_known && !getenv("KVM_IPI_POLICY");

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

	snprintf(buf + strlen(buf), size - strlen(buf), " switch=%c fastpath=%s policy=%s%s",
		 has_switch ? y_or_n(get_kvm_param_bool(ICR_FASTPATH_SWITCH)) : '-',
		 p->fastpath_live ? "live" : "off", ipi_platform_policy_name(p),
		 getenv("KVM_IPI_POLICY") ? " (forced)" : "");
	if (probed)
		snprintf(buf + strlen(buf), size - strlen(buf), " (%s)", probe_summary);
	if (p->ipi_virtualized)
		snprintf(buf + strlen(buf), size - strlen(buf), " ipi-virtualization=on");
}
