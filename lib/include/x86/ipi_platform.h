/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the host KVM lets the x2APIC ICR fastpath do, read from the vendor
 * module's parameters: whether the fastpath can run at all (VMX always; SVM
 * only with NRIP save) and whether IPIs are virtualized (IPIv, AVIC).
 */
#ifndef SELFTEST_KVM_IPI_PLATFORM_H
#define SELFTEST_KVM_IPI_PLATFORM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "kselftest.h"
#include "ipi_oracle.h"

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
 * without the stat, or where the fastpath can never run (a path check that
 * cannot fail must not pass).  @want_hits < 0: IPI virtualization may
 * complete the write without an exit.
 */
const char *ipi_path_unprovable(const struct ipi_platform *p, bool have_stat,
				int want_hits);

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
