/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the host KVM lets the x2APIC ICR fastpath do, read from the vendor
 * module's parameters with kvm_util's readers: whether the fastpath can run
 * at all (VMX always; SVM only with NRIP save) and whether IPIs are
 * virtualized (IPIv, AVIC).  kvm_util fails the test on a parameter that
 * is absent and writes none, so the optional kvm.x2apic_icr_fastpath
 * switch is probed and written here.
 */
#ifndef SELFTEST_KVM_IPI_PLATFORM_H
#define SELFTEST_KVM_IPI_PLATFORM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "kselftest.h"
#include "kvm_util.h"
#include "ipi_oracle.h"
#include "vcpu_stats.h"

/* The stat added by the fastpath-stat patch. */
#define ICR_FASTPATH_STAT	"x2apic_icr_fastpath_writes"

/* The kvm module parameter added by the runtime-switch patch. */
#define ICR_FASTPATH_SWITCH	"x2apic_icr_fastpath"

/* The fastpath is live only where the switch (if any) is on. */
struct ipi_platform ipi_platform_probe(void);

bool ipi_fastpath_switch_available(void);

/*
 * Turn the fastpath on or off; the test fails if that is not possible.  The
 * first call arranges for the switch to be put back, at exit, to the value
 * it had then.
 */
void ipi_fastpath_switch_set(bool on);

/*
 * Why the path of ICR writes cannot be checked here, or NULL if it can:
 * without the stat, where the fastpath can never run (a path check that
 * cannot fail must not pass), or under IPI virtualization.
 */
const char *ipi_path_unprovable(const struct ipi_platform *p, bool have_stat);

/* The sender's fastpath stat, or 0 on a kernel without it. */
static inline uint64_t ipi_fastpath_hits(struct kvm_vcpu *vcpu, bool have_stat)
{
	return have_stat ? vcpu_get_stat(vcpu, x2apic_icr_fastpath_writes) : 0;
}

/*
 * One KTAP point "NAME: path +W": the stat rose by @hits where @want_hits
 * was due; a SKIP with the reason where the path cannot be proven.  Returns
 * whether they disagreed.  Inline for the reason given below.
 */
static inline __printf(5, 6) bool ipi_report_path(const struct ipi_platform *p, bool have_stat,
						  uint64_t hits, int want_hits,
						  const char *fmt, ...)
{
	const char *why = ipi_path_unprovable(p, have_stat);
	char name[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (why) {
		ksft_test_result_skip("%s: path (%s)\n", name, why);
		return false;
	}
	if (hits != (uint64_t)want_hits)
		ksft_print_msg("%s: fastpath +%lu, want +%d\n", name, hits, want_hits);
	ksft_test_result(hits == (uint64_t)want_hits, "%s: path +%d\n", name, want_hits);
	return hits != (uint64_t)want_hits;
}

/*
 * One KTAP point over checks of which @failed went unlike the SDM and
 * @deviated exactly as KVM is known to, of the @known that KVM is known to
 * get wrong: XFAIL while KVM does exactly that, a failure once it does
 * anything else, the SDM's answer included (then the mark must go).
 * Inline, as kselftest.h's own: its counters are per compilation unit, so
 * the point must be counted in the test's.
 */
static inline __printf(4, 5) void ipi_report_point(unsigned int failed, unsigned int deviated,
						   unsigned int known, const char *fmt, ...)
{
	char name[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (!failed && deviated < known)
		ksft_print_msg("%s: %u of %u known KVM deviations %s\n", name,
			       known - deviated, known, "now follow the SDM: drop the mark");
	if (failed || deviated != known)
		ksft_test_result_fail("%s\n", name);
	else if (known)
		ksft_test_result_xfail("%s: known KVM deviation from the SDM\n", name);
	else
		ksft_test_result_pass("%s\n", name);
}

/* One line, e.g. "vmx apicv=N ipiv=N fastpath=live". */
void ipi_platform_describe(const struct ipi_platform *p, char *buf, size_t size);

#endif /* SELFTEST_KVM_IPI_PLATFORM_H */
