/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the host KVM lets the x2APIC ICR fastpath do: whether it can run at
 * all (VMX always; SVM only with NRIP save), and a guest helper that makes
 * every ICR write of the VM exit, so that the x2apic_icr_fastpath_writes
 * stat proves the path of each on any host.
 */
#ifndef SELFTEST_KVM_IPI_PLATFORM_H
#define SELFTEST_KVM_IPI_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>

#include "kselftest.h"
#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "ipi_oracle.h"
#include "vcpu_stats.h"

/* The stat that counts the ICR writes KVM completes in its fastpath. */
#define ICR_FASTPATH_STAT	"x2apic_icr_fastpath_writes"

struct ipi_platform ipi_platform_probe(void);

/*
 * Guest code: enable x2APIC mode and make every ICR write of the VM exit as
 * a WRMSR, on hosts with APICv, IPIv or AVIC too: KVM inhibits APICv for
 * the VM for good once a vCPU moves its APIC base (as nested_x2apic_test
 * does), even if it then moves it back, as here for later xAPIC modes.
 */
static inline void x2apic_enable_icr_exits(void)
{
	u64 base;

	x2apic_enable();
	base = rdmsr(MSR_IA32_APICBASE);
	wrmsr(MSR_IA32_APICBASE, base & ~MSR_IA32_APICBASE_BASE);
	wrmsr(MSR_IA32_APICBASE, base);
}

/*
 * Why the path of ICR writes cannot be checked here, or NULL if it can:
 * without the stat, or where the fastpath can never run (a path check that
 * cannot fail must not pass).
 */
const char *ipi_path_unprovable(const struct ipi_platform *p, bool have_stat);

/* The sender's fastpath stat, or 0 on a kernel without it. */
static inline u64 ipi_fastpath_hits(struct kvm_vcpu *vcpu, bool have_stat)
{
	return have_stat ? vcpu_get_stat(vcpu, x2apic_icr_fastpath_writes) : 0;
}

#ifdef KVM_IPI_PATH_RESULT
/*
 * The KTAP result @name of a path check: the sender's stat rose by @hits
 * where the tree's rule wants @want.  A SKIP that says why where no path
 * can be proved here; a failure prints "@what: fastpath +hits, want +want"
 * first (@what is @name if NULL).  Returns true on a failure.  Inline: the
 * KTAP counts are the test's own (kselftest.h keeps them per file).
 */
static inline bool ipi_path_result(const struct ipi_platform *p, bool have_stat,
				   u64 hits, u64 want, const char *name,
				   const char *what)
{
	const char *why = ipi_path_unprovable(p, have_stat);

	if (why) {
		ksft_test_result_code(KSFT_SKIP, name, "%s", why);
		return false;
	}
	if (hits != want)
		ksft_print_msg("%s: fastpath +%lu, want +%lu\n", what ?: name, hits, want);
	ksft_test_result_code(hits == want ? KSFT_PASS : KSFT_FAIL, name, NULL);
	return hits != want;
}
#endif

#ifdef KVM_IPI_XAPIC
/* A KTAP result code (KSFT_*) and, unless it is a pass or a failure, why. */
struct ipi_verdict {
	int code;
	const char *why;
};

/*
 * Checks of which @failed went unlike the SDM and @deviated exactly as KVM
 * is known to, of the @known that KVM is known to get wrong: a failure if
 * any went otherwise, an expected failure while some deviate exactly as
 * known, a pass once all follow the SDM.
 */
struct ipi_verdict ipi_sdm_verdict(unsigned int failed, unsigned int deviated,
				   unsigned int known);
#endif

/* One line: the vendor and whether the fastpath can run. */
void ipi_platform_describe(const struct ipi_platform *p, char *buf, size_t size);

#endif /* SELFTEST_KVM_IPI_PLATFORM_H */
