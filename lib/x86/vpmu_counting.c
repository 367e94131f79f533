// SPDX-License-Identifier: GPL-2.0-only
#if defined(KVM_FASTPATH_VPMU_GATE) && defined(KVM_IPI_VM_STATE)
/*
 * A mediated vPMU that counts instructions retired; see vpmu_counting.h.
 */
#include "kvm_util.h"
#include "pmu.h"
#include "processor.h"
#include "vpmu_counting.h"

const char *vpmu_counting_unsupported(void)
{
	if (!kvm_is_pmu_enabled() || !kvm_is_mediated_pmu_enabled())
		return "no mediated vPMU (enable_pmu, enable_mediated_pmu)";
	if (!host_cpu_is_intel)
		return NULL;

	/* Intel: a PMU with global control and a general-purpose counter. */
	if (kvm_cpu_property(X86_PROPERTY_PMU_VERSION) < 2 ||
	    !kvm_cpu_property(X86_PROPERTY_PMU_NR_GP_COUNTERS))
		return "no vPMU with global control and a general-purpose counter";
	if (!kvm_pmu_has(X86_PMU_FEATURE_INSNS_RETIRED))
		return "no instructions retired event";
	return NULL;
}

#define EVNTSEL_COUNT	(ARCH_PERFMON_EVENTSEL_ENABLE | ARCH_PERFMON_EVENTSEL_OS | \
			 ARCH_PERFMON_EVENTSEL_USR)

/*
 * Counter 0, enabled in the global control too.  AMD's PerfCntrGlobalCtl
 * (PerfMonV2) enables every counter from RESET, and a PMU without it has no
 * global control at all.
 */
void guest_vpmu_count_instructions(void)
{
	if (host_cpu_is_intel) {
		wrmsr(MSR_P6_EVNTSEL0, INTEL_ARCH_INSTRUCTIONS_RETIRED | EVNTSEL_COUNT);
		wrmsr(MSR_CORE_PERF_GLOBAL_CTRL, BIT_ULL(0));
	} else {
		wrmsr(MSR_K7_EVNTSEL0, AMD_ZEN_INSTRUCTIONS_RETIRED | EVNTSEL_COUNT);
	}
}
#endif
